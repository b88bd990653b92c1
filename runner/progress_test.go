package runner

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/hwtest/hwtest/catalog"
	"github.com/hwtest/hwtest/matrix"
	"github.com/hwtest/hwtest/result"
)

// A suite's announcements reach Progress while it runs, a line cut in two by the
// writer included; lines that are not events, or not this model's, are dropped.
// The suite then dies without a report: every cell of the model is revised to the
// crash, the one it had announced as a pass too.
func TestProgressIsLiveThenRevised(t *testing.T) {
	o := options(t, time.Minute)
	o.Catalogs = &catalog.Catalogs{Targets: []catalog.Target{{ID: "cpu"}, {ID: "qnn"}}}
	var mu sync.Mutex
	var got []result.CellEvent
	var startSeen time.Time
	o.Progress = func(e result.CellEvent) {
		mu.Lock()
		defer mu.Unlock()
		if e.Event == result.CellStarted {
			startSeen = time.Now()
		}
		got = append(got, e)
	}
	bin := fakeSuite(t, `printf '{"event":"start","model":"m","target":"cpu"}\n' >> "$HWTEST_PROGRESS"
sleep 1
printf '{"event":"done","model":"m","target":"cpu","status":"pass","p50_ms":1.5,' >> "$HWTEST_PROGRESS"
sleep 0.3
printf '"wall_ms":12}\nnot an event\n{"event":"done","model":"other","target":"cpu","status":"pass"}\n' >> "$HWTEST_PROGRESS"
echo "fatal error: boom" >&2
exit 2`)
	announced := map[string]result.Status{}
	_, fail := runModel(context.Background(), o, bin, catalog.Model{ID: "m", Family: "audio"}, announced)
	ended := time.Now()
	if fail == nil {
		t.Fatal("the suite died without a report: want a failure")
	}
	reviseProgress(o, "m", nil, fail, announced)

	if lead := ended.Sub(startSeen); startSeen.IsZero() || lead < 900*time.Millisecond {
		t.Errorf("the start event arrived %v before the suite ended, want ≈ 1.3 s: not live", lead)
	}
	crash := "suite process failed: the suite process ended without a report: exit status 2"
	want := []result.CellEvent{
		{Event: result.CellStarted, Model: "m", Target: "cpu"},
		{Event: result.CellDone, Model: "m", Target: "cpu", Status: result.StatusPass, P50MS: 1.5, WallMS: 12},
		{Event: result.CellDone, Model: "m", Target: "cpu", Status: result.StatusError, Reason: crash, Revised: true},
		{Event: result.CellDone, Model: "m", Target: "qnn", Status: result.StatusError, Reason: crash, Revised: true},
	}
	trim := cmp.Transformer("reasonStart", func(e result.CellEvent) result.CellEvent {
		if len(e.Reason) > len(crash) {
			e.Reason = e.Reason[:len(crash)]
		}
		return e
	})
	if d := cmp.Diff(want, got, cmpopts.IgnoreFields(result.CellEvent{}, "Time"), trim); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}
}

// A cell whose report agrees with what its suite announced is not told twice.
func TestProgressNotRevisedWhenTheReportAgrees(t *testing.T) {
	o := options(t, time.Minute)
	o.Catalogs = &catalog.Catalogs{Targets: []catalog.Target{{ID: "cpu"}}}
	var got []result.CellEvent
	o.Progress = func(e result.CellEvent) { got = append(got, e) }
	fail := &matrix.ProcessFailure{Model: "m", Err: "exit status 2"}
	reviseProgress(o, "m", nil, fail, map[string]result.Status{"cpu": result.StatusError})
	if len(got) != 0 {
		t.Errorf("told again: %+v", got)
	}
}
