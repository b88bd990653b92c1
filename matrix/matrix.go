// Package matrix turns the Ginkgo reports of generated hwtest suites into the
// model × target matrix: one Cell per (model, target) that ran, with the worst status
// of its steps, its measurements and where the result came from. It renders the
// matrix as Markdown for people and as JSON, the stable interchange format.
package matrix

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/hwtest/hwtest/result"
	"github.com/onsi/ginkgo/v2/types"
)

// Status is the state of one cell; see result.Status and DESIGN.md.
type Status = result.Status

// Names of the checks the matrix adds itself, besides the ones the specs record
// ("open", "measure" and the family invariants).
const (
	CheckClose   = "close"   // AfterAll failed
	CheckProcess = "process" // the suite process crashed or hung
	CheckSuite   = "suite"   // the suite stopped before the cell ran
	CheckRun     = "run"     // the cell's specs did not all run
)

// CheckResult is one step of a cell: "open", "measure", an invariant, or a failure
// the matrix found in Ginkgo's report rather than in a recorded entry.
type CheckResult struct {
	Name   string       `json:"name"`
	Status Status       `json:"status"`
	Reason string       `json:"reason,omitempty"`
	Cause  result.Cause `json:"cause,omitempty"` // the class of a failure, from the code that saw it
	// Skipped says why the check did not apply to the model's outputs.
	Skipped string `json:"skipped,omitempty"`
}

// Cell is the merged result of one (model, target).
type Cell struct {
	Model    string       `json:"model"`
	Family   string       `json:"family,omitempty"`
	Target   string       `json:"target"`
	Status   Status       `json:"status"`
	Reason   string       `json:"reason,omitempty"` // the reason of the check that set Status
	Cause    result.Cause `json:"cause,omitempty"`  // the cause of that check, when its source knew it
	Fixture  string       `json:"fixture,omitempty"`
	Fallback string       `json:"fallback,omitempty"`
	// FallsBackTo is, for an unavailable cell, the first target of its fallback
	// chain that ran here: "tensorrt → cuda → cpu" reads "tensorrt → cpu" when cuda
	// is absent too. Its results are that target's cells, never this one's pass.
	FallsBackTo string             `json:"falls_back_to,omitempty"`
	chain       []string           // from the cell's reports
	Checks      []CheckResult      `json:"checks"`
	Metrics     *result.Metrics    `json:"metrics,omitempty"`
	Worst       *result.Deviation  `json:"worst,omitempty"`
	Size        *result.ModelSize  `json:"size,omitempty"`
	Placement   *result.Placement  `json:"placement,omitempty"`
	Provenance  *result.Provenance `json:"provenance,omitempty"`
	Outputs     []result.Output    `json:"outputs,omitempty"`
	// Explain is, for a mismatch, where `hwtest run` traced it (`hwtest explain`'s
	// line: the first node whose output diverges while its inputs agree, or why none
	// could be named).
	Explain string `json:"explain,omitempty"`
	// WallMS is how long the cell took, as Ginkgo timed its specs: from the start of
	// the first (whose BeforeAll loads the model and opens the session) to the end of
	// the last (whose AfterAll closes it). `hwtest run` estimates its remaining time
	// from these. 0 when unknown (no spec of the cell ended).
	WallMS float64 `json:"wall_ms,omitempty"`
	// SamplesMS are the raw timed latencies, kept for the history database and
	// left out of matrix.json (Metrics.BlockP50MS stands for them there).
	SamplesMS []float64 `json:"-"`
	// RunID and RunTime say which run a cell came from when a matrix gathers cells
	// of several runs (the history's current matrix); empty in a single run's.
	RunID   string    `json:"run_id,omitempty"`
	RunTime time.Time `json:"run_time,omitzero"`
}

// Environment sums up the provenance of every cell: each field lists the distinct
// values seen, sorted (more than one means the reports came from several machines
// or libraries).
type Environment struct {
	HostCPU          []string `json:"host_cpu,omitempty"`
	ORTVersion       []string `json:"ort_version,omitempty"`
	ORTLibrary       []string `json:"ort_library,omitempty"`
	ORTLibrarySHA256 []string `json:"ort_library_sha256,omitempty"`
	CatalogCommit    []string `json:"catalog_commit,omitempty"`
	Catalog          []string `json:"catalog,omitempty"` // the catalog files that ran, with their sha256
	CodeCommit       []string `json:"code_commit,omitempty"`
	// Devices are the accelerators the cells ran on: "target: device (driver …)".
	Devices []string `json:"devices,omitempty"`
}

// Matrix is every cell that ran, in catalog order.
type Matrix struct {
	// RunID names the `hwtest run` that made the matrix, as its folder does.
	RunID string `json:"run_id,omitempty"`
	// Generated is the end of the latest suite run merged; zero when no report had
	// one (the caller may set it).
	Generated   time.Time   `json:"generated"`
	Environment Environment `json:"environment"`
	// Host is the machine's name and Detection what its probes said about each
	// target when the run began (set by the runner; empty in older matrices).
	Host       string            `json:"host,omitempty"`
	DetectedAt time.Time         `json:"detected_at,omitzero"`
	Detection  []result.Detected `json:"detection,omitempty"`
	Models     []string          `json:"models"`  // catalog order, then any others seen, sorted
	Targets    []string          `json:"targets"` // catalog order, then any others seen, sorted
	Summary    map[Status]int    `json:"summary"` // cells per status
	Cells      []Cell            `json:"cells"`   // by model, then target, in the orders above
	// Problems are failures no cell could be charged with: a failed BeforeSuite, a
	// suite that stopped early, a failed spec outside any cell.
	Problems []string `json:"problems,omitempty"`
}

// ProcessFailure is a suite process that crashed or hung, as the orchestrator saw it.
type ProcessFailure struct {
	Model  string `json:"model"`
	Err    string `json:"err"`
	Stderr string `json:"stderr,omitempty"` // the tail of its stderr
	// Cause: timeout, crash (when unset) or interrupted. An interrupted process is
	// not the suite's fault: the user stopped the run (SIGINT/SIGTERM) while it ran,
	// so its cells say "interrupted", not "suite process failed".
	Cause result.Cause `json:"cause,omitempty"`
	// Targets the process was to run (its label filter's); empty means every target
	// of the matrix.
	Targets []string `json:"targets,omitempty"`
}

// Statuses lists every status from the worst to the best: the order in which a
// cell's checks are merged and the summary is printed.
var Statuses = []Status{
	result.StatusError,
	result.StatusMismatch,
	result.StatusExpectedFail,
	result.StatusCPUOnly,
	result.StatusPartial,
	result.StatusUnavailable,
	result.StatusPass,
}

// severity ranks a status: lower is worse. Unknown statuses rank as errors.
func severity(s Status) int {
	if i := slices.Index(Statuses, s); i >= 0 {
		return i
	}
	return 0
}

type key struct{ model, target string }

// acc gathers what the reports say about one cell.
type acc struct {
	cell     Cell
	checks   []CheckResult
	specs    []string // the cell's It specs, by leaf text
	recorded map[string]bool
	selected bool   // some spec of the cell was selected to run
	stopped  string // why its suite stopped early, when it did
	// The start of the cell's first spec that ended and the end of its last.
	start, end time.Time
}

// FromReports merges Ginkgo reports and process failures into a matrix. models and
// targets give the catalog order; cells of others are kept and sorted after them.
//
// A cell's status is the worst of its checks (error, mismatch, expected-fail,
// cpu-only, partial, unavailable, pass). A spec that failed in Ginkgo without recording why
// (a panic, an assertion) is an error with Ginkgo's message; a cell is a pass only
// when it was opened, measured, and every one of its specs recorded a pass. A cell
// with nothing recorded and nothing failed was not selected to run and is left out.
// A process failure makes every cell of its model (on its Targets, when set) an
// error, except cells whose result was already complete when the process died.
func FromReports(reports []types.Report, failures []ProcessFailure, models, targets []string) Matrix {
	m := Matrix{Summary: map[Status]int{}, Cells: []Cell{}}
	cells := map[key]*acc{}
	get := func(k key) *acc {
		a := cells[k]
		if a == nil {
			a = &acc{cell: Cell{Model: k.model, Target: k.target}, recorded: map[string]bool{}}
			cells[k] = a
		}
		return a
	}

	for _, r := range reports {
		if r.EndTime.After(m.Generated) {
			m.Generated = r.EndTime.UTC()
		}
		selected := selector(r)
		stopped := suiteStopped(r)
		if stopped != "" {
			m.Problems = append(m.Problems, fmt.Sprintf("suite %s: %s", suiteName(r), stopped))
		} else if !r.SuiteSucceeded {
			// Specs failed; a selected cell with no result was then skipped (fail-fast).
			stopped = "the suite failed and stopped before this cell ran"
		}
		for _, s := range r.SpecReports {
			if !s.LeafNodeType.Is(types.NodeTypeIt) {
				continue // suite-level nodes: their failures are in suiteStopped
			}
			entries := cellEntries(s)
			k, ok := cellOf(s, entries)
			if !ok {
				if s.State.Is(types.SpecStateFailureStates) {
					m.Problems = append(m.Problems, fmt.Sprintf("suite %s: spec %q %s outside any cell: %s", suiteName(r), s.FullText(), s.State, failureText(s)))
				}
				continue
			}
			a := get(k)
			a.specs = append(a.specs, s.LeafNodeText)
			a.timeSpec(s)
			if s.State != types.SpecStatePending && selected(s) {
				a.selected = true
				if a.stopped == "" {
					a.stopped = stopped
				}
			}
			explained := false
			for _, e := range entries {
				a.add(e)
				a.checks = append(a.checks, CheckResult{Name: e.Check, Status: e.Status, Reason: e.Reason, Cause: e.Cause, Skipped: e.Skipped})
				switch e.Status {
				case result.StatusError, result.StatusMismatch, result.StatusExpectedFail:
					explained = true // the entry says why the spec failed
				}
			}
			if len(entries) > 0 || s.State.Is(types.SpecStateFailureStates) {
				a.recorded[s.LeafNodeText] = true
			}
			if s.State.Is(types.SpecStateFailureStates) && !explained {
				a.checks = append(a.checks, CheckResult{Name: failedCheck(s), Status: result.StatusError, Reason: failureText(s)})
			}
		}
	}

	crashed := map[string][]ProcessFailure{}
	for _, f := range failures {
		crashed[f.Model] = append(crashed[f.Model], f)
	}

	m.Models = order(models, cells, func(k key) string { return k.model }, crashed)
	m.Targets = order(targets, cells, func(k key) string { return k.target }, nil)

	for _, model := range m.Models {
		for _, target := range m.Targets {
			k := key{model, target}
			a := cells[k]
			var fs []ProcessFailure
			for _, f := range crashed[model] {
				if len(f.Targets) == 0 || slices.Contains(f.Targets, target) {
					fs = append(fs, f)
				}
			}
			if a == nil && len(fs) == 0 {
				continue
			}
			if a == nil {
				a = get(k)
			}
			c, ok := a.finish(fs)
			if !ok {
				continue
			}
			m.Cells = append(m.Cells, c)
			m.Summary[c.Status]++
		}
	}
	// Cells known only from a process failure take their family from their model's
	// other cells.
	family := map[string]string{}
	for _, c := range m.Cells {
		if c.Family != "" && family[c.Model] == "" {
			family[c.Model] = c.Family
		}
	}
	for i := range m.Cells {
		if m.Cells[i].Family == "" {
			m.Cells[i].Family = family[m.Cells[i].Model]
		}
	}
	resolveFallbacks(m.Cells)
	m.Environment = environment(m.Cells)
	return m
}

// resolveFallbacks names, for each unavailable cell, the first target of its chain
// that ran the same model (any status but unavailable).
func resolveFallbacks(cells []Cell) {
	ran := map[key]bool{}
	for _, c := range cells {
		if c.Status != result.StatusUnavailable {
			ran[key{c.Model, c.Target}] = true
		}
	}
	for i, c := range cells {
		if c.Status != result.StatusUnavailable {
			continue
		}
		for _, t := range c.chain {
			if ran[key{c.Model, t}] {
				cells[i].FallsBackTo = c.Target + " → " + t
				break
			}
		}
	}
}

// add takes a recorded entry's data into the cell.
func (a *acc) add(e result.CellReport) {
	c := &a.cell
	if c.Family == "" {
		c.Family = e.Family
	}
	if c.Fixture == "" {
		c.Fixture = e.Fixture
	}
	if c.Fallback == "" {
		c.Fallback = e.Fallback
	}
	if c.chain == nil {
		c.chain = e.FallbackChain
	}
	if e.Placement != nil && c.Placement == nil {
		c.Placement = e.Placement
	}
	if e.Size != nil && c.Size == nil {
		c.Size = e.Size
	}
	if e.Metrics != nil && c.Metrics == nil {
		c.Metrics = e.Metrics
		c.SamplesMS = e.SamplesMS
	}
	if e.Outputs != nil && c.Outputs == nil {
		c.Outputs = e.Outputs
	}
	if e.Worst != nil && (c.Worst == nil || excess(e.Worst) > excess(c.Worst)) {
		c.Worst = e.Worst
	}
	// The provenance of the first step (open) describes the cell.
	if e.Provenance != nil && c.Provenance == nil {
		c.Provenance = e.Provenance
	}
}

// timeSpec widens the cell's span to a spec that ran: specs filtered out or
// skipped after a failure have a start time but no end.
func (a *acc) timeSpec(s types.SpecReport) {
	if s.EndTime.IsZero() || s.StartTime.IsZero() {
		return
	}
	if a.start.IsZero() || s.StartTime.Before(a.start) {
		a.start = s.StartTime
	}
	if s.EndTime.After(a.end) {
		a.end = s.EndTime
	}
}

// excess ranks deviations: how many times over its allowance the error is.
func excess(d *result.Deviation) float64 {
	if d.Allowed > 0 {
		return d.AbsErr / d.Allowed
	}
	return d.AbsErr
}

// finish decides the cell's status; ok is false for a cell that did not run.
func (a *acc) finish(crashes []ProcessFailure) (Cell, bool) {
	c := a.cell
	checks := slices.Clone(a.checks)
	slices.SortStableFunc(checks, func(x, y CheckResult) int { return rank(x.Name) - rank(y.Name) })

	if len(checks) == 0 && a.selected && a.stopped != "" {
		checks = append(checks, CheckResult{Name: CheckSuite, Status: result.StatusError, Reason: "did not run: " + a.stopped})
	}
	complete := a.complete(checks)
	if len(crashes) > 0 && !complete {
		for _, f := range crashes {
			cause := f.Cause
			if cause == "" {
				cause = result.CauseCrash
			}
			checks = append(checks, CheckResult{Name: CheckProcess, Status: result.StatusError, Reason: f.reason(), Cause: cause})
		}
	}
	if len(checks) == 0 {
		return c, false
	}

	worst := checks[0]
	for _, ch := range checks[1:] {
		if severity(ch.Status) < severity(worst.Status) {
			worst = ch
		}
	}
	c.Status, c.Reason, c.Cause = worst.Status, worst.Reason, worst.Cause
	if c.Status.Agreed() {
		// A pass with a reason is flagged (an unexpected pass of an expect-fail
		// target): keep the first such reason.
		for _, ch := range checks {
			if ch.Status == c.Status && ch.Reason != "" {
				c.Reason, c.Cause = ch.Reason, ch.Cause
				break
			}
		}
		switch {
		case !complete:
			ch := CheckResult{Name: CheckRun, Status: result.StatusError, Reason: a.incompleteReason(checks)}
			checks = append(checks, ch)
			c.Status, c.Reason, c.Cause = ch.Status, ch.Reason, ch.Cause
		case fellBack(c):
			c.Status, c.Cause = result.StatusUnavailable, ""
			c.Reason = fmt.Sprintf("%s is absent: the cell ran on a fallback (%s), which is not a result for %s", c.Target, c.Fallback, c.Target)
		}
	}
	c.Checks = checks
	if !a.start.IsZero() {
		c.WallMS = float64(a.end.Sub(a.start)) / float64(time.Millisecond)
	}
	return c, true
}

// complete: the cell was opened and measured and every one of its specs recorded a
// result, or it ended early for a recorded reason (unavailable, expected-fail,
// error, mismatch), which is complete too.
func (a *acc) complete(checks []CheckResult) bool {
	has := map[string]bool{}
	for _, ch := range checks {
		if !ch.Status.Agreed() {
			return true
		}
		has[ch.Name] = true
	}
	if !has[result.CheckOpen] || !has[result.CheckMeasure] {
		return false
	}
	for _, s := range a.specs {
		if !a.recorded[s] {
			return false
		}
	}
	return true
}

func (a *acc) incompleteReason(checks []CheckResult) string {
	var missing []string
	has := map[string]bool{}
	for _, ch := range checks {
		has[ch.Name] = true
	}
	for _, step := range []string{result.CheckOpen, result.CheckMeasure} {
		if !has[step] {
			missing = append(missing, step)
		}
	}
	for _, s := range a.specs {
		if !a.recorded[s] && !slices.Contains(missing, s) {
			missing = append(missing, s)
		}
	}
	return "incomplete: no result for " + strings.Join(missing, ", ") + " (not run, filtered out, or skipped)"
}

// fellBack: the result came from another target than the cell's, so it never counts
// as a pass of the cell's target. Fallback reads "from → to".
func fellBack(c Cell) bool {
	if c.Fallback == "" {
		return false
	}
	_, to, ok := strings.Cut(c.Fallback, "→")
	return !ok || strings.TrimSpace(to) != c.Target
}

// rank orders a cell's checks: open, measure, the invariants as they ran, then what
// the matrix added.
func rank(name string) int {
	switch name {
	case result.CheckOpen:
		return 0
	case result.CheckMeasure:
		return 1
	case CheckClose:
		return 3
	case CheckSuite, CheckProcess, CheckRun:
		return 4
	}
	return 2
}

func (f ProcessFailure) reason() string {
	if f.Cause == result.CauseInterrupted {
		return "interrupted: " + f.Err
	}
	msg := "suite process failed"
	if err := strings.TrimSpace(f.Err); err != "" {
		msg += ": " + err
	}
	if tail := tail(strings.TrimSpace(f.Stderr), 2000); tail != "" {
		msg += "\nstderr:\n" + tail
	}
	return msg
}

// tail keeps the last n bytes of s, cut at a line start when one is near.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[len(s)-n:]
	if i := strings.IndexByte(s, '\n'); i >= 0 && i < 200 {
		s = s[i+1:]
	}
	return "…" + s
}

// cellEntries decodes a spec's hwtest report entries. Read from a JSON report the
// value is in AsJSON; in process it is the raw CellReport.
func cellEntries(s types.SpecReport) []result.CellReport {
	var out []result.CellReport
	for _, e := range s.ReportEntries {
		if e.Name != result.ReportEntryName {
			continue
		}
		var r result.CellReport
		switch v := e.Value.GetRawValue().(type) {
		case result.CellReport:
			r = v
		case *result.CellReport:
			r = *v
		default:
			data := []byte(e.Value.AsJSON)
			if len(data) == 0 {
				var err error
				if data, err = json.Marshal(v); err != nil {
					continue
				}
			}
			if err := json.Unmarshal(data, &r); err != nil {
				r = result.CellReport{Check: "report entry", Status: result.StatusError,
					Reason: fmt.Sprintf("unreadable hwtest report entry: %v", err)}
			}
		}
		out = append(out, r)
	}
	return out
}

// cellOf finds the (model, target) a spec belongs to: from its labels (model:…,
// hw:…), which is where the generated suite put it; else from its entries; else from
// its container texts.
func cellOf(s types.SpecReport, entries []result.CellReport) (key, bool) {
	var k key
	k.model, _ = result.LabelValue(s.Labels(), result.ModelPrefix)
	k.target, _ = result.LabelValue(s.Labels(), result.TargetPrefix)
	for _, e := range entries {
		if k.model == "" {
			k.model = e.Model
		}
		if k.target == "" {
			k.target = e.Target
		}
	}
	if t := s.ContainerHierarchyTexts; len(t) >= 2 {
		if k.model == "" {
			k.model = t[len(t)-2]
		}
		if k.target == "" {
			k.target = t[len(t)-1]
		}
	}
	return k, k.model != "" && k.target != ""
}

// failedCheck names the step a failure without an entry happened in.
func failedCheck(s types.SpecReport) string {
	switch {
	case s.Failure.FailureNodeType.Is(types.NodeTypeBeforeAll):
		return result.CheckOpen
	case s.Failure.FailureNodeType.Is(types.NodeTypeAfterAll | types.NodeTypeCleanupAfterAll):
		return CheckClose
	}
	return s.LeafNodeText
}

// failureText is Ginkgo's account of a failed spec.
func failureText(s types.SpecReport) string {
	f := s.Failure
	msg := strings.TrimSpace(f.Message)
	if f.ForwardedPanic != "" {
		msg = strings.TrimSpace(msg + ": " + f.ForwardedPanic)
	}
	if msg == "" {
		msg = "no failure message"
	}
	out := fmt.Sprintf("%s: %s", s.State, msg)
	if f.Location.FileName != "" {
		out += fmt.Sprintf(" (at %s)", f.Location)
	}
	if af := f.AdditionalFailure; af != nil && af.Failure.Message != "" {
		out += fmt.Sprintf("; then %s: %s", af.State, af.Failure.Message)
	}
	return out
}

// suiteStopped says why a suite did not run all it selected: a failed suite-level
// node, an interrupted spec or a special reason (interrupted, timed out, aborted).
// Empty when there is none of these.
func suiteStopped(r types.Report) string {
	var why []string
	why = append(why, r.SpecialSuiteFailureReasons...)
	for _, s := range r.SpecReports {
		if !s.LeafNodeType.Is(types.NodeTypeIt) && s.State.Is(types.SpecStateFailureStates) {
			why = append(why, fmt.Sprintf("%s %s", s.LeafNodeType, failureText(s)))
		}
		if s.State.Is(types.SpecStateInterrupted | types.SpecStateAborted | types.SpecStateTimedout) {
			why = append(why, fmt.Sprintf("spec %q %s", s.FullText(), s.State))
		}
	}
	return strings.Join(why, "; ")
}

func suiteName(r types.Report) string {
	if r.SuiteDescription != "" {
		return r.SuiteDescription
	}
	return r.SuitePath
}

// selector reports whether the suite's filters selected a spec to run, as Ginkgo
// decides it (labels, focus and skip strings).
func selector(r types.Report) func(types.SpecReport) bool {
	cfg := r.SuiteConfig
	labels := func([]string) bool { return true }
	if cfg.LabelFilter != "" {
		if f, err := types.ParseLabelFilter(cfg.LabelFilter); err == nil {
			labels = f
		}
	}
	compile := func(ss []string) *regexp.Regexp {
		if len(ss) == 0 {
			return nil
		}
		re, err := regexp.Compile(strings.Join(ss, "|"))
		if err != nil {
			return nil
		}
		return re
	}
	focus, skip := compile(cfg.FocusStrings), compile(cfg.SkipStrings)
	return func(s types.SpecReport) bool {
		if !labels(append(slices.Clone(r.SuiteLabels), s.Labels()...)) {
			return false
		}
		text := r.SuiteDescription + " " + s.FullText()
		if focus != nil && !focus.MatchString(text) {
			return false
		}
		return skip == nil || !skip.MatchString(text)
	}
}

// order is the catalog's order followed by any other names seen, sorted.
func order(catalog []string, cells map[key]*acc, name func(key) string, more map[string][]ProcessFailure) []string {
	out := slices.Clone(catalog)
	seen := map[string]bool{}
	for _, n := range out {
		seen[n] = true
	}
	var extra []string
	for k := range cells {
		if n := name(k); !seen[n] {
			seen[n] = true
			extra = append(extra, n)
		}
	}
	for n := range more {
		if !seen[n] {
			seen[n] = true
			extra = append(extra, n)
		}
	}
	slices.Sort(extra)
	if out == nil {
		out = []string{}
	}
	return append(out, extra...)
}

func environment(cells []Cell) Environment {
	var e Environment
	add := func(list *[]string, v string) {
		if v != "" && !slices.Contains(*list, v) {
			*list = append(*list, v)
		}
	}
	for _, c := range cells {
		p := c.Provenance
		if p == nil {
			continue
		}
		add(&e.HostCPU, p.HostCPU)
		add(&e.ORTVersion, p.ORTVersion)
		add(&e.ORTLibrary, p.ORTLibrary)
		add(&e.ORTLibrarySHA256, p.ORTLibSHA256)
		add(&e.CatalogCommit, p.CatalogCommit)
		add(&e.Catalog, p.Catalog)
		add(&e.CodeCommit, p.CodeCommit)
		// A device is named only where it ran: an unavailable target's provenance
		// still carries what detection said about it.
		if p.Device != "" && c.Status != result.StatusUnavailable {
			d := c.Target + ": " + p.Device
			if p.Driver != "" {
				d += " (driver " + p.Driver + ")"
			}
			add(&e.Devices, d)
		}
	}
	for _, l := range []*[]string{&e.HostCPU, &e.ORTVersion, &e.ORTLibrary, &e.ORTLibrarySHA256, &e.CatalogCommit, &e.Catalog, &e.CodeCommit, &e.Devices} {
		slices.Sort(*l)
	}
	return e
}

// Assemble makes a matrix of cells that are already merged (read back from the
// history, perhaps from several runs): models and targets in catalog order, then any
// others seen, sorted; cells in that order; the summary and environment recomputed.
func Assemble(cells []Cell, models, targets []string) Matrix {
	m := Matrix{Summary: map[Status]int{}, Cells: []Cell{}}
	seen := map[key]*acc{}
	for _, c := range cells {
		seen[key{c.Model, c.Target}] = nil
	}
	m.Models = order(models, seen, func(k key) string { return k.model }, nil)
	m.Targets = order(targets, seen, func(k key) string { return k.target }, nil)
	pos := func(list []string, s string) int { return slices.Index(list, s) }
	m.Cells = slices.Clone(cells)
	slices.SortStableFunc(m.Cells, func(a, b Cell) int {
		if d := pos(m.Models, a.Model) - pos(m.Models, b.Model); d != 0 {
			return d
		}
		return pos(m.Targets, a.Target) - pos(m.Targets, b.Target)
	})
	for _, c := range m.Cells {
		m.Summary[c.Status]++
		if c.RunTime.After(m.Generated) {
			m.Generated = c.RunTime
		}
	}
	m.Environment = environment(m.Cells)
	return m
}
