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
	"github.com/hwtest/hwtest/internal/testenv"
	"github.com/hwtest/hwtest/onnx"
	"github.com/hwtest/hwtest/result"
)

// sileroScoreboard stores a conformance run covering every operator of
// silero-vad-v5. It is a fixture for check, not a result: each operator passes on
// cpu, wasm and webgpu-native except LSTM, whose cases mismatch on webgpu-native;
// qnn is unavailable. It returns the model's operators.
func sileroScoreboard(t *testing.T, path string) []string {
	t.Helper()
	g := &Globals{Root: "../.."}
	data, _, err := checkModelBytes(&CheckOptions{Globals: g}, "silero-vad-v5")
	testenv.Need(t, "silero-vad-v5's model file (make setup)", err)
	s, err := onnx.Inspect(data)
	if err != nil {
		t.Fatal(err)
	}
	var ops, cases []string
	var reports []result.OpCaseReport
	for op := range s.Ops {
		ops = append(ops, op)
		name := "test_" + strings.ToLower(op)
		cases = append(cases, name)
		for _, target := range []string{"cpu", "wasm", "webgpu-native", "qnn"} {
			r := result.OpCaseReport{Case: name, Op: op, Opset: 16, Target: target, Status: result.CasePass}
			switch {
			case target == "qnn":
				r.Status, r.Error = result.CaseUnavailable, "QNN: libQnnHtp.so not found"
			case target == "webgpu-native" && op == "LSTM":
				r.Status = result.CaseMismatch
				r.Worst = &result.Deviation{Output: "Y", Index: 3, Got: 0.9, Want: 0.1, AbsErr: 0.8, Allowed: 1e-4}
			}
			reports = append(reports, r)
		}
	}
	ctx := context.Background()
	db, err := history.Open(ctx, path, history.ReadWrite, history.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.StoreConformance(ctx, history.ConformanceRun{RunID: "c-silero", Finished: time.Date(2026, 11, 24, 2, 0, 0, 0, time.UTC),
		DataVersion: "1.12.0", Tolerance: "t", Cases: reports})
	if err != nil {
		t.Fatal(err)
	}
	return ops
}

// `hwtest check` puts measured support next to the documented tables and sets
// both against the model's cells in the current matrix: the recorded runs have
// silero-vad-v5 pass on cpu and wasm, mismatch on webgpu-native (an EP with no
// documented table) and qnn unavailable.
func TestCheckAgainstMeasuredSupport(t *testing.T) {
	recordedHistory(t)
	ops := sileroScoreboard(t, envDB(t))
	code, out, stderr := hwtest("check", "--root", "../..", "silero-vad-v5")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s%s", code, out, stderr)
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^cpu +pass +should run: every case of its operators passed +CPUExecutionProvider: should run$`),
		regexp.MustCompile(`(?m)^webgpu-native +mismatch +fails: no case of LSTM passed, and some gave wrong answers +WebGpuExecutionProvider: unknown: no op table for EP$`),
		regexp.MustCompile(`(?m)^qnn +unavailable +unmeasured: no conformance case ran on qnn +QNNExecutionProvider: partial: `),
		regexp.MustCompile(`(?m)^cuda +- +unmeasured: no conformance case ran on cuda +CUDAExecutionProvider: unknown: no op table for EP$`),
		regexp.MustCompile(`(?m)^Measured support: ONNX's conformance cases within rtol 1e-3, atol 1e-7 .*cpu: c-silero \(2026-11-24 02:00 UTC\)`),
		regexp.MustCompile(`(?m)^webgpu-native:\n  LSTM: unsupported \(0/1 ≠1\)\n    test_lstm: mismatch, output Y\[3\]: got 0.9, want 0.1, \|error\| 0.8 > allowed 0.0001$`),
		regexp.MustCompile(`(?m)^cpu +pass +pass ✓ +runs ✓$`),
		regexp.MustCompile(`(?m)^wasm +pass +pass ✓ +runs ✓$`),
		regexp.MustCompile(`(?m)^webgpu-native +mismatch +- ✗ +fails ✓$`),
		regexp.MustCompile(`(?m)^Documented tables matched the matrix in 2 of 3 cells; measured support in 3 of 3\.$`),
		regexp.MustCompile(`(?m)^- webgpu-native: documented table predicted nothing \(no prediction\), observed mismatch \(.+; run \d{8}T\d{6}Z-[0-9a-f]{6}\)$`),
		regexp.MustCompile(`Matched means: documented "pass" \(every operator in the EP's table\) = the cell is pass;`),
	} {
		if !want.MatchString(out) {
			t.Errorf("no match for %s in:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\nqnn  unavailable") {
		t.Errorf("an unavailable cell is counted:\n%s", out)
	}

	code, out, stderr = hwtest("check", "--root", "../..", "silero-vad-v5", "--json")
	if code != ExitOK {
		t.Fatalf("--json: exit %d\n%s%s", code, out, stderr)
	}
	var r checkReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if r.Operators != len(ops) || r.Accuracy == nil || r.Accuracy.Cells != 3 || r.Accuracy.Documented != 2 || r.Accuracy.Measured != 3 || len(r.Accuracy.Disagreements) != 1 {
		t.Fatalf("operators %d, accuracy %+v", r.Operators, r.Accuracy)
	}
	byTarget := map[string]checkResult{}
	for _, c := range r.Targets {
		byTarget[c.Target] = c
	}
	wn := byTarget["webgpu-native"]
	if wn.Measured == nil || wn.Measured.Outcome != "fails" || len(wn.Measured.Ops) != len(ops) || wn.DocumentedMatch == nil || *wn.DocumentedMatch || !*wn.MeasuredMatch {
		t.Errorf("webgpu-native %+v", wn)
	}
	if q := byTarget["qnn"]; q.Observed != "unavailable" || q.DocumentedMatch != nil || q.MeasuredMatch != nil {
		t.Errorf("qnn %+v", q)
	}
}

// A target whose EP took none of the model's nodes (mamba-130m on webnn, a real
// run) observed cpu-only: the documented table's "partial" does not match it, the
// disagreement says what happened and which run saw it, and --json carries it.
func TestCheckSeesCPUOnly(t *testing.T) {
	t.Setenv("HWTEST_DB", filepath.Join(t.TempDir(), "history.duckdb"))
	if code, out, stderr := hwtest("import", "--root", "../..", "testdata/history/cpu-only.json"); code != ExitOK {
		t.Fatalf("import: exit %d\n%s%s", code, out, stderr)
	}
	code, out, stderr := hwtest("check", "--root", "../..", "mamba-130m")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s%s", code, out, stderr)
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^webnn +cpu-only +.*WebNNExecutionProvider: partial: `),
		regexp.MustCompile(`(?m)^webnn +cpu-only +partial ✗ +- ✗$`),
		regexp.MustCompile(`(?m)^- webnn: documented table predicted partial, observed cpu-only \(WebNN took none of the 33 nodes: all ran on CPU; run 20261124T043618Z-35f611\)$`),
	} {
		if !want.MatchString(out) {
			t.Errorf("no match for %s in:\n%s", want, out)
		}
	}
	code, out, stderr = hwtest("check", "--root", "../..", "mamba-130m", "--json")
	if code != ExitOK {
		t.Fatalf("--json: exit %d\n%s%s", code, out, stderr)
	}
	var r checkReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, c := range r.Targets {
		if c.Target == "webnn" && (c.Observed != "cpu-only" || c.ObservedReason != "WebNN took none of the 33 nodes: all ran on CPU" ||
			c.ObservedRun != "20261124T043618Z-35f611" || c.DocumentedMatch == nil || *c.DocumentedMatch) {
			t.Errorf("webnn %+v", c)
		}
	}
}

// Without a conformance run, the measured column says how to get one, and a model
// the matrix has no cell of says there is nothing to compare.
func TestCheckWithoutScoreboard(t *testing.T) {
	recordedHistory(t)
	code, out, stderr := hwtest("check", "--root", "../..", "zoo:tiny-bert")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s%s", code, out, stderr)
	}
	for _, want := range []string{
		"Measured support: no measured support: no conformance run in the history: run `hwtest conformance`",
		"The matrix has no observed cell of zoo:tiny-bert: nothing to compare",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
	if !regexp.MustCompile(`(?m)^cpu +- +– +CPUExecutionProvider: should run$`).MatchString(out) {
		t.Errorf("cpu's row:\n%s", out)
	}
	// --provider: the documented tables alone (the scoreboard is per target).
	code, out, stderr = hwtest("check", "--root", "../..", "zoo:tiny-bert", "--provider", "coreml")
	if code != ExitOK || !regexp.MustCompile(`(?m)^CoreMLExecutionProvider: partial: 1 operator falls back to CPU \(Gather; 4 of 87 nodes\)`).MatchString(out) ||
		strings.Contains(out, "MEASURED") {
		t.Errorf("--provider coreml: exit %d\n%s%s", code, out, stderr)
	}
}

func envDB(t *testing.T) string {
	t.Helper()
	db := os.Getenv("HWTEST_DB")
	if db == "" {
		t.Fatal("no HWTEST_DB")
	}
	return db
}

// `check --all`: every catalog model with cells, over all their observed cells.
// silero-vad-v6's cpu cell is the recorded run with a broken ONNX Runtime library:
// an error neither prediction foresaw.
func TestCheckAll(t *testing.T) {
	recordedHistory(t)
	sileroScoreboard(t, envDB(t))
	code, out, stderr := hwtest("check", "--root", "../..", "--all")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s%s", code, out, stderr)
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^Predicted vs observed, per cell of the current matrix: 2 models, 6 cells observed\. Matched means: documented`),
		regexp.MustCompile(`(?m)^silero-vad-v5 +webgpu-native +mismatch +- ✗ +fails ✓ +fails: no case of LSTM passed, and some gave wrong answers$`),
		regexp.MustCompile(`(?m)^silero-vad-v6 +cpu +error +pass ✗ +runs ✗ +should run: every case of its operators passed$`),
		regexp.MustCompile(`(?m)^Documented tables matched the matrix in 3 of 6 cells; measured support in 5 of 6\.$`),
		regexp.MustCompile(`(?m)^- silero-vad-v6 on cpu: measured support predicted runs, observed error \(/tmp/notalib.so is not a shared library .*; run 20261123T191915Z-722ab9\)$`),
	} {
		if !want.MatchString(out) {
			t.Errorf("no match for %s in:\n%s", want, out)
		}
	}
	if strings.Contains(out, "qnn") && regexp.MustCompile(`(?m)^silero-vad-v\d +qnn`).MatchString(out) {
		t.Errorf("an unavailable cell is in the comparison:\n%s", out)
	}
	code, out, _ = hwtest("check", "--root", "../..", "--all", "--json")
	var r checkAllReport
	if err := json.Unmarshal([]byte(out), &r); code != ExitOK || err != nil {
		t.Fatalf("--json: exit %d, %v\n%s", code, err, out)
	}
	if len(r.Models) != 2 || r.Accuracy.Cells != 6 || r.Accuracy.Documented != 3 || r.Accuracy.Measured != 5 || len(r.Accuracy.Disagreements) != 4 {
		t.Errorf("models %d, accuracy %+v", len(r.Models), r.Accuracy)
	}
}
