package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hwtest/hwtest/history"
	"github.com/hwtest/hwtest/result"
)

const adamError = "Fatal error: ai.onnx.preview.training:Adam(-1) is not a registered function/op"

// conformanceFixture stores two conformance runs in the history at path. They are
// fixtures for the report and check, not results: cases made up to cover every
// status, a target only ever unavailable (cuda), and a later run without webgpu
// that must not hide the earlier run that had it.
func conformanceFixture(t *testing.T, path string) {
	t.Helper()
	ctx := context.Background()
	db, err := history.Open(ctx, path, history.ReadWrite, history.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c := func(name, op, target, status, msg string) result.OpCaseReport {
		r := result.OpCaseReport{Case: name, Op: op, Opset: 13, Target: target, Status: status, Error: msg}
		if op == "Adam" {
			r.Domain, r.Opset = "ai.onnx.preview.training", 1
		}
		return r
	}
	mismatch := func(name, op, target string, d result.Deviation) result.OpCaseReport {
		r := c(name, op, target, result.CaseMismatch, "")
		r.Worst = &d
		return r
	}
	at := time.Date(2026, 11, 24, 1, 0, 0, 0, time.UTC)
	gpuBox := []result.OpCaseReport{
		c("test_add", "Add", "webgpu", result.CasePass, ""),
		mismatch("test_add_bcast", "Add", "webgpu", result.Deviation{Output: "sum", Index: 7, Got: 0.5, Want: 0.25, AbsErr: 0.25, Allowed: 2.5e-4}),
		c("test_adam", "Adam", "webgpu", result.CaseNotSupported, adamError),
		c("test_dft", "DFT", "webgpu", result.CaseNotSupported, "no kernel for DFT(17) on webgpu"),
		c("test_sigmoid", "Sigmoid", "webgpu", result.CasePass, ""),
		c("test_add", "Add", "cpu", result.CaseMismatch, ""), // hidden by the laptop's later run
	}
	for _, name := range []string{"test_add", "test_add_bcast", "test_adam"} {
		op := "Add"
		if name == "test_adam" {
			op = "Adam"
		}
		gpuBox = append(gpuBox, c(name, op, "cuda", result.CaseUnavailable, "CUDA: libcudart.so.12: cannot open shared object file"))
	}
	laptop := []result.OpCaseReport{
		c("test_add", "Add", "cpu", result.CasePass, ""),
		c("test_add_bcast", "Add", "cpu", result.CasePass, ""),
		c("test_adam", "Adam", "cpu", result.CaseNotSupported, adamError),
		c("test_adam_multiple", "Adam", "cpu", result.CaseNotSupported, adamError),
		mismatch("test_dft", "DFT", "cpu", result.Deviation{Output: "y", Index: 17, Got: 1.2301, Want: 1.2345, AbsErr: 0.0044, Allowed: 0.0012}),
		c("test_sigmoid", "Sigmoid", "cpu", result.CasePass, ""),
		c("test_identity_sequence", "Identity", "cpu", result.CaseSkipped, "sequence inputs: hwtest feeds tensors only"),
		c("test_add", "Add", "webgpu", result.CaseUnavailable, "no WebGPU adapter"),
	}
	for _, r := range []history.ConformanceRun{
		{RunID: "c-gpu-box", Finished: at, Host: "gpu-box", DataVersion: "1.12.0", Tolerance: "t", Cases: gpuBox},
		{RunID: "c-laptop", Finished: at.Add(time.Hour), Host: "laptop", DataVersion: "1.12.0", Tolerance: "t", Cases: laptop},
	} {
		if err := db.StoreConformance(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
}

// withConformance is a history of the test's own holding the fixture runs.
func withConformance(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "history.duckdb")
	t.Setenv("HWTEST_DB", path)
	conformanceFixture(t, path)
	return path
}

// `hwtest report --ops`: totals per target (cuda collapsed to its reason), a row
// per operator, the mismatches with their worst element and the other failures
// grouped by exact message, with the tolerance stated.
func TestReportOps(t *testing.T) {
	withConformance(t)
	code, out, stderr := hwtest("report", "--root", "../..", "--ops")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s%s", code, out, stderr)
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`rtol 1e-3, atol 1e-7`),
		// cpu from the laptop's run, webgpu from gpu-box's: catalog order.
		regexp.MustCompile(`(?m)^cpu +7 +3 +1 +2 +0 +1 +0 +c-laptop +2026-11-24 02:00 UTC +laptop\n` +
			`webgpu +5 +2 +1 +2 +0 +0 +0 +c-gpu-box +2026-11-24 01:00 UTC +gpu-box$`),
		regexp.MustCompile(`(?m)^cuda: not on the machine of its latest run \(c-gpu-box on gpu-box; 3 cases unavailable\): CUDA: libcudart.so.12: cannot open shared object file$`),
		regexp.MustCompile(`(?m)^OPERATOR +cpu +webgpu$`),
		regexp.MustCompile(`(?m)^Add +2/2 +1/2 ≠1$`),
		regexp.MustCompile(`(?m)^ai.onnx.preview.training:Adam +0/2 ✗2 +0/1 ✗1$`),
		regexp.MustCompile(`(?m)^DFT +0/1 ≠1 +0/1 ✗1$`),
		regexp.MustCompile(`(?m)^Identity +0/1 ~1 *$`),
		regexp.MustCompile(`(?m)^- cpu test_dft \(DFT\): output y\[17\]: got 1.2301, want 1.2345, \|error\| 0.0044 > allowed 0.0012$`),
		regexp.MustCompile(`(?m)^- webgpu test_add_bcast \(Add\): output sum\[7\]: got 0.5, want 0.25, \|error\| 0.25 > allowed 0.00025$`),
		regexp.MustCompile(`(?m)^- not-supported ×3 on cpu, webgpu \(ai.onnx.preview.training:Adam\): ` + regexp.QuoteMeta(adamError) + `\n    cases: test_adam, test_adam_multiple$`),
		regexp.MustCompile(`(?m)^- skipped ×1 on cpu \(Identity\): sequence inputs: hwtest feeds tensors only$`),
	} {
		if !want.MatchString(out) {
			t.Errorf("no match for %s in:\n%s", want, out)
		}
	}
	// The Adam message is one line, whatever number of cases share it.
	if n := strings.Count(out, adamError); n != 1 {
		t.Errorf("the Adam error is printed %d times", n)
	}
	if strings.Contains(out, "cuda  ") || strings.Contains(out, "OPERATOR  cpu  cuda") {
		t.Errorf("cuda, only ever unavailable, has a column:\n%s", out)
	}

	code, out, _ = hwtest("report", "--root", "../..", "--ops", "--target", "webgpu")
	if code != ExitOK || !regexp.MustCompile(`(?m)^OPERATOR +webgpu$`).MatchString(out) || strings.Contains(out, "c-laptop") {
		t.Errorf("--target webgpu: exit %d\n%s", code, out)
	}
	code, _, stderr = hwtest("report", "--root", "../..", "--ops", "--target", "qnn")
	if code != ExitError || !strings.Contains(stderr, "no conformance case on qnn; the history has cpu, cuda, webgpu") {
		t.Errorf("--target qnn: exit %d, %s", code, stderr)
	}
}

func TestReportOpsJSON(t *testing.T) {
	withConformance(t)
	code, out, stderr := hwtest("report", "--root", "../..", "--ops", "--json")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s%s", code, out, stderr)
	}
	var r struct {
		Tolerance string `json:"tolerance"`
		Targets   []struct {
			Target string `json:"target"`
			RunID  string `json:"run_id"`
			Counts struct {
				Pass, Total  int
				NotSupported int `json:"not_supported"`
			} `json:"counts"`
		} `json:"targets"`
		Absent []struct {
			Target  string   `json:"target"`
			RunID   string   `json:"run_id"`
			Reasons []string `json:"reasons"`
		} `json:"absent"`
		Ops []struct {
			Op    string `json:"op"`
			Cells map[string]struct {
				Pass, Mismatch int
				Support, Text  string
			} `json:"cells"`
		} `json:"ops"`
		Mismatches []result.OpCaseReport `json:"mismatches"`
		Failures   []struct {
			Status, Message string
			Count           int
			Targets, Cases  []string
		} `json:"failures"`
		Cases []result.OpCaseReport `json:"cases"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if r.Tolerance != "rtol 1e-3, atol 1e-7 (ONNX 1.12's backend tests)" || len(r.Targets) != 2 || r.Targets[0].Target != "cpu" ||
		r.Targets[0].RunID != "c-laptop" || r.Targets[0].Counts.Total != 7 || r.Targets[0].Counts.NotSupported != 2 || r.Targets[1].RunID != "c-gpu-box" {
		t.Errorf("tolerance %q, targets %+v", r.Tolerance, r.Targets)
	}
	if len(r.Absent) != 1 || r.Absent[0].Target != "cuda" || r.Absent[0].RunID != "c-gpu-box" || len(r.Absent[0].Reasons) != 1 {
		t.Errorf("absent %+v", r.Absent)
	}
	if len(r.Ops) != 5 || r.Ops[0].Op != "Add" {
		t.Fatalf("ops %+v", r.Ops)
	}
	if c := r.Ops[0].Cells["webgpu"]; c.Pass != 1 || c.Mismatch != 1 || c.Support != "partly" || c.Text != "1/2 ≠1" {
		t.Errorf("Add on webgpu %+v", c)
	}
	if len(r.Mismatches) != 2 || r.Mismatches[0].Worst == nil || r.Mismatches[0].Worst.Index != 17 {
		t.Errorf("mismatches %+v", r.Mismatches)
	}
	if len(r.Failures) != 3 || r.Failures[0].Message != adamError || r.Failures[0].Count != 3 || strings.Join(r.Failures[0].Cases, " ") != "test_adam test_adam_multiple" {
		t.Errorf("failures %+v", r.Failures)
	}
	if len(r.Cases) != 7+5+3 {
		t.Errorf("%d cases, want every case of the scoreboard (15)", len(r.Cases))
	}
}

// An empty history, or none, says how to fill the scoreboard.
func TestReportOpsWithoutConformance(t *testing.T) {
	t.Setenv("HWTEST_DB", filepath.Join(t.TempDir(), "none.duckdb"))
	code, _, stderr := hwtest("report", "--root", "../..", "--ops")
	if code != ExitError || !strings.Contains(stderr, "run `hwtest conformance`") {
		t.Errorf("no history: exit %d, %s", code, stderr)
	}
	recordedHistory(t) // runs, but no conformance run
	code, _, stderr = hwtest("report", "--root", "../..", "--ops", "--json")
	if code != ExitError || !strings.Contains(stderr, "no conformance run in the history: run `hwtest conformance`") {
		t.Errorf("no conformance run: exit %d, %s", code, stderr)
	}
	// The page says the same in its section.
	out := filepath.Join(t.TempDir(), "r.html")
	code, stdout, stderr := hwtest("report", "--root", "../..", "--html", "--out", out)
	if code != ExitOK || !strings.Contains(stdout, "no conformance scoreboard") {
		t.Fatalf("--html: exit %d\n%s%s", code, stdout, stderr)
	}
	page, _ := os.ReadFile(out)
	if !strings.Contains(string(page), "No conformance scoreboard in this report: the history has no conformance run") {
		t.Error("the page's scoreboard section does not say how to fill it")
	}
	if code, _, stderr := hwtest("report", "--root", "../..", "--html", "--ops", "--out", out); code != ExitError || !strings.Contains(stderr, "hwtest conformance") {
		t.Errorf("--html --ops without a scoreboard: exit %d, %s", code, stderr)
	}
}

// The page holds the scoreboard whenever the history has one; --ops --target
// narrows it.
func TestReportHTMLHasTheScoreboard(t *testing.T) {
	recordedHistory(t)
	conformanceFixture(t, os.Getenv("HWTEST_DB"))
	out := filepath.Join(t.TempDir(), "r.html")
	code, stdout, stderr := hwtest("report", "--root", "../..", "--html", "--out", out)
	if code != ExitOK || !strings.Contains(stdout, "8 cells, 3 runs; scoreboard of 5 operators on 3 targets") {
		t.Fatalf("--html: exit %d\n%s%s", code, stdout, stderr)
	}
	page, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	checkPage(t, string(page))
	for _, want := range []string{
		`<th scope="row">Add</th><td class="o-supported" title="Add on cpu: 2 pass (supported)">2/2</td><td class="o-partly" title="Add on webgpu: 1 pass, 1 mismatch (partly)">1/2 ≠1</td></tr>`,
		`<code>` + adamError + `</code>`,
		`output y[17]: got 1.2301, want 1.2345, |error| 0.0044 &gt; allowed 0.0012`,
		`<strong>cuda</strong>: not on the machine of its latest run (c-gpu-box on gpu-box; 3 cases unavailable)`,
	} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	code, stdout, stderr = hwtest("report", "--root", "../..", "--html", "--ops", "--target", "cpu", "--out", "-")
	if code != ExitOK || !strings.Contains(stdout, `<th scope="row">Add</th><td class="o-supported" title="Add on cpu: 2 pass (supported)">2/2</td></tr>`) {
		t.Errorf("--html --ops --target cpu: exit %d, %s", code, stderr)
	}
}
