// Package diff compares two runs of the matrix: status changes (pass → mismatch,
// newly unavailable, ...), where a partial cell's nodes ran, what changed in a cell's
// key, and latency and peak-RSS regressions decided as benchstat decides them: a
// Mann-Whitney U test on repeated measurements with a confidence level and a minimum
// effect.
//
// Which measurements count as repeated was decided from data (diff/testdata/README.md):
// on this shared 2-core machine, of ten back-to-back runs of unchanged cells a later
// run's p50 was up to 56% (wasm) and 34% (cpu) above an earlier one's, and its peak
// RSS up to 47%. The medians of blocks of timed runs within one run do not see that
// noise: a U test on one run's blocks against another's called 51 of 360 (cell,
// earlier run, later run) triples a regression (at 5%; 16 still at 30%), while a
// test on runs, the unit that carries the run-to-run noise, called none. So a
// regression is decided only from repeated runs: at least MinRuns runs with the same
// key on each side, each run contributing its p50 (or peak RSS). One run against one
// run shows the change (and the blocks' p-value) and leaves it undecided.
package diff

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/hwtest/hwtest/matrix"
	"github.com/hwtest/hwtest/result"
	"github.com/hwtest/hwtest/stats"
)

// Defaults of Options, as the CLI states them.
const (
	DefaultAlpha        = 0.05    // benchstat's default
	DefaultMinEffect    = 0.05    // the smallest change of the medians called a regression
	DefaultMinRuns      = 3       // runs with the same key per side before a regression is decided
	DefaultMinRSSGrowth = 1 << 20 // bytes: peak RSS must also grow by this much
)

// Options tune Compare. Zero values take the defaults.
type Options struct {
	// Alpha is the significance level of the U test (1 − confidence).
	Alpha float64 `json:"alpha"`
	// MinEffect is the smallest relative change of the medians that is a
	// regression (0.05: 5%), however significant a smaller one is.
	MinEffect float64 `json:"min_effect"`
	// MinRuns is how many runs with the same key each side needs before latency
	// or memory is decided; with fewer the change is shown, undecided.
	MinRuns int `json:"min_runs"`
	// MinRSSGrowth is the smallest growth of peak RSS, in bytes, that is a
	// regression, besides MinEffect.
	MinRSSGrowth int64 `json:"min_rss_growth_bytes"`
	// OldRuns and NewRuns are further runs of each side: repeated runs of the same
	// cells (for example the runs before old, and the runs after old up to new). A
	// cell's measurements in them count only where its key equals the primary
	// run's.
	OldRuns []matrix.Matrix `json:"-"`
	NewRuns []matrix.Matrix `json:"-"`
}

func (o Options) withDefaults() Options {
	if o.Alpha <= 0 {
		o.Alpha = DefaultAlpha
	}
	if o.MinEffect <= 0 {
		o.MinEffect = DefaultMinEffect
	}
	if o.MinRuns <= 0 {
		o.MinRuns = DefaultMinRuns
	}
	if o.MinRSSGrowth <= 0 {
		o.MinRSSGrowth = DefaultMinRSSGrowth
	}
	return o
}

// Report is what changed from one run to another.
type Report struct {
	Old     Run     `json:"old"`
	New     Run     `json:"new"`
	Options Options `json:"options"`
	// Cells are the cells present in both runs, in the new run's order.
	Cells []Cell `json:"cells"`
	// OnlyOld and OnlyNew name cells ("model/target") that ran on one side only.
	OnlyOld []string `json:"only_old,omitempty"`
	OnlyNew []string `json:"only_new,omitempty"`
}

// Run names a side of the comparison.
type Run struct {
	RunID     string    `json:"run_id,omitempty"`
	Generated time.Time `json:"generated"`
	// Runs is how many runs the side holds: the run itself and its repeated runs.
	Runs int `json:"runs"`
}

// Cell is what changed in one (model, target).
type Cell struct {
	Model  string `json:"model"`
	Target string `json:"target"`
	// Status is set when the status changed.
	Status *StatusChange `json:"status,omitempty"`
	// Placement is set when the share of nodes on the target's EP moved.
	Placement *PlacementChange `json:"placement,omitempty"`
	// Key lists the fields of the cell's key that changed, when both sides measured
	// the cell (an unavailable cell's provenance lacks the model and device);
	// latency and memory are then not compared (they measured different things).
	Key []Change `json:"key_changed,omitempty"`
	// Options lists changed EP or session options (not part of the key: a changed
	// thread count is exactly what a latency comparison should show).
	Options []Change `json:"options_changed,omitempty"`
	// Latency (p50, ms) and Memory (peak RSS, bytes) are set when both sides
	// measured the cell under the same key.
	Latency *Measure `json:"latency,omitempty"`
	Memory  *Measure `json:"memory,omitempty"`
	// NotCompared says why Latency and Memory are absent.
	NotCompared string `json:"not_compared,omitempty"`
}

// Change is one field's old and new values.
type Change struct {
	Field string `json:"field"`
	From  string `json:"from"`
	To    string `json:"to"`
}

// StatusChange is a cell's status moving.
type StatusChange struct {
	From   result.Status `json:"from"`
	To     result.Status `json:"to"`
	Reason string        `json:"reason,omitempty"` // the new status's reason
	// NewlyUnavailable: the target was not found this time (the probe's reason).
	NewlyUnavailable bool `json:"newly_unavailable,omitempty"`
	// Regressed: the new status is worse (matrix.Statuses order), or the cell
	// became unavailable.
	Regressed bool `json:"regressed"`
}

// PlacementChange is a move of the share of a cell's nodes on its target's EP.
type PlacementChange struct {
	Provider string `json:"provider"`
	From     string `json:"from"` // result.Placement.Summary
	To       string `json:"to"`
	// Regressed: fewer nodes on the target's EP (more fell back to the CPU).
	Regressed bool `json:"regressed"`
}

// Verdict is what a latency or memory comparison concluded.
type Verdict string

const (
	Regressed Verdict = "regressed"
	Improved  Verdict = "improved"
	NoChange  Verdict = "~"         // not significant, or smaller than the minimum effect
	Undecided Verdict = "undecided" // too few runs to tell a change from run-to-run noise
)

// Samples names the repeated measurements a comparison used.
const (
	SamplesRuns   = "runs"   // one value per run: its p50, or its peak RSS
	SamplesBlocks = "blocks" // the medians of blocks of timed runs within one run
	SamplesSingle = "single" // one value per side, no test
)

// Measure compares one quantity between the two sides.
type Measure struct {
	// RunsOld and RunsNew are the runs with the cell's key on each side.
	RunsOld int     `json:"runs_old"`
	RunsNew int     `json:"runs_new"`
	Samples string  `json:"samples"`
	N1      int     `json:"n_old"`
	N2      int     `json:"n_new"`
	Old     float64 `json:"old"` // median of the old side's samples
	New     float64 `json:"new"`
	Change  float64 `json:"change"` // New/Old − 1
	// P is the two-sided p-value of the U test; absent when no test ran.
	P       *float64 `json:"p,omitempty"`
	Verdict Verdict  `json:"verdict"`
	Note    string   `json:"note,omitempty"` // why undecided, or what the test could not do
}

// Regressed reports whether anything got worse: a status, a placement, latency or
// memory. The CLI exits 4 on it.
func (r Report) Regressed() bool {
	for _, c := range r.Cells {
		if c.Regressed() {
			return true
		}
	}
	return false
}

// Regressed reports whether this cell got worse.
func (c Cell) Regressed() bool {
	return (c.Status != nil && c.Status.Regressed) ||
		(c.Placement != nil && c.Placement.Regressed) ||
		(c.Latency != nil && c.Latency.Verdict == Regressed) ||
		(c.Memory != nil && c.Memory.Verdict == Regressed)
}

// Changed reports whether the cell has anything to say.
func (c Cell) Changed() bool {
	return c.Status != nil || c.Placement != nil || len(c.Key) > 0 || len(c.Options) > 0 ||
		c.NotCompared != "" || measureChanged(c.Latency) || measureChanged(c.Memory)
}

func measureChanged(m *Measure) bool { return m != nil && m.Verdict != NoChange }

type cellKey struct{ model, target string }

// Compare compares the cells new and old have in common. See the package comment
// for how latency and memory are decided.
func Compare(old, new matrix.Matrix, opts Options) Report {
	opts = opts.withDefaults()
	r := Report{
		Old:     Run{RunID: old.RunID, Generated: old.Generated, Runs: 1 + len(opts.OldRuns)},
		New:     Run{RunID: new.RunID, Generated: new.Generated, Runs: 1 + len(opts.NewRuns)},
		Options: opts,
		Cells:   []Cell{},
	}
	olds := index(old)
	news := index(new)
	for _, c := range old.Cells {
		if _, ok := news[cellKey{c.Model, c.Target}]; !ok {
			r.OnlyOld = append(r.OnlyOld, c.Model+"/"+c.Target)
		}
	}
	for _, nc := range new.Cells {
		oc, ok := olds[cellKey{nc.Model, nc.Target}]
		if !ok {
			r.OnlyNew = append(r.OnlyNew, nc.Model+"/"+nc.Target)
			continue
		}
		r.Cells = append(r.Cells, compareCell(oc, nc, opts))
	}
	return r
}

func index(m matrix.Matrix) map[cellKey]matrix.Cell {
	out := make(map[cellKey]matrix.Cell, len(m.Cells))
	for _, c := range m.Cells {
		out[cellKey{c.Model, c.Target}] = c
	}
	return out
}

func compareCell(oc, nc matrix.Cell, opts Options) Cell {
	c := Cell{Model: nc.Model, Target: nc.Target}
	if oc.Status != nc.Status {
		unavailable := nc.Status == result.StatusUnavailable
		c.Status = &StatusChange{
			From: oc.Status, To: nc.Status, Reason: nc.Reason,
			NewlyUnavailable: unavailable,
			// A target that was unavailable and now runs is new coverage, whatever
			// its status ranks against "unavailable"; becoming unavailable is lost.
			Regressed: unavailable || (oc.Status != result.StatusUnavailable && rank(nc.Status) < rank(oc.Status) && !renamedCPUOnly(oc, nc)),
		}
	}
	c.Placement = comparePlacement(oc, nc)
	c.Options = optionChanges(oc.Provenance, nc.Provenance)

	if oc.Metrics == nil || nc.Metrics == nil {
		return c // nothing measured on one side: its status says why
	}
	var same bool
	c.Key, same = keyChanges(oc.Provenance, nc.Provenance)
	if !same {
		c.NotCompared = "key changed: latency and memory measured different things"
		if len(c.Key) == 0 {
			c.NotCompared = "no provenance on one side: the key is unknown, latency and memory are not compared"
		}
		return c
	}
	oldRuns := repeated(oc, opts.OldRuns)
	newRuns := repeated(nc, opts.NewRuns)
	c.Latency = latency(oc, nc, oldRuns, newRuns, opts)
	c.Memory = memory(oc, nc, oldRuns, newRuns, opts)
	for _, m := range []*Measure{c.Latency, c.Memory} {
		if m != nil {
			m.RunsOld, m.RunsNew = len(oldRuns), len(newRuns)
		}
	}
	return c
}

// renamedCPUOnly: an older hwtest called a cell whose EP took no node partial; the
// same placement now reads cpu-only, which names what happened, not a change.
func renamedCPUOnly(oc, nc matrix.Cell) bool {
	if oc.Status != result.StatusPartial || nc.Status != result.StatusCPUOnly || oc.Placement == nil || nc.Placement == nil {
		return false
	}
	ep := nc.Placement.EP
	if ep == "" {
		return false
	}
	return oc.Placement.NoneOn(ep)
}

// rank orders statuses from the worst (0) to the best, as the matrix merges them.
func rank(s result.Status) int { return max(0, slices.Index(matrix.Statuses, s)) }

// repeated is the cell's measured cells on its side: itself, then the same cell in
// the side's other runs where it was measured under the same key.
func repeated(c matrix.Cell, runs []matrix.Matrix) []matrix.Cell {
	out := []matrix.Cell{c}
	for _, m := range runs {
		for _, rc := range m.Cells {
			if rc.Model != c.Model || rc.Target != c.Target || rc.Metrics == nil {
				continue
			}
			if _, same := keyChanges(c.Provenance, rc.Provenance); same {
				out = append(out, rc)
			}
		}
	}
	return out
}

func latency(oc, nc matrix.Cell, oldRuns, newRuns []matrix.Cell, opts Options) *Measure {
	if len(oldRuns) >= opts.MinRuns && len(newRuns) >= opts.MinRuns {
		p50 := func(c matrix.Cell) float64 { return c.Metrics.P50MS }
		return decide(values(oldRuns, p50), values(newRuns, p50), 0, opts)
	}
	m := &Measure{Samples: SamplesBlocks, Verdict: Undecided, N1: len(oldRuns), N2: len(newRuns), Note: fewRuns(len(oldRuns), len(newRuns), opts)}
	x, y := oc.Metrics.BlockP50MS, nc.Metrics.BlockP50MS
	if len(x) == 0 || len(y) == 0 {
		// No blocks (too few timed runs): the p50s alone.
		m.Samples, m.N1, m.N2 = SamplesSingle, 1, 1
		x, y = []float64{oc.Metrics.P50MS}, []float64{nc.Metrics.P50MS}
	} else {
		m.N1, m.N2 = len(x), len(y)
		if t, err := stats.MannWhitney(x, y); err == nil {
			m.P = &t.P
		}
	}
	m.Old, m.New = stats.Median(x), stats.Median(y)
	m.Change = relative(m.Old, m.New)
	if math.Abs(m.Change) < opts.MinEffect {
		m.Verdict, m.Note = NoChange, "" // too small to be a regression, however many runs
	}
	return m
}

func memory(oc, nc matrix.Cell, oldRuns, newRuns []matrix.Cell, opts Options) *Measure {
	rss := func(c matrix.Cell) float64 { return float64(c.Metrics.PeakRSSBytes) }
	if oc.Metrics.PeakRSSBytes <= 0 || nc.Metrics.PeakRSSBytes <= 0 {
		return nil
	}
	if len(oldRuns) >= opts.MinRuns && len(newRuns) >= opts.MinRuns {
		return decide(values(oldRuns, rss), values(newRuns, rss), float64(opts.MinRSSGrowth), opts)
	}
	m := &Measure{Samples: SamplesSingle, Verdict: Undecided, N1: 1, N2: 1, Old: rss(oc), New: rss(nc),
		Note: fewRuns(len(oldRuns), len(newRuns), opts)}
	m.Change = relative(m.Old, m.New)
	if math.Abs(m.Change) < opts.MinEffect || math.Abs(m.New-m.Old) < float64(opts.MinRSSGrowth) {
		m.Verdict, m.Note = NoChange, ""
	}
	return m
}

// decide is the regression rule on repeated runs: the U test's p below Alpha, and
// the medians' change at least MinEffect (and at least minGrowth in absolute terms).
func decide(x, y []float64, minGrowth float64, opts Options) *Measure {
	m := &Measure{Samples: SamplesRuns, N1: len(x), N2: len(y), Old: stats.Median(x), New: stats.Median(y), Verdict: NoChange}
	m.Change = relative(m.Old, m.New)
	t, err := stats.MannWhitney(x, y)
	if err != nil {
		m.Note = err.Error()
		return m
	}
	m.P = &t.P
	big := math.Abs(m.Change) >= opts.MinEffect && math.Abs(m.New-m.Old) >= minGrowth
	switch {
	case t.P < opts.Alpha && big && m.Change > 0:
		m.Verdict = Regressed
	case t.P < opts.Alpha && big && m.Change < 0:
		m.Verdict = Improved
	case t.P >= opts.Alpha && minP(len(x), len(y)) >= opts.Alpha:
		// benchstat's warning: these sizes cannot reach Alpha even when every new
		// value is above every old one.
		m.Note = fmt.Sprintf("%d against %d runs cannot reach α = %g; more runs are needed to detect a change", len(x), len(y), opts.Alpha)
	}
	return m
}

// minP is the smallest two-sided p-value of the U test for samples of n1 and n2
// values without ties: 2 / C(n1+n2, n1).
func minP(n1, n2 int) float64 {
	c := 1.0
	for i := 1; i <= n1; i++ {
		c = c * float64(n2+i) / float64(i)
	}
	return math.Min(1, 2/c)
}

func fewRuns(n1, n2 int, opts Options) string {
	return fmt.Sprintf("%d old and %d new run(s) with this key; a regression is decided from ≥ %d runs per side, since one run does not show the run-to-run noise", n1, n2, opts.MinRuns)
}

func values(cells []matrix.Cell, f func(matrix.Cell) float64) []float64 {
	out := make([]float64, len(cells))
	for i, c := range cells {
		out[i] = f(c)
	}
	return out
}

func relative(old, new float64) float64 {
	if old == 0 {
		return 0
	}
	return new/old - 1
}

// keyChanges lists the key fields that differ; same is false also when a side has
// no provenance (its key is unknown).
func keyChanges(a, b *result.Provenance) (changes []Change, same bool) {
	if a == nil || b == nil {
		return nil, false
	}
	for _, f := range result.KeyFields {
		if x, y := f.Get(a), f.Get(b); x != y {
			changes = append(changes, Change{Field: f.Name, From: x, To: y})
		}
	}
	return changes, len(changes) == 0
}

func optionChanges(a, b *result.Provenance) []Change {
	if a == nil || b == nil {
		return nil
	}
	var out []Change
	names := slices.Sorted(maps.Keys(a.Options))
	for n := range b.Options {
		if _, ok := a.Options[n]; !ok {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	for _, n := range names {
		x, okx := a.Options[n]
		y, oky := b.Options[n]
		if x == y && okx == oky {
			continue
		}
		if !okx {
			x = "(unset)"
		}
		if !oky {
			y = "(unset)"
		}
		out = append(out, Change{Field: n, From: x, To: y})
	}
	return out
}

// comparePlacement reports a move of the node share on the target's EP. Kernel-time
// shares move from run to run by themselves, so only nodes count: the share of nodes
// on the EP, or, for an EP that compiles partitions (WebNN: the nodes inside are not
// logged), the partitions and the nodes left to other EPs.
func comparePlacement(oc, nc matrix.Cell) *PlacementChange {
	if oc.Placement == nil || nc.Placement == nil || nc.Provenance == nil {
		return nil
	}
	op, np := *oc.Placement, *nc.Placement
	provider := nc.Provenance.Provider
	if np.EP != "" { // the profile's name for the target's EP (browser targets differ)
		provider = np.EP
	}
	oShare, oParts, oElse := nodeShare(op, provider)
	nShare, nParts, nElse := nodeShare(np, provider)
	if oShare == nShare && oParts == nParts && oElse == nElse {
		return nil
	}
	regressed := nShare < oShare
	if oParts > 0 || nParts > 0 {
		regressed = nElse > oElse
	}
	return &PlacementChange{Provider: provider, From: op.Summary(provider), To: np.Summary(provider), Regressed: regressed}
}

func nodeShare(p result.Placement, provider string) (pct float64, partitions, elsewhere int) {
	pct, _ = p.Share(provider)
	for name, s := range p.ByProvider {
		if name != provider {
			elsewhere += s.Nodes
		}
	}
	return pct, p.ByProvider[provider].Partitions, elsewhere
}
