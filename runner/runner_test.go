package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
	os.MkdirAll(filepath.Join(root, "generated", "audio"), 0o755)
	return Options{Root: root, OutDir: filepath.Join(root, "out"), Timeout: timeout, Log: os.Stderr}
}

func TestCrashIsRecordedNotLost(t *testing.T) {
	o := options(t, time.Minute)
	bin := fakeSuite(t, `echo "fatal error: unexpected signal during runtime execution" >&2; kill -SEGV $$`)
	reports, fail := runModel(context.Background(), o, bin, catalog.Model{ID: "m", Family: "audio"})
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
	_, fail := runModel(context.Background(), o, bin, catalog.Model{ID: "m", Family: "audio"})
	if took := time.Since(start); took > 10*time.Second {
		t.Fatalf("runModel returned after %v", took)
	}
	if fail == nil || !strings.Contains(fail.Err, "timed out after 500ms") {
		t.Errorf("failure = %+v", fail)
	}
}

func TestExitWithoutReport(t *testing.T) {
	o := options(t, time.Minute)
	_, fail := runModel(context.Background(), o, fakeSuite(t, `echo "panic: boom" >&2; exit 2`), catalog.Model{ID: "m", Family: "audio"})
	if fail == nil || !strings.Contains(fail.Err, "ended without a report") || !strings.Contains(fail.Stderr, "panic: boom") {
		t.Errorf("failure = %+v", fail)
	}
}

func TestTailKeepsTheEnd(t *testing.T) {
	var tl tail
	for i := 0; i < 5000; i++ {
		tl.Write([]byte("0123456789"))
	}
	tl.Write([]byte("THE END"))
	if s := tl.String(); len(s) != tailSize || !strings.HasSuffix(s, "THE END") {
		t.Errorf("tail: %d bytes, ends %q", len(s), s[len(s)-10:])
	}
}
