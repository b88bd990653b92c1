package history

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// BenchmarkStore300Cells: what `hwtest run` adds to its history at the end of a
// run of 300 cells with 3,000 samples each: Open, Store, Close (DuckDB writes the
// run into the file then). Each iteration writes into a fresh copy of a history:
// one holding a run like it, and the history of 1,000 runs below.
func BenchmarkStore300Cells(b *testing.B) {
	run := syntheticRun("new", run1.Add(10000*time.Hour), 300, 3000, 2)
	b.Run("into 1 run", func(b *testing.B) {
		base := filepath.Join(b.TempDir(), "base.duckdb")
		storeRun(b, base, syntheticRun("base", run1, 300, 3000, 1))
		benchStore(b, base, run)
	})
	b.Run("into 1000 runs", func(b *testing.B) {
		benchStore(b, history1000(b), run)
	})
}

func benchStore(b *testing.B, base string, run Run) {
	ctx := context.Background()
	path := filepath.Join(b.TempDir(), "history.duckdb")
	var before, after int64
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		copyHistory(b, base, path)
		before = fileSize(b, path)
		b.StartTimer()
		db, err := Open(ctx, path, ReadWrite, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if err := db.Store(ctx, run); err != nil {
			b.Fatal(err)
		}
		if err := db.Close(); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		after = fileSize(b, path)
		b.StartTimer()
	}
	b.ReportMetric(float64(after-before), "file-bytes-added/run")
}

func copyHistory(b *testing.B, from, to string) {
	in, err := os.Open(from)
	if err != nil {
		b.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		b.Fatal(err)
	}
	if err := out.Close(); err != nil {
		b.Fatal(err)
	}
}

// A history of benchRuns runs of benchCells cells, 3,000 samples each: built once
// for every round of BenchmarkCurrentOver1000Runs (it takes a minute), removed
// by TestMain.
const (
	benchRuns    = 1000
	benchCells   = 20
	benchSamples = 3000
)

var benchHistory struct {
	once sync.Once
	dir  string
	path string
	err  error
}

func removeBenchHistory() {
	if benchHistory.dir != "" {
		os.RemoveAll(benchHistory.dir)
	}
}

// history1000 builds the history: run k covers 20 cells of 20 models × 14
// targets, in turn, so the current matrix gathers cells of the last 14 runs.
func history1000(b *testing.B) string {
	h := &benchHistory
	h.once.Do(func() {
		if h.dir, h.err = os.MkdirTemp("", "hwtest-bench-"); h.err != nil {
			return
		}
		h.path = filepath.Join(h.dir, "history.duckdb")
		ctx := context.Background()
		db, err := Open(ctx, h.path, ReadWrite, Options{})
		if err != nil {
			h.err = err
			return
		}
		start := time.Now()
		for k := range benchRuns {
			first := k * benchCells % (20 * len(targets))
			run := syntheticRunFrom(fmt.Sprintf("run-%04d", k), run1.Add(time.Duration(k)*time.Hour), first, benchCells, benchSamples, uint64(k))
			if h.err = db.Store(ctx, run); h.err != nil {
				db.Close()
				return
			}
		}
		h.err = db.Close()
		b.Logf("built a history of %d runs × %d cells × %d samples in %v", benchRuns, benchCells, benchSamples, time.Since(start))
	})
	if h.err != nil {
		b.Fatal(h.err)
	}
	return h.path
}

// BenchmarkCurrentOver1000Runs: `hwtest report` over a history of 1,000 runs:
// Open read-only, the current matrix, its Markdown, Close. It also reports the
// history's size per 1,000 cells stored.
func BenchmarkCurrentOver1000Runs(b *testing.B) {
	path := history1000(b)
	ctx := context.Background()
	b.ResetTimer()
	for range b.N {
		db, err := Open(ctx, path, ReadOnly, Options{})
		if err != nil {
			b.Fatal(err)
		}
		m, err := db.Current(ctx, nil, nil)
		if err != nil {
			b.Fatal(err)
		}
		if len(m.Cells) != 20*len(targets) {
			b.Fatalf("the current matrix has %d cells, want %d", len(m.Cells), 20*len(targets))
		}
		if md := m.Markdown(); len(md) == 0 {
			b.Fatal("no Markdown")
		}
		db.Close()
	}
	b.StopTimer()
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(fi.Size())/(benchRuns*benchCells)*1000, "file-bytes/1000cells")
}
