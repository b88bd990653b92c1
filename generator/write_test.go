package generator_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hwtest/hwtest/generator"
)

func header(body string) []byte {
	return []byte("// " + generator.Header + "\n\npackage x_test\n" + body)
}

func TestWriteDiffAndStale(t *testing.T) {
	root := t.TempDir()
	files := map[string][]byte{
		"generated/audio/a_test.go": header("// a\n"),
		"generated/audio/b_test.go": header("// b\n"),
	}
	changes, err := generator.Write(root, files, nil)
	must(t, err)
	if len(changes) != 2 || changes[0].Kind != "missing" {
		t.Fatalf("first write: %+v", changes)
	}

	// Unchanged files are not rewritten (their mtime stays), so build caches stay warm.
	old := time.Now().Add(-time.Hour)
	a := filepath.Join(root, "generated/audio/a_test.go")
	must(t, os.Chtimes(a, old, old))
	changes, err = generator.Write(root, files, nil)
	must(t, err)
	if len(changes) != 0 {
		t.Fatalf("second write changed %+v", changes)
	}
	if st, _ := os.Stat(a); !st.ModTime().Equal(old) {
		t.Errorf("unchanged file was rewritten")
	}

	// A stale generated file is removed; a hand-written one is kept; a changed one
	// is reported with a diff.
	must(t, os.WriteFile(filepath.Join(root, "generated/audio/gone_test.go"), header("// gone\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(root, "generated/audio/helper_test.go"), []byte("package x_test\n"), 0o644))
	files["generated/audio/b_test.go"] = header("// b2\n")
	changes, err = generator.Diff(root, files)
	must(t, err)
	want := []string{"changed generated/audio/b_test.go", "stale generated/audio/gone_test.go"}
	if len(changes) != len(want) {
		t.Fatalf("diff: %+v", changes)
	}
	for i, c := range changes {
		if got := c.Kind + " " + c.Path; got != want[i] {
			t.Errorf("change %d = %q, want %q", i, got, want[i])
		}
	}
	if changes[0].Diff == "" || changes[1].Diff == "" {
		t.Errorf("changes carry no diff")
	}
	_, err = generator.Write(root, files, nil)
	must(t, err)
	if _, err := os.Stat(filepath.Join(root, "generated/audio/gone_test.go")); !os.IsNotExist(err) {
		t.Errorf("stale file still there")
	}
	if _, err := os.Stat(filepath.Join(root, "generated/audio/helper_test.go")); err != nil {
		t.Errorf("hand-written file removed: %v", err)
	}
}

// A failure part-way leaves the tree as it was: nothing is renamed into place until
// every file was written.
func TestWriteIsAllOrNothing(t *testing.T) {
	root := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(root, "generated"), 0o755))
	// "generated/vision" is a file, so the vision folder cannot be made.
	must(t, os.WriteFile(filepath.Join(root, "generated/vision"), nil, 0o644))
	files := map[string][]byte{
		"generated/audio/a_test.go":  header(""),
		"generated/vision/v_test.go": header(""),
	}
	if _, err := generator.Write(root, files, nil); err == nil {
		t.Fatal("want an error")
	}
	entries, _ := os.ReadDir(filepath.Join(root, "generated", "audio"))
	if len(entries) != 0 {
		t.Errorf("half-written: generated/audio has %v", entries)
	}
}
