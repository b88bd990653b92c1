// Package result holds what hwtest learns about a matrix cell and nothing heavier:
// statuses, the cell report a suite records, metrics, deviations, placement,
// provenance, check names and the Ginkgo labels that locate a cell. The matrix, the
// reports and the CLI read results through it alone, without linking ONNX Runtime,
// Chromium or Ginkgo (go list -deps ./matrix shows it).
package result

import (
	"encoding/json"
	"fmt"
	"time"
)

// Status is the state of one matrix cell (model × target). See DESIGN.md.
type Status string

const (
	StatusPass         Status = "pass"          // ran on the target's EP, outputs within tolerance
	StatusPartial      Status = "partial"       // ran and matched, but some nodes ran on CPU
	StatusCPUOnly      Status = "cpu-only"      // ran and matched, but the target's EP took no node: it ran on the CPU
	StatusMismatch     Status = "mismatch"      // ran, outputs outside tolerance
	StatusError        Status = "error"         // target present, session creation or run failed
	StatusUnavailable  Status = "unavailable"   // target not on this machine
	StatusExpectedFail Status = "expected-fail" // declared incompatible in hardware.yaml
)

// Agreed: the cell ran and agreed with the CPU reference (pass; partial: some
// nodes on the CPU; cpu-only: every node on the CPU). Latency, speedup and memory
// figures count only such cells, and the history's hardware_results.success is the
// same test. A cpu-only cell agreed (its user gets the same answer, at the speed
// measured) but it is never a pass of the target: its EP did none of the work.
func (s Status) Agreed() bool { return s == StatusPass || s == StatusPartial || s == StatusCPUOnly }

// Failed: the target is here and the cell did not give the reference's answer
// (error, mismatch): what `hwtest run` exits non-zero for. An expected-fail was
// declared; an unavailable target was not tried.
func (s Status) Failed() bool { return s == StatusError || s == StatusMismatch }

// OnCPU: the cell agreed but some or all of its nodes ran on the CPU, not on the
// target's EP (partial or cpu-only).
func (s Status) OnCPU() bool { return s == StatusPartial || s == StatusCPUOnly }

// ReportEntryName is the name of the Ginkgo report entry every hwtest spec records;
// its value is a CellReport serialised as JSON (Ginkgo keeps it in
// ReportEntries[].Value.AsJSON), which is how results leave a suite process.
const ReportEntryName = "hwtest"

// CellReport is what one spec learned about one (model, target) cell. A cell's specs
// each record one; the matrix merges them (the worst status wins).
type CellReport struct {
	Model   string `json:"model"`
	Family  string `json:"family"`
	Target  string `json:"target"`
	Check   string `json:"check"` // "open", "measure", or the family invariant's name
	Status  Status `json:"status"`
	Reason  string `json:"reason,omitempty"`  // why it is not pass: the exact error or probe result
	Cause   Cause  `json:"cause,omitempty"`   // the class of a failure, from the code that saw it
	Fixture string `json:"fixture,omitempty"` // e.g. "tiny-random" when a zoo model stood in
	// Skipped says why a check did not apply to this model's outputs (top-5 classes
	// of a dense map); the step is skipped, and its status is the cell's as it was.
	Skipped string `json:"skipped,omitempty"`

	// Set by the "measure" check.
	Metrics *Metrics `json:"metrics,omitempty"`
	// Set by comparison checks: the worst element against the CPU reference.
	Worst *Deviation `json:"worst,omitempty"`
	// Set when the run happened on another target than the one asked for.
	Fallback string `json:"fallback,omitempty"` // "from → to"
	// The target's fallback chain from hardware.yaml, so an unavailable cell can say
	// which target's results stand in for it.
	FallbackChain []string `json:"fallback_chain,omitempty"`

	// Where the nodes ran, when the target's EP could not take the whole model.
	Placement *Placement `json:"placement,omitempty"`

	// The model file that ran, read at open: how big it is.
	Size *ModelSize `json:"size,omitempty"`

	// Outputs the target returned at open: names, dtypes and shapes.
	Outputs []Output `json:"outputs,omitempty"`

	// SamplesMS are the measure check's timed latencies in milliseconds, in the order
	// they ran: the raw data the history keeps. The matrix's JSON does not carry
	// them (Metrics.BlockP50MS sums them up); the history database does.
	SamplesMS []float64 `json:"samples_ms,omitempty"`

	Provenance *Provenance `json:"provenance,omitempty"`
}

// ModelSize is what a model's weights say about its size, read from the file.
type ModelSize struct {
	Params      int64  `json:"params"`       // floating-point weights, stored and made in-graph
	WeightBytes int64  `json:"weight_bytes"` // weight bytes, stored and made in-graph: the least memory the weights need
	Tier        string `json:"tier"`         // catalog.TierFor(Params)
	// EstimateBytes is a rough peak-memory estimate: the weights, plus the same again
	// for ONNX Runtime's pre-packed and optimised copies, plus its own footprint.
	EstimateBytes int64 `json:"estimate_bytes"`
}

// Metrics follows the measurement definitions in DESIGN.md.
type Metrics struct {
	LoadMS     float64 `json:"load_ms"`      // session creation, graph optimisation included
	FirstRunMS float64 `json:"first_run_ms"` // first inference, apart from the warm runs
	Runs       int     `json:"runs"`         // warm runs measured
	WarmupRuns int     `json:"warmup_runs"`  // runs discarded before measuring
	WarmupMS   float64 `json:"warmup_ms"`    // how long warm-up took
	// WarmupSettled: warm-up ended because two consecutive windows of runs had
	// medians within the settle tolerance (3%), not at its time bound; WarmupDrift is
	// the relative difference of its last two window medians.
	WarmupSettled bool    `json:"warmup_settled"`
	WarmupDrift   float64 `json:"warmup_drift"`
	TimedMS       float64 `json:"timed_ms"` // how long the timed runs took, wall clock
	MinMS         float64 `json:"min_ms"`
	P50MS         float64 `json:"p50_ms"`
	P90MS         float64 `json:"p90_ms"`
	P95MS         float64 `json:"p95_ms"`
	P99MS         float64 `json:"p99_ms"`
	MaxMS         float64 `json:"max_ms"`
	MeanMS        float64 `json:"mean_ms"`
	StdevMS       float64 `json:"stdev_ms"`
	CoV           float64 `json:"cov"`
	// BlockP50MS are the medians of consecutive blocks of the timed runs, in the
	// order they ran: repeated measurements within one cell, which is what a
	// regression test between two runs compares (see the history's diff).
	BlockP50MS []float64 `json:"block_p50_ms,omitempty"`
	// BlockCoV is the coefficient of variation of BlockP50MS: how much the
	// repeated measurements within the cell disagree. Unstable says why the cell's
	// latency is not to be trusted (BlockCoV over UnstableBlockCoV); empty when it is.
	BlockCoV       float64 `json:"block_cov"`
	Unstable       string  `json:"unstable,omitempty"`
	ThroughputPerS float64 `json:"throughput_per_s"` // batch / mean latency
	Batch          int64   `json:"batch"`
	PeakRSSBytes   int64   `json:"peak_rss_bytes"` // VmHWM over the session's life, reset before it
	BaseRSSBytes   int64   `json:"base_rss_bytes"` // RSS just before the session was created
	// PeakRSSScope says whose memory PeakRSSBytes is: this process's peak RSS, or,
	// for browser targets, Chromium's processes' PSS after the runs (shared pages
	// counted once in all, not once per process; the kernel keeps no peak of it).
	PeakRSSScope string `json:"peak_rss_scope,omitempty"`
	// ModelPeakBytes is the model-attributable peak: PeakRSSBytes − BaseRSSBytes,
	// what creating and running the target's session added to the process at its
	// highest (weights, ONNX Runtime's copies of them, activations, arena). Zero
	// when not measured; ModelPeakScope then says why (browser targets: Chromium's
	// PSS has no peak and no baseline to subtract).
	ModelPeakBytes int64  `json:"model_peak_bytes,omitempty"`
	ModelPeakScope string `json:"model_peak_scope,omitempty"`
}

// Detected is what detection said about one target at the start of a run.
type Detected struct {
	Target    string   `json:"target"`
	Available bool     `json:"available"`
	Name      string   `json:"name,omitempty"`     // the device or runtime serving it
	Features  []string `json:"features,omitempty"` // e.g. the CPU's instruction sets
	Reason    string   `json:"reason,omitempty"`   // why not available: the probe's words
}

// Output is one output tensor as the target returned it.
type Output struct {
	Name  string  `json:"name"`
	DType string  `json:"dtype"` // ONNX's name: float32, int64, …
	Shape []int64 `json:"shape"`
}

// Deviation locates the largest error of a comparison.
type Deviation struct {
	Output  string  `json:"output"`
	Index   int     `json:"index"`
	Got     float64 `json:"got"`
	Want    float64 `json:"want"`
	AbsErr  float64 `json:"abs_err"`
	Allowed float64 `json:"allowed"` // atol + rtol*|want| at that element
}

// Provenance says what produced a result.
type Provenance struct {
	ORTVersion   string            `json:"ort_version"`
	ORTLibrary   string            `json:"ort_library"`
	ORTLibSHA256 string            `json:"ort_library_sha256"`
	Provider     string            `json:"provider"`
	Options      map[string]string `json:"options,omitempty"`
	HostCPU      string            `json:"host_cpu"`
	Device       string            `json:"device,omitempty"`
	Driver       string            `json:"driver,omitempty"`
	ModelSHA256  string            `json:"model_sha256,omitempty"`
	// The threads the measured session ran on: ONNX Runtime's intra-op pool (the
	// calling thread included) and inter-op pool (1: hwtest keeps ONNX Runtime's
	// sequential execution), or for browser targets onnxruntime-web's wasm threads
	// (inter-op 0: the page has none).
	IntraOpThreads int `json:"intra_op_threads,omitempty"`
	InterOpThreads int `json:"inter_op_threads,omitempty"`
	// CPUGovernor is the CPUs' frequency governor, or why none could be read.
	CPUGovernor   string `json:"cpu_governor,omitempty"`
	CatalogCommit string `json:"catalog_commit,omitempty"` // last commit that touched the catalogs
	// Catalog names the catalog files that ran, each with its sha256 (prefix):
	// "examples/my-model/models.yaml (sha256 1a2b3c4d5e6f), hardware.yaml (sha256 …)".
	// A catalog outside git has no commit; this still says which file it was.
	Catalog    string    `json:"catalog,omitempty"`
	CodeCommit string    `json:"code_commit,omitempty"` // the checkout that ran ("+dirty": with local changes)
	Time       time.Time `json:"time"`
}

// Within reports whether a deviation is inside its allowance.
func (d *Deviation) Within() bool { return d == nil || d.AbsErr <= d.Allowed }

func (d *Deviation) String() string {
	if d == nil {
		return "no elements"
	}
	return fmt.Sprintf("output %q[%d]: got %.6g, want %.6g (|error| %.3g, allowed %.3g)", d.Output, d.Index, d.Got, d.Want, d.AbsErr, d.Allowed)
}

// String keeps report entries readable when Ginkgo prints them.
func (r CellReport) String() string {
	b, _ := json.Marshal(r)
	return string(b)
}

// The steps of a cell besides its family invariants, as CellReport.Check names
// them: an invariant's check is named by the sentence its spec says.
const (
	CheckOpen    = "open"    // probe, load, CPU reference, session creation, first run
	CheckMeasure = "measure" // warm-up and timed runs, memory
)

// KeyField is one thing a cell's latency and memory depend on besides the cell
// itself (model, target).
type KeyField struct {
	Name string
	Get  func(*Provenance) string
}

// KeyFields make a measurement's key: numbers measured under different keys are
// not compared (hwtest diff) or pooled (hwtest recommend).
var KeyFields = []KeyField{
	{"model sha256", func(p *Provenance) string { return p.ModelSHA256 }},
	{"ONNX Runtime", func(p *Provenance) string { return p.ORTVersion }},
	{"ONNX Runtime library sha256", func(p *Provenance) string { return p.ORTLibSHA256 }},
	{"device", func(p *Provenance) string { return p.Device }},
	{"driver", func(p *Provenance) string { return p.Driver }},
	{"host CPU", func(p *Provenance) string { return p.HostCPU }},
}

// SameKey: both provenances are known and every key field agrees.
func SameKey(a, b *Provenance) bool {
	if a == nil || b == nil {
		return false
	}
	for _, f := range KeyFields {
		if f.Get(a) != f.Get(b) {
			return false
		}
	}
	return true
}
