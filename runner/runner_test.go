package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/hwtest/hwtest/catalog"
)

// fakeSuite writes a script standing in for a compiled suite binary.
func fakeSuite(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "suite.test")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func options(t *testing.T, timeout time.Duration) Options {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "generated", "suite"), 0o755)
	return Options{Root: root, OutDir: filepath.Join(root, "out"), Timeout: timeout, Log: os.Stderr}
}

func TestCrashIsRecordedNotLost(t *testing.T) {
	o := options(t, time.Minute)
	bin := fakeSuite(t, `echo "fatal error: unexpected signal during runtime execution" >&2; kill -SEGV $$`)
	reports, fail := runModel(context.Background(), o, bin, catalog.Model{ID: "m", Family: "audio"}, nil)
	if fail == nil || reports != nil {
		t.Fatalf("crash: reports %v, failure %v", reports, fail)
	}
	if !strings.Contains(fail.Err, "crashed (segmentation fault)") || !strings.Contains(fail.Stderr, "unexpected signal") {
		t.Errorf("failure = %+v", fail)
	}
}

func TestHangIsKilledAtTimeout(t *testing.T) {
	o := options(t, 500*time.Millisecond)
	// The child sleeps too: the whole process group must go, not only the shell.
	bin := fakeSuite(t, `sleep 30 & sleep 30`)
	start := time.Now()
	_, fail := runModel(context.Background(), o, bin, catalog.Model{ID: "m", Family: "audio"}, nil)
	if took := time.Since(start); took > 10*time.Second {
		t.Fatalf("runModel returned after %v", took)
	}
	if fail == nil || !strings.Contains(fail.Err, "timed out after 500ms") {
		t.Errorf("failure = %+v", fail)
	}
}

func TestExitWithoutReport(t *testing.T) {
	o := options(t, time.Minute)
	_, fail := runModel(context.Background(), o, fakeSuite(t, `echo "panic: boom" >&2; exit 2`), catalog.Model{ID: "m", Family: "audio"}, nil)
	if fail == nil || !strings.Contains(fail.Err, "ended without a report") || !strings.Contains(fail.Stderr, "panic: boom") {
		t.Errorf("failure = %+v", fail)
	}
}

func TestTailKeepsTheEnd(t *testing.T) {
	var tl output
	for i := 0; i < 5000; i++ {
		tl.Write([]byte("0123456789"))
	}
	tl.Write([]byte("THE END"))
	if s := tl.String(); len(s) != tailSize || !strings.HasSuffix(s, "THE END") {
		t.Errorf("tail: %d bytes, ends %q", len(s), s[len(s)-10:])
	}
}

// A Go crash prints its cause first and then a goroutine dump that can be far longer
// than the tail kept: the cause must still reach the cell.
func TestCrashCauseSurvivesALongDump(t *testing.T) {
	o := options(t, time.Minute)
	bin := fakeSuite(t, `echo "=== RUN TestAudio" >&2
echo "fatal error: runtime: out of memory" >&2
echo "" >&2
echo "runtime stack:" >&2
echo "runtime.throw({0x1234, 0x16})" >&2
i=0; while [ $i -lt 400 ]; do echo "goroutine $i [select]:" >&2; echo "	github.com/onsi/ginkgo/v2/internal.(*Suite).runNode(...)" >&2; i=$((i+1)); done
exit 2`)
	_, fail := runModel(context.Background(), o, bin, catalog.Model{ID: "m", Family: "audio"}, nil)
	if fail == nil || !strings.Contains(fail.Err, "fatal error: runtime: out of memory") || !strings.Contains(fail.Err, "runtime.throw") {
		t.Fatalf("failure = %+v", fail)
	}
	if !strings.Contains(fail.Stderr, "goroutine 399 [select]") {
		t.Errorf("the tail lost the end: %q", fail.Stderr)
	}
}

// A suite that cannot write its report because the disk is full must say so, not
// only that it ended without one. /dev/full fails every write with ENOSPC.
func TestDiskFullIsNamed(t *testing.T) {
	o := options(t, time.Minute)
	bin := fakeSuite(t, `dd if=/dev/zero of=/dev/full bs=1 count=1; exit 1`)
	_, fail := runModel(context.Background(), o, bin, catalog.Model{ID: "m", Family: "audio"}, nil)
	if fail == nil || !strings.Contains(fail.Err, "disk full") {
		t.Errorf("failure = %+v", fail)
	}
}

// Many runs in the same second: each gets a folder of its own.
func TestNewRunDirNeverReuses(t *testing.T) {
	reports := t.TempDir()
	seen := map[string]bool{}
	for range 50 {
		id, dir, err := NewRunDir(reports)
		if err != nil {
			t.Fatal(err)
		}
		if seen[dir] || filepath.Base(dir) != id {
			t.Fatalf("run %s in %s, seen before: %v", id, dir, seen[dir])
		}
		seen[dir] = true
	}
	if err := LinkLatest(reports, "a"); err != nil {
		t.Fatal(err)
	}
	if err := LinkLatest(reports, "b"); err != nil {
		t.Fatal(err)
	}
	if to, err := os.Readlink(filepath.Join(reports, "latest")); err != nil || to != "b" {
		t.Errorf("latest → %q, %v", to, err)
	}
	if left, _ := filepath.Glob(filepath.Join(reports, ".latest-*")); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}

// After an interrupt, specs that ended later are dropped: Ginkgo may have closed
// the session under an inference still running.
func TestEndedBeforeDropsWhatEndedAfterTheInterrupt(t *testing.T) {
	at := time.Now()
	r := types.Report{SpecReports: types.SpecReports{
		{LeafNodeText: "before", EndTime: at.Add(-time.Second)},
		{LeafNodeText: "after", EndTime: at.Add(time.Second)},
		{LeafNodeText: "never"},
	}}
	got := endedBefore([]types.Report{r}, at)
	if len(got) != 1 || len(got[0].SpecReports) != 1 || got[0].SpecReports[0].LeafNodeText != "before" {
		t.Errorf("kept %+v", got)
	}
	if len(r.SpecReports) != 3 {
		t.Errorf("the input was changed")
	}
}
