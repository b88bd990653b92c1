package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/hwtest/hwtest/generator"
)

// VerifyOptions is what `hwtest verify` acts on.
type VerifyOptions struct {
	*Globals
	Quiet bool
}

func newVerifyCmd(g *Globals, runF func(*VerifyOptions) error) *cobra.Command {
	opts := &VerifyOptions{Globals: g}
	cmd := &cobra.Command{
		Use:   "verify",
		Short: "Check generated/ is up to date and every family × target pair has a template",
		Long: "Regenerates in memory and compares with generated/: missing, changed and stale\n" +
			"files are listed with unified diffs. Then prints the coverage grid of every\n" +
			"pipeline family × every target. Exit 0: up to date and complete; 3: out of date\n" +
			"or a pair has no template; 1: error.",
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if runF != nil {
				return runF(opts)
			}
			return verifyRun(opts)
		},
	}
	cmd.Flags().BoolVarP(&opts.Quiet, "quiet", "q", false, "omit diffs and the grid; list changed paths only")
	return cmd
}

func verifyRun(opts *VerifyOptions) error {
	c, err := opts.loadCatalogs()
	if err != nil {
		return err
	}
	files, out, err := opts.generateAll(c)
	if err != nil {
		return err
	}
	changes, err := generator.CompareIn(opts.Root, out, files, opts.Stderr)
	if err != nil {
		return err
	}
	for _, ch := range changes {
		fmt.Fprintf(opts.Stdout, "%s: %s\n", ch.Kind, ch.Path)
		if !opts.Quiet {
			fmt.Fprint(opts.Stdout, ch.Diff)
		}
	}
	cov := generator.CoverageOf(c)
	if !opts.Quiet {
		fmt.Fprintln(opts.Stdout, "coverage (family × target):")
		if err := cov.Print(opts.Stdout); err != nil {
			return err
		}
	}
	switch {
	case len(changes) > 0:
		fmt.Fprintf(opts.Stdout, "%s/ is out of date: %d files differ; run `%s` (or `go generate ./...`)\n", out.Dir, len(changes), opts.generateCommand(out))
		return &exitError{code: ExitOutOfDate}
	case len(cov.Missing) > 0:
		fmt.Fprintf(opts.Stdout, "%d family × target pairs have no template\n", len(cov.Missing))
		return &exitError{code: ExitOutOfDate}
	}
	fmt.Fprintf(opts.Stdout, "%s/ is up to date: %d files, %d models × %d targets\n", out.Dir, len(files), len(c.Models), len(c.Targets))
	return nil
}
