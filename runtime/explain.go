package runtime

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/hwtest/hwtest/onnx"
	"github.com/hwtest/hwtest/result"
)

// Explanation says where a target's run first parts from the CPU reference: the
// first node, in topological order, whose output diverges while its inputs agree.
type Explanation struct {
	Model  string `json:"model"`
	Target string `json:"target"`
	// Line is the finding in one line, as the matrix shows it.
	Line string `json:"line"`
	// Node is the first divergent node; nil when no exposed value diverges.
	Node *DivergentNode `json:"node,omitempty"`
	// Nodes is how many top-level nodes the exposed model has (after If nodes
	// were inlined), Compared how many of them had an output compared.
	Nodes    int `json:"nodes"`
	Compared int `json:"compared"`
	// Divergent is how many compared nodes have an output outside the tolerance:
	// the first and those its error reaches (or that go wrong on their own).
	Divergent int `json:"divergent"`
	Exposed   int `json:"exposed"` // values compared, graph outputs included
	// Inlined is how many If nodes were replaced by the branch the CPU run took.
	Inlined int `json:"inlined,omitempty"`
	// Unexposed are values that could not be compared, each with why.
	Unexposed []string `json:"unexposed,omitempty"`
	// Original is the worst deviation of the model as it is (not exposed) on the
	// target; nil when its outputs agree.
	Original *result.Deviation `json:"original,omitempty"`
	// Notes are caveats about the finding.
	Notes []string `json:"notes,omitempty"`
}

// DivergentNode is a node whose output is outside the tolerance.
type DivergentNode struct {
	Name   string            `json:"name"`
	OpType string            `json:"op_type"`
	Domain string            `json:"domain,omitempty"`
	Output string            `json:"output"`
	Shape  []int64           `json:"shape"` // the output's, on the CPU reference: where Worst.Index lies
	Worst  *result.Deviation `json:"worst"`
	Inputs []InputState      `json:"inputs"`
}

// InputState is how one input of the divergent node compares.
type InputState struct {
	Name string `json:"name"`
	// State: "agrees", "graph input", "initializer" (the same values on both sides)
	// or "not compared: <why>".
	State string            `json:"state"`
	Worst *result.Deviation `json:"worst,omitempty"` // when compared
}

// String is the finding with its details, one per line.
func (e *Explanation) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s on %s: %s\n", e.Model, e.Target, e.Line)
	if n := e.Node; n != nil {
		fmt.Fprintf(&b, "  worst element: %s, of shape %v\n", n.Worst, n.Shape)
		for _, in := range n.Inputs {
			fmt.Fprintf(&b, "  input %s: %s", in.Name, in.State)
			if in.Worst != nil && in.State == "agrees" {
				fmt.Fprintf(&b, " (worst |error| %.3g, allowed %.3g)", in.Worst.AbsErr, in.Worst.Allowed)
			}
			b.WriteString("\n")
		}
	}
	fmt.Fprintf(&b, "  %d of %d nodes compared, %d diverge (%d values exposed", e.Compared, e.Nodes, e.Divergent, e.Exposed)
	if e.Inlined > 0 {
		fmt.Fprintf(&b, ", %d If nodes inlined with the branch the CPU reference took", e.Inlined)
	}
	b.WriteString(")\n")
	if e.Original != nil {
		fmt.Fprintf(&b, "  the model as it is on %s: %s\n", e.Target, e.Original)
	}
	for _, u := range e.Unexposed {
		fmt.Fprintf(&b, "  not compared: %s\n", u)
	}
	for _, n := range e.Notes {
		fmt.Fprintf(&b, "  note: %s\n", n)
	}
	return b.String()
}

// Explain traces a catalog model's run on a target to its first divergent node:
// the model resolved and its inputs built as the cell does, the CPU reference with
// the reference session's options, the target opened as its cell opens it.
func Explain(m Model, t Target) (*Explanation, error) {
	if _, err := Init(); err != nil {
		return nil, err
	}
	if err := available(t); err != nil {
		return nil, err
	}
	rm, err := Resolve(m)
	if err != nil {
		return nil, err
	}
	ref, err := CPUReference(m, rm)
	if err != nil {
		return nil, err
	}
	return explain(m, ref, rm.Path, rm.Path, t)
}

// ExplainFiles is Explain with the target running targetPath instead of the model
// at refPath: tests hand it a model with one node deliberately wrong.
func ExplainFiles(m Model, refPath, targetPath string, t Target) (*Explanation, error) {
	if _, err := Init(); err != nil {
		return nil, err
	}
	if err := available(t); err != nil {
		return nil, err
	}
	sum, err := fileSHA256(refPath)
	if err != nil {
		return nil, err
	}
	rm := ResolvedModel{Path: refPath, SHA256: sum}
	if m.Fixture != "" {
		rm.Fixture = "tiny-random"
	}
	ref, err := computeReference(m, rm)
	if err != nil {
		return nil, err
	}
	return explain(m, ref, refPath, targetPath, t)
}

// available is the target's probe: an unavailable target is an error with its reason.
func available(t Target) error {
	if reason := Unavailable(t); reason != "" {
		return fmt.Errorf("%s is unavailable here: %s", t.ID, reason)
	}
	return nil
}

// maxInlineRounds bounds If nesting: each round inlines one level.
const maxInlineRounds = 32

func explain(m Model, ref *Reference, refPath, targetPath string, t Target) (*Explanation, error) {
	tol := t.Tolerance
	if m.Tolerance != nil {
		tol = *m.Tolerance
	}
	e := &Explanation{Model: m.ID, Target: t.ID}
	dir, err := os.MkdirTemp("", "hwtest-explain-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)

	// The model as it is, on the target: what the cell saw.
	got, err := runOn(targetPath, &t, ref.Inputs)
	if err != nil {
		return nil, fmt.Errorf("the model on %s: %w", t.ID, err)
	}
	if e.Original, err = divergence(got, ref.Outputs, tol); err != nil {
		return nil, fmt.Errorf("the model on %s: %w", t.ID, err)
	}

	refData, err := os.ReadFile(refPath)
	if err != nil {
		return nil, err
	}
	tgtData, err := os.ReadFile(targetPath)
	if err != nil {
		return nil, err
	}
	if refData, tgtData, e.Inlined, err = inlineTakenIfs(refData, tgtData, ref.Inputs, dir); err != nil {
		return nil, err
	}
	l, err := onnx.List(refData)
	if err != nil {
		return nil, err
	}
	e.Nodes = len(l.Nodes)
	names, unexposed, err := exposable(refData, l)
	if err != nil {
		return nil, err
	}
	e.Unexposed = unexposed
	want, err := runExposed(refData, names, dir, "reference.onnx", referenceTarget, ref.Inputs)
	if err != nil {
		return nil, fmt.Errorf("the exposed model on the CPU reference: %w", err)
	}
	// The edit must not change what the model computes: the edited model's own
	// outputs on the CPU are the reference's.
	if d, err := CompareAll(want, ref.Outputs, tol); err != nil || diverges(d) {
		e.Notes = append(e.Notes, fmt.Sprintf("the edited model's outputs on the CPU reference differ from the model's (%v%v): inlining or exposing changed what it computes, so the finding is suspect", d, err))
	}
	got, err = runExposed(tgtData, names, dir, "target.onnx", &t, ref.Inputs)
	if err != nil {
		return nil, fmt.Errorf("the exposed model on %s: %w", t.ID, err)
	}
	if err := e.compare(l, got, want, tol, unexposed); err != nil {
		return nil, err
	}
	e.Line = e.line(finalDiverges(got, want, l.Outputs, tol))
	return e, nil
}

// divergence is the worst deviation of got from want, nil when every output is
// within the tolerance.
func divergence(got, want []Tensor, tol Tolerance) (*result.Deviation, error) {
	d, err := CompareAll(got, want, tol)
	if err != nil || !diverges(d) {
		return nil, err
	}
	return d, nil
}

func diverges(d *result.Deviation) bool {
	return d != nil && (d.AbsErr > d.Allowed || math.IsNaN(d.AbsErr))
}

// inlineTakenIfs replaces top-level If nodes, level by level, by the branch the CPU
// reference takes on these inputs (its conditions read from a reference run with
// them exposed), in the reference model and the target's alike: values inside a
// branch cannot be graph outputs, and a model such as Silero VAD does all its work
// inside one.
func inlineTakenIfs(refData, tgtData []byte, inputs []Tensor, dir string) ([]byte, []byte, int, error) {
	inlined := 0
	for range maxInlineRounds {
		l, err := onnx.List(refData)
		if err != nil {
			return nil, nil, 0, err
		}
		var conds []string
		var ifs []onnx.NodeInfo
		for _, n := range l.Nodes {
			if n.Branches != nil && len(n.Inputs) > 0 && len(n.Outputs) > 0 {
				ifs = append(ifs, n)
				conds = append(conds, n.Inputs[0])
			}
		}
		if len(ifs) == 0 {
			return refData, tgtData, inlined, nil
		}
		out, err := runExposed(refData, conds, dir, "conditions.onnx", referenceTarget, inputs)
		if err != nil {
			return nil, nil, 0, fmt.Errorf("reading If conditions on the CPU reference: %w", err)
		}
		taken := map[string]bool{}
		for _, n := range ifs {
			c, ok := find(out, n.Inputs[0])
			if !ok || len(c.Data) != 1 {
				return nil, nil, 0, fmt.Errorf("node %s (If): its condition %q is not one value", n.Name, n.Inputs[0])
			}
			taken[n.Outputs[0]] = c.Data[0] != 0
		}
		if refData, err = onnx.InlineIfs(refData, taken); err != nil {
			return nil, nil, 0, err
		}
		if tgtData, err = onnx.InlineIfs(tgtData, taken); err != nil {
			return nil, nil, 0, fmt.Errorf("the target's model: %w", err)
		}
		inlined += len(ifs)
	}
	return nil, nil, 0, fmt.Errorf("If nodes nested deeper than %d levels", maxInlineRounds)
}

// exposable lists the node outputs that can be compared: tensors of an element
// type hwtest reads back, as ONNX Runtime infers them. The rest are listed with why.
func exposable(model []byte, l *onnx.Listing) (names, unexposed []string, err error) {
	var all []string
	for _, n := range l.Nodes {
		for _, o := range n.Outputs {
			if o != "" {
				all = append(all, o)
			}
		}
	}
	exposed, err := onnx.Expose(model, all)
	if err != nil {
		return nil, nil, err
	}
	_, outs, err := ort.GetInputOutputInfoWithONNXData(exposed)
	if err != nil {
		return nil, nil, fmt.Errorf("ONNX Runtime does not take the model with its intermediates exposed: %w", err)
	}
	for _, o := range outs {
		switch {
		case o.OrtValueType != ort.ONNXTypeTensor:
			unexposed = append(unexposed, fmt.Sprintf("%s (a %v, not a tensor)", o.Name, o.OrtValueType))
		case !supportedType(o.DataType):
			unexposed = append(unexposed, fmt.Sprintf("%s (element type %v, which hwtest does not read back)", o.Name, o.DataType))
		default:
			names = append(names, o.Name)
		}
	}
	return names, unexposed, nil
}

// runExposed runs the model with names exposed (and only those, besides its own
// outputs) on a target: the reference session's options for the reference.
func runExposed(model []byte, names []string, dir, file string, t *Target, inputs []Tensor) ([]Tensor, error) {
	exposed, err := onnx.Expose(model, names)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, file)
	if err := os.WriteFile(path, exposed, 0o644); err != nil {
		return nil, err
	}
	return runOn(path, t, inputs)
}

// referenceTarget stands for the CPU reference's session in runOn.
var referenceTarget = &Target{ID: "reference", Provider: CPUProvider}

// runOn opens a model on a target as its cell does (a native session with CPU
// fallback allowed, or onnxruntime-web in Chromium), or as the CPU reference does
// (referenceTarget), runs it once and closes it.
func runOn(path string, t *Target, inputs []Tensor) ([]Tensor, error) {
	var s Backend
	var err error
	switch {
	case t == referenceTarget:
		s, err = openSession(path, *t, false, true, "")
	case t.Runner == "browser":
		s, err = openBrowserSession(path, *t)
	default:
		s, err = OpenSession(path, *t, false)
	}
	if err != nil {
		return nil, err
	}
	defer s.Close()
	return s.Run(inputs)
}

// compare walks the nodes in topological order and records the first one with a
// divergent output, and how its inputs compare.
func (e *Explanation) compare(l *onnx.Listing, got, want []Tensor, tol Tolerance, unexposed []string) error {
	gotBy, wantBy := byName(got), byName(want)
	worst := map[string]*result.Deviation{} // compared values → their worst element
	shapes := map[string][]int64{}
	for _, n := range l.Nodes {
		var div *result.Deviation
		compared := false
		for _, o := range n.Outputs {
			w, ok := wantBy[o]
			if o == "" || !ok {
				continue
			}
			g, ok := gotBy[o]
			if !ok {
				return fmt.Errorf("the target returned no %q", o)
			}
			d, err := Compare(g, w, tol)
			if err != nil { // a shape differs: divergent at once
				d = &result.Deviation{Output: o, Index: -1, AbsErr: math.Inf(1)}
				e.Notes = append(e.Notes, err.Error())
			}
			compared = true
			worst[o] = d
			shapes[o] = w.Shape
			if diverges(d) && worse(d, div) {
				div = d
			}
		}
		if compared {
			e.Compared++
		}
		if div != nil {
			e.Divergent++
		}
		if div == nil || e.Node != nil {
			continue
		}
		dn := &DivergentNode{Name: n.Name, OpType: n.OpType, Domain: n.Domain, Output: div.Output, Shape: shapes[div.Output], Worst: div}
		for _, in := range n.Inputs {
			if in == "" {
				continue
			}
			st := InputState{Name: in}
			switch {
			case worst[in] != nil:
				st.State, st.Worst = "agrees", worst[in]
			case slices.Contains(l.Inputs, in) && !slices.Contains(l.Initializers, in):
				st.State = "graph input"
			case slices.Contains(l.Initializers, in):
				st.State = "initializer"
			default:
				st.State = "not compared: " + whyNot(in, unexposed)
			}
			dn.Inputs = append(dn.Inputs, st)
		}
		e.Node = dn
	}
	e.Exposed = len(worst)
	return nil
}

// whyNot says why an input of a node was not compared.
func whyNot(name string, unexposed []string) string {
	for _, u := range unexposed {
		if strings.HasPrefix(u, name+" (") {
			return strings.TrimSuffix(strings.TrimPrefix(u, name+" ("), ")")
		}
	}
	return "produced inside a subgraph or by no top-level node"
}

// line is the finding in one line.
func (e *Explanation) line(finalDiverges bool) string {
	if n := e.Node; n != nil {
		s := fmt.Sprintf("first divergence: node %s (%s), output %s, |error| %.3g", n.Name, n.OpType, n.Output, n.Worst.AbsErr)
		var open []string
		for _, in := range n.Inputs {
			if strings.HasPrefix(in.State, "not compared") {
				open = append(open, in.Name)
			}
		}
		if len(open) == 0 {
			s += "; its inputs agree"
		} else {
			s += fmt.Sprintf("; its input %s could not be compared, so the cause may lie before it", strings.Join(open, ", "))
		}
		if e.Original == nil {
			e.Notes = append(e.Notes, "the model as it is agrees with the CPU reference on this target: exposing intermediates changed the run")
		} else if !finalDiverges {
			e.Notes = append(e.Notes, "with intermediates exposed the final outputs agree, unlike the model as it is: exposing them changed the target's fusions or placement, so this node may not be what breaks the original run")
		}
		return s
	}
	if e.Original != nil {
		return fmt.Sprintf("no exposed value diverges, yet the model as it is does (%s): exposing %d intermediates changed the target's fusions or placement", e.Original, e.Exposed)
	}
	return "the target agrees with the CPU reference: nothing diverges"
}

// finalDiverges says whether the exposed run's own graph outputs diverge.
func finalDiverges(got, want []Tensor, outputs []string, tol Tolerance) bool {
	gotBy, wantBy := byName(got), byName(want)
	for _, o := range outputs {
		g, gok := gotBy[o]
		w, wok := wantBy[o]
		if !gok || !wok {
			continue
		}
		d, err := Compare(g, w, tol)
		if err != nil || diverges(d) {
			return true
		}
	}
	return false
}

func byName(ts []Tensor) map[string]Tensor {
	m := make(map[string]Tensor, len(ts))
	for _, t := range ts {
		m[t.Name] = t
	}
	return m
}
