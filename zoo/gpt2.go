package zoo

import "github.com/hwtest/hwtest/onnx"

// gpt2Cfg follows hf-internal-testing's tiny-random-GPT2Model: pre-norm
// blocks, GELU MLP, tied input/output embeddings.
var gpt2Cfg = cfg{d: 32, heads: 2, ff: 128, layers: 2, eps: 1e-5, preNorm: true, act: "gelu"}

const (
	gpt2Vocab  = 1000
	gpt2MaxLen = 512
)

func init() {
	register("tiny-gpt2", model{
		arch:         "gpt2",
		family:       "text",
		desc:         "GPT-2-style decoder: token+position embeddings, 2 pre-norm causal self-attention blocks, GELU MLP, final norm, LM head tied to the token embeddings",
		perturbation: "the causal mask is dropped, so earlier positions see later tokens",
		max:          map[string]int64{"input_ids": gpt2Vocab},
		scalable:     true,
		build:        buildGPT2,
	})
}

func buildGPT2(g *onnx.Graph, o Options) {
	n := nn{g}
	ids := g.Input("input_ids", onnx.Int64, "batch", "seq")
	c := gpt2Cfg.scaled(o.Scale)
	emb, table := n.embed("wte", ids, gpt2Vocab, c.d)
	x := n.add(emb, n.positions("wpe", ids, gpt2MaxLen, c.d))
	g.Node("Identity", []string{n.decoder("transformer", x, table, c, o.Perturb, false, nil)}, []string{"logits"})
	g.Output("logits", onnx.Float32, "batch", "seq", gpt2Vocab)
}

// decoder runs a causal pre-norm stack over embeddings x and projects to
// the vocabulary with the tied embedding table [vocab, d]. noCausal builds
// the broken variant, flipNorm another (the final norm's weight negated);
// ffn replaces the MLP sublayer when not nil (Mixtral's
// experts). LLaVA and Mixtral reuse it.
func (n nn) decoder(scope, x, table string, c cfg, noCausal, flipNorm bool, ffn func(string) string) string {
	defer n.Scope(scope)()
	mask := n.causalMask(x)
	if noCausal {
		mask = ""
	}
	h := n.normG("final_norm", n.stack("blocks", x, mask, "", "", c, ffn), c, gammaSign(flipNorm))
	return n.lmHead(h, table)
}

// lmHead projects hidden states onto the tied embedding table: h · tableᵀ.
func (n nn) lmHead(h, table string) string {
	return n.matmul(h, n.op("Transpose", []onnx.Attr{onnx.Ints("perm", 1, 0)}, table))
}

// gammaSign is the final-norm scale of a language head: -1 in a perturbed
// variant, which negates the logits so that every position's argmax token
// changes, else 1.
func gammaSign(flip bool) float32 {
	if flip {
		return -1
	}
	return 1
}
