package sources

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLocalPath(t *testing.T) {
	t.Setenv("HF_HUB_CACHE", "/hub")
	for src, want := range map[string]string{
		"file:models/m.onnx": "/r/models/m.onnx",
		"zoo:tiny-bert":      "/r/.hwtest/models/zoo/tiny-bert.onnx",
		"npm:@ricky0123/vad-web@0.0.31/dist/silero_vad_v5.onnx": "/r/.hwtest/models/npm/@ricky0123/vad-web@0.0.31/dist/silero_vad_v5.onnx",
		"hf:google-bert/bert-base-uncased/onnx/model.onnx@abc":  "/hub/models--google-bert--bert-base-uncased/snapshots/abc/onnx/model.onnx",
	} {
		s, err := Parse(src)
		if err != nil {
			t.Fatal(err)
		}
		if got := LocalPath("/r", "", s); got != want {
			t.Errorf("%s: %s, want %s", src, got, want)
		}
		if s.String() != src {
			t.Errorf("round trip: %s → %s", src, s.String())
		}
	}
}

// A file: path is relative to the folder of the catalog naming it; the other kinds
// do not depend on where the catalog is.
func TestLocalPathFileAgainstCatalogDir(t *testing.T) {
	t.Setenv("HF_HUB_CACHE", "/hub")
	for _, c := range []struct{ dir, src, want string }{
		{"", "file:models/m.onnx", "/r/models/m.onnx"},
		{"catalogs", "file:m.onnx", "/r/catalogs/m.onnx"},
		{"/elsewhere/cat", "file:m.onnx", "/elsewhere/cat/m.onnx"},
		{"/elsewhere/cat", "file:../shared/m.onnx", "/elsewhere/shared/m.onnx"},
		{"/elsewhere/cat", "zoo:tiny", "/r/.hwtest/models/zoo/tiny.onnx"},
		{"/elsewhere/cat", "npm:p@1.0.0/m.onnx", "/r/.hwtest/models/npm/p@1.0.0/m.onnx"},
		{"/elsewhere/cat", "hf:o/r/m.onnx@abc", "/hub/models--o--r/snapshots/abc/m.onnx"},
	} {
		s, err := Parse(c.src)
		if err != nil {
			t.Fatal(err)
		}
		if got := LocalPath("/r", c.dir, s); got != c.want {
			t.Errorf("LocalPath(/r, %q, %s) = %s, want %s", c.dir, c.src, got, c.want)
		}
	}
}

func TestCatalogDir(t *testing.T) {
	for dir, want := range map[string]string{
		"/r":             "",
		"/r/catalogs":    "catalogs",
		"/r/a/b":         "a/b",
		"/elsewhere":     "/elsewhere",
		"/r2":            "/r2",
		"/":              "/",
		"/r/..foo":       "..foo",
		"relative/as-is": "relative/as-is",
	} {
		if got := CatalogDir("/r", dir); got != want {
			t.Errorf("CatalogDir(/r, %s) = %q, want %q", dir, got, want)
		}
	}
}

// Fetch finds a file: model next to a catalog outside the root.
func TestFetchFileNextToCatalog(t *testing.T) {
	root, catalogDir := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(catalogDir, "m.onnx"), []byte("mine"), 0o644)
	src, _ := Parse("file:m.onnx")
	path, err := (&Fetcher{Root: root, CatalogDir: catalogDir}).Fetch(context.Background(), src, sum([]byte("mine")))
	if err != nil || path != filepath.Join(catalogDir, "m.onnx") {
		t.Errorf("Fetch = %s, %v; want %s", path, err, filepath.Join(catalogDir, "m.onnx"))
	}
}

// tgz builds an npm-style tarball holding package/<name> for each file.
func tgz(t *testing.T, files map[string]string) []byte {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for name, body := range files {
		tw.WriteHeader(&tar.Header{Name: "package/" + name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg})
		tw.Write([]byte(body))
	}
	tw.Close()
	gz.Close()
	return buf.Bytes()
}

// fakeNpm is an `npm` that "packs" a prepared tarball into --pack-destination and
// counts its calls, so the npm path is tested without a registry.
func fakeNpm(t *testing.T, tarball []byte, name string) (npm string, calls func() int) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src.tgz")
	os.WriteFile(src, tarball, 0o644)
	log := filepath.Join(dir, "calls")
	npm = filepath.Join(dir, "npm")
	script := "#!/bin/sh\necho x >> " + log + "\nwhile [ $# -gt 0 ]; do if [ \"$1\" = --pack-destination ]; then dest=$2; fi; shift; done\ncp " + src + " \"$dest/" + name + "\"\n"
	os.WriteFile(npm, []byte(script), 0o755)
	return npm, func() int { b, _ := os.ReadFile(log); return strings.Count(string(b), "x") }
}

func TestFetchNpm(t *testing.T) {
	root := t.TempDir()
	model := "onnx-bytes"
	npm, calls := fakeNpm(t, tgz(t, map[string]string{"dist/m.onnx": model, "README.md": "hi"}), "scope-pkg-1.2.3.tgz")
	f := &Fetcher{Root: root, Npm: npm}
	src, _ := Parse("npm:@scope/pkg@1.2.3/dist/m.onnx")
	want := sum([]byte(model))

	path, err := f.Fetch(context.Background(), src, want)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != model {
		t.Errorf("fetched %q", b)
	}
	// Present with the right hash: nothing is done again.
	if _, err := f.Fetch(context.Background(), src, want); err != nil || calls() != 1 {
		t.Errorf("second fetch: err %v, npm called %d times", err, calls())
	}
	// A truncated file on disk is replaced from the cached tarball.
	os.WriteFile(path, []byte("onnx"), 0o644)
	if _, err := f.Fetch(context.Background(), src, want); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != model {
		t.Errorf("not repaired: %q", b)
	}
	// A pinned hash that does not match refuses to install anything.
	other, _ := Parse("npm:@scope/pkg@1.2.3/README.md")
	if _, err := f.Fetch(context.Background(), other, want); err == nil || !strings.Contains(err.Error(), "refusing to install") {
		t.Errorf("wrong hash: %v", err)
	}
	if _, err := os.Stat(LocalPath(root, "", other)); !os.IsNotExist(err) {
		t.Errorf("a file with the wrong hash was installed")
	}
	missing, _ := Parse("npm:@scope/pkg@1.2.3/dist/absent.onnx")
	if _, err := f.Fetch(context.Background(), missing, ""); err == nil || !strings.Contains(err.Error(), "has no package/dist/absent.onnx") {
		t.Errorf("missing member: %v", err)
	}
}

func TestFetchNpmFailureSaysWhy(t *testing.T) {
	dir := t.TempDir()
	npm := filepath.Join(dir, "npm")
	os.WriteFile(npm, []byte("#!/bin/sh\necho 'npm error code E404' >&2\nexit 1\n"), 0o755)
	f := &Fetcher{Root: t.TempDir(), Npm: npm}
	src, _ := Parse("npm:nope@1.0.0/x.onnx")
	_, err := f.Fetch(context.Background(), src, "")
	if err == nil || !strings.Contains(err.Error(), "npm pack nope@1.0.0") || !strings.Contains(err.Error(), "E404") {
		t.Errorf("got %v", err)
	}
}

func TestFetchZoo(t *testing.T) {
	root := t.TempDir()
	f := &Fetcher{Root: root, Build: func(name string) ([]byte, error) { return []byte("built " + name), nil }}
	src, _ := Parse("zoo:tiny")
	path, err := f.Fetch(context.Background(), src, "")
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "built tiny" {
		t.Errorf("got %q", b)
	}
}

// A file: source with the wrong sha256 cannot be fetched again: the message says
// to restore it or update the pin, with both sums.
func TestFetchFileMismatchAdvice(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "m.onnx"), []byte("changed"), 0o644)
	src, _ := Parse("file:m.onnx")
	pin := strings.Repeat("0", 64)
	_, err := (&Fetcher{Root: root}).Fetch(context.Background(), src, pin)
	got := sum([]byte("changed"))
	if err == nil || !strings.Contains(err.Error(), "restore it") || !strings.Contains(err.Error(), "update sha256 in models.yaml to "+got) ||
		!strings.Contains(err.Error(), pin) || strings.Contains(err.Error(), "make setup") {
		t.Errorf("got %v", err)
	}
}
