package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hwtest/hwtest/internal/testenv"
	"github.com/hwtest/hwtest/recommend"
)

func recommendJSON[T any](t *testing.T, args ...string) T {
	t.Helper()
	var out T
	code, stdout, stderr := hwtest(append([]string{"recommend", "--root", "../..", "--json"}, args...)...)
	if code != ExitOK {
		t.Fatalf("recommend %v: exit %d\n%s%s", args, code, stdout, stderr)
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatalf("recommend %v: %v\n%s", args, err, stdout)
	}
	return out
}

func choiceTargets(cs []recommend.Choice) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Target)
	}
	return out
}

// On the recorded runs the answer is known: silero-vad-v5 runs fastest on cpu,
// then wasm (about 8× slower); webgpu-native is out as a mismatch and qnn as
// unavailable, with the probe's reason.
func TestRecommendOnRecordedHistory(t *testing.T) {
	recordedHistory(t)
	r := recommendJSON[recommend.Recommendation](t, "silero-vad-v5")
	if got := choiceTargets(r.Ranked); !slices.Equal(got, []string{"cpu", "wasm"}) {
		t.Fatalf("ranked %v, want cpu, wasm", got)
	}
	cpu1, cpu2 := readMatrix(t, "testdata/history/run1.json")["silero-vad-v5/cpu"], readMatrix(t, "testdata/history/run2.json")["silero-vad-v5/cpu"]
	wasm := readMatrix(t, "testdata/history/run1.json")["silero-vad-v5/wasm"]
	cpuP50 := (cpu1.Metrics.P50MS + cpu2.Metrics.P50MS) / 2
	speedup := cpuP50 / wasm.Metrics.P50MS
	if r.Ranked[0].Runs != 2 || !same(r.Ranked[0].P50MS, cpuP50) || r.Ranked[1].Runs != 1 || !same(r.Ranked[1].SpeedupOverCPU, speedup) {
		t.Errorf("cpu %+v\nwasm %+v\nwant cpu p50 %g over 2 runs, wasm speedup %g", r.Ranked[0], r.Ranked[1], cpuP50, speedup)
	}
	why := map[string]recommend.Exclusion{}
	for _, x := range r.Excluded {
		why[x.Target] = x
	}
	if x := why["webgpu-native"]; x.Why != "mismatch" || x.RunID != run1 {
		t.Errorf("webgpu-native: %+v", x)
	}
	if x := why["qnn"]; x.Why != "unavailable" || !strings.HasPrefix(x.Reason, "QNNExecutionProvider: QNNExecutionProvider execution provider is not supported in this build.") {
		t.Errorf("qnn: %+v", x)
	}

	code, text, stderr := hwtest("recommend", "--root", "../..", "silero-vad-v5")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	slower := fmt.Sprintf("%.1f× slower", 1/speedup)
	for _, s := range []string{"| 1 | cpu | native |", "| 2 | wasm | browser |", slower, "| webgpu-native | mismatch |", "| qnn | unavailable |",
		"- **lowest latency**: cpu:", "- **browser only**: wasm:", "- **CPU only**: cpu:", "- **lowest memory**: cpu:"} {
		if !strings.Contains(text, s) {
			t.Errorf("the text lacks %q:\n%s", s, text)
		}
	}

	// Budgets: wasm misses the p50 budget; the memory budget, written with a unit.
	r = recommendJSON[recommend.Recommendation](t, "silero-vad-v5", "--max-p50", "0.5", "--max-memory", "0.5GiB")
	if got := choiceTargets(r.Ranked); !slices.Equal(got, []string{"cpu"}) {
		t.Errorf("with budgets: ranked %v, want cpu", got)
	}
	for _, x := range r.Excluded {
		if x.Target == "wasm" && (x.Why != "over budget" || !strings.Contains(x.Reason, "p50 0.8425 ms > --max-p50 0.5 ms") || !strings.Contains(x.Reason, "> --max-memory 512.0 MiB")) {
			t.Errorf("wasm: %+v", x)
		}
	}
}

// --family audio: both silero models measured, the other audio models predicted.
func TestRecommendFamily(t *testing.T) {
	recordedHistory(t)
	f := recommendJSON[recommend.FamilyRecommendation](t, "--family", "audio")
	if !slices.Equal(f.Measured, []string{"silero-vad-v5", "silero-vad-v6"}) || len(f.Targets) != 2 || f.Targets[0].Target != "cpu" || f.Targets[1].Target != "wasm" {
		t.Fatalf("measured %v, targets %+v", f.Measured, f.Targets)
	}
	// v6's latest cpu result is the broken-library error of run3.
	if cpu := f.Targets[0]; !slices.Equal(cpu.Passed, []string{"silero-vad-v5"}) || !slices.Equal(cpu.Out["error"], []string{"silero-vad-v6"}) {
		t.Errorf("cpu: %+v", cpu)
	}
	kinds := map[string]string{}
	for _, m := range f.Models {
		kinds[m.Model] = m.Kind
		// Each model's figures are backed by its stored runs: v5's cpu by two.
		if m.Model == "silero-vad-v5" && (len(m.Ranked) == 0 || m.Ranked[0].Target != "cpu" || m.Ranked[0].Runs != 2) {
			t.Errorf("silero-vad-v5: ranked %+v, want cpu first, backed by 2 runs", m.Ranked)
		}
	}
	if kinds["silero-vad-v5"] != "measured" || kinds["whisper-tiny"] != "prediction" {
		t.Errorf("models: %v", kinds)
	}
	if code, _, stderr := hwtest("recommend", "--root", "../..", "--family", "speech"); code != ExitError || !strings.Contains(stderr, `--family "speech": want one of text, vision`) {
		t.Errorf("unknown family: exit %d, %s", code, stderr)
	}
}

// A model with no result is predicted, and says so in the text and the JSON.
func TestRecommendPredictsNeverRunModel(t *testing.T) {
	recordedHistory(t)
	_, err := os.Stat("../../.hwtest/models/zoo/tiny-whisper.onnx")
	testenv.Need(t, "the tiny-whisper fixture (make setup)", err)
	code, text, stderr := hwtest("recommend", "--root", "../..", "whisper-tiny")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	for _, s := range []string{"# hwtest recommend: whisper-tiny (audio): PREDICTION", "**PREDICTION: whisper-tiny has no result in the history",
		"the operators are its fixture's (tiny-random)", "## Guidance (predicted)", "| wasm | browser | likely pass |",
		"| webgpu-native | browser | likely fail |", "| qnn | native | unavailable |", "TensorrtExecutionProvider: partial"} {
		if !strings.Contains(text, s) {
			t.Errorf("the text lacks %q:\n%s", s, text)
		}
	}
	r := recommendJSON[recommend.Recommendation](t, "whisper-tiny")
	if r.Kind != "prediction" || len(r.Ranked) != 0 || len(r.Predicted) != 14 {
		t.Errorf("kind %q, ranked %v, %d predicted", r.Kind, r.Ranked, len(r.Predicted))
	}
	for _, s := range r.Scenarios {
		if !s.Predicted {
			t.Errorf("scenario %+v not labelled a prediction", s)
		}
	}
	if code, _, stderr := hwtest("recommend", "--root", "../..", "no-such-model"); code != ExitError || !strings.Contains(stderr, `"no-such-model" has no result in the history`) {
		t.Errorf("unknown model: exit %d, %s", code, stderr)
	}
}

func TestRecommendWithoutHistory(t *testing.T) {
	t.Setenv("HWTEST_DB", filepath.Join(t.TempDir(), "none.duckdb"))
	code, _, stderr := hwtest("recommend", "--root", "../..", "silero-vad-v5")
	if code != ExitError || !strings.Contains(stderr, "recommendations are made from measured runs") {
		t.Errorf("exit %d, %s", code, stderr)
	}
}

// A real run here: silero-vad-v5 on cpu and wasm, then the recommendation. On
// these machines native ONNX Runtime beats onnxruntime-web's wasm: cpu must be
// first and wasm's speedup below 1, said in figures.
func TestRecommendReal(t *testing.T) {
	needSuites(t)
	_, err := os.Stat("/usr/bin/chromium")
	testenv.Need(t, "chromium (make setup)", err)
	reports := t.TempDir()
	t.Setenv("HWTEST_DB", filepath.Join(t.TempDir(), "history.duckdb"))
	t.Setenv("HWTEST_MEASURE_TIME", "200ms")
	code, stdout, stderr := hwtest("run", "--root", "../..", "--no-generate", "--reports", reports,
		"--model", "silero-vad-v5", "--target", "cpu", "--target", "wasm")
	if code != ExitOK {
		t.Fatalf("run: exit %d\n%s%s", code, stdout, stderr)
	}
	m := readMatrix(t, filepath.Join(reports, "latest", "matrix.json"))
	cpu, wasm := m["silero-vad-v5/cpu"], m["silero-vad-v5/wasm"]
	if cpu.Status != "pass" || wasm.Status != "pass" {
		t.Fatalf("cpu %s %q, wasm %s %q", cpu.Status, cpu.Reason, wasm.Status, wasm.Reason)
	}
	r := recommendJSON[recommend.Recommendation](t, "silero-vad-v5")
	if got := choiceTargets(r.Ranked); !slices.Equal(got, []string{"cpu", "wasm"}) {
		t.Fatalf("ranked %v, want cpu over wasm (cpu p50 %g ms, wasm %g ms)", got, cpu.Metrics.P50MS, wasm.Metrics.P50MS)
	}
	speedup := cpu.Metrics.P50MS / wasm.Metrics.P50MS
	if w := r.Ranked[1]; w.Runs != 1 || !same(w.P50MS, wasm.Metrics.P50MS) || !same(w.SpeedupOverCPU, speedup) || speedup >= 1 {
		t.Errorf("wasm %+v, want speedup %g < 1", w, speedup)
	}
	_, text, _ := hwtest("recommend", "--root", "../..", "silero-vad-v5")
	slower := fmt.Sprintf("%.1f× slower than cpu", 1/speedup)
	if 1/speedup >= 10 {
		slower = fmt.Sprintf("%.0f× slower than cpu", 1/speedup)
	}
	if !strings.Contains(text, "- **lowest latency**: cpu:") || !strings.Contains(text, "- **browser only**: wasm: p50") || !strings.Contains(text, slower) {
		t.Errorf("the text does not put cpu first and wasm %s:\n%s", slower, text)
	}
	t.Logf("cpu p50 %.4g ms, wasm p50 %.4g ms: wasm %.3g× cpu's speed\n%s", cpu.Metrics.P50MS, wasm.Metrics.P50MS, speedup, text)
}
