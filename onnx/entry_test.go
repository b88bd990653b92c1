package onnx_test

import (
	"fmt"
	"testing"

	"github.com/hwtest/hwtest/onnx"
	"github.com/hwtest/hwtest/zoo"
)

// A planned entry binds every open dim of every input, one size per symbol across
// inputs, keeps the model's fixed dims, and names the outputs its family's checks
// need: for every zoo model.
func TestPlanBindsEveryDimOfEveryZooModel(t *testing.T) {
	for _, name := range zoo.Names() {
		b, info, err := zoo.Build(name)
		if err != nil {
			t.Fatal(err)
		}
		s, err := onnx.Inspect(b)
		if err != nil {
			t.Fatal(err)
		}
		plans := onnx.PlanInputs(s, info.Family)
		if len(plans) != len(s.Inputs) {
			t.Fatalf("%s: %d plans for %d inputs", name, len(plans), len(s.Inputs))
		}
		bound := map[string]int64{}
		for i, p := range plans {
			in := s.Inputs[i]
			if p.Name != in.Name || len(p.Dims) != len(in.Dims) || len(p.Symbols) != len(in.Dims) {
				t.Fatalf("%s: plan %+v for input %+v", name, p, in)
			}
			if (p.Value == nil) == (p.Range == nil) {
				t.Errorf("%s: input %s: value %v range %v, want exactly one", name, in.Name, p.Value, p.Range)
			}
			for j, d := range in.Dims {
				got := p.Dims[j]
				switch {
				case got <= 0:
					t.Errorf("%s: input %s dim %d bound to %d", name, in.Name, j, got)
				case d.Param == "" && d.Value >= 0 && got != d.Value:
					t.Errorf("%s: input %s dim %d is fixed at %d, planned %d", name, in.Name, j, d.Value, got)
				case d.Param != "":
					if prev, ok := bound[d.Param]; ok && prev != got {
						t.Errorf("%s: symbol %s bound to %d and %d", name, d.Param, prev, got)
					}
					bound[d.Param] = got
				}
			}
		}
		o := onnx.PlanOutputs(s, info.Family)
		if o.Primary != info.Outputs[0].Name {
			t.Errorf("%s: primary %q, want the first output %q", name, o.Primary, info.Outputs[0].Name)
		}
		need := map[string]string{"vision-text": o.Ranking, "rag": o.Ranking, "mixture-of-experts": o.Router, "state-space": o.State}
		if r, ok := need[info.Family]; ok && r == "" {
			t.Errorf("%s: no output for the %s family's check: %+v", name, info.Family, o)
		}
	}
	// What the catalog sets by hand for these, the plan finds.
	for name, want := range map[string]string{"tiny-vit": "probabilities", "tiny-detr": "probabilities", "tiny-mixtral": "router_logits/2", "tiny-mamba": "state→new_state"} {
		b, info, _ := zoo.Build(name)
		s, _ := onnx.Inspect(b)
		o := onnx.PlanOutputs(s, info.Family)
		got := map[string]string{"tiny-vit": o.Distribution, "tiny-detr": o.Distribution,
			"tiny-mixtral": fmt.Sprintf("%s/%d", o.Router, o.RouterTopK), "tiny-mamba": o.StateInput + "→" + o.State}[name]
		if got != want {
			t.Errorf("%s: %q, want %q (%+v)", name, got, want, o)
		}
	}
}

// Images get 224×224 unless one side is fixed; the channels of NHWC stay; a
// ranking model gets several candidates; a softmax over a middle axis is a
// distribution along that axis.
func TestPlanDefaults(t *testing.T) {
	g := onnx.NewGraph("defaults")
	x := g.Input("image", onnx.Float32, "n", "h", 320, 3)
	ids := g.Input("input_ids", onnx.Int64, "texts", "seq")
	mask := g.Input("attention_mask", onnx.Int64, "texts", "seq")
	g.Input("pixel_mask", onnx.Int64, "n", "h") // h follows the image's bound size
	g.Node("Softmax", []string{x}, []string{"heat"}, onnx.Int("axis", 1))
	g.Node("Identity", []string{ids}, []string{"logits_per_image"})
	g.Node("Identity", []string{mask}, []string{"m"})
	g.Output("heat", onnx.Float32, "n", "h", 320, 3)
	g.Output("logits_per_image", onnx.Int64, "texts", "seq")
	g.Output("m", onnx.Int64, "texts", "seq")
	s, err := onnx.Inspect(g.Model().Marshal())
	if err != nil {
		t.Fatal(err)
	}
	p := onnx.PlanInputs(s, "vision-text")
	if got := fmt.Sprint(p[0].Dims, p[1].Dims, p[2].Dims, p[3].Dims); got != "[1 320 320 3] [3 8] [3 8] [1 320]" {
		t.Errorf("dims %v", got)
	}
	if p[1].Range[0] != 1 || p[1].Range[1] != 1000 || p[2].Value[0] != 1 || p[0].Range[0] != -1 {
		t.Errorf("values %+v", p)
	}
	o := onnx.PlanOutputs(s, "vision-text")
	// A Softmax over axis 1 of [n, h, 320, 3] is a distribution along that axis.
	if o.Distribution != "heat" || o.DistributionAxis != 1 || o.Probabilities != "" || o.Ranking != "logits_per_image" || len(o.Notes) != 0 {
		t.Errorf("outputs %+v", o)
	}
}
