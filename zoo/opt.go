package zoo

import "github.com/hwtest/hwtest/onnx"

// optCfg follows hf-internal-testing's tiny-random-OPTModel: pre-norm
// (do_layer_norm_before), ReLU FFN, learned positions.
var optCfg = cfg{d: 32, heads: 2, ff: 64, layers: 2, eps: 1e-5, preNorm: true, act: "relu"}

const (
	optVocab  = 1000
	optMaxLen = 512
	// optOffset is OPTLearnedPositionalEmbedding's offset: position p is
	// row p+2 of the table (rows 0 and 1 are left over from fairseq's
	// padding index), so a padded slot, position -1, reads row 1.
	optOffset = 2
)

func init() {
	register("tiny-opt", model{
		arch:   "opt",
		family: "text",
		desc: "OPT-style decoder: token embeddings plus learned positions computed from attention_mask " +
			"(cumsum·mask − 1, offset by 2 into the table, as OPTLearnedPositionalEmbedding), 2 pre-norm layers of " +
			"causal self-attention with padding mask and ReLU FFN, final LayerNorm, LM head tied to the token embeddings",
		perturbation: "the causal mask is off by one (query i also sees key i+1), so each position's logits depend on the next token",
		max:          map[string]int64{"input_ids": optVocab, "attention_mask": 2},
		build:        buildOPT,
	})
}

func buildOPT(g *onnx.Graph, o Options) {
	n := nn{g}
	c := optCfg
	ids := g.Input("input_ids", onnx.Int64, "batch", "seq")
	mask := g.Input("attention_mask", onnx.Int64, "batch", "seq")

	end := g.Scope("decoder")
	emb, table := n.embed("embed_tokens", ids, optVocab, c.d)
	// positions = cumsum(mask)·mask − 1 + offset, [b, s]
	cum := n.op("CumSum", nil, mask, n.Int64Scalar(1))
	pos := n.add(n.sub(n.mul(cum, mask), n.Int64Scalar(1)), n.Int64Scalar(optOffset))
	posTable := n.table("embed_positions", optMaxLen+optOffset, c.d)
	x := n.add(emb, n.Op("Gather", []string{posTable, pos}))

	causal := n.causalMask(ids)
	if o.Perturb {
		causal = n.causalMaskShifted(ids, 1)
	}
	h := n.stack("layers", x, n.add(causal, n.paddingMask(mask)), "", "", c, nil)
	logits := n.lmHead(n.norm("final_layer_norm", h, c), table)
	end()

	g.Node("Identity", []string{logits}, []string{"logits"})
	g.Output("logits", onnx.Float32, "batch", "seq", optVocab)
}

// causalMaskShifted is causalMask letting query i also see keys up to
// i+shift: the off-by-one mask of a broken export.
func (n nn) causalMaskShifted(x string, shift int64) string {
	r := n.op("Range", nil, n.Int64Scalar(0), n.dim(x, 1), n.Int64Scalar(1))
	row := n.add(n.op("Unsqueeze", nil, r, n.Int64s(1)), n.Int64Scalar(shift))
	col := n.op("Unsqueeze", nil, r, n.Int64s(0))
	future := n.op("Cast", []onnx.Attr{onnx.Int("to", int64(onnx.Float32))}, n.op("Greater", nil, col, row))
	return n.mul(future, n.Scalar(maskValue))
}
