package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/hwtest/hwtest/catalog"
	"github.com/hwtest/hwtest/generator"
	"github.com/hwtest/hwtest/runner"
)

// RunOptions is what `hwtest run` acts on.
type RunOptions struct {
	*Globals
	Targets    []string
	Models     []string
	Timeout    time.Duration
	ReportsDir string
	NoGenerate bool
}

func newRunCmd(g *Globals, runF func(*RunOptions) error) *cobra.Command {
	opts := &RunOptions{Globals: g}
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run every model on every target here and write the compatibility matrix",
		Long: "Regenerates the suites, builds each family's package once, runs each model's\n" +
			"specs in a process of its own (a crash or hang is that model's error, the others\n" +
			"still run) and writes reports/<time>/matrix.md and matrix.json, and reports/latest.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(opts)
			}
			return runRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringSliceVar(&opts.Targets, "target", nil, "only these targets (repeatable); default all")
	cmd.Flags().StringSliceVar(&opts.Models, "model", nil, "only these models (repeatable); default all")
	cmd.Flags().DurationVar(&opts.Timeout, "timeout", 10*time.Minute, "per-model process timeout")
	cmd.Flags().StringVar(&opts.ReportsDir, "reports", "", "reports folder (default ROOT/reports)")
	cmd.Flags().BoolVar(&opts.NoGenerate, "no-generate", false, "run generated/ as it is, without regenerating")
	return cmd
}

func runRun(ctx context.Context, opts *RunOptions) error {
	if ctx == nil {
		ctx = context.Background()
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
	for _, id := range opts.Models {
		if !slices.Contains(modelIDs, id) {
			return fmt.Errorf("--model %q is not in %s%s", id, relToWD(opts.Globals.Models), catalog.DidYouMean(id, modelIDs))
		}
	}
	var labels []string
	for _, id := range opts.Targets {
		if !slices.Contains(targetIDs, id) {
			return fmt.Errorf("--target %q is not in %s%s", id, relToWD(opts.Hardware), catalog.DidYouMean(id, targetIDs))
		}
		labels = append(labels, "hw:"+id)
	}
	if !opts.NoGenerate {
		files, err := generator.Generate(c)
		if err != nil {
			return err
		}
		if _, err := generator.Write(opts.Root, files, opts.Stderr); err != nil {
			return err
		}
	}
	reports := opts.ReportsDir
	if reports == "" {
		reports = filepath.Join(opts.Root, "reports")
	}
	stamp := time.Now().UTC().Format("20060102T150405Z")
	out := filepath.Join(reports, stamp)
	res, err := runner.Run(ctx, runner.Options{
		Root: opts.Root, Catalogs: c, OutDir: out, Timeout: opts.Timeout,
		LabelFilter: strings.Join(labels, " || "), Models: opts.Models, Targets: opts.Targets,
		Env: []string{"HWTEST_CATALOG_COMMIT=" + catalogCommit(opts.Root), "HWTEST_CODE_COMMIT=" + codeCommit(opts.Root)},
		Log: opts.Stderr,
	})
	if err != nil {
		return err
	}
	latest := filepath.Join(reports, "latest")
	os.Remove(latest)
	if err := os.Symlink(stamp, latest); err != nil {
		return err
	}
	fmt.Fprintf(opts.Stdout, "%s\n", res.Matrix.SummaryLine())
	fmt.Fprintf(opts.Stdout, "matrix: %s\n        %s\n", relToWD(filepath.Join(out, "matrix.md")), relToWD(filepath.Join(out, "matrix.json")))
	return nil
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

// catalogCommit is the last commit that touched the catalogs, for provenance; ""
// outside a git checkout. A "+dirty" suffix says the catalogs differ from it.
func catalogCommit(root string) string {
	out, err := exec.Command("git", "-C", root, "log", "-1", "--format=%H", "--", "models.yaml", "hardware.yaml").Output()
	if err != nil {
		return ""
	}
	commit := strings.TrimSpace(string(out))
	if err := exec.Command("git", "-C", root, "diff", "--quiet", "HEAD", "--", "models.yaml", "hardware.yaml").Run(); err != nil && commit != "" {
		commit += "+dirty"
	}
	return commit
}
