package runtime

import (
	"testing"

	"github.com/hwtest/hwtest/result"
	ort "github.com/yalue/onnxruntime_go"
)

// A profile in ONNX Runtime's format where two of three nodes ran on CUDA.
const mixedProfile = `[
 {"cat":"Session","name":"model_loading_uri","dur":1000,"args":{}},
 {"cat":"Node","name":"/embed/Gather_kernel_time","dur":40,"args":{"op_name":"Gather","provider":"CPUExecutionProvider"}},
 {"cat":"Node","name":"/mlp/MatMul_kernel_time","dur":100,"args":{"op_name":"MatMul","provider":"CUDAExecutionProvider"}},
 {"cat":"Node","name":"/mlp/Gelu_kernel_time","dur":60,"args":{"op_name":"Gelu","provider":"CUDAExecutionProvider"}},
 {"cat":"Node","name":"/mlp/MatMul_fence_before","dur":1,"args":{"op_name":"MatMul"}},
 {"cat":"Node","name":"/mlp/MatMul_kernel_time","dur":100,"args":{"op_name":"MatMul","provider":"CUDAExecutionProvider"}}
]`

func TestParsePlacement(t *testing.T) {
	p, err := ParsePlacement([]byte(mixedProfile))
	if err != nil {
		t.Fatal(err)
	}
	nodes, time := p.Share("CUDAExecutionProvider")
	if p.Nodes != 3 || int(nodes) != 66 || int(time) != 86 {
		t.Errorf("placement %+v: %.1f%% nodes, %.1f%% time", p, nodes, time)
	}
	if got := p.Summary("CUDAExecutionProvider"); got != "67% of 3 nodes (87% of kernel time) on CUDA, the rest on CPU" {
		t.Errorf("summary %q", got)
	}
	if p.AllOn("CUDAExecutionProvider") {
		t.Error("AllOn with a node on the CPU")
	}
	web := result.Placement{Nodes: 72, ByProvider: map[string]result.ProviderShare{
		"WebNNExecutionProvider": {Nodes: 1, Partitions: 1}, CPUProvider: {Nodes: 71}}}
	if got := web.Summary("WebNNExecutionProvider"); got != "WebNN ran 1 compiled partition(s) (the nodes inside are not logged); 71 nodes ran on CPU" {
		t.Errorf("partition summary %q", got)
	}
	if _, err := ParsePlacement([]byte(`[{"cat":"Session"}]`)); err == nil {
		t.Error("a profile without nodes was accepted")
	}
	if _, err := ParsePlacement([]byte(`not json`)); err == nil {
		t.Error("garbage accepted")
	}
}

// A real profile from ONNX Runtime: every node of a CPU run is on the CPU EP.
func TestProfilePlacementOnCPU(t *testing.T) {
	requireORT(t)
	p := writeZoo(t, "tiny-bert")
	s, err := OpenSession(p, Target{Provider: CPUProvider}, false)
	if err != nil {
		t.Fatal(err)
	}
	in, err := SynthesizeInputs("t", s.Inputs(), tokens(1, 8))
	s.Close()
	if err != nil {
		t.Fatal(err)
	}
	pl, err := ProfilePlacement(p, Target{ID: "cpu", Provider: CPUProvider}, in)
	if err != nil {
		t.Fatal(err)
	}
	if nodes, _ := pl.Share(CPUProvider); pl.Nodes < 10 || nodes != 100 {
		t.Errorf("placement %+v", pl)
	}
}

// The message FallbackDisabled looks for is the one ONNX Runtime really gives: the
// CPU EP with CPU fallback disabled refuses every session.
func TestFallbackDisabledMatchesONNXRuntime(t *testing.T) {
	requireORT(t)
	p := writeZoo(t, "tiny-bert")
	opts, err := ort.NewSessionOptions()
	if err != nil {
		t.Fatal(err)
	}
	defer opts.Destroy()
	opts.AddSessionConfigEntry("session.disable_cpu_ep_fallback", "1")
	_, err = ort.NewDynamicAdvancedSession(p, []string{"input_ids", "attention_mask"}, []string{"last_hidden_state"}, opts)
	if !FallbackDisabled(err) {
		t.Errorf("ONNX Runtime said %v", err)
	}
	if FallbackDisabled(nil) || FallbackDisabled(errString("Failed to load shared library")) {
		t.Error("false positive")
	}
}

type errString string

func (e errString) Error() string { return string(e) }
