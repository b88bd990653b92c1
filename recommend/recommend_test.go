package recommend_test

import (
	"context"
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hwtest/hwtest/catalog"
	"github.com/hwtest/hwtest/history"
	"github.com/hwtest/hwtest/matrix"
	"github.com/hwtest/hwtest/recommend"
	"github.com/hwtest/hwtest/result"
	"github.com/hwtest/hwtest/stats"
)

// The tests read real runs recorded on this project's machine (see
// cmd/hwtest/testdata/history and diff/testdata/README.md), stored into a history
// of their own as `hwtest import` stores them, and work the expected figures out of
// the matrix files directly.
const (
	run1 = "../cmd/hwtest/testdata/history/run1.json" // v5, v6 on cpu, wasm, webgpu-native (mismatch), qnn (unavailable)
	run2 = "../cmd/hwtest/testdata/history/run2.json" // v5 on cpu again
	run3 = "../cmd/hwtest/testdata/history/run3.json" // v6 on cpu with a broken ONNX Runtime library: error
	base = "../diff/testdata/scenarios/base.json"     // v5 on cpu, wasm, webgpu (partial)
)

func readMatrix(t *testing.T, path string) matrix.Matrix {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m matrix.Matrix
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return m
}

func noise(t *testing.T) []string {
	files, err := filepath.Glob("../diff/testdata/noise/*.json")
	if err != nil || len(files) != 10 {
		t.Fatalf("noise runs: %v %v", files, err)
	}
	return files
}

func targets(t *testing.T) []catalog.Target {
	t.Helper()
	c, err := catalog.Load("../models.yaml", "../hardware.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return c.Targets
}

// recorded stores the runs into a new history and reads back what recommend takes.
func recorded(t *testing.T, files ...string) recommend.History {
	t.Helper()
	ctx := context.Background()
	db, err := history.Open(ctx, filepath.Join(t.TempDir(), "history.duckdb"), history.ReadWrite, history.Options{Log: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, f := range files {
		if err := db.Store(ctx, history.Run{Matrix: readMatrix(t, f), Source: "import " + f}); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
	}
	var ids []string
	for _, tg := range targets(t) {
		ids = append(ids, tg.ID)
	}
	cur, err := db.Current(ctx, nil, ids)
	if err != nil {
		t.Fatal(err)
	}
	h := recommend.History{Current: cur, Runs: map[string][]matrix.Cell{}}
	for _, m := range cur.Models {
		if h.Runs[m], err = db.History(ctx, m, ""); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

// cellOf is a recorded cell, read from its matrix file.
func cellOf(t *testing.T, path, model, target string) matrix.Cell {
	t.Helper()
	for _, c := range readMatrix(t, path).Cells {
		if c.Model == model && c.Target == target {
			return c
		}
	}
	t.Fatalf("%s has no %s/%s", path, model, target)
	return matrix.Cell{}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) }

func ids(cs []recommend.Choice) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Target)
	}
	return out
}

func excluded(r recommend.Recommendation) map[string]recommend.Exclusion {
	out := map[string]recommend.Exclusion{}
	for _, x := range r.Excluded {
		out[x.Target] = x
	}
	return out
}

func scenarios(ss []recommend.Scenario) map[string]string {
	out := map[string]string{}
	for _, s := range ss {
		out[s.Name] = s.Target
	}
	return out
}

// silero-vad-v5 on the recorded runs: cpu first (two runs), wasm second with its
// speedup, webgpu-native out as a mismatch, qnn out as unavailable with the probe's
// reason, every other target not run.
func TestModelOnRecordedHistory(t *testing.T) {
	h := recorded(t, run1, run2, run3)
	r := recommend.Model(h, targets(t), "silero-vad-v5", recommend.Budget{})
	if r.Kind != recommend.Measured || r.Family != "audio" || r.Baseline != "cpu" {
		t.Errorf("kind %q family %q baseline %q", r.Kind, r.Family, r.Baseline)
	}
	if got := ids(r.Ranked); !slices.Equal(got, []string{"cpu", "wasm"}) {
		t.Fatalf("ranked %v, want cpu then wasm", got)
	}
	c1, c2 := cellOf(t, run1, "silero-vad-v5", "cpu").Metrics, cellOf(t, run2, "silero-vad-v5", "cpu").Metrics
	cpu := r.Ranked[0]
	mean := (c1.P50MS + c2.P50MS) / 2
	sd := math.Abs(c1.P50MS-c2.P50MS) / math.Sqrt2 // sample stdev of two values
	if cpu.Runs != 2 || !near(cpu.P50MS, mean) || !near(cpu.P99MS, (c1.P99MS+c2.P99MS)/2) ||
		cpu.PeakMemoryBytes != (c1.PeakRSSBytes+c2.PeakRSSBytes)/2 ||
		!near(cpu.P50MinMS, math.Min(c1.P50MS, c2.P50MS)) || !near(cpu.P50MaxMS, math.Max(c1.P50MS, c2.P50MS)) ||
		!near(cpu.P50CoV, sd/mean) || cpu.SpeedupOverCPU != 1 {
		t.Errorf("cpu: %+v", cpu)
	}
	w := cellOf(t, run1, "silero-vad-v5", "wasm").Metrics
	wasm := r.Ranked[1]
	if wasm.Runs != 1 || wasm.P50MS != w.P50MS || wasm.P50CoV != 0 || wasm.SampleCoV != w.CoV || wasm.Runner != "browser" ||
		!near(wasm.SpeedupOverCPU, mean/w.P50MS) || wasm.SpeedupOverCPU > 0.2 {
		t.Errorf("wasm: %+v (speedup want %g)", wasm, mean/w.P50MS)
	}

	out := excluded(r)
	probe := ""
	for _, d := range readMatrix(t, run1).Detection {
		if d.Target == "qnn" {
			probe = d.Reason
		}
	}
	if x := out["qnn"]; x.Why != "unavailable" || probe == "" || !strings.HasPrefix(x.Reason, probe) || !strings.Contains(x.Reason, "falls back: qnn → cpu") {
		t.Errorf("qnn: %+v, want unavailable with the probe's %q", x, probe)
	}
	if x := out["webgpu-native"]; x.Why != "mismatch" || !strings.Contains(x.Reason, `outputs differ from the CPU reference: output "stateN"`) {
		t.Errorf("webgpu-native: %+v", x)
	}
	for _, tg := range targets(t) {
		if x, ok := out[tg.ID]; !ok && !slices.Contains([]string{"cpu", "wasm"}, tg.ID) {
			t.Errorf("%s is neither ranked nor excluded", tg.ID)
		} else if ok && tg.ID != "qnn" && tg.ID != "webgpu-native" && x.Why != recommend.WhyNotRun {
			t.Errorf("%s: %+v, want not run", tg.ID, x)
		}
	}
	want := map[string]string{recommend.LowestLatency: "cpu", recommend.LowestMemory: "cpu", recommend.BrowserOnly: "wasm", recommend.CPUOnly: "cpu"}
	if got := scenarios(r.Scenarios); !equalMaps(got, want) {
		t.Errorf("scenarios %v, want %v", got, want)
	}

	md := string(r.Markdown())
	for _, s := range []string{
		"| 1 | cpu | native |", "| 2 | wasm | browser |", "0.12× (8.2× slower)",
		"| webgpu-native | mismatch |", "| qnn | unavailable | QNNExecutionProvider: QNNExecutionProvider execution provider is not supported in this build.",
		"- **browser only**: wasm: p50 0.8425 ms (1 run); 8.2× slower than cpu",
		"0.1011–0.1038 (CoV 1.8%)",
	} {
		if !strings.Contains(md, s) {
			t.Errorf("the text lacks %q:\n%s", s, md)
		}
	}
}

// silero-vad-v6's latest cpu result is an error (a broken library): cpu is out,
// wasm is ranked without a speedup, and says why.
func TestModelWithoutBaseline(t *testing.T) {
	r := recommend.Model(recorded(t, run1, run2, run3), targets(t), "silero-vad-v6", recommend.Budget{})
	if x := excluded(r)["cpu"]; x.Why != "error" || !strings.Contains(x.Reason, "/tmp/notalib.so is not a shared library") {
		t.Errorf("cpu: %+v", x)
	}
	if got := ids(r.Ranked); !slices.Equal(got, []string{"wasm"}) {
		t.Fatalf("ranked %v", got)
	}
	if w := r.Ranked[0]; w.SpeedupOverCPU != 0 || w.SpeedupNote != "cpu has no passing measurement of this model" {
		t.Errorf("wasm: %+v", w)
	}
	// wasm runs ONNX Runtime's CPU EP in WebAssembly: the CPU-only pick without cpu.
	want := map[string]string{recommend.LowestLatency: "wasm", recommend.LowestMemory: "wasm", recommend.BrowserOnly: "wasm", recommend.CPUOnly: "wasm"}
	if got := scenarios(r.Scenarios); !equalMaps(got, want) {
		t.Errorf("scenarios %v, want %v", got, want)
	}
}

// Budgets leave targets out, saying which budget they missed and by how much.
func TestBudgets(t *testing.T) {
	h := recorded(t, run1, run2, run3)
	for _, tc := range []struct {
		name   string
		budget recommend.Budget
		ranked []string
		out    map[string]string // target → the reason's start
		none   []string          // scenarios left without a pick
	}{
		{name: "p50", budget: recommend.Budget{MaxP50MS: 0.5}, ranked: []string{"cpu"},
			out:  map[string]string{"wasm": "p50 0.8425 ms > --max-p50 0.5 ms (by 0.3425 ms, +68%)"},
			none: []string{recommend.BrowserOnly}},
		{name: "memory", budget: recommend.Budget{MaxMemoryBytes: 100 << 20}, ranked: []string{"cpu"},
			out:  map[string]string{"wasm": "peak memory 623.1 MiB > --max-memory 100.0 MiB (by 523.1 MiB, +523%)"},
			none: []string{recommend.BrowserOnly}},
		{name: "p99 of both", budget: recommend.Budget{MaxP99MS: 1}, ranked: nil,
			out:  map[string]string{"cpu": "p99 2.499 ms > --max-p99 1 ms", "wasm": "p99 7.001 ms > --max-p99 1 ms"},
			none: []string{recommend.LowestLatency, recommend.LowestMemory, recommend.BrowserOnly, recommend.CPUOnly}},
		{name: "wide enough", budget: recommend.Budget{MaxP50MS: 1, MaxP99MS: 10, MaxMemoryBytes: 1 << 30}, ranked: []string{"cpu", "wasm"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := recommend.Model(h, targets(t), "silero-vad-v5", tc.budget)
			if got := ids(r.Ranked); !slices.Equal(got, tc.ranked) {
				t.Errorf("ranked %v, want %v", got, tc.ranked)
			}
			out := excluded(r)
			for target, reason := range tc.out {
				if x := out[target]; x.Why != recommend.WhyOverBudget || !strings.HasPrefix(x.Reason, reason) {
					t.Errorf("%s: %+v, want over budget: %s", target, x, reason)
				}
			}
			got := scenarios(r.Scenarios)
			for _, s := range tc.none {
				if got[s] != "" {
					t.Errorf("%s: %s, want none within the budgets", s, got[s])
				}
			}
			for _, s := range r.Scenarios {
				if s.Target == "" && !strings.HasSuffix(s.Text, "within the budgets") {
					t.Errorf("%s: %q", s.Name, s.Text)
				}
			}
		})
	}
	// --precision fp16: the fp32 targets are out for it; qnn (fp16) stays out for
	// being unavailable.
	r := recommend.Model(h, targets(t), "silero-vad-v5", recommend.Budget{Precision: "fp16"})
	out := excluded(r)
	if len(r.Ranked) != 0 || out["cpu"].Why != recommend.WhyPrecision || out["cpu"].Reason != "runs at fp32 (--precision fp16)" ||
		out["webgpu-native"].Why != recommend.WhyPrecision || out["qnn"].Why != "unavailable" {
		t.Errorf("fp16: ranked %v, excluded %+v", ids(r.Ranked), r.Excluded)
	}
}

// A partial target is listed apart, with the share of its nodes on the CPU.
func TestPartial(t *testing.T) {
	r := recommend.Model(recorded(t, base), targets(t), "silero-vad-v5", recommend.Budget{})
	if got := ids(r.Ranked); !slices.Equal(got, []string{"cpu", "wasm"}) {
		t.Errorf("ranked %v", got)
	}
	pl := cellOf(t, base, "silero-vad-v5", "webgpu").Placement
	if len(r.Partial) != 1 || r.Partial[0].Target != "webgpu" {
		t.Fatalf("partial %+v", r.Partial)
	}
	p := r.Partial[0]
	want := 100 * float64(pl.ByProvider["CPUExecutionProvider"].Nodes) / float64(pl.Nodes)
	if !near(p.CPUNodesPct, want) || want < 30 || p.Placement != "63% of 226 nodes on WebGPU (JSEP), the rest on CPU" {
		t.Errorf("webgpu: %.1f%% of nodes on the CPU (want %.1f%%), %q", p.CPUNodesPct, want, p.Placement)
	}
	if md := string(r.Markdown()); !strings.Contains(md, "## Partial") || !strings.Contains(md, "| webgpu | partial | browser | 345.3 |") || !strings.Contains(md, "37% of nodes") {
		t.Errorf("text:\n%s", md)
	}
}

// Ten recorded runs of the same cells back each figure: the median of their p50s,
// their range and CoV. A later run under another key (the model file changed) is
// backed by itself alone; one under the same key joins the ten.
func TestRunsBackingAFigure(t *testing.T) {
	files := noise(t)
	var p50s []float64
	for _, f := range files {
		p50s = append(p50s, cellOf(t, f, "silero-vad-v5", "cpu").Metrics.P50MS)
	}
	r := recommend.Model(recorded(t, files...), targets(t), "silero-vad-v5", recommend.Budget{})
	cpu := r.Ranked[0]
	if cpu.Target != "cpu" || cpu.Runs != 10 || !near(cpu.P50MS, stats.Median(p50s)) ||
		cpu.P50MinMS != slices.Min(p50s) || cpu.P50MaxMS != slices.Max(p50s) || cpu.P50CoV <= 0 || cpu.P50CoV > 0.2 {
		t.Errorf("cpu over ten runs: %+v, p50s %v", cpu, p50s)
	}

	r = recommend.Model(recorded(t, append(files, base)...), targets(t), "silero-vad-v5", recommend.Budget{})
	if cpu := r.Ranked[0]; cpu.Runs != 11 || cpu.RunID != readMatrix(t, base).RunID {
		t.Errorf("same key: %d runs, latest %s", cpu.Runs, cpu.RunID)
	}
	keychange := "../diff/testdata/scenarios/keychange.json"
	r = recommend.Model(recorded(t, append(files, keychange)...), targets(t), "silero-vad-v5", recommend.Budget{})
	kc := cellOf(t, keychange, "silero-vad-v5", "cpu").Metrics
	if cpu := r.Ranked[0]; cpu.Runs != 1 || cpu.P50MS != kc.P50MS {
		t.Errorf("another key: %d runs, p50 %g, want 1 run, %g", cpu.Runs, cpu.P50MS, kc.P50MS)
	}
}

// --family: the targets across the family's measured models, the median of their
// speedups; the never-run models are predictions.
func TestFamily(t *testing.T) {
	files := noise(t)
	speedup := func(model string) float64 {
		var cpu, wasm []float64
		for _, f := range files {
			cpu = append(cpu, cellOf(t, f, model, "cpu").Metrics.P50MS)
			wasm = append(wasm, cellOf(t, f, model, "wasm").Metrics.P50MS)
		}
		return stats.Median(cpu) / stats.Median(wasm)
	}
	h := recorded(t, files...)
	f := recommend.Family(h, targets(t), "audio", []string{"silero-vad-v5", "silero-vad-v6", "whisper-tiny"}, nil, recommend.Budget{})
	if !slices.Equal(f.Measured, []string{"silero-vad-v5", "whisper-tiny"}) || len(f.Targets) != 2 {
		t.Fatalf("measured %v, targets %+v", f.Measured, f.Targets)
	}
	cpu, wasm := f.Targets[0], f.Targets[1]
	s5, sw := speedup("silero-vad-v5"), speedup("whisper-tiny")
	if cpu.Target != "cpu" || cpu.SpeedupMedian != 1 || wasm.Target != "wasm" || wasm.SpeedupModels != 2 ||
		!near(wasm.SpeedupMedian, (s5+sw)/2) || !near(wasm.SpeedupMin, math.Min(s5, sw)) || !slices.Equal(wasm.Passed, []string{"silero-vad-v5", "whisper-tiny"}) {
		t.Errorf("targets %+v, want wasm's median speedup %g", f.Targets, (s5+sw)/2)
	}
	want := map[string]string{recommend.LowestLatency: "cpu", recommend.LowestMemory: "cpu", recommend.BrowserOnly: "wasm", recommend.CPUOnly: "cpu"}
	if got := scenarios(f.Scenarios); !equalMaps(got, want) {
		t.Errorf("scenarios %v, want %v", got, want)
	}
	var kinds []string
	for _, m := range f.Models {
		kinds = append(kinds, m.Model+":"+m.Kind)
	}
	if !slices.Equal(kinds, []string{"silero-vad-v5:measured", "silero-vad-v6:prediction", "whisper-tiny:measured"}) {
		t.Errorf("models %v", kinds)
	}
	if md := string(f.Markdown()); !strings.Contains(md, "Never run, so PREDICTED below: silero-vad-v6") || !strings.Contains(md, "**silero-vad-v6**: PREDICTION (never run): likely pass: cpu, wasm") ||
		!strings.Contains(md, "Note: whisper-tiny ran a fixture (a tiny stand-in) in place of the real model") {
		t.Errorf("text:\n%s", md)
	}
}

// A model never run is predicted from its family's results and its operators,
// labelled as a prediction in every part.
func TestPredictNeverRunModel(t *testing.T) {
	h := recorded(t, noise(t)...)
	tg := targets(t)
	// hardware.yaml declares no expected failure for audio; one declared here shows
	// that the catalog's word is taken.
	for i := range tg {
		if tg[i].ID == "webnn" {
			tg[i].Expect = map[string]string{"audio": "declared for the test"}
		}
	}
	ops := recommend.Operators{Counts: map[string]int{"LSTM": 1, "Conv": 4, "Sigmoid": 1}}
	r := recommend.Predict(h, tg, "silero-vad-v6", "audio", ops, recommend.Budget{MaxP50MS: 1})
	if r.Kind != recommend.Prediction || len(r.Ranked) != 0 || !strings.HasPrefix(r.Basis, "PREDICTION: silero-vad-v6 has no result in the history") ||
		!strings.Contains(r.Basis, "(silero-vad-v5, whisper-tiny)") || !strings.Contains(r.Basis, "budgets are not checked") {
		t.Errorf("kind %q ranked %v basis %q", r.Kind, r.Ranked, r.Basis)
	}
	verdicts := map[string]recommend.Predicted{}
	for _, p := range r.Predicted {
		verdicts[p.Target] = p
	}
	if p := verdicts["cpu"]; p.Verdict != recommend.LikelyPass || p.Passed != 2 || p.FamilySpeedup != 1 || p.Operators != "CPUExecutionProvider: should run" {
		t.Errorf("cpu: %+v", p)
	}
	if p := verdicts["wasm"]; p.Verdict != recommend.LikelyPass || p.FamilySpeedupModels != 2 || p.FamilySpeedup >= 1 {
		t.Errorf("wasm: %+v", p)
	}
	// CoreML's table lacks LSTM: the operator view predicts a fallback.
	if p := verdicts["coreml"]; p.Verdict != recommend.Unknown || !strings.Contains(p.Operators, "partial: 1 operator falls back to CPU (LSTM") ||
		p.Evidence != "none of the 2 measured audio models ran here" {
		t.Errorf("coreml: %+v", p)
	}
	if p := verdicts["webnn"]; p.Verdict != recommend.ExpectedFail || !strings.Contains(p.Evidence, "declared for the test") {
		t.Errorf("webnn: %+v", p)
	}
	if r.Predicted[0].Target != "cpu" || r.Predicted[1].Target != "wasm" {
		t.Errorf("order: %s, %s", r.Predicted[0].Target, r.Predicted[1].Target)
	}
	want := map[string]string{recommend.LowestLatency: "cpu", recommend.LowestMemory: "cpu", recommend.BrowserOnly: "wasm", recommend.CPUOnly: "cpu"}
	if got := scenarios(r.Scenarios); !equalMaps(got, want) {
		t.Errorf("scenarios %v, want %v", got, want)
	}
	for _, s := range r.Scenarios {
		if !s.Predicted || !strings.HasPrefix(s.Text, "predicted") {
			t.Errorf("scenario %+v is not labelled a prediction", s)
		}
	}
	md := string(r.Markdown())
	if !strings.HasPrefix(md, "# hwtest recommend: silero-vad-v6 (audio): PREDICTION") || !strings.Contains(md, "## Guidance (predicted)") {
		t.Errorf("text:\n%s", md)
	}
	js, _ := r.JSON()
	if !strings.Contains(string(js), `"kind": "prediction"`) || !strings.Contains(string(js), `"predicted": true`) {
		t.Errorf("JSON:\n%s", js)
	}

	// Unreadable operators are said to be; the family's results still predict.
	r = recommend.Predict(h, tg, "silero-vad-v6", "audio", recommend.Operators{Err: "no file"}, recommend.Budget{})
	if !strings.Contains(r.Basis, "its operators could not be read (no file)") || r.Predicted[0].Operators != "" {
		t.Errorf("basis %q, %+v", r.Basis, r.Predicted[0])
	}
}

// A mismatch in a peer's results predicts a likely failure; a target where the
// family's models are unavailable is predicted unavailable with the probe's reason.
func TestPredictFromFailures(t *testing.T) {
	h := recorded(t, run1)
	r := recommend.Predict(h, targets(t), "whisper-tiny", "audio", recommend.Operators{}, recommend.Budget{})
	verdicts := map[string]recommend.Predicted{}
	for _, p := range r.Predicted {
		verdicts[p.Target] = p
	}
	if p := verdicts["webgpu-native"]; p.Verdict != recommend.LikelyFail || p.Failed != 2 {
		t.Errorf("webgpu-native: %+v", p)
	}
	if p := verdicts["qnn"]; p.Verdict != recommend.Unavailable || !strings.Contains(p.Evidence, "QNNExecutionProvider execution provider is not supported in this build") {
		t.Errorf("qnn: %+v", p)
	}
	if p := verdicts["cpu"]; p.Verdict != recommend.LikelyPass {
		t.Errorf("cpu: %+v", p)
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// A cpu-only target (mamba-130m on webnn in a real run: WebNN took none of the
// nodes) agreed, but is never ranked as passing: it is listed apart with the
// partial ones, says cpu-only, and counts as no pass of its family either.
func TestCPUOnlyIsNotAPass(t *testing.T) {
	const file = "../cmd/hwtest/testdata/history/cpu-only.json"
	h := recorded(t, file)
	r := recommend.Model(h, targets(t), "mamba-130m", recommend.Budget{})
	if got := ids(r.Ranked); !slices.Equal(got, []string{"cpu"}) {
		t.Errorf("ranked %v, want [cpu]", got)
	}
	if len(r.Partial) != 1 || r.Partial[0].Target != "webnn" || r.Partial[0].Status != result.StatusCPUOnly || r.Partial[0].CPUNodesPct != 100 ||
		r.Partial[0].Placement != "WebNN took none of the 33 nodes: all ran on CPU" {
		t.Fatalf("partial %+v", r.Partial)
	}
	if md := string(r.Markdown()); !strings.Contains(md, "| webnn (fixture tiny-random) | cpu-only | browser |") {
		t.Errorf("text:\n%s", md)
	}
	f := recommend.Family(h, targets(t), "state-space", []string{"mamba-130m"}, nil, recommend.Budget{})
	i := slices.IndexFunc(f.Targets, func(ft recommend.FamilyTarget) bool { return ft.Target == "webnn" })
	if i < 0 || len(f.Targets[i].Passed) != 0 || !slices.Equal(f.Targets[i].CPUOnlyModels, []string{"mamba-130m"}) {
		t.Errorf("family: targets %+v, want webnn with mamba-130m cpu-only, not passed", f.Targets)
	}
	if md := string(f.Markdown()); !strings.Contains(md, "mamba-130m (cpu-only)") || !strings.Contains(md, "; cpu-only: webnn") {
		t.Errorf("family text:\n%s", md)
	}
}
