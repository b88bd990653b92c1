// Package onnxtest lets tests run ONNX models in ONNX Runtime itself (the
// library `make setup` installs). It loads the shared library once per test
// process (TestMain) and skips, with the reason, when it is not installed.
package onnxtest

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"testing"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/hwtest/hwtest/internal/testenv"
	"github.com/hwtest/hwtest/layout"
)

// unavailable is why ONNX Runtime could not be initialised, or nil.
var unavailable error = errors.New("onnxtest.Main was not called from TestMain")

// Main initialises ONNX Runtime once for the test binary, runs the tests and
// tears the environment down. Call it from TestMain:
//
//	func TestMain(m *testing.M) { onnxtest.Main(m) }
func Main(m *testing.M) {
	unavailable = initialise()
	code := m.Run()
	if unavailable == nil {
		_ = ort.DestroyEnvironment()
	}
	os.Exit(code)
}

func initialise() error {
	p, err := layout.LibraryPath()
	if err != nil {
		return err
	}
	if _, err := os.Stat(p); err != nil {
		return fmt.Errorf("ONNX Runtime library not found at %s (run `make setup`, or set %s): %w", p, layout.LibraryEnv, err)
	}
	ort.SetSharedLibraryPath(p)
	if err := ort.InitializeEnvironment(ort.WithLogLevelError()); err != nil {
		return fmt.Errorf("initialising ONNX Runtime from %s (run `make setup` to reinstall it): %w", p, err)
	}
	layout.RemoveORTDebugLog()
	return nil
}

// Require skips t when ONNX Runtime is not available, saying why; under
// HWTEST_REQUIRE=1 (make test) it fails instead.
func Require(t testing.TB) {
	t.Helper()
	testenv.Need(t, "ONNX Runtime (make setup)", unavailable)
}

// Tensor is an input or output: a shape and exactly one of Float or Int64.
type Tensor struct {
	Shape []int64
	Float []float32
	Int64 []int64
}

// F returns a float32 tensor.
func F(data []float32, shape ...int64) Tensor { return Tensor{Shape: shape, Float: data} }

// I returns an int64 tensor.
func I(data []int64, shape ...int64) Tensor { return Tensor{Shape: shape, Int64: data} }

// Run runs the model once with the CPU execution provider and returns every
// output by name. Inputs are matched by name to the model's declared inputs;
// a missing or extra input fails the test.
func Run(t testing.TB, model []byte, inputs map[string]Tensor) map[string]Tensor {
	t.Helper()
	s := Open(t, model)
	defer s.Close()
	return s.Run(t, inputs)
}

// Session is one ONNX Runtime session on the CPU execution provider, for
// tests that must run the same session more than once (a model with a
// random operator gives different outputs run to run).
type Session struct {
	sess     *ort.DynamicAdvancedSession
	ins      []ort.InputOutputInfo
	outNames []string
}

// Open creates a session for model; Close it when done.
func Open(t testing.TB, model []byte) *Session {
	t.Helper()
	Require(t)
	ins, outs, err := ort.GetInputOutputInfoWithONNXData(model)
	if err != nil {
		t.Fatalf("reading model I/O: %v", err)
	}
	inNames := make([]string, len(ins))
	for i, info := range ins {
		inNames[i] = info.Name
	}
	outNames := make([]string, len(outs))
	for i, o := range outs {
		outNames[i] = o.Name
	}
	sess, err := ort.NewDynamicAdvancedSessionWithONNXData(model, inNames, outNames, nil)
	if err != nil {
		t.Fatalf("creating session: %v", err)
	}
	return &Session{sess: sess, ins: ins, outNames: outNames}
}

// Close destroys the session.
func (s *Session) Close() { _ = s.sess.Destroy() }

// Run runs the session once and returns every output by name; inputs are
// matched as by the package-level Run.
func (s *Session) Run(t testing.TB, inputs map[string]Tensor) map[string]Tensor {
	t.Helper()
	if len(s.ins) != len(inputs) {
		t.Fatalf("model has %d inputs (%v), got %d", len(s.ins), s.ins, len(inputs))
	}
	values := make([]ort.Value, len(s.ins))
	defer func() {
		for _, v := range values {
			if v != nil {
				_ = v.Destroy()
			}
		}
	}()
	var err error
	for i, info := range s.ins {
		in, ok := inputs[info.Name]
		if !ok {
			t.Fatalf("no value for model input %q", info.Name)
		}
		if in.Float != nil {
			values[i], err = ort.NewTensor(ort.NewShape(in.Shape...), in.Float)
		} else {
			values[i], err = ort.NewTensor(ort.NewShape(in.Shape...), in.Int64)
		}
		if err != nil {
			t.Fatalf("input %q: %v", info.Name, err)
		}
	}
	results := make([]ort.Value, len(s.outNames))
	if err := s.sess.Run(values, results); err != nil {
		t.Fatalf("running model: %v", err)
	}
	got := make(map[string]Tensor, len(s.outNames))
	for i, v := range results {
		shape := []int64(v.GetShape())
		switch x := v.(type) {
		case *ort.Tensor[float32]:
			got[s.outNames[i]] = Tensor{Shape: shape, Float: append([]float32(nil), x.GetData()...)}
		case *ort.Tensor[int64]:
			got[s.outNames[i]] = Tensor{Shape: shape, Int64: append([]int64(nil), x.GetData()...)}
		default:
			t.Fatalf("output %q: unsupported value type %T", s.outNames[i], v)
		}
		_ = v.Destroy()
	}
	return got
}

// ArgMaxRows returns the argmax of each row of x's last axis.
func ArgMaxRows(x Tensor) []int {
	w := int(x.Shape[len(x.Shape)-1])
	out := make([]int, 0, len(x.Float)/max(w, 1))
	for r := 0; r+w <= len(x.Float) && w > 0; r += w {
		best := r
		for i := r; i < r+w; i++ {
			if x.Float[i] > x.Float[best] {
				best = i
			}
		}
		out = append(out, best-r)
	}
	return out
}

// ArgSortRows returns, for each row of x's last axis, the column indices
// in descending order of value (ties by index): the ranking a retrieval or
// similarity check compares.
func ArgSortRows(x Tensor) [][]int {
	w := int(x.Shape[len(x.Shape)-1])
	var out [][]int
	for r := 0; r+w <= len(x.Float) && w > 0; r += w {
		row := x.Float[r : r+w]
		idx := make([]int, w)
		for i := range idx {
			idx[i] = i
		}
		slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(row[b], row[a]) })
		out = append(out, idx)
	}
	return out
}

// CheckFloat fails t unless out has the wanted shape and holds finite
// values that are not all equal (a model that emits a constant is broken
// even when its shape is right).
func CheckFloat(t testing.TB, name string, out Tensor, shape ...int64) {
	t.Helper()
	if fmt.Sprint(out.Shape) != fmt.Sprint(shape) {
		t.Errorf("%s: shape %v, want %v", name, out.Shape, shape)
	}
	if out.Float == nil {
		t.Errorf("%s: not a float tensor", name)
		return
	}
	for i, v := range out.Float {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			t.Errorf("%s: element %d is %v", name, i, v)
			return
		}
	}
	allEqual := true
	for _, v := range out.Float[1:] {
		if v != out.Float[0] {
			allEqual = false
			break
		}
	}
	if allEqual && len(out.Float) > 1 {
		t.Errorf("%s: all %d elements equal %v", name, len(out.Float), out.Float[0])
	}
}

// MaxAbsDiff is the largest |a[i]-b[i]|; lengths must match.
func MaxAbsDiff(a, b []float32) float64 {
	if len(a) != len(b) {
		return math.Inf(1)
	}
	m := 0.0
	for i := range a {
		m = max(m, math.Abs(float64(a[i]-b[i])))
	}
	return m
}
