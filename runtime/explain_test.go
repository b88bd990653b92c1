package runtime

import (
	"bytes"

	"github.com/hwtest/hwtest/onnx"
	"github.com/hwtest/hwtest/result"
	"github.com/hwtest/hwtest/zoo"
	"slices"
	"strings"
	"testing"

	"github.com/hwtest/hwtest/catalog"
	"github.com/hwtest/hwtest/internal/testenv"
	"github.com/hwtest/hwtest/spec"
)

func catalogPair(t *testing.T, model, target string) (Model, Target) {
	t.Helper()
	c, err := catalog.Load("../models.yaml", "../hardware.yaml")
	if err != nil {
		t.Fatal(err)
	}
	mi := slices.IndexFunc(c.Models, func(m catalog.Model) bool { return m.ID == model })
	ti := slices.IndexFunc(c.Targets, func(x catalog.Target) bool { return x.ID == target })
	if mi < 0 || ti < 0 {
		t.Fatalf("no %s or %s in the catalogs", model, target)
	}
	return spec.ModelOf(c.Models[mi]), spec.TargetOf(c.Targets[ti])
}

// TestExplainRealMismatches traces the two mismatches the matrix shows here to
// their nodes: Silero VAD v5 on webgpu-native (all its work inside If branches)
// and opt-125m's tiny-opt fixture on webgpu.
func TestExplainRealMismatches(t *testing.T) {
	requireORT(t)
	defer Shutdown()
	for _, c := range []struct{ model, target, node string }{
		// Found so (onnxruntime-web 1.30.0, Chromium's SwiftShader WebGPU): the
		// first Conv of the encoder, inside If_0's then branch, on ort.webgpu.min.js's
		// native WebGPU EP; the learned-position Gather on ort.min.js's JSEP.
		{"silero-vad-v5", "webgpu-native", "If_0_then_branch__Inline_0__/encoder/0/reparam_conv/Conv"},
		{"opt-125m", "webgpu", "decoder/Gather_10"},
	} {
		t.Run(c.model+"/"+c.target, func(t *testing.T) {
			m, tg := catalogPair(t, c.model, c.target)
			testenv.Need(t, c.target+" in Chromium (make setup)", Unavailable(tg))
			_, err := Resolve(m)
			testenv.Need(t, c.model+" (make setup)", err)
			e, err := Explain(m, tg)
			if err != nil {
				t.Fatal(err)
			}
			t.Log("\n" + e.String())
			if e.Original == nil {
				t.Fatalf("the model agrees on %s: the mismatch this test traces is gone", c.target)
			}
			if len(e.Notes) > 0 {
				t.Fatalf("notes: %q", e.Notes)
			}
			if e.Node == nil || e.Node.Name != c.node || !strings.HasSuffix(e.Line, "its inputs agree") {
				t.Fatalf("want node %s with its inputs agreeing: %s", c.node, e.Line)
			}
		})
	}
}

// TestExplainFindsTheBrokenNode breaks one node of a zoo model in its bytes (an Add
// becomes a Sub; every name stays) and runs that as the "target" on the CPU against
// the clean model's reference: Explain must name exactly that node.
func TestExplainFindsTheBrokenNode(t *testing.T) {
	requireORT(t)
	clean, _, err := zoo.Build("tiny-opt")
	if err != nil {
		t.Fatal(err)
	}
	l, err := onnx.List(clean)
	if err != nil {
		t.Fatal(err)
	}
	// An Add in the layers whose inputs are both activations (a bias may be zero,
	// and x+0 == x-0).
	var adds []onnx.NodeInfo
	for _, n := range l.Nodes {
		if n.OpType == "Add" && strings.Contains(n.Name, "layers") && !slices.Contains(l.Initializers, n.Inputs[0]) && !slices.Contains(l.Initializers, n.Inputs[1]) {
			adds = append(adds, n)
		}
	}
	if len(adds) < 2 {
		t.Fatalf("tiny-opt has %d Add nodes in its layers", len(adds))
	}
	victim := adds[len(adds)/2]
	// NodeProto.name (field 3) then op_type (field 4), as onnx writes them.
	field := func(num byte, s string) []byte { return append([]byte{num<<3 | 2, byte(len(s))}, s...) }
	from := append(field(3, victim.Name), field(4, "Add")...)
	to := append(field(3, victim.Name), field(4, "Sub")...)
	if bytes.Count(clean, from) != 1 {
		t.Fatalf("node %s's name and op_type occur %d times in the model's bytes, want once", victim.Name, bytes.Count(clean, from))
	}
	broken := bytes.Replace(clean, from, to, 1)

	dir := t.TempDir()
	refPath, _ := writeTemp(dir, "clean.onnx", clean)
	tgtPath, _ := writeTemp(dir, "broken.onnx", broken)
	m, cpu := catalogPair(t, "opt-125m", "cpu")
	e, err := ExplainFiles(m, refPath, tgtPath, cpu)
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + e.String())
	if e.Node == nil || e.Node.Name != victim.Name {
		t.Fatalf("broke %s, Explain says: %s", victim.Name, e.Line)
	}
	if !strings.HasSuffix(e.Line, "its inputs agree") {
		t.Fatalf("the broken node's inputs are the clean model's, Explain says: %s", e.Line)
	}
	if e.Original == nil {
		t.Fatal("the broken model's outputs agree with the clean one's: the break did nothing")
	}

	// The clean model against itself: nothing to explain.
	e, err = ExplainFiles(m, refPath, refPath, cpu)
	if err != nil {
		t.Fatal(err)
	}
	if e.Node != nil || e.Original != nil {
		t.Fatalf("the clean model diverges from itself on cpu: %s", e.Line)
	}
}

// TestExplainLines covers the findings a real run rarely shows: an input that could
// not be compared, and a mismatch that vanishes once intermediates are exposed.
func TestExplainLines(t *testing.T) {
	l := &onnx.Listing{
		Inputs:  []string{"x"},
		Outputs: []string{"y"},
		Nodes: []onnx.NodeInfo{
			{Name: "a", OpType: "Cast", Inputs: []string{"x"}, Outputs: []string{"h"}}, // h: float16, not exposed
			{Name: "b", OpType: "Relu", Inputs: []string{"h"}, Outputs: []string{"y"}},
		},
	}
	f := func(name string, v float64) Tensor {
		return Tensor{Name: name, Type: 1, Shape: []int64{1}, Data: []float64{v}}
	}
	tol := Tolerance{RTol: 1e-3, ATol: 1e-5}
	e := &Explanation{Original: &result.Deviation{Output: "y", AbsErr: 1, Allowed: 1e-3}}
	if err := e.compare(l, []Tensor{f("y", 2)}, []Tensor{f("y", 1)}, tol, []string{"h (element type float16, which hwtest does not read back)"}); err != nil {
		t.Fatal(err)
	}
	want := "first divergence: node b (Relu), output y, |error| 1; its input h could not be compared, so the cause may lie before it"
	if got := e.line(true); got != want || e.Node.Inputs[0].State != "not compared: element type float16, which hwtest does not read back" {
		t.Fatalf("line %q, input %+v; want %q", got, e.Node.Inputs, want)
	}

	e = &Explanation{Original: &result.Deviation{Output: "y", AbsErr: 1, Allowed: 1e-3}}
	if err := e.compare(l, []Tensor{f("y", 1)}, []Tensor{f("y", 1)}, tol, nil); err != nil {
		t.Fatal(err)
	}
	if got := e.line(false); !strings.HasPrefix(got, "no exposed value diverges, yet the model as it is does") || e.Compared != 1 || e.Divergent != 0 {
		t.Fatalf("line %q, %d compared, %d divergent", got, e.Compared, e.Divergent)
	}
}
