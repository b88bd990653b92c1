package progress

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/mattn/go-runewidth"
	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/cwriter"
	"github.com/vbauerster/mpb/v8/decor"

	"github.com/hwtest/hwtest/result"
)

// IsTerminal reports whether w is a terminal the bar can redraw itself on: one
// that says how big it is (a pseudo-terminal nobody sized says 0×0, and mpb would
// draw nothing there).
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || !cwriter.IsTerminal(int(f.Fd())) {
		return false
	}
	width, height, err := cwriter.GetSize(int(f.Fd()))
	return err == nil && width > 0 && height > 0
}

// New is the display a run writes to w: a bar on a terminal, lines elsewhere.
func New(w io.Writer, t *Tracker) Display {
	if IsTerminal(w) {
		return NewBar(w, t)
	}
	return NewLines(w, t)
}

// Bar is the terminal display, two lines redrawn in place:
//
//	cells 5/28 [=======>--------------------------] elapsed 1:02, ETA 3:10
//	  now silero-vad-v6 on wasm (4.1s) · 1 error · 3 pass · 1 unavailable
type Bar struct {
	t   *Tracker
	p   *mpb.Progress
	bar *mpb.Bar
	log io.Writer
}

// NewBar draws on w; options are mpb's (tests render to a buffer on demand).
func NewBar(w io.Writer, t *Tracker, options ...mpb.ContainerOption) *Bar {
	p := mpb.New(append([]mpb.ContainerOption{mpb.WithOutput(w), mpb.WithRefreshRate(200 * time.Millisecond)}, options...)...)
	bar := p.New(int64(t.Total()), mpb.BarStyle(),
		mpb.PrependDecorators(decor.Any(func(s decor.Statistics) string {
			return fmt.Sprintf("cells %d/%d", s.Current, s.Total)
		})),
		mpb.AppendDecorators(decor.Any(func(decor.Statistics) string {
			return "elapsed " + Clock(t.Elapsed()) + ", " + t.ETA()
		})),
		mpb.BarExtender(mpb.BarFillerFunc(func(w io.Writer, s decor.Statistics) error {
			_, err := io.WriteString(w, runewidth.Truncate("  "+StatusLine(t), s.AvailableWidth, "…")+"\n")
			return err
		}), false),
	)
	return &Bar{t: t, p: p, bar: bar, log: aboveBar{p, w}}
}

// StatusLine is the bar's second line: the cell running now, then the statuses of
// the cells that ended.
func StatusLine(t *Tracker) string {
	var parts []string
	if c, d, ok := t.Running(); ok {
		parts = append(parts, fmt.Sprintf("now %s (%s)", c, Round(d)))
	}
	if n := t.Counts(); n != "" {
		parts = append(parts, n)
	}
	if len(parts) == 0 {
		return "waiting for the first cell"
	}
	return strings.Join(parts, " · ")
}

func (b *Bar) Cell(e result.CellEvent) {
	if b.t.Observe(e) {
		b.bar.Increment()
	}
}

func (b *Bar) Log() io.Writer { return b.log }

// Finish draws the bar one last time and leaves it on the screen: full when every
// cell ended, else where it stopped (interrupted, or fewer cells than planned).
func (b *Bar) Finish(interrupted bool) {
	if interrupted || !b.bar.Completed() {
		b.bar.Abort(false)
	}
	b.p.Wait()
}

// aboveBar prints the run's messages above the bar while it is drawn, and
// straight to the terminal once it is gone.
type aboveBar struct {
	p *mpb.Progress
	w io.Writer
}

func (a aboveBar) Write(b []byte) (int, error) {
	n, err := a.p.Write(b)
	if errors.Is(err, mpb.ErrDone) {
		return a.w.Write(b)
	}
	return n, err
}
