package onnx_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hwtest/hwtest/internal/testenv"
	"github.com/hwtest/hwtest/onnx"
	"github.com/hwtest/hwtest/zoo"
)

// Every zoo model is a real model of its family: the guess must name that family
// (and a text model's architecture) from the file alone.
func TestGuessFamilyOfEveryZooModel(t *testing.T) {
	arch := map[string]string{"bert": "encoder", "gpt2": "decoder", "opt": "decoder", "qwen2": "decoder", "t5": "encoder-decoder"}
	for _, name := range zoo.Names() {
		b, info, err := zoo.Build(name)
		if err != nil {
			t.Fatal(err)
		}
		s, err := onnx.Inspect(b)
		if err != nil {
			t.Fatal(err)
		}
		g := onnx.GuessFamily(s)
		t.Logf("%s: %s %s %s (%s): %s", name, g.Family, g.Architecture, g.Task, g.Confidence, strings.Join(g.Reasons, "; "))
		if g.Family != info.Family || g.Architecture != arch[info.Architecture] {
			t.Errorf("%s: guessed %s %s, it is %s %s (%s)", name, g.Family, g.Architecture, info.Family, arch[info.Architecture], strings.Join(g.Reasons, "; "))
		}
		if g.Confidence != onnx.High || g.Task == "" || len(g.Reasons) == 0 {
			t.Errorf("%s: confidence %s, task %q, reasons %q", name, g.Confidence, g.Task, g.Reasons)
		}
	}
}

// Silero VAD from npm: a third-party audio model (waveform, LSTM state, sample rate).
func TestGuessFamilyOfSilero(t *testing.T) {
	for _, v := range []string{"v5", "v6"} {
		path := filepath.Join("..", ".hwtest", "models", "npm", "@ricky0123", "vad-web@0.0.31", "dist", "silero_vad_"+v+".onnx")
		_, err := os.Stat(path)
		testenv.Need(t, "the npm Silero models (make setup)", err)
		s, err := onnx.InspectFile(path)
		if err != nil {
			t.Fatal(err)
		}
		g := onnx.GuessFamily(s)
		if g.Family != "audio" || g.Confidence != onnx.High || !strings.Contains(strings.Join(g.Reasons, "; "), "sample-rate input sr") {
			t.Errorf("silero %s: %+v", v, g)
		}
		if p := onnx.StatePairs(s); len(p) != 1 || p[0][0].Name != "state" || p[0][1].Name != "stateN" {
			t.Errorf("silero %s state pairs: %+v", v, p)
		}
	}
}

func TestGuessFamilyOfNothingKnown(t *testing.T) {
	g := onnx.NewGraph("plain")
	x := g.Input("features", onnx.Float32, "n", 7)
	g.Node("Relu", []string{x}, []string{"y"})
	g.Output("y", onnx.Float32, "n", 7)
	s, err := onnx.Inspect(g.Model().Marshal())
	if err != nil {
		t.Fatal(err)
	}
	if guess := onnx.GuessFamily(s); guess.Family != "" || guess.Confidence != onnx.Low || !strings.Contains(strings.Join(guess.Reasons, "; "), "2-D float input features [n, 7]") {
		t.Errorf("%+v", guess)
	}
}
