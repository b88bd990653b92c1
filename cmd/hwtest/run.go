package main

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/hwtest/hwtest/catalog"
	"github.com/hwtest/hwtest/history"
	"github.com/hwtest/hwtest/matrix"
	"github.com/hwtest/hwtest/progress"
	"github.com/hwtest/hwtest/result"
	"github.com/hwtest/hwtest/runner"
	"github.com/hwtest/hwtest/runtime"
)

// RunOptions is what `hwtest run` acts on.
type RunOptions struct {
	*Globals
	TargetIDs  []string
	ModelIDs   []string
	Timeout    time.Duration
	ReportsDir string
	NoGenerate bool
	// AllowFailures exits 0 when cells are error or mismatch (the matrix says so).
	AllowFailures bool
	// Fleet is a fleet's NATS URL: the jobs go to its workers instead of running here.
	Fleet string
	FleetFlags
}

// ExitInterrupted is the shell's status for a command stopped by SIGINT (128 + 2).
const ExitInterrupted = 130

func newRunCmd(g *Globals, runF func(*RunOptions) error) *cobra.Command {
	opts := &RunOptions{Globals: g}
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run every model on every target here and write the compatibility matrix",
		Long: "Regenerates the suites, builds each family's package once, runs each model's\n" +
			"specs in a process of its own (a crash or hang is that model's error, the others\n" +
			"still run) and writes reports/<run id>/matrix.md and matrix.json, and points\n" +
			"reports/latest at it. Each run has a folder of its own, so runs may overlap.\n" +
			"SIGINT or SIGTERM stops the running model (its unfinished cells say\n" +
			"\"interrupted\"), writes the matrix of what finished and exits 130.\n" +
			"On a terminal a progress bar shows the cells done, the one running and an ETA\n" +
			"from the history's past timings; elsewhere one line per finished cell.\n" +
			"Exit status: 0 when every cell ran (pass, partial, cpu-only, unavailable,\n" +
			"expected-fail), 5 when a cell is error or mismatch (after the matrix and the\n" +
			"history are written; --allow-failures: 0), 130 when interrupted, 1 when hwtest\n" +
			"itself failed. So CI can gate on `hwtest run`.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opts.Timeout <= 0 {
				return fmt.Errorf("--timeout %v: want a positive duration such as 10m", opts.Timeout)
			}
			if runF != nil {
				return runF(opts)
			}
			return runRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringSliceVar(&opts.TargetIDs, "target", nil, "only these targets (repeatable); default all")
	cmd.Flags().StringSliceVar(&opts.ModelIDs, "model", nil, "only these models (repeatable); default all")
	cmd.Flags().DurationVar(&opts.Timeout, "timeout", 10*time.Minute, "per-model process timeout")
	cmd.Flags().StringVar(&opts.ReportsDir, "reports", "", "reports folder (default ROOT/reports)")
	cmd.Flags().BoolVar(&opts.NoGenerate, "no-generate", false, "run generated/ as it is, without regenerating")
	cmd.Flags().BoolVar(&opts.AllowFailures, "allow-failures", false, "exit 0 even when a cell is error or mismatch (default: exit 5)")
	cmd.Flags().StringVar(&opts.Fleet, "fleet", "", "run on a fleet's workers: its NATS URL (see `hwtest serve`, `hwtest worker`)")
	addFleetFlags(cmd, &opts.FleetFlags)
	return cmd
}

func runRun(ctx context.Context, opts *RunOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	// The suites read these; a bad value is one error now, not one per cell later.
	if _, err := runtime.MeasureTime(); err != nil {
		return err
	}
	if _, err := runtime.RunTimeout(); err != nil {
		return err
	}
	if _, err := runtime.Threads(); err != nil {
		return err
	}
	c, err := opts.loadCatalogs()
	if err != nil {
		return err
	}
	var modelIDs, targetIDs []string
	for _, m := range c.Models {
		modelIDs = append(modelIDs, m.ID)
	}
	for _, t := range c.Targets {
		targetIDs = append(targetIDs, t.ID)
	}
	for _, id := range opts.ModelIDs {
		if !slices.Contains(modelIDs, id) {
			return fmt.Errorf("--model %q is not in %s%s", id, relToWD(opts.ModelsFile), catalog.DidYouMean(id, modelIDs))
		}
	}
	if _, err := selectTargets(c, opts.TargetIDs, opts.HardwareFile); err != nil {
		return err
	}
	var labels []string
	for _, id := range opts.TargetIDs {
		labels = append(labels, result.TargetLabel(id))
	}
	if opts.Fleet != "" {
		return runFleet(ctx, opts, c) // the workers generate and build their own suites
	}
	suites, err := opts.suites()
	if err != nil {
		return err
	}
	if !opts.NoGenerate {
		if _, err := opts.writeSuites(c); err != nil {
			return err
		}
	}
	reports, id, out, err := opts.newRunDir()
	if err != nil {
		return err
	}
	fmt.Fprintf(opts.Stderr, "run id: %s\n", id)

	// SIGINT and SIGTERM cancel ctx: the runner stops the running suite and still
	// writes what finished. A second signal, once the first is being handled, kills
	// hwtest outright (the suites die with it: Pdeathsig).
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		stop()
	}()
	display := newRunDisplay(ctx, opts, modelIDs, targetIDs)
	res, err := runner.Run(ctx, runner.Options{
		Root: opts.Root, Catalogs: c, RunID: id, OutDir: out, Timeout: opts.Timeout,
		LabelFilter: strings.Join(labels, " || "), ModelIDs: opts.ModelIDs, TargetIDs: opts.TargetIDs,
		Env: opts.provenanceEnv(c), SuiteDir: suites.SuiteDir(),
		Log: display.Log(), Progress: display.Cell, Explain: opts.explainCell,
	})
	// The bar is drawn for the last time before anything else is printed.
	display.Finish(err != nil || res.Interrupted)
	if err != nil {
		return err // the runner removed the folder if nothing ran
	}
	fmt.Fprintf(opts.Stdout, "%s\n", res.Matrix.SummaryLine())
	fmt.Fprintf(opts.Stdout, "matrix: %s\n        %s\n", relToWD(filepath.Join(out, "matrix.md")), relToWD(filepath.Join(out, "matrix.json")))
	fmt.Fprint(opts.Stdout, res.Breakdown())
	// The history is written even after a signal (the cells that finished are
	// results; the interrupted ones do not hide earlier results), with a context of
	// its own: ctx is cancelled by then.
	stored := storeRun(context.Background(), opts.Globals, res)
	if res.Interrupted {
		// latest stays on the last run that finished: a partial matrix is kept in
		// its own folder but does not replace a whole one.
		return &exitError{code: ExitInterrupted, err: errors.Join(fmt.Errorf("run %s interrupted: the matrix holds the cells that finished", id), stored)}
	}
	if err := runner.LinkLatest(reports, id); err != nil {
		return errors.Join(err, stored)
	}
	if stored != nil {
		return stored
	}
	return opts.failedCells(res.Matrix)
}

// failedCells is ExitCellsFailed naming the cells that are error or mismatch,
// unless --allow-failures; nil when there are none.
func (opts *RunOptions) failedCells(m matrix.Matrix) error {
	var failed []string
	for _, c := range m.Cells {
		if c.Status.Failed() {
			failed = append(failed, fmt.Sprintf("%s on %s: %s", c.Model, c.Target, c.Status))
		}
	}
	if len(failed) == 0 || opts.AllowFailures {
		return nil
	}
	const most = 10 // the rest are in the matrix: a line, not a page
	n := len(failed)
	if n > most {
		failed = append(failed[:most], fmt.Sprintf("%d more in the matrix", n-most))
	}
	return &exitError{code: ExitCellsFailed, err: fmt.Errorf("%s failed (%s); the matrix and the history are written; --allow-failures exits 0",
		result.Plural(n, "cell"), strings.Join(failed, ", "))}
}

// newRunDir makes the run's folder under the reports folder (--reports, else
// ROOT/reports) and returns both, and the run's id.
func (opts *RunOptions) newRunDir() (reports, id, dir string, err error) {
	reports = opts.ReportsDir
	if reports == "" {
		reports = filepath.Join(opts.Root, "reports")
	}
	id, dir, err = runner.NewRunDir(reports)
	return reports, id, dir, err
}

// newRunDisplay shows the run's cells as they end: a bar on a terminal, a line each
// elsewhere. The ETA comes from the cells' past wall times in the history, read
// once now; a history another hwtest holds for long is not waited for.
func newRunDisplay(ctx context.Context, opts *RunOptions, models, targets []string) progress.Display {
	if len(opts.ModelIDs) > 0 {
		models = slices.DeleteFunc(slices.Clone(models), func(m string) bool { return !slices.Contains(opts.ModelIDs, m) })
	}
	if len(opts.TargetIDs) > 0 {
		targets = slices.DeleteFunc(slices.Clone(targets), func(t string) bool { return !slices.Contains(opts.TargetIDs, t) })
	}
	timings, err := progress.OpenTimings(ctx, opts.DB, 2*time.Second)
	noETA := ""
	switch {
	case errors.Is(err, history.ErrNoHistory):
		noETA = "no history"
	case err != nil:
		noETA = "history unreadable"
		fmt.Fprintf(opts.Stderr, "progress: no ETA: %v\n", err)
	}
	return progress.New(opts.Stderr, progress.NewTracker(progress.Plan(models, targets), timings, noETA, nil))
}

// codeCommit is the checkout's HEAD, "+dirty" with uncommitted changes; "" outside git.
func codeCommit(root string) string {
	out, err := exec.Command("git", "-C", root, "rev-parse", "HEAD").Output()
	if err != nil {
		return ""
	}
	commit := strings.TrimSpace(string(out))
	if err := exec.Command("git", "-C", root, "diff", "--quiet", "HEAD").Run(); err != nil {
		commit += "+dirty"
	}
	return commit
}

// dataFiles hashes every input and expected-output file the catalog's models read,
// by path and content, into one sum.
func dataFiles(root string, c *catalog.Catalogs) (int, [32]byte) {
	var lines []string
	for _, m := range c.Models {
		dir := m.Dir
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(root, dir)
		}
		var files []string
		for _, in := range m.Inputs {
			if in.File != "" {
				files = append(files, in.File)
			}
		}
		for _, e := range m.Expected {
			files = append(files, e.File)
		}
		for _, f := range files {
			sum := "missing"
			if data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f))); err == nil {
				sum = fmt.Sprintf("%x", sha256.Sum256(data))
			}
			lines = append(lines, m.ID+"\x00"+f+"\x00"+sum)
		}
	}
	slices.Sort(lines)
	return len(lines), sha256.Sum256([]byte(strings.Join(lines, "\n")))
}

// catalogCommit is the last commit that touched the catalogs, for provenance; ""
// outside a git checkout. A "+dirty" suffix says the catalogs differ from it.
func catalogCommit(root string, files ...string) string {
	// A catalog git does not track has no commit: the last commit of the others
	// would read as the catalogs' version.
	for _, f := range files {
		if exec.Command("git", "-C", root, "ls-files", "--error-unmatch", "--", f).Run() != nil {
			return ""
		}
	}
	args := append([]string{"-C", root, "log", "-1", "--format=%H", "--"}, files...)
	out, err := exec.Command("git", args...).Output()
	if err != nil {
		return ""
	}
	commit := strings.TrimSpace(string(out))
	args = append([]string{"-C", root, "diff", "--quiet", "HEAD", "--"}, files...)
	if err := exec.Command("git", args...).Run(); err != nil && commit != "" {
		commit += "+dirty"
	}
	return commit
}

// provenanceEnv is what every suite process records of the catalogs that ran it:
// the files, each with its sha256, the input and expected-output files their models
// read (a new image changes the results as much as a new catalog does), and the
// last commit that touched the catalogs (none for a catalog git does not track).
func (g *Globals) provenanceEnv(c *catalog.Catalogs) []string {
	var named []string
	for _, f := range []string{g.ModelsFile, g.HardwareFile} {
		name := f
		if rel, err := filepath.Rel(g.Root, f); err == nil && !strings.HasPrefix(rel, "..") {
			name = filepath.ToSlash(rel)
		}
		if data, err := os.ReadFile(f); err == nil {
			sum := sha256.Sum256(data)
			name += fmt.Sprintf(" (sha256 %x)", sum[:6])
		}
		named = append(named, name)
	}
	if n, sum := dataFiles(g.Root, c); n > 0 {
		named = append(named, fmt.Sprintf("%d input and expected-output files (sha256 %x)", n, sum[:6]))
	}
	return []string{
		"HWTEST_CATALOG=" + strings.Join(named, ", "),
		"HWTEST_CATALOG_COMMIT=" + catalogCommit(g.Root, g.ModelsFile, g.HardwareFile),
		"HWTEST_CODE_COMMIT=" + codeCommit(g.Root),
	}
}
