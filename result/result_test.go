package result_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
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

// recordedPlacement is a cell's placement in a matrix.json a real run wrote.
func recordedPlacement(t *testing.T, path, model, target string) (result.Status, result.Placement) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Cells []struct {
			Model, Target string
			Status        result.Status
			Placement     *result.Placement
		}
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	for _, c := range m.Cells {
		if c.Model == model && c.Target == target && c.Placement != nil {
			return c.Status, *c.Placement
		}
	}
	t.Fatalf("%s: no placement of %s on %s", path, model, target)
	return "", result.Placement{}
}

// A cell whose target's EP took no node ran on the CPU: cpu-only, never partial.
// WebNN logs compiled partitions, not nodes: one partition is work on WebNN. The
// placements are real runs': mamba-130m on webnn (no partition; recorded by this
// hwtest, and by an older one that called it partial), bert on webnn (1 partition),
// silero VAD on webgpu (JSEP, 63% of nodes).
func TestStatusFromPlacement(t *testing.T) {
	for _, tc := range []struct {
		file, model, target string
		want                result.Status
		summary             string
	}{
		{"../cmd/hwtest/testdata/history/cpu-only.json", "mamba-130m", "webnn", result.StatusCPUOnly, "WebNN took none of the 33 nodes: all ran on CPU"},
		{"../internal/histtest/testdata/full/20261123T193216Z-9bfa42.json", "mamba-130m", "webnn", result.StatusCPUOnly, "WebNN took none of the 33 nodes: all ran on CPU"},
		{"../internal/histtest/testdata/full/20261123T193216Z-9bfa42.json", "bert-base-uncased", "webnn", result.StatusPartial, "WebNN ran 1 compiled partition(s) (the nodes inside are not logged); 71 nodes ran on CPU"},
		{"../diff/testdata/scenarios/base.json", "silero-vad-v5", "webgpu", result.StatusPartial, "63% of 226 nodes on WebGPU (JSEP), the rest on CPU"},
	} {
		recorded, p := recordedPlacement(t, tc.file, tc.model, tc.target)
		ep := p.EP
		if ep == "" {
			ep = map[string]string{"webnn": "WebNNExecutionProvider", "webgpu": "JsExecutionProvider"}[tc.target]
		}
		if got := p.Status(ep); got != tc.want {
			t.Errorf("%s on %s (%s, recorded %s): %s, want %s", tc.model, tc.target, tc.file, recorded, got, tc.want)
		}
		if got := p.Summary(ep); got != tc.summary {
			t.Errorf("%s on %s: summary %q, want %q", tc.model, tc.target, got, tc.summary)
		}
	}
	if s := result.StatusCPUOnly; !s.Agreed() || !s.OnCPU() || result.StatusPass.OnCPU() {
		t.Error("cpu-only agreed with the CPU reference, on the CPU; a pass is not on the CPU")
	}
	if got := (result.Placement{}).Status("WebNNExecutionProvider"); got != result.StatusPass {
		t.Errorf("an empty placement: %s, want pass (nothing ran elsewhere)", got)
	}
}
