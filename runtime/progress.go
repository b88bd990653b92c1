package runtime

import (
	"encoding/json"
	"os"
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
// expected-fail), else the last pass or partial.
func (c *Cell) noteStatus(status result.Status, reason string) {
	failing := func(s result.Status) bool {
		return s != "" && s != result.StatusPass && s != result.StatusPartial
	}
	if failing(c.status) {
		return
	}
	c.status, c.reason = status, reason
}
