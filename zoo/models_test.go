package zoo_test

import (
	"fmt"
	"testing"

	"github.com/hwtest/hwtest/onnx/onnxtest"
	"github.com/hwtest/hwtest/zoo"
)

// Property tests of the newer models and their perturbed variants.

// causality: for a decoder with input_ids and attention_mask, changing the
// last token leaves the earlier positions' logits unchanged.
func causality(t *testing.T, vocab int) func(data []byte) error {
	return func(data []byte) error {
		run := func(last int64) onnxtest.Tensor {
			return onnxtest.Run(t, data, map[string]onnxtest.Tensor{
				"input_ids":      onnxtest.I(ids(5, 17, 256, 3, last), 1, 5),
				"attention_mask": onnxtest.I(ids(1, 1, 1, 1, 1), 1, 5),
			})["logits"]
		}
		a, b := run(999), run(42)
		prefix := 4 * vocab
		if d := onnxtest.MaxAbsDiff(a.Float[:prefix], b.Float[:prefix]); d > 1e-6 {
			return fmt.Errorf("earlier logits moved by %g when the last token changed", d)
		}
		if d := onnxtest.MaxAbsDiff(a.Float[prefix:], b.Float[prefix:]); d == 0 {
			return fmt.Errorf("the last position's logits did not change with its token")
		}
		return nil
	}
}

// leftPadInvariant: the real tokens' logits of a left-padded sequence equal
// those of the unpadded one. It holds for OPT because its positions come
// from the attention mask, and for Qwen2 because rotary embeddings make
// attention depend only on relative positions.
func leftPadInvariant(t *testing.T, name string, vocab int, tol float64) {
	t.Helper()
	data, _ := build(t, name, zoo.Options{})
	short := onnxtest.Run(t, data, map[string]onnxtest.Tensor{
		"input_ids":      onnxtest.I(ids(7, 42, 300, 9), 1, 4),
		"attention_mask": onnxtest.I(ids(1, 1, 1, 1), 1, 4),
	})["logits"]
	padded := onnxtest.Run(t, data, map[string]onnxtest.Tensor{
		"input_ids":      onnxtest.I(ids(1, 1, 7, 42, 300, 9), 1, 6),
		"attention_mask": onnxtest.I(ids(0, 0, 1, 1, 1, 1), 1, 6),
	})["logits"]
	if d := onnxtest.MaxAbsDiff(short.Float, padded.Float[2*vocab:]); d > tol {
		t.Errorf("%s: left padding moved the real tokens' logits by %g", name, d)
	}
}

func TestOPTCausality(t *testing.T) {
	onnxtest.Require(t)
	expectProperty(t, "tiny-opt", causality(t, 1000))
}

func TestOPTLeftPadding(t *testing.T) {
	onnxtest.Require(t)
	leftPadInvariant(t, "tiny-opt", 1000, 1e-5)
}

func TestQwen2Causality(t *testing.T) {
	onnxtest.Require(t)
	expectProperty(t, "tiny-qwen2", causality(t, 1000))
}

// TestQwen2RotaryRelative: with rotary positions the logits depend only on
// relative positions, so left padding (which shifts every real token's
// absolute position by 2) leaves the real tokens' logits unchanged.
func TestQwen2RotaryRelative(t *testing.T) {
	onnxtest.Require(t)
	leftPadInvariant(t, "tiny-qwen2", 1000, 1e-4)
	// ...while order still matters: swapping the first two tokens moves the
	// last position's logits (without positions it could not).
	data, _ := build(t, "tiny-qwen2", zoo.Options{})
	last := func(v ...int64) []float32 {
		return onnxtest.Run(t, data, map[string]onnxtest.Tensor{
			"input_ids": onnxtest.I(v, 1, 4), "attention_mask": onnxtest.I(ids(1, 1, 1, 1), 1, 4),
		})["logits"].Float[3*1000:]
	}
	if d := onnxtest.MaxAbsDiff(last(7, 42, 300, 9), last(42, 7, 300, 9)); d < 1e-3 {
		t.Errorf("tiny-qwen2: swapping two earlier tokens moved the last logits by only %g: no positional signal", d)
	}
}

func TestLLaVANextGreedyTokens(t *testing.T) {
	expectAgreement(t, "tiny-llava-next", sizes, 21, sameArgmax("logits"))
}

func TestWav2Vec2FrameArgmax(t *testing.T) {
	expectAgreement(t, "tiny-wav2vec2", sizes, 22, sameArgmax("logits"))
}

func TestCLAPRanking(t *testing.T) {
	expectAgreement(t, "tiny-clap", map[string]int64{"batch": 3, "seq": 6, "audio_batch": 2}, 23, sameRanking("logits_per_audio"))
}

func TestXCLIPRanking(t *testing.T) {
	expectAgreement(t, "tiny-xclip", map[string]int64{"texts": 3, "seq": 6, "batch": 2}, 24, sameRanking("logits_per_video"))
}

// TestDETRProbabilities: each query's class probabilities sum to 1 and
// every box coordinate is in [0, 1].
func TestDETRProbabilities(t *testing.T) {
	onnxtest.Require(t)
	_, info := build(t, "tiny-detr", zoo.Options{})
	in := randomInputs(t, info, sizes, 25)
	expectProperty(t, "tiny-detr", func(data []byte) error {
		out := onnxtest.Run(t, data, in)
		p := out["probabilities"]
		w := int(p.Shape[2])
		for r := 0; r < len(p.Float)/w; r++ {
			sum := float32(0)
			for _, v := range p.Float[r*w : (r+1)*w] {
				sum += v
			}
			if sum < 1-1e-5 || sum > 1+1e-5 {
				return fmt.Errorf("query row %d: probabilities sum to %g", r, sum)
			}
		}
		for i, v := range out["pred_boxes"].Float {
			if v < 0 || v > 1 {
				return fmt.Errorf("pred_boxes[%d] = %g is outside [0, 1]", i, v)
			}
		}
		return nil
	})
}

// TestDETRAnySize: the sine position embeddings follow the image size.
func TestDETRAnySize(t *testing.T) {
	onnxtest.Require(t)
	data, info := build(t, "tiny-detr", zoo.Options{})
	for _, hw := range [][2]int64{{8, 8}, {64, 48}} {
		out := onnxtest.Run(t, data, randomInputs(t, info, map[string]int64{"batch": 1, "height": hw[0], "width": hw[1]}, 26))
		onnxtest.CheckFloat(t, "pred_logits", out["pred_logits"], 1, 8, 11)
	}
}
