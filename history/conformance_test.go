package history

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hwtest/hwtest/result"
)

func TestConformanceCasesReadBackWhole(t *testing.T) {
	db, _ := openTemp(t)
	ctx := context.Background()
	cases := []result.OpCaseReport{
		{Case: "test_add", Op: "Add", Opset: 14, Target: "cpu", Status: result.CasePass, Ms: 1.5,
			Worst: &result.Deviation{Output: "sum", Index: 3, Got: 1, Want: 1, AbsErr: 0, Allowed: 1e-7}},
		{Case: "test_adam", Op: "Adam", Domain: "ai.onnx.preview.training", Opset: 1, Target: "cpu", Status: result.CaseNotSupported,
			Error: "Fatal error: ai.onnx.preview.training:Adam(-1) is not a registered function/op"},
		{Case: "test_add", Op: "Add", Opset: 14, Target: "webgpu", Status: result.CaseMismatch, Device: "SwiftShader",
			Worst: &result.Deviation{Output: "sum", Index: 7, Got: 0.5, Want: 0.25, AbsErr: 0.25, Allowed: 2.5e-4}},
	}
	at := time.Date(2026, 11, 24, 3, 0, 0, 0, time.UTC)
	if err := db.StoreConformance(ctx, ConformanceRun{RunID: "c1", Finished: at, Host: "h", DataVersion: "1.12.0", Tolerance: "t", Targets: []string{"cpu", "webgpu"}, Cases: cases}); err != nil {
		t.Fatal(err)
	}
	sb, err := db.Scoreboard(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []result.OpCaseReport{cases[1], cases[0], cases[2]} // by target, then case
	if d := cmp.Diff(want, sb.Cases); d != "" {
		t.Errorf("scoreboard (-want +got):\n%s", d)
	}
	if got := sb.Runs["webgpu"]; got.RunID != "c1" || !got.Finished.Equal(at) || got.Host != "h" {
		t.Errorf("webgpu's run %+v", got)
	}
	// The same run id again changes nothing.
	if err := db.StoreConformance(ctx, ConformanceRun{RunID: "c1", DataVersion: "1.12.0", Tolerance: "t", Cases: cases[:1]}); err == nil {
		t.Error("a second conformance run c1 was stored")
	}
}

// A later run on a machine without webgpu does not hide the run that had it; cpu
// comes from the later run.
func TestScoreboardKeepsTheLatestRunThatHadTheTarget(t *testing.T) {
	db, _ := openTemp(t)
	ctx := context.Background()
	early := time.Date(2026, 11, 24, 1, 0, 0, 0, time.UTC)
	store := func(id string, at time.Time, cases ...result.OpCaseReport) {
		t.Helper()
		if err := db.StoreConformance(ctx, ConformanceRun{RunID: id, Finished: at, DataVersion: "1.12.0", Tolerance: "t", Cases: cases}); err != nil {
			t.Fatal(err)
		}
	}
	store("gpu-box", early,
		result.OpCaseReport{Case: "test_relu", Op: "Relu", Target: "webgpu", Status: result.CasePass},
		result.OpCaseReport{Case: "test_relu", Op: "Relu", Target: "cpu", Status: result.CaseMismatch})
	store("laptop", early.Add(time.Hour),
		result.OpCaseReport{Case: "test_relu", Op: "Relu", Target: "webgpu", Status: result.CaseUnavailable, Error: "no adapter"},
		result.OpCaseReport{Case: "test_relu", Op: "Relu", Target: "cpu", Status: result.CasePass})
	sb, err := db.Scoreboard(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, c := range sb.Cases {
		got[c.Target] = c.Status + " from " + sb.Runs[c.Target].RunID
	}
	want := map[string]string{"cpu": "pass from laptop", "webgpu": "pass from gpu-box"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	sb, err = db.Scoreboard(ctx, []string{"cpu"})
	if err != nil || len(sb.Cases) != 1 || sb.Cases[0].Target != "cpu" {
		t.Errorf("cpu only: %+v, %v", sb.Cases, err)
	}
}

// A later run of one operator (--op) updates that operator's cases only, and a
// run cut short (its unfinished cases are errors) does not replace what an
// earlier run measured; an error with nothing before it still shows.
func TestScoreboardKeepsEachCasesLatestAnswer(t *testing.T) {
	db, _ := openTemp(t)
	ctx := context.Background()
	at := time.Date(2026, 11, 24, 1, 0, 0, 0, time.UTC)
	store := func(id string, at time.Time, cases ...result.OpCaseReport) {
		t.Helper()
		if err := db.StoreConformance(ctx, ConformanceRun{RunID: id, Finished: at, DataVersion: "1.12.0", Tolerance: "t", Cases: cases}); err != nil {
			t.Fatal(err)
		}
	}
	c := func(name, status string) result.OpCaseReport {
		return result.OpCaseReport{Case: name, Op: name, Target: "cpu", Status: status}
	}
	store("full", at, c("test_abs", result.CasePass), c("test_add", result.CaseMismatch), c("test_relu", result.CasePass))
	store("abs-only", at.Add(time.Hour), c("test_abs", result.CaseNotSupported))
	store("timed-out", at.Add(2*time.Hour), c("test_add", result.CaseError), c("test_relu", result.CaseError), c("test_new", result.CaseError))
	sb, err := db.Scoreboard(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, x := range sb.Cases {
		got[x.Case] = x.Status
	}
	want := map[string]string{"test_abs": result.CaseNotSupported, "test_add": result.CaseMismatch, "test_relu": result.CasePass, "test_new": result.CaseError}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	if sb.Runs["cpu"].RunID != "timed-out" {
		t.Errorf("cpu's latest run: %+v", sb.Runs["cpu"])
	}
}
