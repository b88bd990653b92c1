package history

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hwtest/hwtest/matrix"
)

// rowCounts is what a run put in each table: a run is whole when the history
// holds exactly these rows of it.
type rowCounts struct {
	Cells, Checks, Outputs, SampledCells, Samples, Detections int
}

func countsOf(r Run) rowCounts {
	n := rowCounts{Cells: len(r.Matrix.Cells), Detections: len(r.Matrix.Detection)}
	for _, c := range r.Matrix.Cells {
		n.Checks += len(c.Checks)
		n.Outputs += len(c.Outputs)
		if len(c.SamplesMS) > 0 {
			n.SampledCells++
			n.Samples += len(c.SamplesMS)
		}
	}
	return n
}

// storedCounts reads what the history holds of each run, and fails t on rows
// that belong to no run or no cell.
func storedCounts(t *testing.T, db *DB) map[string]rowCounts {
	t.Helper()
	ctx := context.Background()
	got := map[string]rowCounts{}
	rows, err := db.sql.QueryContext(ctx, `
SELECT r.run_id,
       (SELECT count(*) FROM cells c WHERE c.run_id = r.run_id),
       (SELECT count(*) FROM checks k JOIN cells c ON k.cell_id = c.id WHERE c.run_id = r.run_id),
       (SELECT count(*) FROM outputs o JOIN cells c ON o.cell_id = c.id WHERE c.run_id = r.run_id),
       (SELECT count(DISTINCT s.cell_id) FROM samples s JOIN cells c ON s.cell_id = c.id WHERE c.run_id = r.run_id),
       (SELECT count(*) FROM samples s JOIN cells c ON s.cell_id = c.id WHERE c.run_id = r.run_id),
       (SELECT count(*) FROM detections d WHERE d.run_id = r.run_id)
FROM runs r`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var n rowCounts
		if err := rows.Scan(&id, &n.Cells, &n.Checks, &n.Outputs, &n.SampledCells, &n.Samples, &n.Detections); err != nil {
			t.Fatal(err)
		}
		got[id] = n
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	var orphans int
	err = db.sql.QueryRowContext(ctx, `SELECT
  (SELECT count(*) FROM cells WHERE run_id NOT IN (SELECT run_id FROM runs)) +
  (SELECT count(*) FROM detections WHERE run_id NOT IN (SELECT run_id FROM runs)) +
  (SELECT count(*) FROM checks WHERE cell_id NOT IN (SELECT id FROM cells)) +
  (SELECT count(*) FROM outputs WHERE cell_id NOT IN (SELECT id FROM cells)) +
  (SELECT count(*) FROM samples WHERE cell_id NOT IN (SELECT id FROM cells))`).Scan(&orphans)
	if err != nil {
		t.Fatal(err)
	}
	if orphans > 0 {
		t.Errorf("%d rows belong to no stored run", orphans)
	}
	return got
}

// checkWhole fails t unless the history at path opens (as mode) and holds some of
// the runs of want, each whole, and nothing else. It returns the ids it holds.
func checkWhole(t *testing.T, path string, mode Mode, want map[string]rowCounts) []string {
	t.Helper()
	db, err := Open(context.Background(), path, mode, Options{})
	if err != nil {
		t.Fatalf("after the fault, the history does not open: %v", err)
	}
	defer db.Close()
	var ids []string
	for id, n := range storedCounts(t, db) {
		w, ok := want[id]
		switch {
		case !ok:
			t.Errorf("run %s: stored, but no one stored it", id)
		case n != w:
			t.Errorf("run %s is not whole: holds %+v, stored %+v", id, n, w)
		}
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

func storeRun(t testing.TB, path string, r Run) {
	t.Helper()
	ctx := context.Background()
	db, err := Open(ctx, path, ReadWrite, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Store(ctx, r); err != nil {
		db.Close()
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// rawDB opens a DuckDB file without Open's checks, to make what Open must refuse.
func rawDB(t *testing.T, path string) *DB {
	t.Helper()
	db, err := open(path, ReadWrite)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func mustExec(t *testing.T, db *DB, stmts ...string) {
	t.Helper()
	for _, s := range stmts {
		if _, err := db.sql.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestRefusesWhatIsNotAHistory: whatever is at the path, Open in either mode
// refuses it with an error naming the path, and leaves every byte as it was (no
// write-ahead log beside it either).
func TestRefusesWhatIsNotAHistory(t *testing.T) {
	cases := []struct {
		name string
		make func(t *testing.T, path string)
		says string
	}{
		{"text file", func(t *testing.T, path string) {
			os.WriteFile(path, []byte("model,target,p50\nresnet50,cpu,12.5\n"), 0o644)
		}, "is not a DuckDB database"},
		{"empty file", func(t *testing.T, path string) {
			os.WriteFile(path, nil, 0o644)
		}, "is not a DuckDB database"},
		{"DuckDB database of something else", func(t *testing.T, path string) {
			db := rawDB(t, path)
			mustExec(t, db, `CREATE TABLE sensors (id INTEGER, reading DOUBLE)`, `INSERT INTO sensors VALUES (1, 20.5), (2, 21.0)`)
			db.Close()
		}, "is a DuckDB database of something else"},
		{"directory", func(t *testing.T, path string) {
			os.Mkdir(path, 0o755)
			os.WriteFile(filepath.Join(path, "keep"), []byte("x"), 0o644)
		}, "is not a regular file"},
	}
	for _, c := range cases {
		for _, mode := range []Mode{ReadWrite, ReadOnly} {
			t.Run(c.name+"/"+modeName(mode), func(t *testing.T) {
				dir := t.TempDir()
				path := filepath.Join(dir, "history.duckdb")
				c.make(t, path)
				before := snapshot(t, dir)
				db, err := Open(context.Background(), path, mode, Options{})
				if err == nil {
					db.Close()
					t.Fatal("Open took it")
				}
				if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), c.says) {
					t.Errorf("error %q: want the path %s and %q", err, path, c.says)
				}
				if d := changed(before, snapshot(t, dir)); d != nil {
					t.Errorf("Open changed the folder: %s", d)
				}
			})
		}
	}
}

// TestHistoryCutShort: of a history that lost its end (a copy cut short, a disk
// that filled under another program), hwtest reads nothing wrong and overwrites
// nothing. DuckDB refuses the file when its catalog was in the part lost; else it
// opens it and fails, naming it, when a read reaches a missing block. (Open does
// not compare the file's length with the blocks its header counts: DuckDB cuts
// free blocks off the end of a healthy file, so that would refuse good histories.)
func TestHistoryCutShort(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "history.duckdb")
	stored := syntheticRun("r1", run1, 300, 1000, 1)
	storeRun(t, path, stored)
	history := readFile(t, path)
	refused := 0
	for _, cut := range []struct {
		name string
		size int
	}{{"half", len(history) / 2}, {"three quarters", len(history) * 3 / 4}, {"all but a byte", len(history) - 1}} {
		for _, mode := range []Mode{ReadOnly, ReadWrite} {
			if err := os.WriteFile(path, history[:cut.size], 0o644); err != nil {
				t.Fatal(err)
			}
			err := useCutHistory(ctx, path, mode, stored)
			switch {
			case err == nil:
				t.Logf("cut to %s, %s: the run reads back whole, or a run was added", cut.name, modeName(mode))
			case !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "Could not read enough bytes"):
				t.Errorf("cut to %s, %s: error %q, want the path and DuckDB's \"Could not read enough bytes\"", cut.name, modeName(mode), err)
			default:
				refused++
				t.Logf("cut to %s, %s: %v", cut.name, modeName(mode), err)
			}
			if after := readFile(t, path); len(after) < cut.size || !bytes.Equal(after[:cut.size], history[:cut.size]) {
				t.Errorf("cut to %s, %s: the file was cut or overwritten (%d bytes, then %d)", cut.name, modeName(mode), cut.size, len(after))
			}
		}
	}
	if refused == 0 {
		t.Error("no cut was refused: the test tested nothing")
	}
}

// useCutHistory reads the run stored back (read-only) or stores another run
// (read-write): an error, or a read that is exactly what was stored.
func useCutHistory(ctx context.Context, path string, mode Mode, stored Run) error {
	db, err := Open(ctx, path, mode, Options{})
	if err != nil {
		return err
	}
	defer db.Close()
	if mode == ReadWrite {
		return db.Store(ctx, syntheticRun("r2", run1.Add(time.Hour), 300, 1000, 2))
	}
	got, err := readRun(ctx, db, "r1")
	if err != nil {
		return err
	}
	if d := cmp.Diff(stored.Matrix, got, cmp.AllowUnexported(matrix.Cell{})); d != "" {
		return fmt.Errorf("read back differs without an error (-stored +read):\n%s", d)
	}
	return nil
}

// readRun is a stored run's matrix with its cells' samples.
func readRun(ctx context.Context, db *DB, runID string) (matrix.Matrix, error) {
	m, err := db.RunMatrix(ctx, runID, nil, nil)
	if err != nil {
		return m, err
	}
	samples, err := db.Samples(ctx, runID)
	for i, c := range m.Cells {
		m.Cells[i].SamplesMS = samples[c.Model+"/"+c.Target]
	}
	return m, err
}

func modeName(m Mode) string {
	if m == ReadOnly {
		return "read-only"
	}
	return "read-write"
}

// snapshot is every file under dir with its bytes.
func snapshot(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		files[p], err = os.ReadFile(p)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// changed names the files added, removed or rewritten between two snapshots.
func changed(before, after map[string][]byte) []string {
	var out []string
	for p, b := range before {
		if a, ok := after[p]; !ok {
			out = append(out, p+" removed")
		} else if !bytes.Equal(a, b) {
			out = append(out, fmt.Sprintf("%s rewritten (%d bytes, then %d)", p, len(b), len(a)))
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			out = append(out, p+" added")
		}
	}
	slices.Sort(out)
	return out
}

// TestRefusesANewerSchema: a history written by a newer hwtest is refused, naming
// both versions, and left as it is.
func TestRefusesANewerSchema(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "history.duckdb")
	storeRun(t, path, syntheticRun("r1", run1, 20, 100, 1))
	db := rawDB(t, path)
	mustExec(t, db, fmt.Sprintf(`UPDATE hwtest_schema SET version = %d`, SchemaVersion+1))
	db.Close()
	before := snapshot(t, dir)
	for _, mode := range []Mode{ReadWrite, ReadOnly} {
		db, err := Open(context.Background(), path, mode, Options{})
		if err == nil {
			db.Close()
			t.Fatalf("%s: Open took a history of schema %d", modeName(mode), SchemaVersion+1)
		}
		want := fmt.Sprintf("%s has schema version %d; this hwtest knows versions up to %d", path, SchemaVersion+1, SchemaVersion)
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %q, want %q", modeName(mode), err, want)
		}
	}
	if d := changed(before, snapshot(t, dir)); d != nil {
		t.Errorf("Open changed the folder: %s", d)
	}
}

// TestMigratesAnOlderSchema: a history of every older schema holding a run is
// migrated by Open, in either mode: the run reads back as stored, samples
// included, and the views see it.
func TestMigratesAnOlderSchema(t *testing.T) {
	ctx := context.Background()
	run := syntheticRun("r1", run1, 40, 200, 1)
	current := filepath.Join(t.TempDir(), "current.duckdb")
	storeRun(t, current, run)
	for version := 1; version < SchemaVersion; version++ {
		for _, mode := range []Mode{ReadWrite, ReadOnly} {
			t.Run(fmt.Sprintf("version %d/%s", version, modeName(mode)), func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "history.duckdb")
				oldHistory(t, path, version, current)
				db, err := Open(ctx, path, mode, Options{})
				if err != nil {
					t.Fatal(err)
				}
				defer db.Close()
				if v, err := db.schemaVersion(ctx); err != nil || v != SchemaVersion {
					t.Errorf("schema version %d (%v), want %d", v, err, SchemaVersion)
				}
				got, err := readRun(ctx, db, "r1")
				if err != nil {
					t.Fatal(err)
				}
				if d := cmp.Diff(run.Matrix, got, cmp.AllowUnexported(matrix.Cell{})); d != "" {
					t.Errorf("the run after migrating differs (-stored +read):\n%s", d)
				}
				checkViews(t, db, run)
			})
		}
	}
}

// oldHistory makes at path a history of schema version holding the runs of the
// current history from, as an hwtest of that version stored them: the tables of
// migrations[:version], the rows copied column by column (and, before version 4,
// the samples of a cell gathered in one list).
func oldHistory(t *testing.T, path string, version int, from string) {
	t.Helper()
	ctx := context.Background()
	db := rawDB(t, path)
	defer db.Close()
	if err := db.migrate(ctx, 0, migrations[:version]); err != nil {
		t.Fatal(err)
	}
	mustExec(t, db, fmt.Sprintf(`ATTACH '%s' AS current (READ_ONLY)`, from))
	for _, table := range []string{"runs", "detections", "cells", "checks", "outputs", "samples"} {
		var columns []string
		rows, err := db.sql.Query(`SELECT column_name FROM information_schema.columns
			WHERE table_catalog = current_database() AND table_name = ? ORDER BY ordinal_position`, table)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var c string
			rows.Scan(&c)
			columns = append(columns, c)
		}
		rows.Close()
		list := strings.Join(columns, ", ")
		query := fmt.Sprintf(`INSERT INTO %s (%s) SELECT %s FROM current.%s`, table, list, list, table)
		if table == "samples" && !slices.Contains(columns, "seq") {
			query = `INSERT INTO samples SELECT cell_id, list(latency_ms ORDER BY seq) FROM current.samples GROUP BY cell_id`
		}
		mustExec(t, db, query)
	}
	mustExec(t, db, `DETACH current`)
}

// checkViews fails t unless the views of the system hwtest replaces see run.
func checkViews(t *testing.T, db *DB, run Run) {
	t.Helper()
	var results, passing, detections int
	var p50 float64
	first := run.Matrix.Cells[0]
	err := db.sql.QueryRow(`SELECT count(*), count(*) FILTER (success), (SELECT count(*) FROM hardware_detection),
		max(inference_time) FILTER (model_id = ? AND hardware = ?) FROM hardware_results`, first.Model, first.Target).
		Scan(&results, &passing, &detections, &p50)
	if err != nil {
		t.Fatalf("the views: %v", err)
	}
	wantPassing := 0
	for _, c := range run.Matrix.Cells {
		if c.Status.Agreed() {
			wantPassing++
		}
	}
	if results != len(run.Matrix.Cells) || passing != wantPassing || detections != len(run.Matrix.Detection) || p50 != first.Metrics.P50MS {
		t.Errorf("views: %d results, %d passing, %d detections, p50 %v; want %d, %d, %d, %v", results, passing, detections, p50,
			len(run.Matrix.Cells), wantPassing, len(run.Matrix.Detection), first.Metrics.P50MS)
	}
}

// TestSchemaVersionIsTheMigrations: Open migrates to len(migrations) and refuses
// what is past SchemaVersion; were they to differ, a history would be migrated to
// a version this hwtest then refuses, or a reader would migrate for ever.
func TestSchemaVersionIsTheMigrations(t *testing.T) {
	if len(migrations) != SchemaVersion {
		t.Errorf("%d migrations, SchemaVersion %d", len(migrations), SchemaVersion)
	}
}

// TestFailedMigrationChangesNothing: steps after a version that fail midway, even
// after statements of theirs that worked, leave the version and the tables as
// they were.
func TestFailedMigrationChangesNothing(t *testing.T) {
	ctx := context.Background()
	current := filepath.Join(t.TempDir(), "current.duckdb")
	storeRun(t, current, syntheticRun("r1", run1, 10, 50, 1))
	path := filepath.Join(t.TempDir(), "history.duckdb")
	oldHistory(t, path, 1, current)
	db := rawDB(t, path)
	defer db.Close()
	bad := append(slices.Clone(migrations), `CREATE TABLE extra (x INTEGER); ALTER TABLE runs ADD COLUMN note VARCHAR; SELECT nonsense FROM nowhere`)
	err := db.migrate(ctx, 1, bad)
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "nothing changed") {
		t.Fatalf("migrate with a bad step: %v; want an error naming %s", err, path)
	}
	if v, err := db.schemaVersion(ctx); err != nil || v != 1 {
		t.Errorf("schema version %d (%v) after a failed migration, want 1", v, err)
	}
	var objects []string
	rows, err := db.sql.Query(`SELECT table_name FROM information_schema.tables WHERE table_name IN ('extra', 'hardware_results', 'hardware_detection')
		UNION ALL SELECT table_name || '.' || column_name FROM information_schema.columns
		WHERE (table_name, column_name) IN (('runs', 'note'), ('cells', 'wall_ms'), ('samples', 'seq'))`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var s string
		rows.Scan(&s)
		objects = append(objects, s)
	}
	rows.Close()
	if len(objects) > 0 {
		t.Errorf("a failed migration left %v behind", objects)
	}
	var cells, samples int
	if err := db.sql.QueryRow(`SELECT (SELECT count(*) FROM cells), (SELECT sum(len(latency_ms)) FROM samples)`).Scan(&cells, &samples); err != nil {
		t.Fatal(err)
	}
	if n := countsOf(syntheticRun("r1", run1, 10, 50, 1)); cells != n.Cells || samples != n.Samples {
		t.Errorf("after a failed migration: %d cells and %d samples, want %d and %d", cells, samples, n.Cells, n.Samples)
	}
}

// TestStoreTwiceAddsNothing: the same run id, or the same imported file under
// another id, is refused with ErrDuplicate and no table gains a row.
func TestStoreTwiceAddsNothing(t *testing.T) {
	ctx := context.Background()
	db, _ := openTemp(t)
	run := syntheticRun("r1", run1, 30, 100, 1)
	run.ContentSHA256 = "abc"
	if err := db.Store(ctx, run); err != nil {
		t.Fatal(err)
	}
	before := storedCounts(t, db)
	again := syntheticRun("r1", run1.Add(time.Hour), 5, 10, 2) // the id only is the same
	sameFile := syntheticRun("r2", run1, 30, 100, 1)
	sameFile.ContentSHA256 = "abc"
	for _, r := range []Run{run, again, sameFile} {
		if err := db.Store(ctx, r); !errors.Is(err, ErrDuplicate) {
			t.Errorf("storing %s again: %v, want ErrDuplicate", r.Matrix.RunID, err)
		}
	}
	if d := cmp.Diff(before, storedCounts(t, db)); d != "" {
		t.Errorf("rows changed (-before +after):\n%s", d)
	}
	var tables [6]int
	db.sql.QueryRow(`SELECT (SELECT count(*) FROM runs), (SELECT count(*) FROM cells), (SELECT count(*) FROM checks),
		(SELECT count(*) FROM outputs), (SELECT count(*) FROM samples), (SELECT count(*) FROM detections)`).
		Scan(&tables[0], &tables[1], &tables[2], &tables[3], &tables[4], &tables[5])
	n := countsOf(run)
	if want := [6]int{1, n.Cells, n.Checks, n.Outputs, n.Samples, n.Detections}; tables != want {
		t.Errorf("rows per table %v, want %v", tables, want)
	}
}

// testBinary is this test binary, for child processes.
func testBinary(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

// TestTwoWritersAtOnce: while one process holds the history, a second one storing
// another run waits, saying so and naming the holder, and stores its run when the
// first is done: both runs are kept, whole.
func TestTwoWritersAtOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.duckdb")
	exe := testBinary(t)
	first := childTask{Path: path, RunID: "first", Cells: 300, Samples: 1000, Seed: 1, Hold: true}
	second := childTask{Path: path, RunID: "second", Cells: 300, Samples: 1000, Seed: 2}
	a := startChild(t, exe, first, nil)
	a.expect(t, "open")
	b := startChild(t, exe, second, nil)
	waiting := fmt.Sprintf("history: %s is in use by pid %d", path, a.cmd.Process.Pid)
	for deadline := time.Now().Add(time.Minute); !strings.Contains(b.stderr.String(), waiting); time.Sleep(20 * time.Millisecond) {
		select {
		case line := <-b.lines: // "open" or an error: it did not wait
			t.Fatalf("the second writer said %q before waiting; stderr:\n%s", line, b.stderr)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the second writer did not say %q in a minute; it said:\n%s", waiting, b.stderr)
		}
	}
	io.WriteString(a.stdin, "go on\n") // the first stores while the second waits
	for _, c := range []*child{a, b} {
		lines, err := c.rest()
		if err != nil || len(lines) < 2 || !slices.Equal(lines[len(lines)-2:], []string{"stored", "closed"}) {
			t.Fatalf("a writer: %v, said %q; stderr:\n%s", err, lines, c.stderr)
		}
	}
	if !strings.Contains(b.stderr.String(), "is free, going on") {
		t.Errorf("the second writer did not say it went on:\n%s", b.stderr)
	}
	want := map[string]rowCounts{}
	for _, task := range []childTask{first, second} {
		want[task.RunID] = countsOf(syntheticRun(task.RunID, run1, task.Cells, task.Samples, task.Seed))
	}
	if ids := checkWhole(t, path, ReadOnly, want); !slices.Equal(ids, []string{"first", "second"}) {
		t.Errorf("stored runs %v, want both", ids)
	}
}

// TestKilledWhileStoring: a process SIGKILLed at any moment of storing a large run
// (300 cells × 10,000 samples), or of closing the history after it (DuckDB then
// moves the committed log into the file), leaves a history that opens, read-only
// (replaying DuckDB's log in memory) and then read-write, holding whole runs only:
// the ones before and, if it had committed, the killed one.
func TestKilledWhileStoring(t *testing.T) {
	if testing.Short() {
		t.Skip("stores 3 million samples ten times")
	}
	path := filepath.Join(t.TempDir(), "history.duckdb")
	exe := testBinary(t)
	base := syntheticRun("base", run1, 40, 500, 99)
	storeRun(t, path, base)
	want := map[string]rowCounts{"base": countsOf(base)}
	start := func(i int) *child {
		tk := childTask{Path: path, RunID: fmt.Sprintf("run-%02d", i), Cells: 300, Samples: 10_000, Seed: uint64(i)}
		want[tk.RunID] = countsOf(syntheticRun(tk.RunID, run1, tk.Cells, tk.Samples, tk.Seed))
		c := startChild(t, exe, tk, nil)
		c.expect(t, "open")
		c.expect(t, "began")
		return c
	}

	// How long storing and closing take here.
	c := start(0)
	began := time.Now()
	c.expect(t, "stored")
	storing := time.Since(began)
	c.expect(t, "closed")
	closing := time.Since(began) - storing
	if _, err := c.rest(); err != nil {
		t.Fatalf("storing run-00: %v; stderr:\n%s", err, c.stderr)
	}
	t.Logf("300 cells × 10,000 samples: Store %v, Close %v", storing, closing)

	kills := []struct {
		after string  // the child's word
		frac  float64 // then this part of what comes next
	}{{"began", 0}, {"began", 0.1}, {"began", 0.3}, {"began", 0.5}, {"began", 0.7}, {"began", 0.9},
		{"stored", 0}, {"stored", 0.3}, {"stored", 0.6}}
	var kept, lost []string
	for i, k := range kills {
		c := start(i + 1)
		took := storing
		if k.after == "stored" {
			c.expect(t, "stored")
			took = closing
		}
		time.Sleep(time.Duration(k.frac * float64(took)))
		c.cmd.Process.Signal(syscall.SIGKILL)
		lines, _ := c.rest()
		at := fmt.Sprintf("%s+%.0f%% (then said %q)", k.after, 100*k.frac, lines)
		ids := checkWhole(t, path, ReadOnly, want)
		if ids2 := checkWhole(t, path, ReadWrite, want); !slices.Equal(ids, ids2) {
			t.Errorf("killed at %s: read-only the history holds %v, read-write %v", at, ids, ids2)
		}
		if !slices.Contains(ids, "base") || !slices.Contains(ids, "run-00") {
			t.Errorf("killed at %s: runs stored before are gone: %v", at, ids)
		}
		if slices.Contains(ids, fmt.Sprintf("run-%02d", i+1)) {
			kept = append(kept, at)
		} else {
			lost = append(lost, at)
		}
		if k.after == "stored" && !slices.Contains(ids, fmt.Sprintf("run-%02d", i+1)) {
			t.Errorf("killed at %s: a committed run is gone", at)
		}
	}
	t.Logf("killed, run kept whole: %q", kept)
	t.Logf("killed, run dropped whole: %q", lost)
	if len(lost) == 0 {
		t.Error("no kill came before a commit: the test did not test a store cut short")
	}
}

// TestFullDisk: a writer whose writes fail (a full disk, here RLIMIT_FSIZE) gets an
// error naming the history, whether it creates the file or adds a run to it; the
// runs stored before stay whole and nothing of the failed run is kept.
func TestFullDisk(t *testing.T) {
	exe := testBinary(t)
	t.Run("new history", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "history.duckdb")
		c := startChild(t, exe, childTask{Path: path, RunID: "r1", Cells: 300, Samples: 3000, Seed: 1, FileSizeLimit: 8 << 10}, nil)
		lines, err := c.rest()
		if err == nil || len(lines) == 0 || !strings.HasPrefix(lines[len(lines)-1], "error: history "+path) {
			t.Fatalf("creating a history on a full disk: %v, said %q; stderr:\n%s", err, lines, c.stderr)
		}
		t.Logf("said: %s", lines[len(lines)-1])
	})
	t.Run("adding a run", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "history.duckdb")
		base := syntheticRun("base", run1, 300, 1000, 99)
		storeRun(t, path, base)
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		// Room for the history as it is and 1 MiB more: the run needs ~7 MiB.
		c := startChild(t, exe, childTask{Path: path, RunID: "r1", Cells: 300, Samples: 3000, Seed: 1, FileSizeLimit: uint64(fi.Size()) + 1<<20}, nil)
		lines, err := c.rest()
		if err == nil || len(lines) == 0 || !strings.HasPrefix(lines[len(lines)-1], "error: history "+path) {
			t.Fatalf("storing on a full disk: %v, said %q; stderr:\n%s", err, lines, c.stderr)
		}
		t.Logf("said: %s", lines[len(lines)-1])
		if ids := checkWhole(t, path, ReadWrite, map[string]rowCounts{"base": countsOf(base)}); !slices.Equal(ids, []string{"base"}) {
			t.Errorf("after a full disk the history holds %v, want [base]", ids)
		}
	})
}

// TestReadOnlyHistory: a history its user may not write (file or folder read-only)
// refuses a writer with an error naming it and is left as it was, its runs whole.
// Root writes through file modes, so the writer runs as nobody then.
func TestReadOnlyHistory(t *testing.T) {
	exe := testBinary(t)
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		// nobody must be able to run the test binary: a copy in a folder it can read.
		dir := reachableTempDir(t)
		copyFile(t, exe, filepath.Join(dir, "history.test"), 0o755)
		exe = filepath.Join(dir, "history.test")
		cred = &syscall.Credential{Uid: 65534, Gid: 65534}
	}
	cases := []struct {
		name          string
		dirMode, mode os.FileMode
	}{
		{"read-only file", 0o755, 0o444},
		{"read-only folder", 0o555, 0o666},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(reachableTempDir(t), "history")
			os.Mkdir(dir, 0o755)
			path := filepath.Join(dir, "history.duckdb")
			base := syntheticRun("base", run1, 30, 100, 99)
			storeRun(t, path, base)
			os.Chmod(path, c.mode)
			os.Chmod(dir, c.dirMode)
			t.Cleanup(func() { os.Chmod(dir, 0o755) })
			before := snapshot(t, dir)
			ch := startChild(t, exe, childTask{Path: path, RunID: "r1", Cells: 30, Samples: 100, Seed: 1}, cred)
			lines, err := ch.rest()
			if err == nil || len(lines) == 0 || !strings.HasPrefix(lines[len(lines)-1], "error: history "+path) {
				t.Fatalf("writing a read-only history: %v, said %q; stderr:\n%s", err, lines, ch.stderr)
			}
			t.Logf("said: %s", lines[len(lines)-1])
			if d := changed(before, snapshot(t, dir)); d != nil {
				t.Errorf("the read-only history changed: %s", d)
			}
			if ids := checkWhole(t, path, ReadOnly, map[string]rowCounts{"base": countsOf(base)}); !slices.Equal(ids, []string{"base"}) {
				t.Errorf("the read-only history holds %v, want [base]", ids)
			}
		})
	}
}

func copyFile(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	b := readFile(t, from)
	if err := os.WriteFile(to, b, mode); err != nil {
		t.Fatal(err)
	}
}

// reachableTempDir is a temporary folder other users may enter (t.TempDir's are
// 0700, and so is their parent).
func reachableTempDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{dir, filepath.Dir(dir)} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
