package main

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hwtest/hwtest/history"
	"github.com/hwtest/hwtest/result"
)

// A real `hwtest conformance` on cpu and cuda (absent here) for three operators:
// each case's result is ONNX's expected output against ONNX Runtime's, stored in a
// real DuckDB file, with the runtime's own words where it refuses a case.
func TestConformanceStoresEachCaseOnEachTarget(t *testing.T) {
	needSuites(t)
	bin := buildHwtest(t)
	tmp := t.TempDir()
	db := filepath.Join(tmp, "h.duckdb")
	cmd := exec.Command(bin, "conformance", "--root", "../..", "--no-generate", "--db", db, "--reports", tmp,
		"--target", "cpu", "--target", "cuda", "--op", "Add", "--op", "BitShift", "--op", "Bernoulli")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("hwtest conformance: %v\n%s", err, out)
	}
	h, err := history.Open(context.Background(), db, history.ReadOnly, history.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	sb, err := h.Scoreboard(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]result.OpCaseReport{}
	for _, c := range sb.Cases {
		got[c.Target+" "+c.Case] = c
	}
	// Add 3 + BitShift 8 + Bernoulli 6 (3 of them expanded), on each target.
	if len(sb.Cases) != 2*(3+8+6) {
		t.Errorf("%d cases stored, want %d:\n%s", len(sb.Cases), 2*(3+8+6), out)
	}
	check := func(key, status, errPart string) {
		t.Helper()
		c, ok := got[key]
		if !ok {
			t.Errorf("%s: not stored", key)
			return
		}
		if c.Status != status || !strings.Contains(c.Error, errPart) {
			t.Errorf("%s: %s %q, want %s with %q", key, c.Status, c.Error, status, errPart)
		}
	}
	check("cpu test_add", result.CasePass, "")
	check("cpu test_add_uint8", result.CasePass, "")
	check("cpu test_bitshift_right_uint16", result.CaseNotSupported, "Could not find an implementation for BitShift")
	// Bernoulli draws random numbers: ONNX's expected output is one draw.
	check("cpu test_bernoulli", result.CaseMismatch, "")
	check("cuda test_add", result.CaseUnavailable, "")
	if c := got["cpu test_bernoulli"]; c.Worst == nil || c.Worst.AbsErr <= c.Worst.Allowed {
		t.Errorf("bernoulli's mismatch has no worst element outside the tolerance: %+v", c.Worst)
	}
	if c := got["cuda test_add"]; c.Error == "" {
		t.Errorf("cuda is unavailable without the probe's reason")
	}
	// Which ONNX Runtime gave these answers.
	var ort string
	if err := h.SQL().QueryRow(`SELECT coalesce(ort_version, '') FROM conformance_runs`).Scan(&ort); err != nil || !strings.HasPrefix(ort, "1.") {
		t.Errorf("the run's ONNX Runtime version: %q, %v", ort, err)
	}
}

// A machine without ONNX's test cases (a worker that only runs models) keeps
// generated/conformance/ as it is, says so, and still generates and verifies the
// model suites; only `hwtest conformance` needs the cases.
func TestWithoutTheTestCasesConformanceSuitesAreKept(t *testing.T) {
	needSuites(t)
	bin := buildHwtest(t)
	root := t.TempDir()
	for _, f := range []string{"go.mod", "models.yaml", "hardware.yaml", "generated"} {
		if out, err := exec.Command("cp", "-r", filepath.Join("../..", f), root).CombinedOutput(); err != nil {
			t.Fatalf("cp %s: %v\n%s", f, err, out)
		}
	}
	run := func(args ...string) (string, error) {
		cmd := exec.Command(bin, args...)
		cmd.Dir = root // not this repository, whose .hwtest has the cases
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := run("verify", "--quiet")
	if err != nil || !strings.Contains(out, "warning: generated/conformance/ kept as it is (165 files)") || !strings.Contains(out, "generated/ is up to date") {
		t.Errorf("verify without the cases: %v\n%s", err, out)
	}
	if out, err := run("generate"); err != nil || !strings.Contains(out, "; 0 changed") {
		t.Errorf("generate without the cases changed files: %v\n%s", err, out)
	}
	if out, err := run("conformance", "--target", "cpu"); err == nil || !strings.Contains(out, "run `make setup`") {
		t.Errorf("conformance without the cases: %v\n%s", err, out)
	}
}
