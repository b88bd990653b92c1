package history_test

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/hwtest/hwtest/history"
	"github.com/hwtest/hwtest/internal/histtest"
	"github.com/hwtest/hwtest/matrix"
	"github.com/hwtest/hwtest/result"
)

// Series reads, for every run, the fields of each cell that RunMatrix reads in
// full: the same cells in the same order, with equal status, cause, family,
// fixture, p50, p99, peak RSS, placement and comparison key.
func TestSeriesAgreesWithRunMatrix(t *testing.T) {
	files, err := histtest.Recorded("../")
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range files {
		files[i] = filepath.Join("..", f)
	}
	path := filepath.Join(t.TempDir(), "history.duckdb")
	histtest.Import(t, path, files...)
	ctx := context.Background()
	db, err := history.Open(ctx, path, history.ReadOnly, history.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	series, err := db.Series(ctx)
	if err != nil {
		t.Fatal(err)
	}
	infos, err := db.Runs(ctx) // newest first
	if err != nil {
		t.Fatal(err)
	}
	if len(series) != len(infos) || len(series) != len(files) {
		t.Fatalf("%d runs in the series, %d stored, %d files", len(series), len(infos), len(files))
	}
	cells := 0
	for i, s := range series {
		info := infos[len(infos)-1-i]
		full, err := db.RunMatrix(ctx, info.ID, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if s.RunID != info.ID || !s.Generated.Equal(full.Generated) || s.Host != full.Host ||
			!reflect.DeepEqual(s.Detection, full.Detection) || !s.DetectedAt.Equal(full.DetectedAt) {
			t.Errorf("run %d: %s %v %q, want %s %v %q (and the same detection)", i, s.RunID, s.Generated, s.Host, info.ID, full.Generated, full.Host)
		}
		if len(s.Cells) != len(full.Cells) {
			t.Fatalf("run %s: %d cells, want %d", s.RunID, len(s.Cells), len(full.Cells))
		}
		byKey := map[[2]string]matrix.Cell{}
		for _, c := range full.Cells {
			byKey[[2]string{c.Model, c.Target}] = c
		}
		for _, got := range s.Cells {
			want, ok := byKey[[2]string{got.Model, got.Target}]
			if !ok {
				t.Errorf("run %s: %s/%s not in the run", s.RunID, got.Model, got.Target)
				continue
			}
			cells++
			if lean(got) != lean(want) || !reflect.DeepEqual(got.Placement, want.Placement) {
				t.Errorf("run %s, %s on %s:\n got %+v %+v\nwant %+v %+v", s.RunID, got.Model, got.Target, lean(got), got.Placement, lean(want), want.Placement)
			}
		}
	}
	var stored int
	if err := db.SQL().QueryRowContext(ctx, `SELECT count(*) FROM cells`).Scan(&stored); err != nil || cells != stored {
		t.Errorf("compared %d cells of %d stored (%v)", cells, stored, err)
	}
}

type leanCell struct {
	Family, Fixture                                    string
	Status                                             result.Status
	Cause                                              result.Cause
	P50, P99                                           float64
	RSS                                                int64
	Measured, Known                                    bool
	Provider, Model, ORT, Lib, Device, Driver, HostCPU string
}

func lean(c matrix.Cell) leanCell {
	l := leanCell{Family: c.Family, Fixture: c.Fixture, Status: c.Status, Cause: c.Cause}
	if m := c.Metrics; m != nil {
		l.Measured, l.P50, l.P99, l.RSS = true, m.P50MS, m.P99MS, m.PeakRSSBytes
	}
	if p := c.Provenance; p != nil {
		l.Known, l.Provider, l.Model, l.ORT, l.Lib, l.Device, l.Driver, l.HostCPU = true, p.Provider, p.ModelSHA256, p.ORTVersion, p.ORTLibSHA256, p.Device, p.Driver, p.HostCPU
	}
	return l
}
