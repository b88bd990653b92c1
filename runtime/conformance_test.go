package runtime

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hwtest/hwtest/conformance"
	"github.com/hwtest/hwtest/internal/testenv"
	"github.com/hwtest/hwtest/onnx"
	"github.com/hwtest/hwtest/result"
)

var cpuTarget = Target{ID: "cpu", Provider: CPUProvider}

func needCases(t *testing.T) map[string]conformance.Case {
	t.Helper()
	requireORT(t)
	cases, err := nodeCases()
	if err != nil {
		testenv.Need(t, "ONNX's test cases (make setup)", err.Error())
	}
	return cases
}

// Every one of the 932 node cases on the CPU, classified as ONNX Runtime 1.30
// really behaves: the named cases pin each status and each conversion path, the
// totals keep the rest in a sane band.
func TestConformanceAllCasesOnCPU(t *testing.T) {
	cases := needCases(t)
	start := time.Now()
	reports := map[string]result.OpCaseReport{}
	counts := map[string]int{}
	for name, c := range cases {
		r := RunCase(cpuTarget, c)
		reports[name] = r
		counts[r.Status]++
		if _, err := json.Marshal(r); err != nil {
			t.Errorf("%s: the report cannot be written as JSON: %v", name, err)
		}
		if r.Status == result.CaseError {
			t.Errorf("hwtest failed a case itself: %s", CaseLine(r))
		}
	}
	took := time.Since(start)
	t.Logf("%d cases on cpu in %v: %v", len(cases), took.Round(time.Millisecond), counts)

	for name, want := range map[string]string{
		"test_add":                        result.CasePass,
		"test_constant":                   result.CasePass, // no inputs
		"test_cast_FLOAT_to_FLOAT16":      result.CasePass, // a float16 output
		"test_cast_FLOAT16_to_FLOAT":      result.CasePass, // a float16 input
		"test_cast_BFLOAT16_to_FLOAT":     result.CasePass, // bfloat16 data stored as UINT16
		"test_cast_STRING_to_FLOAT":       result.CasePass, // a string input
		"test_size_example":               result.CasePass, // an int64 scalar output
		"test_nllloss_NCd1":               result.CasePass, // a float scalar output
		"test_max_uint32":                 result.CasePass,
		"test_bitshift_right_uint64":      result.CasePass,
		"test_bernoulli":                  result.CaseMismatch, // random by design
		"test_bitshift_right_uint16":      result.CaseNotSupported,
		"test_identity_sequence":          result.CaseSkipped,
		"test_optional_has_element":       result.CaseSkipped,
		"test_castlike_BFLOAT16_to_FLOAT": result.CaseSkipped, // its data disagrees with its graph
	} {
		if r := reports[name]; r.Status != want {
			t.Errorf("%s: %s, want %s", name, CaseLine(r), want)
		}
	}
	add := reports["test_add"]
	if add.Op != "Add" || add.Opset == 0 || add.Target != "cpu" || add.Ms <= 0 || add.Worst == nil || !add.Worst.Within() {
		t.Errorf("test_add report: %+v", add)
	}
	if r := reports["test_bernoulli"]; r.Worst == nil || r.Worst.Within() {
		t.Errorf("a mismatch names its worst element outside the tolerance: %+v", r)
	}
	if r := reports["test_bitshift_right_uint16"]; !strings.Contains(r.Error, "Could not find an implementation for BitShift(11)") {
		t.Errorf("not-supported carries ONNX Runtime's words: %q", r.Error)
	}
	if r := reports["test_identity_sequence"]; !strings.Contains(r.Error, "sequence") {
		t.Errorf("skipped says why: %q", r.Error)
	}
	if counts[result.CasePass] < 840 || counts[result.CaseSkipped] > 30 || counts[result.CaseMismatch] > 40 {
		t.Errorf("totals out of band: %v", counts)
	}
	if took > 60*time.Second {
		t.Errorf("all cases took %v, the target is under 60 s", took)
	}
}

// A wrong expected value or shape is caught: the comparison is against the
// case's output_0.pb, element by element.
func TestConformanceCatchesWrongOutputs(t *testing.T) {
	cases := needCases(t)
	c := copyCase(t, cases["test_add"])
	want, err := onnx.ReadTensorFile(c.Output(0))
	if err != nil {
		t.Fatal(err)
	}
	xs, _ := want.Float64s()
	nudged := *want
	nudged.Raw = append([]byte{}, want.Raw...)
	bits := onnx.FloatTensor([]int64{1}, []float32{float32(xs[7] + 0.01)}).Raw
	copy(nudged.Raw[7*4:], bits)
	writeTensor(t, c.Output(0), &nudged)
	r := RunCase(cpuTarget, c)
	if r.Status != result.CaseMismatch || r.Worst == nil || r.Worst.Index != 7 || r.Worst.Output != "sum" {
		t.Errorf("nudged element 7: %s (%+v)", CaseLine(r), r.Worst)
	}

	flat := *want
	flat.Dims = []int64{int64(len(xs))}
	writeTensor(t, c.Output(0), &flat)
	if r := RunCase(cpuTarget, c); r.Status != result.CaseMismatch || !strings.Contains(r.Error, "ONNX expects [60]") {
		t.Errorf("flattened shape: %s", CaseLine(r))
	}

	os.WriteFile(c.Input(1), []byte{0xff, 0xff}, 0o644)
	if r := RunCase(cpuTarget, c); r.Status != result.CaseError || !strings.Contains(r.Error, "input_1.pb") {
		t.Errorf("unreadable input: %s", CaseLine(r))
	}
}

func copyCase(t *testing.T, c conformance.Case) conformance.Case {
	t.Helper()
	dir := filepath.Join(t.TempDir(), c.Name)
	if err := os.CopyFS(dir, os.DirFS(c.Dir)); err != nil {
		t.Fatal(err)
	}
	c.Dir = dir
	return c
}

func writeTensor(t *testing.T, path string, pt *onnx.Tensor) {
	t.Helper()
	if err := os.WriteFile(path, pt.Marshal(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestCaseLine(t *testing.T) {
	r := result.OpCaseReport{Case: "test_x", Target: "cpu", Status: result.CaseMismatch,
		Worst: &result.Deviation{Output: "y", Index: 3, Got: 1.5, Want: 1.25, AbsErr: 0.25, Allowed: 0.00125}}
	if got, want := CaseLine(r), `test_x on cpu: mismatch: output "y"[3] = 1.5, ONNX expects 1.25 (|err| 0.25 > 0.00125)`; got != want {
		t.Errorf("%s\nwant %s", got, want)
	}
	r = result.OpCaseReport{Case: "test_x", Target: "cpu", Status: result.CaseNotSupported, Error: "no kernel\nfor X"}
	if got := CaseLine(r); got != "test_x on cpu: not-supported: no kernel for X" {
		t.Errorf("one line: %q", got)
	}
}

// A browser target runs an operator's cases in one batch in one page, with the
// same reading and comparison as native cases; the page stays for the next batch.
func TestConformanceBrowserBatch(t *testing.T) {
	cases := needCases(t)
	tg := Target{ID: "wasm", Runner: "browser", Provider: "wasm", Bundle: "ort.min.js"}
	testenv.Need(t, "wasm in Chromium (make setup)", Unavailable(tg))
	defer Shutdown()
	nudged := copyCase(t, cases["test_add"])
	nudged.Name = "test_add_nudged"
	want, err := onnx.ReadTensorFile(nudged.Output(0))
	if err != nil {
		t.Fatal(err)
	}
	xs, _ := want.Float64s()
	copy(want.Raw[7*4:], onnx.FloatTensor([]int64{1}, []float32{float32(xs[7] + 0.01)}).Raw)
	writeTensor(t, nudged.Output(0), want)

	wants := map[string]string{
		"test_add":                   result.CasePass,
		"test_constant":              result.CasePass,
		"test_size_example":          result.CasePass, // a scalar output
		"test_cast_FLOAT_to_FLOAT16": result.CasePass,
		"test_cast_STRING_to_FLOAT":  result.CasePass,
		"test_bernoulli":             result.CaseMismatch,
		"test_bitshift_right_uint16": result.CaseNotSupported,
		"test_identity_sequence":     result.CaseSkipped,
		"test_add_nudged":            result.CaseMismatch,
	}
	var batch []conformance.Case
	for name := range wants {
		c, ok := cases[name]
		if name == nudged.Name {
			c, ok = nudged, true
		}
		if !ok {
			t.Fatalf("no case %s", name)
		}
		batch = append(batch, c)
	}
	start := time.Now()
	reports := RunBrowserCases(tg, batch)
	t.Logf("%d cases on wasm in %v", len(batch), time.Since(start).Round(time.Millisecond))
	for _, r := range reports {
		if r.Status != wants[r.Case] {
			t.Errorf("%s, want %s", CaseLine(r), wants[r.Case])
		}
		if r.Status == result.CasePass && (r.Device == "" || r.Ms <= 0) {
			t.Errorf("%s: no device or time: %+v", r.Case, r)
		}
		if r.Case == "test_add_nudged" && (r.Worst == nil || r.Worst.Index != 7) {
			t.Errorf("the nudged element: %+v", r.Worst)
		}
		if r.Case == "test_bitshift_right_uint16" && !strings.Contains(r.Error, "Could not find an implementation for BitShift(11)") {
			t.Errorf("not-supported carries onnxruntime-web's words: %q", r.Error)
		}
	}
	casePages.Lock()
	pages := len(casePages.m)
	casePages.Unlock()
	if pages != 1 {
		t.Errorf("%d case pages open after a batch, want the one kept for the next", pages)
	}
}
