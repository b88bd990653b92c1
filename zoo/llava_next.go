package zoo

import "github.com/hwtest/hwtest/onnx"

const (
	llavaNextImage = 2 * vitImage // the high-resolution image: a 2×2 grid of tiles
	// llavaNextImageTokens: 16 base-view patches, then the 8×8 grid of tile
	// patches with an image_newline token closing each of its 8 rows.
	llavaNextImageTokens = 16 + 8*(8+1)
)

func init() {
	register("tiny-llava-next", model{
		arch:   "llava-next",
		family: "multimodal",
		desc: "LLaVA-Next (anyres) vision-language model: a 64×64 image becomes a base view (2×2 average-pooled " +
			"to 32×32) and a 2×2 grid of 32×32 tiles; all five views go through one ViT tower (patch tokens, CLS " +
			"dropped) and a 2-layer GELU projector; the tiles' patch features are laid out as one 8×8 grid with a " +
			"learned image_newline embedding closing each row; base tokens, grid tokens and text embeddings are " +
			"concatenated into a causal RMSNorm decoder; logits are returned for the text positions",
		perturbation: "the language model's final RMSNorm weight is sign-flipped, so the logits are negated and " +
			"the argmax token changes at every text position",
		max:   map[string]int64{"input_ids": llavaVocab},
		build: buildLLaVANext,
	})
}

func buildLLaVANext(g *onnx.Graph, o Options) {
	n := nn{g}
	c := llavaLM
	px := g.Input("pixel_values", onnx.Float32, "batch", 3, llavaNextImage, llavaNextImage)
	ids := g.Input("input_ids", onnx.Int64, "batch", "seq")

	// anyres: the base view and the four tiles, stacked view-major on the
	// batch axis so one vision tower pass handles all of them.
	views := []string{n.op("AveragePool", []onnx.Attr{onnx.Ints("kernel_shape", 2, 2), onnx.Ints("strides", 2, 2)}, px)}
	for _, y := range []int64{0, vitImage} {
		for _, x := range []int64{0, vitImage} {
			views = append(views, n.op("Slice", nil, px, n.Int64s(y, x), n.Int64s(y+vitImage, x+vitImage), n.Int64s(2, 3)))
		}
	}
	stacked := n.op("Concat", []onnx.Attr{onnx.Int("axis", 0)}, views...) // [5b, 3, 32, 32]
	patches := n.sliceFrom(n.vit("vision_tower", stacked, vitImage, vitPatch, vitCfg), 1, 1)
	end := g.Scope("multi_modal_projector")
	feats := n.linear("linear_2", n.act("gelu", n.linear("linear_1", patches, vitCfg.d, c.d)), c.d, c.d) // [5b, 16, d]
	end()
	feats = n.op("Reshape", nil, feats, n.Int64s(5, -1, 16, c.d))
	feats = n.op("Transpose", []onnx.Attr{onnx.Ints("perm", 1, 0, 2, 3)}, feats) // [b, 5, 16, d]
	base := n.token(feats, 0)                                                    // [b, 16, d]
	tiles := n.sliceFrom(feats, 1, 1)                                            // [b, 4, 16, d]
	// [b, tile_row, tile_col, patch_row, patch_col, d] → rows of the whole grid
	grid := n.op("Reshape", nil, tiles, n.Int64s(0, 2, 2, 4, 4, c.d))
	grid = n.op("Transpose", []onnx.Attr{onnx.Ints("perm", 0, 1, 3, 2, 4, 5)}, grid)
	grid = n.op("Reshape", nil, grid, n.Int64s(0, 8, 8, c.d))
	batch := n.op("Shape", []onnx.Attr{onnx.Int("start", 0), onnx.Int("end", 1)}, px)
	newline := n.op("Expand", nil, n.op("Reshape", nil, n.table("image_newline", 1, c.d), n.Int64s(1, 1, 1, c.d)),
		n.op("Concat", []onnx.Attr{onnx.Int("axis", 0)}, batch, n.Int64s(8, 1, c.d)))
	grid = n.op("Concat", []onnx.Attr{onnx.Int("axis", 2)}, grid, newline) // [b, 8, 9, d]
	grid = n.op("Reshape", nil, grid, n.Int64s(0, 72, c.d))

	emb, table := n.embed("embed_tokens", ids, llavaVocab, c.d)
	x := n.op("Concat", []onnx.Attr{onnx.Int("axis", 1)}, base, grid, emb)
	x = n.add(x, n.positions("embed_positions", x, 512, c.d))
	logits := n.decoder("language_model", x, table, c, false, o.Perturb, nil)
	g.Node("Identity", []string{n.sliceFrom(logits, 1, llavaNextImageTokens)}, []string{"logits"})
	g.Output("logits", onnx.Float32, "batch", "seq", llavaVocab)
}
