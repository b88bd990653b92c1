package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hwtest/hwtest/catalog"
	"github.com/hwtest/hwtest/internal/testenv"
	"github.com/hwtest/hwtest/zoo"
)

const myModels = `# my own models
models:
  - id: my-vit
    family: vision
    task: image-classification
    source: file:tiny-vit.onnx # beside this catalog
    inputs:
      pixel_values: {dims: [1, 3, 32, 32], range: [0, 1]}
    outputs: {primary: logits, distribution: probabilities}
`

// A catalog of one's own (--models) generates into a folder of its own and never
// touches the repository's suites; go generate can refresh it from its folder.
func TestAnotherCatalogKeepsTheRepositorysSuites(t *testing.T) {
	root := newRoot(t, testModels)
	if code, stdout, stderr := hwtest("generate", "--root", root); code != ExitOK {
		t.Fatalf("generate: exit %d\n%s%s", code, stdout, stderr)
	}
	mine := filepath.Join(root, "my.yaml")
	write(t, mine, myModels)
	code, stdout, stderr := hwtest("generate", "--root", root, "--models", mine)
	if code != ExitOK || !strings.Contains(stdout, "created generated-my/vision/my_vit.go") || strings.Contains(stdout, "removed") {
		t.Fatalf("generate --models my.yaml: exit %d\n%s%s", code, stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(root, "generated/audio/vad.go")); err != nil {
		t.Errorf("the repository's suite is gone: %v", err)
	}
	for _, args := range [][]string{{"verify", "--root", root}, {"verify", "--root", root, "--models", mine}} {
		if code, stdout, stderr := hwtest(args...); code != ExitOK {
			t.Errorf("%v: exit %d\n%s%s", args, code, stdout, stderr)
		}
	}
	// The repository's generate leaves the other catalog's suites alone too.
	if _, stdout, _ := hwtest("generate", "--root", root); !strings.Contains(stdout, "0 changed") {
		t.Errorf("the repository's generate changed files:\n%s", stdout)
	}

	// A catalog in a folder of its own: generated/ beside it, with a go:generate line
	// whose paths work from that folder.
	sub := filepath.Join(root, "mine", "models.yaml")
	write(t, sub, myModels)
	if code, stdout, stderr := hwtest("generate", "--root", root, "--models", sub); code != ExitOK || !strings.Contains(stdout, "created mine/generated/suite/suite_test.go") {
		t.Fatalf("generate --models mine/models.yaml: exit %d\n%s%s", code, stdout, stderr)
	}
	gen, err := os.ReadFile(filepath.Join(root, "mine/generated/generate.go"))
	if err != nil || !strings.Contains(string(gen), "//go:generate go run github.com/hwtest/hwtest/cmd/hwtest --models ../models.yaml --out . generate") {
		t.Errorf("mine/generated/generate.go: %v\n%s", err, gen)
	}

	// Where the suites cannot go, nothing is written and the message says what to do.
	outside := filepath.Join(t.TempDir(), "models.yaml")
	write(t, outside, myModels)
	if code, _, stderr := hwtest("generate", "--root", root, "--models", outside); code != ExitError || !strings.Contains(stderr, "pass --out") {
		t.Errorf("a catalog outside the checkout: exit %d\n%s", code, stderr)
	}
	if code, _, stderr := hwtest("generate", "--root", root, "--models", mine, "--out", filepath.Join(root, "generated", "my")); code != ExitError || !strings.Contains(stderr, "holds the repository's own suites") {
		t.Errorf("--out inside generated/: exit %d\n%s", code, stderr)
	}
}

// hwtest run --models builds and runs the other catalog's suite, its file: model
// found beside the catalog, and the cells name the catalog that ran.
func TestRunAnotherCatalog(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a suite")
	}
	_, err := os.Stat("../../.hwtest/lib/libonnxruntime.so.1")
	testenv.Need(t, "ONNX Runtime (make setup)", err)
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	// Inside the checkout (the suites are packages of its module), in a folder git
	// ignores.
	if err := os.MkdirAll(filepath.Join(root, "tmp"), 0o755); err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp(filepath.Join(root, "tmp"), "catalog")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	model, _, err := zoo.Build("tiny-vit")
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "tiny-vit.onnx"), string(model))
	catalog := filepath.Join(dir, "models.yaml")
	write(t, catalog, myModels)
	reports := t.TempDir()
	db := filepath.Join(t.TempDir(), "history.duckdb")
	t.Setenv("HWTEST_DB", db)
	t.Setenv("HWTEST_MEASURE_TIME", "100ms")
	code, stdout, stderr := hwtest("run", "--root", root, "--models", catalog, "--reports", reports, "--target", "cpu")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	cell, ok := readMatrix(t, filepath.Join(reports, "latest", "matrix.json"))["my-vit/cpu"]
	if !ok || cell.Status != "pass" {
		t.Fatalf("my-vit on cpu: %+v\n%s%s", cell, stdout, stderr)
	}
	rel, _ := filepath.Rel(root, catalog)
	if cell.Provenance == nil || !strings.HasPrefix(cell.Provenance.Catalog, filepath.ToSlash(rel)+" (sha256 ") || cell.Provenance.CatalogCommit != "" {
		t.Errorf("provenance does not name the catalog %s (untracked: no commit): %+v", rel, cell.Provenance)
	}
	checkStored(t, db, filepath.Join(reports, "latest", "matrix.json")) // the catalog read back too
	if code, stdout, _ := hwtest("verify", "--root", root, "--quiet"); code != ExitOK {
		t.Errorf("the repository's suites changed:\n%s", stdout)
	}
}

// A catalog of one's own keeps its own history: cells are keyed by model id, and its
// ids may be the repository's.
func TestAnotherCatalogHasItsOwnHistory(t *testing.T) {
	t.Setenv("HWTEST_DB", "")
	root := t.TempDir()
	for _, tc := range []struct{ models, want string }{
		{"models.yaml", ".hwtest/history.duckdb"},
		{"mymodels/models.yaml", ".hwtest/history-mymodels-models.duckdb"},
		{"my.yaml", ".hwtest/history-my.duckdb"},
	} {
		g := &Globals{Root: root, ModelsFile: filepath.Join(root, tc.models)}
		if err := g.resolveRoot(); err != nil {
			t.Fatal(err)
		}
		if g.DB != filepath.Join(root, tc.want) {
			t.Errorf("--models %s: history %s, want ROOT/%s", tc.models, g.DB, tc.want)
		}
	}
}

// The input and expected-output files a catalog's models read are part of what
// ran: a new file gives a new sum, the same files the same.
func TestDataFilesAreInTheProvenance(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "x.npy"), "first")
	c := &catalog.Catalogs{Models: []catalog.Model{{ID: "m", Dir: dir,
		Inputs:   map[string]catalog.Input{"x": {File: "x.npy"}, "y": {Dims: []int64{1}}},
		Expected: map[string]catalog.Expected{"out": {File: "x.npy"}}}}}
	n, first := dataFiles(dir, c)
	if n != 2 {
		t.Fatalf("%d files, want 2", n)
	}
	if _, again := dataFiles(dir, c); again != first {
		t.Errorf("the same files, another sum")
	}
	write(t, filepath.Join(dir, "x.npy"), "second")
	if _, changed := dataFiles(dir, c); changed == first {
		t.Errorf("a changed input file left the sum as it was")
	}
	if n, _ := dataFiles(dir, &catalog.Catalogs{Models: []catalog.Model{{ID: "plain"}}}); n != 0 {
		t.Errorf("a catalog without files: %d", n)
	}
}
