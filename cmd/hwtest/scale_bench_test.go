package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hwtest/hwtest/internal/scaletest"
)

// BenchmarkGenerate1000Models is `hwtest generate` of a catalog of 1,000 models (the
// real entries of models.yaml, all nine families, copied under new ids) on the
// 14 targets of hardware.yaml into an empty generated/: parse and check the
// catalogs, render, format, write. The issue asks for under 1 s (s/generate).
func BenchmarkGenerate1000Models(b *testing.B) {
	root := scaletest.Root(b, "../..", 1000)
	var stdout string
	for b.Loop() {
		b.StopTimer()
		if err := os.RemoveAll(filepath.Join(root, "generated")); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		var code int
		var stderr string
		code, stdout, stderr = hwtest("generate", "--root", root)
		if code != ExitOK {
			b.Fatalf("exit %d\n%s", code, stderr)
		}
	}
	if !strings.Contains(stdout, "1010 files generated for 1000 models × 14 targets; 1010 changed") {
		b.Fatalf("generate said:\n%s", lastLine(stdout))
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/generate")
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return fmt.Sprint(lines[len(lines)-1])
}
