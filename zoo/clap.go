package zoo

import "github.com/hwtest/hwtest/onnx"

// clapAudio1 and clapAudio2 are the two stages of the simplified HTSAT
// audio encoder (a Swin-like hierarchy: the second stage runs on 2×2-merged
// patches at twice the width); clapText is the RoBERTa-like text encoder.
var (
	clapAudio1 = cfg{d: 32, heads: 2, ff: 64, layers: 1, eps: 1e-5, preNorm: true, act: "gelu"}
	clapAudio2 = cfg{d: 64, heads: 4, ff: 128, layers: 1, eps: 1e-5, preNorm: true, act: "gelu"}
	clapText   = cfg{d: 32, heads: 2, ff: 37, layers: 2, eps: 1e-5, act: "gelu"}
)

const (
	clapVocab = 1000
	clapTime  = 32 // spectrogram frames (HTSAT's are fixed too: 1001)
	clapMels  = 16
	clapPatch = 4 // 8×4 = 32 patches
	clapProj  = 16
)

func init() {
	register("tiny-clap", model{
		arch:   "clap",
		family: "audio",
		desc: "CLAP-style audio-text dual encoder: log-mel spectrogram [audio_batch, 1, 32, 16] → 4×4 Conv2d patch " +
			"embedding, learned positions, LayerNorm, a simplified HTSAT (a Swin-like stage of 1 pre-norm layer, 2×2 patch " +
			"merging to width 64, a second stage), mean pooling; a RoBERTa-like post-norm text encoder pooled at the first " +
			"token; 2-layer ReLU projections, L2 normalisation, scaled cosine similarity logits_per_audio [audio_batch, batch]",
		perturbation: "the audio projection's output is sign-flipped, so every audio clip's similarity to the texts " +
			"is negated and its ranking of the texts (argsort of logits_per_audio rows) is reversed",
		max:   map[string]int64{"input_ids": clapVocab, "attention_mask": 2},
		build: buildCLAP,
	})
}

func buildCLAP(g *onnx.Graph, o Options) {
	n := nn{g}
	ids := g.Input("input_ids", onnx.Int64, "batch", "seq")
	mask := g.Input("attention_mask", onnx.Int64, "batch", "seq")
	feats := g.Input("input_features", onnx.Float32, "audio_batch", 1, clapTime, clapMels)

	projection := func(scope, x string, in int64) string {
		defer g.Scope(scope)()
		return n.linear("linear2", n.act("relu", n.linear("linear1", x, in, clapProj)), clapProj, clapProj)
	}

	// Audio tower.
	end := g.Scope("audio_model")
	gh, gw := int64(clapTime/clapPatch), int64(clapMels/clapPatch)
	c1, c2 := clapAudio1, clapAudio2
	x := func() string {
		defer g.Scope("patch_embed")()
		conv := n.Op("Conv", []string{feats, n.weight(c1.d, 1, clapPatch, clapPatch), n.Fill(n.Fresh("bias"), 0, c1.d)},
			onnx.Ints("kernel_shape", clapPatch, clapPatch), onnx.Ints("strides", clapPatch, clapPatch))
		x := n.op("Transpose", []onnx.Attr{onnx.Ints("perm", 0, 2, 1)}, n.op("Reshape", nil, conv, n.Int64s(0, c1.d, gh*gw)))
		x = n.add(x, n.weight(gh*gw, c1.d))
		return n.norm("norm", x, c1)
	}()
	x = n.stack("layers.0", x, "", "", "", c1, nil)
	x = func() string { // Swin patch merging: each 2×2 neighbourhood → one token of 4·d, then linear to 2·d
		defer g.Scope("downsample")()
		m := n.op("Reshape", nil, x, n.Int64s(0, gh/2, 2, gw/2, 2, c1.d))          // [b, h', dh, w', dw, d]
		m = n.op("Transpose", []onnx.Attr{onnx.Ints("perm", 0, 1, 3, 4, 2, 5)}, m) // [b, h', w', dw, dh, d]
		m = n.op("Reshape", nil, m, n.Int64s(0, gh*gw/4, 4*c1.d))
		m = n.norm("norm", m, cfg{d: 4 * c1.d, eps: c1.eps})
		defer n.Scope("reduction")()
		return n.matmul(m, n.weight(4*c1.d, c2.d))
	}()
	x = n.stack("layers.1", x, "", "", "", c2, nil)
	x = n.norm("norm", x, c2)
	pooled := n.op("ReduceMean", []onnx.Attr{onnx.Ints("axes", 1), onnx.Int("keepdims", 0)}, x) // [ab, d2]
	end()
	audio := projection("audio_projection", pooled, c2.d)
	if o.Perturb {
		audio = n.mul(audio, n.Scalar(-1))
	}
	audio = n.l2normalize(audio)

	// Text tower.
	_, textPooled := n.bert("text_model", ids, mask, clapText, clapVocab, false)
	text := n.l2normalize(projection("text_projection", textPooled, clapText.d))

	tT := n.op("Transpose", []onnx.Attr{onnx.Ints("perm", 1, 0)}, text)
	perAudio := n.mul(n.matmul(audio, tT), n.Scalar(1/0.07))
	g.Node("Identity", []string{perAudio}, []string{"logits_per_audio"})
	g.Node("Transpose", []string{perAudio}, []string{"logits_per_text"}, onnx.Ints("perm", 1, 0))
	g.Node("Identity", []string{text}, []string{"text_embeds"})
	g.Node("Identity", []string{audio}, []string{"audio_embeds"})
	g.Output("logits_per_audio", onnx.Float32, "audio_batch", "batch")
	g.Output("logits_per_text", onnx.Float32, "batch", "audio_batch")
	g.Output("text_embeds", onnx.Float32, "batch", clapProj)
	g.Output("audio_embeds", onnx.Float32, "audio_batch", clapProj)
}
