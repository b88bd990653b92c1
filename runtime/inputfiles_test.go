package runtime

import (
	"encoding/binary"
	"errors"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hwtest/hwtest/onnx"
	"github.com/hwtest/hwtest/tensorfile/tensorfiletest"
	ort "github.com/yalue/onnxruntime_go"
)

// The models here are built with known weights, so the tests compute what they
// must output with plain Go arithmetic.

// classifierWeights: a 1×1 Conv from 4 channels to 10 classes, then Softmax over
// axis 1: a CNN head whose probabilities are [batch, 10, 1, 1].
func classifierWeights() (w, b []float32) {
	for c := 0; c < 10; c++ {
		for k := 0; k < 4; k++ {
			w = append(w, float32(c-k)*0.25+float32(k)*0.1)
		}
		b = append(b, float32(c)*0.05)
	}
	return w, b
}

func classifierModel() []byte {
	g := onnx.NewGraph("cnn-head")
	x := g.Input("x", onnx.Float32, "batch", 4, 1, 1)
	w, b := classifierWeights()
	wn := g.Initializer("w", []int64{10, 4, 1, 1}, w)
	bn := g.Initializer("b", []int64{10}, b)
	g.Node("Conv", []string{x, wn, bn}, []string{"logits"})
	g.Node("Softmax", []string{"logits"}, []string{"prob"}, onnx.Int("axis", 1))
	g.Output("logits", onnx.Float32, "batch", 10, 1, 1)
	g.Output("prob", onnx.Float32, "batch", 10, 1, 1)
	return g.Model().Marshal()
}

// classify is classifierModel in plain Go: x is [batch, 4], the result [batch, 10].
func classify(x [][]float64) (logits, prob [][]float64) {
	w, b := classifierWeights()
	for _, row := range x {
		l := make([]float64, 10)
		var sum float64
		for c := range l {
			l[c] = float64(b[c])
			for k := 0; k < 4; k++ {
				l[c] += float64(w[c*4+k]) * row[k]
			}
		}
		p := make([]float64, 10)
		for c := range p {
			p[c] = math.Exp(l[c])
			sum += p[c]
		}
		for c := range p {
			p[c] /= sum
		}
		logits, prob = append(logits, l), append(prob, p)
	}
	return logits, prob
}

// denseMapModel: a 1×1 Conv from RGB to one channel, then Sigmoid: a detector's
// [1, 1, 32, 32] probability map.
var denseWeights = []float32{0.5, -0.25, 0.75}

func denseMapModel() []byte {
	g := onnx.NewGraph("dense-map")
	x := g.Input("image", onnx.Float32, 1, 3, 32, 32)
	wn := g.Initializer("w", []int64{1, 3, 1, 1}, denseWeights)
	g.Node("Conv", []string{x, wn}, []string{"conv"})
	g.Node("Sigmoid", []string{"conv"}, []string{"map"})
	g.Output("map", onnx.Float32, 1, 1, 32, 32)
	return g.Model().Marshal()
}

var cpuTight = Target{ID: "cpu", Provider: CPUProvider, Tolerance: Tolerance{RTol: 1e-5, ATol: 1e-6}}

// openFileRun writes model as file:model.onnx of a catalog in dir and opens a run
// of m on the CPU, the model file standing in for itself as the target.
func openFileRun(t *testing.T, dir string, model []byte, m Model) *Run {
	t.Helper()
	requireORT(t)
	path, err := writeTemp(dir, "model.onnx", model)
	if err != nil {
		t.Fatal(err)
	}
	m.CatalogDir, m.Source = dir, "file:model.onnx"
	r, done, err := OpenRun(m, path, path, cpuTight)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(done)
	return r
}

var xRows = [][]float64{{0.5, -1, 2, 0.25}, {-0.75, 1.5, 0, 3}}

func flat(rows [][]float64) []float64 { return slices.Concat(rows...) }

// A .npy input feeds the model as it is, binds the symbolic batch to its 2 rows,
// and the outputs are what the arithmetic says.
func TestInputFromNPY(t *testing.T) {
	dir := t.TempDir()
	tensorfiletest.NPY(t, filepath.Join(dir, "x.npy"), "<f4", []int64{2, 4, 1, 1}, flat(xRows))
	r := openFileRun(t, dir, classifierModel(), Model{ID: "cnn", Family: "vision",
		Inputs: map[string]Input{"x": {File: "x.npy"}}})
	x := r.Reference.Inputs[0]
	if !slices.Equal(x.Shape, []int64{2, 4, 1, 1}) || !slices.Equal(x.Data, float32s(flat(xRows))) {
		t.Fatalf("input x = %v %v, want the file's [2 4 1 1] %v", x.Shape, x.Data, flat(xRows))
	}
	_, prob := classify(float32Rows(xRows))
	got := mustFind(r.Reference.Outputs, "prob")
	if !slices.Equal(got.Shape, []int64{2, 10, 1, 1}) {
		t.Fatalf("prob has shape %v", got.Shape)
	}
	for i, want := range flat(prob) {
		if math.Abs(got.Data[i]-want) > 1e-6 {
			t.Fatalf("prob[%d] = %v, want %v", i, got.Data[i], want)
		}
	}
}

func float32s(xs []float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = float64(float32(x))
	}
	return out
}

func float32Rows(rows [][]float64) [][]float64 {
	out := make([][]float64, len(rows))
	for i, r := range rows {
		out[i] = float32s(r)
	}
	return out
}

// A TensorProto .pb input (ONNX's own test-data format) reads the same way.
func TestInputFromPB(t *testing.T) {
	dir := t.TempDir()
	raw := []byte{}
	for _, x := range flat(xRows[:1]) {
		raw = binary.LittleEndian.AppendUint32(raw, math.Float32bits(float32(x)))
	}
	pt := onnx.Tensor{Name: "x", Type: onnx.Float32, Dims: []int64{1, 4, 1, 1}, Raw: raw}
	if err := os.WriteFile(filepath.Join(dir, "input_0.pb"), pt.Marshal(), 0o644); err != nil {
		t.Fatal(err)
	}
	r := openFileRun(t, dir, classifierModel(), Model{ID: "cnn-pb", Family: "vision",
		Inputs: map[string]Input{"x": {File: "input_0.pb"}}})
	if x := r.Reference.Inputs[0]; !slices.Equal(x.Shape, []int64{1, 4, 1, 1}) || !slices.Equal(x.Data, float32s(flat(xRows[:1]))) {
		t.Fatalf("input x = %v %v", x.Shape, x.Data)
	}
}

// A file that does not fit the model's input is refused before anything runs, naming
// the input, the file and the fix.
func TestInputFileMustFit(t *testing.T) {
	requireORT(t)
	dir := t.TempDir()
	path, _ := writeTemp(dir, "model.onnx", classifierModel())
	for name, c := range map[string]struct {
		descr string
		shape []int64
		want  string
	}{
		"dtype": {"<f8", []int64{1, 4, 1, 1}, `input "x" (inputs.x.file in models.yaml): ` + filepath.Join(dir, "dtype.npy") + ` holds double (numpy float64), "x" is float: save it as float (numpy float32: x.astype(numpy.float32))`},
		"rank":  {"<f4", []int64{1, 4}, `has shape [1 4] (rank 2), "x" has shape [batch, 4, 1, 1] (rank 4)`},
		"dim":   {"<f4", []int64{1, 3, 1, 1}, "dim 1 must be 4"},
	} {
		f := tensorfiletest.NPY(t, filepath.Join(dir, name+".npy"), c.descr, c.shape, make([]float64, tensorfileElements(c.shape)))
		m := Model{ID: "cnn-" + name, CatalogDir: dir, Inputs: map[string]Input{"x": {File: filepath.Base(f)}}}
		_, _, err := OpenRun(m, path, path, cpuTight)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
	m := Model{ID: "cnn-missing", CatalogDir: dir, Inputs: map[string]Input{"x": {File: "nowhere.npy"}}}
	if _, _, err := OpenRun(m, path, path, cpuTight); err == nil || !strings.Contains(err.Error(), "nowhere.npy") {
		t.Errorf("missing file: %v", err)
	}
}

func tensorfileElements(shape []int64) int64 { return elements(shape) }

// A file's shape that conflicts with another input's dims is named by the file:
// the catalog has no dims for that input.
func TestInputFileConflictNamesTheFile(t *testing.T) {
	ids := info("input_ids", ort.TensorElementDataTypeInt64, -1, -1)
	ids.Params = []string{"batch", "seq"}
	mask := info("attention_mask", ort.TensorElementDataTypeInt64, -1, -1)
	mask.Params = []string{"batch", "seq"}
	files := map[string]Tensor{"input_ids": {Name: "input_ids", Type: ort.TensorElementDataTypeInt64, Shape: []int64{2, 6}, Data: make([]float64, 12)}}
	_, err := buildInputs("m", []InputSpec{ids, mask}, map[string]Input{"input_ids": {File: "ids.npy"}, "attention_mask": {Dims: []int64{2, 8}}}, files, nil)
	want := `input override "attention_mask": dim 1 ("seq") is 8, but ids.npy (the file of input "input_ids") sets "seq" to 6: make them agree`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("%v\nwant it to contain %s", err, want)
	}
}

// The softmax of a [batch, 10, 1, 1] head runs along axis 1: with the axis the
// check holds, without it (the last axis, of size 1) it fails on the CPU's own
// outputs too, which makes it a check that does not fit, not a target's mismatch;
// a really wrong sum still fails with the axis, as the target's.
func TestDistributionAxis(t *testing.T) {
	dir := t.TempDir()
	tensorfiletest.NPY(t, filepath.Join(dir, "x.npy"), "<f4", []int64{2, 4, 1, 1}, flat(xRows))
	m := Model{ID: "cnn-axis", Family: "vision", Inputs: map[string]Input{"x": {File: "x.npy"}},
		Outputs: Outputs{Primary: "prob", Distribution: "prob", DistributionAxis: 1}}
	r := openFileRun(t, dir, classifierModel(), m)
	if err := DistributionSumsToOne.Check(r); err != nil {
		t.Fatalf("axis 1: %v", err)
	}
	noAxis := *r
	noAxis.Model.Outputs.DistributionAxis = 0
	err := DistributionSumsToOne.Check(&noAxis)
	if !IsViolation(err) || !misfit(DistributionSumsToOne, &noAxis) {
		t.Fatalf("the last axis: %v (misfit %v), want a violation the CPU reference shares", err, misfit(DistributionSumsToOne, &noAxis))
	}
	wrong := *r
	wrong.Got = clone(r.Got)
	p := mustFind(wrong.Got, "prob")
	p.Data[13] += 0.01 // batch row 1, class 3
	err = DistributionSumsToOne.Check(&wrong)
	if !IsViolation(err) || !strings.Contains(err.Error(), "lane 1 along axis 1 of \"prob\" [2 10 1 1] sums to 1.01") || misfit(DistributionSumsToOne, &wrong) {
		t.Fatalf("a wrong sum: %v (misfit %v), want the target's violation", err, misfit(DistributionSumsToOne, &wrong))
	}
	// Top-5 classes read axis 1 of [batch, classes, 1, 1] and catch a swap.
	if err := TopKAgrees.Check(r); err != nil {
		t.Fatalf("top-5 on [2 10 1 1]: %v", err)
	}
	_, prob := classify(float32Rows(xRows))
	worst := argmax(prob[1])
	low := slices.Index(prob[1], slices.Min(prob[1]))
	swapped := *r
	swapped.Got = clone(r.Got)
	q := mustFind(swapped.Got, "prob")
	q.Data[10+worst], q.Data[10+low] = q.Data[10+low], q.Data[10+worst]
	if err := TopKAgrees.Check(&swapped); !IsViolation(err) || !strings.Contains(err.Error(), "row 1: index") {
		t.Fatalf("top-5 with classes %d and %d swapped: %v", worst, low, err)
	}
}

// Ranking takes an axis as well.
func TestRankingAxis(t *testing.T) {
	dir := t.TempDir()
	tensorfiletest.NPY(t, filepath.Join(dir, "x.npy"), "<f4", []int64{2, 4, 1, 1}, flat(xRows))
	r := openFileRun(t, dir, classifierModel(), Model{ID: "cnn-rank", Family: "vision-text", Inputs: map[string]Input{"x": {File: "x.npy"}},
		Outputs: Outputs{Ranking: "logits", RankingAxis: 1}})
	if err := RankingAgrees.Check(r); err != nil {
		t.Fatal(err)
	}
	swapped := *r
	swapped.Got = clone(r.Got)
	l := mustFind(swapped.Got, "logits")
	l.Data[0], l.Data[9] = l.Data[9], l.Data[0]
	if err := RankingAgrees.Check(&swapped); !IsViolation(err) || !strings.Contains(err.Error(), "lane 0 along axis 1") {
		t.Fatalf("swapped candidates: %v", err)
	}
}

// pngFile writes a 32×32 RGB image whose pixels follow x and y.
func pngFile(t *testing.T, path string) string {
	img := image.NewNRGBA(image.Rect(0, 0, 32, 32))
	for y := 0; y < 32; y++ {
		for x := 0; x < 32; x++ {
			img.SetNRGBA(x, y, color.NRGBA{uint8(x * 8), uint8(y * 8), uint8((x + y) * 4), 255})
		}
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := png.Encode(f, img); err != nil {
		t.Fatal(err)
	}
	return path
}

// denseMap is denseMapModel in plain Go on pngFile's image, normalised as given.
func denseMap(mean, std [3]float64) []float64 {
	out := make([]float64, 32*32)
	for y := 0; y < 32; y++ {
		for x := 0; x < 32; x++ {
			px := [3]float64{float64(x * 8), float64(y * 8), float64((x + y) * 4)}
			var s float64
			for c := range px {
				v := float64(float32((px[c]/255 - mean[c]) / std[c]))
				s += float64(denseWeights[c]) * v
			}
			out[y*32+x] = 1 / (1 + math.Exp(-s))
		}
	}
	return out
}

var imagenetMean, imagenetStd = [3]float64{0.485, 0.456, 0.406}, [3]float64{0.229, 0.224, 0.225}

// An image input, normalised as stated, reaches the model exactly; top-5 classes
// of the detector's [1, 1, 32, 32] map are not a check that applies (skipped,
// saying why), while elementwise agreement with the CPU still holds.
func TestImageInputAndDenseMap(t *testing.T) {
	dir := t.TempDir()
	pngFile(t, filepath.Join(dir, "scene.png"))
	r := openFileRun(t, dir, denseMapModel(), Model{ID: "detector", Family: "vision",
		Inputs: map[string]Input{"image": {File: "scene.png", Mean: imagenetMean[:], Std: imagenetStd[:]}}})
	got := mustFind(r.Reference.Outputs, "map")
	for i, want := range denseMap(imagenetMean, imagenetStd) {
		if math.Abs(got.Data[i]-want) > 1e-6 {
			t.Fatalf("map[%d] = %v, want %v", i, got.Data[i], want)
		}
	}
	err := TopKAgrees.Check(r)
	var na *NotApplicable
	if !errors.As(err, &na) || !strings.Contains(na.Reason, `output "map" has shape [1 1 32 32], a dense map rather than [batch, classes]`) {
		t.Fatalf("top-5 on a dense map: %v, want it not applicable, saying why", err)
	}
	if err := OutputsAgree.Check(r); err != nil {
		t.Fatalf("elementwise agreement: %v", err)
	}
}

// Expected outputs: every target, the CPU included, is compared with them; a
// wrong expected value fails as a mismatch that names the file and the worst element.
func TestExpectedOutputs(t *testing.T) {
	dir := t.TempDir()
	tensorfiletest.NPY(t, filepath.Join(dir, "x.npy"), "<f4", []int64{2, 4, 1, 1}, flat(xRows))
	logits, prob := classify(float32Rows(xRows))
	tensorfiletest.NPY(t, filepath.Join(dir, "prob.npy"), "<f4", []int64{2, 10, 1, 1}, flat(prob))
	tensorfiletest.NPY(t, filepath.Join(dir, "logits.npy"), "<f4", []int64{2, 10, 1, 1}, flat(logits))
	m := Model{ID: "cnn-expected", Family: "vision", Inputs: map[string]Input{"x": {File: "x.npy"}},
		Expected: map[string]Expected{"prob": {File: "prob.npy"}, "logits": {File: "logits.npy", Tolerance: &Tolerance{RTol: 1e-5, ATol: 1e-5}}}}
	r := openFileRun(t, dir, classifierModel(), m)
	if err := MatchesExpectedOutputs.Check(r); err != nil {
		t.Fatalf("the right answers: %v", err)
	}
	wrong := flat(prob)
	wrong[7] += 0.001
	tensorfiletest.NPY(t, filepath.Join(dir, "wrong.npy"), "<f4", []int64{2, 10, 1, 1}, wrong)
	bad := *r
	bad.Model.Expected = map[string]Expected{"prob": {File: "wrong.npy"}}
	err := MatchesExpectedOutputs.Check(&bad)
	var v *Violation
	if !errors.As(err, &v) || !strings.Contains(err.Error(), `output "prob" differs from the expected output from wrong.npy`) || v.Worst == nil || v.Worst.Index != 7 {
		t.Fatalf("a wrong expected value: %v, want a mismatch at prob[7] naming wrong.npy", err)
	}
	for name, c := range map[string]struct {
		model Model
		want  string
	}{
		"no such output": {Model{Expected: map[string]Expected{"probs": {File: "prob.npy"}}}, `expects output "probs", which the model does not have (its outputs: logits, prob)`},
		"wrong shape":    {Model{Expected: map[string]Expected{"prob": {File: "x.npy"}}}, `has shape [2 4 1 1], "prob" has shape [2, 10, 1, 1]`},
		"random inputs":  {Model{Inputs: map[string]Input{}, Expected: m.Expected}, `hwtest synthesises "x" at random`},
	} {
		e := *r
		e.Model.Expected, e.Model.CatalogDir = c.model.Expected, dir
		if c.model.Inputs != nil {
			e.Model.Inputs = c.model.Inputs
		}
		err := MatchesExpectedOutputs.Check(&e)
		if err == nil || IsViolation(err) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", name, err, c.want)
		}
	}
}

// A file holds the real export's input; when the model's fixture stands in (a
// tiny-random model of other sizes), its input is synthesised instead, and the
// expected outputs, the real model's, are not a check that applies.
func TestFileInputsOfAFixture(t *testing.T) {
	requireORT(t)
	dir := t.TempDir()
	path, _ := writeTemp(dir, "model.onnx", classifierModel())
	tensorfiletest.NPY(t, filepath.Join(dir, "x.npy"), "<f4", []int64{1, 3, 224, 224}, make([]float64, 3*224*224))
	m := Model{ID: "cnn-fixture", CatalogDir: dir, Fixture: "zoo:cnn", Inputs: map[string]Input{"x": {File: "x.npy"}},
		Expected: map[string]Expected{"prob": {File: "x.npy"}}}
	r, done, err := OpenRun(m, path, path, cpuTight)
	if err != nil {
		t.Fatalf("the fixture with the real model's input file: %v", err)
	}
	defer done()
	if x := r.Reference.Inputs[0]; !slices.Equal(x.Shape, []int64{1, 4, 1, 1}) {
		t.Errorf("the fixture's input has shape %v, want it synthesised as [1 4 1 1]", x.Shape)
	}
	var na *NotApplicable
	if err := MatchesExpectedOutputs.Check(r); !errors.As(err, &na) || !strings.Contains(na.Reason, "fixture ran in place of the real model") {
		t.Errorf("expected outputs of a fixture: %v", err)
	}
}
