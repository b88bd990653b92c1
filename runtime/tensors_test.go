package runtime

import (
	"slices"
	"testing"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/hwtest/hwtest/onnx"
)

// Every element type goes into ONNX Runtime and back unchanged, scalars included.
func TestTensorRoundTrip(t *testing.T) {
	requireORT(t)
	types := []ort.TensorElementDataType{
		ort.TensorElementDataTypeFloat, ort.TensorElementDataTypeDouble,
		ort.TensorElementDataTypeInt64, ort.TensorElementDataTypeInt32, ort.TensorElementDataTypeInt16, ort.TensorElementDataTypeInt8,
		ort.TensorElementDataTypeUint64, ort.TensorElementDataTypeUint32, ort.TensorElementDataTypeUint16, ort.TensorElementDataTypeUint8,
		ort.TensorElementDataTypeBool, ort.TensorElementDataTypeFloat16, ort.TensorElementDataTypeBFloat16,
	}
	for _, typ := range types {
		for _, shape := range [][]int64{{2, 2}, {}} {
			data := []float64{1, 0, 3, 100}
			if typ == ort.TensorElementDataTypeBool {
				data = []float64{1, 0, 1, 1}
			}
			in := Tensor{Name: "x", Type: typ, Shape: shape, Data: data[:elements(shape)]}
			half := typ == ort.TensorElementDataTypeFloat16 || typ == ort.TensorElementDataTypeBFloat16
			v, err := toValue(in)
			if half && len(shape) == 0 {
				if err == nil {
					v.Destroy()
					t.Errorf("%v scalar: made, though onnxruntime_go cannot", typ)
				}
				continue
			}
			if err != nil {
				t.Errorf("%v %v: %v", typ, shape, err)
				continue
			}
			out, err := fromValue("x", v)
			v.Destroy()
			if err != nil || out.Type != typ || !slices.Equal(out.Shape, shape) || !slices.Equal(out.Data, in.Data) {
				t.Errorf("%v %v: read back %+v (%v)", typ, shape, out, err)
			}
		}
	}
	s := Tensor{Name: "s", Type: ort.TensorElementDataTypeString, Shape: []int64{3}, Strings: []string{"a", "", "ü"}}
	v, err := toValue(s)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Destroy()
	if out, err := fromValue("s", v); err != nil || !slices.Equal(out.Strings, s.Strings) || out.Type != s.Type {
		t.Errorf("strings read back %+v (%v)", out, err)
	}
}

// Outputs onnxruntime_go cannot read when ONNX Runtime allocates them, through
// the model path cells use: a scalar (ReduceSum to rank 0) and a float16 tensor
// are allocated ahead; an output of unknown rank (a Reshape to a shape given as
// input), which ONNX Runtime reports with no dims as it does a scalar, is still
// left to ONNX Runtime, because allocating it as a scalar would break it.
func TestSessionScalarAndHalfOutputs(t *testing.T) {
	requireORT(t)
	g := onnx.NewGraph("outputs")
	x := g.Input("x", onnx.Float32, 4)
	shape := g.Input("shape", onnx.Int64, "rank")
	g.Node("ReduceSum", []string{x}, []string{"sum"}, onnx.Int("keepdims", 0))
	g.Node("Reshape", []string{x, shape}, []string{"copy"})
	g.Node("Cast", []string{x}, []string{"half"}, onnx.Int("to", int64(onnx.Float16)))
	g.Output("sum", onnx.Float32) // no dims: a scalar
	g.Outputs = append(g.Outputs, onnx.ValueInfo{Name: "copy", Type: onnx.Float32, Unranked: true})
	g.Node("ReduceMax", []string{x}, []string{"inner"}, onnx.Int("keepdims", 0))
	g.Node("Neg", []string{"inner"}, []string{"negmax"})
	g.Output("half", onnx.Float16, 4)
	g.Output("negmax", onnx.Float32)
	// "inner", exposed by name alone as explain does: a scalar ONNX Runtime infers.
	model, err := onnx.Expose(g.Model().Marshal(), []string{"inner"})
	if err != nil {
		t.Fatal(err)
	}
	path, err := writeTemp(t.TempDir(), "outputs.onnx", model)
	if err != nil {
		t.Fatal(err)
	}
	s, err := OpenSession(path, cpuTarget, false)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	in := []Tensor{
		{Name: "x", Type: ort.TensorElementDataTypeFloat, Shape: []int64{4}, Data: []float64{1, 2.5, -0.1, 1000.3}},
		{Name: "shape", Type: ort.TensorElementDataTypeInt64, Shape: []int64{2}, Data: []float64{2, 2}},
	}
	got, err := s.Run(in)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	sum := float64(float32(1) + float32(2.5) + float32(-0.1) + float32(1000.3))
	if o := got[0]; len(o.Shape) != 0 || len(o.Data) != 1 || o.Data[0] != sum {
		t.Errorf("scalar output: %+v, want %g", o, sum)
	}
	if o := got[1]; !slices.Equal(o.Shape, []int64{2, 2}) || o.Data[1] != 2.5 {
		t.Errorf("unranked output: %+v", o)
	}
	wantHalf := []float64{1, 2.5, onnx.HalfValue(onnx.HalfBits(float64(float32(-0.1)))), 1000.5}
	if o := got[2]; o.Type != ort.TensorElementDataTypeFloat16 || !slices.Equal(o.Data, wantHalf) {
		t.Errorf("float16 output: %+v, want %v", o, wantHalf)
	}
	if o := got[4]; o.Name != "inner" || len(o.Shape) != 0 || !slices.Equal(o.Data, []float64{float64(float32(1000.3))}) {
		t.Errorf("exposed scalar: %+v", o)
	}
	// Timed runs allocate the same way.
	b, err := s.Bind(in)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := b.Run(); err != nil {
		t.Errorf("timed run: %v", err)
	}
}

// A model without inputs (a Constant) runs; onnxruntime_go's Run would index its
// first input and panic.
func TestSessionNoInputs(t *testing.T) {
	requireORT(t)
	g := onnx.NewGraph("constant")
	g.Node("Constant", nil, []string{"c"}, onnx.TensorAttr("value", onnx.FloatTensor([]int64{2, 3}, []float32{1, 2, 3, 4, 5, 6})))
	g.Output("c", onnx.Float32, 2, 3)
	path, err := writeTemp(t.TempDir(), "constant.onnx", g.Model().Marshal())
	if err != nil {
		t.Fatal(err)
	}
	s, err := OpenSession(path, cpuTarget, false)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.Run(nil)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if o := got[0]; !slices.Equal(o.Shape, []int64{2, 3}) || !slices.Equal(o.Data, []float64{1, 2, 3, 4, 5, 6}) {
		t.Errorf("constant: %+v", o)
	}
}
