package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hwtest/hwtest/internal/scaletest"
	"github.com/hwtest/hwtest/internal/testenv"
)

// BenchmarkGenerate1000Models is `hwtest generate` of a catalog of 1,000 models (the
// real entries of models.yaml, all nine families, copied under new ids) on the
// 14 targets of hardware.yaml into an empty generated/: parse and check the
// catalogs, render, format, write. The issue asks for under 1 s (s/generate).
//
// The machine is shared, so wall time moves with the load; cpu-s/generate (user +
// system time of this process) does not, and over 2 cores wall time cannot fall
// below half of it.
func BenchmarkGenerate1000Models(b *testing.B) {
	root := scaletest.Root(b, "../..", 1000)
	var stdout string
	var cpu time.Duration
	for b.Loop() {
		b.StopTimer()
		if err := os.RemoveAll(filepath.Join(root, "generated")); err != nil {
			b.Fatal(err)
		}
		before := cpuTime(b)
		b.StartTimer()
		var code int
		var stderr string
		code, stdout, stderr = hwtest("generate", "--root", root)
		b.StopTimer()
		cpu += cpuTime(b) - before
		b.StartTimer()
		if code != ExitOK {
			b.Fatalf("exit %d\n%s", code, stderr)
		}
	}
	if !strings.Contains(stdout, "1002 files generated for 1000 models × 14 targets; 1002 changed") {
		b.Fatalf("generate said:\n%s", lastLine(stdout))
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/generate")
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/generate")
}

// cpuTime is the user and system time this process has used.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkGinkgoDryRun300Models is `ginkgo --dry-run ./generated/...` over the
// suites of 300 catalog models (models.yaml's entries copied, all nine families)
// right after one model's entry changed and `hwtest generate` rewrote its file,
// with a warm build cache: what a user waits for after editing the catalog. The
// issue asks for under 15 s (s/dry-run). It runs in a copy of the module
// (scaletest.Module), which a first dry-run compiles before the timing.
func BenchmarkGinkgoDryRun300Models(b *testing.B) {
	ginkgo, err := filepath.Abs("../../.hwtest/bin/ginkgo")
	if err == nil {
		_, err = os.Stat(ginkgo)
	}
	testenv.Need(b, "ginkgo (make setup)", err)
	root := scaletest.Module(b, "../..", 300)
	if code, _, stderr := hwtest("generate", "--root", root); code != ExitOK {
		b.Fatalf("generate: exit %d\n%s", code, stderr)
	}
	dryRun := func() {
		cmd := exec.Command(ginkgo, "--no-color", "--dry-run", "./generated/...")
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "Test Suite Passed") {
			b.Fatalf("ginkgo --dry-run: %v\n%s", err, lastLines(string(out), 20))
		}
	}
	start := time.Now()
	dryRun()
	b.Logf("first dry-run (compiles the module's packages in the copy): %.1f s", time.Since(start).Seconds())
	models := filepath.Join(root, "models.yaml")
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		src, err := os.ReadFile(models)
		if err != nil {
			b.Fatal(err)
		}
		src, err = scaletest.Tag(src, "silero-vad-v5-c0", fmt.Sprintf("edit%d", i))
		if err == nil {
			err = os.WriteFile(models, src, 0o644)
		}
		if err != nil {
			b.Fatal(err)
		}
		code, stdout, stderr := hwtest("generate", "--root", root)
		if code != ExitOK || !strings.Contains(stdout, "; 1 changed") {
			b.Fatalf("generate after one model's change: exit %d\n%s%s", code, lastLine(stdout), stderr)
		}
		b.StartTimer()
		dryRun()
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/dry-run")
}

func lastLine(s string) string { return lastLines(s, 1) }

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
