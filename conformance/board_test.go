package conformance_test

import (
	"testing"

	"github.com/hwtest/hwtest/conformance"
	"github.com/hwtest/hwtest/result"
)

func TestBoardSumsPerOperatorAndTarget(t *testing.T) {
	c := func(name, op, target, status string) result.OpCaseReport {
		return result.OpCaseReport{Case: name, Op: op, Target: target, Status: status}
	}
	b := conformance.Summarise([]result.OpCaseReport{
		c("test_add", "Add", "cpu", result.CasePass),
		c("test_add_bcast", "Add", "cpu", result.CasePass),
		c("test_add", "Add", "webgpu", result.CasePass),
		c("test_add_bcast", "Add", "webgpu", result.CaseMismatch),
		c("test_relu", "Relu", "webgpu", result.CaseNotSupported),
		c("test_relu", "Relu", "cuda", result.CaseUnavailable),
		c("test_relu", "Relu", "cpu", result.CaseSkipped),
		c("test_relu", "Relu", "zz", result.CaseError),
	}, []string{"cpu", "cuda", "webgpu"})
	if got := b.Targets; len(got) != 4 || got[0] != "cpu" || got[1] != "cuda" || got[2] != "webgpu" || got[3] != "zz" {
		t.Errorf("targets %v", got)
	}
	if got := b.Cells["Add"]["webgpu"]; got != (conformance.Counts{Pass: 1, Mismatch: 1}) {
		t.Errorf("Add on webgpu %+v", got)
	}
	if got := b.ByTarget["webgpu"]; got != (conformance.Counts{Pass: 1, Mismatch: 1, NotSupported: 1}) || got.Ran() != 3 || got.Total() != 3 {
		t.Errorf("webgpu %+v", got)
	}
	for _, tc := range []struct {
		op, target string
		want       conformance.Support
	}{
		{"Add", "cpu", conformance.Supported},
		{"Add", "webgpu", conformance.Partly},
		{"Relu", "webgpu", conformance.Unsupported},
		{"Relu", "cuda", conformance.Unmeasured},
		{"Relu", "cpu", conformance.Unmeasured},
		{"Relu", "zz", conformance.Unmeasured},
		{"Mul", "cpu", conformance.Unmeasured},
	} {
		if got := b.Support(tc.op, tc.target); got != tc.want {
			t.Errorf("%s on %s: %s, want %s", tc.op, tc.target, got, tc.want)
		}
	}
}
