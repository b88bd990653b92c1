package zoo

import "github.com/hwtest/hwtest/onnx"

var llavaLM = cfg{d: 32, heads: 2, ff: 64, layers: 2, eps: 1e-5, preNorm: true, rms: true, act: "silu"}

const llavaVocab = 1000

func init() {
	register("tiny-llava", model{
		arch:   "llava",
		family: "multimodal",
		desc: "LLaVA-style vision-language model: ViT vision tower (patch tokens, CLS dropped), " +
			"2-layer GELU projector into the language model's width, image tokens prepended to the text " +
			"embeddings, causal RMSNorm decoder; logits are returned for the text positions",
		perturbation: "the language model's final RMSNorm weight is sign-flipped, so the logits are negated and " +
			"the argmax token changes at every text position",
		max:   map[string]int64{"input_ids": llavaVocab},
		build: buildLLaVA,
	})
}

func buildLLaVA(g *onnx.Graph, o Options) {
	n := nn{g}
	px := g.Input("pixel_values", onnx.Float32, "batch", 3, vitImage, vitImage)
	ids := g.Input("input_ids", onnx.Int64, "batch", "seq")

	patches := n.sliceFrom(n.vit("vision_tower", px, vitImage, vitPatch, vitCfg), 1, 1)
	end := g.Scope("projector")
	img := n.linear("linear_2", n.act("gelu", n.linear("linear_1", patches, vitCfg.d, llavaLM.d)), llavaLM.d, llavaLM.d)
	end()

	emb, table := n.embed("embed_tokens", ids, llavaVocab, llavaLM.d)
	x := n.op("Concat", []onnx.Attr{onnx.Int("axis", 1)}, img, emb)
	x = n.add(x, n.positions("embed_positions", x, 512, llavaLM.d))
	logits := n.decoder("language_model", x, table, llavaLM, false, o.Perturb, nil)
	imageTokens := int64(vitImage/vitPatch) * (vitImage / vitPatch)
	g.Node("Identity", []string{n.sliceFrom(logits, 1, imageTokens)}, []string{"logits"})
	g.Output("logits", onnx.Float32, "batch", "seq", llavaVocab)
}
