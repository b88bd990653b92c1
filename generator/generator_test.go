package generator_test

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hwtest/hwtest/catalog"
	"github.com/hwtest/hwtest/generator"
	"github.com/hwtest/hwtest/sources"
)

var update = flag.Bool("update", false, "rewrite testdata/*/expected and stderr.txt from the current output")

// TestGolden runs every case in testdata/<case>/: models.yaml and hardware.yaml in,
// either expected/** (the generated files) or stderr.txt (the exact error) out.
func TestGolden(t *testing.T) {
	cases, err := os.ReadDir("testdata")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		if !c.IsDir() {
			continue
		}
		t.Run(c.Name(), func(t *testing.T) {
			dir := filepath.Join("testdata", c.Name())
			got, genErr := generateCase(dir)
			stderrPath := filepath.Join(dir, "stderr.txt")
			expectedDir := filepath.Join(dir, "expected")
			if *update {
				os.RemoveAll(expectedDir)
				os.Remove(stderrPath)
				if genErr != nil {
					must(t, os.WriteFile(stderrPath, []byte(genErr.Error()+"\n"), 0o644))
					return
				}
				for p, b := range got {
					dst := filepath.Join(expectedDir, filepath.FromSlash(p))
					must(t, os.MkdirAll(filepath.Dir(dst), 0o755))
					must(t, os.WriteFile(dst, b, 0o644))
				}
				return
			}
			if want, err := os.ReadFile(stderrPath); err == nil {
				if genErr == nil {
					t.Fatalf("generation succeeded; want error:\n%s", want)
				}
				if diff := cmp.Diff(string(want), genErr.Error()+"\n"); diff != "" {
					t.Errorf("error text (-want +got):\n%s", diff)
				}
				return
			}
			if genErr != nil {
				t.Fatalf("generate: %v", genErr)
			}
			want := readTree(t, expectedDir)
			gotText := map[string]string{}
			for p, b := range got {
				gotText[p] = string(b)
			}
			if diff := cmp.Diff(want, gotText); diff != "" {
				t.Errorf("generated files (-want +got), run `go test ./generator -update` if intended:\n%s", diff)
			}
		})
	}
}

func generateCase(dir string) (map[string][]byte, error) {
	c, err := catalog.Load(filepath.Join(dir, "models.yaml"), filepath.Join(dir, "hardware.yaml"))
	if err != nil {
		// Messages name files relative to the case, as a user in that folder sees them.
		return nil, errString(strings.ReplaceAll(err.Error(), dir+string(filepath.Separator), ""))
	}
	// The case folder is the root, as the CLI makes each model's folder relative to it.
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	sources.RootRelative(c, abs)
	return generator.Generate(c)
}

type errString string

func (e errString) Error() string { return string(e) }

func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// catalogWith is a minimal valid catalog around the given models.
func catalogWith(models ...catalog.Model) *catalog.Catalogs {
	return &catalog.Catalogs{
		Models: models,
		Targets: []catalog.Target{
			{ID: "cpu", Name: "CPU", Runner: "native", Provider: "CPUExecutionProvider", Probe: "none", Precision: "fp32", Tolerance: catalog.Tolerance{RTol: 1e-5, ATol: 1e-6}},
		},
	}
}

func TestGenerateIsDeterministic(t *testing.T) {
	c := catalogWith(
		catalog.Model{ID: "b", Family: "audio", Task: "t", Source: "zoo:b", Inputs: map[string]catalog.Input{
			"z": {Value: []float64{1}}, "a": {Range: []float64{0, 1}}, "m": {Dims: []int64{1, 2}},
		}},
		catalog.Model{ID: "a", Family: "vision", Task: "t", Source: "zoo:a"},
	)
	first, err := generator.Generate(c)
	must(t, err)
	for i := 0; i < 20; i++ {
		again, err := generator.Generate(c)
		must(t, err)
		if diff := cmp.Diff(first, again); diff != "" {
			t.Fatalf("run %d differs:\n%s", i, diff)
		}
	}
}

// Model ids reach generated code only as string literals and as file names. The
// catalog rejects hostile ids; Generate must still never emit code they break.
func TestHostileIDsCannotInject(t *testing.T) {
	for _, id := range []string{"1st-model", "x.y_z-9", "a*b"} {
		files, err := generator.Generate(catalogWith(catalog.Model{ID: id, Family: "audio", Task: "t", Source: "zoo:x"}))
		if err != nil {
			t.Fatalf("%q: %v", id, err)
		}
		for p, b := range files {
			if strings.HasPrefix(p, generator.SuiteDir+"/") || p == generator.TargetsDir+"/targets.go" {
				continue
			}
			base := filepath.Base(p)
			if strings.HasPrefix(base, "_") || strings.HasPrefix(base, ".") {
				t.Errorf("%q: file %s would be ignored by go", id, p)
			}
			if got := describedID(t, b); got != id {
				t.Errorf("%q: Describe text parses as %q", id, got)
			}
		}
	}
	for _, id := range []string{"quote\"d", "new\nline", "a*/b", "paren(", "a b", ""} {
		_, err := generator.Generate(catalogWith(catalog.Model{ID: id, Family: "audio", Task: "t", Source: "zoo:x"}))
		if err == nil || !strings.Contains(err.Error(), strconv.Quote(id)) {
			t.Errorf("%q: want an error quoting the id, got %v", id, err)
		}
	}
}

// describedID parses a generated model file and returns the Describe's text.
func describedID(t *testing.T, src []byte) string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "x.go", src, parser.ParseComments)
	if err != nil {
		t.Fatalf("generated code does not parse: %v\n%s", err, src)
	}
	var id string
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || id != "" {
			return id == ""
		}
		if fn, ok := call.Fun.(*ast.Ident); ok && fn.Name == "Describe" {
			lit := call.Args[0].(*ast.BasicLit)
			id, _ = strconv.Unquote(lit.Value)
		}
		return true
	})
	return id
}

func TestFileNames(t *testing.T) {
	used := map[string]string{}
	for _, c := range []struct{ id, want string }{
		{"silero-vad-v5", "silero_vad_v5.go"},
		{"silero_vad_v5", "silero_vad_v5_2.go"}, // same name, another id
		{"silero-vad-v5", "silero_vad_v5.go"},   // same id keeps its name
		{"_hidden", "hidden.go"},
		{"...", "model.go"},
		{"Qwen/Qwen2", "qwen_qwen2.go"},
		// go would compile these only on one system, or only in tests.
		{"vad-linux", "vad_linux_model.go"},
		{"vad-windows-arm64", "vad_windows_arm64_model.go"},
		{"phi-wasm", "phi_wasm_model.go"},
		{"bert-test", "bert_test_model.go"},
		{"linux", "linux.go"}, // a whole name is no constraint
		{"tiny-unix", "tiny_unix.go"},
	} {
		if got := generator.FileName(c.id, used); got != c.want {
			t.Errorf("FileName(%q) = %q, want %q", c.id, got, c.want)
		}
	}
}

func TestPackageName(t *testing.T) {
	for family, want := range map[string]string{"vision-text": "visiontext", "mixture-of-experts": "mixtureofexperts", "rag": "rag"} {
		if got := generator.PackageName(family); got != want {
			t.Errorf("PackageName(%q) = %q, want %q", family, got, want)
		}
	}
}

// TestGoldenCompiles builds the expected output of every golden case, so a template
// that emits invalid Go fails here and not in a user's checkout.
func TestGoldenCompiles(t *testing.T) {
	if testing.Short() {
		t.Skip("builds packages")
	}
	pkgs, _ := filepath.Glob("testdata/*/expected/generated/*")
	if len(pkgs) == 0 {
		t.Fatal("no golden packages")
	}
	args := []string{"vet"}
	for _, p := range pkgs {
		args = append(args, "./"+filepath.ToSlash(p))
	}
	out, err := exec.Command("go", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("go %v: %v\n%s", args, err, out)
	}
}

// Files are rendered in parallel; what Generate returns must not depend on which
// finished first: the errors of many bad models come in catalog order, every time.
func TestGenerateErrorsInCatalogOrder(t *testing.T) {
	var models []catalog.Model
	var want []string
	for i := range 60 {
		m := catalog.Model{ID: fmt.Sprintf("m%02d", i), Family: "audio", Task: "t", Source: "zoo:x"}
		if i%3 == 0 { // a mixture of experts must name its router output
			m.Family = "mixture-of-experts"
			want = append(want, fmt.Sprintf("model %q: ", m.ID))
		}
		models = append(models, m)
	}
	c := catalogWith(models...)
	for range 10 {
		_, err := generator.Generate(c)
		if err == nil {
			t.Fatal("want an error")
		}
		var got []string
		for _, line := range strings.Split(err.Error(), "\n") {
			id, _, _ := strings.Cut(line, ": ")
			got = append(got, id+": ")
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("errors (-want +got):\n%s\n%v", diff, err)
		}
	}
}
