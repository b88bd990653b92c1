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
		if s.Params != info.Params || s.InitializerBytes != info.InitializerBytes {
			t.Errorf("%s: params %d / %d bytes, the builder says %d / %d", name, s.Params, s.InitializerBytes, info.Params, info.InitializerBytes)
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
