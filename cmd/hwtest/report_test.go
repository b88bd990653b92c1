package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// `hwtest report` prints the matrix and then the summaries; --summary the
// summaries alone, --summary --json their data; --html writes the page. On the
// three recorded runs of testdata/history.
func TestReportSummaries(t *testing.T) {
	recordedHistory(t)
	code, stdout, stderr := hwtest("report", "--root", "../..")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	matrixAt, summaryAt := strings.Index(stdout, "# hwtest matrix"), strings.Index(stdout, "# Summary")
	if matrixAt < 0 || summaryAt < matrixAt {
		t.Fatalf("the matrix, then the summaries:\n%s", stdout)
	}
	for _, section := range []string{"## Compatibility", "## Performance", "## Speedup over cpu", "## Memory", "## Trends", "## Failures", "## Environment"} {
		if !strings.Contains(stdout[summaryAt:], section) {
			t.Errorf("no %q in the summaries:\n%s", section, stdout[summaryAt:])
		}
	}

	_, summary, _ := hwtest("report", "--root", "../..", "--summary")
	if strings.Contains(summary, "# hwtest matrix") || summary != stdout[summaryAt:] {
		t.Errorf("--summary is not the summaries alone:\n%s", summary)
	}

	code, js, stderr := hwtest("report", "--root", "../..", "--summary", "--json")
	if code != ExitOK {
		t.Fatalf("--summary --json: exit %d\n%s", code, stderr)
	}
	var r struct {
		Runs    struct{ Count int }
		Speedup struct {
			ByModel []struct {
				Model, Target, RunID, BaselineRunID string
				Speedup                             float64
			} `json:"by_model"`
		}
		Failures struct{ Total int }
	}
	if err := json.Unmarshal([]byte(strings.NewReplacer(`"run_id"`, `"runid"`, `"baseline_run_id"`, `"baselinerunid"`).Replace(js)), &r); err != nil {
		t.Fatal(err)
	}
	// silero-vad-v5: cpu's latest p50 is run2's, wasm's run1's (matrix files).
	// silero-vad-v6's cpu cell is an error now (run3): no speedup for it.
	if r.Runs.Count != 3 || len(r.Speedup.ByModel) != 1 {
		t.Fatalf("runs %d, speedups %+v", r.Runs.Count, r.Speedup.ByModel)
	}
	v5 := r.Speedup.ByModel[0]
	if v5.Model != "silero-vad-v5" || v5.Target != "wasm" || math.Abs(v5.Speedup-0.10114/0.8424995) > 1e-12 || v5.RunID != run1 || v5.BaselineRunID != run2 {
		t.Errorf("silero-vad-v5 on wasm: %+v", v5)
	}
	// v6's cpu error, v5's and v6's webgpu-native mismatches, their qnn cells.
	if r.Failures.Total != 5 {
		t.Errorf("%d failures, want 5", r.Failures.Total)
	}

	out := filepath.Join(t.TempDir(), "r.html")
	code, stdout, stderr = hwtest("report", "--root", "../..", "--html", "--out", out)
	if code != ExitOK || !strings.Contains(stdout, "report: ") || !strings.Contains(stdout, "8 cells, 3 runs") {
		t.Fatalf("--html: exit %d\n%s%s", code, stdout, stderr)
	}
	page, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	checkPage(t, string(page))
	_, toStdout, _ := hwtest("report", "--root", "../..", "--html", "--out", "-")
	if toStdout != string(page) {
		t.Error("--out - does not print the same page")
	}
}

// checkPage: the page is whole and refers to nothing outside itself.
func checkPage(t *testing.T, page string) {
	t.Helper()
	if !strings.HasPrefix(page, "<!doctype html>") || !strings.HasSuffix(strings.TrimSpace(page), "</html>") {
		t.Errorf("not a whole page: %.200s … %.200s", page, page[max(0, len(page)-200):])
	}
	if n := strings.Count(page, `<figure class="chart`); n < 5 {
		t.Errorf("%d charts", n)
	}
	// No attribute that loads anything, and a policy that forbids it.
	if m := regexp.MustCompile(`(?i)\b(src|href)="(https?:|//|file:)|url\(|@import`).FindString(page); m != "" {
		t.Errorf("the page refers outside itself: %q", m)
	}
	if !strings.Contains(page, `content="default-src 'none';`) {
		t.Error("no Content-Security-Policy forbidding loads")
	}
}

// Without a history, a matrix file gives the summaries of that one run.
func TestReportSummariesOfAMatrixFile(t *testing.T) {
	code, stdout, stderr := hwtest("report", "--root", "../..", "--matrix", "testdata/history/run1.json", "--summary")
	if code != ExitOK || !strings.Contains(stdout, "8 cells of the current matrix") || !strings.Contains(stdout, "1 run in the history") ||
		!strings.Contains(stdout, "wasm") {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	out := filepath.Join(t.TempDir(), "deep", "r.html")
	if code, stdout, stderr := hwtest("report", "--root", "../..", "--matrix", "testdata/history/run1.json", "--html", "--out", out); code != ExitOK {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	page, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	checkPage(t, string(page))
}
