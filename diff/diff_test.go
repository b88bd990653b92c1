package diff

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hwtest/hwtest/matrix"
	"github.com/hwtest/hwtest/result"
)

// Every matrix under testdata/ is a real run on this project's machine; README.md
// there says how each was made.

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

func load(t *testing.T, path string) matrix.Matrix {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", path))
	if err != nil {
		t.Fatal(err)
	}
	var m matrix.Matrix
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// runs loads a folder of runs, oldest first.
func runs(t *testing.T, dir string) []matrix.Matrix {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", dir, "*.json"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no runs in %s: %v", dir, err)
	}
	var out []matrix.Matrix
	for _, p := range paths { // run ids sort by time
		rel, _ := filepath.Rel("testdata", p)
		out = append(out, load(t, rel))
	}
	return out
}

func cell(t *testing.T, r Report, model, target string) Cell {
	t.Helper()
	for _, c := range r.Cells {
		if c.Model == model && c.Target == target {
			return c
		}
	}
	t.Fatalf("no cell %s/%s in the report", model, target)
	return Cell{}
}

func TestIdenticalRunsChangeNothing(t *testing.T) {
	for _, m := range append(runs(t, "noise"), load(t, "scenarios/base.json")) {
		r := Compare(m, m, Options{})
		if r.Regressed() || len(r.OnlyOld)+len(r.OnlyNew) > 0 || len(r.Cells) != len(m.Cells) {
			t.Errorf("%s against itself: %+v", m.RunID, r)
		}
		for _, c := range r.Cells {
			if c.Changed() {
				t.Errorf("%s against itself: %s/%s changed: %+v", m.RunID, c.Model, c.Target, c)
			}
		}
	}
}

// TestRepeatedRunsAreNotRegressions: ten back-to-back runs of the same cells
// (ONNX Runtime's default threads, cpu and wasm), and ten more with one thread.
// Neither one run against another nor repeated runs against repeated runs is
// called a regression.
func TestRepeatedRunsAreNotRegressions(t *testing.T) {
	for _, dir := range []string{"noise", "threads1"} {
		rs := runs(t, dir)
		var pairs, decided int
		for i := range rs {
			for j := i + 1; j < len(rs); j++ {
				pairs++
				if r := Compare(rs[i], rs[j], Options{}); r.Regressed() {
					t.Errorf("%s: run %d → run %d called a regression:\n%s", dir, i, j, r.Markdown())
				}
				// Repeated runs: runs ..i against runs i+1..j, at least 3 a side.
				if i+1 < DefaultMinRuns || j-i < DefaultMinRuns {
					continue
				}
				r := Compare(rs[i], rs[j], Options{OldRuns: rs[:i], NewRuns: rs[i+1 : j]})
				if r.Regressed() {
					t.Errorf("%s: runs 0..%d → %d..%d called a regression:\n%s", dir, i, i+1, j, r.Markdown())
				}
				for _, c := range r.Cells {
					if c.Latency == nil || c.Latency.Samples != SamplesRuns || c.Latency.P == nil {
						t.Fatalf("%s: runs 0..%d → %d..%d: %s/%s latency not decided on runs: %+v", dir, i, i+1, j, c.Model, c.Target, c.Latency)
					}
					decided++
				}
			}
		}
		t.Logf("%s: %d pairs of runs, %d cell comparisons on repeated runs, none a regression", dir, pairs, decided)
		if decided == 0 {
			t.Errorf("%s: no comparison on repeated runs was made", dir)
		}
	}
}

// TestRealSlowdownIsFlagged: the same cells, first with ONNX Runtime's session
// limited to one intra-op thread (HWTEST_THREADS=1), then with its default thread
// pool. On this shared 2-core machine the pool made detr, rag and whisper about 30%
// slower; silero-vad-v5's latency did not move.
func TestRealSlowdownIsFlagged(t *testing.T) {
	one, pool := runs(t, "threads1"), runs(t, "noise")
	last := func(rs []matrix.Matrix) matrix.Matrix { return rs[len(rs)-1] }
	for _, newRuns := range []int{len(pool), DefaultMinRuns} { // all ten, and the fewest decided
		r := Compare(last(one), pool[newRuns-1], Options{OldRuns: one[:len(one)-1], NewRuns: pool[:newRuns-1]})
		if !r.Regressed() {
			t.Errorf("%d new runs: the slowdown is not flagged:\n%s", newRuns, r.Markdown())
		}
		for _, model := range []string{"detr-resnet-50", "rag-token-nq", "whisper-tiny"} {
			l := cell(t, r, model, "cpu").Latency
			if l == nil || l.Verdict != Regressed || l.Samples != SamplesRuns || l.N1 != len(one) || l.N2 != newRuns || l.Change < 0.2 || *l.P >= DefaultAlpha {
				t.Errorf("%d new runs: %s/cpu latency: %+v", newRuns, model, l)
			}
		}
		c := cell(t, r, "silero-vad-v5", "cpu")
		if c.Latency == nil || c.Latency.Verdict != NoChange || c.Regressed() {
			t.Errorf("%d new runs: silero-vad-v5/cpu: %+v %+v", newRuns, c.Latency, c.Memory)
		}
		// The thread count is an option, not part of the key: it is shown, and the
		// latency is compared.
		if want := []Change{{Field: "intra_op_num_threads", From: "1", To: "(unset)"}}; !equalChanges(c.Options, want) || len(c.Key) != 0 {
			t.Errorf("silero-vad-v5/cpu options %+v key %+v, want options %+v", c.Options, c.Key, want)
		}
		// The wasm cells ran only in the second set.
		if len(r.OnlyNew) != 4 || !strings.HasSuffix(r.OnlyNew[0], "/wasm") {
			t.Errorf("only in new: %v", r.OnlyNew)
		}
	}

	// The other way round it is an improvement, not a regression.
	r := Compare(last(pool), last(one), Options{OldRuns: pool[:len(pool)-1], NewRuns: one[:len(one)-1]})
	if r.Regressed() {
		t.Errorf("a speed-up called a regression:\n%s", r.Markdown())
	}
	if l := cell(t, r, "whisper-tiny", "cpu").Latency; l.Verdict != Improved {
		t.Errorf("whisper-tiny/cpu the other way round: %+v", l)
	}

	// One run against one run: the change is shown with the blocks' p-value, and
	// left undecided.
	r = Compare(last(one), last(pool), Options{})
	l := cell(t, r, "whisper-tiny", "cpu").Latency
	if r.Regressed() || l.Verdict != Undecided || l.Samples != SamplesBlocks || l.N1 != 10 || l.P == nil || l.Note == "" {
		t.Errorf("one run a side: regressed=%v, whisper-tiny/cpu latency %+v", r.Regressed(), l)
	}
}

func TestStatusChange(t *testing.T) {
	base, mismatch := load(t, "scenarios/base.json"), load(t, "scenarios/mismatch.json")
	r := Compare(base, mismatch, Options{})
	s := cell(t, r, "silero-vad-v5", "cpu").Status
	if s == nil || s.From != result.StatusPass || s.To != result.StatusMismatch || !s.Regressed || s.NewlyUnavailable || !strings.Contains(s.Reason, "outputs differ from the CPU reference") {
		t.Fatalf("cpu status: %+v", s)
	}
	if !r.Regressed() {
		t.Error("pass → mismatch is not a regression")
	}
	for _, target := range []string{"wasm", "webgpu"} {
		if c := cell(t, r, "silero-vad-v5", target); c.Status != nil {
			t.Errorf("%s status changed: %+v", target, c.Status)
		}
	}
	// Back to pass is no regression.
	back := Compare(mismatch, base, Options{})
	if s := cell(t, back, "silero-vad-v5", "cpu").Status; s == nil || s.Regressed || back.Regressed() {
		t.Errorf("mismatch → pass: %+v", s)
	}
}

func TestKeyChange(t *testing.T) {
	// The same model id, its file replaced (silero_vad_v5.onnx → _v6.onnx).
	r := Compare(load(t, "scenarios/base.json"), load(t, "scenarios/keychange.json"), Options{})
	want := []Change{{Field: "model sha256",
		From: "2623a2953f6ff3d2c1e61740c6cdb7168133479b267dfef114a4a3cc5bdd788f",
		To:   "1a153a22f4509e292a94e67d6f9b85e8deb25b4988682b7e174c65279d8788e3"}}
	for _, c := range r.Cells {
		if !equalChanges(c.Key, want) || c.Latency != nil || c.Memory != nil || !strings.HasPrefix(c.NotCompared, "key changed") {
			t.Errorf("%s: key %+v latency %+v memory %+v (%s)", c.Target, c.Key, c.Latency, c.Memory, c.NotCompared)
		}
	}
	if r.Regressed() {
		t.Error("a key change alone is called a regression")
	}
	if md := string(r.Markdown()); !strings.Contains(md, "key changed: model sha256 2623a295…→1a153a22…") {
		t.Errorf("markdown does not name the key change:\n%s", md)
	}

	// A repeated run counts only under the same key: of these three, the run of
	// the other file is left out (the mismatch run measured the same cpu cell).
	base := load(t, "scenarios/base.json")
	r = Compare(base, base, Options{OldRuns: []matrix.Matrix{
		load(t, "scenarios/keychange.json"), load(t, "scenarios/unavailable.json"), load(t, "scenarios/mismatch.json")}})
	if l := cell(t, r, "silero-vad-v5", "cpu").Latency; l == nil || l.RunsOld != 3 || l.RunsNew != 1 || l.Samples != SamplesBlocks {
		t.Errorf("cpu latency: %+v", l)
	}
}

func TestNewlyUnavailable(t *testing.T) {
	// A machine whose .hwtest has no onnxruntime-web: the browser targets' probe
	// fails.
	r := Compare(load(t, "scenarios/base.json"), load(t, "scenarios/unavailable.json"), Options{})
	for target, from := range map[string]result.Status{"wasm": result.StatusPass, "webgpu": result.StatusPartial} {
		c := cell(t, r, "silero-vad-v5", target)
		s := c.Status
		if s == nil || s.From != from || s.To != result.StatusUnavailable || !s.NewlyUnavailable || !s.Regressed ||
			!strings.Contains(s.Reason, "onnxruntime-web dist missing") {
			t.Errorf("%s status: %+v", target, s)
		}
		if c.Latency != nil || c.Placement != nil {
			t.Errorf("%s: an unavailable cell compared latency %+v or placement %+v", target, c.Latency, c.Placement)
		}
	}
	if c := cell(t, r, "silero-vad-v5", "cpu"); c.Status != nil || c.Regressed() {
		t.Errorf("cpu: %+v", c)
	}
	if !r.Regressed() {
		t.Error("newly unavailable is not a regression")
	}
	// And back: a target that runs again (webgpu partial) is coverage regained.
	back := Compare(load(t, "scenarios/unavailable.json"), load(t, "scenarios/base.json"), Options{})
	if c := cell(t, back, "silero-vad-v5", "webgpu"); c.Status == nil || c.Status.Regressed || back.Regressed() {
		t.Errorf("unavailable → partial: %+v", c.Status)
	}
}

func equalChanges(a, b []Change) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestMarkdown pins the rendering of a real slowdown and a status change.
func TestMarkdown(t *testing.T) {
	one, pool := runs(t, "threads1"), runs(t, "noise")
	cases := map[string]Report{
		"slowdown.md": Compare(one[9], pool[9], Options{OldRuns: one[:9], NewRuns: pool[:9]}),
		"status.md":   Compare(load(t, "scenarios/base.json"), load(t, "scenarios/unavailable.json"), Options{}),
	}
	for name, r := range cases {
		golden(t, name, r.Markdown())
	}
}

func TestJSON(t *testing.T) {
	one, pool := runs(t, "threads1"), runs(t, "noise")
	r := Compare(one[9], pool[9], Options{OldRuns: one[:9], NewRuns: pool[:9]})
	data, err := r.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if !back.Regressed() || back.Options.Alpha != DefaultAlpha || back.Options.MinEffect != DefaultMinEffect || back.New.Runs != 10 {
		t.Errorf("decoded report: regressed=%v options=%+v new=%+v", back.Regressed(), back.Options, back.New)
	}
	for _, want := range []string{`"verdict": "regressed"`, `"samples": "runs"`, `"p": `} {
		if !bytes.Contains(data, []byte(want)) {
			t.Errorf("JSON lacks %s", want)
		}
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (go test ./diff -update rewrites it):\n--- want\n%s\n--- got\n%s", name, want, got)
	}
}

// TestPlacementMoved checks the comparison's logic on hand-built placements: no run
// here moved a cell's nodes (silero v5, v6 and a 64-frame batch all put 143 of 226
// nodes on WebGPU (JSEP) and 15 partitions on WebNN), so there is no recorded move.
func TestPlacementMoved(t *testing.T) {
	const jsep, cpu, webnn = "JsExecutionProvider", "CPUExecutionProvider", "WebNNExecutionProvider"
	cellWith := func(provider string, shares map[string]result.ProviderShare) matrix.Cell {
		n := 0
		for _, s := range shares {
			n += s.Nodes
		}
		return matrix.Cell{Provenance: &result.Provenance{Provider: provider},
			Placement: &result.Placement{Nodes: n, TimeUS: 1000, ByProvider: shares}}
	}
	before := cellWith(jsep, map[string]result.ProviderShare{jsep: {Nodes: 143, TimeUS: 700}, cpu: {Nodes: 83, TimeUS: 300}})
	fewer := cellWith(jsep, map[string]result.ProviderShare{jsep: {Nodes: 100, TimeUS: 700}, cpu: {Nodes: 126, TimeUS: 300}})
	timeOnly := cellWith(jsep, map[string]result.ProviderShare{jsep: {Nodes: 143, TimeUS: 500}, cpu: {Nodes: 83, TimeUS: 500}})

	if p := comparePlacement(before, timeOnly); p != nil {
		t.Errorf("kernel time alone moved the placement: %+v", p)
	}
	p := comparePlacement(before, fewer)
	if p == nil || !p.Regressed || p.From != "63% of 226 nodes (70% of kernel time) on WebGPU (JSEP), the rest on CPU" || p.To != "44% of 226 nodes (70% of kernel time) on WebGPU (JSEP), the rest on CPU" {
		t.Errorf("fewer nodes on the EP: %+v", p)
	}
	if p := comparePlacement(fewer, before); p == nil || p.Regressed {
		t.Errorf("more nodes on the EP: %+v", p)
	}
	// WebNN logs compiled partitions, not the nodes inside: more nodes left to the
	// CPU is the regression.
	wBefore := cellWith(webnn, map[string]result.ProviderShare{webnn: {Nodes: 15, Partitions: 15}, cpu: {Nodes: 171}})
	wAfter := cellWith(webnn, map[string]result.ProviderShare{webnn: {Nodes: 12, Partitions: 12}, cpu: {Nodes: 180}})
	if p := comparePlacement(wBefore, wAfter); p == nil || !p.Regressed {
		t.Errorf("webnn, more nodes on the CPU: %+v", p)
	}
	if p := comparePlacement(wAfter, wBefore); p == nil || p.Regressed {
		t.Errorf("webnn, fewer nodes on the CPU: %+v", p)
	}
}

// An older hwtest called a cell whose EP took no node partial; the same cell now
// reads cpu-only (mamba-130m on webnn, no WebNN partition in either run, both real
// runs). That is a new name for the same placement, not a regression; a cell that
// did run on its EP and now runs on the CPU is one.
func TestPartialRenamedCPUOnly(t *testing.T) {
	old := readRun(t, "../internal/histtest/testdata/full/20261123T193216Z-9bfa42.json")
	now := readRun(t, "../cmd/hwtest/testdata/history/cpu-only.json")
	r := Compare(old, now, Options{})
	s := cell(t, r, "mamba-130m", "webnn").Status
	if s == nil || s.From != result.StatusPartial || s.To != result.StatusCPUOnly || s.Regressed {
		t.Errorf("partial with no node on WebNN → cpu-only: %+v, want a change that is not a regression", s)
	}
	// The same cell had it been a pass before (every node on WebNN): regressed.
	for i, c := range old.Cells {
		if c.Model == "mamba-130m" && c.Target == "webnn" {
			old.Cells[i].Status = result.StatusPass
			old.Cells[i].Placement = &result.Placement{EP: "WebNNExecutionProvider", Nodes: 1,
				ByProvider: map[string]result.ProviderShare{"WebNNExecutionProvider": {Nodes: 1, Partitions: 1}}}
		}
	}
	if s := cell(t, Compare(old, now, Options{}), "mamba-130m", "webnn").Status; s == nil || !s.Regressed {
		t.Errorf("pass on WebNN → cpu-only: %+v, want a regression", s)
	}
}

func readRun(t *testing.T, path string) matrix.Matrix {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m matrix.Matrix
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}
