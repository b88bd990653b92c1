package zoo

import (
	"fmt"
	"math"

	"github.com/hwtest/hwtest/onnx"
)

// detrCfg: DETR's transformer is post-norm with a ReLU FFN.
var detrCfg = cfg{d: 32, heads: 2, ff: 64, layers: 2, eps: 1e-5, act: "relu"}

const (
	detrQueries = 8  // object queries
	detrClasses = 10 // plus one "no object" class
)

func init() {
	register("tiny-detr", model{
		arch:   "detr",
		family: "vision",
		desc: "DETR-style object detector on a [batch, 3, height, width] image of any size: a 3-layer Conv+ReLU " +
			"backbone (stride 8), 1×1 input projection, sine position embeddings computed in-graph from the feature " +
			"map's height and width (normalised, 2π scale, temperature 10000), 2 post-norm encoder layers with " +
			"positions added to queries and keys, 2 decoder layers over 8 learned object queries with self- and " +
			"cross-attention, final LayerNorm; heads: pred_logits [batch, 8, 11] (10 classes + no-object), their " +
			"softmax as probabilities, and pred_boxes [batch, 8, 4] (3-layer ReLU MLP, Sigmoid: normalised cx, cy, w, h)",
		perturbation: "the class softmax runs over the queries axis instead of the classes axis, so each query's " +
			"class probabilities no longer sum to 1",
		build: buildDETR,
	})
}

func buildDETR(g *onnx.Graph, o Options) {
	n := nn{g}
	c := detrCfg
	px := g.Input("pixel_values", onnx.Float32, "batch", 3, "height", "width")

	x := px
	func() {
		defer g.Scope("backbone")()
		in := int64(3)
		for i, out := range []int64{8, 16, 32} {
			x = n.act("relu", n.conv(fmt.Sprintf("conv.%d", i), x, in, out, 3, 2))
			in = out
		}
	}()
	feat := n.conv("input_projection", x, 32, c.d, 1, 1) // [b, d, h, w]
	src := n.op("Transpose", []onnx.Attr{onnx.Ints("perm", 0, 2, 1)}, n.op("Reshape", nil, feat, n.Int64s(0, c.d, -1)))
	pos := n.sinePositions(feat, c.d) // [hw, d]

	// Encoder: q = k = src + pos, v = src.
	func() {
		defer g.Scope("encoder")()
		for i := range c.layers {
			end := g.Scope(fmt.Sprintf("layers.%d", i))
			qk := n.add(src, pos)
			src = n.norm("self_attn_layer_norm", n.add(src, n.attentionQKV("self_attn", qk, qk, src, "", c)), c)
			src = n.norm("final_layer_norm", n.add(src, n.ffn("mlp", src, c, c.act)), c)
			end()
		}
	}()

	// Decoder: the targets start at zero; the learned query embeddings are
	// added to queries (and self-attention keys) at every layer.
	var tgt string
	func() {
		defer g.Scope("decoder")()
		queryPos := n.table("query_position_embeddings", detrQueries, c.d)
		batch := n.op("Shape", []onnx.Attr{onnx.Int("start", 0), onnx.Int("end", 1)}, px)
		tgt = n.op("ConstantOfShape", nil, n.op("Concat", []onnx.Attr{onnx.Int("axis", 0)}, batch, n.Int64s(detrQueries, c.d)))
		memK := n.add(src, pos)
		for i := range c.layers {
			end := g.Scope(fmt.Sprintf("layers.%d", i))
			qk := n.add(tgt, queryPos)
			tgt = n.norm("self_attn_layer_norm", n.add(tgt, n.attentionQKV("self_attn", qk, qk, tgt, "", c)), c)
			tgt = n.norm("encoder_attn_layer_norm", n.add(tgt, n.attentionQKV("encoder_attn", n.add(tgt, queryPos), memK, src, "", c)), c)
			tgt = n.norm("final_layer_norm", n.add(tgt, n.ffn("mlp", tgt, c, c.act)), c)
			end()
		}
		tgt = n.norm("layernorm", tgt, c)
	}()

	logits := n.linear("class_labels_classifier", tgt, c.d, detrClasses+1)
	boxes := func() string {
		defer g.Scope("bbox_predictor")()
		h := n.act("relu", n.linear("layers.0", tgt, c.d, c.d))
		h = n.act("relu", n.linear("layers.1", h, c.d, c.d))
		return n.op("Sigmoid", nil, n.linear("layers.2", h, c.d, 4))
	}()
	axis := int64(-1)
	if o.Perturb {
		axis = 1
	}
	g.Node("Identity", []string{logits}, []string{"pred_logits"})
	g.Node("Softmax", []string{logits}, []string{"probabilities"}, onnx.Int("axis", axis))
	g.Node("Identity", []string{boxes}, []string{"pred_boxes"})
	g.Output("pred_logits", onnx.Float32, "batch", detrQueries, detrClasses+1)
	g.Output("probabilities", onnx.Float32, "batch", detrQueries, detrClasses+1)
	g.Output("pred_boxes", onnx.Float32, "batch", detrQueries, 4)
}

// sinePositions is DETR's PositionEmbeddingSine for a feature map x
// [b, d, h, w] with no padding: for each axis, the 1-based coordinate
// normalised to (0, 2π], divided by 10000^(2k/(d/2)), with sin and cos
// interleaved; the y half comes first. It returns [h·w, d], row-major like
// the flattened features. Computed in-graph, so any image size works.
func (n nn) sinePositions(x string, d int64) string {
	defer n.Scope("position_embedding")()
	half := d / 2 // num_pos_feats
	exps := make([]float32, half/2)
	for k := range exps {
		exps[k] = -float32(2*k) / float32(half) // exact: half is a power of two
	}
	invDim := n.op("Pow", nil, n.Scalar(10000), n.Initializer(n.Fresh("exponents"), []int64{half / 2}, exps))
	axisEmbed := func(axis int64) string { // [size, half]
		size := n.dim(x, axis)
		r := n.op("Range", nil, n.Int64Scalar(1), n.add(size, n.Int64Scalar(1)), n.Int64Scalar(1))
		f := n.op("Cast", []onnx.Attr{onnx.Int("to", int64(onnx.Float32))}, r)
		sf := n.op("Cast", []onnx.Attr{onnx.Int("to", int64(onnx.Float32))}, size)
		f = n.mul(n.div(f, n.add(sf, n.Scalar(1e-6))), n.Scalar(float32(2*math.Pi)))
		p := n.mul(n.op("Unsqueeze", nil, f, n.Int64s(1)), n.op("Unsqueeze", nil, invDim, n.Int64s(0))) // [size, half/2]
		sc := n.op("Concat", []onnx.Attr{onnx.Int("axis", -1)},
			n.op("Unsqueeze", nil, n.op("Sin", nil, p), n.Int64s(-1)), n.op("Unsqueeze", nil, n.op("Cos", nil, p), n.Int64s(-1)))
		return n.op("Reshape", nil, sc, n.Int64s(0, half))
	}
	py := n.op("Unsqueeze", nil, axisEmbed(2), n.Int64s(1)) // [h, 1, half]
	px := n.op("Unsqueeze", nil, axisEmbed(3), n.Int64s(0)) // [1, w, half]
	hw := n.op("Shape", []onnx.Attr{onnx.Int("start", 2), onnx.Int("end", 4)}, x)
	shape := n.op("Concat", []onnx.Attr{onnx.Int("axis", 0)}, hw, n.Int64s(half))
	pos := n.op("Concat", []onnx.Attr{onnx.Int("axis", -1)}, n.op("Expand", nil, py, shape), n.op("Expand", nil, px, shape))
	return n.op("Reshape", nil, pos, n.Int64s(-1, d))
}
