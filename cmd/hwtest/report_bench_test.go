package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hwtest/hwtest/internal/histtest"
)

// BenchmarkReportHTML is `hwtest report --html` on a history of 300 models × 14
// targets × 50 runs (histtest.Scale: copies of three real recorded runs, model ids
// renamed; no number made up). The issue asks for under 3 s; each iteration reports
// the page's size.
func BenchmarkReportHTML(b *testing.B) {
	dir := b.TempDir()
	db := filepath.Join(dir, "history.duckdb")
	histtest.Scale(b, db, "../..", 300, 50)
	out := filepath.Join(dir, "report.html")
	for b.Loop() {
		code, stdout, stderr := hwtest("report", "--root", "../..", "--db", db, "--html", "--out", out)
		if code != ExitOK || !strings.Contains(stdout, "4200 cells, 50 runs") {
			b.Fatalf("exit %d\n%s%s", code, stdout, stderr)
		}
	}
	st, err := os.Stat(out)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(st.Size())/(1<<20), "MiB")
}
