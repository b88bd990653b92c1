package history

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/hwtest/hwtest/matrix"
)

// A cpu-only cell (mamba-130m on webnn: WebNN took none of its nodes, in a real
// run) ran and agreed with the CPU reference: the hardware_results view the older
// system's queries read counts it a success with no error, in a new history and in
// one of schema 7 migrated.
func TestCPUOnlyIsASuccessInTheViews(t *testing.T) {
	ctx := context.Background()
	var m matrix.Matrix
	if err := json.Unmarshal(readFile(t, "../cmd/hwtest/testdata/history/cpu-only.json"), &m); err != nil {
		t.Fatal(err)
	}
	current := filepath.Join(t.TempDir(), "current.duckdb")
	storeRun(t, current, Run{Matrix: m, Source: "import cpu-only.json"})
	old := filepath.Join(t.TempDir(), "schema7.duckdb")
	oldHistory(t, old, 7, current)
	for _, path := range []string{current, old} {
		db, err := Open(ctx, path, ReadOnly, Options{})
		if err != nil {
			t.Fatal(err)
		}
		var status string
		var success bool
		var errText *string
		err = db.sql.QueryRowContext(ctx, `SELECT c.status, h.success, h.error FROM hardware_results h JOIN cells c USING (id)
			WHERE h.model_id = 'mamba-130m' AND h.hardware = 'webnn'`).Scan(&status, &success, &errText)
		db.Close()
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if status != "cpu-only" || !success || errText != nil {
			t.Errorf("%s: status %s, success %v, error %v; want cpu-only, a success, no error", filepath.Base(path), status, success, errText)
		}
	}
}
