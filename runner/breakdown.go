package runner

import (
	"fmt"
	"strings"
	"time"
)

// Timings are what runner.Run timed itself: from detection to the matrix written.
type Timings struct {
	Total  time.Duration // Run, from detection to the matrix written
	Detect time.Duration // probing every target (browsers included)
	Build  time.Duration // waiting for the suite's `go test -c` after detection (it builds during detection)
	Suites time.Duration // the model processes, start to exit
	// Explain: `hwtest explain` processes tracing mismatch cells (Options.Explain).
	Explain time.Duration
}

// Breakdown is where a run's wall time went: measuring (warm-up and timed runs)
// against everything else, from the run's own timings and its cells' metrics.
type Breakdown struct {
	Total, Detect, Build time.Duration
	WarmUp, Timed        time.Duration // the measure loops of the cells
	Load, FirstRuns      time.Duration // session creation and first inference (measured, once a cell)
	CellsOther           time.Duration // the rest of the cells' wall time: probes, CPU references, browser pages, checks
	Processes            time.Duration // the model processes' time outside their cells: start, Ginkgo, exit
	Explain              time.Duration // tracing mismatch cells to their nodes
	Rest                 time.Duration // Run outside detection, builds and the processes: the matrix, the reports
}

// Breakdown divides the run's time. A cell's wall time runs from its first spec's
// start to its last's end; the metrics inside it are each timed where they happen.
func (r *Result) Breakdown() Breakdown {
	b := Breakdown{Total: r.Time.Total, Detect: r.Time.Detect, Build: r.Time.Build, Explain: r.Time.Explain}
	var cells time.Duration
	for _, c := range r.Matrix.Cells {
		cells += msDuration(c.WallMS)
		if m := c.Metrics; m != nil {
			b.WarmUp += msDuration(m.WarmupMS)
			b.Timed += msDuration(m.TimedMS)
			b.Load += msDuration(m.LoadMS)
			b.FirstRuns += msDuration(m.FirstRunMS)
		}
	}
	b.CellsOther = max(0, cells-b.WarmUp-b.Timed-b.Load-b.FirstRuns)
	b.Processes = max(0, r.Time.Suites-cells)
	b.Rest = max(0, r.Time.Total-r.Time.Detect-r.Time.Build-r.Time.Suites-r.Time.Explain)
	return b
}

// Measuring is the time spent in measure loops; Overhead is all the rest.
func (b Breakdown) Measuring() time.Duration { return b.WarmUp + b.Timed }
func (b Breakdown) Overhead() time.Duration  { return max(0, b.Total-b.Measuring()) }

// String is the breakdown `hwtest run` prints at the end, largest parts first
// within each line.
func (b Breakdown) String() string {
	s := func(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }
	pct := func(d time.Duration) string {
		if b.Total <= 0 {
			return "–"
		}
		return fmt.Sprintf("%.0f%%", 100*d.Seconds()/b.Total.Seconds())
	}
	explain := "" // named only in runs that traced a mismatch
	if b.Explain > 0 {
		explain = "tracing mismatches " + s(b.Explain) + ", "
	}
	var lines strings.Builder
	fmt.Fprintf(&lines, "time: %s in all: measuring %s (%s: warm-up %s, timed runs %s), overhead %s (%s)\n",
		s(b.Total), s(b.Measuring()), pct(b.Measuring()), s(b.WarmUp), s(b.Timed), s(b.Overhead()), pct(b.Overhead()))
	fmt.Fprintf(&lines, "      overhead: session creation %s, first runs %s, rest of the cells %s (probes, CPU references, browser pages, checks), "+
		"model processes %s (start, exit), build %s (after detection), detection %s, %sother %s\n",
		s(b.Load), s(b.FirstRuns), s(b.CellsOther), s(b.Processes), s(b.Build), s(b.Detect), explain, s(b.Rest))
	return lines.String()
}

func msDuration(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }
