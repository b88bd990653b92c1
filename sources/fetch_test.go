package sources

import (
	"os"
	"path/filepath"
	"testing"
)

// WriteAtomic keeps a file's permissions, and gives a new one 0644: a catalog `hwtest
// add` rewrites, or a model fetched, stays readable by whoever could read it.
func TestWriteAtomicKeepsTheMode(t *testing.T) {
	dir := t.TempDir()
	fresh := filepath.Join(dir, "new", "models.yaml")
	if err := WriteAtomic(fresh, []byte("a")); err != nil {
		t.Fatal(err)
	}
	kept := filepath.Join(dir, "kept.yaml")
	if err := os.WriteFile(kept, []byte("a"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(kept, 0o640); err != nil {
		t.Fatal(err)
	}
	if err := WriteAtomic(kept, []byte("b")); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]os.FileMode{fresh: 0o644, kept: 0o640} {
		info, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if info.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", path, info.Mode().Perm(), want)
		}
	}
	if b, _ := os.ReadFile(kept); string(b) != "b" {
		t.Errorf("kept.yaml holds %q", b)
	}
}
