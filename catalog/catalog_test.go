package catalog

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite testdata/*/want.txt with what Parse reports")

// TestGolden parses each testdata/<case>/{models.yaml,hardware.yaml} and compares
// what Parse reports, "ok" or its exact error text, with want.txt.
func TestGolden(t *testing.T) {
	dirs, err := filepath.Glob("testdata/*")
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) == 0 {
		t.Fatal("no golden cases under testdata/")
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			models := readFile(t, filepath.Join(dir, "models.yaml"))
			hardware := readFile(t, filepath.Join(dir, "hardware.yaml"))
			got := "ok\n"
			if _, err := Parse("models.yaml", models, "hardware.yaml", hardware); err != nil {
				got = err.Error() + "\n"
			}
			wantPath := filepath.Join(dir, "want.txt")
			if *update {
				if err := os.WriteFile(wantPath, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want := string(readFile(t, wantPath))
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Parse mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
