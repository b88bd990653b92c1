package zoo

import (
	"fmt"
	"math"

	"github.com/hwtest/hwtest/onnx"
)

// qwen2Cfg follows the shape of a tiny-random Qwen2ForCausalLM: RMSNorm,
// pre-norm, SwiGLU MLP, 4 query heads sharing 2 key/value heads.
var qwen2Cfg = cfg{d: 32, heads: 4, ff: 64, layers: 2, eps: 1e-6, preNorm: true, rms: true}

const (
	qwen2Vocab   = 1000
	qwen2KVHeads = 2
	qwen2Theta   = 10000 // rope_theta
)

func init() {
	register("tiny-qwen2", model{
		arch:   "qwen2",
		family: "text",
		desc: "Qwen2/LLaMA-style decoder: token embeddings (no learned positions), 2 pre-norm RMSNorm layers of " +
			"grouped-query causal self-attention (4 query heads, 2 key/value heads, q/k/v biases, no o bias) with " +
			"rotary position embeddings computed in-graph (rotate-half, cos/sin of Range(seq) × inv_freq, " +
			"inv_freq = 10000^(−2i/head_dim)) and padding mask, SwiGLU MLP, final RMSNorm, untied LM head",
		perturbation: "the causal mask is dropped and only the padding mask applied (as when an export passes " +
			"attention_mask and loses is_causal), so earlier positions see later tokens",
		max:   map[string]int64{"input_ids": qwen2Vocab, "attention_mask": 2},
		build: buildQwen2,
	})
}

func buildQwen2(g *onnx.Graph, o Options) {
	n := nn{g}
	c := qwen2Cfg
	ids := g.Input("input_ids", onnx.Int64, "batch", "seq")
	mask := g.Input("attention_mask", onnx.Int64, "batch", "seq")

	end := g.Scope("model")
	x, _ := n.embed("embed_tokens", ids, qwen2Vocab, c.d)
	cos, sin := n.rope(ids, c.d/c.heads, qwen2Theta)
	am := n.paddingMask(mask)
	if !o.Perturb {
		am = n.add(n.causalMask(ids), am)
	}
	for i := range c.layers {
		endL := g.Scope(fmt.Sprintf("layers.%d", i))
		x = n.add(x, n.gqa("self_attn", n.norm("input_layernorm", x, c), am, cos, sin, c, qwen2KVHeads))
		x = n.add(x, n.ffn("mlp", n.norm("post_attention_layernorm", x, c), c, "swiglu"))
		endL()
	}
	x = n.norm("norm", x, c)
	end()
	logits := n.matmul(x, n.table("lm_head", c.d, qwen2Vocab))

	g.Node("Identity", []string{logits}, []string{"logits"})
	g.Output("logits", onnx.Float32, "batch", "seq", qwen2Vocab)
}

// rope returns the rotary embedding tables cos and sin, [s, headDim], for
// positions 0..s-1 (s being axis 1 of x): cat(f, f) with f = pos ⊗ inv_freq
// and inv_freq[i] = theta^(−2i/headDim), as LlamaRotaryEmbedding. inv_freq
// is computed by a Pow node (ONNX Runtime folds it) so the model's bytes do
// not depend on Go's math.Pow.
func (n nn) rope(x string, headDim int64, theta float32) (cos, sin string) {
	defer n.Scope("rotary_emb")()
	exps := make([]float32, headDim/2)
	for i := range exps {
		exps[i] = -float32(2*i) / float32(headDim) // exact: headDim is a power of two
	}
	invFreq := n.op("Pow", nil, n.Scalar(theta), n.Initializer(n.Fresh("exponents"), []int64{headDim / 2}, exps))
	r := n.op("Range", nil, n.Int64Scalar(0), n.dim(x, 1), n.Int64Scalar(1))
	pos := n.op("Cast", []onnx.Attr{onnx.Int("to", int64(onnx.Float32))}, r)
	freqs := n.mul(n.op("Unsqueeze", nil, pos, n.Int64s(1)), n.op("Unsqueeze", nil, invFreq, n.Int64s(0))) // [s, hd/2]
	emb := n.op("Concat", []onnx.Attr{onnx.Int("axis", -1)}, freqs, freqs)
	return n.op("Cos", nil, emb), n.op("Sin", nil, emb)
}

// applyRope rotates x [b, h, s, hd] by position: x·cos + rotate_half(x)·sin,
// rotate_half(x) = cat(−x₂, x₁) for the halves x₁, x₂ of the head dim.
func (n nn) applyRope(x, cos, sin string) string {
	halves := n.OpN("Split", []string{x}, 2, onnx.Int("axis", -1))
	rot := n.op("Concat", []onnx.Attr{onnx.Int("axis", -1)}, n.op("Neg", nil, halves[1]), halves[0])
	return n.add(n.mul(x, cos), n.mul(rot, sin))
}

// gqa is grouped-query self-attention with rotary positions: c.heads query
// heads, kvHeads key/value heads, each shared by c.heads/kvHeads query heads
// (repeat_kv: query head h reads key/value head h / (heads/kvHeads)).
func (n nn) gqa(scope, x, mask, cos, sin string, c cfg, kvHeads int64) string {
	defer n.Scope(scope)()
	hd := c.d / c.heads
	split := func(v string, heads int64) string {
		r := n.op("Reshape", nil, v, n.Int64s(0, 0, heads, hd))
		return n.op("Transpose", []onnx.Attr{onnx.Ints("perm", 0, 2, 1, 3)}, r)
	}
	repeat := func(v string) string { // [b, kv, s, hd] → [b, heads, s, hd]
		u := n.op("Unsqueeze", nil, v, n.Int64s(2))
		e := n.op("Expand", nil, u, n.Int64s(1, 1, c.heads/kvHeads, 1, 1))
		return n.op("Reshape", nil, e, n.Int64s(0, c.heads, -1, hd))
	}
	q := n.applyRope(split(n.linear("q_proj", x, c.d, c.heads*hd), c.heads), cos, sin)
	k := n.applyRope(split(n.linear("k_proj", x, c.d, kvHeads*hd), kvHeads), cos, sin)
	v := split(n.linear("v_proj", x, c.d, kvHeads*hd), kvHeads)
	k, v = repeat(k), repeat(v)
	kt := n.op("Transpose", []onnx.Attr{onnx.Ints("perm", 0, 1, 3, 2)}, k)
	scores := n.add(n.mul(n.matmul(q, kt), n.Scalar(float32(1/math.Sqrt(float64(hd))))), mask)
	probs := n.op("Softmax", []onnx.Attr{onnx.Int("axis", -1)}, scores)
	ctx := n.op("Transpose", []onnx.Attr{onnx.Ints("perm", 0, 2, 1, 3)}, n.matmul(probs, v))
	ctx = n.op("Reshape", nil, ctx, n.Int64s(0, 0, c.d))
	defer n.Scope("o_proj")()
	return n.matmul(ctx, n.weight(c.d, c.d))
}
