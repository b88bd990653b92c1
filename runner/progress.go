package runner

import (
	"bytes"
	"encoding/json"
	"os"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/hwtest/hwtest/matrix"
	"github.com/hwtest/hwtest/result"
)

// tailInterval is how often the runner reads what a suite announced: often enough
// for a display, rarely enough to cost nothing.
const tailInterval = 100 * time.Millisecond

// tailProgress creates the (empty) file a suite appends its cell events to and
// forwards each whole line it gains, in order, until stop is called; stop then
// forwards what is left and returns when the last event was forwarded. A line
// that is not an event is skipped: the display is a courtesy, never a result.
func tailProgress(path string, forward func(result.CellEvent)) (stop func(), err error) {
	f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, err
	}
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		defer f.Close()
		var pending []byte
		buf := make([]byte, 64<<10)
		read := func() {
			for {
				n, err := f.Read(buf)
				pending = append(pending, buf[:n]...)
				for {
					i := bytes.IndexByte(pending, '\n')
					if i < 0 {
						break
					}
					var e result.CellEvent
					if json.Unmarshal(pending[:i], &e) == nil {
						forward(e)
					}
					pending = pending[i+1:]
				}
				if err != nil || n == 0 {
					return // io.EOF: all there is for now
				}
			}
		}
		tick := time.NewTicker(tailInterval)
		defer tick.Stop()
		for {
			select {
			case <-tick.C:
				read()
			case <-quit:
				read()
				return
			}
		}
	}()
	return func() { close(quit); <-done }, nil
}

// reviseProgress tells o.Progress the status each of a model's cells has in the
// model's own matrix wherever it differs from what its suite announced, or the
// suite announced nothing (it crashed, hung or was stopped before the cell ended).
func reviseProgress(o Options, model string, reports []types.Report, fail *matrix.ProcessFailure, announced map[string]result.Status) {
	if o.Progress == nil {
		return
	}
	var failures []matrix.ProcessFailure
	if fail != nil {
		failures = append(failures, *fail)
	}
	var targets []string
	for _, t := range o.Catalogs.Targets {
		targets = append(targets, t.ID)
	}
	mx := matrix.FromReports(reports, failures, []string{model}, targets)
	for _, c := range mx.Cells {
		if s, ok := announced[c.Target]; c.Model != model || ok && s == c.Status {
			continue
		}
		e := result.CellEvent{Event: result.CellDone, Model: c.Model, Target: c.Target, Status: c.Status, Reason: c.Reason,
			WallMS: c.WallMS, Time: time.Now().UTC(), Revised: true}
		if c.Metrics != nil {
			e.P50MS = c.Metrics.P50MS
		}
		o.Progress(e)
	}
}
