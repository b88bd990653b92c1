package conformance_test

import (
	"testing"

	"github.com/hwtest/hwtest/conformance"
	"github.com/hwtest/hwtest/internal/testenv"
)

// The installed libonnx-testdata 1.12.0 has 932 node cases of 164 operators (plain
// cases; expanded ones count for the operator they expand).
func TestLoadReadsEveryNodeCase(t *testing.T) {
	dir, err := conformance.DataDir("")
	testenv.Need(t, "ONNX's test cases (make setup)", err)
	cases, err := conformance.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) != 932 {
		t.Errorf("%d cases, want 932", len(cases))
	}
	ops := conformance.ByOp(cases)
	if len(ops) != 164 {
		t.Errorf("%d operators, want 164", len(ops))
	}
	byName := map[string]conformance.Case{}
	for _, c := range cases {
		byName[c.Name] = c
	}
	for name, want := range map[string]conformance.Case{
		"test_add_bcast":               {Op: "Add", Opset: 14, Inputs: 2, Outputs: 1},
		"test_softmax_axis_0_expanded": {Op: "Softmax", Opset: 13, Expanded: true, Inputs: 1, Outputs: 1},
		"test_adam":                    {Op: "Adam", Domain: "ai.onnx.preview.training", Opset: 1, Inputs: 6, Outputs: 3},
		"test_loop16_seq_none":         {Op: "Loop", Opset: 16, Inputs: 3, Outputs: 1},
		"test_scan9_sum":               {Op: "Scan", Opset: 9, Inputs: 2, Outputs: 2},
		"test_constant":                {Op: "Constant", Opset: 13, Inputs: 0, Outputs: 1},
		"test_resize_downsample_sizes_nearest_tf_half_pixel_for_nn": {Op: "Resize", Opset: 11, Inputs: 2, Outputs: 1},
	} {
		got := byName[name]
		got.Name, got.Dir = "", ""
		if got != want {
			t.Errorf("%s: got %+v, want %+v", name, got, want)
		}
	}
}
