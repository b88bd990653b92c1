package matrix

import (
	"bytes"
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hwtest/hwtest/result"
	"github.com/onsi/ginkgo/v2/types"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

var (
	t0      = time.Date(2026, 11, 21, 9, 35, 44, 0, time.UTC)
	catalog = []string{"cpu", "cuda", "tensorrt"}
	checks  = []string{"measures load, latency and memory", "agrees with the CPU reference", "gives probabilities in [0, 1]"}
)

func prov(target string) *result.Provenance {
	p := &result.Provenance{
		ORTVersion: "1.30.0", ORTLibrary: "/opt/ort/libonnxruntime.so.1",
		ORTLibSHA256: "ffb75a925ba05e47b235bb66e3e3911714a80b328a9c9425539feb204aa32a23",
		Provider:     map[string]string{"cpu": "CPUExecutionProvider", "cuda": "CUDAExecutionProvider"}[target],
		HostCPU:      "AMD EPYC (2 cores, linux/amd64)", Time: t0,
	}
	if target == "cuda" {
		p.Device, p.Driver = "NVIDIA H100 80GB HBM3", "550.54.15"
	}
	return p
}

func entry(model, target, check string, status result.Status, reason string) result.CellReport {
	return result.CellReport{Model: model, Family: "audio", Target: target, Check: check,
		Status: status, Reason: reason, Provenance: prov(target)}
}

func metrics(p50 float64) *result.Metrics {
	return &result.Metrics{LoadMS: 135.9, FirstRunMS: 0.462, Runs: 500, WarmupRuns: 10,
		MinMS: p50 * 0.8, P50MS: p50, P90MS: p50 * 1.5, P95MS: p50 * 1.7, P99MS: p50 * 3, MaxMS: p50 * 10,
		MeanMS: p50 * 1.2, ThroughputPerS: 1000 / (p50 * 1.2), Batch: 1,
		PeakRSSBytes: 130 << 20, BaseRSSBytes: 77 << 20, ModelPeakBytes: 53 << 20}
}

// spec builds the report of one It of a generated suite's cell.
func spec(model, target, leaf string, state types.SpecState, entries ...result.CellReport) types.SpecReport {
	s := types.SpecReport{
		ContainerHierarchyTexts:  []string{model, target},
		ContainerHierarchyLabels: [][]string{{"model:" + model, "family:audio"}, {"hw:" + target}},
		LeafNodeType:             types.NodeTypeIt,
		LeafNodeText:             leaf,
		LeafNodeLabels:           []string{},
		IsInOrderedContainer:     true,
		State:                    state,
		StartTime:                t0,
		EndTime:                  t0.Add(time.Second),
	}
	for _, e := range entries {
		s.ReportEntries = append(s.ReportEntries, types.ReportEntry{
			Name: result.ReportEntryName, Value: types.WrapEntryValue(e),
			Visibility: types.ReportEntryVisibilityNever, Time: t0,
		})
	}
	return s
}

func failed(s types.SpecReport, state types.SpecState, msg string, node types.NodeType) types.SpecReport {
	s.State = state
	s.Failure = types.Failure{Message: msg, FailureNodeType: node,
		Location: types.CodeLocation{FileName: "/src/generated/audio/x_test.go", LineNumber: 42}}
	return s
}

func skipped(s types.SpecReport, msg string) types.SpecReport {
	s.State = types.SpecStateSkipped
	if msg != "" {
		s.Failure = types.Failure{Message: msg, FailureNodeType: types.NodeTypeBeforeAll}
	}
	return s
}

// passing is a whole cell that passed: open and measure in the first spec, one
// invariant in each of the others.
func passing(model, target string, p50 float64) []types.SpecReport {
	measure := entry(model, target, "measure", result.StatusPass, "")
	measure.Metrics = metrics(p50)
	return []types.SpecReport{
		spec(model, target, checks[0], types.SpecStatePassed, entry(model, target, "open", result.StatusPass, ""), measure),
		spec(model, target, checks[1], types.SpecStatePassed, entry(model, target, checks[1], result.StatusPass, "")),
		spec(model, target, checks[2], types.SpecStatePassed, entry(model, target, checks[2], result.StatusPass, "")),
	}
}

// unavailable is a cell whose BeforeAll skipped: the first spec holds the entry, the
// others were skipped by Ginkgo.
func unavailable(model, target, reason string) []types.SpecReport {
	return []types.SpecReport{
		skipped(spec(model, target, checks[0], 0, entry(model, target, "open", result.StatusUnavailable, reason)), "unavailable: "+reason),
		skipped(spec(model, target, checks[1], 0), ""),
		skipped(spec(model, target, checks[2], 0), ""),
	}
}

// filtered is a cell the label filter left out.
func filtered(model, target string) []types.SpecReport {
	return []types.SpecReport{
		skipped(spec(model, target, checks[0], 0), ""),
		skipped(spec(model, target, checks[1], 0), ""),
		skipped(spec(model, target, checks[2], 0), ""),
	}
}

func suite(specs ...[]types.SpecReport) types.Report {
	r := types.Report{
		SuitePath: "/src/generated/audio", SuiteDescription: "audio", SuiteSucceeded: true,
		StartTime: t0, EndTime: t0.Add(3 * time.Second),
		SuiteConfig: types.SuiteConfig{LabelFilter: "hw:cpu || hw:cuda"},
	}
	for _, s := range specs {
		r.SpecReports = append(r.SpecReports, s...)
		for _, sp := range s {
			if sp.State.Is(types.SpecStateFailureStates) {
				r.SuiteSucceeded = false
			}
		}
	}
	return r
}

// roundTrip passes reports through JSON as `ginkgo --json-report` and ReadReports
// do, so entries arrive as AsJSON.
func roundTrip(t *testing.T, reports ...types.Report) []types.Report {
	t.Helper()
	data, err := json.Marshal(reports)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "report.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := ReadReports(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range out {
		for _, s := range r.SpecReports {
			for _, e := range s.ReportEntries {
				if e.Value.AsJSON == "" {
					t.Fatalf("entry of %q has no AsJSON after the round trip", s.FullText())
				}
			}
		}
	}
	return out
}

func cellAt(t *testing.T, m Matrix, model, target string) Cell {
	t.Helper()
	for _, c := range m.Cells {
		if c.Model == model && c.Target == target {
			return c
		}
	}
	t.Fatalf("no cell %s/%s in %+v", model, target, m.Cells)
	return Cell{}
}

func noCell(t *testing.T, m Matrix, model, target string) {
	t.Helper()
	for _, c := range m.Cells {
		if c.Model == model && c.Target == target {
			t.Fatalf("cell %s/%s should not be in the matrix: %+v", model, target, c)
		}
	}
}

func wantStatus(t *testing.T, c Cell, s result.Status, reasonHas string) {
	t.Helper()
	if c.Status != s {
		t.Errorf("%s/%s: status %q, want %q (reason %q)", c.Model, c.Target, c.Status, s, c.Reason)
	}
	if !strings.Contains(c.Reason, reasonHas) {
		t.Errorf("%s/%s: reason %q, want it to contain %q", c.Model, c.Target, c.Reason, reasonHas)
	}
}

func TestAllPass(t *testing.T) {
	reports := roundTrip(t, suite(passing("vad", "cpu", 0.109), passing("vad", "cuda", 0.05), filtered("vad", "tensorrt")))
	m := FromReports(reports, nil, []string{"vad"}, catalog)
	if len(m.Cells) != 2 {
		t.Fatalf("cells: %+v", m.Cells)
	}
	c := cellAt(t, m, "vad", "cpu")
	wantStatus(t, c, result.StatusPass, "")
	if c.Reason != "" || c.Family != "audio" || c.Metrics == nil || c.Metrics.P50MS != 0.109 || c.Provenance == nil {
		t.Errorf("cell: %+v", c)
	}
	if len(c.Checks) != 4 || c.Checks[0].Name != "open" || c.Checks[1].Name != "measure" {
		t.Errorf("checks: %+v", c.Checks)
	}
	noCell(t, m, "vad", "tensorrt")
	if m.Summary[result.StatusPass] != 2 || len(m.Summary) != 1 {
		t.Errorf("summary: %v", m.Summary)
	}
	if !m.Generated.Equal(t0.Add(3*time.Second)) || len(m.Environment.HostCPU) != 1 || m.Environment.ORTVersion[0] != "1.30.0" {
		t.Errorf("generated %v, environment %+v", m.Generated, m.Environment)
	}
	if len(m.Problems) != 0 {
		t.Errorf("problems: %q", m.Problems)
	}
	if md := string(m.Markdown()); !strings.Contains(md, "| vad | pass · 0.109 ms · 130 MiB | pass · 0.050 ms · 130 MiB |") ||
		!strings.Contains(md, "Not run on any model: tensorrt.") {
		t.Errorf("markdown:\n%s", md)
	}
}

func TestInProcessEntries(t *testing.T) {
	// Without the JSON round trip the entry values are the CellReports themselves.
	m := FromReports([]types.Report{suite(passing("vad", "cpu", 0.1))}, nil, nil, nil)
	wantStatus(t, cellAt(t, m, "vad", "cpu"), result.StatusPass, "")
	if len(m.Models) != 1 || len(m.Targets) != 1 {
		t.Errorf("models %q targets %q", m.Models, m.Targets)
	}
}

func TestUnavailable(t *testing.T) {
	reason := "CUDAExecutionProvider: libonnxruntime_providers_cuda.so not found"
	m := FromReports(roundTrip(t, suite(unavailable("vad", "cuda", reason))), nil, []string{"vad"}, catalog)
	c := cellAt(t, m, "vad", "cuda")
	wantStatus(t, c, result.StatusUnavailable, reason)
	if c.Metrics != nil || len(c.Checks) != 1 {
		t.Errorf("cell: %+v", c)
	}
}

func TestMismatchKeepsWorstDeviation(t *testing.T) {
	specs := passing("vad", "cuda", 0.05)
	small := &result.Deviation{Output: "output", Index: 3, Got: 0.51, Want: 0.5, AbsErr: 0.01, Allowed: 0.005}
	big := &result.Deviation{Output: "stateN", Index: 7, Got: 1.5, Want: 0.5, AbsErr: 1, Allowed: 0.0006}
	e1 := entry("vad", "cuda", checks[1], result.StatusMismatch, "outputs differ from the CPU reference: "+small.String())
	e1.Worst = small
	e2 := entry("vad", "cuda", checks[2], result.StatusMismatch, "state differs: "+big.String())
	e2.Worst = big
	specs[1] = failed(spec("vad", "cuda", checks[1], 0, e1), types.SpecStateFailed, "mismatch: outputs differ", types.NodeTypeIt)
	specs[2] = failed(spec("vad", "cuda", checks[2], 0, e2), types.SpecStateFailed, "mismatch: state differs", types.NodeTypeIt)
	m := FromReports(roundTrip(t, suite(specs)), nil, nil, nil)
	c := cellAt(t, m, "vad", "cuda")
	wantStatus(t, c, result.StatusMismatch, "outputs differ from the CPU reference")
	if c.Worst == nil || *c.Worst != *big {
		t.Errorf("worst: %+v, want %+v", c.Worst, big)
	}
	if c.Metrics == nil {
		t.Error("a mismatching cell keeps its measurements")
	}
	// The spec failures are explained by their entries: no extra error checks.
	if len(c.Checks) != 4 {
		t.Errorf("checks: %+v", c.Checks)
	}
}

func TestFailedSpecWithoutEntryIsError(t *testing.T) {
	cpu := passing("vad", "cpu", 0.1)
	cpu[2] = failed(spec("vad", "cpu", checks[2], 0), types.SpecStateFailed, "Expected\n    <float64>: 2\nto be <= 1", types.NodeTypeIt)
	cuda := passing("vad", "cuda", 0.1)
	cuda[1] = failed(spec("vad", "cuda", checks[1], 0), types.SpecStatePanicked, "Test Panicked", types.NodeTypeIt)
	cuda[1].Failure.ForwardedPanic = "runtime error: index out of range [3] with length 3"
	cuda[2] = skipped(spec("vad", "cuda", checks[2], 0), "")
	m := FromReports(roundTrip(t, suite(cpu, cuda)), nil, nil, nil)
	c := cellAt(t, m, "vad", "cpu")
	wantStatus(t, c, result.StatusError, "failed: Expected\n    <float64>: 2\nto be <= 1")
	if last := c.Checks[len(c.Checks)-1]; last.Name != checks[2] || last.Status != result.StatusError {
		t.Errorf("checks: %+v", c.Checks)
	}
	wantStatus(t, cellAt(t, m, "vad", "cuda"), result.StatusError, "panicked: Test Panicked: runtime error: index out of range")
}

func TestAfterAllFailureAfterPassIsError(t *testing.T) {
	specs := passing("vad", "cpu", 0.1)
	specs[2] = failed(specs[2], types.SpecStateFailed, "closing the session: boom", types.NodeTypeAfterAll)
	c := cellAt(t, FromReports(roundTrip(t, suite(specs)), nil, nil, nil), "vad", "cpu")
	wantStatus(t, c, result.StatusError, "closing the session: boom")
	if c.Checks[len(c.Checks)-1].Name != CheckClose {
		t.Errorf("checks: %+v", c.Checks)
	}
}

func TestIncompleteCellIsNotAPass(t *testing.T) {
	// --focus ran one invariant: BeforeAll opened the cell, but nothing measured it.
	specs := []types.SpecReport{
		skipped(spec("vad", "cpu", checks[0], 0), ""),
		spec("vad", "cpu", checks[1], types.SpecStatePassed,
			entry("vad", "cpu", "open", result.StatusPass, ""), entry("vad", "cpu", checks[1], result.StatusPass, "")),
		skipped(spec("vad", "cpu", checks[2], 0), ""),
	}
	c := cellAt(t, FromReports(roundTrip(t, suite(specs)), nil, nil, nil), "vad", "cpu")
	wantStatus(t, c, result.StatusError, "incomplete: no result for measure, "+checks[0]+", "+checks[2])
}

func TestProcessFailure(t *testing.T) {
	crash := ProcessFailure{Model: "vad", Err: "signal: segmentation fault (core dumped)",
		Stderr: "SIGSEGV: segmentation violation\nPC=0x7f3a pc=0x7f3a\n"}
	// No report at all for the crashed model; another model ran fine.
	m := FromReports(roundTrip(t, suite(passing("kws", "cpu", 0.2))), []ProcessFailure{crash},
		[]string{"vad", "kws"}, []string{"cpu", "cuda"})
	for _, target := range []string{"cpu", "cuda"} {
		c := cellAt(t, m, "vad", target)
		wantStatus(t, c, result.StatusError, "suite process failed: signal: segmentation fault (core dumped)\nstderr:\nSIGSEGV")
		if len(c.Checks) != 1 || c.Checks[0].Name != CheckProcess {
			t.Errorf("checks: %+v", c.Checks)
		}
	}
	wantStatus(t, cellAt(t, m, "kws", "cpu"), result.StatusPass, "")
	noCell(t, m, "kws", "cuda")
	if m.Summary[result.StatusError] != 2 || m.Summary[result.StatusPass] != 1 {
		t.Errorf("summary: %v", m.Summary)
	}

	// A crash in the middle of a cell: the cells already complete keep their
	// result, the one that was running and those after it are errors.
	open := []types.SpecReport{spec("vad", "cuda", checks[0], types.SpecStatePassed, entry("vad", "cuda", "open", result.StatusPass, ""))}
	m = FromReports(roundTrip(t, suite(passing("vad", "cpu", 0.1), open)), []ProcessFailure{crash},
		[]string{"vad"}, []string{"cpu", "cuda", "tensorrt"})
	wantStatus(t, cellAt(t, m, "vad", "cpu"), result.StatusPass, "")
	c := cellAt(t, m, "vad", "cuda")
	wantStatus(t, c, result.StatusError, "segmentation fault")
	if c.Family != "audio" {
		t.Errorf("family %q", c.Family)
	}
	wantStatus(t, cellAt(t, m, "vad", "tensorrt"), result.StatusError, "segmentation fault")

	// An unknown model in the failures is still reported, after the catalog's.
	m = FromReports(nil, []ProcessFailure{{Model: "zzz", Err: "timeout after 10m"}}, []string{"vad"}, []string{"cpu"})
	if len(m.Models) != 2 || m.Models[1] != "zzz" {
		t.Errorf("models %q", m.Models)
	}
	wantStatus(t, cellAt(t, m, "zzz", "cpu"), result.StatusError, "timeout after 10m")

	// A process that was to run some targets only fails those.
	m = FromReports(nil, []ProcessFailure{{Model: "vad", Err: "killed", Targets: []string{"cuda"}}}, []string{"vad"}, catalog)
	if len(m.Cells) != 1 {
		t.Errorf("cells: %+v", m.Cells)
	}
	wantStatus(t, cellAt(t, m, "vad", "cuda"), result.StatusError, "killed")
	if got := m.SummaryLine(); got != "1 error (1 cell)" {
		t.Errorf("summary line %q", got)
	}
}

func TestExpectedFail(t *testing.T) {
	reason := "creating a CoreMLExecutionProvider session: unsupported op (declared: LSTM unsupported)"
	specs := []types.SpecReport{
		skipped(spec("vad", "cuda", checks[0], 0, entry("vad", "cuda", "open", result.StatusExpectedFail, reason)), "expected-fail: unsupported op"),
		skipped(spec("vad", "cuda", checks[1], 0), ""),
		skipped(spec("vad", "cuda", checks[2], 0), ""),
	}
	// An expect-fail target that passed is a pass, flagged.
	flagged := passing("vad", "cpu", 0.1)
	flag := "unexpected pass: hardware.yaml declares this family incompatible with cpu: why"
	flagged[0].ReportEntries[0].Value = types.WrapEntryValue(entry("vad", "cpu", "open", result.StatusPass, flag))
	m := FromReports(roundTrip(t, suite(specs, flagged)), nil, nil, nil)
	wantStatus(t, cellAt(t, m, "vad", "cuda"), result.StatusExpectedFail, reason)
	c := cellAt(t, m, "vad", "cpu")
	wantStatus(t, c, result.StatusPass, flag)
	if md := string(m.Markdown()); !strings.Contains(md, "| cpu | pass ⚠ |") {
		t.Errorf("unexpected pass not flagged:\n%s", md)
	}
}

func TestFallbackIsNotAPassOfTheTargetAskedFor(t *testing.T) {
	specs := passing("vad", "cuda", 0.1)
	for i := range specs {
		for j := range specs[i].ReportEntries {
			e := specs[i].ReportEntries[j].Value.GetRawValue().(result.CellReport)
			e.Fallback = "cuda → cpu"
			specs[i].ReportEntries[j].Value = types.WrapEntryValue(e)
		}
	}
	c := cellAt(t, FromReports(roundTrip(t, suite(specs)), nil, nil, nil), "vad", "cuda")
	wantStatus(t, c, result.StatusUnavailable, "fallback")
	if c.Fallback != "cuda → cpu" {
		t.Errorf("fallback %q", c.Fallback)
	}
}

func TestSuiteStoppedEarly(t *testing.T) {
	before := types.SpecReport{LeafNodeType: types.NodeTypeBeforeSuite, State: types.SpecStateFailed,
		Failure: types.Failure{Message: "cannot load libonnxruntime.so"}}
	r := suite([]types.SpecReport{before}, filtered("vad", "cpu"), filtered("vad", "tensorrt"))
	r.SuiteSucceeded = false
	m := FromReports(roundTrip(t, r), nil, nil, nil)
	wantStatus(t, cellAt(t, m, "vad", "cpu"), result.StatusError, "did not run: BeforeSuite failed: cannot load libonnxruntime.so")
	noCell(t, m, "vad", "tensorrt") // not selected by the label filter
	if len(m.Problems) != 1 || !strings.Contains(m.Problems[0], "cannot load libonnxruntime.so") {
		t.Errorf("problems: %q", m.Problems)
	}

	// --fail-fast: a failure, then the selected cells after it were skipped.
	cpu := passing("vad", "cpu", 0.1)
	cpu[2] = failed(spec("vad", "cpu", checks[2], 0), types.SpecStateFailed, "boom", types.NodeTypeIt)
	m = FromReports(roundTrip(t, suite(cpu, filtered("vad", "cuda"), filtered("vad", "tensorrt"))), nil, nil, nil)
	wantStatus(t, cellAt(t, m, "vad", "cpu"), result.StatusError, "boom")
	wantStatus(t, cellAt(t, m, "vad", "cuda"), result.StatusError, "did not run: the suite failed and stopped before this cell ran")
	noCell(t, m, "vad", "tensorrt")
	if len(m.Problems) != 0 {
		t.Errorf("problems: %q", m.Problems)
	}
}

func TestMarkdownEscapesReasons(t *testing.T) {
	reason := "bad | column\nsecond line <nil>"
	specs := passing("vad", "cpu", 0.1)
	specs[1] = failed(spec("vad", "cpu", checks[1], 0, entry("vad", "cpu", checks[1], result.StatusError, reason)),
		types.SpecStateFailed, "error: "+reason, types.NodeTypeIt)
	md := string(FromReports(roundTrip(t, suite(specs)), nil, nil, nil).Markdown())
	want := `agrees with the CPU reference: bad \| column<br>second line &lt;nil&gt; |`
	if !strings.Contains(md, want) {
		t.Errorf("markdown lacks %q:\n%s", want, md)
	}
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "| cpu |") && strings.Count(strings.ReplaceAll(line, `\|`, ""), "|") != 12 {
			t.Errorf("row has a broken column count: %s", line)
		}
	}
}

// mixed has one cell of every kind, for the golden files.
func mixed(t *testing.T) Matrix {
	tiny := passing("tiny-vad", "cpu", 0.0123)
	for i := range tiny {
		for j := range tiny[i].ReportEntries {
			e := tiny[i].ReportEntries[j].Value.GetRawValue().(result.CellReport)
			e.Fixture = "tiny-random"
			tiny[i].ReportEntries[j].Value = types.WrapEntryValue(e)
		}
	}
	mismatch := passing("vad", "cuda", 0.05)
	worst := &result.Deviation{Output: "output", Index: 3, Got: 0.51, Want: 0.5, AbsErr: 0.01, Allowed: 0.0006}
	e := entry("vad", "cuda", checks[1], result.StatusMismatch, "outputs differ from the CPU reference: "+worst.String())
	e.Worst = worst
	mismatch[1] = failed(spec("vad", "cuda", checks[1], 0, e), types.SpecStateFailed, "mismatch", types.NodeTypeIt)
	panicked := passing("kws", "cpu", 1.5)
	panicked[2] = failed(spec("kws", "cpu", checks[2], 0), types.SpecStatePanicked, "Test Panicked", types.NodeTypeIt)
	panicked[2].Failure.ForwardedPanic = "nil map | write\nat line 3"
	expected := []types.SpecReport{
		skipped(spec("kws", "cuda", checks[0], 0, entry("kws", "cuda", "open", result.StatusExpectedFail,
			"creating a CUDAExecutionProvider session: Loop not supported (declared: kws uses Loop)")), "expected-fail"),
		skipped(spec("kws", "cuda", checks[1], 0), ""),
		skipped(spec("kws", "cuda", checks[2], 0), ""),
	}
	partial := passing("kws", "tensorrt", 2.5)
	partial[0].ReportEntries[0].Value = types.WrapEntryValue(entry("kws", "tensorrt", "open", result.StatusPartial, "12% of nodes (30% of time) ran on CPUExecutionProvider"))
	unexpected := passing("tiny-vad", "tensorrt", 0.02)
	unexpected[0].ReportEntries[0].Value = types.WrapEntryValue(entry("tiny-vad", "tensorrt", "open", result.StatusPass,
		"unexpected pass: hardware.yaml declares this family incompatible with tensorrt: LSTM"))
	r := suite(
		passing("vad", "cpu", 0.109), mismatch, filtered("vad", "tensorrt"),
		tiny, unavailable("tiny-vad", "cuda", "CUDAExecutionProvider: libcudart.so.12: cannot open shared object file"), unexpected,
		panicked, expected, partial,
	)
	crash := ProcessFailure{Model: "asr", Err: "exit status 2", Stderr: "fatal error: unexpected signal during runtime execution\n[signal SIGSEGV]"}
	return FromReports(roundTrip(t, r), []ProcessFailure{crash}, []string{"vad", "tiny-vad", "kws", "asr", "idle"}, []string{"cpu", "cuda", "tensorrt"})
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
		t.Fatalf("%v (run go test ./matrix/ -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test ./matrix/ -update to accept):\n%s", path, got)
	}
}

func TestGoldenMixed(t *testing.T) {
	m := mixed(t)
	wantStatus(t, cellAt(t, m, "asr", "tensorrt"), result.StatusError, "exit status 2")
	md := m.Markdown()
	if !bytes.Equal(md, mixed(t).Markdown()) {
		t.Error("markdown is not deterministic")
	}
	golden(t, "mixed.md", md)
	js, err := m.JSON()
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "mixed.json", js)
	var back Matrix
	if err := json.Unmarshal(js, &back); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(back.Markdown(), md) {
		t.Error("the matrix does not survive its own JSON")
	}
}

// TestRealReport reads a trimmed report of a real run:
// HWTEST_MEASURE_TIME=100ms ginkgo --label-filter='hw:cpu || hw:cuda' --json-report=… ./generated/audio
// on a machine without CUDA.
func TestRealReport(t *testing.T) {
	reports, err := ReadReports("testdata/real-audio-report.json")
	if err != nil {
		t.Fatal(err)
	}
	models := []string{"silero-vad-v5", "silero-vad-v6"}
	m := FromReports(reports, nil, models, catalog)
	if len(m.Cells) != 4 {
		t.Fatalf("cells: %+v", m.Cells)
	}
	for _, model := range models {
		c := cellAt(t, m, model, "cpu")
		wantStatus(t, c, result.StatusPass, "")
		if c.Metrics == nil || c.Metrics.P50MS <= 0 || c.Metrics.PeakRSSBytes <= 0 || len(c.Checks) != 5 {
			t.Errorf("cpu cell: %+v", c)
		}
		wantStatus(t, cellAt(t, m, model, "cuda"), result.StatusUnavailable, "CUDAExecutionProvider")
		noCell(t, m, model, "tensorrt")
	}
	if len(m.Problems) != 0 || m.Environment.ORTVersion[0] == "" || m.Environment.ORTLibrarySHA256[0] == "" {
		t.Errorf("problems %q, environment %+v", m.Problems, m.Environment)
	}
	// Wall times, read off the report: the first spec's start to the last's end;
	// specs that never ended (skipped after the unavailable open) do not count.
	for cell, want := range map[[2]string]float64{
		{"silero-vad-v6", "cpu"}:  465.963877, // 09:35:44.847621067 → 09:35:45.313584944
		{"silero-vad-v5", "cpu"}:  368.307713, // 09:35:45.314351782 → 09:35:45.682659495
		{"silero-vad-v6", "cuda"}: 0.43835,    // its open alone
	} {
		if got := cellAt(t, m, cell[0], cell[1]).WallMS; math.Abs(got-want) > 1e-6 {
			t.Errorf("%s/%s took %v ms, want %v", cell[0], cell[1], got, want)
		}
	}
	golden(t, "real-audio.md", m.Markdown())
}

func TestReadReportsErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct{ path, want string }{
		{filepath.Join(dir, "missing.json"), "does not exist"},
		{write("empty.json", " \n"), "is empty"},
		{write("corrupt.json", `[{"SuitePath": "/x", "SpecReports": [`), "is not valid"},
		{write("other.json", `[{"hello": 1}]`), "not a ginkgo suite report"},
	} {
		_, err := ReadReports(write("good.json", `[{"SuitePath": "/x"}]`), tc.path)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.path) {
			t.Errorf("%s: error %v, want %q and the path", tc.path, err, tc.want)
		}
	}
	rs, err := ReadReports(write("one.json", `{"SuitePath": "/x"}`), write("two.json", `[{"SuitePath": "/y"}]`))
	if err != nil || len(rs) != 2 || rs[1].SuitePath != "/y" {
		t.Errorf("reports %+v, err %v", rs, err)
	}
}

func TestWrite(t *testing.T) {
	m := mixed(t)
	dir := filepath.Join(t.TempDir(), "out")
	if err := Write(dir, m); err != nil {
		t.Fatal(err)
	}
	if err := Write(dir, m); err != nil { // over existing files
		t.Fatal(err)
	}
	files, _ := os.ReadDir(dir)
	var names []string
	for _, f := range files {
		names = append(names, f.Name())
	}
	if strings.Join(names, " ") != "matrix.json matrix.md" {
		t.Errorf("files: %q", names)
	}
	md, _ := os.ReadFile(filepath.Join(dir, "matrix.md"))
	if !bytes.Equal(md, m.Markdown()) {
		t.Error("matrix.md is not the markdown")
	}
	js, _ := os.ReadFile(filepath.Join(dir, "matrix.json"))
	if want, _ := m.JSON(); !bytes.Equal(js, want) {
		t.Error("matrix.json is not the JSON")
	}
}

// TestRealGinkgoFailures reads testdata/failures-report.json, which Ginkgo wrote for
// testdata/fakesuite: one cell for each way a cell can end.
func TestRealGinkgoFailures(t *testing.T) {
	reports, err := ReadReports("testdata/failures-report.json")
	if err != nil {
		t.Fatal(err)
	}
	m := FromReports(reports, nil, []string{"m"}, nil)
	for target, want := range map[string]struct {
		status result.Status
		reason string
	}{
		"pass":      {result.StatusPass, ""},
		"unavail":   {result.StatusUnavailable, "no dev"},
		"openerr":   {result.StatusError, "boom"},
		"openpanic": {result.StatusError, "panicked: Test Panicked: assignment to entry in nil map"},
		"measpanic": {result.StatusError, "panicked: Test Panicked: measure | exploded\nline2"},
		"closefail": {result.StatusError, "failed: close failed"},
		"xfail":     {result.StatusExpectedFail, "declared"},
	} {
		wantStatus(t, cellAt(t, m, "m", target), want.status, want.reason)
	}
	noCell(t, m, "m", "filtered")
	if c := cellAt(t, m, "m", "openpanic"); c.Checks[0].Name != "open" {
		t.Errorf("a BeforeAll panic is the open check: %+v", c.Checks)
	}
	if c := cellAt(t, m, "m", "closefail"); c.Checks[len(c.Checks)-1].Name != CheckClose {
		t.Errorf("an AfterAll failure is the close check: %+v", c.Checks)
	}
	if len(m.Cells) != 7 || len(m.Problems) != 0 {
		t.Errorf("cells %d, problems %q", len(m.Cells), m.Problems)
	}
}

// An unstable cell stays a pass, and the matrix says its latency is not to be trusted.
func TestMarkdownFlagsUnstableCells(t *testing.T) {
	m := Matrix{Models: []string{"vad"}, Targets: []string{"cpu", "wasm"}, Cells: []Cell{
		{Model: "vad", Target: "cpu", Status: result.StatusPass, Metrics: &result.Metrics{P50MS: 0.1, BlockCoV: 0.09, Unstable: "the medians vary"}},
		{Model: "vad", Target: "wasm", Status: result.StatusPass, Metrics: &result.Metrics{P50MS: 0.2, BlockCoV: 0.01}},
	}}
	md := string(m.Markdown())
	for _, want := range []string{"| cpu | pass |", "| 0.100 ⚠ unstable |", "pass · 0.100 ms · ⚠ unstable |", "unstable: the medians vary |"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	if strings.Count(md, "unstable") != 3 { // the overview, the p50 and the reason of cpu; nothing of wasm
		t.Errorf("%d mentions of unstable:\n%s", strings.Count(md, "unstable"), md)
	}
}

// A run merges each model's reports as its process ends (Merger); the matrix must be
// the one FromReports makes of all the reports at once.
func TestMergerMatchesFromReports(t *testing.T) {
	real, err := ReadReports("testdata/real-audio-report.json")
	if err != nil {
		t.Fatal(err)
	}
	fails, err := ReadReports("testdata/failures-report.json")
	if err != nil {
		t.Fatal(err)
	}
	mixedReports := roundTrip(t, suite(
		passing("vad", "cpu", 0.109), filtered("vad", "tensorrt"),
		unavailable("tiny-vad", "cuda", "no CUDA"), passing("tiny-vad", "cpu", 0.02),
		passing("kws", "tensorrt", 2.5),
	))
	crash := ProcessFailure{Model: "asr", Err: "exit status 2", Stderr: "fatal error: boom"}
	cut := ProcessFailure{Model: "kws", Err: "timed out", Cause: result.CauseTimeout, Targets: []string{"cpu"}}
	for name, c := range map[string]struct {
		reports  []types.Report
		failures []ProcessFailure
		models   []string
		targets  []string
	}{
		"real":     {real, nil, []string{"silero-vad-v5", "silero-vad-v6"}, catalog},
		"failures": {fails, nil, []string{"m"}, nil},
		"mixed":    {mixedReports, []ProcessFailure{crash, cut}, []string{"vad", "tiny-vad", "kws", "asr", "idle"}, catalog},
	} {
		t.Run(name, func(t *testing.T) {
			// Each model's process reports its own specs: split the suites' reports.
			var all []types.Report
			g := NewMerger(c.targets)
			for _, model := range c.models {
				var mine []types.Report
				for _, r := range c.reports {
					r.SpecReports = slices.DeleteFunc(slices.Clone(r.SpecReports), func(s types.SpecReport) bool {
						id, _ := result.LabelValue(s.Labels(), result.ModelPrefix)
						return id != model
					})
					if len(r.SpecReports) > 0 {
						mine = append(mine, r)
					}
				}
				var fs []ProcessFailure
				for _, f := range c.failures {
					if f.Model == model {
						fs = append(fs, f)
					}
				}
				g.Add(model, mine, fs)
				all = append(all, mine...)
			}
			want := FromReports(all, c.failures, c.models, c.targets)
			if len(want.Cells) == 0 {
				t.Fatal("no cells")
			}
			got := g.Matrix(c.models)
			wantJSON, err := want.JSON()
			if err != nil {
				t.Fatal(err)
			}
			gotJSON, err := got.JSON()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(gotJSON, wantJSON) {
				t.Errorf("merged model by model:\n%s\nat once:\n%s", gotJSON, wantJSON)
			}
		})
	}
}

// TestExplainedMismatchLine: a mismatch `hwtest run` traced carries its line in
// matrix.json and gets one under its model's table in matrix.md.
func TestExplainedMismatchLine(t *testing.T) {
	specs := passing("vad", "cuda", 0.05)
	big := &result.Deviation{Output: "stateN", Index: 7, Got: 1.5, Want: 0.5, AbsErr: 1, Allowed: 0.0006}
	e := entry("vad", "cuda", checks[1], result.StatusMismatch, "outputs differ from the CPU reference: "+big.String())
	e.Worst = big
	specs[1] = failed(spec("vad", "cuda", checks[1], 0, e), types.SpecStateFailed, "mismatch: outputs differ", types.NodeTypeIt)
	m := FromReports(roundTrip(t, suite(specs)), nil, nil, nil)
	line := "first divergence: node Conv_3 (Conv), output c|3, |error| 60.8; its inputs agree"
	m.Cells[0].Explain = line
	md := string(m.Markdown())
	if want := "- vad on cuda, traced by `hwtest explain vad cuda`: first divergence: node Conv_3 (Conv), output c\\|3, \\|error\\| 60.8; its inputs agree\n"; !strings.Contains(md, want) {
		t.Errorf("markdown lacks %q:\n%s", want, md)
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"explain":"first divergence: node Conv_3`) {
		t.Errorf("matrix.json lacks the line: %s", b)
	}
}

// A check that does not apply to the model's outputs (top-5 classes of a dense
// map) is a skipped spec that recorded why: the cell is still a complete pass, and
// the check says why it was skipped.
func TestSkippedCheckKeepsThePass(t *testing.T) {
	cell := passing("det", "cpu", 0.2)
	why := `output "map" has shape [1 1 32 32], a dense map rather than [batch, classes]`
	e := entry("det", "cpu", checks[2], result.StatusPass, "")
	e.Skipped = why
	cell[2] = skipped(spec("det", "cpu", checks[2], 0, e), "not applicable: "+why)
	m := FromReports(roundTrip(t, suite(cell)), nil, []string{"det"}, catalog)
	c := cellAt(t, m, "det", "cpu")
	wantStatus(t, c, result.StatusPass, "")
	i := slices.IndexFunc(c.Checks, func(ch CheckResult) bool { return ch.Name == checks[2] })
	if c.Reason != "" || i < 0 || c.Checks[i].Skipped != why {
		t.Errorf("cell: reason %q, checks %+v", c.Reason, c.Checks)
	}
}
