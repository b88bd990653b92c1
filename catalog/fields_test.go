package catalog

import (
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"gopkg.in/yaml.v3"
)

// TestYAMLRoundTrip: a catalog with every field of every entry set, written by
// yaml.v3 from the structs' tags, decodes back to the same value. A field added to
// a struct but not to the decoder (or spelled differently there) fails here.
func TestYAMLRoundTrip(t *testing.T) {
	want := &Catalogs{
		Models: []Model{{
			ID: "full-model", Family: "text", Architecture: "decoder", Task: "text-generation",
			Source:  "hf:org/repo/model.onnx@0123456789abcdef0123456789abcdef01234567",
			SHA256:  "2623a2953f6ff3d2c1e61740c6cdb7168133479b267dfef114a4a3cc5bdd788f",
			Fixture: "zoo:tiny-gpt2",
			Inputs: map[string]Input{
				"input_ids": {Dims: []int64{2, 6}, Range: []float64{1, 1000}},
				"position":  {Value: []float64{3}, RealOnly: true},
				"pixels": {File: "cat.jpg", Resize: []int64{224, 224}, Layout: "nhwc", Channels: "bgr", Scale: 1,
					Mean: []float64{0.485, 0.456, 0.406}, Std: []float64{0.229, 0.224, 0.225}},
				"ids": {File: "ids.npy"},
			},
			Outputs: OutputSpec{Primary: "logits", State: "state_out", StateIn: "state_in",
				Probabilities: "probs", Distribution: "dist", Ranking: "scores", Router: "router", RouterTopK: 2},
			Tolerance: &Tolerance{RTol: 1e-3, ATol: 1e-4},
			Tags:      []string{"smoke", "real"},
			Tier:      "base",
			Expected: map[string]Expected{
				"logits": {File: "logits.npy", Tolerance: &Tolerance{RTol: 1e-4, ATol: 1e-5}},
				"probs":  {File: "probs.pb"},
			},
		}},
		Targets: []Target{
			{ID: "cpu", Name: "CPU", Runner: "native", Provider: "CPUExecutionProvider", Probe: "none",
				Precision: "fp32", Tolerance: Tolerance{RTol: 1e-5, ATol: 1e-6}},
			{ID: "wasm", Name: "WebAssembly", Runner: "browser", Provider: "wasm", Bundle: "ort.min.js",
				Options: map[string]string{"numThreads": "1"}, Probe: "browser", Precision: "fp32",
				Tolerance: Tolerance{RTol: 1e-4, ATol: 1e-5}, Fallback: []string{"cpu"},
				Expect: map[string]string{"diffusion": "too large for a page"}},
		},
	}
	for _, v := range []any{want.Models[0], want.Models[0].Outputs, want.Targets[1]} {
		if f, ok := zeroField(reflect.ValueOf(v)); ok {
			t.Fatalf("%T.%s is not set: the round trip would not test it", v, f)
		}
	}
	models, err := yaml.Marshal(map[string]any{"models": want.Models})
	if err != nil {
		t.Fatal(err)
	}
	hardware, err := yaml.Marshal(map[string]any{"targets": want.Targets})
	if err != nil {
		t.Fatal(err)
	}
	got, err := Parse("models.yaml", models, "hardware.yaml", hardware)
	if err != nil {
		t.Fatalf("%v\nmodels.yaml:\n%s\nhardware.yaml:\n%s", err, models, hardware)
	}
	ignore := cmp.Options{cmpopts.IgnoreFields(Model{}, "Line", "Column", "Dir"),
		cmpopts.IgnoreFields(Input{}, "Line", "Column"), cmpopts.IgnoreFields(Expected{}, "Line", "Column"),
		cmpopts.IgnoreFields(OutputSpec{}, "At")}
	if diff := cmp.Diff(want.Models, got.Models, ignore); diff != "" {
		t.Errorf("models (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want.Targets, got.Targets, cmpopts.IgnoreFields(Target{}, "Line", "Column")); diff != "" {
		t.Errorf("targets (-want +got):\n%s", diff)
	}
}

// zeroField names the first field with a yaml key that holds its zero value.
func zeroField(v reflect.Value) (string, bool) {
	for i := range v.NumField() {
		f := v.Type().Field(i)
		if tag := f.Tag.Get("yaml"); tag != "-" && v.Field(i).IsZero() {
			return f.Name, true
		}
	}
	return "", false
}

// distribution and ranking take the axis they run along; the string form is the
// last axis (0).
func TestOutputRoleAxis(t *testing.T) {
	models := []byte(`models:
  - id: cnn
    family: vision
    task: image-classification
    source: zoo:x
    outputs: {primary: prob, distribution: {output: prob, axis: 1}, ranking: {output: scores, axis: -2}}
  - id: plain
    family: vision
    task: image-classification
    source: zoo:x
    outputs: {distribution: prob, ranking: scores}
`)
	hardware := []byte("targets:\n  - {id: cpu, name: CPU, runner: native, provider: CPUExecutionProvider, probe: none, precision: fp32, tolerance: {rtol: 1.0e-5, atol: 1.0e-6}}\n")
	got, err := Parse("models.yaml", models, "hardware.yaml", hardware)
	if err != nil {
		t.Fatal(err)
	}
	want := []OutputSpec{
		{Primary: "prob", Distribution: "prob", DistributionAxis: 1, Ranking: "scores", RankingAxis: -2},
		{Distribution: "prob", Ranking: "scores"},
	}
	for i, m := range got.Models {
		if diff := cmp.Diff(want[i], m.Outputs, cmpopts.IgnoreFields(OutputSpec{}, "At")); diff != "" {
			t.Errorf("%s (-want +got):\n%s", m.ID, diff)
		}
	}
}
