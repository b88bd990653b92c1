package generator_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hwtest/hwtest/catalog"
	"github.com/hwtest/hwtest/conformance"
	"github.com/hwtest/hwtest/generator"
)

func TestConformanceOneFilePerOperatorOneSpecPerCase(t *testing.T) {
	cases := []conformance.Case{
		{Name: "test_add", Op: "Add", Opset: 14},
		{Name: "test_add_bcast", Op: "Add", Opset: 14},
		{Name: "test_adam", Op: "Adam", Domain: "ai.onnx.preview.training", Opset: 1},
		{Name: "test_softmax_axis_0_expanded", Op: "Softmax", Opset: 13, Expanded: true},
	}
	targets := []catalog.Target{{ID: "cpu", Runner: "native"}, {ID: "webgpu-native", Runner: "browser"}}
	files, err := generator.GenerateConformance(cases, targets)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"generated/conformance/add.go",
		"generated/conformance/ai_onnx_preview_training_adam.go",
		"generated/conformance/conformance_suite_test.go",
		"generated/conformance/softmax.go",
	}
	if got := generator.SortedPaths(files); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("files %v, want %v", got, want)
	}
	add := string(files["generated/conformance/add.go"])
	for _, s := range []string{
		`Describe("Add", Label("op:Add")`,
		`It("test_add", func() { cases.Check("test_add") })`,
		`It("test_add_bcast", func() { cases.Check("test_add_bcast") })`,
		`Context("cpu", Ordered, ContinueOnFailure, Label("hw:cpu"), func() { specs(runtime.NewOpCases(op, targets.Cpu)) })`,
		`Context("webgpu-native", Ordered, ContinueOnFailure, Label("hw:webgpu-native"), func() { specs(runtime.NewOpCases(op, targets.WebgpuNative)) })`,
		"rtol 1e-3, atol 1e-7",
	} {
		if !strings.Contains(add, s) {
			t.Errorf("add.go lacks %s:\n%s", s, add)
		}
	}
	if strings.Count(add, "It(") != 2 {
		t.Errorf("add.go has %d specs, want 2 (one per case)", strings.Count(add, "It("))
	}
	adam := string(files["generated/conformance/ai_onnx_preview_training_adam.go"])
	if !strings.Contains(adam, `Label("op:Adam")`) || !strings.Contains(adam, `Domain: "ai.onnx.preview.training"`) {
		t.Errorf("adam.go: want label op:Adam and the domain:\n%s", adam)
	}
}

// Conformance files carry their own header (they come from ONNX's cases, not
// models.yaml) and are still generated files: Write replaces and removes them.
func TestConformanceFilesAreRemovedWhenStale(t *testing.T) {
	root := t.TempDir()
	old := []conformance.Case{{Name: "test_add", Op: "Add"}, {Name: "test_relu", Op: "Relu"}}
	targets := []catalog.Target{{ID: "cpu", Runner: "native"}}
	files, err := generator.GenerateConformance(old, targets)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := generator.Write(root, files, nil); err != nil {
		t.Fatal(err)
	}
	files, err = generator.GenerateConformance(old[:1], targets)
	if err != nil {
		t.Fatal(err)
	}
	changes, err := generator.Write(root, files, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(changes) != 1 || changes[0].Kind != "stale" || changes[0].Path != "generated/conformance/relu.go" {
		t.Errorf("changes %+v, want relu.go removed as stale", changes)
	}
	if _, err := os.Stat(filepath.Join(root, "generated/conformance/relu.go")); !os.IsNotExist(err) {
		t.Errorf("relu.go still there: %v", err)
	}
}
