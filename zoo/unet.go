package zoo

import (
	"github.com/hwtest/hwtest/onnx"
)

const (
	unetChannels = 4  // latent channels, as Stable Diffusion's
	unetSize     = 16 // latent height and width
	unetTemb     = 32 // timestep embedding width
)

func init() {
	register("tiny-unet", model{
		arch:   "unet",
		family: "diffusion",
		desc: "Diffusion UNet (one denoising step): sinusoidal timestep embedding and MLP, Conv-in, " +
			"ResNet blocks with instance norm, SiLU and the timestep added per channel, a stride-2 Conv " +
			"downsample, a nearest-neighbour Resize upsample with a skip connection, Conv-out to the noise prediction",
		perturbation: "a RandomNormalLike noise term (scale 0.01) with no seed attribute is added to the output, " +
			"so two runs of the same session on the same inputs differ: same seed, same output no longer holds",
		build: buildUNet,
	})
}

func buildUNet(g *onnx.Graph, o Options) {
	n := nn{g}
	sample := g.Input("sample", onnx.Float32, "batch", unetChannels, unetSize, unetSize)
	timestep := g.Input("timestep", onnx.Float32, "batch")

	// Sinusoidal embedding with frequencies 2^-i: exact in float32, so the
	// bytes do not depend on a platform's exp().
	const half = 8
	freqs := make([]float32, half)
	for i := range freqs {
		freqs[i] = 1 / float32(int64(1)<<i)
	}
	args := n.mul(n.op("Unsqueeze", nil, timestep, g.Int64s(1)), g.Initializer(g.Fresh("freqs"), []int64{half}, freqs))
	temb := n.op("Concat", []onnx.Attr{onnx.Int("axis", 1)}, n.op("Sin", nil, args), n.op("Cos", nil, args))
	temb = n.linear("time_embedding.linear_1", temb, 2*half, unetTemb)
	temb = n.linear("time_embedding.linear_2", n.act("silu", temb), unetTemb, unetTemb)

	x := n.conv("conv_in", sample, unetChannels, 16, 3, 1)
	skip := n.resBlock("down.0", x, temb, 16, 16)
	x = n.conv("down.0.downsample", skip, 16, 16, 3, 2) // 8×8
	x = n.resBlock("down.1", x, temb, 16, 32)
	x = n.resBlock("mid", x, temb, 32, 32)
	x = n.op("Resize", []onnx.Attr{onnx.String("mode", "nearest")}, x, "", g.Initializer(g.Fresh("scales"), []int64{4}, []float32{1, 1, 2, 2}))
	x = n.op("Concat", []onnx.Attr{onnx.Int("axis", 1)}, x, skip) // 32 + 16 channels
	x = n.resBlock("up.0", x, temb, 48, 16)
	x = n.conv("conv_out", n.act("silu", n.instanceNorm("norm_out", x, 16)), 16, unetChannels, 3, 1)
	if o.Perturb {
		// No seed attribute: ONNX Runtime seeds the generator per kernel
		// and advances it on every run.
		x = n.add(x, n.op("RandomNormalLike", []onnx.Attr{onnx.Float("mean", 0), onnx.Float("scale", 0.01)}, x))
	}

	g.Node("Identity", []string{x}, []string{"out_sample"})
	g.Output("out_sample", onnx.Float32, "batch", unetChannels, unetSize, unetSize)
}

// conv is a k×k Conv2d with "same" padding and the given stride.
func (n nn) conv(scope, x string, in, out, k, stride int64) string {
	defer n.Scope(scope)()
	p := k / 2
	return n.Op("Conv", []string{x, n.weight(out, in, k, k), n.Fill(n.Fresh("bias"), 0, out)},
		onnx.Ints("kernel_shape", k, k), onnx.Ints("pads", p, p, p, p), onnx.Ints("strides", stride, stride))
}

// instanceNorm normalises each channel over its spatial extent. UNets use
// GroupNorm; ai.onnx has GroupNormalization only from opset 18, and
// instance norm is GroupNorm with one channel per group.
func (n nn) instanceNorm(scope, x string, ch int64) string {
	defer n.Scope(scope)()
	return n.Op("InstanceNormalization", []string{x, n.Fill(n.Fresh("weight"), 1, ch), n.Fill(n.Fresh("bias"), 0, ch)},
		onnx.Float("epsilon", 1e-5))
}

// resBlock is a diffusers ResnetBlock2D: two norm-SiLU-conv steps with the
// projected timestep embedding added per channel in between, plus a 1×1
// conv shortcut when the channel count changes.
func (n nn) resBlock(scope, x, temb string, in, out int64) string {
	defer n.Scope(scope)()
	h := n.conv("conv1", n.act("silu", n.instanceNorm("norm1", x, in)), in, out, 3, 1)
	t := n.linear("time_emb_proj", n.act("silu", temb), unetTemb, out)
	h = n.add(h, n.op("Unsqueeze", nil, t, n.Int64s(2, 3)))
	h = n.conv("conv2", n.act("silu", n.instanceNorm("norm2", h, out)), out, out, 3, 1)
	if in != out {
		x = n.conv("conv_shortcut", x, in, out, 1, 1)
	}
	return n.add(x, h)
}
