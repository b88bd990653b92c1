package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/hwtest/hwtest/catalog"
	"github.com/hwtest/hwtest/conformance"
	"github.com/hwtest/hwtest/generator"
	"github.com/hwtest/hwtest/history"
	"github.com/hwtest/hwtest/result"
	"github.com/hwtest/hwtest/runner"
	"github.com/hwtest/hwtest/runtime"
)

// ConformanceOptions is what `hwtest conformance` acts on.
type ConformanceOptions struct {
	*Globals
	TargetIDs   []string
	Ops         []string
	Timeout     time.Duration
	CaseTimeout time.Duration
	ReportsDir  string
	NoGenerate  bool
	NoStore     bool
}

func newConformanceCmd(g *Globals, runF func(*ConformanceOptions) error) *cobra.Command {
	opts := &ConformanceOptions{Globals: g}
	cmd := &cobra.Command{
		Use:   "conformance",
		Short: "Run ONNX's own test cases on every target here and store the operator × target scoreboard",
		Long: "Runs the conformance suites (generated/conformance/: libonnx-testdata " + conformance.Version + "'s node\n" +
			"cases, one spec per case) on each target in a process of its own, compares every\n" +
			"output with the one the ONNX project wrote (" + conformance.ToleranceText + "),\n" +
			"and stores each case's result in the history: pass, mismatch (worst element),\n" +
			"not-supported (the runtime's exact error), error (hwtest's own failure or a\n" +
			"crash), skipped (a case hwtest cannot feed, with why) or unavailable (the probe's\n" +
			"reason). Browser targets run an operator's cases batched in one page.\n" +
			"`hwtest report --ops` shows the scoreboard; `hwtest check` uses it.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opts.Timeout <= 0 {
				return fmt.Errorf("--timeout %v: want a positive duration such as 10m", opts.Timeout)
			}
			if opts.CaseTimeout <= 0 {
				return fmt.Errorf("--case-timeout %v: want a positive duration such as 10s", opts.CaseTimeout)
			}
			if runF != nil {
				return runF(opts)
			}
			return conformanceRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringSliceVar(&opts.TargetIDs, "target", nil, "only these targets (repeatable); default all")
	cmd.Flags().StringSliceVar(&opts.Ops, "op", nil, "only these operators' cases (repeatable), e.g. --op Add; default all")
	cmd.Flags().DurationVar(&opts.Timeout, "timeout", 10*time.Minute, "per-target process timeout")
	cmd.Flags().DurationVar(&opts.CaseTimeout, "case-timeout", runtime.CaseTimeout, "per-case limit on a case's run, and on a browser target its session creation too (each case is one node on a few elements; --timeout bounds a target's whole process)")
	cmd.Flags().StringVar(&opts.ReportsDir, "reports", "", "reports folder (default ROOT/reports)")
	cmd.Flags().BoolVar(&opts.NoGenerate, "no-generate", false, "run generated/ as it is, without regenerating")
	cmd.Flags().BoolVar(&opts.NoStore, "no-store", false, "print the results without storing them in the history")
	return cmd
}

func conformanceRun(ctx context.Context, opts *ConformanceOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	c, err := opts.loadCatalogs()
	if err != nil {
		return err
	}
	targets, err := selectTargets(c, opts.TargetIDs, opts.HardwareFile)
	if err != nil {
		return err
	}
	dir, err := conformance.DataDir(opts.Root)
	if err != nil {
		return err
	}
	all, err := conformance.Load(dir)
	if err != nil {
		return fmt.Errorf("reading ONNX's test cases in %s: %w", dir, err)
	}
	cases, err := casesOf(all, opts.Ops)
	if err != nil {
		return err
	}
	if out, err := opts.suites(); err != nil {
		return err
	} else if !out.IsRepo() {
		return fmt.Errorf("conformance runs ONNX's test cases from the repository's suites (%s/); --models %s and --out do not apply to it", generator.ConformanceDir, relToWD(opts.ModelsFile))
	}
	if !opts.NoGenerate {
		if _, err := opts.writeSuites(c); err != nil {
			return err
		}
	}
	reports := opts.ReportsDir
	if reports == "" {
		reports = filepath.Join(opts.Root, "reports")
	}
	id, out, err := runner.NewRunDir(reports)
	if err != nil {
		return err
	}
	fmt.Fprintf(opts.Stderr, "conformance run %s: %d cases of %d operators on %d targets\n", id, len(cases), len(conformance.ByOp(cases)), len(targets))
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		stop() // a second signal kills hwtest outright
	}()
	began := time.Now()
	res, err := runner.RunConformance(ctx, runner.ConformanceOptions{
		Root: opts.Root, RunID: id, OutDir: out, Targets: targets, Cases: cases, Timeout: opts.Timeout, CaseTimeout: opts.CaseTimeout, Log: opts.Stderr,
		Progress: func(target string, got []result.OpCaseReport, took time.Duration) {
			b := conformance.Summarise(got, nil)
			fmt.Fprintf(opts.Stderr, "%-14s %s (%.1f s)\n", target, countsLine(b.ByTarget[target]), took.Seconds())
		},
	})
	if err != nil {
		return err
	}
	data, err := json.MarshalIndent(res.Cases, "", "  ")
	if err != nil {
		return err
	}
	file := filepath.Join(out, "conformance.json")
	if err := os.WriteFile(file, append(data, '\n'), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(opts.Stdout, "conformance: %d results in %.1f s → %s\n", len(res.Cases), time.Since(began).Seconds(), relToWD(file))
	var stored error
	if !opts.NoStore {
		stored = storeConformance(opts.Globals, id, targets, res)
		if stored == nil {
			fmt.Fprintf(opts.Stdout, "stored in %s: `hwtest report --ops` shows the scoreboard\n", relToWD(opts.DB))
		}
	}
	if res.Interrupted {
		return &exitError{code: ExitInterrupted, err: errors.Join(fmt.Errorf("conformance run %s interrupted: what finished is kept", id), stored)}
	}
	return stored
}

// countsLine is a target's cases in one line: "932 cases: 849 pass, 21 mismatch, …".
func countsLine(n conformance.Counts) string {
	s := fmt.Sprintf("%d cases: %d pass, %d mismatch, %d not supported", n.Total(), n.Pass, n.Mismatch, n.NotSupported)
	for _, x := range []struct {
		n    int
		name string
	}{{n.Error, "error"}, {n.Skipped, "skipped"}, {n.Unavailable, "unavailable"}} {
		if x.n > 0 {
			s += fmt.Sprintf(", %d %s", x.n, x.name)
		}
	}
	return s
}

func storeConformance(g *Globals, id string, targets []catalog.Target, res *runner.ConformanceResult) error {
	db, err := g.openHistory(context.Background(), history.ReadWrite)
	if err != nil {
		return err
	}
	defer db.Close()
	host, _ := os.Hostname()
	lib, _ := runtime.Init() // the native library's version; "" when it does not load
	var ids []string
	for _, t := range targets {
		ids = append(ids, t.ID)
	}
	return db.StoreConformance(context.Background(), history.ConformanceRun{
		RunID: id, Finished: time.Now(), Host: host, ORTVersion: lib.Version, DataVersion: conformance.Version, Tolerance: conformance.ToleranceText,
		Targets: ids, Interrupted: res.Interrupted, Cases: res.Cases,
	})
}

// selectTargets is hardware.yaml's targets, or the ones asked for, in its order.
func selectTargets(c *catalog.Catalogs, ids []string, file string) ([]catalog.Target, error) {
	var all []string
	for _, t := range c.Targets {
		all = append(all, t.ID)
	}
	for _, id := range ids {
		if !slices.Contains(all, id) {
			return nil, fmt.Errorf("--target %q is not in %s%s", id, relToWD(file), catalog.DidYouMean(id, all))
		}
	}
	var out []catalog.Target
	for _, t := range c.Targets {
		if len(ids) == 0 || slices.Contains(ids, t.ID) {
			out = append(out, t)
		}
	}
	return out, nil
}

// casesOf is the cases of the operators asked for (by name, as the op: labels
// spell them), or all of them.
func casesOf(all []conformance.Case, ops []string) ([]conformance.Case, error) {
	if len(ops) == 0 {
		return all, nil
	}
	var names []string
	for _, c := range all {
		if !slices.Contains(names, c.Op) {
			names = append(names, c.Op)
		}
	}
	for _, op := range ops {
		if !slices.Contains(names, op) {
			return nil, fmt.Errorf("--op %q: ONNX's test cases have no operator of that name%s", op, catalog.DidYouMean(op, names))
		}
	}
	var out []conformance.Case
	for _, c := range all {
		if slices.Contains(ops, c.Op) {
			out = append(out, c)
		}
	}
	return out, nil
}
