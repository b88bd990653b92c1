package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hwtest/hwtest/layout"
	"github.com/hwtest/hwtest/runtime"
	"github.com/hwtest/hwtest/shapes"
	"github.com/hwtest/hwtest/spec"
	"github.com/hwtest/hwtest/zoo"
)

// ExplainOptions is what `hwtest explain` acts on.
type ExplainOptions struct {
	*Globals
	Model  string // catalog id or zoo:NAME
	Target string // hardware.yaml target id
	JSON   bool
}

func newExplainCmd(g *Globals, runF func(*ExplainOptions) error) *cobra.Command {
	opts := &ExplainOptions{Globals: g}
	cmd := &cobra.Command{
		Use:   "explain MODEL TARGET",
		Short: "Trace a model's mismatch on a target to the first node whose output diverges from the CPU reference",
		Long: "MODEL is a catalog id or a zoo:NAME. Every intermediate value of the model's\n" +
			"top-level graph is made a graph output (If nodes are first replaced by the branch\n" +
			"the CPU reference takes), the model runs on the CPU reference and on TARGET with\n" +
			"the inputs its cell uses, and the values are compared in topological order with\n" +
			"the cell's tolerance. The first node whose output diverges while its inputs agree\n" +
			"is named. Exposing values can change the target's fusions and placement; the\n" +
			"output says so when the exposed run no longer diverges like the model as it is.",
		Args: cobra.ExactArgs(2),
		RunE: func(_ *cobra.Command, args []string) error {
			opts.Model, opts.Target = args[0], args[1]
			if runF != nil {
				return runF(opts)
			}
			return explainRun(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	return cmd
}

func explainRun(opts *ExplainOptions) error {
	c, err := opts.loadCatalogs()
	if err != nil {
		return err
	}
	ct, ok := c.Target(opts.Target)
	if !ok {
		var ids []string
		for _, t := range c.Targets {
			ids = append(ids, t.ID)
		}
		return fmt.Errorf("%q is not a target in %s (targets: %s)", opts.Target, relToWD(opts.HardwareFile), strings.Join(ids, ", "))
	}
	t := spec.TargetOf(ct)
	// runtime finds .hwtest (ONNX Runtime, Chromium, the models) under the root: this
	// one, not the working directory's.
	if os.Getenv(layout.RootEnv) == "" {
		os.Setenv(layout.RootEnv, opts.Root)
	}
	defer runtime.Shutdown()
	var e *runtime.Explanation
	if name, ok := strings.CutPrefix(opts.Model, "zoo:"); ok {
		e, err = explainZoo(name, t)
	} else {
		cm, ok := c.Model(opts.Model)
		if !ok {
			return fmt.Errorf("%q is neither a zoo:NAME nor a model in %s", opts.Model, relToWD(opts.ModelsFile))
		}
		e, err = runtime.Explain(spec.ModelOf(cm), t)
	}
	if err != nil {
		return fmt.Errorf("explain %s on %s: %w", opts.Model, opts.Target, err)
	}
	if opts.JSON {
		enc := json.NewEncoder(opts.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(e)
	}
	_, err = fmt.Fprint(opts.Stdout, e.String())
	return err
}

// explainZoo explains a zoo model built now. Its integer inputs take values below
// the bounds the zoo declares (token ids below the vocabulary size); a 0/1 input (a
// mask) is all ones, as a real batch without padding has it.
func explainZoo(name string, t runtime.Target) (*runtime.Explanation, error) {
	data, info, err := zoo.Build(name)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "hwtest-zoo-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, name+".onnx")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return nil, err
	}
	m := runtime.Model{ID: "zoo:" + name, Family: info.Family, Inputs: map[string]runtime.Input{}}
	// No catalog binds its dims: every open one gets the size shapes.Suggest
	// names (batch 1, else 8), as a catalog entry written for it would.
	ports := make([]shapes.Input, len(info.Inputs))
	for i, p := range info.Inputs {
		ports[i] = shapes.FromONNX(p.Name, p.Dims)
	}
	dims := shapes.Suggest(ports)
	for _, p := range info.Inputs {
		in := runtime.Input{Dims: dims[p.Name]}
		switch {
		case p.Max == 2:
			in.Value = []float64{1}
		case p.Max > 2:
			in.Range = []float64{1, float64(p.Max)}
		}
		if in.Dims != nil || in.Value != nil || in.Range != nil {
			m.Inputs[p.Name] = in
		}
	}
	return runtime.ExplainFiles(m, path, path, t)
}

// explainCell runs `hwtest explain MODEL TARGET --json` in a child process for a
// mismatch cell of `hwtest run` (a native crash there must not end the run), bounded
// by the run's per-model timeout, and returns its line, or why there is none.
func (opts *RunOptions) explainCell(ctx context.Context, model, target string) string {
	self, err := os.Executable()
	if err != nil {
		return "not traced: " + err.Error()
	}
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, self, "explain", model, target, "--json",
		"--root", opts.Root, "--models", opts.ModelsFile, "--hardware", opts.HardwareFile)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	if err != nil {
		why := strings.TrimSpace(stderr.String())
		if len(why) > 400 {
			why = "…" + why[len(why)-400:]
		}
		if ctx.Err() != nil {
			why = fmt.Sprintf("timed out after %v", opts.Timeout)
		}
		return fmt.Sprintf("not traced: hwtest explain failed (%v): %s", err, why)
	}
	var e runtime.Explanation
	if err := json.Unmarshal(stdout.Bytes(), &e); err != nil {
		return "not traced: hwtest explain's output is not its JSON: " + err.Error()
	}
	return e.Line
}
