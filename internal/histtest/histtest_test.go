package histtest_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/hwtest/hwtest/history"
	"github.com/hwtest/hwtest/internal/histtest"
	"github.com/hwtest/hwtest/matrix"
)

// A Scale history holds copies of the recorded runs' cells, numbers and all: each
// copy of a model is that model's cell of the recorded run it copies.
func TestScaleCopiesRecordedRuns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.duckdb")
	histtest.Scale(t, path, "../..", 10, 5)
	files, _ := filepath.Glob(filepath.Join("../..", histtest.FullRuns))
	var recorded []matrix.Matrix
	for _, f := range files {
		m, _, err := histtest.Read(f)
		if err != nil {
			t.Fatal(err)
		}
		recorded = append(recorded, m)
	}
	ctx := context.Background()
	db, err := history.Open(ctx, path, history.ReadOnly, history.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	runs, err := db.Series(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 5 {
		t.Fatalf("%d runs, want 5", len(runs))
	}
	for j, r := range runs {
		src := recorded[j%len(recorded)]
		if len(r.Cells) != 2*len(src.Cells) {
			t.Errorf("run %d (%s): %d cells, want %d", j, r.RunID, len(r.Cells), 2*len(src.Cells))
		}
		want := map[string]matrix.Cell{}
		for _, c := range src.Cells {
			want[c.Model+"/"+c.Target] = c
		}
		for _, c := range r.Cells {
			k := c.Model[:len(c.Model)-4] + "/" + c.Target // "~NNN" off
			w, ok := want[k]
			if !ok {
				t.Fatalf("run %d: %s on %s is no recorded cell", j, c.Model, c.Target)
			}
			if c.Status != w.Status || (c.Metrics == nil) != (w.Metrics == nil) ||
				(c.Metrics != nil && (c.Metrics.P50MS != w.Metrics.P50MS || c.Metrics.PeakRSSBytes != w.Metrics.PeakRSSBytes)) {
				t.Errorf("run %d: %s on %s is not %s's cell of run %s", j, c.Model, c.Target, k, src.RunID)
			}
		}
	}
}
