package diagnose

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hwtest/hwtest/conformance"
	"github.com/hwtest/hwtest/result"
)

// A prediction from measurement: what ONNX's own conformance cases (the scoreboard)
// say of each of a model's operators on a target, next to what the EP's documented
// table says (Predict). Both are then set against the matrix's cells.

// Outcomes a prediction can foresee for a cell.
const (
	OutcomePass    = "pass"    // every node on the target's EP, outputs agree
	OutcomePartial = "partial" // runs and agrees, some nodes on the CPU
	OutcomeRuns    = "runs"    // runs and agrees: pass or partial
	OutcomeFails   = "fails"   // mismatch, error or expected-fail
)

// Measured is a model's measured support on one target.
type Measured struct {
	Verdict string `json:"verdict"`
	// Outcome is what the verdict foresees for the model's cell: OutcomeRuns,
	// OutcomeFails, or "" (no prediction: an operator was never measured).
	Outcome string       `json:"outcome"`
	Ops     []MeasuredOp `json:"ops"` // every operator of the model, sorted
}

// MeasuredOp is one operator's cell of the scoreboard on the target.
type MeasuredOp struct {
	Op      string              `json:"op"`
	Support conformance.Support `json:"support"`
	Cell    string              `json:"cell,omitempty"` // as `report --ops` shows it: "2/3 ≠1"
	// Failing are its cases that did not pass: the runtime's exact error, or a
	// mismatch's worst element.
	Failing []string `json:"failing,omitempty"`
	Note    string   `json:"note,omitempty"` // why an unmeasured operator does not matter
}

// Measure reads the model's operators (onnx.Inspect's Ops) off the board's column
// for target. An operator no case of which passed and some of which gave wrong
// answers makes the model fail; with none such, one never measured leaves no
// prediction; otherwise it should run, operators refused in every case (expected
// on the CPU) and those some of whose cases fail (partly) named.
func Measure(opCounts map[string]int, b conformance.Board, target string) Measured {
	var m Measured
	var unsupported, refused, partly, unmeasured []string
	for _, op := range sortedKeys(opCounts) {
		mo := MeasuredOp{Op: op, Support: b.Support(op, target)}
		if n, ok := b.Cells[op][target]; ok {
			mo.Cell = n.Text()
		}
		for _, c := range b.Cases[op][target] {
			switch c.Status {
			case result.CaseMismatch:
				mo.Failing = append(mo.Failing, c.Case+": mismatch, "+conformance.WorstText(c.Worst))
			case result.CaseNotSupported:
				mo.Failing = append(mo.Failing, c.Case+": not supported: "+strings.Join(strings.Fields(c.Error), " "))
			}
		}
		if note, ok := alwaysPlaced[op]; ok && mo.Support == conformance.Unmeasured {
			// ONNX Runtime needs no kernel for it: its cases (test_constant has no
			// input, which hwtest cannot feed) are not needed for a verdict.
			mo.Note = note + ": needs no kernel"
			m.Ops = append(m.Ops, mo)
			continue
		}
		switch mo.Support {
		case conformance.Unsupported:
			// No case passed. Wrong answers mean the model's would be wrong too;
			// refusals alone mean the runtime would not take the node, and
			// ONNX Runtime then runs it on the CPU (the cell is partial): every
			// Cast case refused on webgpu-native (double, float16, string) said
			// "fails" for 12 models whose cells were partial.
			if n := b.Cells[op][target]; n.Mismatch > 0 {
				unsupported = append(unsupported, op)
			} else {
				refused = append(refused, op)
			}
		case conformance.Partly:
			partly = append(partly, op)
		case conformance.Unmeasured:
			unmeasured = append(unmeasured, op)
		}
		m.Ops = append(m.Ops, mo)
	}
	switch {
	case len(unsupported) > 0:
		m.Outcome = OutcomeFails
		m.Verdict = fmt.Sprintf("fails: no case of %s passed, and some gave wrong answers", strings.Join(unsupported, ", "))
	case b.ByTarget[target].Ran() == 0:
		m.Verdict = "unmeasured: no conformance case ran on " + target
	case len(unmeasured) > 0:
		m.Verdict = fmt.Sprintf("unmeasured: no case of %s ran on %s", strings.Join(unmeasured, ", "), target)
	case len(partly) == 0:
		m.Outcome = OutcomeRuns
		m.Verdict = "should run: every case of its operators passed"
	default:
		m.Outcome = OutcomeRuns
		m.Verdict = "should run"
	}
	if len(refused) > 0 && m.Outcome == OutcomeRuns {
		m.Verdict += fmt.Sprintf("; %s refused in every case: expect it on the CPU", strings.Join(refused, ", "))
	}
	if len(partly) > 0 {
		m.Verdict += fmt.Sprintf("; some cases of %s failed", strings.Join(partly, ", "))
	}
	return m
}

// Documented is the outcome the documented table foresees: every operator listed
// (or the CPU EP itself): pass; some not listed: partial, since ONNX Runtime places
// those on the CPU; no table: "" (no prediction).
func (p Prediction) Documented() string {
	switch {
	case p.Coverage == CoverageUnknown || p.Coverage == "":
		return ""
	case len(p.Unsupported) > 0:
		return OutcomePartial
	}
	return OutcomePass
}

// MatchRule says what "matched" means, as `hwtest check` prints it.
const MatchRule = `documented "pass" (every operator in the EP's table) = the cell is pass; documented "partial" (some operators fall back to the CPU) = partial; measured "runs" (no operator whose cases all fail with a wrong answer among them, none unmeasured but Constant, which ONNX Runtime folds; an operator refused in every case is expected on the CPU) = pass or partial, not cpu-only (the EP took no node); measured "fails" (an operator none of whose cases passed, some with wrong answers) = mismatch, error or expected-fail. No prediction (no table, an operator never measured) does not match. Unavailable cells are not counted: nothing was observed.`

// Observed reports whether a cell's status is an observation: an unavailable
// target saw nothing.
func Observed(status result.Status) bool {
	return status != "" && status != result.StatusUnavailable
}

// Matches reports whether a predicted outcome (Prediction.Documented, or
// Measured.Outcome) is what the cell observed, by MatchRule.
func Matches(outcome string, observed result.Status) bool {
	switch outcome {
	case OutcomePass:
		return observed == result.StatusPass
	case OutcomePartial:
		return observed == result.StatusPartial
	case OutcomeRuns: // cpu-only agreed, but on the CPU: the target did not run it
		return observed == result.StatusPass || observed == result.StatusPartial
	case OutcomeFails:
		return slices.Contains([]result.Status{result.StatusMismatch, result.StatusError, result.StatusExpectedFail}, observed)
	}
	return false
}
