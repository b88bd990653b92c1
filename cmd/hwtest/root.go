package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode"

	"github.com/spf13/cobra"

	"github.com/hwtest/hwtest/catalog"
	"github.com/hwtest/hwtest/generator"
	"github.com/hwtest/hwtest/history"
	"github.com/hwtest/hwtest/layout"
	"github.com/hwtest/hwtest/sources"
)

// Exit codes: scripts can tell "the suites are out of date" from "hwtest failed",
// and a run whose cells failed from one that could not run (ExitRegressed: diff.go;
// ExitInterrupted: run.go).
const (
	ExitOK        = 0
	ExitError     = 1
	ExitOutOfDate = 3
	// ExitCellsFailed: `hwtest run` finished, wrote the matrix and the history, and
	// some cell is error or mismatch (--allow-failures: 0).
	ExitCellsFailed = 5
)

// exitError carries an exit code through cobra's error return.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }

// Globals are the flags every verb shares.
type Globals struct {
	Root         string
	ModelsFile   string // models.yaml path (--models)
	HardwareFile string // hardware.yaml path (--hardware)
	OutDir       string // where another catalog's suites go (--out; see generator.NewOut)
	DB           string // history database (--db, $HWTEST_DB)
	Stdout       io.Writer
	Stderr       io.Writer
}

// Run is main without os.Exit, so tests drive the whole CLI.
func Run(args []string, stdout, stderr io.Writer) int {
	g := &Globals{Stdout: stdout, Stderr: stderr}
	root := newRootCmd(g)
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.Execute()
	if err == nil {
		return ExitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil && ee.code != ExitOutOfDate {
			fmt.Fprintln(stderr, "hwtest:", ee.err)
		}
		return ee.code
	}
	fmt.Fprintln(stderr, "hwtest:", err)
	return ExitError
}

func newRootCmd(g *Globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:           "hwtest",
		Short:         "Does this model run on that hardware, give the same answer, how fast, how big?",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	addGlobalFlags(cmd, g)
	cmd.AddCommand(newGenerateCmd(g, nil), newVerifyCmd(g, nil), newRunCmd(g, nil),
		newFetchCmd(g, nil), newModelsCmd(g, nil), newZooCmd(g, nil, nil),
		newDetectCmd(g, nil), newCheckCmd(g, nil), newExplainCmd(g, nil), newReportCmd(g, nil), newConformanceCmd(g, nil),
		newHistoryCmd(g, nil), newDiffCmd(g, nil), newQueryCmd(g, nil), newImportCmd(g, nil),
		newRecommendCmd(g, nil), newServeCmd(g), newWorkerCmd(g), newInspectCmd(g, nil), newAddCmd(g, nil))
	return cmd
}

func addGlobalFlags(cmd *cobra.Command, g *Globals) {
	cmd.PersistentFlags().StringVar(&g.Root, "root", "", "repository root (default: the nearest parent holding hardware.yaml and go.mod)")
	cmd.PersistentFlags().StringVar(&g.ModelsFile, "models", "", "models catalog (default ROOT/models.yaml)")
	cmd.PersistentFlags().StringVar(&g.HardwareFile, "hardware", "", "hardware catalog (default ROOT/hardware.yaml)")
	cmd.PersistentFlags().StringVar(&g.OutDir, "out", "", "folder for the suites of a catalog other than ROOT/models.yaml (default generated/ beside it; generated-NAME/ for ROOT/NAME.yaml)")
	cmd.PersistentFlags().StringVar(&g.DB, "db", "", "history database (default $"+history.EnvDB+", else ROOT/"+history.DefaultFile+"; for another --models catalog, one of its own: ROOT/.hwtest/history-DIR-NAME.duckdb)")
}

// resolveRoot fills Root, Models and Hardware from the flags and the working directory.
func (g *Globals) resolveRoot() error {
	if g.Root == "" {
		root, err := layout.Root()
		if err != nil {
			return err
		}
		g.Root = root
	}
	// Absolute, since suites run in their package folders and builds in the root.
	root, err := filepath.Abs(g.Root)
	if err != nil {
		return err
	}
	g.Root = root
	if g.ModelsFile == "" {
		g.ModelsFile = filepath.Join(g.Root, "models.yaml")
	}
	if g.HardwareFile == "" {
		g.HardwareFile = filepath.Join(g.Root, "hardware.yaml")
	}
	if g.DB == "" {
		g.DB = os.Getenv(history.EnvDB)
	}
	if g.DB == "" {
		g.DB = defaultHistory(g.Root, g.ModelsFile)
	}
	return nil
}

// defaultHistory is the history a catalog's runs go to without --db or $HWTEST_DB:
// ROOT/.hwtest/history.duckdb for the repository's models.yaml, and one of its own
// for any other catalog (.hwtest/history-mymodels-models.duckdb for
// mymodels/models.yaml). The history keys cells by model id, and reports show the
// latest cell of each (model, target): a catalog of one's own sharing the
// repository's history would replace its cells wherever the ids agree.
func defaultHistory(root, modelsFile string) string {
	repo := filepath.Join(root, history.DefaultFile)
	abs, err := filepath.Abs(modelsFile)
	if err != nil || abs == filepath.Join(root, "models.yaml") {
		return repo
	}
	name := abs
	if rel, err := filepath.Rel(root, abs); err == nil && !strings.HasPrefix(rel, "..") {
		name = rel
	}
	name = strings.TrimSuffix(name, filepath.Ext(name))
	name = strings.Trim(strings.Map(func(r rune) rune {
		if r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '.' || r == '_') {
			return r
		}
		return '-'
	}, name), "-")
	return filepath.Join(filepath.Dir(repo), "history-"+name+".duckdb")
}

// loadCatalogs resolves the root and loads both catalogs, naming files relative to
// the working directory in messages.
func (g *Globals) loadCatalogs() (*catalog.Catalogs, error) {
	if err := g.resolveRoot(); err != nil {
		return nil, err
	}
	c, err := catalog.Load(relToWD(g.ModelsFile), relToWD(g.HardwareFile))
	if err != nil {
		return nil, fmt.Errorf("invalid catalogs:\n%w", err)
	}
	// Generated suites carry each model's catalog folder: relative to the root, so
	// they read the same on every checkout ("" for the repository's own catalog).
	sources.RootRelative(c, g.Root)
	return c, nil
}

// suites is where the models catalog's suites are (generator.NewOut): generated/ for
// the repository's, a folder of its own for any other. Call after resolveRoot.
func (g *Globals) suites() (generator.Out, error) {
	return generator.NewOut(g.Root, g.ModelsFile, g.HardwareFile, g.OutDir)
}

// generateCommand is the command that refreshes out's suites, for messages.
func (g *Globals) generateCommand(out generator.Out) string {
	if out.IsRepo() {
		return "hwtest generate"
	}
	return fmt.Sprintf("hwtest --models %s --out %s generate", relToWD(g.ModelsFile), relToWD(filepath.Join(g.Root, filepath.FromSlash(out.Dir))))
}

func relToWD(p string) string {
	wd, err := os.Getwd()
	if err != nil {
		return p
	}
	if r, err := filepath.Rel(wd, p); err == nil && !filepath.IsAbs(r) && len(r) < len(p) {
		return r
	}
	return p
}
