package zoo

import (
	"fmt"

	"github.com/hwtest/hwtest/onnx"
)

// mixtralCfg: RMSNorm, pre-norm, SwiGLU experts, as in Mixtral (positions
// are learned here rather than rotary).
var mixtralCfg = cfg{d: 32, heads: 2, ff: 64, layers: 2, eps: 1e-5, preNorm: true, rms: true}

const (
	mixtralVocab   = 1000
	mixtralExperts = 4
	mixtralTopK    = 2
)

func init() {
	register("tiny-mixtral", model{
		arch:   "mixtral",
		family: "mixture-of-experts",
		desc: "Mixtral-style sparse MoE decoder: 2 causal RMSNorm layers whose MLP is 4 SwiGLU experts; " +
			"a linear router picks the top-2 experts per token (TopK), softmax over those two gives the gates " +
			"(ScatterElements), experts are mixed by gate; outputs logits and every layer's router logits",
		perturbation: "every router's logits are sign-flipped (a negated router weight), so each token is sent to " +
			"its two lowest-scoring experts: the top-2 selection differs for every token",
		max:   map[string]int64{"input_ids": mixtralVocab},
		build: buildMixtral,
	})
}

func buildMixtral(g *onnx.Graph, o Options) {
	n := nn{g}
	c := mixtralCfg
	ids := g.Input("input_ids", onnx.Int64, "batch", "seq")
	emb, table := n.embed("embed_tokens", ids, mixtralVocab, c.d)
	x := n.add(emb, n.positions("embed_positions", ids, 512, c.d))
	var routers []string
	moe := func(h string) string {
		out, logits := n.moe("moe", h, c, o.Perturb)
		routers = append(routers, n.op("Unsqueeze", nil, logits, g.Int64s(0)))
		return out
	}
	g.Node("Identity", []string{n.decoder("model", x, table, c, false, false, moe)}, []string{"logits"})
	g.Node("Concat", routers, []string{"router_logits"}, onnx.Int("axis", 0))
	g.Output("logits", onnx.Float32, "batch", "seq", mixtralVocab)
	g.Output("router_logits", onnx.Float32, c.layers, "batch", "seq", mixtralExperts)
}

// moe is a sparse mixture-of-experts MLP. It returns the mixed output and
// the router logits [b, s, experts]. Every expert runs on every token (dense
// compute keeps the graph static); the gates are zero except for each
// token's top-k experts, which is the same function as sparse dispatch.
// flipRouter negates the router (the perturbed variant).
func (n nn) moe(scope, x string, c cfg, flipRouter bool) (out, routerLogits string) {
	defer n.Scope(scope)()
	routerLogits = n.matmul(x, n.weight(c.d, mixtralExperts))
	if flipRouter {
		routerLogits = n.mul(routerLogits, n.Scalar(-1))
	}
	top := n.OpN("TopK", []string{routerLogits, n.Int64s(mixtralTopK)}, 2, onnx.Int("axis", -1))
	weights := n.op("Softmax", []onnx.Attr{onnx.Int("axis", -1)}, top[0])
	zeros := n.op("ConstantOfShape", nil, n.op("Shape", nil, routerLogits))
	gates := n.op("ScatterElements", []onnx.Attr{onnx.Int("axis", -1)}, zeros, top[1], weights) // [b, s, E]

	experts := make([]string, mixtralExperts)
	for e := range experts {
		experts[e] = n.op("Unsqueeze", nil, n.ffn(fmt.Sprintf("expert.%d", e), x, c, "swiglu"), n.Int64s(2))
	}
	stacked := n.op("Concat", []onnx.Attr{onnx.Int("axis", 2)}, experts...) // [b, s, E, d]
	weighted := n.mul(stacked, n.op("Unsqueeze", nil, gates, n.Int64s(-1)))
	out = n.op("ReduceSum", []onnx.Attr{onnx.Int("keepdims", 0)}, weighted, n.Int64s(2))
	return out, routerLogits
}
