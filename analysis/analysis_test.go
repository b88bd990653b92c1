package analysis_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hwtest/hwtest/analysis"
	"github.com/hwtest/hwtest/internal/histtest"
	"github.com/hwtest/hwtest/matrix"
	"github.com/hwtest/hwtest/result"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

const root = ".."

// load imports files (relative to the repository root) into a history of the test's
// own and reads it back as the report reads it: the current matrix and every run.
func load(t *testing.T, files ...string) (matrix.Matrix, []matrix.Matrix) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "history.duckdb")
	abs := make([]string, len(files))
	for i, f := range files {
		abs[i] = filepath.Join(root, f)
	}
	histtest.Import(t, path, abs...)
	models, targets := catalogOrder(t)
	return histtest.Load(t, path, models, targets)
}

// catalogOrder is the catalog's order of models and targets, as a recorded run of
// every target lists it.
func catalogOrder(t *testing.T) (models, targets []string) {
	files, _ := filepath.Glob(filepath.Join(root, histtest.FullRuns))
	if len(files) == 0 {
		t.Fatal("no recorded full run")
	}
	m, _, err := histtest.Read(files[0])
	if err != nil {
		t.Fatal(err)
	}
	return m.Models, m.Targets
}

func recorded(t *testing.T) []string {
	t.Helper()
	files, err := histtest.Recorded(root)
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./analysis -update creates it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test ./analysis -update accepts it; review the diff first):\n%s", path, firstDiff(want, got))
	}
}

// firstDiff shows where two texts part.
func firstDiff(want, got []byte) string {
	w, g := strings.Split(string(want), "\n"), strings.Split(string(got), "\n")
	for i := range max(len(w), len(g)) {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			return "line " + itoa(i+1) + ":\n- " + a + "\n+ " + b
		}
	}
	return ""
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

// The report's data on every recorded run, golden: the JSON (every number) and the
// terminal text.
func TestGoldenRecordedHistory(t *testing.T) {
	current, runs := load(t, recorded(t)...)
	r := analysis.Analyze(current, runs, analysis.Options{})
	js, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "recorded.json", append(js, '\n'))
	golden(t, "recorded.txt", r.Text())

	again := analysis.Analyze(current, runs, analysis.Options{})
	if js2, _ := json.MarshalIndent(again, "", "  "); !bytes.Equal(js, js2) {
		t.Error("Analyze is not deterministic")
	}
}

func cellOf(t *testing.T, m matrix.Matrix, model, target string) matrix.Cell {
	t.Helper()
	for _, c := range m.Cells {
		if c.Model == model && c.Target == target {
			return c
		}
	}
	t.Fatalf("no cell %s/%s", model, target)
	return matrix.Cell{}
}

// The numbers the summaries quote are the current matrix's own, worked out here
// from its cells independently of the package.
func TestSummariesQuoteTheCells(t *testing.T) {
	current, runs := load(t, recorded(t)...)
	r := analysis.Analyze(current, runs, analysis.Options{})

	cpu := cellOf(t, current, "silero-vad-v5", "cpu")
	wasm := cellOf(t, current, "silero-vad-v5", "wasm")
	var found bool
	for _, s := range r.Speedup.ByModel {
		if s.Model == "silero-vad-v5" && s.Target == "wasm" {
			found = true
			if want := cpu.Metrics.P50MS / wasm.Metrics.P50MS; s.Speedup != want || s.RunID != wasm.RunID || s.BaselineRunID != cpu.RunID {
				t.Errorf("silero-vad-v5 on wasm: %+v, want speedup %g from runs %s and %s", s, want, wasm.RunID, cpu.RunID)
			}
		}
		if s.Target == "webgpu-native" && s.Model == "silero-vad-v5" {
			t.Errorf("a mismatch has a speedup: %+v", s)
		}
	}
	if !found {
		t.Error("no speedup for silero-vad-v5 on wasm")
	}

	// Mean and extremes of p50 on cpu over the usable cells.
	var sum, lo, hi float64
	n := 0
	for _, c := range current.Cells {
		if c.Target != "cpu" || (c.Status != result.StatusPass && c.Status != result.StatusPartial) || c.Metrics == nil {
			continue
		}
		p := c.Metrics.P50MS
		if n == 0 || p < lo {
			lo = p
		}
		if n == 0 || p > hi {
			hi = p
		}
		sum += p
		n++
	}
	cpuStat := r.Performance.ByTarget[0]
	if cpuStat.Target != "cpu" || cpuStat.Cells != n || math.Abs(cpuStat.MeanP50MS-sum/float64(n)) > 1e-12 || cpuStat.Min.P50MS != lo || cpuStat.Max.P50MS != hi {
		t.Errorf("cpu latency %+v, want %d cells, mean %g, min %g, max %g", cpuStat, n, sum/float64(n), lo, hi)
	}
	for i := 1; i < len(r.Performance.Fastest); i++ {
		if r.Performance.Fastest[i].P50MS < r.Performance.Fastest[i-1].P50MS {
			t.Errorf("fastest not in order: %+v", r.Performance.Fastest)
		}
	}
	// Statuses add up to the matrix's.
	total := 0
	for _, s := range r.Compatibility.ByTarget {
		total += s.Cells
	}
	if total != len(current.Cells) {
		t.Errorf("by target: %d cells, the matrix has %d", total, len(current.Cells))
	}
	if r.Failures.Total == 0 || r.Environment.DetectedBy == "" || len(r.Environment.Detection) != 14 {
		t.Errorf("failures %d, detection by %q of %d targets", r.Failures.Total, r.Environment.DetectedBy, len(r.Environment.Detection))
	}
}

func trendOf(t *testing.T, r analysis.Report, model, target string) analysis.Trend {
	t.Helper()
	for _, tr := range r.Trends {
		if tr.Model == model && tr.Target == target {
			return tr
		}
	}
	t.Fatalf("no trend for %s/%s", model, target)
	return analysis.Trend{}
}

func glob(t *testing.T, pattern string) []string {
	files, err := filepath.Glob(filepath.Join(root, pattern))
	if err != nil || len(files) == 0 {
		t.Fatalf("%s: %v", pattern, err)
	}
	for i, f := range files {
		files[i], _ = filepath.Rel(root, f)
	}
	return files
}

// Ten back-to-back runs of unchanged cells: no regression is marked, though p50
// moved by up to 56% from run to run (diff/testdata/README.md).
func TestTrendMarksNoNoise(t *testing.T) {
	current, runs := load(t, glob(t, "diff/testdata/noise/*.json")...)
	r := analysis.Analyze(current, runs, analysis.Options{})
	if len(r.Trends) != 8 {
		t.Fatalf("%d trends, want 8", len(r.Trends))
	}
	for _, tr := range r.Trends {
		if len(tr.Points) != 10 || tr.Regressions() != 0 {
			t.Errorf("%s/%s: %d points, changes %+v", tr.Model, tr.Target, len(tr.Points), tr.Changes)
		}
	}
}

// One intra-op thread, then ONNX Runtime's default pool: on these shared cores the
// pool made detr, rag and whisper slower and left silero alone
// (diff/testdata/README.md). The trend marks the slowdown at the first run with the
// pool, and nothing on silero.
func TestTrendMarksTheThreadRegression(t *testing.T) {
	files := append(glob(t, "diff/testdata/threads1/*.json"), glob(t, "diff/testdata/default-after/*.json")...)
	current, runs := load(t, files...)
	r := analysis.Analyze(current, runs, analysis.Options{})
	// Ten one-thread runs (points 0–9), then four with the pool (10–13). rag's
	// last one-thread run (0.212 ms) was already above its nine others (0.201 to
	// 0.206 ms), so the split before it is the most significant one (5 runs
	// against 5, all apart: p = 0.0079, where 5 against 4 reaches 0.016).
	for model, at := range map[string]int{"detr-resnet-50": 10, "whisper-tiny": 10, "rag-token-nq": 9} {
		tr := trendOf(t, r, model, "cpu")
		var latency []analysis.Change
		for _, c := range tr.Changes {
			if c.Kind == analysis.ChangeLatency {
				latency = append(latency, c)
			}
		}
		if len(latency) != 1 || !latency[0].Regressed || latency[0].At != at || latency[0].Change < 0.05 || latency[0].P == nil || *latency[0].P >= 0.05 {
			t.Errorf("%s on cpu: latency changes %+v, want one regression at point %d", model, latency, at)
		}
	}
	if tr := trendOf(t, r, "silero-vad-v5", "cpu"); tr.Regressions() != 0 {
		t.Errorf("silero-vad-v5 on cpu: %+v", tr.Changes)
	}
}

// Status changes are marked run to run: the tightened tolerance's mismatch, the
// browsers' unavailability, and the way back.
func TestTrendMarksStatusChanges(t *testing.T) {
	current, runs := load(t, glob(t, "diff/testdata/scenarios/*.json")...)
	r := analysis.Analyze(current, runs, analysis.Options{})
	got := map[string][]string{}
	for _, tr := range r.Trends {
		for _, c := range tr.Changes {
			if c.Kind == analysis.ChangeStatus {
				got[tr.Target] = append(got[tr.Target], c.From+"→"+c.To+regressed(c))
			}
		}
	}
	want := map[string][]string{
		"cpu":    {"pass→mismatch regressed", "mismatch→pass"},
		"webgpu": {"partial→unavailable regressed"},
		"wasm":   {"pass→unavailable regressed"},
	}
	for k, v := range want {
		if strings.Join(got[k], ", ") != strings.Join(v, ", ") {
			t.Errorf("%s: %v, want %v", k, got[k], v)
		}
	}
}

func regressed(c analysis.Change) string {
	if c.Regressed {
		return " regressed"
	}
	return ""
}
