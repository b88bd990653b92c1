package history

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/hwtest/hwtest/matrix"
	"github.com/hwtest/hwtest/result"
)

// run1 is when the first synthetic run finished.
var run1 = time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)

// targets are hardware.yaml's, so generated runs look like real ones.
var targets = []string{"cpu", "cuda", "tensorrt", "rocm", "coreml", "openvino", "qnn", "directml", "xnnpack",
	"webgpu-ort", "webgpu", "webgpu-native", "webnn", "wasm"}

// syntheticRun is a run of n cells with samples latencies each, shaped like what
// `hwtest run` stores: checks, outputs, metrics computed from the samples,
// provenance. Samples are whole nanoseconds in ms with log-normal noise and rare
// spikes, as time.Duration measurements are, so DuckDB compresses them no better
// than real ones. The same seed gives the same run.
func syntheticRun(id string, finished time.Time, n, samples int, seed uint64) Run {
	return syntheticRunFrom(id, finished, 0, n, samples, seed)
}

// syntheticRunFrom is syntheticRun with cells first to first+n-1 of the list of
// every model × target (targets vary fastest).
func syntheticRunFrom(id string, finished time.Time, first, n, samples int, seed uint64) Run {
	rng := rand.New(rand.NewPCG(seed, 9))
	cells := make([]matrix.Cell, n)
	for i := range cells {
		model := fmt.Sprintf("model-%03d", (first+i)/len(targets))
		target := targets[(first+i)%len(targets)]
		c := matrix.Cell{
			Model: model, Family: []string{"vision", "text", "audio"}[i%3], Target: target, Status: result.StatusPass,
			Checks: []matrix.CheckResult{{Name: "open", Status: result.StatusPass}, {Name: "measure", Status: result.StatusPass},
				{Name: "matches-cpu", Status: result.StatusPass}},
			Outputs: []result.Output{{Name: "logits", DType: "float32", Shape: []int64{1, 1000}}},
			Size:    &result.ModelSize{Params: 25_000_000, WeightBytes: 100_000_000, Tier: "small", EstimateBytes: 250_000_000},
			Provenance: &result.Provenance{ORTVersion: "1.30.0", ORTLibrary: ".hwtest/lib/libonnxruntime.so.1", ORTLibSHA256: "ffb75a92",
				Provider: "CPUExecutionProvider", HostCPU: "Intel Xeon", ModelSHA256: fmt.Sprintf("%064x", i), CodeCommit: "0acca5b", Time: finished},
		}
		switch r := rng.IntN(20); {
		case r == 0:
			c.Status, c.Reason, c.Cause = result.StatusError, "session: CUDA failure 2: out of memory", "oom"
			c.Checks[0] = matrix.CheckResult{Name: "open", Status: result.StatusError, Reason: c.Reason, Cause: c.Cause}
			c.Checks = c.Checks[:1]
			c.Outputs, c.Size = nil, nil
		case r < 3:
			c.Status, c.Reason = result.StatusUnavailable, target+": not on this machine"
			c.Checks = []matrix.CheckResult{{Name: "open", Status: result.StatusUnavailable, Reason: c.Reason}}
			c.Outputs, c.Size, c.Provenance = nil, nil, nil
		}
		if c.Status == result.StatusPass && samples > 0 {
			c.SamplesMS = latencies(rng, samples)
			c.Metrics = metrics(c.SamplesMS)
		}
		cells[i] = c
	}
	m := matrix.Assemble(cells, nil, nil)
	m.RunID, m.Generated, m.Host = id, finished, "box"
	m.DetectedAt = finished.Add(-time.Minute)
	m.Detection = []result.Detected{{Target: "cpu", Available: true, Name: "Intel Xeon", Features: []string{"avx2", "fma"}},
		{Target: "cuda", Reason: "libcudart.so.12: cannot open shared object file"}}
	return Run{Matrix: m}
}

func latencies(rng *rand.Rand, n int) []float64 {
	base := 0.2 + 40*rng.Float64() // ms
	out := make([]float64, n)
	for i := range out {
		ms := base * math.Exp(0.05*rng.NormFloat64())
		if rng.IntN(200) == 0 {
			ms *= 3 // a preemption
		}
		out[i] = float64(time.Duration(ms*1e6)) / 1e6
	}
	return out
}

func metrics(samples []float64) *result.Metrics {
	s := slices.Sorted(slices.Values(samples))
	q := func(p float64) float64 { return s[int(p*float64(len(s)-1))] }
	var sum float64
	for _, x := range s {
		sum += x
	}
	var blocks []float64
	for b := 0; b < 10; b++ {
		blk := slices.Sorted(slices.Values(samples[b*len(samples)/10 : (b+1)*len(samples)/10]))
		blocks = append(blocks, blk[len(blk)/2])
	}
	return &result.Metrics{LoadMS: 120, FirstRunMS: 2 * s[0], Runs: len(s), WarmupRuns: 10, MinMS: s[0], P50MS: q(0.5), P90MS: q(0.9),
		P95MS: q(0.95), P99MS: q(0.99), MaxMS: s[len(s)-1], MeanMS: sum / float64(len(s)), BlockP50MS: blocks, Batch: 1,
		ThroughputPerS: 1000 / (sum / float64(len(s))), PeakRSSBytes: 400 << 20, BaseRSSBytes: 60 << 20}
}
