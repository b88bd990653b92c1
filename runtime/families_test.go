package runtime

import (
	"strings"
	"testing"

	"github.com/hwtest/hwtest/zoo"
)

// familyRun builds a zoo model, computes its CPU reference, and runs either the same
// model or its deliberately broken variant as the "target", on the CPU: what a real
// target that got the model wrong would look like to the invariants.
func familyRun(t *testing.T, name string, m Model, broken bool) *Run {
	t.Helper()
	requireORT(t)
	good, _, err := zoo.Build(name)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	refPath, _ := writeTemp(dir, "good.onnx", good)
	targetPath := refPath
	if broken {
		bad, info, err := zoo.BuildWith(name, zoo.Options{Perturb: true})
		if err != nil {
			t.Fatal(err)
		}
		if info.Perturbation == "" {
			t.Fatalf("%s has no broken variant", name)
		}
		targetPath, _ = writeTemp(dir, "broken.onnx", bad)
	}
	m.ID = name
	r, done, err := OpenRun(m, refPath, targetPath, Target{ID: "cpu", Provider: CPUProvider, Tolerance: Tolerance{RTol: 1e-4, ATol: 1e-5}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(done)
	return r
}

// padded is an attention mask whose rows end in padding.
func padded(batch, seq, pad int) []float64 {
	var v []float64
	for b := 0; b < batch; b++ {
		for s := 0; s < seq; s++ {
			if s < seq-pad {
				v = append(v, 1)
			} else {
				v = append(v, 0)
			}
		}
	}
	return v
}

// Each family's checks hold on the real model and catch its broken variant.
var familyCases = []struct {
	zoo       string
	model     Model
	holds     []Invariant // on the model itself
	catches   Invariant   // fails on the broken variant
	wantInMsg string
}{
	{
		zoo: "tiny-bert",
		model: Model{Family: "text", Architecture: "encoder", Inputs: map[string]Input{
			"input_ids":      {Dims: []int64{2, 8}, Range: []float64{1, 1000}},
			"attention_mask": {Dims: []int64{2, 8}, Value: padded(2, 8, 3)},
		}, Outputs: Outputs{Primary: "last_hidden_state"}},
		holds:     []Invariant{OutputsAgree, HiddenStateShape, PooledEmbeddingCosine, PaddingIgnored},
		catches:   PaddingIgnored,
		wantInMsg: "changing a masked padding token changed position",
	},
	{
		zoo:       "tiny-gpt2",
		model:     Model{Family: "text", Architecture: "decoder", Inputs: map[string]Input{"input_ids": {Dims: []int64{2, 6}, Range: []float64{1, 1000}}}},
		holds:     []Invariant{OutputsAgree, ArgmaxAgrees, Causality},
		catches:   Causality,
		wantInMsg: "changing the last token changed position",
	},
	{
		zoo:       "tiny-vit",
		model:     Model{Family: "vision", Inputs: map[string]Input{"pixel_values": {Dims: []int64{2, 3, 32, 32}}}, Outputs: Outputs{Primary: "logits", Distribution: "probabilities"}},
		holds:     []Invariant{OutputsAgree, TopKAgrees, ProbabilitiesInUnitRange, DistributionSumsToOne},
		catches:   DistributionSumsToOne,
		wantInMsg: "sums to",
	},
	{
		zoo: "tiny-mamba",
		model: Model{Family: "state-space", Inputs: map[string]Input{
			// Large activations: the tiny model's state is small next to its
			// residual path, and the check must see it.
			"x": {Dims: []int64{1, 8, 16}, Range: []float64{-100, 100}}, "state": {Dims: []int64{1, 16, 4}, Range: []float64{-5, 5}},
		}, Outputs: Outputs{Primary: "y", State: "new_state", StateIn: "state"}},
		holds:     []Invariant{OutputsAgree, ChunkedScanEqualsWhole},
		catches:   ChunkedScanEqualsWhole,
		wantInMsg: "two chunks with carried state differ",
	},
}

func TestFamilyInvariants(t *testing.T) {
	for _, c := range familyCases {
		t.Run(c.zoo, func(t *testing.T) {
			good := familyRun(t, c.zoo, c.model, false)
			for _, inv := range c.holds {
				if err := inv.Check(good); err != nil {
					t.Errorf("%s on the real model: %v", inv.Name, err)
				}
			}
			bad := familyRun(t, c.zoo, c.model, true)
			err := c.catches.Check(bad)
			if err == nil || !IsViolation(err) || !strings.Contains(err.Error(), c.wantInMsg) {
				t.Errorf("%s on the broken variant: got %v, want a violation mentioning %q", c.catches.Name, err, c.wantInMsg)
			}
		})
	}
}
