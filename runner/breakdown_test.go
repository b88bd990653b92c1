package runner

import (
	"strings"
	"testing"
	"time"

	"github.com/hwtest/hwtest/matrix"
	"github.com/hwtest/hwtest/result"
)

// The breakdown divides a run's time without counting anything twice: the parts add
// up to the total, and measuring is only the cells' measure loops.
func TestBreakdownAddsUp(t *testing.T) {
	res := &Result{
		Time: Timings{Total: 100 * time.Second, Detect: 2 * time.Second, Build: 8 * time.Second, Suites: 85 * time.Second},
		Matrix: matrix.Matrix{Cells: []matrix.Cell{
			{Model: "a", Target: "cpu", WallMS: 3000, Metrics: &result.Metrics{LoadMS: 100, FirstRunMS: 10, WarmupMS: 200, TimedMS: 1000}},
			{Model: "a", Target: "webgpu", WallMS: 60000, Metrics: &result.Metrics{LoadMS: 5000, FirstRunMS: 20000, WarmupMS: 1000, TimedMS: 4000}},
			{Model: "a", Target: "cuda", WallMS: 1, Status: result.StatusUnavailable},
		}},
	}
	b := res.Breakdown()
	if b.Measuring() != 6200*time.Millisecond || b.Overhead() != 93800*time.Millisecond {
		t.Errorf("measuring %v, overhead %v", b.Measuring(), b.Overhead())
	}
	parts := b.WarmUp + b.Timed + b.Load + b.FirstRuns + b.CellsOther + b.Processes + b.Build + b.Detect + b.Rest
	if parts != b.Total {
		t.Errorf("parts add up to %v, total %v: %+v", parts, b.Total, b)
	}
	if b.CellsOther != 63001*time.Millisecond-6200*time.Millisecond-25110*time.Millisecond || b.Processes != 85*time.Second-63001*time.Millisecond {
		t.Errorf("cells other %v, processes %v", b.CellsOther, b.Processes)
	}
	s := b.String()
	for _, want := range []string{"time: 100.0 s in all: measuring 6.2 s (6%: warm-up 1.2 s, timed runs 5.0 s), overhead 93.8 s (94%)", "first runs 20.0 s", "build 8.0 s (after detection)", "detection 2.0 s"} {
		if !strings.Contains(s, want) {
			t.Errorf("breakdown lacks %q:\n%s", want, s)
		}
	}
}
