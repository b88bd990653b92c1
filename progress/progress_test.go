package progress

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vbauerster/mpb/v8"

	"github.com/hwtest/hwtest/history"
	"github.com/hwtest/hwtest/matrix"
	"github.com/hwtest/hwtest/result"
)

// recordedTimings stores testdata/history: seven real runs of silero-vad-v5 and
// v6 on cpu, cuda and qnn (both unavailable here), made with HWTEST_MEASURE_TIME
// 100ms…600ms, then 5s with the run stopped by SIGINT during v6 (v6's cells are
// "interrupted", without a wall time). It returns the timings read back.
func recordedTimings(t *testing.T) Timings {
	t.Helper()
	path := filepath.Join(t.TempDir(), "history.duckdb")
	ctx := context.Background()
	db, err := history.Open(ctx, path, history.ReadWrite, history.Options{})
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob("testdata/history/*.json")
	if len(files) != 7 {
		t.Fatalf("testdata/history holds %d runs, want 7", len(files))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var m matrix.Matrix
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		if err := db.Store(ctx, history.Run{Matrix: m, Source: "import " + f}); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	timings, err := OpenTimings(ctx, path, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return timings
}

var (
	v5cpu  = Cell{"silero-vad-v5", "cpu"}
	v5cuda = Cell{"silero-vad-v5", "cuda"}
	v6cpu  = Cell{"silero-vad-v6", "cpu"}
	v6qnn  = Cell{"silero-vad-v6", "qnn"}
)

// The timing of a cell is the median of its last five timed results: the answers
// below were read off the JSON files by hand.
func TestTimingsFromRecordedHistory(t *testing.T) {
	timings := recordedTimings(t)
	for c, wantMS := range map[Cell]float64{
		// 590, 1101, 975, 986, 1281, 1094, 5645 (the last run's v5 ended before
		// the signal): the last five's median.
		v5cpu: 1094.489835,
		// 781, 647, 854, 924, 1269, 1249, then interrupted with no wall time: the
		// median of the last five timed (of all six it would be 889).
		v6cpu:  924.023686,
		v5cuda: 1.012966,
		v6qnn:  0.202737,
	} {
		got := float64(timings[c]) / float64(time.Millisecond)
		if math.Abs(got-wantMS) > 1e-3 {
			t.Errorf("%s: %.6f ms, want %.6f", c, got, wantMS)
		}
	}
	if len(timings) != 6 {
		t.Errorf("%d cells timed, want 6: %v", len(timings), timings)
	}
}

func TestNoHistoryNoETA(t *testing.T) {
	_, err := OpenTimings(context.Background(), filepath.Join(t.TempDir(), "none.duckdb"), time.Second)
	if err == nil || !strings.Contains(err.Error(), "no history yet") {
		t.Fatalf("err = %v", err)
	}
	tr := NewTracker(Plan([]string{"m"}, []string{"cpu"}), nil, "no history", nil)
	if got := tr.ETA(); got != "ETA unknown (no history)" {
		t.Errorf("ETA = %q", got)
	}
}

// clock is a fixed time the test moves by hand.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func started(c Cell) result.CellEvent {
	return result.CellEvent{Event: result.CellStarted, Model: c.Model, Target: c.Target}
}

func done(c Cell, s result.Status) result.CellEvent {
	return result.CellEvent{Event: result.CellDone, Model: c.Model, Target: c.Target, Status: s}
}

// The ETA adds up the past timings of the cells not done, less what the running
// cell has already spent; a cell never timed makes it a lower bound.
func TestETAFromRecordedHistory(t *testing.T) {
	timings := recordedTimings(t)
	clk := &clock{t: time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)}
	plan := Plan([]string{"silero-vad-v5", "silero-vad-v6"}, []string{"cpu", "cuda", "qnn"})
	tr := NewTracker(plan, timings, "", clk.now)
	// 1094.5 + 1.0 + 0.2 + 924.0 + 0.6 + 0.2 ms
	steps := []struct {
		do   func()
		want string
	}{
		{func() {}, "ETA 0:02"},
		{func() { tr.Observe(started(v5cpu)); clk.add(800 * time.Millisecond) }, "ETA 0:01"}, // 1.22 s left
		{func() { clk.add(time.Second) }, "ETA 0:01"},                                        // v5/cpu overran: 0 of it left, 0.93 s
		{func() { tr.Observe(done(v5cpu, result.StatusPass)) }, "ETA 0:01"},                  // 0.93 s
		{func() { tr.Observe(done(v5cuda, result.StatusUnavailable)) }, "ETA 0:01"},          // 0.92 s
		{func() { tr.Observe(started(v6cpu)); clk.add(600 * time.Millisecond) }, "ETA 0:00"}, // 0.33 s
		{func() { tr.Observe(done(Cell{"silero-vad-v5", "qnn"}, result.StatusUnavailable)) }, "ETA 0:00"},
	}
	for i, s := range steps {
		s.do()
		if got := tr.ETA(); got != s.want {
			t.Errorf("step %d: %q, want %q", i, got, s.want)
		}
	}

	// A longer plan, so seconds show: twenty v5/cpu cells (the same cell is
	// planned 20 times over only in this test) of 1.094 s each are 21.9 s.
	var many []Cell
	for range 20 {
		many = append(many, v5cpu)
	}
	if got := NewTracker(many, timings, "", clk.now).ETA(); got != "ETA 0:22" {
		t.Errorf("20 × v5/cpu: %q", got)
	}
	// A model never run: its cells have no timing, and the ETA says how many.
	mixed := NewTracker(Plan([]string{"silero-vad-v6", "silero-vad-legacy"}, []string{"cpu"}), timings, "", clk.now)
	if got := mixed.ETA(); got != "ETA ≥ 0:01 (1 of 2 cells never timed)" {
		t.Errorf("with an untimed cell: %q", got)
	}
	none := NewTracker(Plan([]string{"silero-vad-legacy"}, []string{"cpu"}), timings, "", clk.now)
	if got := none.ETA(); got != "ETA unknown (no past timings of these cells)" {
		t.Errorf("untimed only: %q", got)
	}
}

func TestTrackerCountsAndRevisions(t *testing.T) {
	tr := NewTracker(Plan([]string{"silero-vad-v5", "silero-vad-v6"}, []string{"cpu", "qnn"}), nil, "no history", nil)
	if !tr.Observe(done(v5cpu, result.StatusPass)) || !tr.Observe(done(Cell{"silero-vad-v5", "qnn"}, result.StatusUnavailable)) {
		t.Fatal("a first done event must count")
	}
	tr.Observe(started(v6cpu))
	if c, _, ok := tr.Running(); !ok || c != v6cpu {
		t.Errorf("running: %v %v", c, ok)
	}
	if !tr.Observe(done(v6cpu, result.StatusPass)) {
		t.Fatal("v6/cpu counted once")
	}
	// The model's report says otherwise: the status changes, the count does not.
	revised := done(v6cpu, result.StatusError)
	revised.Revised = true
	if tr.Observe(revised) {
		t.Error("a revision counted as a new cell")
	}
	if _, _, ok := tr.Running(); ok {
		t.Error("a cell still runs after it ended")
	}
	if tr.Done() != 3 || tr.Total() != 4 || tr.Counts() != "1 error · 1 unavailable · 1 pass" {
		t.Errorf("%d/%d, %q", tr.Done(), tr.Total(), tr.Counts())
	}
}

func TestLines(t *testing.T) {
	var b strings.Builder
	tr := NewTracker(Plan([]string{"silero-vad-v5", "silero-vad-v6"}, []string{"cpu", "qnn"}), nil, "no history", nil)
	l := NewLines(&b, tr)
	l.Cell(started(v5cpu)) // no line: only finished cells are
	pass := done(v5cpu, result.StatusPass)
	pass.P50MS, pass.WallMS = 0.1022055, 520.931811
	l.Cell(pass)
	unavailable := done(Cell{"silero-vad-v5", "qnn"}, result.StatusUnavailable)
	unavailable.WallMS, unavailable.Reason = 0.154699, "QNNExecutionProvider: not supported in this build."
	l.Cell(unavailable)
	stopped := done(v6cpu, result.StatusError)
	stopped.Revised, stopped.Reason = true, "interrupted: the run was stopped (SIGINT or SIGTERM) before this cell finished\nstderr: …"
	l.Cell(stopped)
	want := `cell 1/4: silero-vad-v5 on cpu: pass, p50 0.102 ms, took 521ms
cell 2/4: silero-vad-v5 on qnn: unavailable, took 155µs
cell 3/4: silero-vad-v6 on cpu: error (from the model's report: interrupted: the run was stopped (SIGINT or SIGTERM) before this cell finished)
`
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestClockAndRound(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0:00", 400 * time.Millisecond: "0:00", 7 * time.Second: "0:07", 190 * time.Second: "3:10",
		3900 * time.Second: "1:05:00",
	} {
		if got := Clock(d); got != want {
			t.Errorf("Clock(%v) = %q, want %q", d, got, want)
		}
	}
	for d, want := range map[time.Duration]string{
		154699 * time.Nanosecond: "155µs", 520931811: "521ms", 4234 * time.Millisecond: "4.2s",
		190 * time.Second: "3m10s", 3900 * time.Second: "1h05m",
	} {
		if got := Round(d); got != want {
			t.Errorf("Round(%v) = %q, want %q", d, got, want)
		}
	}
}

// frames keeps each write mpb makes: one whole frame each.
type frames struct {
	mu  sync.Mutex
	all []string
	new chan struct{}
}

func (f *frames) Write(b []byte) (int, error) {
	f.mu.Lock()
	f.all = append(f.all, string(b))
	f.mu.Unlock()
	select {
	case f.new <- struct{}{}:
	default:
	}
	return len(b), nil
}

var ansi = regexp.MustCompile("\x1b\\[[0-9;]*[A-Za-z]")

// render asks mpb for a frame and returns it without its cursor movements.
func (f *frames) render(t *testing.T, refresh chan<- interface{}) string {
	t.Helper()
	f.mu.Lock()
	n := len(f.all)
	f.mu.Unlock()
	refresh <- time.Now()
	deadline := time.After(5 * time.Second)
	for {
		f.mu.Lock()
		if len(f.all) > n {
			s := f.all[len(f.all)-1]
			f.mu.Unlock()
			return ansi.ReplaceAllString(s, "")
		}
		f.mu.Unlock()
		select {
		case <-f.new:
		case <-deadline:
			t.Fatal("mpb drew no frame")
		}
	}
}

// The bar as a terminal shows it, drawn by mpb into a buffer: counts, elapsed
// time and ETA on the first line, the running cell and statuses on the second,
// messages above it.
func TestBarRenders(t *testing.T) {
	timings := recordedTimings(t)
	clk := &clock{t: time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)}
	plan := Plan([]string{"silero-vad-v5", "silero-vad-v6"}, []string{"cpu", "cuda", "qnn"})
	f := &frames{new: make(chan struct{}, 1)}
	refresh := make(chan interface{})
	b := NewBar(f, NewTracker(plan, timings, "", clk.now), mpb.WithWidth(90), mpb.WithManualRefresh(refresh))

	got := f.render(t, refresh)
	want := "cells 0/6 [-------------------------------------------------------] elapsed 0:00, ETA 0:02\n" +
		"  waiting for the first cell\n"
	if got != want {
		t.Errorf("first frame:\n%s\nwant:\n%s", got, want)
	}

	b.Cell(started(v5cpu))
	clk.add(2 * time.Second)
	b.Cell(done(v5cpu, result.StatusPass))
	b.Cell(done(v5cuda, result.StatusUnavailable))
	b.Cell(started(Cell{"silero-vad-v5", "qnn"}))
	clk.add(40 * time.Second)
	b.Cell(done(Cell{"silero-vad-v5", "qnn"}, result.StatusUnavailable))
	b.Cell(started(v6cpu))
	clk.add(300 * time.Millisecond)
	b.Log().Write([]byte("run: silero-vad-v6 (audio)\n"))
	got = f.render(t, refresh)
	want = "run: silero-vad-v6 (audio)\n" +
		"cells 3/6 [===========================>---------------------------] elapsed 0:42, ETA 0:01\n" +
		"  now silero-vad-v6 on cpu (300ms) · 2 unavailable · 1 pass\n"
	if got != want {
		t.Errorf("frame after three cells:\n%s\nwant:\n%s", got, want)
	}

	// Stopped there: the bar stays where it was, and Finish returns.
	finished := make(chan struct{})
	go func() { b.Finish(true); close(finished) }()
	select {
	case <-finished:
	case <-time.After(5 * time.Second):
		t.Fatal("Finish did not return after an interrupt")
	}
	// Messages after it go straight to the output.
	b.Log().Write([]byte("after\n"))
	f.mu.Lock()
	defer f.mu.Unlock()
	if last := f.all[len(f.all)-1]; last != "after\n" {
		t.Errorf("after Finish the log wrote %q", last)
	}
}
