package onnx_test

import (
	"strings"
	"testing"

	"github.com/hwtest/hwtest/onnx"
	"github.com/hwtest/hwtest/zoo"
)

func TestInspectReadsWhatTheBuilderWrote(t *testing.T) {
	for _, name := range zoo.Names() {
		b, info, err := zoo.Build(name)
		if err != nil {
			t.Fatal(err)
		}
		s, err := onnx.Inspect(b)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if s.Params != info.Params || s.WeightBytes != info.InitializerBytes {
			t.Errorf("%s: params %d / %d bytes, the builder says %d / %d", name, s.Params, s.WeightBytes, info.Params, info.InitializerBytes)
		}
		if len(s.Inputs) != len(info.Inputs) || len(s.Outputs) != len(info.Outputs) {
			t.Fatalf("%s: %d inputs %d outputs, want %d %d", name, len(s.Inputs), len(s.Outputs), len(info.Inputs), len(info.Outputs))
		}
		for i, in := range info.Inputs {
			if got := s.Inputs[i]; got.Name != in.Name || got.Type != in.Type || len(got.Dims) != len(in.Dims) {
				t.Errorf("%s: input %d = %+v, want %+v", name, i, got, in)
			}
			for j, d := range in.Dims {
				if d.Param != s.Inputs[i].Dims[j].Param {
					t.Errorf("%s: input %s dim %d param %q, want %q", name, in.Name, j, s.Inputs[i].Dims[j].Param, d.Param)
				}
			}
		}
		if len(s.Ops) == 0 {
			t.Errorf("%s: no operators", name)
		}
	}
	b, _, _ := zoo.Build("tiny-mamba")
	s, _ := onnx.Inspect(b)
	if s.Ops["Scan"] != 1 || s.Ops["Mul"] == 0 {
		t.Errorf("tiny-mamba ops (the Scan body counts too): %v", s.Ops)
	}
}

func TestInspectRejectsWhatIsNotAModel(t *testing.T) {
	good, _, _ := zoo.Build("tiny-bert")
	for name, data := range map[string][]byte{
		"empty":     nil,
		"text":      []byte("this is not an ONNX model, it is a sentence\n"),
		"truncated": good[:len(good)/3],
	} {
		if _, err := onnx.Inspect(data); err == nil || !strings.Contains(err.Error(), "not an ONNX model") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// A scalar output (a shape with no dims) is told apart from one whose shape is
// not declared at all: ONNX Runtime reports both with no dims.
func TestInspectScalarAndUnranked(t *testing.T) {
	g := onnx.NewGraph("ranks")
	x := g.Input("x", onnx.Float32, "n")
	g.Node("ReduceSum", []string{x}, []string{"sum"}, onnx.Int("keepdims", 0))
	g.Node("Identity", []string{x}, []string{"copy"})
	g.Output("sum", onnx.Float32)
	g.Outputs = append(g.Outputs, onnx.ValueInfo{Name: "copy", Type: onnx.Float32, Unranked: true})
	s, err := onnx.Inspect(g.Model().Marshal())
	if err != nil {
		t.Fatal(err)
	}
	if o := s.Outputs[0]; o.Unranked || len(o.Dims) != 0 || o.Kind != "" {
		t.Errorf("scalar output read as %+v", o)
	}
	if o := s.Outputs[1]; !o.Unranked || o.Type != onnx.Float32 {
		t.Errorf("unranked output read as %+v", o)
	}
	if in := s.Inputs[0]; in.Unranked || len(in.Dims) != 1 {
		t.Errorf("input read as %+v", in)
	}
}

// Weights a graph makes when it loads count as weights: a Constant node's tensor,
// ConstantOfShape over a constant shape (an initializer or a Constant's value_ints,
// of the fill value's type); a ConstantOfShape over a shape computed at run time
// makes activations, not weights.
func TestInspectCountsWeightsMadeInGraph(t *testing.T) {
	g := onnx.NewGraph("in-graph")
	x := g.Input("x", onnx.Float32, 1, 3, 32, 32)
	w1 := g.Op("ConstantOfShape", []string{g.Int64s(16, 3, 3, 3)}, onnx.TensorAttr("value", onnx.FloatTensor([]int64{1}, []float32{0.01})))
	w2 := g.Op("Constant", nil, onnx.TensorAttr("value", onnx.FloatTensor([]int64{32, 16, 1, 1}, make([]float32, 32*16))))
	shape := g.Op("Constant", nil, onnx.Ints("value_ints", 10, 32))
	fc := g.Op("ConstantOfShape", []string{shape}) // float32 zeros by default
	bias := g.Initializer("bias", []int64{10}, make([]float32, 10))
	h := g.Op("Conv", []string{x, w1})
	h = g.Op("Conv", []string{h, w2})
	h = g.Op("GlobalAveragePool", []string{h})
	h = g.Op("Flatten", []string{h})
	logits := g.Op("Add", []string{g.Op("Gemm", []string{h, fc}, onnx.Int("transB", 1)), bias})
	g.Op("ConstantOfShape", []string{g.Op("Shape", []string{x})}) // activations
	g.Node("Softmax", []string{logits}, []string{"probs"}, onnx.Int("axis", 1))
	g.Node("Identity", []string{logits}, []string{"logits"})
	topk := g.OpN("TopK", []string{logits, g.Int64s(5)}, 2)
	g.Node("Identity", []string{topk[1]}, []string{"top5"})
	g.Output("logits", onnx.Float32, 1, 10)
	g.Output("probs", onnx.Float32, 1, 10)
	g.Output("top5", onnx.Int64, 1, 5)
	s, err := onnx.Inspect(g.Model().Marshal())
	if err != nil {
		t.Fatal(err)
	}
	// Stored: bias (10 floats) and the int64 shapes [16 3 3 3] and [5].
	if want := (onnx.Weights{Params: 10, Bytes: 40 + 8*4 + 8}); s.Stored != want {
		t.Errorf("stored %+v, want %+v", s.Stored, want)
	}
	// In-graph: w1 432 + its fill value 1, w2 512, fc 320; value_ints 2 int64s.
	if want := (onnx.Weights{Params: 432 + 1 + 512 + 320, Bytes: 4*(432+1+512+320) + 16}); s.InGraph != want {
		t.Errorf("in-graph %+v, want %+v", s.InGraph, want)
	}
	if s.Params != s.Stored.Params+s.InGraph.Params || s.WeightBytes != s.Stored.Bytes+s.InGraph.Bytes {
		t.Errorf("totals %d params %d bytes, parts %+v %+v", s.Params, s.WeightBytes, s.Stored, s.InGraph)
	}
	if p := s.Producers["probs"]; p.Op != "Softmax" || p.Axis == nil || *p.Axis != 1 {
		t.Errorf("probs made by %+v", p)
	}
	if p := s.Producers["logits"]; p.Op != "Add" {
		t.Errorf("logits made by %+v (Identity is looked through)", p)
	}
	if p := s.Producers["top5"]; p.Op != "TopK" || len(s.TopK) != 1 || s.TopK[0] != 5 {
		t.Errorf("top5 made by %+v; TopK k %v", p, s.TopK)
	}
	if axis, ok := s.SoftmaxAxis(onnx.Producer{Op: "Softmax"}); !ok || axis != -1 {
		t.Errorf("opset %d Softmax default axis %d", s.Opset(""), axis)
	}
}
