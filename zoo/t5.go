package zoo

import "github.com/hwtest/hwtest/onnx"

// t5Cfg: RMSNorm, pre-norm, ReLU FFN as in T5 (positions are learned here
// rather than T5's relative attention bias).
var t5Cfg = cfg{d: 32, heads: 2, ff: 64, layers: 2, eps: 1e-6, preNorm: true, rms: true, act: "relu"}

const t5Vocab = 1000

func init() {
	register("tiny-t5", model{
		arch:   "t5",
		family: "text",
		desc: "T5-style encoder-decoder: shared embeddings, 2 RMSNorm encoder layers with padding mask, " +
			"2 decoder layers with causal self-attention and cross-attention, tied LM head",
		perturbation: "the decoder's final RMSNorm weight is sign-flipped, so the decoder logits are negated and " +
			"the argmax (greedy) token changes at every decoder position; encoder states are untouched",
		max:   map[string]int64{"input_ids": t5Vocab, "attention_mask": 2, "decoder_input_ids": t5Vocab},
		build: buildT5,
	})
}

func buildT5(g *onnx.Graph, o Options) {
	n := nn{g}
	ids := g.Input("input_ids", onnx.Int64, "batch", "seq")
	mask := g.Input("attention_mask", onnx.Int64, "batch", "seq")
	dec := g.Input("decoder_input_ids", onnx.Int64, "batch", "dec_seq")

	emb, table := n.embed("shared", ids, t5Vocab, t5Cfg.d)
	encMask := n.paddingMask(mask)
	end := g.Scope("encoder")
	x := n.add(emb, n.positions("positions", ids, 512, t5Cfg.d))
	enc := n.norm("final_norm", n.stack("blocks", x, encMask, "", "", t5Cfg, nil), t5Cfg)
	end()
	logits := n.seq2seqDecoder("decoder", dec, table, enc, encMask, t5Cfg, o.Perturb)

	g.Node("Identity", []string{logits}, []string{"logits"})
	g.Node("Identity", []string{enc}, []string{"encoder_last_hidden_state"})
	g.Output("logits", onnx.Float32, "batch", "dec_seq", t5Vocab)
	g.Output("encoder_last_hidden_state", onnx.Float32, "batch", "seq", t5Cfg.d)
}

// seq2seqDecoder embeds decoder ids with table, runs causal self-attention
// plus cross-attention over enc (encMask may be ""), and projects onto the
// tied table. T5, Whisper and RAG's generator share it. flipNorm negates
// the final norm's weight (the perturbed variants).
func (n nn) seq2seqDecoder(scope, ids, table, enc, encMask string, c cfg, flipNorm bool) string {
	defer n.Scope(scope)()
	x := n.add(n.Op("Gather", []string{table, ids}), n.positions("positions", ids, 512, c.d))
	h := n.stack("blocks", x, n.causalMask(ids), enc, encMask, c, nil)
	return n.lmHead(n.normG("final_norm", h, c, gammaSign(flipNorm)), table)
}
