package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMain points the history at a file of this test process, so no test writes the
// repository's .hwtest/history.duckdb; `hwtest run` children inherit it. Tests that
// check the history use a file of their own (t.Setenv).
//
// The test binary started with a command ("explain …") is hwtest: `hwtest run`
// traces mismatch cells by running its own executable, which in a test of run in
// this process is this binary. Without this it would run every test again, and
// each of those runs would start more.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && !strings.HasPrefix(os.Args[1], "-") {
		main()
	}
	dir, err := os.MkdirTemp("", "hwtest-cmd-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("HWTEST_DB", filepath.Join(dir, "history.duckdb"))
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
