package main

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hwtest/hwtest/catalog"
	"github.com/hwtest/hwtest/internal/testenv"
	"github.com/hwtest/hwtest/onnx"
	"github.com/hwtest/hwtest/zoo"
)

// A catalog written by a person: comments above, between and after the entries,
// anchors, a flow mapping, blank lines.
const commentedModels = `# My models. Keep this comment.
x-tokens: &tokens {dims: [2, 8], range: [1, 1000]}   # anchors stay

models:
  # The whisper fixture, by hand.
  - id: vad
    family: audio   # a trailing comment
    task: voice-activity-detection
    source: zoo:tiny-whisper
    inputs: {input_features: {dims: [1, 16, 32]}, decoder_input_ids: {dims: [1, 4]}}

  # Nothing after this but comments.
# a comment at column 0
`

// Every zoo model (a real model of each family) and Silero VAD from npm, added to a
// commented catalog: the text before stays byte for byte, every entry parses with
// each open dim bound, and the catalog generates.
func TestAddKeepsTheCatalogAndGenerates(t *testing.T) {
	root := newRoot(t, commentedModels)
	dir := filepath.Join(root, "models")
	files := map[string]string{}
	for _, name := range zoo.Names() {
		files[name] = zooFile(t, dir, name)
	}
	silero := filepath.Join("..", "..", ".hwtest", "models", "npm", "@ricky0123", "vad-web@0.0.31", "dist", "silero_vad_v5.onnx")
	b, err := os.ReadFile(silero)
	testenv.Need(t, "the npm Silero model (make setup)", err)
	write(t, filepath.Join(dir, "silero_vad_v5.onnx"), string(b))
	files["silero-vad-v5"] = filepath.Join(dir, "silero_vad_v5.onnx")

	catalogPath := filepath.Join(root, "models.yaml")
	text := commentedModels
	for _, name := range append(zoo.Names(), "silero-vad-v5") {
		code, stdout, stderr := hwtest("add", "--root", root, files[name])
		if code != ExitOK {
			t.Fatalf("add %s: exit %d\n%s%s", name, code, stdout, stderr)
		}
		b, _ := os.ReadFile(catalogPath)
		if !strings.HasPrefix(string(b), text) {
			t.Fatalf("add %s changed the text before its entry:\n%s", name, b)
		}
		text = string(b)
		if !strings.Contains(stdout, "added "+name+" to ") || !strings.Contains(stdout, "hwtest run --model "+name+" --target cpu") {
			t.Errorf("add %s printed:\n%s", name, stdout)
		}
	}
	if !strings.Contains(text, "  - id: tiny-vit\n    # family: guessed (4-D float input pixel_values [batch, 3, 32, 32]; 1 Conv, 17 MatMul) — check it\n    family: vision\n") {
		t.Errorf("no guessed-family comment for tiny-vit:\n%s", text)
	}

	c, err := catalog.Load(catalogPath, filepath.Join(root, "hardware.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range append(zoo.Names(), "silero-vad-v5") {
		m, ok := c.Model(name)
		if !ok {
			t.Fatalf("%s is not in the catalog", name)
		}
		data, _ := os.ReadFile(files[name])
		sum := sha256.Sum256(data)
		if m.Source != "file:models/"+filepath.Base(files[name]) || m.SHA256 != hex.EncodeToString(sum[:]) {
			t.Errorf("%s: source %s sha256 %s", name, m.Source, m.SHA256)
		}
		s, _ := onnx.Inspect(data)
		for _, in := range s.Inputs {
			ov := m.Inputs[in.Name]
			if len(in.Dims) > 0 && len(ov.Dims) != len(in.Dims) {
				t.Errorf("%s: input %s %s has dims %v in the catalog", name, in.Name, in.Shape(), ov.Dims)
			}
		}
		if zooFamily(name) != "" && m.Family != zooFamily(name) {
			t.Errorf("%s: family %s, want %s", name, m.Family, zooFamily(name))
		}
	}
	code, stdout, stderr := hwtest("generate", "--root", root)
	if code != ExitOK || !strings.Contains(stdout, "created generated/vision/tiny_vit.go") || !strings.Contains(stdout, "created generated/audio/silero_vad_v5.go") {
		t.Fatalf("generate: exit %d\n%s%s", code, stdout, stderr)
	}

	// The same file again, a taken --id: errors naming the line; nothing written.
	code, _, stderr = hwtest("add", "--root", root, files["tiny-vit"])
	if code != ExitError || !regexp.MustCompile(`models\.yaml:\d+: model "tiny-vit" already has source file:models/tiny-vit.onnx`).MatchString(stderr) {
		t.Errorf("same file twice: exit %d\n%s", code, stderr)
	}
	other := zooFile(t, t.TempDir(), "tiny-bert")
	code, _, stderr = hwtest("add", "--root", root, "--id", "vad", other)
	if code != ExitError || !strings.Contains(stderr, `models.yaml:6: model id "vad" is taken; pass another --id`) {
		t.Errorf("taken id: exit %d\n%s", code, stderr)
	}
	if b, _ := os.ReadFile(catalogPath); string(b) != text {
		t.Errorf("a refused add changed the catalog")
	}
}

// A key after models: keeps its place and its comment; the entry goes before them.
func TestAddBeforeTheNextKey(t *testing.T) {
	models := "models:\n- id: vad\n  family: audio\n  task: t\n  source: zoo:tiny-whisper\n\n# about the mask\nx-mask: &mask {value: [1]}\n"
	root := newRoot(t, models)
	path := zooFile(t, filepath.Join(root, "m"), "tiny-bert")
	code, stdout, stderr := hwtest("add", "--root", root, "--id", "bert", "--task", "fill-mask", path)
	if code != ExitOK {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	b, _ := os.ReadFile(filepath.Join(root, "models.yaml"))
	got := string(b)
	head, tail := "models:\n- id: vad\n  family: audio\n  task: t\n  source: zoo:tiny-whisper\n\n- id: bert\n", "\n\n# about the mask\nx-mask: &mask {value: [1]}\n"
	if !strings.HasPrefix(got, head) || !strings.HasSuffix(got, tail) || !strings.Contains(got, "  architecture: encoder\n  task: fill-mask\n  source: file:m/tiny-bert.onnx\n") {
		t.Errorf("catalog:\n%s", got)
	}
	if _, err := catalog.Parse("models.yaml", b, "hardware.yaml", []byte(testHardware)); err != nil {
		t.Error(err)
	}

	// A catalog in another folder names the file from its own folder, with "..".
	other := filepath.Join(root, "cat", "my.yaml")
	write(t, other, commentedModels)
	code, stdout, stderr = hwtest("add", "--root", root, "--models", other, path)
	b, _ = os.ReadFile(other)
	if code != ExitOK || !strings.Contains(string(b), "    source: file:../m/tiny-bert.onnx\n") || !strings.Contains(stdout, "hwtest --models "+other+" generate") {
		t.Errorf("exit %d\n%s%s%s", code, stdout, stderr, b)
	}
}

// A truncated file, a file the family cannot be guessed for: clear errors, and the
// catalog unchanged with no temporary file left beside it.
func TestAddRefusesBrokenModels(t *testing.T) {
	root := newRoot(t, commentedModels)
	good := zooFile(t, t.TempDir(), "tiny-detr")
	b, _ := os.ReadFile(good)
	truncated := filepath.Join(root, "cut.onnx")
	write(t, truncated, string(b[:len(b)/3]))
	code, _, stderr := hwtest("add", "--root", root, truncated)
	if code != ExitError || !strings.Contains(stderr, truncated+": not an ONNX model") || !strings.Contains(stderr, "nothing was added to") {
		t.Errorf("truncated: exit %d\n%s", code, stderr)
	}

	g := onnx.NewGraph("plain")
	x := g.Input("features", onnx.Float32, "n", 7)
	g.Node("Relu", []string{x}, []string{"y"})
	g.Output("y", onnx.Float32, "n", 7)
	plain := filepath.Join(root, "plain.onnx")
	write(t, plain, string(g.Model().Marshal()))
	code, _, stderr = hwtest("add", "--root", root, plain)
	if code != ExitError || !strings.Contains(stderr, "no family guessed (no rule matched; 2-D float input features [n, 7]): pass --family") {
		t.Errorf("unguessable: exit %d\n%s", code, stderr)
	}
	// A family whose checks need an output the model lacks is refused before writing.
	code, _, stderr = hwtest("add", "--root", root, "--family", "vision-text", plain)
	if code != ExitError || !strings.Contains(stderr, "a vision-text model must name its outputs.ranking") || !strings.Contains(stderr, "the model's outputs: y") {
		t.Errorf("no ranking output: exit %d\n%s", code, stderr)
	}
	for args, want := range map[string]string{
		"--family vision --architecture decoder": "--architecture is for text models; this one is vision",
		"--family text --architecture dec":       `--architecture "dec": want one of encoder, decoder, encoder-decoder`,
		"--family text":                          "a text model needs --architecture",
		"--family textt":                         `--family "textt": want one of text, vision,`,
	} {
		code, _, stderr = hwtest(append([]string{"add", "--root", root, plain}, strings.Fields(args)...)...)
		if code != ExitError || !strings.Contains(stderr, want) {
			t.Errorf("%s: exit %d\n%s", args, code, stderr)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(root, "models.yaml")); string(b) != commentedModels {
		t.Errorf("the catalog changed:\n%s", b)
	}
	entries, _ := os.ReadDir(root)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".models.yaml") {
			t.Errorf("left behind: %s", e.Name())
		}
	}
	// With --family it goes in, said to be chosen (no guess comment).
	code, _, stderr = hwtest("add", "--root", root, "--family", "vision", plain)
	b, _ = os.ReadFile(filepath.Join(root, "models.yaml"))
	if code != ExitOK || strings.Contains(string(b), "# family: guessed") || !strings.Contains(string(b), "      features: {dims: [1, 7], range: [-1, 1]}\n") {
		t.Errorf("--family: exit %d\n%s%s", code, stderr, b)
	}
}

func zooFamily(name string) string {
	_, info, err := zoo.Build(name)
	if err != nil {
		return ""
	}
	return info.Family
}

// A classifier whose softmax is over axis 1 of [batch, classes, 1, 1] (as ImageNet
// CNNs exported from Caffe are) is added with the axis, and its suite generates.
func TestAddSoftmaxOverAMiddleAxis(t *testing.T) {
	g := onnx.NewGraph("cnn-head")
	x := g.Input("data", onnx.Float32, "N", 10, 1, 1)
	g.Node("Softmax", []string{x}, []string{"prob"}, onnx.Int("axis", 1))
	g.Output("prob", onnx.Float32, "N", 10, 1, 1)
	root := newRoot(t, commentedModels)
	file := filepath.Join(root, "models", "cnn.onnx")
	write(t, file, string(g.Model().Marshal()))
	if code, stdout, stderr := hwtest("add", "--root", root, "--family", "vision", file); code != ExitOK {
		t.Fatalf("add: exit %d\n%s%s", code, stdout, stderr)
	}
	b, _ := os.ReadFile(filepath.Join(root, "models.yaml"))
	if !strings.Contains(string(b), "distribution: {output: prob, axis: 1}") {
		t.Errorf("the entry does not give the softmax's axis:\n%s", b)
	}
	if code, stdout, stderr := hwtest("generate", "--root", root); code != ExitOK {
		t.Errorf("generate: exit %d\n%s%s", code, stdout, stderr)
	}
}
