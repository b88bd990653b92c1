package zoo

import "github.com/hwtest/hwtest/onnx"

const (
	mambaD = 16 // model width = inner width here, so the state is [b, d, n]
	mambaN = 4  // state size per channel
)

func init() {
	register("tiny-mamba", model{
		arch:   "mamba",
		family: "state-space",
		desc: "Mamba-style selective state-space block: input-dependent Δ, B, C; the recurrence " +
			"h ← exp(Δ·A)·h + Δ·B·x, y = C·h + D·x runs as an ONNX Scan over the sequence with the " +
			"state as input and output, then SiLU gating, output projection and residual (no causal conv)",
		perturbation: "the incoming state is ignored, so a chunked run no longer equals the whole-sequence run",
		build:        buildMamba,
	})
}

func buildMamba(g *onnx.Graph, o Options) {
	n := nn{g}
	x := g.Input("x", onnx.Float32, "batch", "seq", mambaD)
	state := g.Input("state", onnx.Float32, "batch", mambaD, mambaN)
	if o.Perturb {
		state = n.mul(state, n.Scalar(0))
	}
	defer g.Scope("mixer")()

	u := n.act("silu", n.linear("in_proj", x, mambaD, mambaD))
	z := n.linear("gate_proj", x, mambaD, mambaD)
	dt := n.op("Softplus", nil, n.linear("dt_proj", u, mambaD, mambaD))
	bIn := n.linear("B_proj", u, mambaD, mambaN)
	cIn := n.linear("C_proj", u, mambaD, mambaN)

	// A = -[1..n] per channel, Mamba's S4D-real initialisation; negative
	// so that exp(Δ·A) < 1 and the recurrence is stable.
	a := make([]float32, mambaD*mambaN)
	for i := range a {
		a[i] = -float32(i%mambaN + 1)
	}
	aName := g.Initializer(g.Fresh("A"), []int64{mambaD, mambaN}, a)

	// The Scan body is one time step on [b, d] slices; it reads A from
	// the outer graph.
	body := g.Subgraph("selective_scan_step")
	bn := nn{body}
	h := body.Input("h", onnx.Float32, "batch", mambaD, mambaN)
	ut := body.Input("u_t", onnx.Float32, "batch", mambaD)
	dtt := body.Input("dt_t", onnx.Float32, "batch", mambaD)
	bt := body.Input("B_t", onnx.Float32, "batch", mambaN)
	ct := body.Input("C_t", onnx.Float32, "batch", mambaN)
	unsq := func(v string, axis int64) string { return bn.op("Unsqueeze", nil, v, body.Int64s(axis)) }
	// All of these are [b, d, n]: channels × state, per batch row.
	decay := bn.op("Exp", nil, bn.mul(unsq(dtt, 2), aName))
	inject := bn.mul(unsq(bn.mul(dtt, ut), 2), unsq(bt, 1))
	hNew := bn.add(bn.mul(decay, h), inject)
	readout := bn.mul(hNew, unsq(ct, 1))
	yt := bn.op("ReduceSum", []onnx.Attr{onnx.Int("keepdims", 0)}, readout, body.Int64s(2)) // [b, d]
	body.Node("Identity", []string{hNew}, []string{"h_out"})
	body.Node("Identity", []string{yt}, []string{"y_t"})
	body.Output("h_out", onnx.Float32, "batch", mambaD, mambaN)
	body.Output("y_t", onnx.Float32, "batch", mambaD)

	outs := g.OpN("Scan", []string{state, u, dt, bIn, cIn}, 2,
		onnx.GraphAttr("body", body), onnx.Int("num_scan_inputs", 4),
		onnx.Ints("scan_input_axes", 1, 1, 1, 1), onnx.Ints("scan_output_axes", 1))
	newState, ys := outs[0], outs[1]

	y := n.add(ys, n.mul(u, n.Fill(g.Fresh("D"), 1, mambaD)))
	y = n.mul(y, n.act("silu", z))
	y = n.add(x, n.linear("out_proj", y, mambaD, mambaD))
	g.Node("Identity", []string{y}, []string{"y"})
	g.Node("Identity", []string{newState}, []string{"new_state"})
	g.Output("y", onnx.Float32, "batch", "seq", mambaD)
	g.Output("new_state", onnx.Float32, "batch", mambaD, mambaN)
}
