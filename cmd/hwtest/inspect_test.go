package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hwtest/hwtest/zoo"
)

// zooFile writes a zoo model into dir and returns its path.
func zooFile(t *testing.T, dir, name string) string {
	t.Helper()
	b, _, err := zoo.Build(name)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name+".onnx")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestInspectPrintsWhatACatalogEntryNeeds(t *testing.T) {
	path := zooFile(t, t.TempDir(), "tiny-detr")
	code, stdout, stderr := hwtest("inspect", path)
	if code != ExitOK {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	for _, want := range []string{
		"IR version 8, opsets ai.onnx 17",
		"pixel_values  float  [batch, 3, height, width]",
		"probabilities  float  [batch, 8, 11]  made by Softmax (axis -1)",
		"operators: 245 nodes of 23 kinds: Add 57, MatMul 48,",
		"weights: 52.8k params, 206.3 KiB: initializers 52.8k params, 206.3 KiB; made in-graph 0 params, 0 B",
		"family: looks like vision, task object-detection (confidence high): 4-D float input pixel_values [batch, 3, height, width]; 4 Conv",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("no %q in\n%s", want, stdout)
		}
	}

	code, stdout, _ = hwtest("inspect", "--json", path)
	var r inspectReport
	if err := json.Unmarshal([]byte(stdout), &r); code != ExitOK || err != nil {
		t.Fatalf("exit %d, %v\n%s", code, err, stdout)
	}
	if r.Family.Family != "vision" || r.Inputs[0].Name != "pixel_values" || r.Inputs[0].Shape[2] != "height" ||
		r.Weights.Params != 52779 || r.Weights.InGraph.Params != 0 || r.Size.Tier != "tiny" || r.Operators["Conv"] != 4 {
		t.Errorf("json: %+v", r)
	}

	truncated := filepath.Join(t.TempDir(), "cut.onnx")
	b, _ := os.ReadFile(path)
	write(t, truncated, string(b[:len(b)/2]))
	if code, _, stderr := hwtest("inspect", truncated); code != ExitError || !strings.Contains(stderr, truncated+": not an ONNX model") {
		t.Errorf("truncated file: exit %d\n%s", code, stderr)
	}
}
