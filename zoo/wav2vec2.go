package zoo

import (
	"fmt"

	"github.com/hwtest/hwtest/onnx"
)

// wav2vec2Cfg is the transformer of tiny-wav2vec2: post-norm (the
// do_stable_layer_norm=False layout of wav2vec2-base), GELU FFN.
var wav2vec2Cfg = cfg{d: 32, heads: 2, ff: 37, layers: 2, eps: 1e-5, act: "gelu"}

const (
	wav2vec2ConvDim  = 32
	wav2vec2Vocab    = 32 // CTC characters, pad/blank included
	wav2vec2PosConv  = 16 // num_conv_pos_embeddings: an even kernel, so SamePad drops one frame
	wav2vec2PosGroup = 4  // num_conv_pos_embedding_groups
)

// wav2vec2Kernels and wav2vec2Strides are the feature extractor's Conv1d
// layers (wav2vec2-base has 7; the first three kinds are kept). frames =
// ((samples−10)/5+1 −3)/2+1 −3)/2+1 with floor division: 400 samples give
// 19 frames, and at least 40 samples are needed for one frame.
var (
	wav2vec2Kernels = []int64{10, 3, 3}
	wav2vec2Strides = []int64{5, 2, 2}
)

func init() {
	register("tiny-wav2vec2", model{
		arch:   "wav2vec2",
		family: "audio",
		desc: "Wav2Vec2-style CTC speech recogniser: raw waveform [batch, samples] → 3 bias-free Conv1d feature " +
			"extractor layers (kernels 10/3/3, strides 5/2/2, GroupNorm with one group per channel on the first, GELU), " +
			"feature projection (LayerNorm, linear), convolutional position embedding (grouped Conv1d, kernel 16, " +
			"4 groups, SamePad, GELU) added to the features, LayerNorm, 2 post-norm transformer layers, CTC head " +
			"logits [batch, frames, 32]; at least 40 samples (400 samples → 19 frames)",
		perturbation: "the position convolution's SamePad trims the first frame instead of the last, so the " +
			"position embedding is shifted by one frame and frame-wise CTC argmax tokens change",
		build: buildWav2Vec2,
	})
}

func buildWav2Vec2(g *onnx.Graph, o Options) {
	n := nn{g}
	c := wav2vec2Cfg
	wave := g.Input("input_values", onnx.Float32, "batch", "samples")

	x := n.op("Unsqueeze", nil, wave, n.Int64s(1)) // [b, 1, samples]
	end := g.Scope("feature_extractor")
	in := int64(1)
	for i, k := range wav2vec2Kernels {
		endL := g.Scope(fmt.Sprintf("conv_layers.%d", i))
		w := n.weight(wav2vec2ConvDim, in, k)
		x = g.Op("Conv", []string{x, w}, onnx.Ints("kernel_shape", k), onnx.Ints("strides", wav2vec2Strides[i]))
		if i == 0 {
			// GroupNorm(num_groups = channels) is instance norm.
			x = n.Op("InstanceNormalization", []string{x, n.Fill(n.Fresh("weight"), 1, wav2vec2ConvDim), n.Fill(n.Fresh("bias"), 0, wav2vec2ConvDim)},
				onnx.Float("epsilon", 1e-5))
		}
		x = n.act("gelu", x)
		in = wav2vec2ConvDim
		endL()
	}
	end()
	x = n.op("Transpose", []onnx.Attr{onnx.Ints("perm", 0, 2, 1)}, x) // [b, frames, conv_dim]

	end = g.Scope("feature_projection")
	x = n.norm("layer_norm", x, cfg{d: wav2vec2ConvDim, eps: 1e-5})
	x = n.linear("projection", x, wav2vec2ConvDim, c.d)
	end()

	end = g.Scope("encoder")
	pos := func() string {
		defer g.Scope("pos_conv_embed")()
		t := n.op("Transpose", []onnx.Attr{onnx.Ints("perm", 0, 2, 1)}, x) // [b, d, frames]
		w := n.weight(c.d, c.d/wav2vec2PosGroup, wav2vec2PosConv)
		p := n.Op("Conv", []string{t, w, n.Fill(n.Fresh("bias"), 0, c.d)}, onnx.Ints("kernel_shape", wav2vec2PosConv),
			onnx.Ints("pads", wav2vec2PosConv/2, wav2vec2PosConv/2), onnx.Int("group", wav2vec2PosGroup)) // frames+1
		if o.Perturb {
			p = n.sliceFrom(p, 2, 1)
		} else {
			p = n.op("Slice", nil, p, n.Int64s(0), n.Int64s(-1), n.Int64s(2))
		}
		return n.op("Transpose", []onnx.Attr{onnx.Ints("perm", 0, 2, 1)}, n.act("gelu", p))
	}()
	x = n.norm("layer_norm", n.add(x, pos), c)
	x = n.stack("layers", x, "", "", "", c, nil)
	end()
	logits := n.linear("lm_head", x, c.d, wav2vec2Vocab)

	g.Node("Identity", []string{logits}, []string{"logits"})
	g.Output("logits", onnx.Float32, "batch", "frames", wav2vec2Vocab)
}
