package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/spf13/cobra"

	"github.com/hwtest/hwtest/analysis"
	"github.com/hwtest/hwtest/diagnose"
	"github.com/hwtest/hwtest/history"
	"github.com/hwtest/hwtest/htmlreport"
	"github.com/hwtest/hwtest/matrix"
)

// ReportOptions is what `hwtest report` acts on.
type ReportOptions struct {
	*Globals
	Matrix  string
	RunID   string
	Errors  bool
	JSON    bool
	Summary bool     // the summaries only (text, or JSON with --json)
	HTML    bool     // write the HTML report
	Out     string   // where --html writes (default ROOT/reports/report.html)
	Ops     bool     // the operator × target conformance scoreboard
	Targets []string // the scoreboard's targets (--ops); none: all
}

func newReportCmd(g *Globals, runF func(*ReportOptions) error) *cobra.Command {
	opts := &ReportOptions{Globals: g}
	cmd := &cobra.Command{
		Use:   "report",
		Short: "Print the current matrix (each cell's latest result across runs) and its summaries; --html writes them as one self-contained page; --errors lists the problems by severity with what to do",
		Long: "Reads the history (--db): the latest result of every (model, target) across\n" +
			"runs, each cell naming the run it came from. --run ID shows one stored run,\n" +
			"--matrix FILE one matrix.json. Without a history, reports/latest is read.\n\n" +
			"Below the matrix come the summaries: statuses per target and family; p50 per\n" +
			"target and family with the fastest and slowest cells; speedup over cpu per\n" +
			"target, family and model; peak memory per target and the heaviest models;\n" +
			"each cell's trend over the history's runs with what package diff calls a\n" +
			"regression; failures by severity with their fix; the environment.\n" +
			"--summary prints the summaries alone (--json: as JSON). --html writes them,\n" +
			"with the heatmap and charts, into one HTML file that loads nothing from\n" +
			"anywhere (--out FILE, default reports/report.html; - for stdout).\n\n" +
			"--ops prints the operator × target scoreboard instead: ONNX's own node test\n" +
			"cases (`hwtest conformance` stores them), each target's latest conformance run\n" +
			"that had it; per target its totals, per operator each target's cell, then the\n" +
			"mismatches with their worst element and the other failures grouped by the\n" +
			"runtime's exact error (--json: all of it, every case included). --target T\n" +
			"(repeatable) keeps those targets. The HTML page always holds the scoreboard\n" +
			"when the history has one; --ops --html is that page with the scoreboard\n" +
			"narrowed by --target, and an error when there is no scoreboard.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch {
			case opts.Matrix != "" && opts.RunID != "":
				return errors.New("--matrix and --run: choose one")
			case opts.Errors && (opts.Summary || opts.HTML):
				return errors.New("--errors, --summary and --html: choose one")
			case opts.Summary && opts.HTML:
				return errors.New("--summary and --html: choose one (the page holds the summaries)")
			case opts.HTML && opts.JSON:
				return errors.New("--html and --json: choose one")
			case opts.Out != "" && !opts.HTML:
				return errors.New("--out is where --html writes: add --html")
			case opts.Ops && (opts.Errors || opts.Summary):
				return errors.New("--ops, --errors and --summary: choose one")
			case opts.Ops && (opts.Matrix != "" || opts.RunID != ""):
				return errors.New("--ops reads each target's latest conformance run from the history: drop --matrix and --run")
			case len(opts.Targets) > 0 && !opts.Ops:
				return errors.New("--target picks the scoreboard's targets: add --ops")
			}
			if runF != nil {
				return runF(opts)
			}
			return reportRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Matrix, "matrix", "", "a matrix.json to read instead of the history")
	cmd.Flags().StringVar(&opts.RunID, "run", "", "one stored run (`hwtest history` lists them)")
	cmd.Flags().BoolVar(&opts.Errors, "errors", false, "classify every cell that is not a pass: severity, kind, recommendation")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	cmd.Flags().BoolVar(&opts.Summary, "summary", false, "print the summaries only (with --json: as JSON)")
	cmd.Flags().BoolVar(&opts.HTML, "html", false, "write the report as one self-contained HTML file")
	cmd.Flags().StringVar(&opts.Out, "out", "", "the file --html writes (default ROOT/reports/report.html; - for stdout)")
	cmd.Flags().BoolVar(&opts.Ops, "ops", false, "print the operator × target conformance scoreboard (with --json: as JSON; with --html: narrowed by --target)")
	cmd.Flags().StringSliceVar(&opts.Targets, "target", nil, "the scoreboard's targets (with --ops; repeatable; default all)")
	return cmd
}

func reportRun(ctx context.Context, opts *ReportOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if opts.Ops && !opts.HTML {
		return reportOps(ctx, opts)
	}
	if opts.Errors {
		m, err := reportMatrix(ctx, opts)
		if err != nil {
			return err
		}
		md, js := diagnose.Report(analysis.Findings(m))
		if opts.JSON {
			_, err = opts.Stdout.Write(js)
		} else {
			_, err = opts.Stdout.Write(md)
		}
		return err
	}
	if opts.JSON && !opts.Summary {
		m, err := reportMatrix(ctx, opts)
		if err != nil {
			return err
		}
		b, err := m.JSON()
		if err != nil {
			return err
		}
		_, err = opts.Stdout.Write(b)
		return err
	}
	m, runs, sb, err := reportHistory(ctx, opts)
	if err != nil {
		return err
	}
	summary := analysis.Analyze(m, runs, analysis.Options{})
	switch {
	case opts.HTML:
		return writeHTML(opts, m, summary, sb)
	case opts.Summary && opts.JSON:
		return writeJSON(opts.Stdout, summary)
	case opts.Summary:
		_, err = opts.Stdout.Write(summary.Text())
		return err
	}
	if _, err := opts.Stdout.Write(m.Markdown()); err != nil {
		return err
	}
	_, err = opts.Stdout.Write(append([]byte("\n"), summary.Text()...))
	return err
}

// reportHistory is the matrix the flags ask for and the runs its trends come from:
// the history's runs (up to the run asked for), or the one matrix without a history;
// for --html also the conformance scoreboard (nil when the history has none).
func reportHistory(ctx context.Context, opts *ReportOptions) (matrix.Matrix, []matrix.Matrix, *scoreboard, error) {
	if opts.Matrix != "" {
		m, err := readMatrixFile(opts.Matrix)
		return m, []matrix.Matrix{m}, nil, err
	}
	db, err := opts.openHistory(ctx, history.ReadOnly)
	if errors.Is(err, history.ErrNoHistory) && opts.RunID == "" && !opts.Ops {
		fmt.Fprintf(opts.Stderr, "%v; reading %s\n", err, relToWD(latestMatrix(opts.Globals)))
		m, err := readMatrixFile(latestMatrix(opts.Globals))
		return m, []matrix.Matrix{m}, nil, err
	}
	if errors.Is(err, history.ErrNoHistory) && opts.Ops {
		return matrix.Matrix{}, nil, nil, fmt.Errorf("%w; %w", err, errNoConformance)
	}
	if err != nil {
		return matrix.Matrix{}, nil, nil, err
	}
	defer db.Close()
	models, targets := opts.catalogOrder()
	// The matrix and the runs are read at once: two queries of a few hundred
	// milliseconds each on a large history.
	var runs []matrix.Matrix
	var runsErr error
	read := make(chan struct{})
	go func() {
		defer close(read)
		runs, runsErr = db.Series(ctx)
	}()
	var m matrix.Matrix
	if opts.RunID != "" {
		m, err = db.RunMatrix(ctx, opts.RunID, models, targets)
	} else {
		m, err = db.Current(ctx, models, targets)
	}
	<-read
	if err == nil {
		err = runsErr
	}
	if err != nil {
		return m, nil, nil, err
	}
	if opts.RunID != "" {
		// One run's report: its trends end with it.
		runs = slices.DeleteFunc(runs, func(r matrix.Matrix) bool { return r.Generated.After(m.Generated) })
	}
	if !opts.HTML {
		return m, runs, nil, nil
	}
	sb, err := readScoreboard(ctx, opts.Globals, db, opts.Targets)
	switch {
	case errors.Is(err, errNoConformance) && !opts.Ops:
		return m, runs, nil, nil // the page says how to fill it
	case err != nil:
		return m, runs, nil, err
	}
	return m, runs, &sb, nil
}

// writeHTML renders the page in memory and writes it whole: a reader of the file
// sees the old page or the new one.
func writeHTML(opts *ReportOptions, m matrix.Matrix, summary analysis.Report, sb *scoreboard) error {
	in := htmlreport.Input{Current: m, Report: summary}
	if sb != nil {
		in.Scoreboard = &htmlreport.Scoreboard{Board: sb.Board, Runs: sb.Runs}
	}
	var b bytes.Buffer
	if err := htmlreport.Render(&b, in); err != nil {
		return err
	}
	if opts.Out == "-" {
		_, err := opts.Stdout.Write(b.Bytes())
		return err
	}
	out := opts.Out
	if out == "" {
		if err := opts.resolveRoot(); err != nil {
			return fmt.Errorf("%w: say where with --out FILE", err)
		}
		out = filepath.Join(opts.Root, "reports", "report.html")
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(out), ".report-*.html")
	if err != nil {
		return err
	}
	_, err = tmp.Write(b.Bytes())
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), out)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return err
	}
	ops := "no conformance scoreboard"
	if sb != nil {
		ops = fmt.Sprintf("scoreboard of %s on %s", plural(len(sb.Board.Ops), "operator"), plural(len(sb.Board.Targets), "target"))
	}
	fmt.Fprintf(opts.Stdout, "report: %s (%.1f MiB; %s, %s; %s)\n", relToWD(out), float64(b.Len())/(1<<20),
		plural(len(m.Cells), "cell"), plural(summary.Runs.Count, "run"), ops)
	return nil
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// reportMatrix is the matrix the flags ask for: a file, a stored run, or the
// current matrix.
func reportMatrix(ctx context.Context, opts *ReportOptions) (matrix.Matrix, error) {
	if opts.Matrix != "" {
		return readMatrixFile(opts.Matrix)
	}
	if opts.RunID == "" {
		return currentMatrix(ctx, opts.Globals)
	}
	db, err := opts.openHistory(ctx, history.ReadOnly)
	if err != nil {
		return matrix.Matrix{}, err
	}
	defer db.Close()
	models, targets := opts.catalogOrder()
	return db.RunMatrix(ctx, opts.RunID, models, targets)
}

// currentMatrix is the history's latest result of every cell; reports/latest's
// matrix when there is no history yet (a checkout from before the history).
func currentMatrix(ctx context.Context, g *Globals) (matrix.Matrix, error) {
	db, err := g.openHistory(ctx, history.ReadOnly)
	if errors.Is(err, history.ErrNoHistory) {
		fmt.Fprintf(g.Stderr, "%v; reading %s\n", err, relToWD(latestMatrix(g)))
		return readMatrixFile(latestMatrix(g))
	}
	if err != nil {
		return matrix.Matrix{}, err
	}
	defer db.Close()
	models, targets := g.catalogOrder()
	return db.Current(ctx, models, targets)
}

func latestMatrix(g *Globals) string {
	return filepath.Join(g.Root, "reports", "latest", "matrix.json")
}

func readMatrixFile(path string) (matrix.Matrix, error) {
	var m matrix.Matrix
	b, err := os.ReadFile(path)
	if err != nil {
		return m, fmt.Errorf("%w: run `hwtest run` (or `make run`) first", err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}
