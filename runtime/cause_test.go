package runtime

import (
	"errors"
	"fmt"
	"testing"

	"github.com/hwtest/hwtest/browser"
	"github.com/hwtest/hwtest/result"
)

// Each failure runtime can see is recorded with the cause diagnose reads, whatever
// its message says.
func TestCauseOf(t *testing.T) {
	kernel := &browser.KernelError{EP: "WebGPU", Op: "Mul", Node: "/self_attn/Mul_71", Msg: `[WebGPU] Kernel "[Mul] /self_attn/Mul_71" failed`}
	for _, c := range []struct {
		err  error
		want result.Cause
	}{
		{fmt.Errorf("run 3: %w", kernel), result.CauseKernelFailed},
		{fmt.Errorf("session: %w", &browser.CrashError{Err: errors.New("renderer gone")}), result.CauseBrowser},
		{fmt.Errorf("%w after 2s", ErrRunTimeout), result.CauseTimeout},
		{violation(nil, "chunk 1 of 4 differs"), result.CauseMismatch},
		{result.WithCause(result.CauseModelFile, errors.New("missing")), result.CauseModelFile},
		{errors.New("Non-zero status code returned while running Conv node"), ""},
	} {
		if got := causeOf(c.err); got != c.want {
			t.Errorf("causeOf(%v) = %q, want %q", c.err, got, c.want)
		}
	}
}
