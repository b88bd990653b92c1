package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestMain points the history at a file of this test process, so no test writes the
// repository's .hwtest/history.duckdb; `hwtest run` children inherit it. Tests that
// check the history use a file of their own (t.Setenv).
func TestMain(m *testing.M) {
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
