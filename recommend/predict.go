package recommend

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hwtest/hwtest/catalog"
	"github.com/hwtest/hwtest/diagnose"
	"github.com/hwtest/hwtest/result"
	"github.com/hwtest/hwtest/spec"
)

// Verdicts of a prediction, the likeliest to work first.
const (
	LikelyPass    = "likely pass"
	LikelyPartial = "likely partial"
	Uncertain     = "uncertain"
	Unknown       = "unknown"
	LikelyFail    = "likely fail"
	Unavailable   = "unavailable"
	ExpectedFail  = "expected-fail"
	OutPrecision  = "precision"
)

var verdictRank = []string{LikelyPass, LikelyPartial, Uncertain, Unknown, LikelyFail, Unavailable, ExpectedFail, OutPrecision}

// Operators is what `hwtest check` reads from a model's file: its operator counts
// (onnx.Inspect's Ops), or why they could not be read.
type Operators struct {
	Counts  map[string]int
	Fixture string // the stand-in whose file was read, when the real model's is absent
	Err     string
}

// Predicted is a target's prediction for a model that never ran: nothing in it was
// measured on that model.
type Predicted struct {
	Target  string `json:"target"`
	Runner  string `json:"runner,omitempty"`
	Verdict string `json:"verdict"`
	// Evidence is what the family's measured models did here, in words; Passed and
	// Failed count those that passed (or were partial) and those that did not
	// (mismatch, error, expected-fail).
	Evidence string `json:"evidence"`
	Passed   int    `json:"family_passed"`
	Failed   int    `json:"family_failed"`
	// Operators is `hwtest check`'s verdict for the target's EP from the model's
	// operators and the EP's documented table ("" when they could not be read).
	Operators string `json:"operators,omitempty"`
	// The family's measured figures here, which the model may or may not follow:
	// the median speedup over the baseline of the models that passed, and the
	// median of their peak memory.
	FamilySpeedup         float64 `json:"family_speedup_median,omitempty"`
	FamilySpeedupModels   int     `json:"family_speedup_models"`
	FamilyPeakMemoryBytes int64   `json:"family_peak_memory_median_bytes,omitempty"`

	onCPU bool
}

// Predict predicts targets for a model with no result in the history, from what
// its family's measured models did on each target and from its operators.
// Latency and memory budgets are not checked: nothing of the model was measured.
func Predict(h History, targets []catalog.Target, model, family string, ops Operators, b Budget) Recommendation {
	cat := catalogOf(targets)
	r := Recommendation{Kind: Prediction, Model: model, Family: family, Budget: b, Baseline: baseline(targets),
		Ranked: []Choice{}, Partial: []Choice{}, Excluded: []Exclusion{}}
	var recs []Recommendation
	var peers []string
	for _, m := range familyModels(h, family, nil) {
		if m != model && measured(h, m) {
			peers = append(peers, m)
			// The peers' evidence is every result they have: a budget on this model
			// says nothing about whether theirs ran.
			recs = append(recs, Model(h, targets, m, Budget{}))
		}
	}
	by := map[string]FamilyTarget{}
	gathered, excluded := gather(recs, targetOrder(h.Current.Targets, targets))
	for _, t := range gathered {
		by[t.Target] = t
	}
	for _, x := range excluded {
		by[x.Target] = FamilyTarget{Target: x.Target, Out: x.Out}
	}
	reasons := unavailableReasons(h, peers)

	for _, id := range targetOrder(h.Current.Targets, targets) {
		t, known := cat[id]
		ft := by[id]
		p := Predicted{Target: id, Runner: t.Runner, onCPU: known && spec.TargetOf(t).EP() == spec.CPUProvider,
			FamilySpeedup: ft.SpeedupMedian, FamilySpeedupModels: ft.SpeedupModels, FamilyPeakMemoryBytes: ft.PeakMemoryMedianBytes}
		p.Evidence = evidence(ft, family, len(peers))
		fallback := false
		switch {
		case ops.Counts == nil:
		case !known:
			p.Operators = "not in hardware.yaml: its execution provider is unknown"
		default:
			d := diagnose.Predict(ops.Counts, spec.TargetOf(t).EP())
			p.Operators = d.String()
			fallback = len(d.Unsupported) > 0
		}
		good, partial := len(ft.Passed), len(ft.Partial)
		bad := len(ft.Out[string(result.StatusMismatch)]) + len(ft.Out[string(result.StatusError)]) + len(ft.Out[string(result.StatusExpectedFail)])
		p.Passed, p.Failed = good+partial, bad
		switch {
		case b.Precision != "" && (!known || t.Precision != b.Precision):
			p.Verdict = OutPrecision
			p.Evidence = fmt.Sprintf("runs at %s (--precision %s)", orUnknown(t.Precision), b.Precision)
		case known && t.Expect[family] != "":
			p.Verdict = ExpectedFail
			p.Evidence = "hardware.yaml declares " + family + " unable to run here: " + t.Expect[family]
		case good+partial > 0 && bad == 0 && (fallback || good == 0):
			p.Verdict = LikelyPartial
		case good+partial > 0 && bad == 0:
			p.Verdict = LikelyPass
		case good+partial > 0:
			p.Verdict = Uncertain
		case bad > 0:
			p.Verdict = LikelyFail
		case len(ft.Out[string(result.StatusUnavailable)]) > 0:
			p.Verdict = Unavailable
			if why := reasons[id]; why != "" {
				p.Evidence += ": " + why
			}
		default:
			p.Verdict = Unknown
		}
		r.Predicted = append(r.Predicted, p)
	}
	slices.SortStableFunc(r.Predicted, func(a, b Predicted) int {
		if d := slices.Index(verdictRank, a.Verdict) - slices.Index(verdictRank, b.Verdict); d != 0 {
			return d
		}
		return cmpFloat(b.FamilySpeedup, a.FamilySpeedup)
	})

	r.Basis = fmt.Sprintf("PREDICTION: %s has no result in the history; nothing here was measured on it. ", model)
	if len(peers) > 0 {
		r.Basis += fmt.Sprintf("Predicted from the results of the %s family's measured models (%s)", family, strings.Join(peers, ", "))
	} else {
		r.Basis += fmt.Sprintf("No model of the %s family has results: predicted", family)
	}
	if ops.Counts != nil {
		r.Basis += " and from the model's operators against each execution provider's documented support (hwtest check)"
		if ops.Fixture != "" {
			r.Basis += "; the operators are its fixture's (" + ops.Fixture + "): the real model's file is not on this machine"
		}
		r.Basis += "."
	} else {
		r.Basis += fmt.Sprintf("; its operators could not be read (%s).", orUnknown(ops.Err))
	}
	if b.MaxP50MS > 0 || b.MaxP99MS > 0 || b.MaxMemoryBytes > 0 {
		r.Basis += " Latency and memory budgets are not checked: nothing of this model was measured."
	}
	r.Scenarios = predictedScenarios(r)
	return r
}

// evidence says what the family's models did on a target.
func evidence(t FamilyTarget, family string, peers int) string {
	if peers == 0 {
		return "no " + family + " model has results"
	}
	var parts []string
	if n := len(t.Passed); n > 0 {
		parts = append(parts, fmt.Sprintf("passed: %s", strings.Join(t.Passed, ", ")))
	}
	if n := len(t.Partial); n > 0 {
		parts = append(parts, fmt.Sprintf("partial: %s", strings.Join(t.Partial, ", ")))
	}
	for _, why := range sortedKeys(t.Out) {
		parts = append(parts, fmt.Sprintf("%s: %s", why, strings.Join(t.Out[why], ", ")))
	}
	if len(parts) == 0 {
		return fmt.Sprintf("none of the %s ran here", plural(peers, "measured "+family+" model"))
	}
	return fmt.Sprintf("of the %s: %s", plural(peers, "measured "+family+" model"), strings.Join(parts, "; "))
}

// unavailableReasons is, per target, the probe's reason in the newest of the
// peers' unavailable cells there.
func unavailableReasons(h History, peers []string) map[string]string {
	out := map[string]string{}
	for _, c := range h.Current.Cells {
		if c.Status == result.StatusUnavailable && slices.Contains(peers, c.Model) {
			if _, ok := out[c.Target]; !ok {
				out[c.Target] = c.Reason
			}
		}
	}
	return out
}

// predictedScenarios picks among the targets where at least as many of the
// family's models passed as failed (a likely pass, a likely partial, or uncertain:
// the pick says which).
func predictedScenarios(r Recommendation) []Scenario {
	var cands []Predicted
	for _, p := range r.Predicted {
		switch p.Verdict {
		case LikelyPass, LikelyPartial, Uncertain:
			if p.Passed >= p.Failed {
				cands = append(cands, p)
			}
		}
	}
	pick := func(name string, keep func(Predicted) bool, better func(a, b Predicted) bool, text func(Predicted) string, none string) Scenario {
		var best *Predicted
		for i := range cands {
			if keep(cands[i]) && (best == nil || better(cands[i], *best)) {
				best = &cands[i]
			}
		}
		if best == nil {
			return Scenario{Name: name, Text: "predicted: " + none, Predicted: true}
		}
		why := "predicted (" + best.Verdict + "): " + text(*best)
		if best.Verdict != LikelyPass {
			why += "; " + best.Evidence
		}
		return Scenario{Name: name, Target: best.Target, Text: why, Predicted: true}
	}
	fast := func(p Predicted) bool { return p.FamilySpeedupModels > 0 }
	faster := func(a, b Predicted) bool { return a.FamilySpeedup > b.FamilySpeedup }
	speed := func(p Predicted) string {
		if p.Target == r.Baseline {
			return "the baseline the speedups are over"
		}
		return fmt.Sprintf("the family's median speedup over %s here is %s (%s)", r.Baseline, fmtX(p.FamilySpeedup), modelsText(p.FamilySpeedupModels))
	}
	none := "no target where the family passed has speedups to rank it"
	return []Scenario{
		pick(LowestLatency, fast, faster, speed, none),
		pick(LowestMemory, func(p Predicted) bool { return p.FamilyPeakMemoryBytes > 0 },
			func(a, b Predicted) bool { return a.FamilyPeakMemoryBytes < b.FamilyPeakMemoryBytes },
			func(p Predicted) string {
				return "the family's median peak memory here is " + mib(float64(p.FamilyPeakMemoryBytes)) + " (" + memoryKind(p.Runner) + ")"
			}, "no target where the family passed has memory to rank it"),
		pick(BrowserOnly, func(p Predicted) bool { return fast(p) && p.Runner == "browser" }, faster, speed, "no browser target where the family passed"),
		pick(CPUOnly, func(p Predicted) bool { return fast(p) && p.onCPU }, faster, speed, "no target on ONNX Runtime's CPU EP where the family passed"),
	}
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
