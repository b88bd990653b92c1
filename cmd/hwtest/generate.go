package main

import (
	"fmt"

	"github.com/hwtest/hwtest/catalog"
	"github.com/hwtest/hwtest/conformance"
	"github.com/hwtest/hwtest/modelcheck"

	"github.com/spf13/cobra"

	"github.com/hwtest/hwtest/generator"
)

// GenerateOptions is what `hwtest generate` acts on.
type GenerateOptions struct {
	*Globals
	DryRun bool
}

func newGenerateCmd(g *Globals, runF func(*GenerateOptions) error) *cobra.Command {
	opts := &GenerateOptions{Globals: g}
	cmd := &cobra.Command{
		Use:   "generate",
		Short: "Write generated/<family>/ suites from models.yaml and hardware.yaml",
		Long: "Regenerates every suite under generated/: writes new and changed files, removes\n" +
			"stale ones, leaves unchanged files untouched. All or nothing: on any error no\n" +
			"file is written.",
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if runF != nil {
				return runF(opts)
			}
			return generateRun(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "list what would change without writing")
	return cmd
}

// checkModels checks the catalog against the model files on this machine (package
// modelcheck) before any suite is written: a name the model lacks or a dim left
// open fails here, at its line in models.yaml, not later inside a suite. A model
// whose file is not here is listed on stderr, not an error.
func (g *Globals) checkModels(c *catalog.Catalogs) error {
	res, err := modelcheck.Check(c, g.Root)
	for _, line := range res.NotChecked {
		fmt.Fprintln(g.Stderr, line)
	}
	if err != nil {
		return fmt.Errorf("%s does not fit its model files:\n%w", c.ModelsFile, err)
	}
	return nil
}

// generateAll renders everything under generated/: the catalogs' suites and the
// conformance suites from ONNX's own test cases (which `make setup` installs). Both,
// always: writing one without the other would remove the other's files as stale.
// Without the test cases (a machine that only runs models: a worker without apt)
// the conformance files on disk are kept as they are, and a warning says so.
//
// The catalog is checked against its model files first (checkModels), so every
// command that regenerates (generate, verify, run, worker) refuses the same entries.
func (g *Globals) generateAll(c *catalog.Catalogs) (map[string][]byte, error) {
	if err := g.checkModels(c); err != nil {
		return nil, err
	}
	dir, err := conformance.DataDir(g.Root)
	if err != nil {
		files, err2 := generator.Generate(c)
		if err2 != nil {
			return nil, err2
		}
		kept, err2 := generator.ReadGenerated(g.Root, generator.ConformanceDir)
		if err2 != nil {
			return nil, err2
		}
		fmt.Fprintf(g.Stderr, "warning: %s/ kept as it is (%d files): %v\n", generator.ConformanceDir, len(kept), err)
		for p, data := range kept {
			files[p] = data
		}
		return files, nil
	}
	cases, err := conformance.Load(dir)
	if err != nil {
		return nil, fmt.Errorf("reading ONNX's test cases in %s: %w", dir, err)
	}
	return generator.GenerateAll(c, cases)
}

func generateRun(opts *GenerateOptions) error {
	c, err := opts.loadCatalogs()
	if err != nil {
		return err
	}
	files, err := opts.generateAll(c)
	if err != nil {
		return err
	}
	var changes []generator.Change
	if opts.DryRun {
		changes, err = generator.Compare(opts.Root, files, opts.Stderr)
	} else {
		changes, err = generator.Write(opts.Root, files, opts.Stderr)
	}
	if err != nil {
		return err
	}
	for _, ch := range changes {
		verb := map[string]string{"missing": "created", "changed": "updated", "stale": "removed"}[ch.Kind]
		if opts.DryRun {
			verb = "would be " + verb
		}
		fmt.Fprintf(opts.Stdout, "%s %s\n", verb, ch.Path)
	}
	fmt.Fprintf(opts.Stdout, "%d files generated for %d models × %d targets; %d changed\n", len(files), len(c.Models), len(c.Targets), len(changes))
	return nil
}
