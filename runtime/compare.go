package runtime

import (
	"fmt"
	"math"
	"slices"

	"github.com/hwtest/hwtest/result"
)

// Compare checks got against want element-wise with |g-w| <= atol + rtol*|w| and
// returns the worst element (largest error relative to what was allowed) and
// whether every element is within tolerance. Shapes must match exactly; NaN matches
// only NaN, and an infinity only the same infinity.
func Compare(got, want Tensor, tol Tolerance) (*result.Deviation, error) {
	if !slices.Equal(got.Shape, want.Shape) {
		return nil, fmt.Errorf("output %q has shape %v, the CPU reference has %v", got.Name, got.Shape, want.Shape)
	}
	var worst *result.Deviation
	worstRatio := -1.0
	for i := range want.Data {
		g, w := got.Data[i], want.Data[i]
		allowed := tol.ATol + tol.RTol*math.Abs(w)
		var diff float64
		switch {
		case math.IsNaN(g) || math.IsNaN(w):
			if math.IsNaN(g) && math.IsNaN(w) {
				continue
			}
			diff = math.Inf(1)
		case math.IsInf(g, 0) || math.IsInf(w, 0):
			if g == w {
				continue
			}
			diff = math.Inf(1)
		default:
			diff = math.Abs(g - w)
		}
		ratio := diff / math.Max(allowed, math.SmallestNonzeroFloat64)
		if ratio > worstRatio {
			worstRatio = ratio
			worst = &result.Deviation{Output: want.Name, Index: i, Got: g, Want: w, AbsErr: diff, Allowed: allowed}
		}
	}
	return worst, nil
}

// CompareAll compares every output of want with the same-named output of got and
// returns the worst deviation over all of them.
func CompareAll(got, want []Tensor, tol Tolerance) (*result.Deviation, error) {
	var worst *result.Deviation
	for _, w := range want {
		g, ok := find(got, w.Name)
		if !ok {
			return nil, fmt.Errorf("output %q is missing", w.Name)
		}
		d, err := Compare(g, w, tol)
		if err != nil {
			return nil, err
		}
		if worse(d, worst) {
			worst = d
		}
	}
	return worst, nil
}

func worse(a, b *result.Deviation) bool {
	if a == nil {
		return false
	}
	if b == nil {
		return true
	}
	return a.AbsErr/math.Max(a.Allowed, math.SmallestNonzeroFloat64) > b.AbsErr/math.Max(b.Allowed, math.SmallestNonzeroFloat64)
}

func find(ts []Tensor, name string) (Tensor, bool) {
	for _, t := range ts {
		if t.Name == name {
			return t, true
		}
	}
	return Tensor{}, false
}
