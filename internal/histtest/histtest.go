// Package histtest builds history databases for tests from runs recorded on this
// project's machine (matrix.json files of real `hwtest run`s): the recorded history
// as it is, and a large history for scale tests made of copies of those runs. No
// number in either is made up.
package histtest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/hwtest/hwtest/history"
	"github.com/hwtest/hwtest/matrix"
)

// Recorded lists every recorded run in the repository at root, as paths relative to
// it: cmd/hwtest/testdata/history (silero v5/v6 on cpu, wasm, webgpu-native, qnn; a
// later cpu pass; a cpu error), diff/testdata (ten default-thread runs of four
// models on cpu and wasm, ten one-thread runs, four default-thread runs after them;
// the scenarios: a key change, a tightened tolerance, browsers unavailable) and
// internal/histtest/testdata/full (three runs of five models on all 14 targets).
func Recorded(root string) ([]string, error) {
	var out []string
	for _, pattern := range []string{
		"cmd/hwtest/testdata/history/run*.json",
		"diff/testdata/noise/*.json",
		"diff/testdata/threads1/*.json",
		"diff/testdata/default-after/*.json",
		"diff/testdata/scenarios/*.json",
		FullRuns,
	} {
		files, err := filepath.Glob(filepath.Join(root, pattern))
		if err != nil {
			return nil, err
		}
		if len(files) == 0 {
			return nil, fmt.Errorf("no recorded run matches %s under %s", pattern, root)
		}
		for _, f := range files {
			rel, err := filepath.Rel(root, f)
			if err != nil {
				return nil, err
			}
			out = append(out, rel)
		}
	}
	slices.Sort(out)
	return out, nil
}

// FullRuns are the recorded runs of every target (five models, 14 targets each).
const FullRuns = "internal/histtest/testdata/full/*.json"

// Read reads a matrix.json.
func Read(path string) (matrix.Matrix, []byte, error) {
	var m matrix.Matrix
	b, err := os.ReadFile(path)
	if err != nil {
		return m, nil, err
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, b, nil
}

// Import stores the files (matrix.json) as runs in a new history at path, as
// `hwtest import` does.
func Import(tb testing.TB, path string, files ...string) {
	tb.Helper()
	ctx := context.Background()
	db, err := history.Open(ctx, path, history.ReadWrite, history.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	for _, f := range files {
		m, b, err := Read(f)
		if err != nil {
			tb.Fatal(err)
		}
		sum := sha256.Sum256(b)
		if err := db.Store(ctx, history.Run{Matrix: m, Source: "import " + f, ContentSHA256: hex.EncodeToString(sum[:])}); err != nil {
			tb.Fatal(err)
		}
	}
}

// Scale stores a history of runs runs of models models (a multiple of the recorded
// full runs' five) on the recorded runs' 14 targets in a new history at path, for
// scale tests and benchmarks. It is made of copies of real measurements: the three
// recorded full runs (FullRuns) are stored with every model renamed "<model>~000",
// then copied inside the database: each model's cells models/5 times,
// "<model>~001", … (so "silero-vad-v5~007" holds silero-vad-v5's cells, numbers
// and all), and the runs over and over (run j is a copy of recorded run j mod 3, an
// hour after run j−1), so the runs' latencies vary as the three recorded runs did.
// Copying by SQL keeps the setup to seconds: storing 210,000 cells one by one
// takes minutes.
func Scale(tb testing.TB, path, root string, models, runs int) {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join(root, FullRuns))
	if err != nil || len(files) == 0 {
		tb.Fatalf("recorded full runs %s: %v", FullRuns, err)
	}
	slices.Sort(files)
	var base []matrix.Matrix
	for _, f := range files {
		m, _, err := Read(f)
		if err != nil {
			tb.Fatal(err)
		}
		base = append(base, m)
	}
	var ran []string // the models with cells, in the matrix's order
	for _, c := range base[0].Cells {
		if !slices.Contains(ran, c.Model) {
			ran = append(ran, c.Model)
		}
	}
	if models%len(ran) != 0 || runs < len(base) {
		tb.Fatalf("histtest.Scale: %d models is not a multiple of the recorded runs' %d, or %d runs fewer than %d", models, len(ran), runs, len(base))
	}
	copies := models / len(ran)
	ctx := context.Background()
	db, err := history.Open(ctx, path, history.ReadWrite, history.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	for _, m := range base {
		m.Models = nil
		for _, id := range ran {
			m.Models = append(m.Models, Copy(id, 0))
		}
		m.Cells = slices.Clone(m.Cells)
		for i := range m.Cells {
			m.Cells[i].Model = Copy(m.Cells[i].Model, 0)
		}
		if err := db.Store(ctx, history.Run{Matrix: m, Source: "histtest.Scale"}); err != nil {
			tb.Fatal(err)
		}
	}
	exec := func(query string, args ...any) {
		if _, err := db.SQL().ExecContext(ctx, query, args...); err != nil {
			tb.Fatalf("histtest.Scale: %v\n%s", err, query)
		}
	}
	var span int64 // the cells' ids lie below it
	if err := db.SQL().QueryRowContext(ctx, `SELECT max(id) + 1 FROM cells`).Scan(&span); err != nil {
		tb.Fatal(err)
	}
	exec(`BEGIN TRANSACTION`)
	// The model copies, in every stored run.
	for _, table := range []struct{ name, id, model string }{
		{"cells", "id", `, regexp_replace(model, '~000$', '~' || lpad(CAST(k AS VARCHAR), 3, '0')) AS model`},
		{"checks", "cell_id", ""},
		{"outputs", "cell_id", ""},
	} {
		exec(fmt.Sprintf(`INSERT INTO %[1]s SELECT * EXCLUDE (k) REPLACE (%[2]s + k * %[3]d AS %[2]s%[4]s)
FROM (SELECT * FROM %[1]s), range(1, %[5]d) t(k)`, table.name, table.id, span, table.model, copies))
	}
	span *= int64(copies)
	last := base[len(base)-1].Generated
	for j := len(base); j < runs; j++ {
		src := base[j%len(base)].RunID
		id := fmt.Sprintf("%s-copy%03d", src, j)
		at := last.Add(time.Duration(j-len(base)+1) * time.Hour).UTC()
		off := int64(j) * span
		exec(`INSERT INTO runs SELECT * REPLACE (? AS run_id, ? AS finished_at, NULL AS content_sha256) FROM runs WHERE run_id = ?`, id, at, src)
		exec(`INSERT INTO detections SELECT * REPLACE (id + ? AS id, ? AS run_id) FROM detections WHERE run_id = ?`, off, id, src)
		exec(`INSERT INTO checks SELECT k.* REPLACE (k.cell_id + ? AS cell_id) FROM checks k JOIN cells c ON c.id = k.cell_id WHERE c.run_id = ?`, off, src)
		exec(`INSERT INTO outputs SELECT o.* REPLACE (o.cell_id + ? AS cell_id) FROM outputs o JOIN cells c ON c.id = o.cell_id WHERE c.run_id = ?`, off, src)
		exec(`INSERT INTO cells SELECT * REPLACE (id + ? AS id, ? AS run_id) FROM cells WHERE run_id = ?`, off, id, src)
	}
	exec(`COMMIT`)
}

// Copy is the id of a model's k-th copy in a Scale history.
func Copy(model string, k int) string { return fmt.Sprintf("%s~%03d", model, k) }

// Load reads a history as `hwtest report` reads it: the current matrix (the latest
// result of each cell, in the order of models and targets) and every run (its
// series), oldest first.
func Load(tb testing.TB, path string, models, targets []string) (matrix.Matrix, []matrix.Matrix) {
	tb.Helper()
	ctx := context.Background()
	db, err := history.Open(ctx, path, history.ReadOnly, history.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	current, err := db.Current(ctx, models, targets)
	if err != nil {
		tb.Fatal(err)
	}
	runs, err := db.Series(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	return current, runs
}
