package runtime

import (
	"strings"
	"testing"

	"github.com/hwtest/hwtest/internal/testenv"
	ort "github.com/yalue/onnxruntime_go"
)

// A run ONNX Runtime refuses on shapes says what hwtest fed it: the mask of a
// real (zoo) BERT shorter than its token ids is accepted at the inputs, whose
// dims are symbolic, and fails deep inside the attention, naming a node only.
func TestRunErrorsStateTheShapesFed(t *testing.T) {
	requireORT(t)
	s, err := OpenSession(writeZoo(t, "tiny-bert"), Target{ID: "cpu", Provider: CPUProvider}, false)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ids := Tensor{Name: "input_ids", Type: ort.TensorElementDataTypeInt64, Shape: []int64{2, 8}, Data: make([]float64, 16)}
	mask := Tensor{Name: "attention_mask", Type: ort.TensorElementDataTypeInt64, Shape: []int64{2, 4}, Data: make([]float64, 8)}
	for i := range ids.Data {
		ids.Data[i] = 1
	}
	const fed = "; fed input_ids int64 [2 8], attention_mask int64 [2 4]"
	if _, err := s.Run([]Tensor{ids, mask}); err == nil || !strings.HasSuffix(err.Error(), fed) {
		t.Errorf("Run: got %v\nwant it to end with %q", err, fed)
	}
	b, err := s.Bind([]Tensor{ids, mask})
	if err != nil {
		t.Fatal(err)
	}
	defer b.(*Bound).Close()
	if _, err := b.Run(); err == nil || !strings.HasSuffix(err.Error(), fed) {
		t.Errorf("Bound.Run: got %v\nwant it to end with %q", err, fed)
	}
}

// The same in onnxruntime-web: the page's error, then the shapes fed.
func TestBrowserRunErrorsStateTheShapesFed(t *testing.T) {
	tg := Target{ID: "wasm", Runner: "browser", Provider: "wasm", Bundle: "ort.min.js"}
	testenv.Need(t, "wasm in Chromium (make setup)", Unavailable(tg))
	defer Shutdown()
	bs, err := openBrowserSession(writeZoo(t, "tiny-bert"), tg)
	if err != nil {
		t.Fatal(err)
	}
	defer bs.Close()
	ids := Tensor{Name: "input_ids", Type: ort.TensorElementDataTypeInt64, Shape: []int64{2, 8}, Data: make([]float64, 16)}
	mask := Tensor{Name: "attention_mask", Type: ort.TensorElementDataTypeInt64, Shape: []int64{2, 4}, Data: make([]float64, 8)}
	const fed = "; fed input_ids int64 [2 8], attention_mask int64 [2 4]"
	if _, err := bs.Run([]Tensor{ids, mask}); err == nil || !strings.HasSuffix(err.Error(), fed) {
		t.Errorf("Run: got %v\nwant it to end with %q", err, fed)
	}
	tr, err := bs.Bind([]Tensor{ids, mask})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	if _, err := tr.Run(); err == nil || !strings.HasSuffix(err.Error(), fed) {
		t.Errorf("timed run: got %v\nwant it to end with %q", err, fed)
	}
}
