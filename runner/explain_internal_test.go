package runner

import (
	"testing"

	"github.com/hwtest/hwtest/matrix"
	"github.com/hwtest/hwtest/result"
	"github.com/hwtest/hwtest/runtime"
)

// A mismatch cell is traced to its node only when it disagrees with the CPU
// reference: a cell that misses only its declared expected outputs agrees with it.
func TestAgainstReference(t *testing.T) {
	check := func(name string, s result.Status) matrix.CheckResult {
		return matrix.CheckResult{Name: name, Status: s}
	}
	for _, tc := range []struct {
		checks []matrix.CheckResult
		want   bool
	}{
		{[]matrix.CheckResult{check("agrees with the CPU reference", result.StatusMismatch)}, true},
		{[]matrix.CheckResult{check("agrees with the CPU reference", result.StatusPass), check(runtime.ExpectedOutputsCheck, result.StatusMismatch)}, false},
		{[]matrix.CheckResult{check(runtime.ExpectedOutputsCheck, result.StatusMismatch), check("ranks the same top-5 classes as the CPU", result.StatusMismatch)}, true},
		{nil, true}, // a cell without its checks (an older report): traced as before
	} {
		if got := againstReference(matrix.Cell{Status: result.StatusMismatch, Checks: tc.checks}); got != tc.want {
			t.Errorf("%+v: %v, want %v", tc.checks, got, tc.want)
		}
	}
}
