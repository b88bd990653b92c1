package shapes

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hwtest/hwtest/onnx"
	"github.com/hwtest/hwtest/zoo"
)

// zooInputs is a zoo model's inputs as its file declares them.
func zooInputs(t *testing.T, name string) []Input {
	t.Helper()
	data, _, err := zoo.Build(name)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := onnx.Inspect(data)
	if err != nil {
		t.Fatal(err)
	}
	var ins []Input
	for _, in := range sum.Inputs {
		ins = append(ins, FromONNX(in.Name, in.Dims))
	}
	return ins
}

// Dims bind symbols across inputs (the mask follows the ids; the decoder's
// batch follows too, its own length does not); value: binds nothing.
func TestBindFollowsSymbols(t *testing.T) {
	ins := zooInputs(t, "tiny-t5") // input_ids, attention_mask [batch seq], decoder_input_ids [batch dec_seq]
	got, problems := Bind(ins, map[string]Override{
		"input_ids":         {Dims: []int64{2, 8}},
		"attention_mask":    {Values: 1},
		"decoder_input_ids": {Dims: []int64{2, 4}},
	})
	if len(problems) > 0 || fmt.Sprint(got) != "[[2 8] [2 8] [2 4]]" {
		t.Errorf("shapes %v, problems %v", got, problems)
	}
	_, problems = Bind(ins, map[string]Override{"attention_mask": {Dims: []int64{2, 8}, Values: 16}})
	want := []Problem{{Input: "decoder_input_ids", Msg: `input "decoder_input_ids" (shape [batch dec_seq]): axis 1 ("dec_seq") is bound by no dims: add dims: [2, 8] to inputs.decoder_input_ids`}}
	if diff := cmp.Diff(want, problems); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	_, problems = Bind(ins, map[string]Override{"input_ids": {Dims: []int64{2, 8}}, "attention_mask": {Values: 3}, "decoder_input_ids": {Dims: []int64{2, 4}}})
	want = []Problem{{Input: "attention_mask", Override: true, Msg: `input override "attention_mask": 3 values for shape [2 8] (16 elements): give one value to fill it, or one per element`}}
	if diff := cmp.Diff(want, problems); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}

// Suggest binds every open dim of a model nobody has described, one size per
// symbol (batch 1, else 8), and the suggestion binds.
func TestSuggest(t *testing.T) {
	ins := zooInputs(t, "tiny-clip") // input_ids, attention_mask [batch seq], pixel_values [image_batch 3 32 32]
	dims := Suggest(ins)
	want := map[string][]int64{"input_ids": {1, 8}, "attention_mask": {1, 8}, "pixel_values": {1, 3, 32, 32}}
	if diff := cmp.Diff(want, dims); diff != "" {
		t.Errorf("Suggest (-want +got):\n%s", diff)
	}
	overrides := map[string]Override{}
	for name, d := range dims {
		overrides[name] = Override{Dims: d}
	}
	if _, problems := Bind(ins, overrides); len(problems) > 0 {
		t.Errorf("the suggestion does not bind: %v", problems)
	}
	// Anonymous dims (no symbol) and fixed ones.
	anon := []Input{{Name: "x", Dims: []int64{-1, 3, -1}, Params: []string{"", "", ""}}}
	if got := fmt.Sprint(Suggest(anon)); got != "map[x:[1 3 8]]" {
		t.Errorf("anonymous: %s", got)
	}
}

// Dims taken from a file are named by the file in messages: the user wrote a file,
// not dims.
func TestBindNamesTheFile(t *testing.T) {
	ins := zooInputs(t, "tiny-clip") // input_ids, attention_mask [batch seq], pixel_values [image_batch 3 32 32]
	pixels := Override{Dims: []int64{1, 3, 32, 32}}
	_, problems := Bind(ins, map[string]Override{
		"input_ids":      {Dims: []int64{2, 6}, From: "ids.npy"},
		"attention_mask": {Dims: []int64{2, 8}},
		"pixel_values":   pixels,
	})
	want := []Problem{{Input: "attention_mask", Override: true,
		Msg: `input override "attention_mask": dim 1 ("seq") is 8, but ids.npy (the file of input "input_ids") sets "seq" to 6: make them agree`}}
	if diff := cmp.Diff(want, problems); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	_, problems = Bind(ins, map[string]Override{
		"input_ids":      {Dims: []int64{2, 8}},
		"attention_mask": {Dims: []int64{2, 6}, From: "mask.npy"},
		"pixel_values":   {Dims: []int64{1, 32, 32, 3}, From: "cat.png"},
	})
	want = []Problem{
		{Input: "attention_mask", Override: true,
			Msg: `input "attention_mask": mask.npy has shape [2 6], so dim 1 ("seq") is 6, but the dims of "input_ids" set "seq" to 8: make them agree`},
		{Input: "pixel_values", Override: true,
			Msg: `input "pixel_values": cat.png has shape [1 32 32 3], the model fixes dim 1 at 3 (shape [image_batch 3 32 32]): give a file of that shape`},
	}
	if diff := cmp.Diff(want, problems); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	_, problems = Bind(ins, map[string]Override{"input_ids": {Dims: []int64{2, 8, 1}, From: "ids.npy"}, "attention_mask": {Dims: []int64{2, 8}}, "pixel_values": pixels})
	want = []Problem{{Input: "input_ids", Override: true,
		Msg: `input "input_ids": ids.npy has shape [2 8 1] (rank 3), the model's input has rank 2 (shape [batch seq]): give a file of rank 2`}}
	if diff := cmp.Diff(want, problems); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}
