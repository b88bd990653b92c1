package main

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"
)

// testdata/history holds the matrix.json of three real runs on this kind of machine:
// run1 silero-vad-v5 and -v6 on cpu, wasm, webgpu-native (a mismatch) and qnn
// (unavailable); run2 v5 on cpu again; run3 v6 on cpu with a broken ONNX Runtime
// library (an error).
const (
	run1 = "20261123T191818Z-cca736"
	run2 = "20261123T191904Z-da44e6"
	run3 = "20261123T191915Z-722ab9"
)

// recordedHistory imports the three runs into a history of the test's own.
func recordedHistory(t *testing.T) {
	t.Helper()
	t.Setenv("HWTEST_DB", filepath.Join(t.TempDir(), "history.duckdb"))
	code, stdout, stderr := hwtest("import", "--root", "../..",
		"testdata/history/run1.json", "testdata/history/run2.json", "testdata/history/run3.json")
	if code != ExitOK || !strings.Contains(stdout, "imported 3 of 3 files") {
		t.Fatalf("import: exit %d\n%s%s", code, stdout, stderr)
	}
}

// queryJSON runs `hwtest query --json` and decodes its rows.
func queryJSON(t *testing.T, sql string) []map[string]any {
	t.Helper()
	code, stdout, stderr := hwtest("query", "--root", "../..", "--json", sql)
	if code != ExitOK {
		t.Fatalf("query %q: exit %d\n%s%s", sql, code, stdout, stderr)
	}
	var rows []map[string]any
	if err := json.Unmarshal([]byte(stdout), &rows); err != nil {
		t.Fatalf("query %q: %v\n%s", sql, err, stdout)
	}
	return rows
}

// The three queries users of the system hwtest replaces run, verbatim, and return
// what the recorded runs hold (values worked out from the matrix files by hand).
func TestUsersQueriesOnRecordedHistory(t *testing.T) {
	recordedHistory(t)
	const mib = 1 << 20
	for _, tc := range []struct {
		sql  string
		want []map[string]any
	}{
		{
			"SELECT hardware, AVG(inference_time) as avg_time FROM hardware_results WHERE success = TRUE GROUP BY hardware ORDER BY avg_time ASC;",
			[]map[string]any{
				{"hardware": "cpu", "avg_time": (0.103787 + 0.100698 + 0.10114) / 3},
				{"hardware": "wasm", "avg_time": (0.8424995 + 0.7474995) / 2},
			},
		},
		{
			"SELECT model_type, hardware, AVG(inference_time) as avg_time FROM hardware_results WHERE success = TRUE GROUP BY model_type, hardware ORDER BY model_type, avg_time ASC;",
			[]map[string]any{
				{"model_type": "audio", "hardware": "cpu", "avg_time": (0.103787 + 0.100698 + 0.10114) / 3},
				{"model_type": "audio", "hardware": "wasm", "avg_time": (0.8424995 + 0.7474995) / 2},
			},
		},
		{
			"SELECT model_id, hardware, memory_usage FROM hardware_results WHERE success = TRUE ORDER BY memory_usage DESC LIMIT 20;",
			[]map[string]any{
				{"model_id": "silero-vad-v5", "hardware": "wasm", "memory_usage": 653402112.0 / mib},
				{"model_id": "silero-vad-v6", "hardware": "wasm", "memory_usage": 611956736.0 / mib},
				{"model_id": "silero-vad-v5", "hardware": "cpu", "memory_usage": 91836416.0 / mib},
				{"model_id": "silero-vad-v6", "hardware": "cpu", "memory_usage": 82071552.0 / mib},
				{"model_id": "silero-vad-v5", "hardware": "cpu", "memory_usage": 80691200.0 / mib},
			},
		},
	} {
		got := queryJSON(t, tc.sql)
		if len(got) != len(tc.want) {
			t.Fatalf("%s\ngot %d rows %v, want %v", tc.sql, len(got), got, tc.want)
		}
		for i, row := range tc.want {
			for k, v := range row {
				if !same(got[i][k], v) {
					t.Errorf("%s\nrow %d %s = %v, want %v", tc.sql, i, k, got[i][k], v)
				}
			}
		}
		// The same rows as a table and as CSV.
		_, table, _ := hwtest("query", "--root", "../..", tc.sql)
		_, csv, _ := hwtest("query", "--root", "../..", "--csv", tc.sql)
		lines := strings.Split(strings.TrimSpace(table), "\n")
		if len(lines) != len(tc.want)+2 || !strings.HasPrefix(lines[1], "---") {
			t.Errorf("table of %d rows:\n%s", len(tc.want), table)
		}
		if n := strings.Count(csv, "\n"); n != len(tc.want)+1 {
			t.Errorf("CSV of %d rows has %d lines:\n%s", len(tc.want), n, csv)
		}
	}
	// The view's units: ms and MiB, and the error of a cell that failed.
	rows := queryJSON(t, "SELECT success, error, output_shape FROM hardware_results WHERE model_id = 'silero-vad-v6' AND hardware = 'cpu' ORDER BY timestamp")
	if len(rows) != 2 || rows[0]["success"] != true || rows[0]["output_shape"] != "[1, 1]" ||
		rows[1]["success"] != false || !strings.Contains(fmt.Sprint(rows[1]["error"]), "error: /tmp/notalib.so is not a shared library") {
		t.Errorf("v6 on cpu: %v", rows)
	}
	det := queryJSON(t, "SELECT hardware_type, available FROM hardware_detection WHERE hardware_type IN ('cpu', 'qnn') ORDER BY id LIMIT 2")
	if len(det) != 2 || det[0]["hardware_type"] != "cpu" || det[0]["available"] != true || det[1]["available"] != false {
		t.Errorf("detection: %v", det)
	}
}

func same(got, want any) bool {
	if w, ok := want.(float64); ok {
		g, ok := got.(float64)
		return ok && math.Abs(g-w) <= 1e-9*math.Abs(w)
	}
	return got == want
}

func TestImportTwiceAddsNothing(t *testing.T) {
	recordedHistory(t)
	code, stdout, stderr := hwtest("import", "--root", "../..", "testdata/history/run2.json")
	if code != ExitOK || !strings.Contains(stdout, "already in the history") || !strings.Contains(stdout, "imported 0 of 1") {
		t.Errorf("second import: exit %d\n%s%s", code, stdout, stderr)
	}
	if rows := queryJSON(t, "SELECT count(*) AS n FROM cells"); !same(rows[0]["n"], 10.0) {
		t.Errorf("cells after importing twice: %v, want 10", rows)
	}
	code, _, stderr = hwtest("import", "--root", "../..", "../../models.yaml")
	if code == ExitOK || !strings.Contains(stderr, "models.yaml is not a matrix.json") {
		t.Errorf("importing a catalog: exit %d, %s", code, stderr)
	}
}

// The current matrix is the latest result of each cell: a run of one cell no longer
// hides the others, and --errors reads the same view.
func TestReportShowsCurrentMatrix(t *testing.T) {
	recordedHistory(t)
	code, stdout, stderr := hwtest("report", "--root", "../..", "--json")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	var m struct {
		Cells []struct{ Model, Target, Status, RunID string }
	}
	json.Unmarshal([]byte(strings.ReplaceAll(stdout, `"run_id"`, `"runid"`)), &m)
	got := map[string]string{}
	for _, c := range m.Cells {
		got[c.Model+"/"+c.Target] = c.Status + " " + c.RunID
	}
	want := map[string]string{
		"silero-vad-v5/cpu": "pass " + run2, "silero-vad-v6/cpu": "error " + run3,
		"silero-vad-v5/wasm": "pass " + run1, "silero-vad-v5/webgpu-native": "mismatch " + run1,
		"silero-vad-v6/qnn": "unavailable " + run1,
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %q, want %q", k, got[k], v)
		}
	}
	if len(got) != 8 {
		t.Errorf("%d cells, want 8: %v", len(got), got)
	}
	_, md, _ := hwtest("report", "--root", "../..")
	if !strings.Contains(md, "Cells from 3 runs") || !strings.Contains(md, run3+" (2026-11-23 19:19)") {
		t.Errorf("the Markdown does not say where cells came from:\n%s", md)
	}
	_, errs, _ := hwtest("report", "--root", "../..", "--errors")
	for _, s := range []string{"silero-vad-v6 on cpu", "silero-vad-v5 on webgpu-native", "is not a shared library"} {
		if !strings.Contains(errs, s) {
			t.Errorf("--errors lacks %q:\n%s", s, errs)
		}
	}
	_, one, _ := hwtest("report", "--root", "../..", "--run", run1, "--json")
	if !strings.Contains(one, `"run_id": "`+run1+`"`) || strings.Contains(one, run3) || strings.Count(one, `"status": "pass"`) < 4 {
		t.Errorf("--run %s:\n%.2000s", run1, one)
	}
	code, _, stderr = hwtest("report", "--root", "../..", "--run", "nope")
	if code == ExitOK || !strings.Contains(stderr, `has no run "nope"`) {
		t.Errorf("unknown run: exit %d, %s", code, stderr)
	}
}

func TestHistoryOfCell(t *testing.T) {
	recordedHistory(t)
	code, stdout, stderr := hwtest("history", "--root", "../..", "silero-vad-v5", "--target", "cpu")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[1], run2) || !strings.HasPrefix(lines[2], run1) ||
		!strings.Contains(lines[1], "0.1011") || !strings.Contains(lines[2], "1.30.0") {
		t.Errorf("history, newest first:\n%s", stdout)
	}
	code, _, stderr = hwtest("history", "--root", "../..", "no-such-model")
	if code == ExitOK || !strings.Contains(stderr, "no results for no-such-model") {
		t.Errorf("unknown model: exit %d, %s", code, stderr)
	}
}

// A status that got worse is a regression: exit 4. By default NEW is the newest run
// and OLD the newest before it sharing a cell (run1: run2 ran only v5).
func TestDiffStatusChange(t *testing.T) {
	recordedHistory(t)
	code, stdout, stderr := hwtest("diff", "--root", "../..")
	if code != ExitRegressed || !strings.Contains(stdout, run1) || !strings.Contains(stdout, "pass → error") {
		t.Errorf("exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr = hwtest("diff", "--root", "../..", run1, run2)
	if code != ExitOK {
		t.Errorf("v5 on cpu passed both times: exit %d\n%s%s", code, stdout, stderr)
	}
	code, _, stderr = hwtest("diff", "--root", "../..", run3, run1)
	if code == ExitOK || !strings.Contains(stderr, "is not older than") {
		t.Errorf("runs in the wrong order: exit %d, %s", code, stderr)
	}
}

// Ten back-to-back runs of the same cells (diff/testdata/noise): no pair is called a
// regression, whichever two are compared.
func TestDiffNoiseIsNotARegression(t *testing.T) {
	t.Setenv("HWTEST_DB", filepath.Join(t.TempDir(), "history.duckdb"))
	files, _ := filepath.Glob("../../diff/testdata/noise/*.json")
	if code, stdout, stderr := hwtest(append([]string{"import", "--root", "../.."}, files...)...); code != ExitOK || len(files) != 10 {
		t.Fatalf("import %d files: exit %d\n%s%s", len(files), code, stdout, stderr)
	}
	var ids []string
	for _, f := range files {
		ids = append(ids, strings.TrimSuffix(filepath.Base(f), ".json"))
	}
	flagged := 0
	for i := range ids {
		for j := i + 1; j < len(ids); j++ {
			code, stdout, stderr := hwtest("diff", "--root", "../..", ids[i], ids[j])
			if code != ExitOK {
				flagged++
				t.Errorf("diff %s %s: exit %d\n%s%s", ids[i], ids[j], code, stdout, stderr)
			}
		}
	}
	t.Logf("%d of %d pairs flagged", flagged, len(ids)*(len(ids)-1)/2)
}

// A real slowdown: ten runs with one intra-op thread, then four with ONNX Runtime's
// default pool, which on these two shared cores made detr, whisper and rag slower.
func TestDiffFlagsRealSlowdown(t *testing.T) {
	t.Setenv("HWTEST_DB", filepath.Join(t.TempDir(), "history.duckdb"))
	files, _ := filepath.Glob("../../diff/testdata/threads1/*.json")
	after, _ := filepath.Glob("../../diff/testdata/default-after/*.json")
	files = append(files, after...)
	if code, stdout, stderr := hwtest(append([]string{"import", "--root", "../.."}, files...)...); code != ExitOK || len(files) != 14 {
		t.Fatalf("import %d files: exit %d\n%s%s", len(files), code, stdout, stderr)
	}
	lastBefore := "20261123T191148Z-cc8d06"
	code, stdout, stderr := hwtest("diff", "--root", "../..", "--json", lastBefore)
	if code != ExitRegressed {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	var r struct {
		Cells []struct {
			Model   string
			Latency *struct{ Verdict string }
		}
	}
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, c := range r.Cells {
		if c.Latency != nil {
			got[c.Model] = c.Latency.Verdict
		}
	}
	for _, m := range []string{"detr-resnet-50", "whisper-tiny", "rag-token-nq"} {
		if got[m] != "regressed" {
			t.Errorf("%s: latency %q, want regressed (%v)", m, got[m], got)
		}
	}
	if got["silero-vad-v5"] == "regressed" {
		t.Errorf("silero-vad-v5 did not slow down: %v", got)
	}
}
