package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/hwtest/hwtest/diagnose"
	"github.com/hwtest/hwtest/matrix"
	"github.com/hwtest/hwtest/result"
)

// ReportOptions is what `hwtest report` acts on.
type ReportOptions struct {
	*Globals
	Matrix string
	Errors bool
	JSON   bool
}

func newReportCmd(g *Globals, runF func(*ReportOptions) error) *cobra.Command {
	opts := &ReportOptions{Globals: g}
	cmd := &cobra.Command{
		Use:   "report",
		Short: "Print a run's matrix, or with --errors its problems by severity with what to do",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if runF != nil {
				return runF(opts)
			}
			return reportRun(opts)
		},
	}
	cmd.Flags().StringVar(&opts.Matrix, "matrix", "", "matrix.json to read (default ROOT/reports/latest/matrix.json)")
	cmd.Flags().BoolVar(&opts.Errors, "errors", false, "classify every cell that is not a pass: severity, kind, recommendation")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	return cmd
}

func reportRun(opts *ReportOptions) error {
	path := opts.Matrix
	if path == "" {
		if err := opts.resolveRoot(); err != nil {
			return err
		}
		path = latestMatrix(opts.Globals)
	}
	m, err := readMatrixFile(path)
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
