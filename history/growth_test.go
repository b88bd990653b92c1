package history

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestStoreCostDoesNotGrow: what a store writes to DuckDB's log is the run, not
// the history. (With a DOUBLE[] of samples per cell, DuckDB 1.5 wrote every list
// of the row group again at each commit: the 12th run of 20 cells wrote 11 times
// what the 1st did, and building a history of 1,000 runs took 10 minutes.)
func TestStoreCostDoesNotGrow(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "history.duckdb")
	db, err := Open(ctx, path, ReadWrite, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// Keep every commit in the log, so its growth is what each store wrote.
	if _, err := db.sql.Exec(`SET checkpoint_threshold = '10GB'`); err != nil {
		t.Fatal(err)
	}
	var wrote []int64
	for k := range 12 {
		before := fileSize(t, path+".wal")
		run := syntheticRunFrom(fmt.Sprintf("run-%02d", k), run1.Add(time.Duration(k)*time.Hour), k*20, 20, 3000, uint64(k))
		if err := db.Store(ctx, run); err != nil {
			t.Fatal(err)
		}
		wrote = append(wrote, fileSize(t, path+".wal")-before)
	}
	if first, last := wrote[1], wrote[len(wrote)-1]; float64(last) > 1.25*float64(first) {
		t.Errorf("the log grew by %d bytes for the 2nd run and %d for the 12th of the same size: %v", first, last, wrote)
	}
}

func fileSize(t testing.TB, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}
