package runtime

import (
	"encoding/json"
	"testing"

	ort "github.com/yalue/onnxruntime_go"
)

// The outputs of a real session, as the open check records them: the model's
// output names in order, ONNX type names, and the shapes the run returned.
func TestOutputsOfARun(t *testing.T) {
	requireORT(t)
	s, err := OpenSession(writeZoo(t, "tiny-mixtral"), Target{Provider: CPUProvider}, false)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	in, err := SynthesizeInputs("t", s.Inputs(), tokens(1, 8))
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Run(in)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(OutputsOf(got))
	want := `[{"name":"logits","dtype":"float32","shape":[1,8,1000]},{"name":"router_logits","dtype":"float32","shape":[2,1,8,4]}]`
	if string(b) != want {
		t.Errorf("outputs\n got %s\nwant %s", b, want)
	}
}

// Element types by their ONNX names; a scalar's shape is [], not null.
func TestOutputsOfTypes(t *testing.T) {
	got := []Tensor{
		{Name: "ids", Type: ort.TensorElementDataTypeInt64, Shape: []int64{2, 3}},
		{Name: "mask", Type: ort.TensorElementDataTypeBool, Shape: []int64{3}},
		{Name: "score", Type: ort.TensorElementDataTypeDouble},
	}
	b, _ := json.Marshal(OutputsOf(got))
	want := `[{"name":"ids","dtype":"int64","shape":[2,3]},{"name":"mask","dtype":"bool","shape":[3]},{"name":"score","dtype":"float64","shape":[]}]`
	if string(b) != want {
		t.Errorf("outputs\n got %s\nwant %s", b, want)
	}
}
