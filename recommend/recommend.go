// Package recommend answers "what should I deploy this model on?" from the history:
// the targets that passed, fastest first, each with its speedup over the CPU, its
// memory, how many runs back it and how much it varied across them; the partial
// targets apart; every other target with why it is out; and a pick per scenario
// (lowest latency, lowest memory, browser only, CPU only). A model that never ran
// is predicted from its family's results and its operators, and says so.
//
// It is pure: it takes what the history returns (the current matrix and each
// model's stored cells) and the hardware catalog, never the database.
package recommend

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/hwtest/hwtest/catalog"
	"github.com/hwtest/hwtest/matrix"
	"github.com/hwtest/hwtest/result"
	"github.com/hwtest/hwtest/spec"
	"github.com/hwtest/hwtest/stats"
)

// Kinds of recommendation: from the model's own measurements, or predicted.
const (
	Measured   = "measured"
	Prediction = "prediction"
)

// Why a target is out of a measured recommendation, besides its status (mismatch,
// error, unavailable, expected-fail).
const (
	WhyOverBudget = "over budget"
	WhyPrecision  = "precision"
	WhyNotRun     = "not run"
	WhyNoMetrics  = "not measured"
)

// Scenario names.
const (
	LowestLatency = "lowest latency"
	LowestMemory  = "lowest memory"
	BrowserOnly   = "browser only"
	CPUOnly       = "CPU only"
)

// History is what the history database says, as history.DB returns it.
type History struct {
	// Current is the latest result of every cell (db.Current).
	Current matrix.Matrix
	// Runs holds, per model, every stored result of it, newest first
	// (db.History(model, "")): the runs that back a cell's figures.
	Runs map[string][]matrix.Cell
}

// Budget is what the user asks of a target; zero fields ask nothing.
type Budget struct {
	MaxP50MS       float64 `json:"max_p50_ms,omitempty"`
	MaxP99MS       float64 `json:"max_p99_ms,omitempty"`
	MaxMemoryBytes int64   `json:"max_memory_bytes,omitempty"`
	Precision      string  `json:"precision,omitempty"` // hardware.yaml's precision of the target
}

// Recommendation is the answer for one model.
type Recommendation struct {
	// Kind is Measured, or Prediction for a model with no result in the history:
	// then nothing in it was measured on this model.
	Kind   string `json:"kind"`
	Model  string `json:"model"`
	Family string `json:"family,omitempty"`
	Budget Budget `json:"budget"`
	// Baseline is the target speedups are over: the first native target on ONNX
	// Runtime's CPU EP in hardware.yaml (cpu).
	Baseline string      `json:"baseline,omitempty"`
	Ranked   []Choice    `json:"ranked"`   // passed, fastest (lowest p50) first
	Partial  []Choice    `json:"partial"`  // ran and agreed, some nodes (partial) or all (cpu-only) on the CPU; fastest first
	Excluded []Exclusion `json:"excluded"` // every other target, with why
	// Predicted is, for a prediction, every target, the likeliest to work first.
	Predicted []Predicted `json:"predicted,omitempty"`
	// Basis says what a prediction rests on.
	Basis     string     `json:"basis,omitempty"`
	Scenarios []Scenario `json:"scenarios"`
}

// Choice is a target that ran the model and agreed with the CPU reference. Its
// figures are the medians of the runs that back it: the model's stored results on
// the target with the same key as the latest (model sha256, ONNX Runtime version and
// library, device, driver, host CPU) that passed (or were partial) and measured.
type Choice struct {
	Target string        `json:"target"`
	Runner string        `json:"runner,omitempty"`
	Status result.Status `json:"status"`
	P50MS  float64       `json:"p50_ms"`
	P99MS  float64       `json:"p99_ms"`
	// PeakMemoryBytes is the suite process's peak RSS for a native target, the PSS
	// of Chromium's processes for a browser target (MemoryScope says which).
	PeakMemoryBytes int64  `json:"peak_memory_bytes"`
	MemoryScope     string `json:"memory_scope,omitempty"`
	// SpeedupOverCPU is the baseline's p50 over this target's: above 1 is faster
	// than the CPU. 0 when there is no comparable baseline (SpeedupNote says why).
	SpeedupOverCPU float64 `json:"speedup_over_cpu,omitempty"`
	SpeedupNote    string  `json:"speedup_note,omitempty"`
	// Runs is how many runs back the figures; with two or more, the spread of their
	// p50s: min, max and coefficient of variation (stdev / mean).
	Runs      int     `json:"runs"`
	P50MinMS  float64 `json:"p50_min_ms"`
	P50MaxMS  float64 `json:"p50_max_ms"`
	P50CoV    float64 `json:"p50_cov_across_runs,omitempty"`
	SampleCoV float64 `json:"sample_cov"` // within the latest run's timed runs
	// For a partial or cpu-only target: the share of nodes (and of kernel time, when profiled)
	// that ran on the CPU, and the placement in words.
	CPUNodesPct float64 `json:"cpu_nodes_pct,omitempty"`
	CPUTimePct  float64 `json:"cpu_time_pct,omitempty"`
	Placement   string  `json:"placement,omitempty"`
	// Fixture names the tiny stand-in that ran in place of the real model: its
	// figures are not the real model's.
	Fixture string `json:"fixture,omitempty"`
	// Note is the reason a pass was flagged (a target declared unable that passed).
	Note    string    `json:"note,omitempty"`
	RunID   string    `json:"run_id,omitempty"` // the latest run
	RunTime time.Time `json:"run_time,omitzero"`

	hostCPU string
	onCPU   bool // runs on ONNX Runtime's CPU EP (natively or in WebAssembly)
}

// Exclusion is a target left out, with why.
type Exclusion struct {
	Target string `json:"target"`
	Why    string `json:"why"`    // mismatch, error, unavailable, expected-fail, over budget, precision, not run
	Reason string `json:"reason"` // the cell's reason (for unavailable: the probe's words), or the budget missed
	RunID  string `json:"run_id,omitempty"`
}

// Scenario is the pick for one deployment situation.
type Scenario struct {
	Name      string `json:"name"`
	Target    string `json:"target,omitempty"` // "" when nothing fits
	Text      string `json:"text"`             // the figure behind the pick, or why there is none
	Predicted bool   `json:"predicted,omitempty"`
}

// Model recommends targets for a model from its measured results.
func Model(h History, targets []catalog.Target, model string, b Budget) Recommendation {
	cat := catalogOf(targets)
	r := Recommendation{Kind: Measured, Model: model, Budget: b, Baseline: baseline(targets),
		Ranked: []Choice{}, Partial: []Choice{}, Excluded: []Exclusion{}}
	current := map[string]matrix.Cell{}
	for _, c := range h.Current.Cells {
		if c.Model == model {
			current[c.Target] = c
			if r.Family == "" {
				r.Family = c.Family
			}
		}
	}
	var base *Choice
	if c, ok := current[r.Baseline]; ok && c.Status.Agreed() && c.Metrics != nil {
		ch := choose(c, h.Runs[model], cat)
		base = &ch
	}
	for _, id := range targetOrder(h.Current.Targets, targets) {
		c, ran := current[id]
		t, known := cat[id]
		out := func(why, reason string) {
			r.Excluded = append(r.Excluded, Exclusion{Target: id, Why: why, Reason: reason, RunID: c.RunID})
		}
		switch {
		case b.Precision != "" && !known:
			out(WhyPrecision, fmt.Sprintf("not in hardware.yaml: its precision is unknown (--precision %s)", b.Precision))
		case b.Precision != "" && t.Precision != b.Precision:
			out(WhyPrecision, fmt.Sprintf("runs at %s (--precision %s)", t.Precision, b.Precision))
		case !ran:
			out(WhyNotRun, "no result in the history")
		case c.Status == result.StatusUnavailable:
			reason := c.Reason
			if c.FallsBackTo != "" {
				reason += " (falls back: " + c.FallsBackTo + ")"
			}
			out(string(c.Status), reason)
		case !c.Status.Agreed():
			out(string(c.Status), c.Reason)
		case c.Metrics == nil:
			out(WhyNoMetrics, "the cell has no measurements")
		default:
			ch := choose(c, h.Runs[model], cat)
			ch.speedup(base, r.Baseline)
			if over := b.over(ch); over != "" {
				out(WhyOverBudget, over)
			} else if ch.Status.OnCPU() { // cpu-only is never ranked as passing: its EP did nothing
				r.Partial = append(r.Partial, ch)
			} else {
				r.Ranked = append(r.Ranked, ch)
			}
		}
	}
	fastest := func(a, b Choice) int { return cmpFloat(a.P50MS, b.P50MS) }
	slices.SortStableFunc(r.Ranked, fastest)
	slices.SortStableFunc(r.Partial, fastest)
	r.Scenarios = scenarios(r)
	return r
}

// choose gathers a passing cell's figures from the runs that back it.
func choose(c matrix.Cell, runs []matrix.Cell, cat map[string]catalog.Target) Choice {
	t := cat[c.Target]
	ch := Choice{Target: c.Target, Runner: t.Runner, Status: c.Status, Fixture: c.Fixture,
		RunID: c.RunID, RunTime: c.RunTime, SampleCoV: c.Metrics.CoV, MemoryScope: c.Metrics.PeakRSSScope,
		onCPU: t.ID != "" && spec.TargetOf(t).EP() == spec.CPUProvider}
	if c.Reason != "" && c.Status == result.StatusPass {
		ch.Note = c.Reason
	}
	if c.Provenance != nil {
		ch.hostCPU = c.Provenance.HostCPU
	}
	var p50, p99, mem []float64
	for _, rc := range backing(c, runs) {
		p50 = append(p50, rc.Metrics.P50MS)
		p99 = append(p99, rc.Metrics.P99MS)
		mem = append(mem, float64(rc.Metrics.PeakRSSBytes))
	}
	ch.Runs = len(p50)
	ch.P50MS, ch.P99MS = stats.Median(p50), stats.Median(p99)
	ch.PeakMemoryBytes = int64(stats.Median(mem))
	ch.P50MinMS, ch.P50MaxMS = slices.Min(p50), slices.Max(p50)
	if len(p50) >= 2 {
		ch.P50CoV = cov(p50)
	}
	if c.Status.OnCPU() && c.Placement != nil {
		ch.CPUNodesPct, ch.CPUTimePct = c.Placement.Share(spec.CPUProvider)
		if c.Provenance != nil {
			ch.Placement = c.Placement.Summary(spec.TargetOf(t).EP())
		}
	}
	return ch
}

// backing are the runs whose measurements stand for the cell: its stored results on
// the same target with the same key, passed or partial, measured. The cell itself
// is one of them (it is stored); it is added when a caller's runs miss it.
func backing(c matrix.Cell, runs []matrix.Cell) []matrix.Cell {
	var out []matrix.Cell
	self := false
	for _, rc := range runs {
		if rc.Target != c.Target || !rc.Status.Agreed() || rc.Metrics == nil || !result.SameKey(c.Provenance, rc.Provenance) {
			continue
		}
		if rc.RunID == c.RunID {
			self = true
		}
		out = append(out, rc)
	}
	if !self {
		out = append(out, c)
	}
	return out
}

// speedup sets the choice's speedup over the baseline target, when the baseline
// passed on the same host CPU (a CPU of another machine is no baseline).
func (ch *Choice) speedup(base *Choice, name string) {
	switch {
	case name == "":
		ch.SpeedupNote = "hardware.yaml has no native target on ONNX Runtime's CPU EP to compare with"
	case base == nil:
		ch.SpeedupNote = name + " has no passing measurement of this model"
	case base.hostCPU != ch.hostCPU:
		ch.SpeedupNote = fmt.Sprintf("%s was measured on another host CPU (%s, here %s)", name, base.hostCPU, ch.hostCPU)
	case ch.P50MS > 0:
		ch.SpeedupOverCPU = base.P50MS / ch.P50MS
	}
}

// over says which budgets a choice misses and by how much; "" when it fits.
func (b Budget) over(ch Choice) string {
	var out []string
	miss := func(what string, got, limit float64, flag string, unit func(float64) string) {
		if limit > 0 && got > limit {
			out = append(out, fmt.Sprintf("%s %s > %s %s (by %s, +%.0f%%)", what, unit(got), flag, unit(limit), unit(got-limit), 100*(got/limit-1)))
		}
	}
	miss("p50", ch.P50MS, b.MaxP50MS, "--max-p50", ms)
	miss("p99", ch.P99MS, b.MaxP99MS, "--max-p99", ms)
	miss("peak memory", float64(ch.PeakMemoryBytes), float64(b.MaxMemoryBytes), "--max-memory", mib)
	return strings.Join(out, "; ")
}

// scenarios picks a target per deployment situation among the passing targets (the
// partial ones when none passed).
func scenarios(r Recommendation) []Scenario {
	cands, label := r.Ranked, ""
	if len(cands) == 0 {
		cands, label = r.Partial, " (partial: no target passed)"
	}
	pick := func(name string, keep func(Choice) bool, better func(a, b Choice) bool, text func(Choice) string, none string) Scenario {
		var best *Choice
		for i := range cands {
			if keep(cands[i]) && (best == nil || better(cands[i], *best)) {
				best = &cands[i]
			}
		}
		if best == nil {
			return Scenario{Name: name, Text: none}
		}
		return Scenario{Name: name, Target: best.Target, Text: text(*best) + label}
	}
	all := func(Choice) bool { return true }
	faster := func(a, b Choice) bool { return a.P50MS < b.P50MS }
	lighter := func(a, b Choice) bool {
		return a.PeakMemoryBytes < b.PeakMemoryBytes || a.PeakMemoryBytes == b.PeakMemoryBytes && a.P50MS < b.P50MS
	}
	latency := func(c Choice) string {
		return "p50 " + ms(c.P50MS) + " (" + runsText(c.Runs) + ")" + vsBaseline(c, r.Baseline)
	}
	noneWithin := "no target passed"
	if r.Budget != (Budget{}) {
		noneWithin += " within the budgets"
	}
	lowest := pick(LowestLatency, all, faster, latency, noneWithin)
	if lowest.Target != "" && len(cands) > 1 {
		best, next := cands[0], cands[1]
		if best.Runs >= 2 && next.Runs >= 2 && next.P50MinMS <= best.P50MaxMS {
			lowest.Text += fmt.Sprintf("; %s's p50 across runs (%s–%s) overlaps it: the order may be run-to-run noise", next.Target, ms(next.P50MinMS), ms(next.P50MaxMS))
		}
	}
	return []Scenario{
		lowest,
		pick(LowestMemory, all, lighter, func(c Choice) string { return mib(float64(c.PeakMemoryBytes)) + " peak (" + memoryKind(c.Runner) + ")" }, noneWithin),
		pick(BrowserOnly, func(c Choice) bool { return c.Runner == "browser" }, faster, latency, strings.Replace(noneWithin, "target", "browser target", 1)),
		pick(CPUOnly, func(c Choice) bool { return c.onCPU }, faster, latency, strings.Replace(noneWithin, "target", "target on ONNX Runtime's CPU EP (native or WebAssembly)", 1)),
	}
}

// vsBaseline is a choice's speedup in words: "; 8.2× slower than cpu".
func vsBaseline(c Choice, base string) string {
	if c.Target == base || c.SpeedupOverCPU == 0 {
		return ""
	}
	return "; " + speedupText(c.SpeedupOverCPU, base)
}

// speedupText reads a speedup both ways: "3.1× faster than cpu", "8.2× slower than cpu".
func speedupText(s float64, base string) string {
	if s >= 1 {
		return fmt.Sprintf("%s faster than %s", fmtX(s), base)
	}
	return fmt.Sprintf("%s slower than %s", fmtX(1/s), base)
}

func runsText(n int) string {
	if n == 1 {
		return "1 run"
	}
	return fmt.Sprintf("%d runs", n)
}

func memoryKind(runner string) string {
	if runner == "browser" {
		return "Chromium's processes, PSS"
	}
	return "process peak RSS"
}

// baseline is the first native target on ONNX Runtime's CPU EP: speedups are over it.
func baseline(targets []catalog.Target) string {
	for _, t := range targets {
		if t.Runner == "native" && spec.TargetOf(t).EP() == spec.CPUProvider {
			return t.ID
		}
	}
	return ""
}

func catalogOf(targets []catalog.Target) map[string]catalog.Target {
	out := make(map[string]catalog.Target, len(targets))
	for _, t := range targets {
		out[t.ID] = t
	}
	return out
}

// targetOrder is the matrix's target order (catalog first), then catalog targets
// it lacks.
func targetOrder(seen []string, targets []catalog.Target) []string {
	out := slices.Clone(seen)
	for _, t := range targets {
		if !slices.Contains(out, t.ID) {
			out = append(out, t.ID)
		}
	}
	return out
}

// cov is the coefficient of variation (sample stdev / mean).
func cov(xs []float64) float64 {
	mean := 0.0
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	ss := 0.0
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	if mean == 0 {
		return 0
	}
	return math.Sqrt(ss/float64(len(xs)-1)) / mean
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func ms(v float64) string { return fmt.Sprintf("%.4g ms", v) }

func mib(bytes float64) string { return fmt.Sprintf("%.1f MiB", bytes/(1<<20)) }
