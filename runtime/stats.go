package runtime

import (
	"fmt"
	"math"
	"os"
	"slices"
	"time"

	"github.com/hwtest/hwtest/result"
)

// Budget says how long latency is measured. Warm-up runs in windows until two
// consecutive windows' medians agree within SettleTolerance (the timings have
// settled: caches, allocator arenas, thread pool, a browser's JIT tiers and the
// clock are warm) or until WarmupMax, whichever comes first; then timed runs until
// both MinRuns and MinTime are reached (or MaxRuns, so a very fast model does not
// loop for ever).
type Budget struct {
	// The first warm-up window is at least WindowRuns runs and WindowTime long;
	// each next one is twice as long. Windows of one length let a slow, steady
	// drift pass for settled (seen: onnxruntime-web on wasm and WebNN getting 3%
	// faster every 50 ms for a second, as V8 tiers the kernels up); doubling
	// windows compare ever longer stretches, and a model that is warm at once
	// still settles after two short ones.
	WindowRuns      int
	WindowTime      time.Duration
	SettleTolerance float64 // relative difference of consecutive window medians
	// WarmupMax: warm-up ends here, settled or not.
	WarmupMax time.Duration
	MinRuns   int
	MinTime   time.Duration
	MaxRuns   int
}

// DefaultBudget: warm-up in windows of ≥ 3 runs, the first 1/20 of the measuring
// time and each next twice as long, until two agree within 3%, for at most three
// times the measuring time; then at least 10 runs and the measuring time (1 s, or
// HWTEST_MEASURE_TIME: tests shorten it). The warm-up bound is 3 s by default
// because onnxruntime-web on wasm got faster for 2.5 s after its first run here
// (silero-vad-v5: 0.86 ms, 0.44 ms at 0.7 s, 0.28 ms from 2.5 s on) as V8 tiered
// its kernels up: a 1 s warm-up reported about twice the steady latency. Native
// cells settle in about 150 ms and never reach it.
func DefaultBudget() (Budget, error) {
	d, err := MeasureTime()
	if err != nil {
		return Budget{}, err
	}
	return Budget{
		WindowRuns: 3, WindowTime: d / 20, SettleTolerance: 0.03, WarmupMax: 3 * d,
		MinRuns: 10, MinTime: d, MaxRuns: 100000,
	}, nil
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

// Warmup is what warming up took, and whether the timings settled.
type Warmup struct {
	Runs    int
	Time    time.Duration
	Settled bool
	// Drift is the relative difference of the last two windows' medians: how far
	// from settled warm-up ended (0 when it had fewer than two windows).
	Drift float64
}

// now is time.Now, the clock WarmUp and Measure read. It is a variable only so
// that TestBudget can replay chosen latencies without sleeping; hwtest never sets it.
var now = time.Now

func since(t time.Time) time.Duration { return now().Sub(t) }

// WarmUp runs run until the timings settle or the budget's WarmupMax is spent. It
// counts the runs it made; a failing run ends it with that run's error.
func (b Budget) WarmUp(run func() (time.Duration, error)) (Warmup, error) {
	var w Warmup
	start := now()
	prev := 0.0
	for length := b.WindowTime; ; length *= 2 {
		window := make([]float64, 0, b.WindowRuns)
		for begin := now(); len(window) < b.WindowRuns || since(begin) < length; {
			took, err := run()
			w.Runs++
			if err != nil {
				w.Time = since(start)
				return w, fmt.Errorf("warm-up run %d: %w", w.Runs, err)
			}
			window = append(window, float64(took))
			if since(start) >= b.WarmupMax {
				break
			}
		}
		med := median(window)
		if prev > 0 {
			w.Drift = math.Abs(med-prev) / prev
			if w.Drift <= b.SettleTolerance {
				w.Settled = true
			}
		}
		if w.Settled || since(start) >= b.WarmupMax {
			w.Time = since(start)
			return w, nil
		}
		prev = med
	}
}

// Measure makes the timed runs after warm-up: until both MinRuns and MinTime are
// reached, or MaxRuns.
func (b Budget) Measure(run func() (time.Duration, error)) ([]time.Duration, error) {
	var samples []time.Duration
	for start := now(); !((len(samples) >= b.MinRuns && since(start) >= b.MinTime) || len(samples) >= b.MaxRuns); {
		took, err := run()
		if err != nil {
			return samples, fmt.Errorf("measured run %d: %w", len(samples)+1, err)
		}
		samples = append(samples, took)
	}
	return samples, nil
}

func median(xs []float64) float64 { return quantile(xs, 50) }

// quantile is the p-th percentile of unsorted values (xs is left as it was).
func quantile(xs []float64, p float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return percentile(s, p)
}

// LatencyStats summarises measured latencies, given in the order they ran.
func LatencyStats(samples []time.Duration) (m result.Metrics) {
	if len(samples) == 0 {
		return m
	}
	ms := SamplesMS(samples)
	m.BlockP50MS = BlockMedians(ms)
	m.BlockCoV = cov(m.BlockP50MS)
	if m.BlockCoV > UnstableBlockCoV {
		m.Unstable = fmt.Sprintf("the medians of its %d blocks of timed runs vary by %.1f%% (CoV; over %.0f%%): something else ran on the machine, or the device's clock changed", len(m.BlockP50MS), 100*m.BlockCoV, 100*UnstableBlockCoV)
	}
	slices.Sort(ms)
	mean, stdev := meanStdev(ms)
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

// UnstableBlockCoV: a cell whose block medians vary more than this is flagged
// unstable. In recorded runs on this 2-core machine, cpu cells' block medians had
// a median CoV of 2.6% (the p90, 12%, were runs with other work on the machine):
// 5% separates a steady cell from one something else disturbed.
const UnstableBlockCoV = 0.05

// cov is the sample coefficient of variation: stdev / mean; 0 below two values.
func cov(xs []float64) float64 {
	mean, stdev := meanStdev(xs)
	if mean == 0 {
		return 0
	}
	return stdev / mean
}

// meanStdev is the mean and the sample standard deviation (0 below two values).
func meanStdev(xs []float64) (mean, stdev float64) {
	if len(xs) == 0 {
		return 0, 0
	}
	var sum float64
	for _, x := range xs {
		sum += x
	}
	mean = sum / float64(len(xs))
	if len(xs) < 2 {
		return mean, 0
	}
	var sq float64
	for _, x := range xs {
		sq += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(sq / float64(len(xs)-1))
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
