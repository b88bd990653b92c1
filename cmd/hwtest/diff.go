package main

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/spf13/cobra"

	"github.com/hwtest/hwtest/diff"
	"github.com/hwtest/hwtest/history"
	"github.com/hwtest/hwtest/matrix"
)

// ExitRegressed is `hwtest diff`'s status when a cell regressed, so CI can gate on it.
const ExitRegressed = 4

// DiffOptions is what `hwtest diff` acts on.
type DiffOptions struct {
	*Globals
	Old, New  string // run ids; empty: the defaults
	JSON      bool
	Alpha     float64
	MinEffect float64
	MinRuns   int
	Window    int // repeated runs read per side
}

func newDiffCmd(g *Globals, runF func(*DiffOptions) error) *cobra.Command {
	opts := &DiffOptions{Globals: g}
	cmd := &cobra.Command{
		Use:   "diff [OLD] [NEW]",
		Short: "What changed between two stored runs: statuses, placement, latency and memory regressions (exit 4 when something regressed)",
		Long: "Compares the cells two runs share. Status changes (pass → mismatch, newly\n" +
			"unavailable, …) and moved node placement are reported; latency (p50) and peak\n" +
			"memory are compared only where the cell's key is the same (model sha256, ONNX\n" +
			"Runtime version and library sha256, device, driver, host CPU) and a changed key\n" +
			"is named instead. A latency or memory regression is decided as benchstat does:\n" +
			"a two-sided Mann-Whitney U test at --alpha on repeated runs, and a change of the\n" +
			"medians of at least --min-effect. The repeated runs of OLD are OLD and the runs\n" +
			"before it; those of NEW are NEW and the runs after OLD up to it; each side needs\n" +
			"--min-runs runs with the cell's key, else the change is shown undecided (one\n" +
			"run's timing blocks miss the run-to-run noise of a shared machine).\n\n" +
			"Defaults: NEW is the newest run, OLD the newest run before it that shares\n" +
			"cells with it. After a change, run `hwtest run` three times and compare with\n" +
			"`hwtest diff LAST_RUN_BEFORE_THE_CHANGE`.",
		Args: cobra.MaximumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				opts.Old = args[0]
			}
			if len(args) > 1 {
				opts.New = args[1]
			}
			switch {
			case opts.Alpha <= 0 || opts.Alpha >= 1:
				return fmt.Errorf("--alpha %g: want a significance level between 0 and 1, such as 0.05", opts.Alpha)
			case opts.MinEffect < 0:
				return fmt.Errorf("--min-effect %g: want a relative change such as 0.05 (5%%)", opts.MinEffect)
			case opts.MinRuns < 2:
				return fmt.Errorf("--min-runs %d: a test needs at least 2 runs a side", opts.MinRuns)
			case opts.Window < opts.MinRuns:
				return fmt.Errorf("--runs %d: read at least --min-runs (%d) runs a side", opts.Window, opts.MinRuns)
			}
			if runF != nil {
				return runF(opts)
			}
			return diffRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	cmd.Flags().Float64Var(&opts.Alpha, "alpha", diff.DefaultAlpha, "significance level of the U test (confidence = 1 − alpha)")
	cmd.Flags().Float64Var(&opts.MinEffect, "min-effect", diff.DefaultMinEffect, "smallest change of the medians called a regression (0.05 = 5%)")
	cmd.Flags().IntVar(&opts.MinRuns, "min-runs", diff.DefaultMinRuns, "runs with the same key each side needs before latency or memory is decided")
	cmd.Flags().IntVar(&opts.Window, "runs", 10, "at most this many runs read per side")
	return cmd
}

func diffRun(ctx context.Context, opts *DiffOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	db, err := opts.openHistory(ctx, history.ReadOnly)
	if err != nil {
		return err
	}
	defer db.Close()
	runs, err := db.Runs(ctx) // newest first
	if err != nil {
		return err
	}
	index := func(id string) (int, error) {
		i := slices.IndexFunc(runs, func(r history.RunInfo) bool { return r.ID == id })
		if i < 0 {
			return 0, fmt.Errorf("the history %s has no run %q: `hwtest history` lists them", relToWD(db.Path()), id)
		}
		return i, nil
	}
	if len(runs) < 2 {
		return fmt.Errorf("the history %s holds %d runs: a diff needs two", relToWD(db.Path()), len(runs))
	}
	models, targets := opts.catalogOrder()
	load := func(i int) (matrix.Matrix, error) { return db.RunMatrix(ctx, runs[i].ID, models, targets) }

	newI := 0
	if opts.New != "" {
		if newI, err = index(opts.New); err != nil {
			return err
		}
	}
	newM, err := load(newI)
	if err != nil {
		return err
	}
	oldI := -1
	var oldM matrix.Matrix
	if opts.Old != "" {
		if oldI, err = index(opts.Old); err != nil {
			return err
		}
		if oldI <= newI {
			return fmt.Errorf("run %s is not older than run %s: hwtest diff OLD NEW", runs[oldI].ID, runs[newI].ID)
		}
		if oldM, err = load(oldI); err != nil {
			return err
		}
	} else {
		for i := newI + 1; i < len(runs); i++ {
			m, err := load(i)
			if err != nil {
				return err
			}
			if shareCells(m, newM) {
				oldI, oldM = i, m
				break
			}
		}
		if oldI < 0 {
			return fmt.Errorf("no run before %s shares a cell with it", runs[newI].ID)
		}
	}

	o := diff.Options{Alpha: opts.Alpha, MinEffect: opts.MinEffect, MinRuns: opts.MinRuns}
	// Repeated runs: NEW's are the runs after OLD up to NEW, OLD's the runs before it.
	for i := newI + 1; i < oldI && len(o.NewRuns) < opts.Window-1; i++ {
		m, err := load(i)
		if err != nil {
			return err
		}
		o.NewRuns = append(o.NewRuns, m)
	}
	for i := oldI + 1; i < len(runs) && len(o.OldRuns) < opts.Window-1; i++ {
		m, err := load(i)
		if err != nil {
			return err
		}
		o.OldRuns = append(o.OldRuns, m)
	}
	report := diff.Compare(oldM, newM, o)
	if opts.JSON {
		b, err := report.JSON()
		if err != nil {
			return err
		}
		if _, err := opts.Stdout.Write(b); err != nil {
			return err
		}
	} else if _, err := opts.Stdout.Write(report.Markdown()); err != nil {
		return err
	}
	if report.Regressed() {
		return &exitError{code: ExitRegressed, err: errors.New("regressed: see the report above")}
	}
	return nil
}

// shareCells: the two matrices hold a (model, target) in common.
func shareCells(a, b matrix.Matrix) bool {
	seen := map[[2]string]bool{}
	for _, c := range a.Cells {
		seen[[2]string{c.Model, c.Target}] = true
	}
	for _, c := range b.Cells {
		if seen[[2]string{c.Model, c.Target}] {
			return true
		}
	}
	return false
}
