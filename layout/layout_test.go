package layout

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRoot(t *testing.T) {
	root := t.TempDir()
	deep := filepath.Join(root, "generated", "audio")
	os.MkdirAll(deep, 0o755)
	if _, err := RootAbove(deep); err == nil || !strings.Contains(err.Error(), RootEnv) {
		t.Errorf("no catalogs: %v", err)
	}
	os.WriteFile(filepath.Join(root, "go.mod"), nil, 0o644)
	os.WriteFile(filepath.Join(root, "hardware.yaml"), nil, 0o644)
	if got, err := RootAbove(deep); err != nil || got != root {
		t.Errorf("RootAbove = %q, %v", got, err)
	}
	t.Setenv(RootEnv, root)
	t.Setenv(LibraryEnv, "")
	if lib, err := LibraryPath(); err != nil || lib != filepath.Join(root, ".hwtest/lib/libonnxruntime.so.1") {
		t.Errorf("LibraryPath = %q, %v", lib, err)
	}
	t.Setenv(LibraryEnv, "/opt/ort/libonnxruntime.so")
	if lib, _ := LibraryPath(); lib != "/opt/ort/libonnxruntime.so" {
		t.Errorf("LibraryPath with %s = %q", LibraryEnv, lib)
	}
}
