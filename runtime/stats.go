package runtime

import (
	"fmt"
	"math"
	"os"
	"slices"
	"time"

	"github.com/hwtest/hwtest/result"
)

// Budget says how long latency is measured: warm-up until both WarmupRuns and
// WarmupTime are reached, then measure until both MinRuns and MinTime are reached
// (or MaxRuns, so a very fast model does not loop for ever).
type Budget struct {
	WarmupRuns int
	WarmupTime time.Duration
	MinRuns    int
	MinTime    time.Duration
	MaxRuns    int
}

// DefaultBudget follows DESIGN.md: warm-up of 10 runs or 1 s, then at least
// 10 runs and 1 s. HWTEST_MEASURE_TIME changes both times (tests shorten them).
func DefaultBudget() (Budget, error) {
	d, err := MeasureTime()
	if err != nil {
		return Budget{}, err
	}
	return Budget{WarmupRuns: 10, WarmupTime: d, MinRuns: 10, MinTime: d, MaxRuns: 100000}, nil
}

// MeasureTime is $HWTEST_MEASURE_TIME, the warm-up and measuring time of each cell;
// 1 s when unset. A value that is not a positive duration is an error, not silently
// the default: `hwtest run` checks it before anything runs.
func MeasureTime() (time.Duration, error) {
	s := os.Getenv("HWTEST_MEASURE_TIME")
	if s == "" {
		return time.Second, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("HWTEST_MEASURE_TIME=%q: want a positive duration such as 200ms or 2s", s)
	}
	return d, nil
}

// warmupDone: warm-up ends at whichever of its two bounds comes first.
func (b Budget) warmupDone(runs int, spent time.Duration) bool {
	return runs >= b.WarmupRuns || spent >= b.WarmupTime
}

// measureDone: measuring needs both bounds, unless MaxRuns is hit.
func (b Budget) measureDone(runs int, spent time.Duration) bool {
	return (runs >= b.MinRuns && spent >= b.MinTime) || runs >= b.MaxRuns
}

// LatencyStats summarises measured latencies, given in the order they ran.
func LatencyStats(samples []time.Duration) (m result.Metrics) {
	if len(samples) == 0 {
		return m
	}
	ms := SamplesMS(samples)
	m.BlockP50MS = BlockMedians(ms)
	slices.Sort(ms)
	var sum float64
	for _, x := range ms {
		sum += x
	}
	mean := sum / float64(len(ms))
	var sq float64
	for _, x := range ms {
		sq += (x - mean) * (x - mean)
	}
	stdev := 0.0
	if len(ms) > 1 {
		stdev = math.Sqrt(sq / float64(len(ms)-1))
	}
	m.Runs = len(ms)
	m.MinMS, m.MaxMS = ms[0], ms[len(ms)-1]
	m.P50MS, m.P90MS = percentile(ms, 50), percentile(ms, 90)
	m.P95MS, m.P99MS = percentile(ms, 95), percentile(ms, 99)
	m.MeanMS, m.StdevMS = mean, stdev
	if mean > 0 {
		m.CoV = stdev / mean
	}
	return m
}

// percentile interpolates linearly between closest ranks of sorted values.
func percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 1 {
		return sorted[0]
	}
	rank := p / 100 * float64(len(sorted)-1)
	lo := int(math.Floor(rank))
	hi := int(math.Ceil(rank))
	return sorted[lo] + (sorted[hi]-sorted[lo])*(rank-float64(lo))
}

// SamplesMS converts latencies to milliseconds, keeping their order.
func SamplesMS(samples []time.Duration) []float64 {
	ms := make([]float64, len(samples))
	for i, s := range samples {
		ms[i] = float64(s) / float64(time.Millisecond)
	}
	return ms
}

// Block sizes: a block's median is only a stable repeated measurement with some
// runs in it, and ten of them are enough for a regression test between two runs.
const (
	maxBlocks    = 10
	minBlockRuns = 5
)

// BlockMedians splits the timed runs (in the order they ran) into consecutive
// blocks and returns each block's median: up to 10 blocks of at least 5 runs each,
// so nil below 10 runs. Consecutive blocks, not a shuffle, so drift over the
// measuring time (thermal throttling, a noisy neighbour) shows as blocks that differ.
func BlockMedians(samplesMS []float64) []float64 {
	n := len(samplesMS)
	blocks := min(maxBlocks, n/minBlockRuns)
	if blocks < 2 {
		return nil
	}
	medians := make([]float64, blocks)
	for b := range blocks {
		// Sizes differ by at most one run when blocks do not divide n.
		block := slices.Clone(samplesMS[b*n/blocks : (b+1)*n/blocks])
		slices.Sort(block)
		medians[b] = percentile(block, 50)
	}
	return medians
}
