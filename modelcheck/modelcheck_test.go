package modelcheck

import (
	"bytes"
	"fmt"
	"image"
	pngpkg "image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hwtest/hwtest/catalog"
	"github.com/hwtest/hwtest/internal/testenv"
	"github.com/hwtest/hwtest/sources"
	"github.com/hwtest/hwtest/tensorfile/tensorfiletest"
	"github.com/hwtest/hwtest/zoo"
)

// root is the repository root: npm models live under its .hwtest/models.
const root = ".."

// load writes models.yaml into a temporary folder (beside any files given) and
// loads it with the repository's hardware.yaml.
func load(t *testing.T, models string, files map[string][]byte) *catalog.Catalogs {
	t.Helper()
	dir := t.TempDir()
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "models.yaml")
	if err := os.WriteFile(path, []byte(models), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := catalog.Load(path, filepath.Join(root, "hardware.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func zooFile(t *testing.T, name string) []byte {
	t.Helper()
	data, _, err := zoo.Build(name)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// errorLines is Check's error as one line per problem, the file named "models.yaml".
func errorLines(c *catalog.Catalogs, err error) []string {
	if err == nil {
		return nil
	}
	return strings.Split(strings.ReplaceAll(err.Error(), c.ModelsFile, "models.yaml"), "\n")
}

// Every problem of a catalog checked against real model files (zoo models built
// in memory, one written beside the catalog as a file: source), at once, each at
// the line of the entry, input or output at fault, with the fix.
func TestCheckReportsEveryProblemAtItsLine(t *testing.T) {
	c := load(t, `models:
  - id: vit
    family: vision
    task: image-classification
    source: zoo:tiny-vit
    inputs:
      pixel_values: {range: [-1, 1]}
    outputs: {primary: logitz, distribution: probabilities}
  - id: clip
    family: vision-text
    task: zero-shot-image-classification
    source: file:clip.onnx
    inputs:
      input_ids: {dims: [3, 8, 1], range: [1, 1000]}
      attention_mask: {value: [1]}
      pixel: {dims: [2, 3, 32, 32]}
    outputs: {primary: logits_per_image}
  - id: t5
    family: text
    architecture: encoder-decoder
    task: text2text-generation
    source: zoo:tiny-t5
    inputs:
      input_ids: {dims: [2, 8]}
      attention_mask: {dims: [2, 4]}
      decoder_input_ids: {dims: [2, 4]}
  - id: gpt2
    family: text
    architecture: decoder
    task: text-generation
    source: zoo:tiny-gpt2
    inputs:
      input_ids: {dims: [2, 8]}
      token_type_ids: {value: [0], real_only: true}
      input_idz: {value: [1]}
  - id: mixtral
    family: mixture-of-experts
    task: text-generation
    source: zoo:tiny-mixtral
    outputs: {primary: logits, router: router_logit, router_top_k: 2}
`, map[string][]byte{"clip.onnx": zooFile(t, "tiny-clip")})
	res, err := Check(c, root)
	want := []string{
		`models.yaml:7:7: model "vit": input "pixel_values" (shape [batch 3 32 32]): axis 0 ("batch") is bound by no dims: add dims: [1, 3, 32, 32] to inputs.pixel_values`,
		`models.yaml:8:24: model "vit": outputs.primary: "logitz": the model has no such output (did you mean "logits"?) (its outputs: logits, probabilities): use one of them`,
		`models.yaml:9:5: model "clip": input "pixel_values" (shape [image_batch 3 32 32]): axis 0 ("image_batch") is bound by no dims: add dims: [1, 3, 32, 32] to inputs.pixel_values`,
		`models.yaml:14:7: model "clip": input override "input_ids": dims [3 8 1] have rank 3, the model's input has rank 2 (shape [batch seq]): give 2 dims`,
		`models.yaml:15:7: model "clip": input "attention_mask" (shape [batch seq]): axis 0 ("batch"), axis 1 ("seq") are bound by no dims: add dims: [3, 8] to inputs.attention_mask, or to an input that shares its symbols: input_ids ("batch", "seq") (value: fills the shape, it does not set it)`,
		`models.yaml:16:7: model "clip": input override "pixel": the model has no such input (its inputs: input_ids, attention_mask, pixel_values): rename the override to one of them, or remove it`,
		`models.yaml:25:7: model "t5": input override "attention_mask": dim 1 ("seq") is 4, but the dims of "input_ids" set "seq" to 8: make them agree`,
		// real_only is for a fixture standing in for the real export; this is the real file.
		`models.yaml:34:7: model "gpt2": input override "token_type_ids": the model has no such input (its inputs: input_ids): rename the override to one of them, or remove it`,
		`models.yaml:35:7: model "gpt2": input override "input_idz": the model has no such input (did you mean "input_ids"?) (its inputs: input_ids): rename the override to one of them, or remove it`,
		`models.yaml:36:5: model "mixtral": input "input_ids" (shape [batch seq]): axis 0 ("batch"), axis 1 ("seq") are bound by no dims: add dims: [1, 8] to inputs.input_ids`,
		`models.yaml:40:40: model "mixtral": outputs.router: "router_logit": the model has no such output (did you mean "router_logits"?) (its outputs: logits, router_logits): use one of them`,
	}
	if diff := cmp.Diff(want, errorLines(c, err)); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
	if res.Checked != 5 || len(res.NotChecked) != 0 {
		t.Errorf("checked %d, not checked %q; want 5 and none", res.Checked, res.NotChecked)
	}
}

// A fixture stands in for an hf: export that is not here: it is what is checked,
// the message says so, and inputs only the real export has (real_only) are fine.
// A model whose file is not here is listed, not an error.
func TestCheckUsesTheFixtureAndListsModelsNotHere(t *testing.T) {
	c := load(t, `models:
  - id: bert
    family: text
    architecture: encoder
    task: feature-extraction
    source: hf:google-bert/bert-base-uncased/model.onnx@86b5e0934494bd15c9632b12f734a8a67f723594
    fixture: zoo:tiny-bert
    inputs: {input_ids: {dims: [2, 8]}, attention_mask: {value: [1]}, token_type_ids: {value: [0], real_only: true}}
    outputs: {primary: pooler_output}
  - id: bert-typo
    family: text
    architecture: encoder
    task: feature-extraction
    source: hf:google-bert/bert-base-uncased/model.onnx@86b5e0934494bd15c9632b12f734a8a67f723594
    fixture: zoo:tiny-bert
    inputs: {input_ids: {dims: [2, 8]}, token_type_id: {value: [0]}}
  - id: gone
    family: audio
    task: voice-activity-detection
    source: npm:@ricky0123/vad-web@0.0.99/dist/silero_vad_v5.onnx
    sha256: 2623a2953f6ff3d2c1e61740c6cdb7168133479b267dfef114a4a3cc5bdd788f
  - id: lost
    family: audio
    task: voice-activity-detection
    source: file:lost.onnx
`, nil)
	t.Setenv("HF_HUB_CACHE", t.TempDir()) // no real export here, whatever the machine has
	res, err := Check(c, root)
	want := []string{
		`models.yaml:16:41: model "bert-typo": input override "token_type_id": the model has no such input (its inputs: input_ids, attention_mask): rename the override to one of them, or remove it (checked against its fixture zoo:tiny-bert: the real file is not on this machine)`,
	}
	if diff := cmp.Diff(want, errorLines(c, err)); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
	wantNot := []string{
		`not checked: model "gone": .hwtest/models/npm/@ricky0123/vad-web@0.0.99/dist/silero_vad_v5.onnx is not on this machine (run hwtest fetch)`,
		`not checked: model "lost": ` + filepath.Join(c.ModelsDir, "lost.onnx") + ` is not on this machine (put the model there, or fix the path: it is relative to the folder of the catalog)`,
	}
	if diff := cmp.Diff(wantNot, res.NotChecked); diff != "" {
		t.Errorf("not checked (-want +got):\n%s", diff)
	}
	if res.Checked != 2 {
		t.Errorf("checked %d, want 2", res.Checked)
	}
}

// A real third-party model (Silero VAD from npm): its fixed dims and its input
// names are checked, state_input against the inputs.
func TestCheckRealNPMModel(t *testing.T) {
	src, _ := catalog.ParseSource("npm:@ricky0123/vad-web@0.0.31/dist/silero_vad_v5.onnx")
	_, err := os.Stat(sources.LocalPath(root, "", src))
	testenv.Need(t, "silero_vad_v5.onnx (make setup)", err)
	c := load(t, `models:
  - id: vad
    family: audio
    task: voice-activity-detection
    source: npm:@ricky0123/vad-web@0.0.31/dist/silero_vad_v5.onnx
    sha256: 2623a2953f6ff3d2c1e61740c6cdb7168133479b267dfef114a4a3cc5bdd788f
    inputs:
      input: {dims: [1, 512], range: [-1, 1]}
      state: {dims: [2, 1, 64]}
      sr: {value: [16000]}
    outputs: {primary: output, state: stateN, state_input: stat}
`, nil)
	_, err = Check(c, root)
	want := []string{
		`models.yaml:9:7: model "vad": input override "state": dim 2 is 64, the model fixes it at 128 (shape [2 ? 128]): set it to 128`,
		`models.yaml:11:60: model "vad": outputs.state_input: "stat": the model has no such input (did you mean "state"?) (its inputs: input, state, sr): use one of them`,
	}
	if diff := cmp.Diff(want, errorLines(c, err)); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
}

// The repository's own catalog fits its models.
func TestRepositoryCatalogFits(t *testing.T) {
	c, err := catalog.Load(filepath.Join(root, "models.yaml"), filepath.Join(root, "hardware.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := Check(c, root)
	if err != nil {
		t.Error(err)
	}
	if res.Checked+len(res.NotChecked) != len(c.Models) || res.Checked == 0 {
		t.Errorf("checked %d, not checked %q, of %d models", res.Checked, res.NotChecked, len(c.Models))
	}
}

// An input from a file has the file's shape: it binds the symbols the others
// follow, and a file whose type or shape does not fit the model is an error at the
// input's line, found at generate time.
func TestCheckFileInputs(t *testing.T) {
	dir := t.TempDir()
	ids := tensorfiletest.NPY(t, filepath.Join(dir, "ids.npy"), "<i8", []int64{2, 8}, make([]float64, 16))
	wrongType := tensorfiletest.NPY(t, filepath.Join(dir, "f32.npy"), "<f4", []int64{2, 8}, make([]float64, 16))
	files := map[string][]byte{}
	for _, p := range []string{ids, wrongType} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		files[filepath.Base(p)] = b
	}
	files["trunc.npy"] = files["ids.npy"][:len(files["ids.npy"])-8] // a copy cut short
	c := load(t, `models:
  - id: gpt2
    family: text
    architecture: decoder
    task: text-generation
    source: zoo:tiny-gpt2
    inputs:
      input_ids: {file: ids.npy}
  - id: gpt2-f32
    family: text
    architecture: decoder
    task: text-generation
    source: zoo:tiny-gpt2
    inputs:
      input_ids: {file: f32.npy}
  - id: gpt2-missing
    family: text
    architecture: decoder
    task: text-generation
    source: zoo:tiny-gpt2
    inputs:
      input_ids: {file: gone.npy}
  - id: gpt2-truncated
    family: text
    architecture: decoder
    task: text-generation
    source: zoo:tiny-gpt2
    inputs:
      input_ids: {file: trunc.npy}
`, files)
	_, err := Check(c, root)
	got := errorLines(c, err)
	if len(got) != 3 || !strings.HasPrefix(got[0], `models.yaml:15:7: model "gpt2-f32": inputs.input_ids: f32.npy holds float (numpy float32), "input_ids" is int64: save it as int64 (numpy int64: x.astype(numpy.int64))`) ||
		!strings.HasPrefix(got[1], `models.yaml:22:7: model "gpt2-missing": inputs.input_ids: `) || !strings.Contains(got[1], "gone.npy") ||
		!strings.HasPrefix(got[2], `models.yaml:29:7: model "gpt2-truncated": inputs.input_ids: `) ||
		!strings.Contains(got[2], "trunc.npy is truncated: 120 bytes of data, the header's shape [2 8] of int64 needs 128") {
		t.Errorf("errors:\n%s", strings.Join(got, "\n"))
	}
}

// Expected outputs are checked at generate time as file inputs are: the output
// exists, and the file (relative to the catalog's folder) has its type, rank and
// fixed dims; each problem at the line of the expected entry. A fixture's outputs
// are not the real model's, so its expected files are not checked (the runtime
// skips them too).
func TestCheckExpectedOutputs(t *testing.T) {
	dir := t.TempDir()
	files := map[string][]byte{}
	for name, c := range map[string]struct {
		descr string
		shape []int64
	}{
		"good.npy": {"<f4", []int64{2, 10}}, "f64.npy": {"<f8", []int64{2, 10}},
		"rank.npy": {"<f4", []int64{20}}, "dim.npy": {"<f4", []int64{2, 9}},
	} {
		p := tensorfiletest.NPY(t, filepath.Join(dir, name), c.descr, c.shape, make([]float64, tensorfileElements(c.shape)))
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		files[name] = b
	}
	files["trunc.npy"] = files["good.npy"][:len(files["good.npy"])-4]
	c := load(t, `models:
  - id: vit
    family: vision
    task: image-classification
    source: zoo:tiny-vit
    inputs:
      pixel_values: {dims: [2, 3, 32, 32], value: [0.5]}
    expected:
      logits: {file: good.npy}
      probabilities: {file: f64.npy}
  - id: vit-shapes
    family: vision
    task: image-classification
    source: zoo:tiny-vit
    inputs:
      pixel_values: {dims: [2, 3, 32, 32], value: [0.5]}
    expected:
      logits: {file: rank.npy}
      probabilities: {file: dim.npy}
  - id: vit-files
    family: vision
    task: image-classification
    source: zoo:tiny-vit
    inputs:
      pixel_values: {dims: [2, 3, 32, 32], value: [0.5]}
    expected:
      logit: {file: good.npy}
      logits: {file: gone.npy}
      probabilities: {file: trunc.npy}
  - id: bert
    family: text
    architecture: encoder
    task: feature-extraction
    source: hf:google-bert/bert-base-uncased/model.onnx@86b5e0934494bd15c9632b12f734a8a67f723594
    fixture: zoo:tiny-bert
    inputs: {input_ids: {dims: [2, 8], value: [1]}, attention_mask: {value: [1]}}
    expected:
      last_hidden_state: {file: gone.npy}
`, files)
	t.Setenv("HF_HUB_CACHE", t.TempDir()) // the fixture stands in, whatever the machine has
	_, err := Check(c, root)
	got := errorLines(c, err)
	want := []string{
		`models.yaml:10:7: model "vit": expected.probabilities: f64.npy holds double (numpy float64), "probabilities" is float: save it as float (numpy float32: x.astype(numpy.float32))`,
		`models.yaml:18:7: model "vit-shapes": expected.logits: rank.npy has shape [20] (rank 1), "logits" has shape [batch, 10] (rank 2)`,
		`models.yaml:19:7: model "vit-shapes": expected.probabilities: dim.npy has shape [2 9], "probabilities" has shape [batch, 10]: dim 1 must be 10`,
		`models.yaml:27:7: model "vit-files": expected.logit: the model has no such output (did you mean "logits"?) (its outputs: logits, probabilities): use one of them`,
		`models.yaml:28:7: model "vit-files": expected.logits: open ` + filepath.Join(c.ModelsDir, "gone.npy") + `: no such file or directory`,
		`models.yaml:29:7: model "vit-files": expected.probabilities: ` + filepath.Join(c.ModelsDir, "trunc.npy") + ` is truncated: 76 bytes of data, the header's shape [2 10] of float needs 80`,
	}
	if len(got) != len(want) {
		t.Fatalf("errors:\n%s\nwant %d, starting:\n%s", strings.Join(got, "\n"), len(want), strings.Join(want, "\n"))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("error %d:\n got %s\nwant %s...", i, got[i], want[i])
		}
	}
}

// An axis for distribution or ranking must be one the output has: negative ones
// count from the end.
func TestCheckOutputAxis(t *testing.T) {
	entry := func(id, role string, axis int) string {
		return fmt.Sprintf(`  - id: %s
    family: vision
    task: object-detection
    source: zoo:tiny-detr
    inputs: {pixel_values: {dims: [1, 3, 32, 32]}}
    outputs: {primary: pred_logits, %s: {output: probabilities, axis: %d}}
`, id, role, axis)
	}
	c := load(t, "models:\n"+entry("two", "distribution", 2)+entry("minus-three", "ranking", -3)+
		entry("five", "distribution", 5)+entry("minus-four", "ranking", -4)+`  - id: vit
    family: vision
    task: image-classification
    source: zoo:tiny-vit
    inputs: {pixel_values: {dims: [1, 3, 32, 32]}}
    outputs: {distribution: {output: probabilities, axis: 2}}
`, nil)
	_, err := Check(c, root)
	want := []string{
		`models.yaml:19:51: model "five": outputs.distribution: axis 5: output "probabilities" has shape [batch 8 11] (rank 3): give an axis from 1 to 2, or from -1 to -2 counting from the end`,
		`models.yaml:25:46: model "minus-four": outputs.ranking: axis -4: output "probabilities" has shape [batch 8 11] (rank 3): give an axis from 1 to 2, or from -1 to -2 counting from the end`,
		`models.yaml:31:29: model "vit": outputs.distribution: axis 2: output "probabilities" has shape [batch 10] (rank 2): give axis 1 (or -1), or leave axis out: the last axis is the default`,
	}
	if diff := cmp.Diff(want, errorLines(c, err)); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
}

func tensorfileElements(shape []int64) int {
	n := 1
	for _, d := range shape {
		n *= int(d)
	}
	return n
}

// A file that does not fit its input is one mistake, reported once, naming the
// file; a file whose shape conflicts with another input's dims is named too.
func TestCheckFileInputReportedOnce(t *testing.T) {
	dir := t.TempDir()
	files := map[string][]byte{}
	ids := tensorfiletest.NPY(t, filepath.Join(dir, "ids.npy"), "<i8", []int64{2, 6}, make([]float64, 12))
	b, err := os.ReadFile(ids)
	if err != nil {
		t.Fatal(err)
	}
	files["ids.npy"] = b
	var png bytes.Buffer
	if err := pngpkg.Encode(&png, image.NewNRGBA(image.Rect(0, 0, 32, 32))); err != nil {
		t.Fatal(err)
	}
	files["cat.png"] = png.Bytes()
	c := load(t, `models:
  - id: vit
    family: vision
    task: image-classification
    source: zoo:tiny-vit
    inputs:
      pixel_values: {file: cat.png, layout: nhwc}
  - id: clip
    family: vision-text
    task: zero-shot-image-classification
    source: zoo:tiny-clip
    inputs:
      input_ids: {file: ids.npy}
      attention_mask: {dims: [2, 8]}
      pixel_values: {file: cat.png}
`, files)
	_, err = Check(c, root)
	want := []string{
		`models.yaml:7:7: model "vit": inputs.pixel_values: cat.png has shape [1 32 32 3], "pixel_values" has shape [batch, 3, 32, 32]: dim 1 must be 3`,
		`models.yaml:14:7: model "clip": input override "attention_mask": dim 1 ("seq") is 8, but ids.npy (the file of input "input_ids") sets "seq" to 6: make them agree`,
	}
	if diff := cmp.Diff(want, errorLines(c, err)); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
}

// The dims a "bound by no dims" message suggests are those `hwtest add` writes
// (onnx.PlanInputs): an image's open sides 224, ranking candidates 3, not shapes'
// plain default of 8.
func TestCheckSuggestsWhatAddWrites(t *testing.T) {
	c := load(t, `models:
  - id: detr
    family: vision
    task: object-detection
    source: zoo:tiny-detr
  - id: clip
    family: vision-text
    task: zero-shot-image-classification
    source: zoo:tiny-clip
`, nil)
	_, err := Check(c, root)
	want := []string{
		`models.yaml:2:5: model "detr": input "pixel_values" (shape [batch 3 height width]): axis 0 ("batch"), axis 2 ("height"), axis 3 ("width") are bound by no dims: add dims: [1, 3, 224, 224] to inputs.pixel_values`,
		`models.yaml:6:5: model "clip": input "input_ids" (shape [batch seq]): axis 0 ("batch"), axis 1 ("seq") are bound by no dims: add dims: [3, 8] to inputs.input_ids, or to an input that shares its symbols: attention_mask ("batch", "seq")`,
		`models.yaml:6:5: model "clip": input "attention_mask" (shape [batch seq]): axis 0 ("batch"), axis 1 ("seq") are bound by no dims: add dims: [3, 8] to inputs.attention_mask, or to an input that shares its symbols: input_ids ("batch", "seq")`,
		`models.yaml:6:5: model "clip": input "pixel_values" (shape [image_batch 3 32 32]): axis 0 ("image_batch") is bound by no dims: add dims: [1, 3, 32, 32] to inputs.pixel_values`,
	}
	if diff := cmp.Diff(want, errorLines(c, err)); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
}
