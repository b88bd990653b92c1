package runtime

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"testing"
	"time"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/hwtest/hwtest/internal/testenv"
	"github.com/hwtest/hwtest/layout"
	"github.com/hwtest/hwtest/result"
	"github.com/hwtest/hwtest/zoo"
)

// ortReady says why ONNX Runtime tests cannot run, "" when they can.
var ortReady string

func TestMain(m *testing.M) {
	if _, err := Init(); err != nil {
		ortReady = err.Error()
	}
	os.Exit(m.Run())
}

func requireORT(t *testing.T) {
	t.Helper()
	testenv.Need(t, "ONNX Runtime (make setup)", ortReady)
}

func TestCheckSharedLibrary(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "libonnxruntime.so.1")
	err := checkSharedLibrary(missing)
	if err == nil || !strings.Contains(err.Error(), "not found") || !strings.Contains(err.Error(), "make setup") {
		t.Errorf("missing library: %v", err)
	}
	text := filepath.Join(dir, "notalib.so")
	if err := os.WriteFile(text, []byte("#!/bin/sh\necho hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err = checkSharedLibrary(text)
	if err == nil || !strings.Contains(err.Error(), "is not a shared library") || !strings.Contains(err.Error(), LibraryEnv) {
		t.Errorf("non-library file: %v", err)
	}
	empty := filepath.Join(dir, "empty.so")
	os.WriteFile(empty, nil, 0o644)
	if err := checkSharedLibrary(empty); err == nil {
		t.Errorf("empty file accepted")
	}
	if lib, err := LibraryPath(); err == nil && fileExists(lib) {
		if err := checkSharedLibrary(lib); err != nil {
			t.Errorf("the real library is rejected: %v", err)
		}
	}
}

// The message onnxruntime_go gives for ONNX Runtime 1.20.1 (C API 20), seen here
// with npm onnxruntime-node@1.20.1's library.
func TestInitErrorNamesOldLibrary(t *testing.T) {
	err := initError("/x/libonnxruntime.so.1", errors.New("Platform-specific initialization failed: Error setting ORT API base: 2"))
	if !strings.Contains(err.Error(), "is too old") || !strings.Contains(err.Error(), ">= 1.24") || !strings.Contains(err.Error(), "make setup") {
		t.Errorf("old library: %v", err)
	}
	err = initError("/x/lib.so", errors.New("something else"))
	if strings.Contains(err.Error(), "too old") || !strings.Contains(err.Error(), "make setup") {
		t.Errorf("other failure: %v", err)
	}
}

// tokens binds a text model's token inputs ([batch seq]) through input_ids.
func tokens(batch, seq int64) map[string]Input {
	return map[string]Input{"input_ids": {Dims: []int64{batch, seq}}}
}

func info(name string, typ ort.TensorElementDataType, dims ...int64) InputSpec {
	return InputSpec{InputOutputInfo: ort.InputOutputInfo{Name: name, DataType: typ, Dimensions: ort.NewShape(dims...)}}
}

// Symbols bind across inputs: the mask follows the ids' overridden dims.
func TestSynthesizeInputsBindsSymbolicDims(t *testing.T) {
	ids := info("input_ids", ort.TensorElementDataTypeInt64, -1, -1)
	ids.Params = []string{"batch", "seq"}
	mask := info("attention_mask", ort.TensorElementDataTypeInt64, -1, -1)
	mask.Params = []string{"batch", "seq"}
	dec := info("decoder_input_ids", ort.TensorElementDataTypeInt64, -1, -1)
	dec.Params = []string{"batch", "dec_seq"}
	in, err := SynthesizeInputs("m", []InputSpec{mask, ids, dec}, map[string]Input{"input_ids": {Dims: []int64{3, 16}}, "decoder_input_ids": {Dims: []int64{3, 4}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(in[0].Shape, in[1].Shape, in[2].Shape); got != "[3 16] [3 16] [3 4]" {
		t.Errorf("shapes = %s", got)
	}
	// A symbol nothing binds is an error naming the fix, not a silent 8.
	_, err = SynthesizeInputs("m", []InputSpec{mask, ids, dec}, map[string]Input{"input_ids": {Dims: []int64{3, 16}}})
	if want := `input "decoder_input_ids" (shape [batch dec_seq]): axis 1 ("dec_seq") is bound by no dims: add dims: [3, 8] to inputs.decoder_input_ids`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("open symbol: %v\nwant it to contain %s", err, want)
	}
	_, err = SynthesizeInputs("m", []InputSpec{mask, ids}, map[string]Input{"input_ids": {Dims: []int64{3, 16}}, "attention_mask": {Dims: []int64{3, 12}}})
	if err == nil || !strings.Contains(err.Error(), `("seq") is`) {
		t.Errorf("conflicting overrides: %v", err)
	}
}

func TestSynthesizeInputs(t *testing.T) {
	infos := []InputSpec{
		info("input", ort.TensorElementDataTypeFloat, -1, -1),
		info("ids", ort.TensorElementDataTypeInt64, -1, -1),
		info("sr", ort.TensorElementDataTypeInt64),
	}
	overrides := map[string]Input{
		"input": {Dims: []int64{2, 4}, Range: []float64{5, 6}},
		"ids":   {Dims: []int64{1, 8}},
		"sr":    {Value: []float64{16000}},
	}
	in, err := SynthesizeInputs("m", infos, overrides)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(in[0].Shape, in[1].Shape, in[2].Shape); got != "[2 4] [1 8] []" {
		t.Errorf("shapes = %s", got)
	}
	for _, x := range in[0].Data {
		if x < 5 || x >= 6 {
			t.Fatalf("value %g outside range [5, 6)", x)
		}
	}
	for _, x := range in[1].Data {
		if x != float64(int64(x)) || x < 1 || x >= 100 {
			t.Fatalf("token id %g: want an integer in [1, 100)", x)
		}
	}
	if in[2].Data[0] != 16000 {
		t.Errorf("sr = %v", in[2].Data)
	}
	again, _ := SynthesizeInputs("m", infos, overrides)
	if fmt.Sprint(again) != fmt.Sprint(in) {
		t.Errorf("same seed, different inputs")
	}
	other, _ := SynthesizeInputs("other-model", infos, overrides)
	if fmt.Sprint(other[1].Data) == fmt.Sprint(in[1].Data) {
		t.Errorf("different models got the same token ids")
	}
}

func TestSynthesizeInputsRejectsBadOverrides(t *testing.T) {
	infos := []InputSpec{
		info("input", ort.TensorElementDataTypeFloat, 1, -1),
		info("state", ort.TensorElementDataTypeFloat, 2, -1, 128),
	}
	for _, c := range []struct {
		name string
		ov   map[string]Input
		want string
	}{
		{"unknown input", map[string]Input{"audio": {Value: []float64{1}}}, `input override "audio": the model has no such input (its inputs: input, state)`},
		{"rank", map[string]Input{"input": {Dims: []int64{1, 2, 3}}}, `dims [1 2 3] have rank 3, the model's input has rank 2`},
		{"fixed dim", map[string]Input{"state": {Dims: []int64{2, 1, 64}}}, `dim 2 is 64, the model fixes it at 128`},
		{"value count", map[string]Input{"input": {Dims: []int64{1, 4}, Value: []float64{1, 2}}}, `input override "input": 2 values for shape [1 4] (4 elements)`},
		{"zero range", map[string]Input{"input": {Dims: []int64{1, 4}, Range: []float64{0, 0}}}, `range [0 0]: want [low, high] with low < high`},
		{"anonymous dim", map[string]Input{"input": {Dims: []int64{1, 4}}}, `input "state" (shape [2 ? 128]): axis 1 (anonymous) is bound by no dims: add dims: [2, 8, 128] to inputs.state`},
	} {
		_, err := SynthesizeInputs("m", infos, c.ov)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want it to contain %q", c.name, err, c.want)
		}
	}
}

func TestCompare(t *testing.T) {
	want := Tensor{Name: "y", Shape: []int64{3}, Data: []float64{1, 100, -2}}
	tol := Tolerance{RTol: 1e-3, ATol: 1e-4}
	d, err := Compare(Tensor{Name: "y", Shape: []int64{3}, Data: []float64{1.00005, 100.05, -2}}, want, tol)
	if err != nil || !d.Within() {
		t.Errorf("within tolerance: %v %v", d, err)
	}
	d, _ = Compare(Tensor{Name: "y", Shape: []int64{3}, Data: []float64{1, 100, -2.01}}, want, tol)
	if d.Within() || d.Index != 2 || d.Output != "y" {
		t.Errorf("outside tolerance: %v", d)
	}
	nan := Tensor{Name: "y", Shape: []int64{3}, Data: []float64{1, 100, nanValue()}}
	if d, _ := Compare(nan, want, tol); d.Within() {
		t.Errorf("NaN accepted: %v", d)
	}
	if _, err := Compare(Tensor{Name: "y", Shape: []int64{1, 3}, Data: want.Data}, want, tol); err == nil {
		t.Errorf("shape mismatch accepted")
	}
}

func nanValue() float64 { var z float64; return z / z }

func TestLatencyStats(t *testing.T) {
	var s []time.Duration
	for i := 1; i <= 100; i++ {
		s = append(s, time.Duration(i)*time.Millisecond)
	}
	m := LatencyStats(s)
	if m.Runs != 100 || m.MinMS != 1 || m.MaxMS != 100 || m.MeanMS != 50.5 || m.P50MS != 50.5 || m.P99MS < 99 || m.P99MS > 100 {
		t.Errorf("stats = %+v", m)
	}
	if m.StdevMS < 29 || m.StdevMS > 29.1 || m.CoV <= 0 {
		t.Errorf("stdev %g cov %g", m.StdevMS, m.CoV)
	}
}

// fakeClock makes WarmUp and Measure see runs of the given latencies, in order
// (the last one repeating), taking exactly that long.
func fakeClock(t *testing.T, latencies ...time.Duration) (run func() (time.Duration, error), runs *int) {
	t.Helper()
	at := time.Unix(0, 0)
	now = func() time.Time { return at }
	t.Cleanup(func() { now = time.Now })
	n := 0
	return func() (time.Duration, error) {
		d := latencies[min(n, len(latencies)-1)]
		n++
		at = at.Add(d)
		return d, nil
	}, &n
}

func TestBudget(t *testing.T) {
	b := Budget{WindowRuns: 3, WindowTime: 50 * time.Millisecond, SettleTolerance: 0.03, WarmupMax: time.Second, MinRuns: 10, MinTime: time.Second, MaxRuns: 5000}
	ms := time.Millisecond

	// Steady from the start: two windows (50 ms and 100 ms of 10 ms runs) and done.
	run, _ := fakeClock(t, 10*ms)
	w, err := b.WarmUp(run)
	if err != nil || !w.Settled || w.Runs != 15 || w.Time != 150*ms || w.Drift != 0 {
		t.Errorf("steady: %+v %v", w, err)
	}
	// Slow first runs (a cold cache): warm-up goes on until two windows agree.
	run, _ = fakeClock(t, 40*ms, 30*ms, 20*ms, 12*ms, 10*ms, 10*ms, 10*ms, 10*ms, 10*ms, 10*ms, 10*ms, 10*ms, 10*ms, 10*ms)
	w, _ = b.WarmUp(run)
	if !w.Settled || w.Runs != 33 || w.Drift > 0.03 { // windows 40,30,20 · 12,10×9 · 10×20
		t.Errorf("cold start: %+v", w)
	}
	// Never settles: every run 0.15 ms faster than the last, as onnxruntime-web's
	// kernels were while V8 tiered them up. Windows of one length (3 runs, 2% apart)
	// would call that settled; doubling windows see it and stop at WarmupMax.
	var drifting []time.Duration
	for i := range 200 {
		drifting = append(drifting, 20*ms-time.Duration(i)*150*time.Microsecond)
	}
	run, _ = fakeClock(t, drifting...)
	w, _ = b.WarmUp(run)
	if w.Settled || w.Time < time.Second || w.Time > time.Second+20*ms || w.Drift < 0.1 {
		t.Errorf("drifting: %+v", w)
	}
	// A run slower than the bound: one window, cut short, not settled.
	run, n := fakeClock(t, 2*time.Second)
	w, _ = b.WarmUp(run)
	if w.Settled || *n != 1 || w.Runs != 1 {
		t.Errorf("slow: %+v after %d runs", w, *n)
	}
	// Measuring needs 10 runs and 1 s, or MaxRuns.
	for _, c := range []struct {
		latency time.Duration
		runs    int
	}{{time.Millisecond, 1000}, {300 * ms, 10}, {100 * time.Microsecond, 5000}} {
		run, _ = fakeClock(t, c.latency)
		s, err := b.Measure(run)
		if err != nil || len(s) != c.runs {
			t.Errorf("%v runs: %d samples, want %d (%v)", c.latency, len(s), c.runs, err)
		}
	}
	// A failing run ends either with its number.
	fail := func() (time.Duration, error) { return 0, errors.New("boom") }
	if _, err := b.WarmUp(fail); err == nil || err.Error() != "warm-up run 1: boom" {
		t.Errorf("warm-up: %v", err)
	}
	if _, err := b.Measure(fail); err == nil || err.Error() != "measured run 1: boom" {
		t.Errorf("measure: %v", err)
	}
}

func TestPeakRSS(t *testing.T) {
	// Free pages the tests before this one left resident would take part of the
	// 64 MiB without the RSS growing (seen: 59.3 MiB): give them back first, as a
	// cell does before its peak window.
	releaseFreeMemory()
	testenv.Need(t, "a writable /proc/self/clear_refs (peak memory is measured with it)", ResetPeakRSS())
	before, err := PeakRSS()
	if err != nil {
		t.Fatal(err)
	}
	big := make([]byte, 64<<20)
	for i := range big {
		big[i] = 1
	}
	after, _ := PeakRSS()
	if after-before < 60<<20 {
		t.Errorf("peak RSS grew by %d bytes after touching 64 MiB", after-before)
	}
	_ = big[len(big)-1]
}

// A peak window starts at the current RSS even after a higher earlier peak, and
// its model-attributable peak is what was touched after it: peak − base, computed
// in native alone. A browser cell has none, and says why.
func TestPeakWindow(t *testing.T) {
	testenv.Need(t, "a writable /proc/self/clear_refs (peak memory is measured with it)", ResetPeakRSS())
	earlier := make([]byte, 256<<20)
	for i := range earlier {
		earlier[i] = 1
	}
	earlier = nil
	// Collected but kept by Go's heap, as a closed session's memory is by malloc:
	// the window gives it back, so the base does not count it and what is
	// touched next is seen growing the RSS instead of silently reusing it.
	goruntime.GC()
	w := openPeakWindow()
	if w.err != nil {
		t.Fatalf("the window did not open: %v", w.err)
	}
	var idle result.Metrics
	w.native(&idle)
	if idle.ModelPeakBytes < 0 || idle.ModelPeakBytes > 16<<20 || idle.ModelPeakBytes != idle.PeakRSSBytes-idle.BaseRSSBytes {
		t.Errorf("nothing touched after the window: model peak %d (process peak %d, base %d), want 0–16 MiB: the earlier 256 MiB is not the window's",
			idle.ModelPeakBytes, idle.PeakRSSBytes, idle.BaseRSSBytes)
	}
	big := make([]byte, 64<<20)
	for i := range big {
		big[i] = 1
	}
	var m result.Metrics
	w.native(&m)
	if m.ModelPeakBytes < 60<<20 || m.ModelPeakBytes > 100<<20 || m.ModelPeakScope != nativeModelScope {
		t.Errorf("64 MiB touched after the window: model peak %d (%q)", m.ModelPeakBytes, m.ModelPeakScope)
	}
	_ = big[len(big)-1]

	var b result.Metrics
	browserMemory(&b, 500<<20)
	if b.PeakRSSBytes != 500<<20 || b.ModelPeakBytes != 0 || !strings.Contains(b.ModelPeakScope, "not measured") {
		t.Errorf("browser: %+v", b)
	}
	// A window that could not reset gives no model peak and says why.
	var broken result.Metrics
	peakWindow{base: 1, err: errors.New("clear_refs: permission denied")}.native(&broken)
	if broken.ModelPeakBytes != 0 || !strings.Contains(broken.ModelPeakScope, "permission denied") || !strings.Contains(broken.PeakRSSScope, "whole life") {
		t.Errorf("no reset: %+v", broken)
	}
}

// A model file's inputs and outputs are read once per file, and again when the
// file changes.
func TestModelIOCache(t *testing.T) {
	requireORT(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "m.onnx")
	for _, name := range []string{"tiny-gpt2", "tiny-bert"} {
		b, _, err := zoo.Build(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		a, err := modelIOOf(path)
		if err != nil {
			t.Fatal(err)
		}
		again, _ := modelIOOf(path)
		if &a.inputs[0] != &again.inputs[0] {
			t.Errorf("%s: read twice", name)
		}
		var names []string
		for _, in := range a.inputs {
			names = append(names, in.Name)
		}
		want := map[string]string{"tiny-gpt2": "input_ids", "tiny-bert": "input_ids attention_mask"}[name]
		if strings.Join(names, " ") != want {
			t.Errorf("%s: inputs %v, want %s: the file changed and the cache did not see it", name, names, want)
		}
	}
}

// writeZoo builds a zoo model into a temp dir.
func writeZoo(t *testing.T, name string) string {
	t.Helper()
	b, _, err := zoo.Build(name)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), name+".onnx")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestBadModelFiles(t *testing.T) {
	requireORT(t)
	good := writeZoo(t, "tiny-bert")
	data, _ := os.ReadFile(good)
	dir := t.TempDir()
	truncated := filepath.Join(dir, "truncated.onnx")
	os.WriteFile(truncated, data[:len(data)/2], 0o644)
	garbage := filepath.Join(dir, "garbage.onnx")
	os.WriteFile(garbage, []byte("this is not an ONNX model\n"), 0o644)
	for _, p := range []string{truncated, garbage, filepath.Join(dir, "missing.onnx")} {
		_, err := CPUReference(Model{ID: filepath.Base(p)}, ResolvedModel{Path: p, SHA256: filepath.Base(p)})
		if err == nil || !strings.Contains(err.Error(), "is not a loadable ONNX model") {
			t.Errorf("%s: %v", filepath.Base(p), err)
		}
	}
}

func TestResolveChecksSHA256(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "go.mod"), []byte("module x\n"), 0o644)
	os.WriteFile(filepath.Join(root, "hardware.yaml"), nil, 0o644)
	os.WriteFile(filepath.Join(root, "m.onnx"), []byte("truncated"), 0o644)
	t.Setenv(RootEnv, root)
	_, err := Resolve(Model{ID: "m", Source: "file:m.onnx", SHA256: strings.Repeat("0", 64)})
	if err == nil || !strings.Contains(err.Error(), "the file changed since models.yaml pinned it") {
		t.Errorf("wrong hash: %v", err)
	}
	_, err = Resolve(Model{ID: "m", Source: "file:absent.onnx"})
	if err == nil || !strings.Contains(err.Error(), "absent.onnx is missing: nothing fetches a file: source") || strings.Contains(err.Error(), "make setup") {
		t.Errorf("missing file: %v", err)
	}
	_, err = Resolve(Model{ID: "m", Source: "hf:org/repo/model.onnx@main", Fixture: "zoo:tiny-bert"})
	if err == nil || !strings.Contains(err.Error(), "neither") {
		t.Errorf("missing fixture: %v", err)
	}
}

func TestUnavailableTargetsSayWhy(t *testing.T) {
	requireORT(t)
	if r := Unavailable(Target{ID: "cpu", Provider: CPUProvider}); r != "" {
		t.Errorf("cpu unavailable: %s", r)
	}
	r := Unavailable(Target{ID: "qnn-test", Provider: "QNNExecutionProvider"})
	if !strings.Contains(r, "QNN") || !strings.Contains(r, "not supported in this build") {
		t.Errorf("qnn: %q", r)
	}
	if r := Unavailable(Target{ID: "webgl-test", Runner: "browser", Provider: "webgl"}); !strings.Contains(r, `unknown browser provider "webgl"`) {
		t.Errorf("browser: %q", r)
	}
}

// A hung inference is terminated: with a timeout far below one run of the model,
// Run returns ErrRunTimeout instead of blocking.
func TestRunTimeout(t *testing.T) {
	requireORT(t)
	p := writeZoo(t, "tiny-bert")
	s, err := OpenSession(p, Target{Provider: CPUProvider}, false)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	in, err := SynthesizeInputs("t", s.Inputs(), map[string]Input{
		"input_ids":      {Dims: []int64{64, 512}, Range: []float64{1, 500}},
		"attention_mask": {Dims: []int64{64, 512}, Range: []float64{1, 2}},
	})
	if err != nil {
		t.Fatal(err)
	}
	s.timeout = time.Millisecond
	if _, err := s.Run(in); !errors.Is(err, ErrRunTimeout) {
		t.Errorf("want ErrRunTimeout, got %v", err)
	}
}

// A timeout that fires after a run ended must not poison the next runs of the same
// bound inputs (the terminate flag lives in the reused RunOptions).
func TestBoundRunsAfterALateTimeout(t *testing.T) {
	requireORT(t)
	p := writeZoo(t, "tiny-bert")
	s, err := OpenSession(p, Target{Provider: CPUProvider}, false)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	in, err := SynthesizeInputs("t", s.Inputs(), tokens(1, 8))
	if err != nil {
		t.Fatal(err)
	}
	tr, err := s.Bind(in)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	b := tr.(*Bound)
	b.opts.Terminate() // as a timer firing just after the last run would
	if _, err := b.Run(); err != nil {
		t.Errorf("run after a late timeout: %v", err)
	}
}

func TestRunTimeoutRejectsNonsense(t *testing.T) {
	t.Setenv("HWTEST_RUN_TIMEOUT", "banana")
	if _, err := RunTimeout(); err == nil || !strings.Contains(err.Error(), "HWTEST_RUN_TIMEOUT") {
		t.Errorf("banana: %v", err)
	}
	t.Setenv("HWTEST_RUN_TIMEOUT", "90s")
	if d, err := RunTimeout(); err != nil || d != 90*time.Second {
		t.Errorf("90s: %v %v", d, err)
	}
}

// HWTEST_MEASURE_TIME=banana was once silently the default.
func TestMeasureTimeRejectsNonsense(t *testing.T) {
	for _, bad := range []string{"banana", "0s", "-1s", "10"} {
		t.Setenv("HWTEST_MEASURE_TIME", bad)
		if _, err := MeasureTime(); err == nil || !strings.Contains(err.Error(), `HWTEST_MEASURE_TIME="`+bad+`"`) || !strings.Contains(err.Error(), "such as") {
			t.Errorf("%s: %v", bad, err)
		}
		if _, err := DefaultBudget(); err == nil {
			t.Errorf("%s: DefaultBudget took it", bad)
		}
	}
	t.Setenv("HWTEST_MEASURE_TIME", "250ms")
	if b, err := DefaultBudget(); err != nil || b.MinTime != 250*time.Millisecond || b.WarmupMax != 750*time.Millisecond {
		t.Errorf("250ms: %+v %v", b, err)
	}
	t.Setenv("HWTEST_MEASURE_TIME", "")
	if d, err := MeasureTime(); err != nil || d != time.Second {
		t.Errorf("unset: %v %v", d, err)
	}
}

// On a fixture, only overrides marked real_only may name inputs the fixture lacks:
// a typo still fails, instead of passing silently.
func TestFixtureOverrides(t *testing.T) {
	requireORT(t)
	p := writeZoo(t, "tiny-gpt2")
	cpu := Target{ID: "cpu", Provider: CPUProvider}
	m := Model{ID: "gpt2", Fixture: "zoo:tiny-gpt2", Inputs: map[string]Input{
		"input_ids":      {Dims: []int64{1, 8}},
		"token_type_ids": {Value: []float64{0}, RealOnly: true},
	}}
	if _, done, err := OpenRun(m, p, p, cpu); err != nil {
		t.Errorf("real_only override on a fixture: %v", err)
	} else {
		done()
	}
	m.Inputs["input_idz"] = Input{Dims: []int64{1, 4}}
	if _, _, err := OpenRun(m, p, p, cpu); err == nil || !strings.Contains(err.Error(), `input override "input_idz": the model has no such input`) {
		t.Errorf("typo'd override on a fixture: %v", err)
	}
}

// Initialising ONNX Runtime leaves nothing in /tmp: its Linux build's telemetry SDK
// creates /tmp/mat-debug-<pid>.log for every process (100 of them were left by one
// session's runs).
func TestInitLeavesNoFileInTmp(t *testing.T) {
	requireORT(t)
	if _, err := os.Stat(layout.ORTDebugLog()); err == nil {
		t.Errorf("%s is left behind", layout.ORTDebugLog())
	}
}
