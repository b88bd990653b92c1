package diagnose

import (
	"testing"

	"github.com/hwtest/hwtest/conformance"
	"github.com/hwtest/hwtest/result"
)

// A board of fixture cases (for the logic, not results): Add passes on cpu and
// half passes on webgpu, Adam is refused everywhere, Abs gives a wrong answer on
// webgpu, Mul has no case.
func measuredBoard() conformance.Board {
	c := func(name, op, target, status, msg string) result.OpCaseReport {
		return result.OpCaseReport{Case: name, Op: op, Target: target, Status: status, Error: msg}
	}
	mm := c("test_add_bcast", "Add", "webgpu", result.CaseMismatch, "")
	mm.Worst = &result.Deviation{Output: "sum", Index: 7, Got: 0.5, Want: 0.25, AbsErr: 0.25, Allowed: 2.5e-4}
	return conformance.Summarise([]result.OpCaseReport{
		c("test_add", "Add", "cpu", result.CasePass, ""), c("test_add_bcast", "Add", "cpu", result.CasePass, ""),
		c("test_add", "Add", "webgpu", result.CasePass, ""), mm,
		c("test_relu", "Relu", "cpu", result.CasePass, ""), c("test_relu", "Relu", "webgpu", result.CasePass, ""),
		c("test_adam", "Adam", "cpu", result.CaseNotSupported, "Fatal error: Adam(-1) is not a registered function/op"),
		c("test_adam", "Adam", "webgpu", result.CaseNotSupported, "no kernel\nfor Adam"),
		c("test_add", "Add", "cuda", result.CaseUnavailable, "no libcudart"),
		c("test_abs", "Abs", "webgpu", result.CaseMismatch, ""),
	}, []string{"cpu", "cuda", "webgpu"})
}

func TestMeasure(t *testing.T) {
	b := measuredBoard()
	for _, tc := range []struct {
		ops             map[string]int
		target          string
		outcome         string
		verdict         string
		failing         []string // of the model's first operator
		firstOpSupports conformance.Support
	}{
		{map[string]int{"Add": 3, "Relu": 1}, "cpu", OutcomeRuns, "should run: every case of its operators passed", nil, conformance.Supported},
		{map[string]int{"Add": 3, "Relu": 1}, "webgpu", OutcomeRuns, "should run; some cases of Add failed",
			[]string{"test_add_bcast: mismatch, output sum[7]: got 0.5, want 0.25, |error| 0.25 > allowed 0.00025"}, conformance.Partly},
		// Refused in every case: ONNX Runtime would run it on the CPU.
		{map[string]int{"Adam": 1, "Add": 1}, "webgpu", OutcomeRuns, "should run; Adam refused in every case: expect it on the CPU; some cases of Add failed",
			[]string{"test_adam: not supported: no kernel for Adam"}, conformance.Unsupported},
		// Wrong answers and no pass: the model's would be wrong too.
		{map[string]int{"Abs": 1, "Add": 1}, "webgpu", OutcomeFails, "fails: no case of Abs passed, and some gave wrong answers; some cases of Add failed",
			[]string{"test_abs: mismatch, no element recorded"}, conformance.Unsupported},
		{map[string]int{"Add": 1, "Mul": 1}, "cpu", "", "unmeasured: no case of Mul ran on cpu", nil, conformance.Supported},
		{map[string]int{"Adam": 1, "Mul": 1}, "cpu", "", "unmeasured: no case of Mul ran on cpu",
			[]string{"test_adam: not supported: Fatal error: Adam(-1) is not a registered function/op"}, conformance.Unsupported},
		{map[string]int{"Add": 1}, "cuda", "", "unmeasured: no conformance case ran on cuda", nil, conformance.Unmeasured},
		{map[string]int{"Constant": 1, "Mul": 1}, "cuda", "", "unmeasured: no conformance case ran on cuda", nil, conformance.Unmeasured},
		// Constant is folded before partitioning: unmeasured, it needs no verdict.
		{map[string]int{"Add": 1, "Constant": 4}, "cpu", OutcomeRuns, "should run: every case of its operators passed", nil, conformance.Supported},
	} {
		m := Measure(tc.ops, b, tc.target)
		if m.Outcome != tc.outcome || m.Verdict != tc.verdict {
			t.Errorf("%v on %s: %q %q, want %q %q", tc.ops, tc.target, m.Outcome, m.Verdict, tc.outcome, tc.verdict)
		}
		if len(m.Ops) != len(tc.ops) || m.Ops[0].Support != tc.firstOpSupports || len(m.Ops[0].Failing) != len(tc.failing) ||
			(len(tc.failing) > 0 && m.Ops[0].Failing[0] != tc.failing[0]) {
			t.Errorf("%v on %s: ops %+v", tc.ops, tc.target, m.Ops)
		}
	}
}

// What "matched" means, cell by cell.
func TestMatches(t *testing.T) {
	for _, tc := range []struct {
		outcome string
		status  result.Status
		want    bool
	}{
		{OutcomePass, result.StatusPass, true},
		{OutcomePass, result.StatusPartial, false},
		{OutcomePartial, result.StatusPartial, true},
		{OutcomePartial, result.StatusPass, false},
		{OutcomeRuns, result.StatusPass, true},
		{OutcomeRuns, result.StatusPartial, true},
		{OutcomeRuns, result.StatusMismatch, false},
		// cpu-only agreed, but the EP took no node: "should run" on the target did not.
		{OutcomeRuns, result.StatusCPUOnly, false},
		{OutcomePartial, result.StatusCPUOnly, false},
		{OutcomePass, result.StatusCPUOnly, false},
		{OutcomeFails, result.StatusMismatch, true},
		{OutcomeFails, result.StatusError, true},
		{OutcomeFails, result.StatusExpectedFail, true},
		{OutcomeFails, result.StatusPass, false},
		{"", result.StatusPass, false},
		{"", result.StatusError, false},
	} {
		if got := Matches(tc.outcome, tc.status); got != tc.want {
			t.Errorf("%q vs %s: %v", tc.outcome, tc.status, got)
		}
	}
	if Observed(result.StatusUnavailable) || Observed("") || !Observed(result.StatusExpectedFail) {
		t.Error("an unavailable cell, or none, observed something")
	}
	// The documented table's outcome: CPU (reference) and a full table predict pass,
	// a table missing an operator partial, no table nothing.
	for provider, want := range map[string]string{"CPUExecutionProvider": OutcomePass, "WebNNExecutionProvider": OutcomePass,
		"CoreMLExecutionProvider": OutcomePartial, "CUDAExecutionProvider": ""} {
		if got := Predict(map[string]int{"Add": 1, "Einsum": 1}, provider).Documented(); got != want {
			t.Errorf("%s: %q, want %q", provider, got, want)
		}
	}
}
