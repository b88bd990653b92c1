package zoo

import "github.com/hwtest/hwtest/onnx"

// clipText is CLIP's text tower: a causal pre-norm transformer.
var clipText = cfg{d: 32, heads: 2, ff: 37, layers: 2, eps: 1e-5, preNorm: true, act: "gelu"}

const (
	clipVocab = 1000 // the highest id is the end-of-text token, as in CLIP
	clipProj  = 16
)

func init() {
	register("tiny-clip", model{
		arch:   "clip",
		family: "vision-text",
		desc: "CLIP-style dual encoder: causal text transformer pooled at the end-of-text (highest) token, " +
			"ViT image tower pooled at CLS, linear projections, L2 normalisation, scaled cosine similarity",
		perturbation: "the text projection is sign-flipped, so every image's similarity to the texts is negated " +
			"and its ranking of the texts (argsort of logits_per_image rows) is reversed",
		max:   map[string]int64{"input_ids": clipVocab, "attention_mask": 2},
		build: buildCLIP,
	})
}

func buildCLIP(g *onnx.Graph, o Options) {
	n := nn{g}
	ids := g.Input("input_ids", onnx.Int64, "batch", "seq")
	mask := g.Input("attention_mask", onnx.Int64, "batch", "seq")
	px := g.Input("pixel_values", onnx.Float32, "image_batch", 3, vitImage, vitImage)

	end := g.Scope("text_model")
	emb, _ := n.embed("token_embedding", ids, clipVocab, clipText.d)
	x := n.add(emb, n.positions("position_embedding", ids, 77, clipText.d))
	x = n.stack("encoder", x, n.add(n.causalMask(ids), n.paddingMask(mask)), "", "", clipText, nil)
	x = n.norm("final_norm", x, clipText)
	eot := n.op("ArgMax", []onnx.Attr{onnx.Int("axis", -1), onnx.Int("keepdims", 0)}, ids)
	pooled := n.tokenAt(x, eot)
	proj := n.weight(clipText.d, clipProj)
	if o.Perturb {
		proj = n.mul(proj, n.Scalar(-1))
	}
	text := n.l2normalize(n.matmul(pooled, proj))
	end()

	img := n.vit("vision_model", px, vitImage, vitPatch, vitCfg)
	image := n.l2normalize(n.matmul(n.token(img, 0), n.weight(vitCfg.d, clipProj)))

	// logit_scale = 1/0.07, CLIP's initial temperature.
	tT := n.op("Transpose", []onnx.Attr{onnx.Ints("perm", 1, 0)}, text)
	perImage := n.mul(n.matmul(image, tT), n.Scalar(1/0.07))
	g.Node("Identity", []string{perImage}, []string{"logits_per_image"})
	g.Node("Transpose", []string{perImage}, []string{"logits_per_text"}, onnx.Ints("perm", 1, 0))
	g.Node("Identity", []string{text}, []string{"text_embeds"})
	g.Node("Identity", []string{image}, []string{"image_embeds"})
	g.Output("logits_per_image", onnx.Float32, "image_batch", "batch")
	g.Output("logits_per_text", onnx.Float32, "batch", "image_batch")
	g.Output("text_embeds", onnx.Float32, "batch", clipProj)
	g.Output("image_embeds", onnx.Float32, "image_batch", clipProj)
}
