package generator_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hwtest/hwtest/catalog"
	"github.com/hwtest/hwtest/generator"
)

func TestNewOut(t *testing.T) {
	root := t.TempDir()
	elsewhere := t.TempDir()
	in := func(p string) string { return filepath.Join(root, p) }
	for _, tc := range []struct {
		models, out string
		wantDir     string
		wantErr     string
	}{
		{models: in("models.yaml"), wantDir: "generated"},
		{models: in("mine/models.yaml"), wantDir: "mine/generated"},
		{models: in("my.yaml"), wantDir: "generated-my"},
		{models: in("my.yaml"), out: in("suites/mine"), wantDir: "suites/mine"},
		{models: filepath.Join(elsewhere, "models.yaml"), wantErr: "is outside the hwtest checkout"},
		{models: filepath.Join(elsewhere, "models.yaml"), out: in("mine"), wantDir: "mine"},
		{models: in("my.yaml"), out: in("generated/mine"), wantErr: "generated/ holds the repository's own suites"},
		{models: in("my.yaml"), out: in("generated"), wantErr: "generated/ holds the repository's own suites"},
		{models: in("my.yaml"), out: root, wantErr: "need a folder of their own"},
		{models: in("my.yaml"), out: filepath.Dir(root), wantErr: "need a folder of their own"},
		{models: in("my.yaml"), out: in("x/testdata"), wantErr: "the go tool ignores folders named testdata"},
		{models: in("my.yaml"), out: in("my suites"), wantErr: `' ' is not allowed in a Go import path`},
		{models: in("models.yaml"), out: in("other"), wantErr: "always generates into generated/"},
	} {
		// A catalog outside the checkout is named by its absolute path in headers,
		// whatever the working directory: tested below.
		o, err := generator.NewOut(root, tc.models, in("hardware.yaml"), tc.out)
		switch {
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("NewOut(%s, --out %q): %v, want an error saying %q", tc.models, tc.out, err, tc.wantErr)
		case tc.wantErr == "" && err != nil:
			t.Errorf("NewOut(%s, --out %q): %v", tc.models, tc.out, err)
		case tc.wantErr == "" && o.Dir != tc.wantDir:
			t.Errorf("NewOut(%s, --out %q) writes %s/, want %s/", tc.models, tc.out, o.Dir, tc.wantDir)
		}
	}
}

// A catalog outside the checkout is named the same from any working directory.
func TestOutNamesAnOutsideCatalogAbsolutely(t *testing.T) {
	root := t.TempDir()
	elsewhere := filepath.Join(t.TempDir(), "models.yaml")
	t.Chdir(root)
	rel, err := filepath.Rel(root, elsewhere)
	if err != nil {
		t.Fatal(err)
	}
	o, err := generator.NewOut(root, rel, "hardware.yaml", "mine")
	if err != nil || o.Models != filepath.ToSlash(elsewhere) {
		t.Errorf("NewOut(%s): %+v, %v; want the catalog named %s", rel, o, err, elsewhere)
	}
}

// Two catalogs' suites never take each other's files: a file is stale only for the
// catalog its header names, even when both write the same folder.
func TestAnotherCatalogsFilesAreNotStale(t *testing.T) {
	root := t.TempDir()
	c, err := catalog.Load("testdata/basic/models.yaml", "testdata/basic/hardware.yaml")
	if err != nil {
		t.Fatal(err)
	}
	mine := generator.Out{Dir: "mine", Models: "mine/models.yaml", Hardware: "hardware.yaml"}
	files, err := generator.GenerateIn(c, mine)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := generator.WriteIn(root, mine, files, nil); err != nil {
		t.Fatal(err)
	}
	for p, data := range files {
		if !strings.HasPrefix(p, "mine/") || !strings.HasPrefix(string(data), "// "+mine.Header()) {
			t.Errorf("%s: not under mine/ or without mine's header:\n%.200s", p, data)
		}
	}
	if _, ok := files["mine/generate.go"]; !ok {
		t.Errorf("no mine/generate.go for go generate")
	}
	// Another catalog writing the same folder adds its files and removes none of mine.
	theirs := generator.Out{Dir: "mine", Models: "theirs.yaml", Hardware: "hardware.yaml"}
	other, err := generator.GenerateIn(c, theirs)
	if err != nil {
		t.Fatal(err)
	}
	changes, err := generator.WriteIn(root, theirs, map[string][]byte{"mine/theirs/x.go": other["mine/generate.go"]}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, ch := range changes {
		if ch.Kind == "stale" {
			t.Errorf("theirs removed %s", ch.Path)
		}
	}
	for p := range files {
		if _, err := os.Stat(filepath.Join(root, p)); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
	// Its whole suite there would overwrite mine's files: refused, nothing written.
	_, err = generator.WriteIn(root, theirs, other, nil)
	if err == nil || !strings.Contains(err.Error(), "belongs to the suites of mine/models.yaml, not of theirs.yaml") {
		t.Errorf("theirs over mine: %v", err)
	}
	for p, data := range files {
		if b, _ := os.ReadFile(filepath.Join(root, p)); !bytes.Equal(b, data) {
			t.Errorf("%s was overwritten", p)
		}
	}
	// Mine's own stale file is still removed.
	stale := filepath.Join(root, "mine/audio/gone.go")
	if err := os.WriteFile(stale, files["mine/suite/suite_test.go"], 0o644); err != nil {
		t.Fatal(err)
	}
	changes, err = generator.WriteIn(root, mine, files, nil)
	if err != nil || len(changes) != 1 || changes[0].Path != "mine/audio/gone.go" || changes[0].Kind != "stale" {
		t.Errorf("regenerating mine: %v, %+v", err, changes)
	}
}
