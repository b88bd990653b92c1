package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/hwtest/hwtest/history"
	"github.com/hwtest/hwtest/internal/testenv"
	"github.com/hwtest/hwtest/matrix"
	"github.com/hwtest/hwtest/result"
)

const testHardware = `targets:
  - id: cpu
    name: CPU
    runner: native
    provider: CPUExecutionProvider
    probe: none
    precision: fp32
    tolerance: {rtol: 1.0e-5, atol: 1.0e-6}
`

const testModels = `models:
  - id: vad
    family: audio
    task: voice-activity-detection
    source: zoo:tiny-whisper
    inputs: {input_features: {dims: [1, 16, 32]}, decoder_input_ids: {dims: [1, 4]}}
`

// newRoot makes a repository root with the given catalogs.
func newRoot(t *testing.T, models string) string {
	t.Helper()
	root := t.TempDir()
	write(t, filepath.Join(root, "go.mod"), "module github.com/hwtest/hwtest\n")
	write(t, filepath.Join(root, "hardware.yaml"), testHardware)
	write(t, filepath.Join(root, "models.yaml"), models)
	return root
}

func write(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func hwtest(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = Run(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestGenerateThenVerify(t *testing.T) {
	root := newRoot(t, testModels)
	if code, _, stderr := hwtest("verify", "--root", root); code != ExitOutOfDate {
		t.Fatalf("verify before generate: exit %d, want %d; %s", code, ExitOutOfDate, stderr)
	}
	code, stdout, stderr := hwtest("generate", "--root", root)
	if code != ExitOK || !strings.Contains(stdout, "created generated/audio/vad.go") {
		t.Fatalf("generate: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, _ = hwtest("verify", "--root", root)
	if code != ExitOK || !strings.Contains(stdout, "up to date") || !strings.Contains(stdout, "state-space") {
		t.Fatalf("verify after generate: exit %d\n%s", code, stdout)
	}
	// A second generate writes nothing.
	if _, stdout, _ := hwtest("generate", "--root", root); !strings.Contains(stdout, "0 changed") {
		t.Errorf("regenerate: %s", stdout)
	}

	// A catalog change makes verify report the file as changed, with a diff.
	write(t, filepath.Join(root, "models.yaml"), strings.Replace(testModels, "decoder_input_ids: {dims: [1, 4]}", "decoder_input_ids: {dims: [1, 6]}", 1))
	code, stdout, _ = hwtest("verify", "--root", root)
	if code != ExitOutOfDate || !strings.Contains(stdout, "changed: generated/audio/vad.go") || !strings.Contains(stdout, `+			"decoder_input_ids": {Dims: []int64{1, 6}},`) {
		t.Errorf("verify after catalog change: exit %d\n%s", code, stdout)
	}
	// A generated file no model produces is stale.
	hwtest("generate", "--root", root)
	stale := filepath.Join(root, "generated/audio/old.go")
	b, _ := os.ReadFile(filepath.Join(root, "generated/audio/vad.go"))
	write(t, stale, string(b))
	code, stdout, _ = hwtest("verify", "--root", root)
	if code != ExitOutOfDate || !strings.Contains(stdout, "stale: generated/audio/old.go") {
		t.Errorf("verify with a stale file: exit %d\n%s", code, stdout)
	}
	hwtest("generate", "--root", root)
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("generate left the stale file")
	}
}

func TestBadCatalogWritesNothing(t *testing.T) {
	root := newRoot(t, "models:\n  - id: vad\n    family: audoi\n    task: t\n    source: zoo:x\n")
	code, _, stderr := hwtest("generate", "--root", root)
	if code != ExitError || !strings.Contains(stderr, `models.yaml:3:13: model "vad": unknown family "audoi" (did you mean "audio"?)`) {
		t.Errorf("exit %d\n%s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(root, "generated")); !os.IsNotExist(err) {
		t.Errorf("generated/ was written")
	}
	root = newRoot(t, "models: [\n")
	code, _, stderr = hwtest("verify", "--root", root)
	if code != ExitError || !strings.Contains(stderr, "models.yaml:") {
		t.Errorf("malformed yaml: exit %d\n%s", code, stderr)
	}
}

// A catalog that does not fit its model file is refused by generate and verify,
// before anything is written, every problem at its line with the fix; a model
// whose file is not here is listed on stderr and generated all the same.
func TestGenerateChecksTheCatalogAgainstModelFiles(t *testing.T) {
	root := newRoot(t, testModels+`    outputs: {primary: logit}
  - id: vad2
    family: audio
    task: voice-activity-detection
    source: zoo:tiny-whisper
  - id: elsewhere
    family: audio
    task: voice-activity-detection
    source: file:elsewhere.onnx
`)
	want := `models.yaml:7:24: model "vad": outputs.primary: "logit": the model has no such output (did you mean "logits"?) (its outputs: logits, encoder_last_hidden_state): use one of them
models.yaml:8:5: model "vad2": input "input_features" (shape [batch 16 32]): axis 0 ("batch") is bound by no dims: add dims: [1, 16, 32] to inputs.input_features, or to an input that shares its symbols: decoder_input_ids ("batch")
models.yaml:8:5: model "vad2": input "decoder_input_ids" (shape [batch dec_seq]): axis 0 ("batch"), axis 1 ("dec_seq") are bound by no dims: add dims: [1, 8] to inputs.decoder_input_ids, or to an input that shares its symbols: input_features ("batch")
`
	notHere := `not checked: model "elsewhere": elsewhere.onnx is not on this machine (put the model there, or fix the path: it is relative to the folder of the catalog)`
	for _, verb := range []string{"generate", "verify"} {
		code, _, stderr := hwtest(verb, "--root", root)
		stderr = strings.ReplaceAll(stderr, filepath.Join(root, "models.yaml"), "models.yaml")
		if code != ExitError || !strings.Contains(stderr, want) || !strings.Contains(stderr, notHere) {
			t.Errorf("%s: exit %d, want %d\n%s\nwant it to contain\n%s%s", verb, code, ExitError, stderr, want, notHere)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "generated")); !os.IsNotExist(err) {
		t.Errorf("generated/ was written")
	}
	// Fixed, it generates; the model not here is still listed.
	write(t, filepath.Join(root, "models.yaml"), testModels+`  - id: elsewhere
    family: audio
    task: voice-activity-detection
    source: file:elsewhere.onnx
`)
	code, stdout, stderr := hwtest("generate", "--root", root)
	if code != ExitOK || !strings.Contains(stdout, "created generated/audio/elsewhere.go") || !strings.Contains(stderr, notHere) {
		t.Errorf("generate: exit %d\n%s%s", code, stdout, stderr)
	}
}

// The repository's own generated/ must match its catalogs (what CI's verify checks).
func TestRepositoryIsUpToDate(t *testing.T) {
	code, stdout, stderr := hwtest("verify", "--root", "../..", "--quiet")
	if code != ExitOK {
		t.Errorf("exit %d\n%s%s", code, stdout, stderr)
	}
}

// TestRunEndToEnd builds the audio suite and runs one real model through hwtest run:
// the CPU cell passes with measurements, an absent accelerator is unavailable with
// the probe's reason, and a broken ONNX Runtime library makes cells errors that say
// so instead of losing them.
func TestRunEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a suite")
	}
	_, err := os.Stat("../../.hwtest/lib/libonnxruntime.so.1")
	testenv.Need(t, "ONNX Runtime (make setup)", err)
	reports := t.TempDir()
	db := filepath.Join(t.TempDir(), "history.duckdb")
	t.Setenv("HWTEST_DB", db)
	t.Setenv("HWTEST_MEASURE_TIME", "200ms")
	t.Setenv("HWTEST_THREADS", "1")
	code, stdout, stderr := hwtest("run", "--root", "../..", "--no-generate", "--reports", reports,
		"--model", "silero-vad-v5", "--target", "cpu", "--target", "qnn")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	checkStored(t, db, filepath.Join(reports, "latest", "matrix.json"))
	m := readMatrix(t, filepath.Join(reports, "latest", "matrix.json"))
	cpu, qnn := m["silero-vad-v5/cpu"], m["silero-vad-v5/qnn"]
	if cpu.Status != "pass" || cpu.Metrics == nil || cpu.Metrics.P50MS <= 0 || cpu.Metrics.PeakRSSBytes <= 0 || cpu.Metrics.LoadMS <= 0 {
		t.Fatalf("cpu cell: %+v", cpu)
	}
	// silero runs in well under a millisecond: 200 ms is hundreds of runs, 10 blocks.
	if len(cpu.Metrics.BlockP50MS) != 10 || cpu.Provenance.Options["intra_op_num_threads"] != "1" {
		t.Errorf("cpu cell: blocks %v, options %v", cpu.Metrics.BlockP50MS, cpu.Provenance.Options)
	}
	// How it was measured: warm-up timed and bounded (3 × the measuring time), the timed
	// runs at least 200 ms, the threads and the governor named.
	mt, pv := cpu.Metrics, cpu.Provenance
	if mt.WarmupRuns < 6 || mt.WarmupMS <= 0 || mt.WarmupMS > 650 || mt.TimedMS < 200 || mt.BlockCoV <= 0 ||
		pv.IntraOpThreads != 1 || pv.InterOpThreads != 1 || pv.CPUGovernor == "" {
		t.Errorf("cpu cell's measurement: %+v, provenance %+v", mt, pv)
	}
	if !strings.Contains(stdout, "time: ") || !strings.Contains(stdout, "measuring ") || !strings.Contains(stdout, "build ") {
		t.Errorf("run printed no time breakdown:\n%s", stdout)
	}
	if got := fmt.Sprint(cpu.Outputs); got != "[{output float32 [1 1]} {stateN float32 [2 1 128]}]" {
		t.Errorf("cpu outputs: %s", got)
	}
	// The raw samples are in the suite's report, for the history, not in matrix.json.
	if b, _ := os.ReadFile(filepath.Join(reports, "latest", "matrix.json")); bytes.Contains(b, []byte("samples_ms")) {
		t.Errorf("matrix.json carries the raw samples")
	}
	suite, err := matrix.ReadReports(filepath.Join(reports, "latest", "ginkgo", "silero-vad-v5.json"))
	if err != nil {
		t.Fatal(err)
	}
	samples := -1
	for _, c := range matrix.FromReports(suite, nil, nil, nil).Cells {
		if c.Target == "cpu" {
			samples = len(c.SamplesMS)
		}
	}
	if samples != cpu.Metrics.Runs {
		t.Errorf("%d samples in the suite's report for %d runs", samples, cpu.Metrics.Runs)
	}
	if qnn.Status != "unavailable" || !strings.Contains(qnn.Reason, "QNNExecutionProvider execution provider is not supported in this build") {
		t.Errorf("qnn cell: %+v", qnn)
	}
	if _, ok := m["silero-vad-v5/cuda"]; ok {
		t.Errorf("cuda ran though --target did not ask for it")
	}

	notALib := filepath.Join(t.TempDir(), "libonnxruntime.so.1")
	write(t, notALib, "not a library\n")
	t.Setenv("ONNXRUNTIME_LIB", notALib)
	// Someone else's file at the history's path: it is left alone, the matrix is
	// still written, and the run says the history was not updated.
	foreign := filepath.Join(t.TempDir(), "notes.duckdb")
	write(t, foreign, "my notes, not a database\n")
	t.Setenv("HWTEST_DB", foreign)
	code, stdout, stderr = hwtest("run", "--root", "../..", "--no-generate", "--reports", reports, "--model", "silero-vad-v5", "--target", "cpu")
	if code != ExitError || !strings.Contains(stderr, "the history was not updated (the matrix files are written)") ||
		!strings.Contains(stderr, foreign+" is not a DuckDB database") {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	if b, _ := os.ReadFile(foreign); string(b) != "my notes, not a database\n" {
		t.Errorf("the foreign file was changed: %q", b)
	}
	cpu = readMatrix(t, filepath.Join(reports, "latest", "matrix.json"))["silero-vad-v5/cpu"]
	// The cause comes from the code that saw it, so reports need not parse the text.
	if cpu.Status != "error" || cpu.Cause != result.CauseRuntimeLibrary || !strings.Contains(cpu.Reason, "is not a shared library") || !strings.Contains(cpu.Reason, "make setup") {
		t.Errorf("cpu cell with a broken library: %+v", cpu)
	}
}

// checkStored: the run in the history reads back as its matrix.json, with the raw
// latency samples matrix.json leaves out.
func checkStored(t *testing.T, dbPath, matrixJSON string) {
	t.Helper()
	b, err := os.ReadFile(matrixJSON)
	if err != nil {
		t.Fatal(err)
	}
	var want matrix.Matrix
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	db, err := history.Open(ctx, dbPath, history.ReadOnly, history.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	got, err := db.RunMatrix(ctx, want.RunID, want.Models, want.Targets)
	if err != nil {
		t.Fatal(err)
	}
	samples, err := db.Samples(ctx, want.RunID)
	if err != nil {
		t.Fatal(err)
	}
	measured := 0
	for _, c := range got.Cells {
		if c.Metrics != nil {
			measured++
			if n := len(samples[c.Model+"/"+c.Target]); n != c.Metrics.Runs {
				t.Errorf("%s/%s: %d samples stored for %d runs", c.Model, c.Target, n, c.Metrics.Runs)
			}
		}
	}
	if measured == 0 {
		t.Errorf("no measured cell in run %s", want.RunID)
	}
	// DuckDB keeps microseconds.
	if d := cmp.Diff(want, got, cmpopts.EquateApproxTime(time.Microsecond), cmpopts.IgnoreUnexported(matrix.Cell{})); d != "" {
		t.Errorf("the history's run %s differs from its matrix.json (-json +history):\n%s", want.RunID, d)
	}
}

func readMatrix(t testing.TB, path string) map[string]matrix.Cell {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m matrix.Matrix
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	cells := map[string]matrix.Cell{}
	for _, c := range m.Cells {
		cells[c.Model+"/"+c.Target] = c
	}
	return cells
}

// onnxruntime-web 1.30's native WebGPU EP (ort.webgpu.min.js) gets silero VAD wrong on
// these machines while its JSEP bundle and wasm agree with native ONNX Runtime. The
// matrix must show that as a mismatch with the error's size, not hide it.
func TestBrowserMismatchIsReported(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Chromium")
	}
	_, err := os.Stat("/usr/bin/chromium")
	testenv.Need(t, "chromium (make setup)", err)
	reports := t.TempDir()
	code, stdout, stderr := hwtest("run", "--root", "../..", "--no-generate", "--reports", reports,
		"--model", "silero-vad-v5", "--target", "wasm", "--target", "webgpu-native")
	// A mismatch fails the run (CI gates on it), once the matrix is written.
	if code != ExitCellsFailed || !strings.Contains(stderr, "hwtest: 1 cell failed (silero-vad-v5 on webgpu-native: mismatch)") {
		t.Fatalf("exit %d, want %d naming the cell\n%s%s", code, ExitCellsFailed, stdout, stderr)
	}
	m := readMatrix(t, filepath.Join(reports, "latest", "matrix.json"))
	wasm, native := m["silero-vad-v5/wasm"], m["silero-vad-v5/webgpu-native"]
	if wasm.Status != "pass" || !strings.Contains(wasm.Provenance.Device, "WebAssembly") {
		t.Errorf("wasm: %+v", wasm)
	}
	// The page times each run; its samples make blocks like a native target's.
	if len(wasm.Metrics.BlockP50MS) < 2 || len(wasm.Outputs) != 2 {
		t.Errorf("wasm: blocks %v, outputs %v", wasm.Metrics.BlockP50MS, wasm.Outputs)
	}
	if native.Status != "mismatch" || native.Cause != result.CauseMismatch || native.Worst == nil || native.Worst.AbsErr < 0.01 {
		t.Errorf("webgpu-native: %s %q worst %+v", native.Status, native.Reason, native.Worst)
	}
	if !strings.Contains(native.Provenance.Device, "software fallback adapter") {
		t.Errorf("the matrix does not say WebGPU ran on a software adapter: %q", native.Provenance.Device)
	}
	// The run traced the mismatch (a child `hwtest explain`: this test binary, which
	// TestMain makes hwtest when it is given a command).
	if !strings.HasPrefix(native.Explain, "first divergence: node ") || wasm.Explain != "" {
		t.Errorf("webgpu-native's mismatch is not traced to a node: %q (wasm: %q)", native.Explain, wasm.Explain)
	}
}
