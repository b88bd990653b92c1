package result_test

import (
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/hwtest/hwtest/result"
)

// The packages that aggregate and report results must not link ONNX Runtime (cgo),
// Chromium's driver or the Ginkgo DSL: reading JSON needs none of them.
func TestResultReadersStayLight(t *testing.T) {
	heavy := []string{
		"github.com/yalue/onnxruntime_go",
		"github.com/chromedp/chromedp",
		"github.com/hwtest/hwtest/runtime",
		"github.com/hwtest/hwtest/browser",
		"github.com/onsi/ginkgo/v2", // the DSL; ginkgo/v2/types (the JSON report schema) is fine
	}
	for _, pkg := range []string{"../result", "../matrix", "../diagnose"} {
		out, err := exec.Command("go", "list", "-deps", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		for _, dep := range strings.Fields(string(out)) {
			for _, h := range heavy {
				if dep == h {
					t.Errorf("%s depends on %s", pkg, dep)
				}
			}
		}
	}
}

func TestLabels(t *testing.T) {
	labels := []string{result.FamilyLabel("audio"), result.ModelLabel("silero-vad-v5"), result.TargetLabel("cpu"), result.TagLabel("smoke")}
	want := []string{"family:audio", "model:silero-vad-v5", "hw:cpu", "tag:smoke"}
	for i := range want {
		if labels[i] != want[i] {
			t.Errorf("label %d = %q, want %q", i, labels[i], want[i])
		}
	}
	if v, ok := result.LabelValue(labels, result.ModelPrefix); !ok || v != "silero-vad-v5" {
		t.Errorf("LabelValue(model:) = %q, %v", v, ok)
	}
	if v, ok := result.LabelValue(labels, result.TargetPrefix); !ok || v != "cpu" {
		t.Errorf("LabelValue(hw:) = %q, %v", v, ok)
	}
	if _, ok := result.LabelValue(labels, "op:"); ok {
		t.Error("LabelValue found a prefix no label has")
	}
}

func TestDeviationWithin(t *testing.T) {
	var none *result.Deviation
	if !none.Within() || none.String() != "no elements" {
		t.Errorf("nil deviation: Within %v, %q", none.Within(), none.String())
	}
	d := &result.Deviation{Output: "y", Index: 3, Got: 1.5, Want: 1, AbsErr: 0.5, Allowed: 0.1}
	if d.Within() {
		t.Error("|error| 0.5 > allowed 0.1 counted as within")
	}
	if !strings.Contains(d.String(), `output "y"[3]`) {
		t.Errorf("String() = %q", d.String())
	}
}

func TestCauseSurvivesWrapping(t *testing.T) {
	base := result.Errorf(result.CauseModelFile, "model %q: file missing", "x")
	wrapped := fmt.Errorf("open: %w", base)
	if got := result.CauseOf(wrapped); got != result.CauseModelFile {
		t.Errorf("CauseOf(wrapped) = %q", got)
	}
	if got := result.CauseOf(result.WithCause(result.CauseInputs, wrapped)); got != result.CauseModelFile {
		t.Errorf("WithCause replaced the inner cause: %q", got)
	}
	if got := result.CauseOf(result.WithCause(result.CauseInputs, errors.New("x"))); got != result.CauseInputs {
		t.Errorf("WithCause on a plain error: %q", got)
	}
	if result.WithCause(result.CauseInputs, nil) != nil || result.CauseOf(errors.New("x")) != "" {
		t.Error("nil or plain errors")
	}
	if wrapped.Error() != `open: model "x": file missing` {
		t.Errorf("text changed: %q", wrapped.Error())
	}
}

// A browser target's catalog provider ("webgpu") is not the name ONNX Runtime's
// profile gives its EP: the placement's EP says which share is the target's.
func TestPlacementTargetShare(t *testing.T) {
	p := result.Placement{Nodes: 8, ByProvider: map[string]result.ProviderShare{
		"WebGpuExecutionProvider": {Nodes: 6}, "CPUExecutionProvider": {Nodes: 2}}}
	if got := p.TargetShare("webgpu"); got != 0 {
		t.Errorf("without EP: %v%% under the catalog's name, want 0", got)
	}
	p.EP = "WebGpuExecutionProvider"
	if got := p.TargetShare("webgpu"); got != 75 {
		t.Errorf("with EP: %v%%, want 75", got)
	}
}
