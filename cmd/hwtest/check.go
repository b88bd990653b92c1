package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/hwtest/hwtest/diagnose"
	"github.com/hwtest/hwtest/onnx"
	"github.com/hwtest/hwtest/runtime"
	"github.com/hwtest/hwtest/spec"
	"github.com/hwtest/hwtest/zoo"
)

// CheckOptions is what `hwtest check` acts on.
type CheckOptions struct {
	*Globals
	Model     string // catalog id, zoo:NAME or .onnx path
	Providers []string
	JSON      bool
}

func newCheckCmd(g *Globals, runF func(*CheckOptions) error) *cobra.Command {
	opts := &CheckOptions{Globals: g}
	cmd := &cobra.Command{
		Use:   "check MODEL",
		Short: "Predict which targets can run every operator of a model, before running it",
		Long: "MODEL is a catalog id, a zoo:NAME or a path to an .onnx file. The model's\n" +
			"operators are read from the file and compared with each execution provider's\n" +
			"documented operator support; the prediction is then set against what the latest\n" +
			"run (reports/latest/matrix.json) saw, when it has the model.",
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			opts.Model = args[0]
			if runF != nil {
				return runF(opts)
			}
			return checkRun(opts)
		},
	}
	cmd.Flags().StringSliceVar(&opts.Providers, "provider", nil, "predict for these EP names instead of hardware.yaml's targets (repeatable)")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	return cmd
}

// checkResult is one target's prediction, next to what the last run saw there.
type checkResult struct {
	Target string `json:"target"`
	diagnose.Prediction
	Observed string `json:"observed,omitempty"` // the cell's status in reports/latest; "" when not run
}

func checkRun(opts *CheckOptions) error {
	model := opts.Model
	data, id, err := checkModelBytes(opts, model)
	if err != nil {
		return err
	}
	s, err := onnx.Inspect(data)
	if err != nil {
		return fmt.Errorf("%s: %w", model, err)
	}
	var results []checkResult
	if len(opts.Providers) > 0 {
		for _, p := range opts.Providers {
			results = append(results, checkResult{Prediction: diagnose.Predict(s.Ops, p)})
		}
	} else {
		// One row per hardware.yaml target, predicted from the EP it runs nodes on.
		c, err := opts.loadCatalogs()
		if err != nil {
			return err
		}
		observed := latestStatuses(opts.Globals, id)
		for _, t := range c.Targets {
			ep := spec.TargetOf(t).EP()
			results = append(results, checkResult{Target: t.ID, Prediction: diagnose.Predict(s.Ops, ep), Observed: observed[t.ID]})
		}
	}
	if opts.JSON {
		e := json.NewEncoder(opts.Stdout)
		e.SetIndent("", "  ")
		return e.Encode(results)
	}
	fmt.Fprintf(opts.Stdout, "%s: %d operator types, %d nodes\n", model, len(s.Ops), sumOps(s.Ops))
	tw := tabwriter.NewWriter(opts.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TARGET\tPREDICTION\tLAST RUN")
	for _, r := range results {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", dash(r.Target), r.Prediction, dash(r.Observed))
	}
	return tw.Flush()
}

// checkModelBytes reads the model a user named: catalog id, zoo:NAME or a file.
func checkModelBytes(opts *CheckOptions, model string) (data []byte, id string, err error) {
	if name, ok := strings.CutPrefix(model, "zoo:"); ok {
		data, _, err = zoo.Build(name)
		return data, "", err
	}
	if _, statErr := os.Stat(model); statErr == nil {
		data, err = os.ReadFile(model)
		return data, "", err
	}
	c, err := opts.loadCatalogs()
	if err != nil {
		return nil, "", err
	}
	m, ok := c.Model(model)
	if !ok {
		return nil, "", fmt.Errorf("%q is neither a file, a zoo:NAME nor a model in %s", model, relToWD(opts.ModelsFile))
	}
	rm, err := runtime.ResolveIn(opts.Root, spec.ModelOf(m))
	if err != nil {
		return nil, "", err
	}
	data, err = os.ReadFile(rm.Path)
	return data, m.ID, err
}

// latestStatuses maps each target id to the status the model's latest result there
// has (the history's current matrix).
func latestStatuses(g *Globals, model string) map[string]string {
	out := map[string]string{}
	if model == "" || g.resolveRoot() != nil {
		return out
	}
	quiet := *g
	quiet.Stderr = io.Discard
	m, err := currentMatrix(context.Background(), &quiet)
	if err != nil {
		return out
	}
	for _, cell := range m.Cells {
		if cell.Model == model {
			out[cell.Target] = string(cell.Status)
		}
	}
	return out
}

func sumOps(ops map[string]int) int {
	n := 0
	for _, c := range ops {
		n += c
	}
	return n
}
