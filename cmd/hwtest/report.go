package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/hwtest/hwtest/diagnose"
	"github.com/hwtest/hwtest/history"
	"github.com/hwtest/hwtest/matrix"
	"github.com/hwtest/hwtest/result"
)

// ReportOptions is what `hwtest report` acts on.
type ReportOptions struct {
	*Globals
	Matrix string
	RunID  string
	Errors bool
	JSON   bool
}

func newReportCmd(g *Globals, runF func(*ReportOptions) error) *cobra.Command {
	opts := &ReportOptions{Globals: g}
	cmd := &cobra.Command{
		Use:   "report",
		Short: "Print the current matrix (each cell's latest result across runs), or with --errors its problems by severity with what to do",
		Long: "Reads the history (--db): the latest result of every (model, target) across\n" +
			"runs, each cell naming the run it came from. --run ID shows one stored run,\n" +
			"--matrix FILE one matrix.json. Without a history, reports/latest is read.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opts.Matrix != "" && opts.RunID != "" {
				return errors.New("--matrix and --run: choose one")
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
	return cmd
}

func reportRun(ctx context.Context, opts *ReportOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	m, err := reportMatrix(ctx, opts)
	if err != nil {
		return err
	}
	if !opts.Errors {
		if opts.JSON {
			b, err := m.JSON()
			if err != nil {
				return err
			}
			_, err = opts.Stdout.Write(b)
			return err
		}
		_, err = opts.Stdout.Write(m.Markdown())
		return err
	}
	var findings []diagnose.Finding
	for _, c := range m.Cells {
		if c.Status == result.StatusPass && c.Reason == "" {
			continue
		}
		f := diagnose.ClassifyCause(string(c.Status), c.Cause, c.Target, c.Reason)
		f.Model = c.Model
		findings = append(findings, f)
	}
	md, js := diagnose.Report(findings)
	if opts.JSON {
		_, err = opts.Stdout.Write(js)
	} else {
		_, err = opts.Stdout.Write(md)
	}
	return err
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
