package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/hwtest/hwtest/runtime"
)

func TestExplainCLI(t *testing.T) {
	if _, err := runtime.Init(); err != nil {
		t.Skipf("ONNX Runtime (make setup): %v", err)
	}
	// A zoo model on the CPU target agrees with the CPU reference: every node is
	// compared, none diverges, and the JSON says so.
	code, stdout, stderr := hwtest("explain", "zoo:tiny-opt", "cpu", "--json")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var e runtime.Explanation
	if err := json.Unmarshal([]byte(stdout), &e); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if e.Model != "zoo:tiny-opt" || e.Target != "cpu" || e.Node != nil || e.Nodes == 0 || e.Compared != e.Nodes ||
		e.Line != "the target agrees with the CPU reference: nothing diverges" {
		t.Fatalf("explanation: %+v", e)
	}

	// A target that is not here: exit non-zero with the probe's reason.
	code, _, stderr = hwtest("explain", "zoo:tiny-opt", "cuda")
	if code == ExitOK || !strings.Contains(stderr, "cuda is unavailable here: CUDAExecutionProvider") {
		t.Fatalf("explain on cuda: exit %d: %s", code, stderr)
	}
	code, _, stderr = hwtest("explain", "no-such-model", "cpu")
	if code == ExitOK || !strings.Contains(stderr, `"no-such-model" is neither a zoo:NAME nor a model in`) {
		t.Fatalf("unknown model: exit %d: %s", code, stderr)
	}
}
