package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/hwtest/hwtest/onnx"
	"github.com/hwtest/hwtest/result"
	"github.com/hwtest/hwtest/runtime"
)

// InspectOptions is what `hwtest inspect` acts on.
type InspectOptions struct {
	*Globals
	File string
	JSON bool
}

func newInspectCmd(g *Globals, runF func(*InspectOptions) error) *cobra.Command {
	opts := &InspectOptions{Globals: g}
	cmd := &cobra.Command{
		Use:   "inspect FILE.onnx",
		Short: "Show a model file before cataloguing it: inputs, outputs, operators, weights, the family it looks like",
		Long: "Reads an ONNX file without running it and prints what a catalog entry needs:\n" +
			"inputs and outputs (names, element types, shapes with their symbolic dims, ? for\n" +
			"an anonymous one), IR version and opsets, operators with counts, parameters and\n" +
			"weight bytes (stored as initializers, and made in the graph by Constant and\n" +
			"ConstantOfShape nodes), an estimate of the memory it needs, and the pipeline\n" +
			"family it looks like with the evidence.\n\n" +
			"  hwtest inspect my-model.onnx\n" +
			"  hwtest inspect my-model.onnx --json | jq .family\n\n" +
			"Then `hwtest add my-model.onnx` writes its catalog entry.",
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			opts.File = args[0]
			if runF != nil {
				return runF(opts)
			}
			return inspectRun(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON, for scripts")
	return cmd
}

// inspectReport is `hwtest inspect --json`.
type inspectReport struct {
	File      string           `json:"file"`
	FileBytes int64            `json:"file_bytes"`
	IRVersion int64            `json:"ir_version"`
	Opsets    []inspectOpset   `json:"opsets"`
	Inputs    []inspectValue   `json:"inputs"`
	Outputs   []inspectValue   `json:"outputs"`
	Operators map[string]int   `json:"operators"` // "Op" or "domain:Op" → nodes, subgraphs included
	Nodes     int              `json:"nodes"`
	Weights   inspectWeights   `json:"weights"`
	Size      result.ModelSize `json:"size"` // what runs report: params, weight bytes, tier, memory estimate
	Family    onnx.Guess       `json:"family"`
}

type inspectOpset struct {
	Domain  string `json:"domain"` // "" is ai.onnx
	Version int64  `json:"version"`
}

type inspectValue struct {
	Name string `json:"name"`
	Type string `json:"type"`
	// Shape holds each dim: a number, or its symbolic name, "?" for an anonymous one;
	// null when the rank is unknown.
	Shape []any  `json:"shape"`
	Kind  string `json:"kind,omitempty"`    // sequence, map, ... for a value that is not a tensor
	Made  string `json:"made_by,omitempty"` // outputs: the operator computing it, e.g. "Softmax (axis -1)"
}

type inspectWeights struct {
	Params   int64        `json:"params"`
	Bytes    int64        `json:"bytes"`
	Stored   onnx.Weights `json:"initializers"`
	InGraph  onnx.Weights `json:"in_graph"` // Constant nodes' tensors, ConstantOfShape over constant shapes
	External bool         `json:"external_data"`
}

func inspectRun(opts *InspectOptions) error {
	info, err := os.Stat(opts.File)
	if err != nil {
		return err
	}
	s, err := onnx.InspectFile(opts.File)
	if err != nil {
		return err
	}
	r := inspectReport{
		File: opts.File, FileBytes: info.Size(), IRVersion: s.IRVersion, Operators: s.Ops, Nodes: sumOps(s.Ops),
		Weights: inspectWeights{Params: s.Params, Bytes: s.WeightBytes, Stored: s.Stored, InGraph: s.InGraph, External: s.External},
		Size:    *runtime.Size(s), Family: onnx.GuessFamily(s),
	}
	for _, o := range s.Opsets {
		r.Opsets = append(r.Opsets, inspectOpset{o.Domain, o.Version})
	}
	for _, in := range s.Inputs {
		r.Inputs = append(r.Inputs, inspectValueOf(in, ""))
	}
	for _, out := range s.Outputs {
		r.Outputs = append(r.Outputs, inspectValueOf(out, madeBy(s, out.Name)))
	}
	if opts.JSON {
		return writeJSON(opts.Stdout, r)
	}
	return printInspect(opts.Stdout, r)
}

func inspectValueOf(v onnx.ValueInfo, made string) inspectValue {
	iv := inspectValue{Name: v.Name, Type: v.Type.String(), Kind: v.Kind, Made: made}
	if !v.Unranked {
		iv.Shape = []any{}
		for _, d := range v.Dims {
			if d.Param != "" || d.Value < 0 {
				iv.Shape = append(iv.Shape, d.String()) // a symbol, or "?"
			} else {
				iv.Shape = append(iv.Shape, d.Value) // a number in --json
			}
		}
	}
	return iv
}

// madeBy names the operator computing an output, with the axis a softmax
// normalises over: what tells a distribution's check which axis sums to 1.
func madeBy(s *onnx.Summary, output string) string {
	p, ok := s.Producers[output]
	if !ok {
		return ""
	}
	if axis, ok := s.SoftmaxAxis(p); ok {
		return fmt.Sprintf("%s (axis %d)", p.Op, axis)
	}
	return p.Op
}

func printInspect(w io.Writer, r inspectReport) error {
	var opsets []string
	for _, o := range r.Opsets {
		d := o.Domain
		if d == "" {
			d = "ai.onnx"
		}
		opsets = append(opsets, fmt.Sprintf("%s %d", d, o.Version))
	}
	fmt.Fprintf(w, "%s: %s, IR version %d, opsets %s\n", r.File, result.HumanBytes(r.FileBytes), r.IRVersion, strings.Join(opsets, ", "))
	var table bytes.Buffer // lines without "made by" would end in padding: trimmed below
	tw := tabwriter.NewWriter(&table, 0, 0, 2, ' ', 0)
	for _, list := range []struct {
		title  string
		values []inspectValue
	}{{"inputs", r.Inputs}, {"outputs", r.Outputs}} {
		fmt.Fprintf(tw, "%s:\n", list.title)
		for _, v := range list.values {
			typ := v.Type
			if v.Kind != "" {
				typ = v.Kind + " of " + typ
			}
			made := ""
			if v.Made != "" {
				made = "made by " + v.Made
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", v.Name, typ, shapeText(v.Shape), made)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for line := range strings.Lines(table.String()) {
		fmt.Fprintln(w, strings.TrimRight(line, " \n"))
	}
	ops := make([]string, 0, len(r.Operators))
	for op := range r.Operators {
		ops = append(ops, op)
	}
	// Most nodes first: what dominates the model (and decides which EP can take it).
	sort.Slice(ops, func(i, j int) bool {
		a, b := r.Operators[ops[i]], r.Operators[ops[j]]
		return a > b || a == b && ops[i] < ops[j]
	})
	for i, op := range ops {
		ops[i] = fmt.Sprintf("%s %d", op, r.Operators[op])
	}
	fmt.Fprintf(w, "operators: %d nodes of %d kinds: %s\n", r.Nodes, len(ops), strings.Join(ops, ", "))
	wt := r.Weights
	fmt.Fprintf(w, "weights: %s params, %s: initializers %s params, %s; made in-graph %s params, %s (Constant nodes, ConstantOfShape over constant shapes)\n",
		result.HumanCount(wt.Params), humanBytes(wt.Bytes), result.HumanCount(wt.Stored.Params), humanBytes(wt.Stored.Bytes),
		result.HumanCount(wt.InGraph.Params), humanBytes(wt.InGraph.Bytes))
	if wt.External {
		fmt.Fprintln(w, "  some initializers are in external data files, which must sit beside the model")
	}
	fmt.Fprintf(w, "size: tier %s; estimated memory %s (weights twice, plus ONNX Runtime's own 32 MiB; activations not counted)\n",
		r.Size.Tier, result.HumanBytes(r.Size.EstimateBytes))
	g := r.Family
	if g.Family == "" {
		fmt.Fprintf(w, "family: no guess (%s): pass --family to hwtest add\n", strings.Join(g.Reasons, "; "))
		return nil
	}
	family := g.Family
	if g.Architecture != "" {
		family += " " + g.Architecture
	}
	fmt.Fprintf(w, "family: looks like %s, task %s (confidence %s): %s\n", family, g.Task, g.Confidence, strings.Join(g.Reasons, "; "))
	return nil
}

// humanBytes is result.HumanBytes, with 0 as "0 B" rather than "unknown".
func humanBytes(n int64) string {
	if n == 0 {
		return "0 B"
	}
	return result.HumanBytes(n)
}

func shapeText(shape []any) string {
	if shape == nil {
		return "(rank unknown)"
	}
	parts := make([]string, len(shape))
	for i, d := range shape {
		parts[i] = fmt.Sprint(d)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
