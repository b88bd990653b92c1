package zoo

import "github.com/hwtest/hwtest/onnx"

var whisperCfg = cfg{d: 32, heads: 2, ff: 64, layers: 2, eps: 1e-5, preNorm: true, act: "gelu"}

const (
	whisperVocab  = 1000
	whisperMels   = 16
	whisperFrames = 32 // fixed, as Whisper's 30 s window is; the encoder sees 16
)

func init() {
	register("tiny-whisper", model{
		arch:   "whisper",
		family: "audio",
		desc: "Whisper-style speech encoder-decoder: two Conv1d+GELU layers (the second stride 2) over a " +
			"16-bin log-mel spectrogram of 32 frames, 2 encoder layers, 2 decoder layers with cross-attention, tied LM head",
		perturbation: "the decoder's final LayerNorm weight is sign-flipped, so the decoder logits are negated and " +
			"the argmax (greedy) token changes at every decoder position; encoder states are untouched",
		max:   map[string]int64{"decoder_input_ids": whisperVocab},
		build: buildWhisper,
	})
}

func buildWhisper(g *onnx.Graph, o Options) {
	n := nn{g}
	c := whisperCfg
	feats := g.Input("input_features", onnx.Float32, "batch", whisperMels, whisperFrames)
	dec := g.Input("decoder_input_ids", onnx.Int64, "batch", "dec_seq")

	end := g.Scope("encoder")
	conv := func(scope, x string, in, stride int64) string {
		defer g.Scope(scope)()
		y := g.Op("Conv", []string{x, n.weight(c.d, in, 3), g.Fill(g.Fresh("bias"), 0, c.d)},
			onnx.Ints("kernel_shape", 3), onnx.Ints("pads", 1, 1), onnx.Ints("strides", stride))
		return n.act("gelu", y)
	}
	x := conv("conv2", conv("conv1", feats, whisperMels, 1), c.d, 2)  // [b, d, frames/2]
	x = n.op("Transpose", []onnx.Attr{onnx.Ints("perm", 0, 2, 1)}, x) // [b, frames/2, d]
	x = n.add(x, n.weight(whisperFrames/2, c.d))
	enc := n.norm("final_norm", n.stack("blocks", x, "", "", "", c, nil), c)
	end()

	table := n.table("embed_tokens", whisperVocab, c.d)
	logits := n.seq2seqDecoder("decoder", dec, table, enc, "", c, o.Perturb)

	g.Node("Identity", []string{logits}, []string{"logits"})
	g.Node("Identity", []string{enc}, []string{"encoder_last_hidden_state"})
	g.Output("logits", onnx.Float32, "batch", "dec_seq", whisperVocab)
	g.Output("encoder_last_hidden_state", onnx.Float32, "batch", whisperFrames/2, c.d)
}
