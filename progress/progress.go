// Package progress shows a `hwtest run` as it goes: on a terminal, a bar (cells done
// of the run's total, the cell running now, elapsed time, an ETA from the history's
// past timings, the statuses so far); elsewhere (CI, pipes), one plain line per
// finished cell. Suites announce their cells as result.CellEvents; the runner
// forwards them here. What is shown is a display only: the matrix, built from the
// Ginkgo reports, decides every cell's status.
package progress

import (
	"fmt"
	"io"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/hwtest/hwtest/matrix"
	"github.com/hwtest/hwtest/result"
)

// Cell names a (model, target) pair of a run.
type Cell struct{ Model, Target string }

func (c Cell) String() string { return c.Model + " on " + c.Target }

// Plan is every cell a run is to run: the models it selected × the targets.
func Plan(models, targets []string) []Cell {
	cells := make([]Cell, 0, len(models)*len(targets))
	for _, m := range models {
		for _, t := range targets {
			cells = append(cells, Cell{m, t})
		}
	}
	return cells
}

// Tracker is what both displays show: which cells ended and how, which one runs,
// and how long the rest should take. It is safe for concurrent use.
type Tracker struct {
	mu      sync.Mutex
	plan    []Cell
	timings Timings
	noETA   string // why there is no ETA, when timings is nil
	now     func() time.Time
	start   time.Time
	done    map[Cell]result.Status
	running Cell // the last cell started, while it runs
	since   time.Time
}

// NewTracker follows plan. timings are the cells' past wall times; when nil, noETA
// says why ("no history", ...). now is the clock (time.Now; tests fix it).
func NewTracker(plan []Cell, timings Timings, noETA string, now func() time.Time) *Tracker {
	if now == nil {
		now = time.Now
	}
	return &Tracker{plan: plan, timings: timings, noETA: noETA, now: now, start: now(), done: map[Cell]result.Status{}}
}

// Observe takes one event in. It reports whether a done event finished a cell that
// was not done before (a revision changes a status, not the count).
func (t *Tracker) Observe(e result.CellEvent) (newlyDone bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := Cell{e.Model, e.Target}
	switch e.Event {
	case result.CellStarted:
		t.running, t.since = c, t.now()
	case result.CellDone:
		_, was := t.done[c]
		t.done[c] = e.Status
		if t.running == c {
			t.running = Cell{}
		}
		return !was
	}
	return false
}

// Done is how many cells ended, and Total how many the run is to run.
func (t *Tracker) Done() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.done)
}

func (t *Tracker) Total() int { return len(t.plan) }

// Counts says how many cells ended with each status, worst first as the matrix's
// summary line does: "1 error · 3 pass"; "" before any.
func (t *Tracker) Counts() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := map[result.Status]int{}
	for _, s := range t.done {
		n[s]++
	}
	var parts []string
	for _, s := range matrix.Statuses {
		if n[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[s], s))
		}
	}
	return strings.Join(parts, " · ")
}

// Running is the cell running now and for how long; ok is false between cells.
func (t *Tracker) Running() (c Cell, took time.Duration, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.running == (Cell{}) {
		return Cell{}, 0, false
	}
	return t.running, t.now().Sub(t.since), true
}

// Elapsed is the time since the tracker began.
func (t *Tracker) Elapsed() time.Duration { return t.now().Sub(t.start) }

// ETA says how long the cells not done yet should take, from their past wall
// times: the running cell counts for what its past time has left. Cells never
// timed make it a lower bound, and say how many; with none timed there is none.
func (t *Tracker) ETA() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.timings == nil {
		return "ETA unknown (" + t.noETA + ")"
	}
	var left time.Duration
	untimed, remaining := 0, 0
	for _, c := range t.plan {
		if _, ok := t.done[c]; ok {
			continue
		}
		remaining++
		past, ok := t.timings[c]
		if !ok {
			untimed++
			continue
		}
		if c == t.running {
			past = max(0, past-t.now().Sub(t.since))
		}
		left += past
	}
	switch {
	case remaining == 0:
		return "ETA 0:00"
	case untimed == remaining:
		return "ETA unknown (no past timings of these cells)"
	case untimed > 0:
		return fmt.Sprintf("ETA ≥ %s (%d of %d cells never timed)", Clock(left), untimed, remaining)
	}
	return "ETA " + Clock(left)
}

// Clock prints a duration as a clock does, to the second: 0:07, 3:10, 1:05:00. Its
// width changes rarely, so the bar beside it does not jitter.
func Clock(d time.Duration) string {
	s := int64(d.Round(time.Second) / time.Second)
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}

// Round prints a duration as people read one: 150µs, 820ms, 4.2s, 3m10s, 1h05m.
func Round(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return d.Round(time.Microsecond).String()
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < 10*time.Second:
		return d.Round(100 * time.Millisecond).String()
	case d < time.Hour:
		return d.Round(time.Second).String()
	}
	d = d.Round(time.Minute)
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}

// Display shows a run's progress; the runner hands it every cell event.
type Display interface {
	// Cell takes one event in (the runner's Options.Progress).
	Cell(e result.CellEvent)
	// Log is where the run's other messages go while the display is on (above the
	// bar, on a terminal).
	Log() io.Writer
	// Finish ends the display: nothing is drawn after it returns. interrupted
	// leaves a bar where it stopped rather than full.
	Finish(interrupted bool)
}

// Lines is the display for logs: one line per finished cell, on w.
type Lines struct {
	t  *Tracker
	mu sync.Mutex
	w  io.Writer
}

// NewLines writes one line per finished cell to w.
func NewLines(w io.Writer, t *Tracker) *Lines { return &Lines{t: t, w: w} }

func (l *Lines) Cell(e result.CellEvent) {
	if e.Event != result.CellDone {
		l.t.Observe(e)
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.t.Observe(e)
	fmt.Fprintln(l.w, Line(e, l.t.Done(), l.t.Total()))
}

func (l *Lines) Log() io.Writer { return l.w }
func (l *Lines) Finish(bool)    {}

// Line is a finished cell as the plain display prints it:
// "cell 3/28: silero-vad-v5 on cpu: pass, p50 0.102 ms, took 521ms". A revised
// cell says why, on the line's first 120 characters.
func Line(e result.CellEvent, done, total int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "cell %d/%d: %s on %s: %s", done, total, e.Model, e.Target, e.Status)
	if e.P50MS > 0 {
		fmt.Fprintf(&b, ", p50 %s ms", num(e.P50MS))
	}
	if e.WallMS > 0 {
		fmt.Fprintf(&b, ", took %s", Round(time.Duration(e.WallMS*float64(time.Millisecond))))
	}
	if e.Revised {
		reason, _, _ := strings.Cut(e.Reason, "\n")
		if r := []rune(reason); len(r) > 120 {
			reason = string(r[:119]) + "…"
		}
		b.WriteString(" (from the model's report")
		if reason != "" {
			b.WriteString(": " + reason)
		}
		b.WriteString(")")
	}
	return b.String()
}

// num prints a measurement with about three significant digits, as the matrix does.
func num(v float64) string {
	switch a := math.Abs(v); {
	case a < 1:
		return fmt.Sprintf("%.3g", v) // 0.0865: three digits of a sub-millisecond latency
	case a < 10:
		return fmt.Sprintf("%.2f", v)
	case a < 100:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.0f", v)
}
