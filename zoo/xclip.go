package zoo

import "github.com/hwtest/hwtest/onnx"

// xclipMIT is X-CLIP's multi-frame integration transformer, run over the
// per-frame embeddings at the projection width.
var xclipMIT = cfg{d: 32, heads: 2, ff: 64, layers: 1, eps: 1e-5, preNorm: true, act: "gelu"}

const (
	xclipFrames = 8 // num_frames: fixed, as X-CLIP's frame position embeddings are
	xclipProj   = 32
)

func init() {
	register("tiny-xclip", model{
		arch:   "xclip",
		family: "vision-text",
		desc: "X-CLIP-style video-text model: pixel_values [batch, 8 frames, 3, 32, 32] are folded into the batch and " +
			"each frame goes through a ViT tower (CLS pooled, visual projection); the multi-frame integration transformer " +
			"adds learned frame positions, runs 1 cross-frame pre-norm layer and mean-pools over frames; a causal CLIP " +
			"text tower pooled at the end-of-text (highest) token with a text projection; L2 normalisation and scaled " +
			"cosine similarity logits_per_video [batch, texts] (the video-specific prompt generator is left out)",
		perturbation: "the video embedding is sign-flipped after temporal pooling, so every video's similarity to " +
			"the texts is negated and its ranking of the texts (argsort of logits_per_video rows) is reversed",
		max:   map[string]int64{"input_ids": clipVocab, "attention_mask": 2},
		build: buildXCLIP,
	})
}

func buildXCLIP(g *onnx.Graph, o Options) {
	n := nn{g}
	ids := g.Input("input_ids", onnx.Int64, "texts", "seq")
	mask := g.Input("attention_mask", onnx.Int64, "texts", "seq")
	px := g.Input("pixel_values", onnx.Float32, "batch", xclipFrames, 3, vitImage, vitImage)

	// Text tower, as CLIP's.
	end := g.Scope("text_model")
	emb, _ := n.embed("token_embedding", ids, clipVocab, clipText.d)
	x := n.add(emb, n.positions("position_embedding", ids, 77, clipText.d))
	x = n.stack("encoder", x, n.add(n.causalMask(ids), n.paddingMask(mask)), "", "", clipText, nil)
	x = n.norm("final_norm", x, clipText)
	eot := n.op("ArgMax", []onnx.Attr{onnx.Int("axis", -1), onnx.Int("keepdims", 0)}, ids)
	pooled := n.tokenAt(x, eot)
	end()
	text := n.l2normalize(n.matmul(pooled, n.table("text_projection", clipText.d, xclipProj)))

	// Video: frames into the batch, one ViT pass, back to [b, frames, proj].
	frames := n.op("Reshape", nil, px, n.Int64s(-1, 3, vitImage, vitImage))
	img := n.token(n.vit("vision_model", frames, vitImage, vitPatch, vitCfg), 0)
	img = n.matmul(img, n.table("visual_projection", vitCfg.d, xclipProj))
	v := n.op("Reshape", nil, img, n.Int64s(-1, xclipFrames, xclipProj))
	func() {
		defer g.Scope("mit")()
		v = n.add(v, n.weight(xclipFrames, xclipProj))
		v = n.stack("encoder", v, "", "", "", xclipMIT, nil)
		v = n.op("ReduceMean", []onnx.Attr{onnx.Ints("axes", 1), onnx.Int("keepdims", 0)}, v) // [b, proj]
	}()
	if o.Perturb {
		v = n.mul(v, n.Scalar(-1))
	}
	video := n.l2normalize(v)

	tT := n.op("Transpose", []onnx.Attr{onnx.Ints("perm", 1, 0)}, text)
	perVideo := n.mul(n.matmul(video, tT), n.Scalar(1/0.07))
	g.Node("Identity", []string{perVideo}, []string{"logits_per_video"})
	g.Node("Transpose", []string{perVideo}, []string{"logits_per_text"}, onnx.Ints("perm", 1, 0))
	g.Node("Identity", []string{text}, []string{"text_embeds"})
	g.Node("Identity", []string{video}, []string{"video_embeds"})
	g.Output("logits_per_video", onnx.Float32, "batch", "texts")
	g.Output("logits_per_text", onnx.Float32, "texts", "batch")
	g.Output("text_embeds", onnx.Float32, "texts", xclipProj)
	g.Output("video_embeds", onnx.Float32, "batch", xclipProj)
}
