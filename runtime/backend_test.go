package runtime

import (
	"errors"
	"testing"
	"time"

	"github.com/hwtest/hwtest/internal/testenv"
	"github.com/hwtest/hwtest/result"
)

// A browser cell's timed runs are the page's own loop: Run hands out runs timed
// back to back in the page, fetched in batches (not one call into the page per
// run), and a hung inference, in the timed runs or in the first one, ends with
// ErrRunTimeout (cause: timeout) instead of stalling the suite.
func TestBrowserTimedRuns(t *testing.T) {
	tg := Target{ID: "wasm", Runner: "browser", Provider: "wasm", Bundle: "ort.min.js"}
	testenv.Need(t, "wasm in Chromium (make setup)", Unavailable(tg))
	defer Shutdown()
	path, inputs, err := writeMLPDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	bs, err := openBrowserSession(path, tg)
	if err != nil {
		t.Fatal(err)
	}
	defer bs.Close()
	tr, err := bs.Bind(inputs)
	if err != nil {
		t.Fatal(err)
	}
	// Count the calls into the page's timed loop.
	if err := bs.s.Eval(`(() => { hw.measureCalls = 0; const m = hw.measure;
  hw.measure = (...a) => { hw.measureCalls++; return m(...a); }; return true; })()`, nil); err != nil {
		t.Fatal(err)
	}
	const runs = 40
	var sum time.Duration
	for i := range runs {
		d, err := tr.Run()
		if err != nil {
			t.Fatal(err)
		}
		if d <= 0 {
			t.Errorf("run %d took %v", i+1, d)
		}
		sum += d
	}
	tr.Close()
	var calls int
	if err := bs.s.Eval(`hw.measureCalls`, &calls); err != nil {
		t.Fatal(err)
	}
	// Each call runs for about browserBatch: allow half-full batches (and a busy
	// machine's long runs), not a call per run.
	if most := 2 + int(sum/(browserBatch/2)); calls < 1 || calls > most {
		t.Errorf("%d timed runs (%v in all) took %d calls into the page's loop, want 1 to %d", runs, sum, calls, most)
	}
	t.Logf("%d timed runs (%v in all) in %d calls into the page", runs, sum, calls)

	if err := bs.s.Eval(`hw.session.run = () => new Promise(r => { (window.hwtestHung ||= []).push(r) })`, nil); err != nil {
		t.Fatal(err)
	}
	bs.s.Timeout = 300 * time.Millisecond
	tr, err = bs.Bind(inputs)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	start := time.Now()
	_, err = tr.Run()
	if !errors.Is(err, ErrRunTimeout) || causeOf(err) != result.CauseTimeout {
		t.Errorf("a hung timed run: %v (cause %q), want ErrRunTimeout", err, causeOf(err))
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("a hung timed run ended after %v", d)
	}
	t.Logf("a hung timed run: %v", err)
	if _, err := bs.Run(inputs); !errors.Is(err, ErrRunTimeout) {
		t.Errorf("a hung first run: %v, want ErrRunTimeout", err)
	}
}
