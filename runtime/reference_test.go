package runtime

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hwtest/hwtest/catalog"
	"github.com/hwtest/hwtest/layout"
	"github.com/hwtest/hwtest/sources"
	"github.com/hwtest/hwtest/spec"
)

// A sha256 mismatch says what to do for the kind of source: `make setup` can
// fetch npm:, zoo: and hf: files again, but never a file: one.
func TestResolveSHA256MismatchAdvice(t *testing.T) {
	root := t.TempDir()
	t.Setenv("HF_HUB_CACHE", filepath.Join(root, "hub"))
	pin := strings.Repeat("0", 64)
	for _, c := range []struct {
		source string
		want   []string
		never  string
	}{
		{"file:m.onnx", []string{"the file changed since models.yaml pinned it", "restore it", "update sha256"}, "make setup"},
		{"npm:@scope/pkg@1.0.0/m.onnx", []string{"delete it and run `make setup` (or `hwtest fetch`) to fetch it again", "if the pin is what is wrong, update sha256"}, ""},
		{"zoo:tiny", []string{"delete it and run `make setup` (or `hwtest fetch`) to build it again"}, ""},
		{"hf:org/repo/m.onnx@abc", []string{"delete it and run `hwtest fetch --hf`"}, "make setup"},
	} {
		src, err := sources.Parse(c.source)
		if err != nil {
			t.Fatal(err)
		}
		path := sources.LocalPath(root, "", src)
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte("not the pinned bytes"), 0o644); err != nil {
			t.Fatal(err)
		}
		got, _ := sources.SHA256(path)
		_, err = ResolveIn(root, Model{ID: "m", Source: c.source, SHA256: pin})
		if err == nil {
			t.Errorf("%s: a wrong sha256 was accepted", c.source)
			continue
		}
		msg := err.Error()
		for _, w := range append(c.want, "has sha256 "+got, "models.yaml pins "+pin) {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: %s\nwant it to contain %q", c.source, msg, w)
			}
		}
		if c.never != "" && strings.Contains(msg, c.never) {
			t.Errorf("%s: %s\nadvises %q, which cannot help", c.source, msg, c.never)
		}
	}
}

// A file: source is relative to the folder of the models.yaml that names it, as
// documented, even when that catalog lives outside the repository.
func TestResolveFileSourceAgainstCatalogFolder(t *testing.T) {
	root, elsewhere := t.TempDir(), t.TempDir()
	hardware := filepath.Join(repoRoot(t), "hardware.yaml")
	catalogDir := filepath.Join(elsewhere, "catalogs")
	os.MkdirAll(filepath.Join(catalogDir, "models"), 0o755)
	models := filepath.Join(catalogDir, "models.yaml")
	os.WriteFile(models, []byte("models:\n  - {id: mine, family: vision, task: t, source: \"file:models/mine.onnx\"}\n"), 0o644)
	want := filepath.Join(catalogDir, "models", "mine.onnx")
	os.WriteFile(want, []byte("onnx bytes"), 0o644)
	// The same relative path under the root must not be what is found.
	os.MkdirAll(filepath.Join(root, "models"), 0o755)
	os.WriteFile(filepath.Join(root, "models", "mine.onnx"), []byte("the wrong file"), 0o644)

	// Named relative to the working directory, as the CLI names catalogs.
	t.Chdir(elsewhere)
	c, err := catalog.Load(filepath.Join("catalogs", "models.yaml"), hardware)
	if err != nil {
		t.Fatal(err)
	}
	rm, err := ResolveIn(root, spec.ModelOf(c.Models[0]))
	if err != nil {
		t.Fatal(err)
	}
	if rm.Path != want {
		t.Errorf("file:models/mine.onnx resolved to %s, want %s (next to the catalog)", rm.Path, want)
	}
}

// repoRoot is this repository's root, for its real hardware.yaml.
func repoRoot(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root, err := layout.RootAbove(wd)
	if err != nil {
		t.Fatal(err)
	}
	return root
}
