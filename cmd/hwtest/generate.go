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
			"file is written.\n\n" +
			"Another catalog (--models my/models.yaml) generates into a folder of its own,\n" +
			"never generated/: --out, by default generated/ beside the catalog\n" +
			"(generated-NAME/ for NAME.yaml in the repository root). The folder gets a\n" +
			"generate.go, so go generate ./... refreshes it too.",
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

// generateAll renders the catalogs' suites into their folder (see suites): for the
// repository's models.yaml, everything under generated/, the conformance suites
// from ONNX's own test cases (which `make setup` installs) included. Both, always:
// writing one without the other would remove the other's files as stale. Without
// the test cases (a machine that only runs models: a worker without apt) the
// conformance files on disk are kept as they are, and a warning says so. Another
// catalog gets its models' suites only, in a folder of its own.
//
// The catalog is checked against its model files first (checkModels), so every
// command that regenerates (generate, verify, run, worker) refuses the same entries.
func (g *Globals) generateAll(c *catalog.Catalogs) (map[string][]byte, generator.Out, error) {
	out, err := g.suites()
	if err != nil {
		return nil, out, err
	}
	if err := g.checkModels(c); err != nil {
		return nil, out, err
	}
	if !out.IsRepo() {
		files, err := generator.GenerateIn(c, out)
		return files, out, err
	}
	dir, err := conformance.DataDir(g.Root)
	if err != nil {
		files, err2 := generator.GenerateIn(c, out)
		if err2 != nil {
			return nil, out, err2
		}
		kept, err2 := generator.ReadGenerated(g.Root, generator.ConformanceDir)
		if err2 != nil {
			return nil, out, err2
		}
		fmt.Fprintf(g.Stderr, "warning: %s/ kept as it is (%d files): %v\n", generator.ConformanceDir, len(kept), err)
		for p, data := range kept {
			files[p] = data
		}
		return files, out, nil
	}
	cases, err := conformance.Load(dir)
	if err != nil {
		return nil, out, fmt.Errorf("reading ONNX's test cases in %s: %w", dir, err)
	}
	files, err := generator.GenerateAll(c, cases)
	return files, out, err
}

// writeSuites brings the catalogs' suites on disk up to date.
func (g *Globals) writeSuites(c *catalog.Catalogs) (generator.Out, error) {
	files, out, err := g.generateAll(c)
	if err != nil {
		return out, err
	}
	_, err = generator.WriteIn(g.Root, out, files, g.Stderr)
	return out, err
}

func generateRun(opts *GenerateOptions) error {
	c, err := opts.loadCatalogs()
	if err != nil {
		return err
	}
	files, out, err := opts.generateAll(c)
	if err != nil {
		return err
	}
	var changes []generator.Change
	if opts.DryRun {
		changes, err = generator.CompareIn(opts.Root, out, files, opts.Stderr)
	} else {
		changes, err = generator.WriteIn(opts.Root, out, files, opts.Stderr)
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
	fmt.Fprintf(opts.Stdout, "%d files generated in %s/ for %d models × %d targets; %d changed\n", len(files), out.Dir, len(c.Models), len(c.Targets), len(changes))
	return nil
}
