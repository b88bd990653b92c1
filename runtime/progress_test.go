package runtime

import (
	"strings"
	"testing"

	"github.com/hwtest/hwtest/browser"
	"github.com/hwtest/hwtest/result"
)

// What a hand-run `ginkgo -v` prints for a cell's steps: the numbers hwtest run
// stores, and placement in the EP's own name on a browser target.
func TestStepLineShowsTheMeasurements(t *testing.T) {
	measured := result.CellReport{Model: "silero-vad-v5", Target: "webgpu-native", Check: result.CheckMeasure, Status: result.StatusPartial,
		Reason: "77% of 226 nodes on WebGpu, the rest on CPU",
		Metrics: &result.Metrics{LoadMS: 1379, FirstRunMS: 1586, P50MS: 63.1, P99MS: 79, ThroughputPerS: 15.1,
			PeakRSSBytes: 534 << 20, ModelPeakBytes: 20 << 20},
		Placement: &result.Placement{EP: "WebGpuExecutionProvider", Nodes: 226, ByProvider: map[string]result.ProviderShare{
			"WebGpuExecutionProvider": {Nodes: 174}, "CPUExecutionProvider": {Nodes: 52}}},
	}
	got := stepLine(measured, "webgpu")
	for _, want := range []string{"silero-vad-v5 on webgpu-native, measure: partial (77% of 226 nodes on WebGpu, the rest on CPU)",
		"load 1379 ms", "p50 63.1 ms", "p99 79 ms", "15.1/s", "peak RSS 534.0 MiB (model 20.0 MiB)", "placement: 77% of 226 nodes on WebGpu"} {
		if !strings.Contains(got, want) {
			t.Errorf("the line lacks %q:\n%s", want, got)
		}
	}
	mismatch := result.CellReport{Model: "m", Target: "webgpu", Check: "agrees with the CPU reference", Status: result.StatusMismatch,
		Worst: &result.Deviation{Output: "stateN", Index: 251, Got: -1, Want: 0, AbsErr: 1, Allowed: 1e-4}}
	if got := stepLine(mismatch, "webgpu"); !strings.Contains(got, "worst: stateN[251] = -1, want 0 (|error| 1 > 0.0001)") {
		t.Errorf("the mismatch line lacks its worst element:\n%s", got)
	}
	skipped := result.CellReport{Model: "det", Target: "cpu", Check: "ranks the same top-5 classes as the CPU", Status: result.StatusPass,
		Skipped: `output "map" has shape [1 1 32 32], a dense map`}
	if got := stepLine(skipped, CPUProvider); !strings.Contains(got, `det on cpu, ranks the same top-5 classes as the CPU: pass · skipped: output "map" has shape [1 1 32 32], a dense map`) {
		t.Errorf("the skipped step does not say why:\n%s", got)
	}
}

// A browser that is gone, or a harness that stopped early, is hwtest's error: the
// case never reached onnxruntime-web, so it says nothing of the target's support.
func TestBrowserCaseStatusOfPageFailures(t *testing.T) {
	for err, want := range map[string]string{
		"opening a new page after a hang or crash: chrome failed to start":    result.CaseError,
		"the page answered before it ran every case":                          result.CaseError,
		"timed out after 5s: no answer from the page (the page was replaced)": result.CaseError,
		"Failed to create session: Program Cast requires f16":                 result.CaseNotSupported,
	} {
		if got := browserCaseStatus(browser.CaseResult{Err: err, Stage: "create"}); got != want {
			t.Errorf("%q: %s, want %s", err, got, want)
		}
	}
}
