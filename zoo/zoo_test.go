package zoo_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/hwtest/hwtest/onnx"
	"github.com/hwtest/hwtest/onnx/onnxtest"
	"github.com/hwtest/hwtest/zoo"
)

func TestMain(m *testing.M) { onnxtest.Main(m) }

func build(t *testing.T, name string, o zoo.Options) ([]byte, zoo.Info) {
	t.Helper()
	data, info, err := zoo.BuildWith(name, o)
	if err != nil {
		t.Fatal(err)
	}
	return data, info
}

func TestDeterministic(t *testing.T) {
	for _, name := range zoo.Names() {
		for _, o := range []zoo.Options{{}, {Perturb: true}} {
			a, _ := build(t, name, o)
			b, _ := build(t, name, o)
			if !bytes.Equal(a, b) {
				t.Errorf("%s %+v: two builds differ", name, o)
			}
		}
	}
}

// TestPerturbedVariants: every model has a perturbed variant that says
// what it breaks, keeps the original's inputs and outputs (so the same
// checks run on it), and differs from the original.
func TestPerturbedVariants(t *testing.T) {
	for _, name := range zoo.Names() {
		data, info := build(t, name, zoo.Options{})
		bad, binfo := build(t, name, zoo.Options{Perturb: true})
		if info.Perturbation == "" || binfo.Perturbation != info.Perturbation {
			t.Errorf("%s: Perturbation %q / %q", name, info.Perturbation, binfo.Perturbation)
		}
		if fmt.Sprint(info.Inputs, info.Outputs) != fmt.Sprint(binfo.Inputs, binfo.Outputs) {
			t.Errorf("%s: perturbed I/O %v %v, want %v %v", name, binfo.Inputs, binfo.Outputs, info.Inputs, info.Outputs)
		}
		if bytes.Equal(data, bad) {
			t.Errorf("%s: perturbed build equals the original", name)
		}
	}
}

func TestUnknown(t *testing.T) {
	if _, _, err := zoo.Build("tiny-nope"); err == nil {
		t.Fatal("want an error for an unknown model")
	}
}

func TestBuildAllWritesOnlyChanges(t *testing.T) {
	dir := t.TempDir()
	written, err := zoo.BuildAll(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(written) != len(zoo.Names()) {
		t.Fatalf("first BuildAll wrote %d files, want %d", len(written), len(zoo.Names()))
	}
	written, err = zoo.BuildAll(dir)
	if err != nil || len(written) != 0 {
		t.Fatalf("second BuildAll wrote %v (err %v), want nothing", written, err)
	}
	stale := filepath.Join(dir, zoo.Names()[0]+".onnx")
	if err := os.WriteFile(stale, []byte("stale"), 0o644); err != nil {
		t.Fatal(err)
	}
	written, err = zoo.BuildAll(dir)
	if err != nil || len(written) != 1 || written[0] != stale {
		t.Fatalf("BuildAll after corrupting one file wrote %v (err %v)", written, err)
	}
}

// randomInputs synthesises inputs from the model's declared ports the way
// hwtest's runtime does: symbolic dims from sizes, integer inputs in
// [0, Max), masks all ones, floats uniform in [-1, 1).
func randomInputs(t *testing.T, info zoo.Info, sizes map[string]int64, seed uint64) map[string]onnxtest.Tensor {
	t.Helper()
	r := onnx.NewRNG(seed)
	in := map[string]onnxtest.Tensor{}
	for _, p := range info.Inputs {
		shape := make([]int64, len(p.Dims))
		total := int64(1)
		for i, d := range p.Dims {
			shape[i] = d.Value
			if d.Param != "" {
				s, ok := sizes[d.Param]
				if !ok {
					t.Fatalf("%s: no size for dim %q", info.Name, d.Param)
				}
				shape[i] = s
			}
			total *= shape[i]
		}
		switch p.Type {
		case onnx.Int64:
			v := make([]int64, total)
			for i := range v {
				if p.Max == 2 {
					v[i] = 1 // a mask: keep every token
				} else {
					v[i] = int64(r.Uint64() % uint64(p.Max))
				}
			}
			in[p.Name] = onnxtest.I(v, shape...)
		case onnx.Float32:
			v := make([]float32, total)
			for i := range v {
				v[i] = float32(r.Float64()*2 - 1)
			}
			in[p.Name] = onnxtest.F(v, shape...)
		default:
			t.Fatalf("%s: input %s has type %v", info.Name, p.Name, p.Type)
		}
	}
	return in
}

// sizes gives every symbolic dim the zoo uses a value; distinct values
// catch transposed axes.
var sizes = map[string]int64{
	"batch": 2, "seq": 5, "dec_seq": 3, "image_batch": 3, "n_docs": 4, "doc_seq": 6,
	"audio_batch": 3, "texts": 4, "samples": 400, "frames": 19, "height": 40, "width": 56,
}

// TestRunsInONNXRuntime loads every model in ONNX Runtime's CPU EP, runs it
// on random inputs and checks each output's shape against the declared one
// and that it is finite and not constant.
func TestRunsInONNXRuntime(t *testing.T) {
	for _, name := range zoo.Names() {
		t.Run(name, func(t *testing.T) {
			data, info := build(t, name, zoo.Options{})
			t.Logf("%s: %d params, %d initializer bytes, %d bytes", name, info.Params, info.InitializerBytes, len(data))
			out := onnxtest.Run(t, data, randomInputs(t, info, sizes, 1))
			for _, p := range info.Outputs {
				want := make([]int64, len(p.Dims))
				for i, d := range p.Dims {
					want[i] = d.Value
					if d.Param != "" {
						want[i] = sizes[d.Param]
					}
				}
				onnxtest.CheckFloat(t, p.Name, out[p.Name], want...)
			}
		})
	}
}

func TestInfo(t *testing.T) {
	for _, name := range zoo.Names() {
		_, info := build(t, name, zoo.Options{})
		if info.Params <= 0 || info.InitializerBytes < 4*info.Params || info.Description == "" || info.Family == "" {
			t.Errorf("%s: incomplete info %+v", name, info)
		}
		for _, p := range info.Inputs {
			if p.Type == onnx.Int64 && p.Max <= 0 {
				t.Errorf("%s: integer input %s has no Max", name, p.Name)
			}
		}
	}
}

// expectProperty runs check on the model and on its perturbed variant: the
// property must hold for the first and fail for the second, which proves
// the property test can fail.
func expectProperty(t *testing.T, name string, check func(data []byte) error) {
	t.Helper()
	data, _ := build(t, name, zoo.Options{})
	if err := check(data); err != nil {
		t.Errorf("%s: %v", name, err)
	}
	bad, info := build(t, name, zoo.Options{Perturb: true})
	if err := check(bad); err == nil {
		t.Errorf("%s perturbed (%s): property still holds, so the test cannot fail", name, info.Perturbation)
	}
}

func ids(vs ...int64) []int64 { return vs }

// TestBERTPaddingInvariance: with the padding masked out, the real tokens'
// hidden states equal those of the unpadded shorter sequence.
func TestBERTPaddingInvariance(t *testing.T) {
	onnxtest.Require(t)
	expectProperty(t, "tiny-bert", func(data []byte) error {
		short := onnxtest.Run(t, data, map[string]onnxtest.Tensor{
			"input_ids":      onnxtest.I(ids(101, 7, 42, 102), 1, 4),
			"attention_mask": onnxtest.I(ids(1, 1, 1, 1), 1, 4),
		})
		padded := onnxtest.Run(t, data, map[string]onnxtest.Tensor{
			"input_ids":      onnxtest.I(ids(101, 7, 42, 102, 0, 0), 1, 6),
			"attention_mask": onnxtest.I(ids(1, 1, 1, 1, 0, 0), 1, 6),
		})
		a := short["last_hidden_state"].Float
		b := padded["last_hidden_state"].Float[:len(a)]
		if d := onnxtest.MaxAbsDiff(a, b); d > 1e-5 {
			return fmt.Errorf("real tokens' hidden states moved by %g when padded", d)
		}
		if d := onnxtest.MaxAbsDiff(short["pooler_output"].Float, padded["pooler_output"].Float); d > 1e-5 {
			return fmt.Errorf("pooler output moved by %g when padded", d)
		}
		return nil
	})
}

// TestGPT2Causality: changing the last token leaves every earlier
// position's logits unchanged.
func TestGPT2Causality(t *testing.T) {
	onnxtest.Require(t)
	expectProperty(t, "tiny-gpt2", func(data []byte) error {
		a := onnxtest.Run(t, data, map[string]onnxtest.Tensor{"input_ids": onnxtest.I(ids(5, 17, 256, 3, 999), 1, 5)})["logits"]
		b := onnxtest.Run(t, data, map[string]onnxtest.Tensor{"input_ids": onnxtest.I(ids(5, 17, 256, 3, 42), 1, 5)})["logits"]
		prefix := 4 * 1000 // the first four positions' logits
		if d := onnxtest.MaxAbsDiff(a.Float[:prefix], b.Float[:prefix]); d > 1e-6 {
			return fmt.Errorf("earlier logits moved by %g when the last token changed", d)
		}
		if d := onnxtest.MaxAbsDiff(a.Float[prefix:], b.Float[prefix:]); d == 0 {
			return fmt.Errorf("the last position's logits did not change with its token")
		}
		return nil
	})
}

// TestViTProbabilities: the probabilities output sums to 1 per image.
func TestViTProbabilities(t *testing.T) {
	onnxtest.Require(t)
	expectProperty(t, "tiny-vit", func(data []byte) error {
		_, info, _ := zoo.Build("tiny-vit")
		p := onnxtest.Run(t, data, randomInputs(t, info, sizes, 3))["probabilities"]
		for b := range p.Shape[0] {
			sum := float32(0)
			for _, v := range p.Float[b*p.Shape[1] : (b+1)*p.Shape[1]] {
				sum += v
			}
			if sum < 1-1e-5 || sum > 1+1e-5 {
				return fmt.Errorf("image %d: probabilities sum to %g", b, sum)
			}
		}
		return nil
	})
}

// TestMambaChunkedEqualsWhole: running the sequence in two chunks, carrying
// the state from the first into the second, equals one whole-sequence run.
func TestMambaChunkedEqualsWhole(t *testing.T) {
	onnxtest.Require(t)
	const seq, d, n = 7, 16, 4
	r := onnx.NewRNG(9)
	x := r.NormalFloat32s(seq*d, 1)
	s0 := r.NormalFloat32s(d*n, 0.5)
	expectProperty(t, "tiny-mamba", func(data []byte) error {
		run := func(x, s []float32, steps int64) map[string]onnxtest.Tensor {
			return onnxtest.Run(t, data, map[string]onnxtest.Tensor{
				"x": onnxtest.F(x, 1, steps, d), "state": onnxtest.F(s, 1, d, n),
			})
		}
		whole := run(x, s0, seq)
		first := run(x[:4*d], s0, 4)
		second := run(x[4*d:], first["new_state"].Float, seq-4)
		y := append(append([]float32(nil), first["y"].Float...), second["y"].Float...)
		if dy := onnxtest.MaxAbsDiff(y, whole["y"].Float); dy > 1e-5 {
			return fmt.Errorf("chunked y differs from whole by %g", dy)
		}
		if ds := onnxtest.MaxAbsDiff(second["new_state"].Float, whole["new_state"].Float); ds > 1e-5 {
			return fmt.Errorf("chunked final state differs from whole by %g", ds)
		}
		return nil
	})
}

// TestMixtralRouting: every layer's router gives each token distinct
// logits, so its top-2 selection is well defined (a tie would make the
// runtime's top-k agreement check meaningless).
func TestMixtralRouting(t *testing.T) {
	data, info := build(t, "tiny-mixtral", zoo.Options{})
	out := onnxtest.Run(t, data, randomInputs(t, info, sizes, 4))["router_logits"]
	e := int(out.Shape[3])
	for tok := 0; tok < len(out.Float)/e; tok++ {
		row := out.Float[tok*e : (tok+1)*e]
		seen := map[float32]bool{}
		for _, v := range row {
			if seen[v] {
				t.Fatalf("token %d: tied router logits %v", tok, row)
			}
			seen[v] = true
		}
	}
}

// Options.Scale widens a scalable model: its weights grow with the width (the
// embeddings linearly, the layers' matrices as its square), its name and doc string say the scale, it
// runs with the same outputs, and a model that is not scalable refuses it.
func TestScale(t *testing.T) {
	_, small := build(t, "tiny-gpt2", zoo.Options{})
	data, big := build(t, "tiny-gpt2", zoo.Options{Scale: 4})
	if big.Scale != 4 || small.Scale != 1 {
		t.Errorf("Scale %d and %d, want 4 and 1", big.Scale, small.Scale)
	}
	if big.Params < 6*small.Params {
		t.Errorf("at 4× the width: %d params, the registered size has %d", big.Params, small.Params)
	}
	if !bytes.Contains(data, []byte("tiny-gpt2-x4")) || !bytes.Contains(data, []byte("built at 4×")) {
		t.Error("the scaled file does not say its scale")
	}
	if fmt.Sprint(big.Inputs, big.Outputs) != fmt.Sprint(small.Inputs, small.Outputs) {
		t.Errorf("scaled I/O %v %v, want %v %v", big.Inputs, big.Outputs, small.Inputs, small.Outputs)
	}
	if _, _, err := zoo.BuildWith("tiny-bert", zoo.Options{Scale: 2}); err == nil {
		t.Error("tiny-bert took a scale")
	}
	onnxtest.Require(t)
	out := onnxtest.Run(t, data, map[string]onnxtest.Tensor{"input_ids": onnxtest.I([]int64{1, 2, 3}, 1, 3)})
	onnxtest.CheckFloat(t, "logits", out["logits"], 1, 3, 1000)
}
