package catalog

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestValidDecodes checks what the valid golden case decodes to, field by field.
func TestValidDecodes(t *testing.T) {
	c, err := Load("testdata/valid/models.yaml", "testdata/valid/hardware.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir, err := filepath.Abs("testdata/valid")
	if err != nil {
		t.Fatal(err)
	}
	if c.ModelsDir != dir {
		t.Errorf("ModelsDir = %q, want %q (absolute)", c.ModelsDir, dir)
	}
	vad, ok := c.Model("silero-vad-v5")
	if !ok {
		t.Fatal("no model silero-vad-v5")
	}
	want := Model{
		ID:     "silero-vad-v5",
		Family: "audio",
		Task:   "voice-activity-detection",
		Source: "npm:@ricky0123/vad-web@0.0.31/dist/silero_vad_v5.onnx",
		SHA256: "2623a2953f6ff3d2c1e61740c6cdb7168133479b267dfef114a4a3cc5bdd788f",
		Inputs: map[string]Input{
			"input": {Dims: []int64{1, 512}, Range: []float64{-1, 1}, Line: 9, Column: 7},
			"state": {Dims: []int64{2, 1, 128}, Range: []float64{-0.5, 0.5}, Line: 10, Column: 7},
			"sr":    {Value: []float64{16000}, Line: 11, Column: 7},
		},
		Outputs: OutputSpec{Primary: "output", State: "stateN", StateIn: "state", At: map[string]Position{
			"primary": {12, 24}, "state": {12, 39}, "state_input": {12, 60},
		}},
		Tolerance: &Tolerance{RTol: 1e-4, ATol: 1e-5},
		Tags:      []string{"vad", "real"},
		Tier:      "tiny",
		Line:      3, Column: 5,
		Dir: dir,
	}
	if diff := cmp.Diff(want, vad); diff != "" {
		t.Errorf("silero-vad-v5 (-want +got):\n%s", diff)
	}

	bert, _ := c.Model("bert-base-uncased")
	if bert.Architecture != "encoder" || bert.EffectiveSource() != "zoo:tiny-bert" {
		t.Errorf("bert: architecture %q, effective source %q", bert.Architecture, bert.EffectiveSource())
	}
	if got := vad.EffectiveSource(); got != vad.Source {
		t.Errorf("EffectiveSource without a fixture = %q, want the source", got)
	}
	mamba, _ := c.Model("tiny-mamba")
	if mamba.Tolerance == nil || *mamba.Tolerance != (Tolerance{RTol: 1e-2, ATol: 1e-3}) {
		t.Errorf("aliased tolerance = %v", mamba.Tolerance)
	}
	// file: sources resolve against this folder (sources.LocalPath, tested there).
	if abs, _ := filepath.Abs(dir); mamba.Dir != abs || c.ModelsDir != abs {
		t.Errorf("model Dir %q, ModelsDir %q, want %q", mamba.Dir, c.ModelsDir, abs)
	}

	trt, ok := c.Target("tensorrt")
	if !ok {
		t.Fatal("no target tensorrt")
	}
	wantTRT := Target{
		ID: "tensorrt", Name: "NVIDIA TensorRT", Runner: "native", Provider: "TensorrtExecutionProvider",
		Options: map[string]string{"trt_fp16_enable": "0"}, Probe: "provider", Precision: "fp32",
		Tolerance: Tolerance{RTol: 1e-3, ATol: 1e-4}, Fallback: []string{"cuda", "cpu"},
		Expect: map[string]string{"diffusion": "reason it is expected to fail"},
		Line:   18, Column: 5,
	}
	if diff := cmp.Diff(wantTRT, trt); diff != "" {
		t.Errorf("tensorrt (-want +got):\n%s", diff)
	}
	if _, ok := c.Target("nope"); ok {
		t.Error("Target found a target that does not exist")
	}

	var ids []string
	for _, t := range c.Targets {
		ids = append(ids, t.ID)
	}
	if diff := cmp.Diff([]string{"cpu", "cuda", "tensorrt", "wasm", "webgpu-fp16"}, ids); diff != "" {
		t.Errorf("targets out of file order (-want +got):\n%s", diff)
	}
	byFamily := c.ModelsByFamily()
	if got := len(byFamily["text"]); got != 2 {
		t.Errorf("%d text models, want 2", got)
	}
	if byFamily["text"][0].ID != "bert-base-uncased" {
		t.Errorf("text models not in file order: first is %q", byFamily["text"][0].ID)
	}
}

func TestMergeKeys(t *testing.T) {
	c, err := Load("testdata/anchors/models.yaml", "testdata/anchors/hardware.yaml")
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(c.Models[0].Family, " ", c.Models[0].Task, " ", c.Models[1].Family, " ", c.Models[1].Task)
	if want := "vision image-classification vision feature-extraction"; got != want {
		t.Errorf("merged fields = %q, want %q (written keys win over merged ones)", got, want)
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "models.yaml"), "testdata/valid/hardware.yaml")
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Load of a missing file: %v, want os.ErrNotExist", err)
	}
}

func TestErrorsAreStructured(t *testing.T) {
	_, err := Parse("m.yaml", []byte("models:\n  - id: X\n"), "h.yaml", []byte("targets: []\n"))
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v holds no *Error", err)
	}
	if e.File != "m.yaml" || e.Line != 2 || e.Column != 5 {
		t.Errorf("first error at %s:%d:%d, want m.yaml:2:5", e.File, e.Line, e.Column)
	}
}

func TestParseSource(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Source
	}{
		{"file:models/x.onnx", Source{Scheme: "file", Path: "models/x.onnx"}},
		{"zoo:tiny-bert", Source{Scheme: "zoo", Name: "tiny-bert"}},
		{"npm:@ricky0123/vad-web@0.0.31/dist/silero_vad_v5.onnx",
			Source{Scheme: "npm", Package: "@ricky0123/vad-web", Version: "0.0.31", Path: "dist/silero_vad_v5.onnx"}},
		{"npm:onnxruntime-node@1.30.0/bin/napi-v6/linux/x64/libonnxruntime.so.1",
			Source{Scheme: "npm", Package: "onnxruntime-node", Version: "1.30.0", Path: "bin/napi-v6/linux/x64/libonnxruntime.so.1"}},
		{"hf:google-bert/bert-base-uncased/onnx/model.onnx@86b5e0934494bd15c9632b12f734a8a67f723594",
			Source{Scheme: "hf", Repo: "google-bert/bert-base-uncased", Path: "onnx/model.onnx", Revision: "86b5e0934494bd15c9632b12f734a8a67f723594"}},
	} {
		got, err := ParseSource(tc.in)
		if err != nil {
			t.Errorf("ParseSource(%q): %v", tc.in, err)
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("ParseSource(%q) (-want +got):\n%s", tc.in, diff)
		}
	}
	for _, bad := range []string{"", ":", "npm:", "npm:@", "npm:@scope", "npm:x@1.0.0", "hf:@", "hf:a/b/@r", "zoo:", "file:"} {
		if _, err := ParseSource(bad); err == nil {
			t.Errorf("ParseSource(%q) accepted", bad)
		}
	}
}

func TestDidYouMean(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{"textt", ` (did you mean "text"?)`},
		{"Text", ` (did you mean "text"?)`},
		{"visoin", ` (did you mean "vision"?)`},
		{"speech", ""},
		{"", ""},
		{"ab", ""}, // not "rag": a suggestion must keep something of what was written
	} {
		if got := didYouMean(tc.got, Families); got != tc.want {
			t.Errorf("didYouMean(%q) = %q, want %q", tc.got, got, tc.want)
		}
	}
	// A swap of neighbours is one edit: "cdua" is cuda, not cpu.
	if got := didYouMean("cdua", []string{"cpu", "cuda"}); got != ` (did you mean "cuda"?)` {
		t.Errorf("didYouMean(cdua) = %q", got)
	}
}

func TestCheckLabel(t *testing.T) {
	for _, ok := range append([]string{"smoke", "v1.2_beta-3", "silero-vad-v5", "Ünïcode"}, Families...) {
		if err := CheckLabel(ok); err != nil {
			t.Errorf("CheckLabel(%q): %v", ok, err)
		}
	}
	for bad, want := range map[string]string{
		"":         "an empty string",
		"a&&b":     `'&' is an operator`,
		"a b":      "(U+0020)",
		"a\tb":     "(U+0009)",
		"a\u00a0b": "(U+00A0)",
		"k:v":      `':' is an operator`,
		`"q"`:      `'"' is an operator`,
		"re/x":     `'/' is an operator`,
		"~x":       `'~' is an operator`,
	} {
		if err := CheckLabel(bad); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckLabel(%q) = %v, want it to say %s", bad, err, want)
		}
	}
}

// Parse reads no file: the catalog's folder is as its name gives it.
func TestParseModelsDirAsGiven(t *testing.T) {
	c, err := Parse(filepath.Join("some", "dir", "models.yaml"), readFile(t, "testdata/valid/models.yaml"),
		"hardware.yaml", readFile(t, "testdata/valid/hardware.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join("some", "dir")
	if c.ModelsDir != want || c.Models[0].Dir != want {
		t.Errorf("ModelsDir %q, first model's Dir %q, want %q", c.ModelsDir, c.Models[0].Dir, want)
	}
}
