package zoo

import "github.com/hwtest/hwtest/onnx"

var vitCfg = cfg{d: 32, heads: 2, ff: 37, layers: 2, eps: 1e-12, preNorm: true, act: "gelu"}

const (
	vitImage   = 32 // pixels per side
	vitPatch   = 8  // 4×4 = 16 patches
	vitClasses = 10
)

func init() {
	register("tiny-vit", model{
		arch:         "vit",
		family:       "vision",
		desc:         "ViT image classifier: 8×8 Conv patch embedding of a 32×32 RGB image, CLS token, 2 pre-norm encoder layers, linear head with softmax probabilities",
		perturbation: "the softmax head is replaced by a sigmoid, so probabilities no longer sum to 1",
		build:        buildViT,
	})
}

func buildViT(g *onnx.Graph, o Options) {
	n := nn{g}
	px := g.Input("pixel_values", onnx.Float32, "batch", 3, vitImage, vitImage)
	h := n.vit("vit", px, vitImage, vitPatch, vitCfg)
	logits := n.linear("classifier", n.token(h, 0), vitCfg.d, vitClasses)
	g.Node("Identity", []string{logits}, []string{"logits"})
	if o.Perturb {
		g.Node("Sigmoid", []string{logits}, []string{"probabilities"})
	} else {
		g.Node("Softmax", []string{logits}, []string{"probabilities"}, onnx.Int("axis", -1))
	}
	g.Output("logits", onnx.Float32, "batch", vitClasses)
	g.Output("probabilities", onnx.Float32, "batch", vitClasses)
}
