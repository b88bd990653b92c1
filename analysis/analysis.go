// Package analysis sums up the history for people: which targets work (the
// compatibility summary), how fast (average, minimum and maximum p50 per target and
// per family, the fastest and slowest cells), how much faster than the CPU, how heavy,
// what changed over the runs (with regressions decided by package diff), what failed
// and how to fix it, and where the numbers come from. It reads matrices only (the
// history's current matrix and its runs): every number it gives is a measurement
// from them, or an aggregate of measurements that names the cells behind it.
//
// Latency, speedup and memory use the cells that ran and agreed with the CPU
// reference (pass; partial: some nodes ran on the CPU; cpu-only: all of them did),
// as the hardware_results view's success column does; a mismatch's numbers
// measured a wrong answer.
package analysis

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/hwtest/hwtest/diagnose"
	"github.com/hwtest/hwtest/diff"
	"github.com/hwtest/hwtest/matrix"
	"github.com/hwtest/hwtest/result"
)

// Defaults of Options.
const (
	DefaultBaseline    = "cpu"
	DefaultTop         = 10
	DefaultTrendWindow = 5
)

// Options tune Analyze; zero values take the defaults.
type Options struct {
	// Baseline is the target speedups are measured against.
	Baseline string
	// Top is how many cells the fastest, slowest and heaviest lists hold.
	Top int
	// TrendWindow is how many runs of a cell each side of a trend comparison holds
	// (see Trend). It must reach Diff.MinRuns for a change to be decided.
	TrendWindow int
	// Diff is the regression rule of the trend comparisons (diff's defaults).
	Diff diff.Options
}

func (o Options) withDefaults() Options {
	if o.Baseline == "" {
		o.Baseline = DefaultBaseline
	}
	if o.Top <= 0 {
		o.Top = DefaultTop
	}
	if o.TrendWindow <= 0 {
		o.TrendWindow = DefaultTrendWindow
	}
	return o
}

// Report is every summary of a current matrix and the runs behind it.
type Report struct {
	Runs          Runs          `json:"runs"`
	Compatibility Compatibility `json:"compatibility"`
	Performance   Performance   `json:"performance"`
	Speedup       Speedup       `json:"speedup"`
	Memory        Memory        `json:"memory"`
	// Trends are every cell's results over the runs, oldest first, in the current
	// matrix's order.
	Trends      []Trend     `json:"trends"`
	Failures    Failures    `json:"failures"`
	Environment Environment `json:"environment"`
}

// Runs says which runs the report read.
type Runs struct {
	Count int       `json:"count"`
	First RunRef    `json:"first"`
	Last  RunRef    `json:"last"`
	Cells int       `json:"cells"` // cells of the current matrix
	Time  time.Time `json:"time"`  // the newest cell's run
}

// RunRef names a run.
type RunRef struct {
	ID   string    `json:"id,omitempty"`
	Time time.Time `json:"time,omitzero"`
}

// Compatibility counts the current matrix's cells per status.
type Compatibility struct {
	Summary  map[result.Status]int `json:"summary"`
	ByTarget []StatusCount         `json:"by_target"`
	ByFamily []StatusCount         `json:"by_family"`
}

// StatusCount is the cells of one target or one family per status.
type StatusCount struct {
	Name   string                `json:"name"`
	Cells  int                   `json:"cells"`
	Counts map[result.Status]int `json:"counts"`
	// Usable is the cells that ran and agreed with the CPU reference (pass,
	// partial, cpu-only).
	Usable int `json:"usable"`
}

// CellRef is one measured cell, with the numbers the summaries quote.
type CellRef struct {
	Model          string        `json:"model"`
	Family         string        `json:"family,omitempty"`
	Target         string        `json:"target"`
	Status         result.Status `json:"status"`
	Fixture        string        `json:"fixture,omitempty"` // a stand-in ran: its numbers are not the real model's
	RunID          string        `json:"run_id,omitempty"`
	P50MS          float64       `json:"p50_ms"`
	P90MS          float64       `json:"p90_ms"`
	P99MS          float64       `json:"p99_ms"`
	ThroughputPerS float64       `json:"throughput_per_s"`
	PeakRSSBytes   int64         `json:"peak_rss_bytes"`
	// ModelPeakBytes is the model-attributable peak (result.Metrics); 0 where not
	// measured (browser targets).
	ModelPeakBytes int64 `json:"model_peak_bytes,omitempty"`
}

// Performance is latency (p50) per target and per family on each target, and the
// extreme cells.
type Performance struct {
	ByTarget []LatencyStat `json:"by_target"`
	ByFamily []LatencyStat `json:"by_family"` // per family and target
	Fastest  []CellRef     `json:"fastest"`
	Slowest  []CellRef     `json:"slowest"`
}

// LatencyStat is the p50 of a group of cells: their mean, and the cells with the
// lowest and highest.
type LatencyStat struct {
	Target    string  `json:"target"`
	Family    string  `json:"family,omitempty"`
	Cells     int     `json:"cells"`
	MeanP50MS float64 `json:"mean_p50_ms"`
	Min       CellRef `json:"min"`
	Max       CellRef `json:"max"`
}

// Speedup is the baseline's p50 over each target's, per model, and aggregated per
// target and per family (geometric mean, the average of ratios).
type Speedup struct {
	Baseline string        `json:"baseline"`
	ByTarget []SpeedupStat `json:"by_target"`
	ByFamily []SpeedupStat `json:"by_family"`
	ByModel  []SpeedupCell `json:"by_model"`
}

// SpeedupCell is one model on one target against the same model on the baseline;
// both cells ran and agreed with the reference. Above 1: faster than the baseline.
type SpeedupCell struct {
	Model         string  `json:"model"`
	Family        string  `json:"family,omitempty"`
	Target        string  `json:"target"`
	Fixture       string  `json:"fixture,omitempty"`
	Speedup       float64 `json:"speedup"`
	P50MS         float64 `json:"p50_ms"`
	BaselineP50MS float64 `json:"baseline_p50_ms"`
	RunID         string  `json:"run_id,omitempty"`          // the target cell's run
	BaselineRunID string  `json:"baseline_run_id,omitempty"` // the baseline cell's run
}

// SpeedupStat aggregates the speedups of a target (and family): the models listed
// are the cells behind it (each on the target and on the baseline).
type SpeedupStat struct {
	Target  string      `json:"target"`
	Family  string      `json:"family,omitempty"`
	Cells   int         `json:"cells"`
	GeoMean float64     `json:"geomean"`
	Min     SpeedupCell `json:"min"`
	Max     SpeedupCell `json:"max"`
	Models  []string    `json:"models"`
}

// Memory is peak resident memory per target and the heaviest models on each. What
// it counts differs per target (Scope): the suite process for native targets,
// Chromium's processes for browser targets; compare models on one target.
type Memory struct {
	ByTarget []MemoryStat     `json:"by_target"`
	Heaviest []TargetHeaviest `json:"heaviest"`
}

// MemoryStat is the peak RSS of a target's cells.
type MemoryStat struct {
	Target    string  `json:"target"`
	Scope     string  `json:"scope,omitempty"`
	Cells     int     `json:"cells"`
	MeanBytes int64   `json:"mean_bytes"`
	Min       CellRef `json:"min"`
	Max       CellRef `json:"max"`
	// ModelPeakCells of the cells have a model-attributable peak; MeanModelPeakBytes
	// is its mean over them, ModelPeakScope what it counts.
	ModelPeakCells     int    `json:"model_peak_cells,omitempty"`
	MeanModelPeakBytes int64  `json:"mean_model_peak_bytes,omitempty"`
	ModelPeakScope     string `json:"model_peak_scope,omitempty"`
}

// TargetHeaviest is a target's cells by peak RSS, the heaviest first.
type TargetHeaviest struct {
	Target string    `json:"target"`
	Scope  string    `json:"scope,omitempty"`
	Cells  []CellRef `json:"cells"`
}

// Failures are the current matrix's problems by severity, each group with its fix
// (package diagnose).
type Failures struct {
	Total      int                       `json:"total"`
	BySeverity map[diagnose.Severity]int `json:"by_severity"`
	Groups     []diagnose.Group          `json:"groups"`
}

// Environment is where the numbers come from: what the current matrix's cells
// record, and what the newest run's detection said about each target.
type Environment struct {
	matrix.Environment
	Host       string            `json:"host,omitempty"`
	DetectedAt time.Time         `json:"detected_at,omitzero"`
	DetectedBy string            `json:"detected_by,omitempty"` // the run whose detection this is
	Detection  []result.Detected `json:"detection,omitempty"`
}

// Timed: the cell ran, agreed with the CPU reference and was timed: the cells
// latency, speedup and memory figures count.
func Timed(c matrix.Cell) bool {
	return c.Status.Agreed() && c.Metrics != nil && c.Metrics.P50MS > 0
}

func ref(c matrix.Cell) CellRef {
	r := CellRef{Model: c.Model, Family: c.Family, Target: c.Target, Status: c.Status, Fixture: c.Fixture, RunID: c.RunID}
	if m := c.Metrics; m != nil {
		r.P50MS, r.P90MS, r.P99MS, r.ThroughputPerS, r.PeakRSSBytes = m.P50MS, m.P90MS, m.P99MS, m.ThroughputPerS, m.PeakRSSBytes
		r.ModelPeakBytes = m.ModelPeakBytes
	}
	return r
}

// Analyze sums up current (the latest result of each cell; for one run, that run)
// and runs (every run's matrix, in any order: they are sorted by time) for people.
func Analyze(current matrix.Matrix, runs []matrix.Matrix, opts Options) Report {
	opts = opts.withDefaults()
	families := familyOrder(current)
	r := Report{
		Runs:          runsOf(current, runs),
		Compatibility: compatibility(current, families),
		Performance:   performance(current, families, opts.Top),
		Speedup:       speedup(current, families, opts.Baseline),
		Memory:        memory(current, opts.Top),
		Trends:        trends(current, runs, opts),
		Failures:      failures(current),
		Environment:   environment(current, runs),
	}
	return r
}

// familyOrder lists the families in the order their first model appears.
func familyOrder(m matrix.Matrix) []string {
	var out []string
	for _, c := range m.Cells {
		if !slices.Contains(out, c.Family) {
			out = append(out, c.Family)
		}
	}
	return out
}

func runsOf(current matrix.Matrix, runs []matrix.Matrix) Runs {
	r := Runs{Count: len(runs), Cells: len(current.Cells), Time: current.Generated}
	sorted := sortRuns(runs)
	if len(sorted) > 0 {
		f, l := sorted[0], sorted[len(sorted)-1]
		r.First, r.Last = RunRef{f.RunID, f.Generated}, RunRef{l.RunID, l.Generated}
	}
	return r
}

// sortRuns orders runs oldest first (by time, then id), as the history lists them.
func sortRuns(runs []matrix.Matrix) []matrix.Matrix {
	out := slices.Clone(runs)
	slices.SortStableFunc(out, func(a, b matrix.Matrix) int {
		if c := a.Generated.Compare(b.Generated); c != 0 {
			return c
		}
		return cmp.Compare(a.RunID, b.RunID)
	})
	return out
}

func compatibility(m matrix.Matrix, families []string) Compatibility {
	out := Compatibility{Summary: map[result.Status]int{}}
	byTarget := map[string]*StatusCount{}
	byFamily := map[string]*StatusCount{}
	get := func(idx map[string]*StatusCount, name string) *StatusCount {
		if idx[name] == nil {
			idx[name] = &StatusCount{Name: name, Counts: map[result.Status]int{}}
		}
		return idx[name]
	}
	for _, c := range m.Cells {
		out.Summary[c.Status]++
		for _, s := range []*StatusCount{get(byTarget, c.Target), get(byFamily, c.Family)} {
			s.Cells++
			s.Counts[c.Status]++
			if c.Status.Agreed() {
				s.Usable++
			}
		}
	}
	for _, t := range m.Targets {
		if s := byTarget[t]; s != nil {
			out.ByTarget = append(out.ByTarget, *s)
		}
	}
	for _, f := range families {
		out.ByFamily = append(out.ByFamily, *byFamily[f])
	}
	return out
}

func performance(m matrix.Matrix, families []string, top int) Performance {
	var cells []matrix.Cell
	for _, c := range m.Cells {
		if Timed(c) {
			cells = append(cells, c)
		}
	}
	var p Performance
	for _, t := range m.Targets {
		if s, ok := latencyStat(cells, func(c matrix.Cell) bool { return c.Target == t }); ok {
			s.Target = t
			p.ByTarget = append(p.ByTarget, s)
		}
	}
	for _, f := range families {
		for _, t := range m.Targets {
			if s, ok := latencyStat(cells, func(c matrix.Cell) bool { return c.Family == f && c.Target == t }); ok {
				s.Target, s.Family = t, f
				p.ByFamily = append(p.ByFamily, s)
			}
		}
	}
	// Stable sorts on the matrix's order: equal p50s keep model, then target order.
	byP50 := slices.Clone(cells)
	slices.SortStableFunc(byP50, func(a, b matrix.Cell) int { return cmp.Compare(a.Metrics.P50MS, b.Metrics.P50MS) })
	for _, c := range byP50[:min(top, len(byP50))] {
		p.Fastest = append(p.Fastest, ref(c))
	}
	slices.SortStableFunc(byP50, func(a, b matrix.Cell) int { return cmp.Compare(b.Metrics.P50MS, a.Metrics.P50MS) })
	for _, c := range byP50[:min(top, len(byP50))] {
		p.Slowest = append(p.Slowest, ref(c))
	}
	return p
}

func latencyStat(cells []matrix.Cell, in func(matrix.Cell) bool) (LatencyStat, bool) {
	var s LatencyStat
	var sum float64
	for _, c := range cells {
		if !in(c) {
			continue
		}
		p50 := c.Metrics.P50MS
		if s.Cells == 0 || p50 < s.Min.P50MS {
			s.Min = ref(c)
		}
		if s.Cells == 0 || p50 > s.Max.P50MS {
			s.Max = ref(c)
		}
		s.Cells++
		sum += p50
	}
	if s.Cells == 0 {
		return s, false
	}
	s.MeanP50MS = sum / float64(s.Cells)
	return s, true
}

func speedup(m matrix.Matrix, families []string, baseline string) Speedup {
	out := Speedup{Baseline: baseline}
	base := map[string]matrix.Cell{}
	for _, c := range m.Cells {
		if c.Target == baseline && Timed(c) {
			base[c.Model] = c
		}
	}
	for _, c := range m.Cells {
		b, ok := base[c.Model]
		if c.Target == baseline || !ok || !Timed(c) {
			continue
		}
		out.ByModel = append(out.ByModel, SpeedupCell{
			Model: c.Model, Family: c.Family, Target: c.Target, Fixture: c.Fixture,
			Speedup: b.Metrics.P50MS / c.Metrics.P50MS, P50MS: c.Metrics.P50MS, BaselineP50MS: b.Metrics.P50MS,
			RunID: c.RunID, BaselineRunID: b.RunID,
		})
	}
	for _, t := range m.Targets {
		if s, ok := speedupStat(out.ByModel, func(c SpeedupCell) bool { return c.Target == t }); ok {
			s.Target = t
			out.ByTarget = append(out.ByTarget, s)
		}
	}
	for _, f := range families {
		for _, t := range m.Targets {
			if s, ok := speedupStat(out.ByModel, func(c SpeedupCell) bool { return c.Family == f && c.Target == t }); ok {
				s.Target, s.Family = t, f
				out.ByFamily = append(out.ByFamily, s)
			}
		}
	}
	return out
}

func speedupStat(cells []SpeedupCell, in func(SpeedupCell) bool) (SpeedupStat, bool) {
	var s SpeedupStat
	var logSum float64
	for _, c := range cells {
		if !in(c) {
			continue
		}
		if s.Cells == 0 || c.Speedup < s.Min.Speedup {
			s.Min = c
		}
		if s.Cells == 0 || c.Speedup > s.Max.Speedup {
			s.Max = c
		}
		s.Cells++
		logSum += math.Log(c.Speedup)
		s.Models = append(s.Models, c.Model)
	}
	if s.Cells == 0 {
		return s, false
	}
	s.GeoMean = math.Exp(logSum / float64(s.Cells))
	return s, true
}

func memory(m matrix.Matrix, top int) Memory {
	var out Memory
	for _, t := range m.Targets {
		var cells []matrix.Cell
		for _, c := range m.Cells {
			if c.Target == t && Timed(c) && c.Metrics.PeakRSSBytes > 0 {
				cells = append(cells, c)
			}
		}
		if len(cells) == 0 {
			continue
		}
		s := MemoryStat{Target: t, Scope: cells[0].Metrics.PeakRSSScope, Cells: len(cells)}
		var sum, modelSum int64
		for i, c := range cells {
			rss := c.Metrics.PeakRSSBytes
			sum += rss
			if mp := c.Metrics.ModelPeakBytes; mp > 0 {
				s.ModelPeakCells++
				modelSum += mp
				s.ModelPeakScope = c.Metrics.ModelPeakScope
			}
			if i == 0 || rss < s.Min.PeakRSSBytes {
				s.Min = ref(c)
			}
			if i == 0 || rss > s.Max.PeakRSSBytes {
				s.Max = ref(c)
			}
		}
		s.MeanBytes = sum / int64(len(cells))
		if s.ModelPeakCells > 0 {
			s.MeanModelPeakBytes = modelSum / int64(s.ModelPeakCells)
		} else {
			s.ModelPeakScope = cells[0].Metrics.ModelPeakScope // why there is none
		}
		out.ByTarget = append(out.ByTarget, s)

		slices.SortStableFunc(cells, func(a, b matrix.Cell) int { return cmp.Compare(b.Metrics.PeakRSSBytes, a.Metrics.PeakRSSBytes) })
		h := TargetHeaviest{Target: t, Scope: s.Scope}
		for _, c := range cells[:min(top, len(cells))] {
			h.Cells = append(h.Cells, ref(c))
		}
		out.Heaviest = append(out.Heaviest, h)
	}
	return out
}

// Findings classifies every cell that is not a plain pass (a pass with a reason is
// an unexpected pass, flagged), as `hwtest report --errors` lists them.
func Findings(m matrix.Matrix) []diagnose.Finding {
	var out []diagnose.Finding
	for _, c := range m.Cells {
		if c.Status == result.StatusPass && c.Reason == "" {
			continue
		}
		f := diagnose.ClassifyCause(string(c.Status), c.Cause, c.Target, c.Reason)
		f.Model = c.Model
		out = append(out, f)
	}
	return out
}

func failures(m matrix.Matrix) Failures {
	findings := Findings(m)
	out := Failures{Total: len(findings), BySeverity: map[diagnose.Severity]int{}, Groups: diagnose.Groups(findings)}
	for _, f := range findings {
		out.BySeverity[f.Severity]++
	}
	if out.Groups == nil {
		out.Groups = []diagnose.Group{}
	}
	return out
}

func environment(current matrix.Matrix, runs []matrix.Matrix) Environment {
	e := Environment{Environment: current.Environment, Host: current.Host, DetectedAt: current.DetectedAt, Detection: current.Detection}
	if len(e.Detection) > 0 {
		e.DetectedBy = current.RunID
		return e
	}
	sorted := sortRuns(runs)
	for i := len(sorted) - 1; i >= 0; i-- {
		if r := sorted[i]; len(r.Detection) > 0 {
			e.Host, e.DetectedAt, e.Detection, e.DetectedBy = r.Host, r.DetectedAt, r.Detection, r.RunID
			break
		}
	}
	return e
}
