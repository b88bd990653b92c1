package zoo

import (
	"fmt"
	"math"

	"github.com/hwtest/hwtest/onnx"
)

// This file holds the building blocks the architectures share: linear
// layers, norms, activations, attention, transformer blocks, embeddings and
// masks. Each takes and returns value names of the graph, so a model file
// reads as its forward pass.

// initStd is the weight initialisation scale of Hugging Face's tiny-random
// checkpoints (initializer_range in their configs).
const initStd = 0.02

// maskValue is added to attention scores that must be ignored. exp(-1e4)
// underflows to exactly 0 in float32, so masked keys contribute nothing,
// while staying far from -Inf so that a fully masked row cannot make NaN.
const maskValue = -1e4

// cfg is the size and flavour of a transformer stack.
type cfg struct {
	d, heads, ff, layers int64
	eps                  float32
	preNorm              bool   // GPT/ViT/T5 style; false is BERT's post-norm
	act                  string // "gelu", "relu", "silu"
	rms                  bool   // RMSNorm (T5, Mixtral) instead of LayerNorm
}

// scaled is c at s times its width: d and ff multiplied, heads and layers kept
// (Options.Scale). s ≤ 1 is c itself.
func (c cfg) scaled(s int64) cfg {
	if s > 1 {
		c.d, c.ff = c.d*s, c.ff*s
	}
	return c
}

// nn wraps a graph with the layer helpers.
type nn struct{ *onnx.Graph }

func (n nn) op(opType string, attrs []onnx.Attr, inputs ...string) string {
	return n.Op(opType, inputs, attrs...)
}

func (n nn) add(a, b string) string { return n.Op("Add", []string{a, b}) }
func (n nn) mul(a, b string) string { return n.Op("Mul", []string{a, b}) }
func (n nn) sub(a, b string) string { return n.Op("Sub", []string{a, b}) }
func (n nn) div(a, b string) string { return n.Op("Div", []string{a, b}) }
func (n nn) matmul(a, b string) string {
	return n.Op("MatMul", []string{a, b})
}

// weight adds a random weight named after the current scope.
func (n nn) weight(dims ...int64) string { return n.Random(n.Fresh("weight"), initStd, dims...) }

// linear is y = x·W + b with W [in, out], as torch.nn.Linear exports.
func (n nn) linear(scope string, x string, in, out int64) string {
	defer n.Scope(scope)()
	w := n.weight(in, out)
	b := n.Fill(n.Fresh("bias"), 0, out)
	return n.add(n.matmul(x, w), b)
}

// norm normalises over the last axis: LayerNormalization, or RMSNorm
// (x / sqrt(mean(x²) + eps) · g) spelled out in primitive ops because
// ai.onnx has no RMSNormalization before opset 23.
func (n nn) norm(scope string, x string, c cfg) string { return n.normG(scope, x, c, 1) }

// normG is norm with every element of its scale set to gamma instead of 1.
// Perturbed variants pass -1: a sign-flipped norm weight negates what
// follows it, so a language head's argmax becomes its argmin.
func (n nn) normG(scope string, x string, c cfg, gamma float32) string {
	defer n.Scope(scope)()
	g := n.Fill(n.Fresh("weight"), gamma, c.d)
	if c.rms {
		ms := n.op("ReduceMean", []onnx.Attr{onnx.Ints("axes", -1), onnx.Int("keepdims", 1)}, n.mul(x, x))
		rstd := n.op("Reciprocal", nil, n.op("Sqrt", nil, n.add(ms, n.Scalar(c.eps))))
		return n.mul(n.mul(x, rstd), g)
	}
	beta := n.Fill(n.Fresh("bias"), 0, c.d)
	return n.Op("LayerNormalization", []string{x, g, beta},
		onnx.Int("axis", -1), onnx.Float("epsilon", c.eps))
}

// act applies an activation. GELU is the exact erf form,
// 0.5·x·(1 + erf(x/√2)), since ai.onnx has no Gelu op before opset 20.
func (n nn) act(kind, x string) string {
	switch kind {
	case "gelu":
		e := n.op("Erf", nil, n.div(x, n.Scalar(float32(math.Sqrt2))))
		return n.mul(n.mul(x, n.Scalar(0.5)), n.add(e, n.Scalar(1)))
	case "relu":
		return n.op("Relu", nil, x)
	case "silu":
		return n.mul(x, n.op("Sigmoid", nil, x))
	case "tanh":
		return n.op("Tanh", nil, x)
	}
	panic("zoo: unknown activation " + kind)
}

// ffn is the position-wise MLP: linear, activation, linear. With act
// "swiglu" it is the gated form of LLaMA/Mixtral: down(silu(gate(x))·up(x)).
func (n nn) ffn(scope, x string, c cfg, act string) string {
	defer n.Scope(scope)()
	if act == "swiglu" {
		gate := n.act("silu", n.linear("gate", x, c.d, c.ff))
		return n.linear("down", n.mul(gate, n.linear("up", x, c.d, c.ff)), c.ff, c.d)
	}
	return n.linear("fc2", n.act(act, n.linear("fc1", x, c.d, c.ff)), c.ff, c.d)
}

// heads reshapes [b, s, d] to [b, h, s, d/h].
func (n nn) heads(x string, c cfg) string {
	r := n.op("Reshape", nil, x, n.Int64s(0, 0, c.heads, c.d/c.heads))
	return n.op("Transpose", []onnx.Attr{onnx.Ints("perm", 0, 2, 1, 3)}, r)
}

// attention is multi-head scaled dot-product attention of queries from x
// over keys and values from kv (kv == x for self-attention). mask is an
// additive mask broadcastable to [b, h, s_q, s_kv], or "" for none.
func (n nn) attention(scope, x, kv, mask string, c cfg) string {
	return n.attentionQKV(scope, x, kv, kv, mask, c)
}

// attentionQKV is attention with separate query, key and value inputs
// (DETR adds position embeddings to queries and keys but not to values).
func (n nn) attentionQKV(scope, xq, xk, xv, mask string, c cfg) string {
	defer n.Scope(scope)()
	q := n.heads(n.linear("q", xq, c.d, c.d), c)
	k := n.heads(n.linear("k", xk, c.d, c.d), c)
	v := n.heads(n.linear("v", xv, c.d, c.d), c)
	kt := n.op("Transpose", []onnx.Attr{onnx.Ints("perm", 0, 1, 3, 2)}, k)
	scale := n.Scalar(float32(1 / math.Sqrt(float64(c.d/c.heads))))
	scores := n.mul(n.matmul(q, kt), scale)
	if mask != "" {
		scores = n.add(scores, mask)
	}
	probs := n.op("Softmax", []onnx.Attr{onnx.Int("axis", -1)}, scores)
	ctx := n.op("Transpose", []onnx.Attr{onnx.Ints("perm", 0, 2, 1, 3)}, n.matmul(probs, v))
	ctx = n.op("Reshape", nil, ctx, n.Int64s(0, 0, c.d))
	return n.linear("o", ctx, c.d, c.d)
}

// residual wraps sublayer f in a residual connection with the stack's norm
// placement: pre-norm x + f(norm(x)), or post-norm norm(x + f(x)).
func (n nn) residual(scope, x string, c cfg, f func(string) string) string {
	if c.preNorm {
		return n.add(x, f(n.norm(scope+"_norm", x, c)))
	}
	return n.norm(scope+"_norm", n.add(x, f(x)), c)
}

// stack applies c.layers transformer blocks. Each block is self-attention
// (with selfMask), then cross-attention over enc (with encMask) when enc is
// not "", then the feed-forward sublayer built by ffn (nil: the plain MLP).
func (n nn) stack(scope, x, selfMask, enc, encMask string, c cfg, ffn func(x string) string) string {
	defer n.Scope(scope)()
	if ffn == nil {
		ffn = func(x string) string { return n.ffn("mlp", x, c, c.act) }
	}
	for i := range c.layers {
		end := n.Scope(fmt.Sprintf("layer.%d", i))
		x = n.residual("attn", x, c, func(h string) string { return n.attention("attn", h, h, selfMask, c) })
		if enc != "" {
			x = n.residual("cross", x, c, func(h string) string { return n.attention("cross", h, enc, encMask, c) })
		}
		x = n.residual("mlp", x, c, ffn)
		end()
	}
	return x
}

// embed looks token ids up in a fresh [vocab, d] table; it returns the
// embeddings and the table (for tied output heads).
func (n nn) embed(scope, ids string, vocab, d int64) (emb, table string) {
	table = n.table(scope, vocab, d)
	return n.Op("Gather", []string{table, ids}), table
}

// table adds a [vocab, d] embedding table.
func (n nn) table(scope string, vocab, d int64) string {
	defer n.Scope(scope)()
	return n.weight(vocab, d)
}

// dim returns dimension axis of x as a 0-d int64 tensor.
func (n nn) dim(x string, axis int64) string {
	return n.op("Gather", []onnx.Attr{onnx.Int("axis", 0)}, n.op("Shape", nil, x), n.Int64Scalar(axis))
}

// positions returns learned position embeddings [s, d] for positions
// 0..s-1, s being axis 1 of x; they broadcast over the batch.
func (n nn) positions(scope, x string, maxLen, d int64) string {
	defer n.Scope(scope)()
	table := n.weight(maxLen, d)
	r := n.op("Range", nil, n.Int64Scalar(0), n.dim(x, 1), n.Int64Scalar(1))
	return n.Op("Gather", []string{table, r})
}

// paddingMask turns an int64 attention_mask [b, s] (1 keep, 0 pad) into an
// additive mask [b, 1, 1, s] over keys.
func (n nn) paddingMask(mask string) string {
	f := n.op("Cast", []onnx.Attr{onnx.Int("to", int64(onnx.Float32))}, mask)
	add := n.mul(n.sub(n.Scalar(1), f), n.Scalar(maskValue))
	return n.op("Unsqueeze", nil, add, n.Int64s(1, 2))
}

// causalMask returns an additive [s, s] mask, s being axis 1 of x, that
// hides key j from query i when j > i.
func (n nn) causalMask(x string) string {
	r := n.op("Range", nil, n.Int64Scalar(0), n.dim(x, 1), n.Int64Scalar(1))
	row := n.op("Unsqueeze", nil, r, n.Int64s(1)) // query i: [s, 1]
	col := n.op("Unsqueeze", nil, r, n.Int64s(0)) // key j:   [1, s]
	future := n.op("Cast", []onnx.Attr{onnx.Int("to", int64(onnx.Float32))}, n.op("Greater", nil, col, row))
	return n.mul(future, n.Scalar(maskValue))
}

// token picks position i of x [b, s, d], giving [b, d].
func (n nn) token(x string, i int64) string {
	return n.op("Gather", []onnx.Attr{onnx.Int("axis", 1)}, x, n.Int64Scalar(i))
}

// tokenAt picks, for each batch row, the position idx[b] of x [b, s, d],
// giving [b, d]: a one-hot [b, 1, s] row times x. CLIP pools its text tower
// this way, at the end-of-text token.
func (n nn) tokenAt(x, idx string) string {
	depth := n.op("Unsqueeze", nil, n.dim(x, 1), n.Int64s(0))
	values := n.Initializer(n.Fresh("onehot_values"), []int64{2}, []float32{0, 1})
	oh := n.op("OneHot", []onnx.Attr{onnx.Int("axis", -1)}, n.op("Unsqueeze", nil, idx, n.Int64s(1)), depth, values)
	return n.op("Squeeze", nil, n.matmul(oh, x), n.Int64s(1))
}

// sliceFrom drops the first start positions of axis of x.
func (n nn) sliceFrom(x string, axis, start int64) string {
	return n.op("Slice", nil, x, n.Int64s(start), n.Int64s(math.MaxInt64), n.Int64s(axis))
}

// l2normalize scales each row of x to unit length over the last axis.
func (n nn) l2normalize(x string) string {
	ss := n.op("ReduceSum", []onnx.Attr{onnx.Int("keepdims", 1)}, n.mul(x, x), n.Int64s(-1))
	return n.div(x, n.op("Sqrt", nil, ss))
}

// vit is a ViT image encoder: a Conv patch embedding of pixel_values
// [b, 3, size, size], a learned CLS token, learned positions and a pre-norm
// encoder. It returns the final-normed hidden states [b, 1+patches, d]
// (CLS first).
func (n nn) vit(scope, pixels string, size, patch int64, c cfg) string {
	defer n.Scope(scope)()
	np := (size / patch) * (size / patch)
	w := n.weight(c.d, 3, patch, patch)
	conv := n.Op("Conv", []string{pixels, w, n.Fill(n.Fresh("bias"), 0, c.d)},
		onnx.Ints("kernel_shape", patch, patch), onnx.Ints("strides", patch, patch))
	x := n.op("Reshape", nil, conv, n.Int64s(0, c.d, np))
	x = n.op("Transpose", []onnx.Attr{onnx.Ints("perm", 0, 2, 1)}, x) // [b, np, d]
	// Broadcast the CLS token over the batch: Expand to [b, 1, d].
	batch := n.op("Shape", []onnx.Attr{onnx.Int("start", 0), onnx.Int("end", 1)}, pixels)
	cls := n.op("Expand", nil, n.weight(1, 1, c.d), n.op("Concat", []onnx.Attr{onnx.Int("axis", 0)}, batch, n.Int64s(1, c.d)))
	x = n.op("Concat", []onnx.Attr{onnx.Int("axis", 1)}, cls, x)
	x = n.add(x, n.weight(1, np+1, c.d))
	x = n.stack("encoder", x, "", "", "", c, nil)
	return n.norm("post_norm", x, c)
}
