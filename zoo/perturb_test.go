package zoo_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/hwtest/hwtest/onnx/onnxtest"
	"github.com/hwtest/hwtest/zoo"
)

// This file checks the perturbed variants whose broken invariant is an
// agreement with the original model (a ranking, an argmax, a top-k
// selection): the property "agrees with the original's outputs on the
// same inputs" holds for the original and fails for the perturbed build.

// expectAgreement runs the original model once as the reference, then
// asserts with expectProperty that agree(reference, outputs) holds for the
// original and fails for the perturbed variant.
func expectAgreement(t *testing.T, name string, dims map[string]int64, seed uint64, agree func(ref, got map[string]onnxtest.Tensor) error) {
	t.Helper()
	onnxtest.Require(t)
	data, info := build(t, name, zoo.Options{})
	in := randomInputs(t, info, dims, seed)
	ref := onnxtest.Run(t, data, in)
	expectProperty(t, name, func(data []byte) error {
		return agree(ref, onnxtest.Run(t, data, in))
	})
}

// sameArgmax: every row of output out (over its last axis) has the same
// argmax in got as in ref: the greedy token per position, the top class.
func sameArgmax(out string) func(ref, got map[string]onnxtest.Tensor) error {
	return func(ref, got map[string]onnxtest.Tensor) error {
		a, b := onnxtest.ArgMaxRows(ref[out]), onnxtest.ArgMaxRows(got[out])
		if len(a) != len(b) {
			return fmt.Errorf("%s: %d rows, want %d", out, len(b), len(a))
		}
		for i := range a {
			if a[i] != b[i] {
				return fmt.Errorf("%s row %d: argmax %d, reference %d", out, i, b[i], a[i])
			}
		}
		return nil
	}
}

// sameRanking: every row of output out ranks its columns in the same order
// in got as in ref (the family's ranking-agreement check).
func sameRanking(out string) func(ref, got map[string]onnxtest.Tensor) error {
	return func(ref, got map[string]onnxtest.Tensor) error {
		a, b := onnxtest.ArgSortRows(ref[out]), onnxtest.ArgSortRows(got[out])
		if len(a) != len(b) {
			return fmt.Errorf("%s: %d rows, want %d", out, len(b), len(a))
		}
		for i := range a {
			if !slices.Equal(a[i], b[i]) {
				return fmt.Errorf("%s row %d: ranking %v, reference %v", out, i, b[i], a[i])
			}
		}
		return nil
	}
}

// sameTopK: every row of out selects the same set of k largest columns.
func sameTopK(out string, k int) func(ref, got map[string]onnxtest.Tensor) error {
	return func(ref, got map[string]onnxtest.Tensor) error {
		a, b := onnxtest.ArgSortRows(ref[out]), onnxtest.ArgSortRows(got[out])
		if len(a) != len(b) {
			return fmt.Errorf("%s: %d rows, want %d", out, len(b), len(a))
		}
		for i := range a {
			x, y := slices.Sorted(slices.Values(a[i][:k])), slices.Sorted(slices.Values(b[i][:k]))
			if !slices.Equal(x, y) {
				return fmt.Errorf("%s row %d: top-%d %v, reference %v", out, i, k, y, x)
			}
		}
		return nil
	}
}

// all combines agreement checks; the first failure is returned.
func all(checks ...func(ref, got map[string]onnxtest.Tensor) error) func(ref, got map[string]onnxtest.Tensor) error {
	return func(ref, got map[string]onnxtest.Tensor) error {
		for _, c := range checks {
			if err := c(ref, got); err != nil {
				return err
			}
		}
		return nil
	}
}

func TestCLIPRanking(t *testing.T) {
	// 3 texts, 2 images: each image ranks 3 texts.
	expectAgreement(t, "tiny-clip", map[string]int64{"batch": 3, "seq": 6, "image_batch": 2}, 11, sameRanking("logits_per_image"))
}

func TestT5GreedyTokens(t *testing.T) {
	expectAgreement(t, "tiny-t5", sizes, 12, sameArgmax("logits"))
}

func TestWhisperGreedyTokens(t *testing.T) {
	expectAgreement(t, "tiny-whisper", sizes, 13, sameArgmax("logits"))
}

func TestLLaVAGreedyTokens(t *testing.T) {
	expectAgreement(t, "tiny-llava", sizes, 14, sameArgmax("logits"))
}

func TestRAGRankingAndTokens(t *testing.T) {
	expectAgreement(t, "tiny-rag", sizes, 15, all(sameRanking("doc_scores"), sameArgmax("logits")))
	// Each half of the perturbation breaks its own check.
	onnxtest.Require(t)
	data, info := build(t, "tiny-rag", zoo.Options{})
	bad, _ := build(t, "tiny-rag", zoo.Options{Perturb: true})
	in := randomInputs(t, info, sizes, 15)
	ref, got := onnxtest.Run(t, data, in), onnxtest.Run(t, bad, in)
	if sameRanking("doc_scores")(ref, got) == nil {
		t.Error("tiny-rag perturbed: document ranking unchanged")
	}
	if sameArgmax("logits")(ref, got) == nil {
		t.Error("tiny-rag perturbed: generator argmax unchanged")
	}
}

func TestMixtralRouterTopK(t *testing.T) {
	expectAgreement(t, "tiny-mixtral", sizes, 16, sameTopK("router_logits", 2))
}

// TestUNetSameSeedSameOutput: one session run twice on the same inputs
// gives the same output (the diffusion family's "same seed, same output").
func TestUNetSameSeedSameOutput(t *testing.T) {
	onnxtest.Require(t)
	_, info := build(t, "tiny-unet", zoo.Options{})
	in := randomInputs(t, info, sizes, 17)
	expectProperty(t, "tiny-unet", func(data []byte) error {
		s := onnxtest.Open(t, data)
		defer s.Close()
		a, b := s.Run(t, in)["out_sample"], s.Run(t, in)["out_sample"]
		if d := onnxtest.MaxAbsDiff(a.Float, b.Float); d != 0 {
			return fmt.Errorf("two runs differ by %g", d)
		}
		return nil
	})
}
