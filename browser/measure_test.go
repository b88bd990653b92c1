package browser

import (
	"errors"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hwtest/hwtest/internal/testenv"
)

// openSilero opens Silero VAD v5 on wasm in the shared browser, and gives one
// chunk of inputs for it.
func openSilero(t *testing.T) (*Session, []Tensor) {
	t.Helper()
	requireBrowser(t, "wasm", "")
	model := repoFile(sileroV5)
	_, err := os.Stat(model)
	testenv.Need(t, "Silero VAD v5 (make setup)", err)
	b, err := Shared(Config{}, false)
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.Open(model, "wasm", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, []Tensor{
		{Name: "input", Type: "float32", Shape: []int64{1, 512}, Data: vadChunk(rand.New(rand.NewPCG(1, 2)), 0)},
		{Name: "state", Type: "float32", Shape: []int64{2, 1, 128}, Data: make([]float64, 256)},
		{Name: "sr", Type: "int64", Shape: []int64{}, Data: []float64{16000}},
	}
}

// Measure runs the bound inputs back to back in the page: as many runs as asked,
// or as many as its budget holds, and a run that hangs ends the call after the
// budget plus Timeout with ErrTimedOut.
func TestMeasure(t *testing.T) {
	s, inputs := openSilero(t)
	if _, err := s.Measure(1, time.Second); err == nil || !strings.Contains(err.Error(), "no bound inputs") {
		t.Errorf("Measure before Bind: %v", err)
	}
	if err := s.Bind([]Tensor{{Name: "input", Type: "float32", Shape: []int64{2}, Data: []float64{1}}}); err == nil {
		t.Errorf("Bind of a tensor whose shape does not hold its data: no error")
	}
	if err := s.Bind(inputs); err != nil {
		t.Fatal(err)
	}
	runs, err := s.Measure(7, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 7 {
		t.Errorf("Measure(7, 1m): %d runs", len(runs))
	}
	budget := 100 * time.Millisecond
	runs, err = s.Measure(1<<20, budget)
	if err != nil {
		t.Fatal(err)
	}
	var sum time.Duration
	for _, d := range runs {
		if d <= 0 {
			t.Errorf("a run took %v", d)
		}
		sum += d
	}
	// The loop stops at the first run that ends past the budget: every run
	// before it ended within the budget.
	if len(runs) == 0 || sum-runs[len(runs)-1] > budget {
		t.Errorf("Measure(∞, %v): %d runs adding up to %v", budget, len(runs), sum)
	}
	t.Logf("%d runs in %v, median %v", len(runs), budget, median(runs))

	// A run that never ends. Its promise is kept reachable: one nothing refers to
	// may be collected, and CDP then answers "Promise was collected" instead of
	// waiting (seen under load), which a real hung run never does.
	if err := s.Eval(`hw.session.run = () => new Promise(r => { (window.hwtestHung ||= []).push(r) })`, nil); err != nil {
		t.Fatal(err)
	}
	s.Timeout = 300 * time.Millisecond
	start := time.Now()
	_, err = s.Measure(10, 50*time.Millisecond)
	if !errors.Is(err, ErrTimedOut) {
		t.Errorf("a hung run: %v, want ErrTimedOut", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("a hung run ended the call after %v, want about 350ms", d)
	}
}

// The harness page is cross-origin isolated, so performance.now(), which times
// every run, steps by 5 µs in Chromium; without COOP/COEP it is coarsened to
// 100 µs, as much as a fifth of a Silero VAD run on wasm here.
func TestTimerResolution(t *testing.T) {
	s, _ := openSilero(t)
	var stepUS float64
	if err := s.Eval(`(() => {
  let last = performance.now(), step = Infinity;
  for (const end = last + 50; last < end; ) {
    const t = performance.now();
    if (t !== last) { step = Math.min(step, t - last); last = t; }
  }
  return step * 1000;
})()`, &stepUS); err != nil {
		t.Fatal(err)
	}
	t.Logf("performance.now() step %.1f µs, cross-origin isolated %v", stepUS, s.CrossOrigin)
	if !s.CrossOrigin || stepUS > 20 {
		t.Errorf("performance.now() steps by %.1f µs (cross-origin isolated %v), want ≤ 20", stepUS, s.CrossOrigin)
	}
}
