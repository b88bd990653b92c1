package runtime

import (
	"testing"

	ort "github.com/yalue/onnxruntime_go"
)

// BenchmarkRun compares one inference through hwtest's Session (inputs and outputs
// converted to and from float64 tensors) with the same inference through
// onnxruntime_go directly: the ratio is what hwtest adds to every measured latency.
func BenchmarkRun(b *testing.B) {
	if ortReady != "" {
		b.Skip(ortReady)
	}
	t := &testing.T{}
	path := writeZoo(t, "tiny-bert")
	s, err := OpenSession(path, Target{Provider: CPUProvider}, false)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	in, err := SynthesizeInputs("bench", s.Inputs(), map[string]Input{"input_ids": {Dims: []int64{1, 16}}, "attention_mask": {Value: []float64{1}}})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("hwtest-Run", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.Run(in); err != nil {
				b.Fatal(err)
			}
		}
	})
	// What Measure times: the bound inputs, a reused RunOptions with its timeout.
	b.Run("hwtest-Bound", func(b *testing.B) {
		bound, err := s.Bind(in)
		if err != nil {
			b.Fatal(err)
		}
		defer bound.Close()
		for b.Loop() {
			if _, err := bound.Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("onnxruntime_go", func(b *testing.B) {
		values := make([]ort.Value, len(in))
		for i, x := range in {
			v, err := toValue(x)
			if err != nil {
				b.Fatal(err)
			}
			defer v.Destroy()
			values[i] = v
		}
		for b.Loop() {
			outs := make([]ort.Value, len(s.outputs))
			if err := s.session.Run(values, outs); err != nil {
				b.Fatal(err)
			}
			for _, o := range outs {
				o.Destroy()
			}
		}
	})
}

// BenchmarkCompare: comparing a million-element output.
func BenchmarkCompare(b *testing.B) {
	n := 1 << 20
	a := Tensor{Name: "y", Shape: []int64{int64(n)}, Data: make([]float64, n)}
	c := Tensor{Name: "y", Shape: []int64{int64(n)}, Data: make([]float64, n)}
	for i := range a.Data {
		a.Data[i], c.Data[i] = float64(i), float64(i)+1e-7
	}
	for b.Loop() {
		Compare(a, c, Tolerance{RTol: 1e-5, ATol: 1e-6})
	}
}
