// Package stats holds the statistics hwtest decides regressions with: the median and
// the Mann-Whitney U test, the rank test benchstat (golang.org/x/perf) compares
// benchmark samples with. It is a leaf: it imports nothing of hwtest.
package stats

import (
	"errors"
	"math"
	"slices"
)

// ExactLimit is the largest sample size for which MannWhitney computes the exact
// distribution of U (ties included); above it, in either sample, it uses the normal
// approximation. hwtest's samples are a cell's 10 blocks or a few runs; 25 against
// 25 takes a few milliseconds here (BenchmarkMannWhitneyExact), 50 against 50 took
// 0.1 s. benchstat draws the same line for samples with ties.
const ExactLimit = 25

// ErrNoSamples: a sample is empty, so there is nothing to compare.
var ErrNoSamples = errors.New("stats: a sample is empty")

// UTest is the result of a two-sided Mann-Whitney U test of x against y.
type UTest struct {
	N1, N2 int
	// U counts the pairs (x[i], y[j]) with x[i] > y[j], plus half the tied pairs:
	// 0 when every x is below every y, N1*N2 when every x is above.
	U float64
	// P is the two-sided p-value: how likely a U at least this far from N1*N2/2 is
	// when both samples come from one distribution.
	P float64
	// Exact says whether P came from the exact distribution of U given the ties
	// (both samples ≤ ExactLimit) or from the normal approximation with the tie and
	// continuity corrections.
	Exact bool
}

// MannWhitney tests whether x and y come from one distribution against the
// alternative that one tends to have larger values than the other (two-sided).
//
// Small samples (≤ ExactLimit each) use the exact distribution of the rank sum
// conditional on the ties seen (the permutation distribution with mid-ranks), so a
// p-value is exact even with ties; as R's wilcox.test and benchstat do without ties,
// P = min(1, 2·min(P(W ≤ w), P(W ≥ w))). Larger samples use the normal approximation
// with the tie correction and a continuity correction of 1/2, as R's
// wilcox.test(correct = TRUE) and SciPy's mannwhitneyu(method="asymptotic") do.
// When every value is equal P is 1: there is no evidence of a difference.
func MannWhitney(x, y []float64) (UTest, error) {
	n1, n2 := len(x), len(y)
	if n1 == 0 || n2 == 0 {
		return UTest{}, ErrNoSamples
	}
	groups := tieGroups(x, y)
	// Ranks are 1-based; a tie group's mid-rank is (first+last)/2, so twice the rank
	// sum of x is an integer: W2.
	var w2 int
	for _, g := range groups {
		w2 += g.inX * g.twiceRank
	}
	t := UTest{N1: n1, N2: n2, U: float64(w2)/2 - float64(n1*(n1+1))/2}
	if n1 <= ExactLimit && n2 <= ExactLimit {
		t.Exact = true
		t.P = exactP(groups, n1, w2)
	} else {
		t.P = normalP(groups, n1, n2, t.U)
	}
	return t, nil
}

// tieGroup is a run of equal values in the merged, sorted samples.
type tieGroup struct {
	size      int // values in the group
	inX       int // of which from x
	twiceRank int // twice the group's mid-rank
}

func tieGroups(x, y []float64) []tieGroup {
	type labelled struct {
		v   float64
		inX bool
	}
	all := make([]labelled, 0, len(x)+len(y))
	for _, v := range x {
		all = append(all, labelled{v, true})
	}
	for _, v := range y {
		all = append(all, labelled{v, false})
	}
	slices.SortFunc(all, func(a, b labelled) int {
		switch {
		case a.v < b.v:
			return -1
		case a.v > b.v:
			return 1
		}
		return 0
	})
	var groups []tieGroup
	for i := 0; i < len(all); {
		j := i
		g := tieGroup{}
		for ; j < len(all) && all[j].v == all[i].v; j++ {
			g.size++
			if all[j].inX {
				g.inX++
			}
		}
		g.twiceRank = (i + 1) + j // ranks i+1 … j
		groups = append(groups, g)
		i = j
	}
	return groups
}

// exactP is the two-sided p-value of the doubled rank sum w2 of x under the
// permutation distribution: every choice of n1 of the N positions as x's is equally
// likely, and a tie group of size t holding k of x's contributes k·twiceRank in
// C(t, k) ways. ways[k][s] counts the choices of k positions among the groups seen
// with doubled rank sum s.
func exactP(groups []tieGroup, n1, w2 int) float64 {
	maxSum := 0
	for _, g := range groups {
		maxSum += g.size * g.twiceRank
	}
	ways := make([][]float64, n1+1)
	for k := range ways {
		ways[k] = make([]float64, maxSum+1)
	}
	ways[0][0] = 1
	seen, reach := 0, 0 // values in the groups so far, and the largest sum they reach
	for _, g := range groups {
		choose := make([]float64, g.size+1)
		for c := range choose {
			choose[c] = binomial(g.size, c)
		}
		reach += g.size * g.twiceRank
		// Go down in k so that ways[k-c] still holds the counts before this group.
		for k := min(n1, seen+g.size); k >= 0; k-- {
			row := ways[k]
			for s := reach; s >= 0; s-- {
				sum := row[s]
				for c := 1; c <= min(k, g.size) && s >= c*g.twiceRank; c++ {
					sum += choose[c] * ways[k-c][s-c*g.twiceRank]
				}
				row[s] = sum
			}
		}
		seen += g.size
	}
	var total, atMost, atLeast float64
	for s, n := range ways[n1] {
		total += n
		if s <= w2 {
			atMost += n
		}
		if s >= w2 {
			atLeast += n
		}
	}
	return math.Min(1, 2*math.Min(atMost, atLeast)/total)
}

// normalP approximates U's distribution by a normal one with U's mean and its
// variance corrected for ties, with a continuity correction of 1/2 towards the mean.
func normalP(groups []tieGroup, n1, n2 int, u float64) float64 {
	n := float64(n1 + n2)
	var ties float64
	for _, g := range groups {
		t := float64(g.size)
		ties += t*t*t - t
	}
	mean := float64(n1) * float64(n2) / 2
	variance := float64(n1) * float64(n2) / 12 * ((n + 1) - ties/(n*(n-1)))
	if variance <= 0 {
		return 1 // every value equal
	}
	d := math.Abs(u-mean) - 0.5
	if d <= 0 {
		return 1
	}
	z := d / math.Sqrt(variance)
	return math.Min(1, math.Erfc(z/math.Sqrt2)) // 2·(1 − Φ(z))
}

// binomial is C(n, k) as a float64 (exact for the sizes used here).
func binomial(n, k int) float64 {
	if k < 0 || k > n {
		return 0
	}
	r := 1.0
	for i := 1; i <= k; i++ {
		r = r * float64(n-k+i) / float64(i)
	}
	return math.Round(r)
}

// Median is the middle value of xs (the mean of the two middle ones when their
// count is even); NaN for no values.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	m := len(s) / 2
	if len(s)%2 == 1 {
		return s[m]
	}
	return (s[m-1] + s[m]) / 2
}
