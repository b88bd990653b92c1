package analysis

import (
	"cmp"
	"maps"
	"math"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hwtest/hwtest/diff"
	"github.com/hwtest/hwtest/matrix"
	"github.com/hwtest/hwtest/result"
	"github.com/hwtest/hwtest/stats"
)

// Trend is one cell's results over the runs that hold it, oldest first, and what
// changed along the way, as package diff decides it:
//
//   - status and placement: each run against the one before (diff.Compare on the
//     two cells);
//   - latency (p50) and peak memory: at every run k of a stretch of runs with the
//     same comparison key, the Options.TrendWindow runs before k against the
//     TrendWindow runs from k on (diff.Compare with those runs as each side's
//     repeated runs, so diff's U test, minimum effect and minimum runs decide). A
//     real step is seen from several neighbouring runs k at once; each unbroken
//     stretch of such runs is one change, marked at the run where diff's test was
//     most significant (the smallest p; then the larger change; then the earlier
//     run). One run never decides: a change needs diff's minimum runs on each
//     side, since run-to-run noise on a shared machine is larger than many real
//     changes (diff/testdata/README.md).
type Trend struct {
	Model   string   `json:"model"`
	Family  string   `json:"family,omitempty"`
	Target  string   `json:"target"`
	Points  []Point  `json:"points"`
	Changes []Change `json:"changes,omitempty"`
}

// Point is the cell in one run.
type Point struct {
	RunID        string        `json:"run_id"`
	Time         time.Time     `json:"time"`
	Status       result.Status `json:"status"`
	P50MS        float64       `json:"p50_ms,omitempty"`
	P99MS        float64       `json:"p99_ms,omitempty"`
	PeakRSSBytes int64         `json:"peak_rss_bytes,omitempty"`
}

// Kinds of Change.
const (
	ChangeStatus    = "status"
	ChangePlacement = "placement"
	ChangeLatency   = "latency"
	ChangeMemory    = "memory"
)

// Change is one thing diff found changed in a trend.
type Change struct {
	At        int    `json:"at"` // index of the first point that shows it
	RunID     string `json:"run_id"`
	Kind      string `json:"kind"`
	Regressed bool   `json:"regressed"` // else it improved (or a status moved sideways)
	// From and To: the statuses, or the placement summaries.
	From string `json:"from,omitempty"`
	To   string `json:"to,omitempty"`
	// Latency and memory: the medians of each window (ms, bytes), the relative
	// change, the U test's p and how many runs each side had with the cell's key.
	Old     float64  `json:"old,omitempty"`
	New     float64  `json:"new,omitempty"`
	Change  float64  `json:"change,omitempty"`
	P       *float64 `json:"p,omitempty"`
	RunsOld int      `json:"runs_old,omitempty"`
	RunsNew int      `json:"runs_new,omitempty"`
}

// Regressions counts a trend's changes for the worse.
func (t Trend) Regressions() int {
	n := 0
	for _, c := range t.Changes {
		if c.Regressed {
			n++
		}
	}
	return n
}

type cellKey struct{ model, target string }

// point is a cell in a run; pointers, since a long history has 10⁵ of them.
type point struct {
	run  *matrix.Matrix
	cell *matrix.Cell
}

// trends builds every cell's trend from the runs. A cell a run did not finish (its
// cause is "interrupted") is left out, as the history's current matrix leaves it.
func trends(current matrix.Matrix, runs []matrix.Matrix, opts Options) []Trend {
	sorted := sortRuns(runs)
	series := map[cellKey][]point{}
	var keys []cellKey
	for i := range sorted {
		r := &sorted[i]
		for j := range r.Cells {
			c := &r.Cells[j]
			if c.Cause == result.CauseInterrupted {
				continue
			}
			k := cellKey{c.Model, c.Target}
			s, ok := series[k]
			if !ok {
				keys = append(keys, k)
				s = make([]point, 0, len(sorted))
			}
			series[k] = append(s, point{r, c})
		}
	}
	// The current matrix's order, then cells it lacks, sorted.
	pos := map[cellKey]int{}
	for i, c := range current.Cells {
		pos[cellKey{c.Model, c.Target}] = i
	}
	slices.SortStableFunc(keys, func(a, b cellKey) int {
		pa, oka := pos[a]
		pb, okb := pos[b]
		switch {
		case oka && okb:
			return pa - pb
		case oka:
			return -1
		case okb:
			return 1
		}
		return cmp.Or(cmp.Compare(a.model, b.model), cmp.Compare(a.target, b.target))
	})
	// Each trend is independent of the others: compute them on every core.
	out := make([]Trend, len(keys))
	workers := min(runtime.GOMAXPROCS(0), max(1, len(keys)/64))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(keys); i += workers {
				out[i] = trend(series[keys[i]], opts)
			}
		})
	}
	wg.Wait()
	return out
}

func trend(s []point, opts Options) Trend {
	last := s[len(s)-1].cell
	t := Trend{Model: last.Model, Family: last.Family, Target: last.Target, Points: make([]Point, len(s))}
	for i, p := range s {
		pt := Point{RunID: p.run.RunID, Time: p.run.Generated, Status: p.cell.Status}
		if m := p.cell.Metrics; m != nil {
			pt.P50MS, pt.P99MS, pt.PeakRSSBytes = m.P50MS, m.P99MS, m.PeakRSSBytes
		}
		t.Points[i] = pt
	}
	// Status and placement: each run against the one before. The cells go without
	// their metrics: diff then stops after status, placement and options, without
	// a test of one run against one.
	for i := 1; i < len(s); i++ {
		if same(s[i-1].cell, s[i].cell) {
			continue // diff would find no change: skip the call (most pairs of a long history)
		}
		c := compare(bare(*s[i-1].cell), bare(*s[i].cell), nil, nil, opts.Diff)
		if st := c.Status; st != nil {
			t.Changes = append(t.Changes, Change{At: i, RunID: t.Points[i].RunID, Kind: ChangeStatus, Regressed: st.Regressed,
				From: string(st.From), To: string(st.To)})
		}
		if pl := c.Placement; pl != nil {
			t.Changes = append(t.Changes, Change{At: i, RunID: t.Points[i].RunID, Kind: ChangePlacement, Regressed: pl.Regressed,
				From: pl.From, To: pl.To})
		}
	}
	for _, seg := range keySegments(s, opts.Diff) {
		t.Changes = append(t.Changes, windowChanges(t, s, seg, opts)...)
	}
	slices.SortStableFunc(t.Changes, func(a, b Change) int { return a.At - b.At })
	return t
}

// keySegments splits the measured runs of a series into stretches whose cells
// share diff's comparison key: diff compares latency and memory only within one.
// Equal provenance has an equal key; otherwise diff says, from the two cells
// without their timing blocks (so it runs no test of one run against one).
func keySegments(s []point, o diff.Options) [][]int {
	var segs [][]int
	var cur []int
	for i, p := range s {
		if p.cell.Metrics == nil {
			continue
		}
		if len(cur) > 0 && !sameKey(s[cur[len(cur)-1]].cell, p.cell, o) {
			segs = append(segs, cur)
			cur = nil
		}
		cur = append(cur, i)
	}
	if len(cur) > 0 {
		segs = append(segs, cur)
	}
	return segs
}

func sameKey(a, b *matrix.Cell, o diff.Options) bool {
	if a.Provenance == nil || b.Provenance == nil {
		return false
	}
	if a.Provenance == b.Provenance || reflect.DeepEqual(*a.Provenance, *b.Provenance) {
		return true
	}
	c := compare(unblocked(*a), unblocked(*b), nil, nil, o)
	return c.NotCompared == "" && len(c.Key) == 0
}

// unblocked is the cell without the medians of its timing blocks.
func unblocked(c matrix.Cell) matrix.Cell {
	m := *c.Metrics
	m.BlockP50MS = nil
	c.Metrics = &m
	return c
}

// candidate is a split at which diff found a change.
type candidate struct {
	at int // index into the segment: the first run after the split
	m  *diff.Measure
}

// windowChanges compares, at each run of a segment (indices into s of runs with
// one key), the runs before it with the runs from it on, and keeps one change per
// unbroken stretch of splits diff flagged the same way.
func windowChanges(t Trend, s []point, seg []int, opts Options) []Change {
	o := opts.Diff
	minRuns := cmp.Or(o.MinRuns, diff.DefaultMinRuns)
	minEffect := cmp.Or(o.MinEffect, diff.DefaultMinEffect)
	minGrowth := float64(cmp.Or(o.MinRSSGrowth, diff.DefaultMinRSSGrowth))
	w := opts.TrendWindow
	found := map[string][]candidate{} // by kind and verdict
	for k := 1; k < len(seg); k++ {
		older := seg[max(0, k-w):k]
		newer := seg[k:min(len(seg), k+w)]
		if len(older) < minRuns || len(newer) < minRuns {
			continue // diff would leave it undecided
		}
		// Skip the test where the medians are too close for diff to call any
		// change (its minimum effect; a tenth of margin so that diff decides
		// every borderline case).
		p50 := func(c *matrix.Cell) float64 { return c.Metrics.P50MS }
		rss := func(c *matrix.Cell) float64 { return float64(c.Metrics.PeakRSSBytes) }
		lo, ln := median(s, older, p50), median(s, newer, p50)
		ro, rn := median(s, older, rss), median(s, newer, rss)
		latency := lo > 0 && math.Abs(ln/lo-1) >= 0.9*minEffect
		memory := ro > 0 && rn > 0 && math.Abs(rn/ro-1) >= 0.9*minEffect && math.Abs(rn-ro) >= 0.9*minGrowth
		if !latency && !memory {
			continue
		}
		oldPrimary, oldRest := side(s, older)
		newPrimary, newRest := side(s, newer)
		c := compare(oldPrimary, newPrimary, oldRest, newRest, o)
		for _, m := range []struct {
			kind string
			m    *diff.Measure
		}{{ChangeLatency, c.Latency}, {ChangeMemory, c.Memory}} {
			if m.m != nil && (m.m.Verdict == diff.Regressed || m.m.Verdict == diff.Improved) {
				key := m.kind + " " + string(m.m.Verdict)
				found[key] = append(found[key], candidate{k, m.m})
			}
		}
	}
	var out []Change
	for _, key := range slices.Sorted(maps.Keys(found)) {
		cands := found[key]
		for i := 0; i < len(cands); {
			best, j := cands[i], i+1
			for ; j < len(cands) && cands[j].at == cands[j-1].at+1; j++ {
				if better(cands[j], best) {
					best = cands[j]
				}
			}
			i = j
			at := seg[best.at]
			m := best.m
			kind, _, _ := strings.Cut(key, " ")
			out = append(out, Change{At: at, RunID: t.Points[at].RunID, Kind: kind, Regressed: m.Verdict == diff.Regressed,
				Old: m.Old, New: m.New, Change: m.Change, P: m.P, RunsOld: m.RunsOld, RunsNew: m.RunsNew})
		}
	}
	return out
}

// better: the more significant split, then the larger change, then the earlier.
func better(a, b candidate) bool {
	pa, pb := pOf(a.m), pOf(b.m)
	if pa != pb {
		return pa < pb
	}
	if ca, cb := math.Abs(a.m.Change), math.Abs(b.m.Change); ca != cb {
		return ca > cb
	}
	return a.at < b.at
}

func pOf(m *diff.Measure) float64 {
	if m.P == nil {
		return 1
	}
	return *m.P
}

func median(s []point, idx []int, f func(*matrix.Cell) float64) float64 {
	xs := make([]float64, len(idx))
	for i, j := range idx {
		xs[i] = f(s[j].cell)
	}
	return stats.Median(xs)
}

// side is a window as diff takes a side: its newest run (the primary, whose key
// the others must share) and the others as its repeated runs.
func side(s []point, idx []int) (matrix.Cell, []matrix.Matrix) {
	last := idx[len(idx)-1]
	rest := make([]matrix.Matrix, 0, len(idx)-1)
	for _, j := range idx[:len(idx)-1] {
		rest = append(rest, one(*s[j].cell))
	}
	return *s[last].cell, rest
}

// compare is diff.Compare on one cell of each side.
func compare(old, new matrix.Cell, oldRuns, newRuns []matrix.Matrix, o diff.Options) diff.Cell {
	o.OldRuns, o.NewRuns = oldRuns, newRuns
	r := diff.Compare(one(old), one(new), o)
	return r.Cells[0]
}

func one(c matrix.Cell) matrix.Matrix { return matrix.Matrix{Cells: []matrix.Cell{c}} }

// same: the two cells have the same status and the same node placement on the
// same provider, so diff can report neither a status nor a placement change.
func same(a, b *matrix.Cell) bool {
	if a.Status != b.Status || (a.Placement == nil) != (b.Placement == nil) {
		return false
	}
	if a.Placement == nil {
		return true
	}
	if a.Provenance == nil || b.Provenance == nil || a.Provenance.Provider != b.Provenance.Provider {
		return false
	}
	return reflect.DeepEqual(*a.Placement, *b.Placement)
}

func bare(c matrix.Cell) matrix.Cell {
	c.Metrics = nil
	return c
}
