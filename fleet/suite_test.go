package fleet_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hwtest/hwtest/catalog"
	"github.com/hwtest/hwtest/fleet"
	"github.com/hwtest/hwtest/internal/testenv"
)

// A worker never runs a job of other catalogs or of another model file under the
// job's name: it says why instead (before any suite runs: no Machine needed).
func TestSuiteExecutorRefusesOtherCatalogsAndModels(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	models, hardware := filepath.Join(root, "models.yaml"), filepath.Join(root, "hardware.yaml")
	c, err := catalog.Load(models, hardware)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := fleet.CatalogSHA256(models, hardware)
	if err != nil {
		t.Fatal(err)
	}
	e := &fleet.SuiteExecutor{Catalogs: c, Root: root, CatalogSHA256: sum, WorkDir: t.TempDir()}
	m, _ := c.Model("silero-vad-v5")
	have := fleet.ModelSHA256(root, m)
	testenv.Need(t, "silero-vad-v5 (make setup)", map[bool]string{true: "not in .hwtest/models"}[have == ""])
	for _, tc := range []struct {
		name string
		job  fleet.Job
		want string
	}{
		{"other catalogs", fleet.Job{Model: "silero-vad-v5", Target: "cpu", CatalogSHA256: "0123456789abcdef"}, "refused: the job's catalogs have sha256 0123456789ab, this worker's " + sum[:12]},
		{"other model file", fleet.Job{Model: "silero-vad-v5", Target: "cpu", CatalogSHA256: sum, ModelSHA256: strings.Repeat("f", 64)}, "refused: this worker's file for \"silero-vad-v5\" has sha256 " + have[:12] + ", the submitter's ffffffffffff"},
	} {
		_, err := e.Exec(context.Background(), tc.job)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q…", tc.name, err, tc.want)
		}
	}
}

// The same catalogs checked out with CRLF line ends (Windows, core.autocrlf) have
// the same hash; other catalogs do not.
func TestCatalogSHA256(t *testing.T) {
	hash := func(models, hardware string) string {
		dir := t.TempDir()
		m, h := filepath.Join(dir, "models.yaml"), filepath.Join(dir, "hardware.yaml")
		os.WriteFile(m, []byte(models), 0o644)
		os.WriteFile(h, []byte(hardware), 0o644)
		sum, err := fleet.CatalogSHA256(m, h)
		if err != nil {
			t.Fatal(err)
		}
		return sum
	}
	lf := hash("models:\n  - id: a\n", "targets: []\n")
	crlf := hash("models:\r\n  - id: a\r\n", "targets: []\r\n")
	other := hash("models:\n  - id: b\n", "targets: []\n")
	if lf != crlf {
		t.Errorf("CRLF catalogs hash %s, LF %s: want the same", crlf[:12], lf[:12])
	}
	if lf == other {
		t.Error("other catalogs hash the same")
	}
}
