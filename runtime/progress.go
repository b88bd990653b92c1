package runtime

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/hwtest/hwtest/result"
)

// progressFile is the file `hwtest run` tails for its live display (ProgressEnv);
// nil when unset or when it cannot be opened: progress is a courtesy, and writing
// it never fails a cell.
var progressFile = sync.OnceValue(func() *os.File {
	path := os.Getenv(result.ProgressEnv)
	if path == "" {
		return nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil
	}
	return f
})

// announce appends one event as a JSON line, in one write, so the reader never
// sees half of it next to another's.
func announce(e result.CellEvent) {
	f := progressFile()
	if f == nil {
		return
	}
	e.Time = time.Now().UTC()
	b, err := json.Marshal(e)
	if err != nil {
		return
	}
	_, _ = f.Write(append(b, '\n'))
}

// announceStart says the cell began; announceDone, once, that it ended and how.
func (c *Cell) announceStart() {
	c.began = time.Now()
	announce(result.CellEvent{Event: result.CellStarted, Model: c.Model.ID, Target: c.Target.ID})
}

func (c *Cell) announceDone() {
	if c.began.IsZero() || c.announced {
		return
	}
	c.announced = true
	announce(result.CellEvent{
		Event: result.CellDone, Model: c.Model.ID, Target: c.Target.ID,
		Status: c.status, Reason: c.reason, P50MS: c.p50, WallMS: ms(time.Since(c.began)),
	})
}

// noteStatus keeps what announceDone will say: the first failing status a step
// recorded (a cell's Ordered specs stop at a failure; expected-fail steps are all
// expected-fail), else the last that agreed (pass, partial or cpu-only).
func (c *Cell) noteStatus(status result.Status, reason string) {
	failing := func(s result.Status) bool {
		return s != "" && !s.Agreed()
	}
	if failing(c.status) {
		return
	}
	c.status, c.reason = status, reason
}

// stepLine is one step of a cell as a hand-run `ginkgo -v` shows it (GinkgoWriter):
// status and reason, then what the step measured, so a person at a terminal sees
// the numbers `hwtest run` stores, not only pass or fail:
//
//	silero-vad-v5 on cpu, measure: pass · p50 0.102 ms, p99 0.150 ms, 9.8k/s · peak RSS 151.2 MiB (model 20.1 MiB) · placement: 100% of 12 nodes on CPU
func stepLine(r result.CellReport, provider string) string {
	s := fmt.Sprintf("%s on %s, %s: %s", r.Model, r.Target, r.Check, r.Status)
	if r.Reason != "" {
		s += " (" + strings.Join(strings.Fields(r.Reason), " ") + ")"
	}
	if r.Skipped != "" {
		s += " · skipped: " + strings.Join(strings.Fields(r.Skipped), " ")
	}
	if m := r.Metrics; m != nil {
		s += fmt.Sprintf(" · load %s ms, first run %s ms · p50 %s ms, p99 %s ms, %s/s",
			result.FormatMS(m.LoadMS), result.FormatMS(m.FirstRunMS), result.FormatMS(m.P50MS), result.FormatMS(m.P99MS), result.FormatPerSecond(m.ThroughputPerS))
		if m.PeakRSSBytes > 0 {
			s += fmt.Sprintf(" · peak RSS %s MiB", result.FormatMiB(m.PeakRSSBytes))
			if m.ModelPeakBytes > 0 {
				s += fmt.Sprintf(" (model %s MiB)", result.FormatMiB(m.ModelPeakBytes))
			}
		}
	}
	if p := r.Placement; p != nil {
		if p.EP != "" { // a browser target's profile names its EP ("WebGpu"), not hardware.yaml's provider
			provider = p.EP
		}
		s += " · placement: " + p.Summary(provider)
	}
	if r.Worst != nil && r.Status != result.StatusPass {
		d := r.Worst
		s += fmt.Sprintf(" · worst: %s[%d] = %g, want %g (|error| %.3g > %.3g)", d.Output, d.Index, d.Got, d.Want, d.AbsErr, d.Allowed)
	}
	return s
}
