package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/hwtest/hwtest/history"
	"github.com/hwtest/hwtest/matrix"
	"github.com/hwtest/hwtest/result"
	"github.com/hwtest/hwtest/runner"
)

// openHistory opens the history database that --db, $HWTEST_DB or the default names.
func (g *Globals) openHistory(ctx context.Context, mode history.Mode) (*history.DB, error) {
	if err := g.resolveRoot(); err != nil {
		return nil, err
	}
	return history.Open(ctx, g.DB, mode, history.Options{Log: g.Stderr})
}

// catalogOrder is the catalogs' model and target order, for matrices read from the
// history; nil when the catalogs do not load (the history is readable without them).
func (g *Globals) catalogOrder() (models, targets []string) {
	c, err := g.loadCatalogs()
	if err != nil {
		return nil, nil
	}
	for _, m := range c.Models {
		models = append(models, m.ID)
	}
	for _, t := range c.Targets {
		targets = append(targets, t.ID)
	}
	return models, targets
}

// storeRun keeps a finished run in the history. Its matrix files are written
// already, so a failure here loses nothing but says the history was not updated.
func storeRun(ctx context.Context, g *Globals, res *runner.Result) error {
	start := time.Now()
	db, err := g.openHistory(ctx, history.ReadWrite)
	if err == nil {
		err = db.Store(ctx, history.Run{Matrix: res.Matrix, Interrupted: res.Interrupted, Source: "run", Detection: res.Detection})
		if cerr := db.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return fmt.Errorf("the history was not updated (the matrix files are written): %w", err)
	}
	fmt.Fprintf(g.Stdout, "history: %s (%d cells stored in %.2f s)\n", relToWD(g.DB), len(res.Matrix.Cells), time.Since(start).Seconds())
	return nil
}

// HistoryOptions is what `hwtest history` acts on.
type HistoryOptions struct {
	*Globals
	Model  string
	Target string
	JSON   bool
}

func newHistoryCmd(g *Globals, runF func(*HistoryOptions) error) *cobra.Command {
	opts := &HistoryOptions{Globals: g}
	cmd := &cobra.Command{
		Use:   "history [MODEL]",
		Short: "A cell's runs over time, newest first; without MODEL, the stored runs",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Model = args[0]
			} else if opts.Target != "" {
				return errors.New("--target needs a MODEL: hwtest history MODEL --target T")
			}
			if runF != nil {
				return runF(opts)
			}
			return historyRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Target, "target", "", "only this target")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	return cmd
}

func historyRun(ctx context.Context, opts *HistoryOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	db, err := opts.openHistory(ctx, history.ReadOnly)
	if err != nil {
		return err
	}
	defer db.Close()
	if opts.Model == "" {
		runs, err := db.Runs(ctx)
		if err != nil {
			return err
		}
		if opts.JSON {
			return writeJSON(opts.Stdout, runs)
		}
		w := tabwriter.NewWriter(opts.Stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(w, "run\tfinished (UTC)\thost\tsource\tcells")
		for _, r := range runs {
			m := matrix.Matrix{Summary: r.Summary}
			src := r.Source
			if r.Interrupted {
				src += " (interrupted)"
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", r.ID, r.Finished.UTC().Format("2006-01-02 15:04:05"), r.Host, src, m.SummaryLine())
		}
		return w.Flush()
	}
	cells, err := db.History(ctx, opts.Model, opts.Target)
	if err != nil {
		return err
	}
	if len(cells) == 0 {
		what := opts.Model
		if opts.Target != "" {
			what += " on " + opts.Target
		}
		return fmt.Errorf("the history %s has no results for %s", relToWD(db.Path()), what)
	}
	if opts.JSON {
		return writeJSON(opts.Stdout, cells)
	}
	w := tabwriter.NewWriter(opts.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "run\tfinished (UTC)\ttarget\tstatus\tp50 ms\tp99 ms\tpeak RSS MiB\tmodel peak MiB\tONNX Runtime\tdevice")
	for _, c := range cells {
		p50, p99, rss, model := "", "", "", ""
		if m := c.Metrics; m != nil {
			p50, p99 = strconv.FormatFloat(m.P50MS, 'g', 4, 64), strconv.FormatFloat(m.P99MS, 'g', 4, 64)
			rss = result.FormatMiB(m.PeakRSSBytes)
			if m.ModelPeakBytes > 0 {
				model = result.FormatMiB(m.ModelPeakBytes)
			}
		}
		ort, device := "", ""
		if p := c.Provenance; p != nil {
			ort, device = p.ORTVersion, p.Device
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", c.RunID, c.RunTime.UTC().Format("2006-01-02 15:04:05"), c.Target, c.Status, p50, p99, rss, model, ort, device)
	}
	return w.Flush()
}

// QueryOptions is what `hwtest query` acts on.
type QueryOptions struct {
	*Globals
	SQL  string
	JSON bool
	CSV  bool
}

func newQueryCmd(g *Globals, runF func(*QueryOptions) error) *cobra.Command {
	opts := &QueryOptions{Globals: g}
	cmd := &cobra.Command{
		Use:   `query "SQL"`,
		Short: "Run SQL on the history (read-only): tables runs, cells, checks, outputs, samples, detections; views hardware_results, hardware_detection",
		Long: "Runs one SQL statement on the history database, opened read-only, and prints\n" +
			"the rows as a table, or with --json / --csv. hardware_results and\n" +
			"hardware_detection keep the schema of the system hwtest replaces:\n" +
			"inference_time is the median latency in ms, load_time in ms, memory_usage the\n" +
			"peak resident memory in MiB, success = the cell ran and agreed with the CPU\n" +
			"reference (pass, partial or cpu-only). Times are UTC.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.SQL = args[0]
			if opts.JSON && opts.CSV {
				return errors.New("--json and --csv: choose one")
			}
			if strings.TrimSpace(opts.SQL) == "" {
				return errors.New(`query: empty SQL: try hwtest query "SELECT * FROM hardware_results LIMIT 5"`)
			}
			if runF != nil {
				return runF(opts)
			}
			return queryRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the rows as a JSON array of objects")
	cmd.Flags().BoolVar(&opts.CSV, "csv", false, "print the rows as CSV with a header")
	return cmd
}

func queryRun(ctx context.Context, opts *QueryOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	db, err := opts.openHistory(ctx, history.ReadOnly)
	if err != nil {
		return err
	}
	defer db.Close()
	rows, err := db.Query(ctx, opts.SQL)
	if err != nil {
		return err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
	var table [][]any
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return fmt.Errorf("query: %w", err)
		}
		table = append(table, vals)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("query: %w", err)
	}
	switch {
	case opts.JSON:
		out := make([]map[string]any, 0, len(table))
		for _, row := range table {
			obj := make(map[string]any, len(cols))
			for i, c := range cols {
				obj[c] = jsonCell(row[i])
			}
			out = append(out, obj)
		}
		return writeJSON(opts.Stdout, orderedRows{cols: cols, rows: out})
	case opts.CSV:
		w := csv.NewWriter(opts.Stdout)
		w.Write(cols)
		for _, row := range table {
			rec := make([]string, len(row))
			for i, v := range row {
				if v != nil {
					rec[i] = textCell(v)
				}
			}
			w.Write(rec)
		}
		w.Flush()
		return w.Error()
	}
	w := tabwriter.NewWriter(opts.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, strings.Join(cols, "\t"))
	rule := make([]string, len(cols))
	for i, c := range cols {
		rule[i] = strings.Repeat("-", max(len(c), 3))
	}
	fmt.Fprintln(w, strings.Join(rule, "\t"))
	for _, row := range table {
		rec := make([]string, len(row))
		for i, v := range row {
			if v == nil {
				rec[i] = "NULL"
			} else {
				rec[i] = strings.ReplaceAll(textCell(v), "\t", " ")
			}
		}
		fmt.Fprintln(w, strings.Join(rec, "\t"))
	}
	if err := w.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(opts.Stderr, "(%d rows)\n", len(table))
	return nil
}

// textCell writes a value as a person reads it: times in UTC, lists as JSON.
func textCell(v any) string {
	switch v := v.(type) {
	case time.Time:
		return v.UTC().Format("2006-01-02 15:04:05.000000")
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	case float32:
		return strconv.FormatFloat(float64(v), 'g', -1, 32)
	case []byte:
		return string(v)
	case string:
		return v
	case []any, map[string]any:
		b, _ := json.Marshal(jsonCell(v))
		return string(b)
	}
	return fmt.Sprint(v)
}

// jsonCell makes a database value JSON-friendly (times in UTC).
func jsonCell(v any) any {
	switch v := v.(type) {
	case time.Time:
		return v.UTC()
	case []byte:
		return string(v)
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = jsonCell(x)
		}
		return out
	}
	return v
}

// orderedRows writes each row's keys in the query's column order, not sorted.
type orderedRows struct {
	cols []string
	rows []map[string]any
}

func (o orderedRows) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('[')
	for i, row := range o.rows {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('{')
		for j, c := range o.cols {
			if j > 0 {
				b.WriteByte(',')
			}
			k, _ := json.Marshal(c)
			v, err := json.Marshal(row[c])
			if err != nil {
				return nil, err
			}
			b.Write(k)
			b.WriteByte(':')
			b.Write(v)
		}
		b.WriteByte('}')
	}
	b.WriteByte(']')
	return b.Bytes(), nil
}

func writeJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// ImportOptions is what `hwtest import` acts on.
type ImportOptions struct {
	*Globals
	Files []string
}

func newImportCmd(g *Globals, runF func(*ImportOptions) error) *cobra.Command {
	opts := &ImportOptions{Globals: g}
	cmd := &cobra.Command{
		Use:   "import FILE...",
		Short: "Bring matrix.json files (another machine's, an older hwtest's) into the history; the same file twice adds nothing",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Files = args
			if runF != nil {
				return runF(opts)
			}
			return importRun(cmd.Context(), opts)
		},
	}
	return cmd
}

func importRun(ctx context.Context, opts *ImportOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	// Read every file first: a bad one stops the import before anything is stored.
	type file struct {
		path string
		run  history.Run
	}
	var files []file
	for _, path := range opts.Files {
		run, err := readImport(path)
		if err != nil {
			return err
		}
		files = append(files, file{path, run})
	}
	db, err := opts.openHistory(ctx, history.ReadWrite)
	if err != nil {
		return err
	}
	defer db.Close()
	added := 0
	for _, f := range files {
		err := db.Store(ctx, f.run)
		switch {
		case errors.Is(err, history.ErrDuplicate):
			fmt.Fprintf(opts.Stdout, "%s: %v, nothing added\n", f.path, err)
		case err != nil:
			return err
		default:
			added++
			fmt.Fprintf(opts.Stdout, "%s: run %s, %d cells\n", f.path, f.run.Matrix.RunID, len(f.run.Matrix.Cells))
		}
	}
	fmt.Fprintf(opts.Stdout, "imported %d of %d files into %s\n", added, len(files), relToWD(db.Path()))
	return nil
}

// readImport reads a matrix.json as a run to store. A file without a run id (an
// older hwtest's) is named by its content's sha256, so importing it twice is
// noticed as well.
func readImport(path string) (history.Run, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return history.Run{}, err
	}
	sum := sha256.Sum256(b)
	digest := hex.EncodeToString(sum[:])
	var probe struct {
		Cells *json.RawMessage `json:"cells"`
	}
	if err := json.Unmarshal(b, &probe); err != nil {
		return history.Run{}, fmt.Errorf("%s is not a matrix.json: %w", path, err)
	}
	if probe.Cells == nil {
		return history.Run{}, fmt.Errorf("%s is not a matrix.json: it has no \"cells\" (hwtest run writes reports/<run id>/matrix.json)", path)
	}
	var m matrix.Matrix
	if err := json.Unmarshal(b, &m); err != nil {
		return history.Run{}, fmt.Errorf("%s is not a matrix.json of this hwtest: %w", path, err)
	}
	for i, c := range m.Cells {
		if c.Model == "" || c.Target == "" || c.Status == "" {
			return history.Run{}, fmt.Errorf("%s: cell %d has no model, target or status", path, i)
		}
	}
	if m.RunID == "" {
		m.RunID = "import-" + digest[:12]
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	return history.Run{Matrix: m, Source: "import " + abs, ContentSHA256: digest}, nil
}
