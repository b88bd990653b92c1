package runtime

import (
	"slices"
	"strings"
	"testing"

	"github.com/hwtest/hwtest/catalog"
	"github.com/hwtest/hwtest/spec"
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

// brokenCases break every invariant on purpose: a target that gets the model wrong
// and the invariant that must say so. Most run the catalog model's zoo stand-in
// against its deliberately broken variant; the two properties no weight
// perturbation breaks (a probability outside [0, 1], a hidden state of the wrong
// shape) are broken by editing what the target returned.
var brokenCases = []struct {
	model     string // catalog id; its zoo model runs
	inv       Invariant
	wantInMsg string
	edit      func(r *Run) // nil: the broken variant runs
}{
	{model: "opt-125m", inv: OutputsAgree, wantInMsg: "differ from the CPU reference"},
	{model: "vit-base-patch16-224", inv: ProbabilitiesInUnitRange, wantInMsg: "is not a probability",
		edit: func(r *Run) { mustFind(r.Got, "probabilities").Data[3] = 1.5 }},
	{model: "mamba-130m", inv: StreamingStateAgrees, wantInMsg: "of 4 differs from the CPU's"},
	{model: "bert-base-uncased", inv: HiddenStateShape, wantInMsg: "want [",
		edit: func(r *Run) {
			h := mustFind(r.Got, "last_hidden_state")
			h.Shape = []int64{h.Shape[0], h.Shape[1] * h.Shape[2]} // flattened by a target
		}},
	{model: "rag-token-nq", inv: PooledEmbeddingCosine, wantInMsg: "pooled embedding cosine"},
	{model: "bert-base-uncased", inv: PaddingIgnored, wantInMsg: "changing a masked padding token"},
	{model: "gpt2", inv: ArgmaxAgrees, wantInMsg: "the target predicts token"},
	{model: "gpt2", inv: Causality, wantInMsg: "changing the last token changed position"},
	{model: "t5-small", inv: TopKAgrees, wantInMsg: "in the target's top 5, not in the CPU's"},
	{model: "vit-base-patch16-224", inv: DistributionSumsToOne, wantInMsg: "sums to"},
	{model: "clip-vit-base-patch32", inv: RankingAgrees, wantInMsg: "ranks candidate"},
	{model: "mixtral-8x7b", inv: RouterTopKAgrees, wantInMsg: "in the target's top 2"},
	{model: "stable-diffusion-v1-5-unet", inv: SameInputsSameOutputs, wantInMsg: "a second run on the same inputs differs"},
	{model: "mamba-130m", inv: ChunkedScanEqualsWhole, wantInMsg: "two chunks with carried state differ"},
}

// brokenElsewhere names, per invariant, the test that breaks it on purpose.
var brokenElsewhere = map[string]string{
	"MatchesExpectedOutputs": "TestExpectedOutputs (a wrong expected value)",
}

// mustFind returns a pointer to a named output, so a case can edit it in place.
func mustFind(ts []Tensor, name string) *Tensor {
	for i := range ts {
		if ts[i].Name == name {
			return &ts[i]
		}
	}
	panic("no output " + name)
}

// TestEveryInvariantFailsOnPurpose: each invariant holds on a model run correctly
// and fails, as a violation naming what broke, on a target that gets it wrong; and
// no invariant is left without such a case.
func TestEveryInvariantFailsOnPurpose(t *testing.T) {
	c, err := catalog.Load("../models.yaml", "../hardware.yaml")
	if err != nil {
		t.Fatal(err)
	}
	covered := map[string]bool{}
	for _, bc := range brokenCases {
		for name, inv := range Invariants {
			if inv.Name == bc.inv.Name {
				covered[name] = true
			}
		}
		t.Run(bc.model+"/"+bc.inv.Name, func(t *testing.T) {
			i := slices.IndexFunc(c.Models, func(m catalog.Model) bool { return m.ID == bc.model })
			if i < 0 {
				t.Fatalf("%s is not in models.yaml", bc.model)
			}
			m := c.Models[i]
			zooName, ok := strings.CutPrefix(m.EffectiveSource(), "zoo:")
			if !ok {
				t.Fatalf("%s runs %s, not a zoo model", m.ID, m.EffectiveSource())
			}
			good := familyRun(t, zooName, spec.ModelOf(m), false)
			if err := bc.inv.Check(good); err != nil {
				t.Fatalf("does not hold on the model run correctly: %v", err)
			}
			bad := good
			if bc.edit != nil {
				bc.edit(good)
			} else {
				bad = familyRun(t, zooName, spec.ModelOf(m), true)
			}
			err := bc.inv.Check(bad)
			if !IsViolation(err) || !strings.Contains(err.Error(), bc.wantInMsg) {
				t.Errorf("on the broken target: got %v, want a violation mentioning %q", err, bc.wantInMsg)
			}
		})
	}
	// Invariants that need files a catalog model does not have are broken on
	// purpose by their own tests.
	for name := range brokenElsewhere {
		covered[name] = true
	}
	for name := range Invariants {
		if !covered[name] {
			t.Errorf("invariant %s has no case that breaks it on purpose (add one to brokenCases)", name)
		}
	}
}
