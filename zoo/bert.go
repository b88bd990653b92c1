package zoo

import "github.com/hwtest/hwtest/onnx"

// bertCfg is the size of tiny-bert, after hf-internal-testing's
// tiny-random-BertModel (hidden 32, 2 heads, 2 layers).
var bertCfg = cfg{d: 32, heads: 2, ff: 37, layers: 2, eps: 1e-12, act: "gelu"}

const (
	bertVocab  = 1000
	bertMaxLen = 512
)

func init() {
	register("tiny-bert", model{
		arch:         "bert",
		family:       "text",
		desc:         "BERT-style encoder: word+position embeddings, 2 post-norm layers of 2-head self-attention with padding mask, GELU FFN, tanh pooler over the first token",
		perturbation: "attention_mask is ignored, so padding leaks into the real tokens' hidden states",
		max:          map[string]int64{"input_ids": bertVocab, "attention_mask": 2},
		build:        buildBERT,
	})
}

func buildBERT(g *onnx.Graph, o Options) {
	n := nn{g}
	ids := g.Input("input_ids", onnx.Int64, "batch", "seq")
	mask := g.Input("attention_mask", onnx.Int64, "batch", "seq")
	h, pooled := n.bert("bert", ids, mask, bertCfg, bertVocab, o.Perturb)
	g.Node("Identity", []string{h}, []string{"last_hidden_state"})
	g.Node("Identity", []string{pooled}, []string{"pooler_output"})
	g.Output("last_hidden_state", onnx.Float32, "batch", "seq", bertCfg.d)
	g.Output("pooler_output", onnx.Float32, "batch", bertCfg.d)
}

// bert is a BERT encoder; it returns the hidden states [b, s, d] and the
// pooled output [b, d] (tanh(linear(first token))). ignoreMask builds the
// broken variant. RAG's retriever reuses it.
func (n nn) bert(scope, ids, mask string, c cfg, vocab int64, ignoreMask bool) (hidden, pooled string) {
	defer n.Scope(scope)()
	emb, _ := n.embed("word_embeddings", ids, vocab, c.d)
	x := n.norm("embeddings_norm", n.add(emb, n.positions("position_embeddings", ids, bertMaxLen, c.d)), c)
	am := n.paddingMask(mask)
	if ignoreMask {
		am = ""
	}
	hidden = n.stack("encoder", x, am, "", "", c, nil)
	pooled = n.act("tanh", n.linear("pooler", n.token(hidden, 0), c.d, c.d))
	return hidden, pooled
}
