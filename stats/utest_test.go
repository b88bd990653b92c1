package stats

import (
	"errors"
	"math"
	"testing"
)

// The reference values come from SciPy 1.10.1 (Debian's python3-scipy):
// mannwhitneyu(x, y, alternative="two-sided", method="exact") without ties and
// method="asymptotic", use_continuity=True for the normal approximation. SciPy's
// exact method ignores ties, so with ties the reference is a brute-force enumeration
// of every assignment of the pooled values to the two samples (mid-ranks, two-sided
// p = min(1, 2·min(P(W ≤ w), P(W ≥ w)))), written in Python beside it.
func TestMannWhitneyKnownValues(t *testing.T) {
	seq := func(n int, f func(i int) float64) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = f(i)
		}
		return out
	}
	cases := []struct {
		name  string
		x, y  []float64
		u, p  float64
		exact bool
	}{
		{"no ties, separated", []float64{1.1, 2.2, 3.3}, []float64{4.4, 5.5, 6.6}, 0, 0.1, true},
		{"no ties, interleaved", []float64{1, 3, 5, 7, 9}, []float64{2, 4, 6, 8, 10, 12}, 10, 0.42857142857142855, true},
		// Block medians (ms, rounded) of silero-vad-v5 on cpu recorded here: ONNX
		// Runtime's default threads, then one thread.
		{"no ties, 10 vs 10",
			[]float64{0.0872, 0.0883, 0.0871, 0.0881, 0.0890, 0.0896, 0.0881, 0.0889, 0.0882, 0.0894},
			[]float64{0.0990, 0.1033, 0.1003, 0.1015, 0.0993, 0.1031, 0.1020, 0.1021, 0.1017, 0.1000},
			0, 1.082508822446903e-05, true},
		{"ties (brute force)", []float64{1, 2, 2, 3, 3, 3}, []float64{2, 3, 4, 4, 5}, 5.5, 0.11255411255411256, true},
		{"ties across the samples (brute force)", []float64{5, 5, 5, 1}, []float64{5, 5, 9}, 3, 0.5714285714285714, true},
		{"all equal", []float64{7, 7, 7}, []float64{7, 7}, 3, 1, true},
		{"normal approximation, ties",
			seq(60, func(i int) float64 { return float64((i * 7) % 13) }),
			seq(70, func(j int) float64 { return float64((j*5)%11) + 1 }),
			2057.5, 0.843977319204204, false},
		{"normal approximation, one tie",
			seq(60, func(i int) float64 { return float64(i) + 0.5 }),
			seq(70, func(j int) float64 { return float64(j)*1.01 + 3 }),
			1646.5, 0.034380680179412246, false},
		{"exact at the limit, 25 vs 25",
			seq(25, func(i int) float64 { return float64(i) }),
			seq(25, func(j int) float64 { return float64(j) + 6.5 }),
			171, 0.00549521438434097, true},
		// SciPy's exact p here is 0.0001247113436578456.
		{"normal approximation past the limit, 50 vs 50",
			seq(50, func(i int) float64 { return float64(i) }),
			seq(50, func(j int) float64 { return float64(j) + 12.5 }),
			703, 0.00016490865902578245, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := MannWhitney(c.x, c.y)
			if err != nil {
				t.Fatal(err)
			}
			if got.U != c.u || got.Exact != c.exact || got.N1 != len(c.x) || got.N2 != len(c.y) {
				t.Errorf("got U=%v exact=%v n=%d,%d; want U=%v exact=%v n=%d,%d", got.U, got.Exact, got.N1, got.N2, c.u, c.exact, len(c.x), len(c.y))
			}
			if !near(got.P, c.p) {
				t.Errorf("p = %.17g, want %.17g", got.P, c.p)
			}
			// Swapping the samples mirrors U and keeps the two-sided p.
			back, _ := MannWhitney(c.y, c.x)
			if back.U != float64(len(c.x)*len(c.y))-c.u || !near(back.P, c.p) {
				t.Errorf("swapped: U=%v p=%v, want U=%v p=%v", back.U, back.P, float64(len(c.x)*len(c.y))-c.u, c.p)
			}
		})
	}
}

// near: equal to 1e-9, relative to b.
func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Abs(b) }

func TestMannWhitneyEmpty(t *testing.T) {
	if _, err := MannWhitney(nil, []float64{1}); !errors.Is(err, ErrNoSamples) {
		t.Errorf("err = %v, want ErrNoSamples", err)
	}
}

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want float64
	}{{[]float64{3, 1, 2}, 2}, {[]float64{4, 1, 3, 2}, 2.5}, {[]float64{5}, 5}} {
		if got := Median(c.in); got != c.want {
			t.Errorf("Median(%v) = %v, want %v", c.in, got, c.want)
		}
	}
	if !math.IsNaN(Median(nil)) {
		t.Error("Median(nil) is not NaN")
	}
}

// BenchmarkMannWhitneyExact is the slowest exact case: ExactLimit against
// ExactLimit, no ties.
func BenchmarkMannWhitneyExact(b *testing.B) {
	x := make([]float64, ExactLimit)
	y := make([]float64, ExactLimit)
	for i := range x {
		x[i], y[i] = float64(i), float64(i)+6.5
	}
	for b.Loop() {
		if _, err := MannWhitney(x, y); err != nil {
			b.Fatal(err)
		}
	}
}
