package recommend

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hwtest/hwtest/catalog"
	"github.com/hwtest/hwtest/result"
	"github.com/hwtest/hwtest/stats"
)

// FamilyRecommendation is the answer for a pipeline family: its models' measured
// recommendations gathered per target, and each model's own answer (a prediction
// for a model that never ran).
type FamilyRecommendation struct {
	Family   string   `json:"family"`
	Budget   Budget   `json:"budget"`
	Baseline string   `json:"baseline,omitempty"`
	Measured []string `json:"measured"` // the family's models with results
	// Targets are those that passed (or were partial for) at least one measured
	// model, the highest median speedup over the baseline first.
	Targets []FamilyTarget `json:"targets"`
	// Excluded are the targets no measured model passed on, with why per model.
	Excluded  []FamilyExclusion `json:"excluded"`
	Scenarios []Scenario        `json:"scenarios"`
	Models    []Recommendation  `json:"models"`
}

// FamilyTarget is one target across the family's measured models.
type FamilyTarget struct {
	Target        string   `json:"target"`
	Runner        string   `json:"runner,omitempty"`
	Passed        []string `json:"passed"`             // models that passed here
	Partial       []string `json:"partial,omitempty"`  // models partly or wholly on the CPU here
	CPUOnlyModels []string `json:"cpu_only,omitempty"` // those of Partial whose every node ran on the CPU
	// Out maps why a model is out here (mismatch, error, over budget…) to the models.
	Out map[string][]string `json:"out,omitempty"`
	// The speedups over the baseline of the models that ran here: median, range,
	// and how many models they come from.
	SpeedupMedian float64 `json:"speedup_median,omitempty"`
	SpeedupMin    float64 `json:"speedup_min,omitempty"`
	SpeedupMax    float64 `json:"speedup_max,omitempty"`
	SpeedupModels int     `json:"speedup_models"`
	// PeakMemoryMedianBytes is the median of the models' peak memory here.
	PeakMemoryMedianBytes int64 `json:"peak_memory_median_bytes"`

	onCPU bool
}

// FamilyExclusion is a target no measured model of the family passed on.
type FamilyExclusion struct {
	Target string              `json:"target"`
	Out    map[string][]string `json:"out"` // why → models
}

// Family recommends targets for a pipeline family. models are the family's models
// (catalog order); those without results in the history are predicted, from the
// others and from their operators (ops, by model; missing entries mean unread).
func Family(h History, targets []catalog.Target, family string, models []string, ops map[string]Operators, b Budget) FamilyRecommendation {
	f := FamilyRecommendation{Family: family, Budget: b, Baseline: baseline(targets),
		Measured: []string{}, Targets: []FamilyTarget{}, Excluded: []FamilyExclusion{}}
	var recs []Recommendation
	for _, m := range familyModels(h, family, models) {
		if measured(h, m) {
			f.Measured = append(f.Measured, m)
			r := Model(h, targets, m, b)
			recs = append(recs, r)
			f.Models = append(f.Models, r)
		} else {
			f.Models = append(f.Models, Predict(h, targets, m, family, ops[m], b))
		}
	}
	f.Targets, f.Excluded = gather(recs, targetOrder(h.Current.Targets, targets))
	f.Scenarios = familyScenarios(f)
	return f
}

// familyModels are the given models, then any other model of the family the
// history holds, in the matrix's order.
func familyModels(h History, family string, models []string) []string {
	out := slices.Clone(models)
	for _, c := range h.Current.Cells {
		if c.Family == family && !slices.Contains(out, c.Model) {
			out = append(out, c.Model)
		}
	}
	return out
}

func measured(h History, model string) bool {
	for _, c := range h.Current.Cells {
		if c.Model == model {
			return true
		}
	}
	return false
}

// gather sums measured recommendations up per target.
func gather(recs []Recommendation, order []string) ([]FamilyTarget, []FamilyExclusion) {
	by := map[string]*FamilyTarget{}
	get := func(id string) *FamilyTarget {
		if by[id] == nil {
			by[id] = &FamilyTarget{Target: id, Passed: []string{}}
		}
		return by[id]
	}
	speedups, memory := map[string][]float64{}, map[string][]float64{}
	for _, r := range recs {
		for _, list := range [][]Choice{r.Ranked, r.Partial} {
			for _, ch := range list {
				t := get(ch.Target)
				t.Runner, t.onCPU = ch.Runner, ch.onCPU
				if ch.Status.OnCPU() { // a cpu-only model never counts as passed here
					t.Partial = append(t.Partial, r.Model)
					if ch.Status == result.StatusCPUOnly {
						t.CPUOnlyModels = append(t.CPUOnlyModels, r.Model)
					}
				} else {
					t.Passed = append(t.Passed, r.Model)
				}
				if ch.SpeedupOverCPU > 0 {
					speedups[ch.Target] = append(speedups[ch.Target], ch.SpeedupOverCPU)
				}
				memory[ch.Target] = append(memory[ch.Target], float64(ch.PeakMemoryBytes))
			}
		}
		for _, x := range r.Excluded {
			if x.Why == WhyNotRun {
				continue
			}
			t := get(x.Target)
			if t.Out == nil {
				t.Out = map[string][]string{}
			}
			t.Out[x.Why] = append(t.Out[x.Why], r.Model)
		}
	}
	var ok []FamilyTarget
	var out []FamilyExclusion
	for _, id := range order {
		t := by[id]
		switch {
		case t == nil:
		case len(t.Passed)+len(t.Partial) == 0:
			out = append(out, FamilyExclusion{Target: id, Out: t.Out})
		default:
			if s := speedups[id]; len(s) > 0 {
				t.SpeedupMedian, t.SpeedupMin, t.SpeedupMax, t.SpeedupModels = stats.Median(s), slices.Min(s), slices.Max(s), len(s)
			}
			t.PeakMemoryMedianBytes = int64(stats.Median(memory[id]))
			ok = append(ok, *t)
		}
	}
	// Highest median speedup first; targets without one (no baseline) after.
	slices.SortStableFunc(ok, func(a, b FamilyTarget) int { return cmpFloat(b.SpeedupMedian, a.SpeedupMedian) })
	if ok == nil {
		ok = []FamilyTarget{}
	}
	if out == nil {
		out = []FamilyExclusion{}
	}
	return ok, out
}

// familyScenarios picks among the targets that passed (or were partial) for at
// least as many measured models as were out there; a pick with models out says so.
func familyScenarios(f FamilyRecommendation) []Scenario {
	pick := func(name string, keep func(FamilyTarget) bool, better func(a, b FamilyTarget) bool, text func(FamilyTarget) string, none string) Scenario {
		var best *FamilyTarget
		for i, t := range f.Targets {
			if len(t.Passed)+len(t.Partial) >= t.out() && keep(t) && (best == nil || better(t, *best)) {
				best = &f.Targets[i]
			}
		}
		if best == nil {
			return Scenario{Name: name, Text: none}
		}
		why := text(*best)
		if len(best.Out) > 0 {
			why += "; out here: " + outText(best.Out)
		}
		return Scenario{Name: name, Target: best.Target, Text: why}
	}
	fast := func(t FamilyTarget) bool { return t.SpeedupModels > 0 }
	faster := func(a, b FamilyTarget) bool { return a.SpeedupMedian > b.SpeedupMedian }
	speed := func(t FamilyTarget) string {
		if t.Target == f.Baseline {
			return "the baseline the speedups are over; passed for " + modelsText(len(t.Passed)+len(t.Partial))
		}
		return "median speedup over " + f.Baseline + " " + fmtX(t.SpeedupMedian) + " across " + modelsText(t.SpeedupModels)
	}
	none := "no target passed for at least half of the measured " + f.Family + " models that ran on it"
	if f.Budget != (Budget{}) {
		none += " within the budgets"
	}
	return []Scenario{
		pick(LowestLatency, fast, faster, speed, none),
		pick(LowestMemory, func(FamilyTarget) bool { return true },
			func(a, b FamilyTarget) bool { return a.PeakMemoryMedianBytes < b.PeakMemoryMedianBytes },
			func(t FamilyTarget) string {
				return "median peak " + mib(float64(t.PeakMemoryMedianBytes)) + " (" + memoryKind(t.Runner) + ") across " + modelsText(len(t.Passed)+len(t.Partial))
			}, none),
		pick(BrowserOnly, func(t FamilyTarget) bool { return fast(t) && t.Runner == "browser" }, faster, speed, strings.Replace(none, "no target", "no browser target", 1)),
		pick(CPUOnly, func(t FamilyTarget) bool { return fast(t) && t.onCPU }, faster, speed, strings.Replace(none, "no target", "no target on ONNX Runtime's CPU EP", 1)),
	}
}

// out counts the measured models that are out on the target, for any reason.
func (t FamilyTarget) out() int {
	n := 0
	for _, models := range t.Out {
		n += len(models)
	}
	return n
}

func modelsText(n int) string { return plural(n, "model") }

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
