package runtime

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hwtest/hwtest/browser"
	"github.com/hwtest/hwtest/result"
	"github.com/onsi/ginkgo/v2"
)

// Cell is one (model, target) pair of the matrix as a generated suite drives it:
// Open in BeforeAll, Measure and Check in Its, Close in AfterAll. Each step records a
// result.CellReport as a Ginkgo report entry, which is how `hwtest run` learns the result.
type Cell struct {
	Model  Model
	Target Target

	model ResolvedModel
	size  *result.ModelSize
	// placement is set when the target's EP could not take the whole model and the
	// cell ran with CPU fallback: where the nodes went.
	placement *result.Placement
	device    string // what a browser target really ran on
	session   Backend
	run       *Run
	load      time.Duration
	first     time.Duration
	mem       peakWindow // where the memory figures start
	opened    bool

	// What the cell announces to `hwtest run`'s progress display (progress.go).
	began     time.Time
	announced bool
	status    result.Status
	reason    string
	p50       float64
}

// NewCell prepares a cell; nothing is loaded until Open.
func NewCell(m Model, t Target) *Cell { return &Cell{Model: m, Target: t} }

func (c *Cell) tolerance() Tolerance {
	if c.Model.Tolerance != nil {
		return *c.Model.Tolerance
	}
	return c.Target.Tolerance
}

// Open probes the target, loads the model, computes the CPU reference and creates the
// target's session, timing creation and the first inference. An unavailable target
// skips the cell with the probe's reason; anything else that fails fails it.
func (c *Cell) Open() {
	ginkgo.GinkgoHelper()
	c.announceStart()
	// A missing or broken ONNX Runtime is this machine's setup failing, not the
	// target being absent: an error, never "unavailable".
	if _, err := Init(); err != nil && c.Target.Runner != "browser" {
		c.fail(result.CheckOpen, err)
	}
	if reason := Unavailable(c.Target); reason != "" {
		c.record(result.CheckOpen, result.StatusUnavailable, reason, nil)
		ginkgo.Skip("unavailable: " + reason)
	}
	rm, err := Resolve(c.Model)
	if err != nil {
		c.fail(result.CheckOpen, result.WithCause(result.CauseModelFile, err))
	}
	c.model = rm
	if c.size, err = SizeOf(rm.Path); err != nil {
		c.fail(result.CheckOpen, result.WithCause(result.CauseModelFile, err))
	}
	ref, err := CPUReference(c.Model, rm)
	if err != nil {
		c.fail(result.CheckOpen, err)
	}
	// The high-water mark is reset after the reference exists, so peak memory is this
	// target's session, not the reference's.
	c.mem = openPeakWindow()
	start := time.Now()
	s, err := c.openBackend(rm.Path, ref.Inputs)
	c.load = time.Since(start)
	if bs, ok := s.(*browserSession); ok {
		c.load = bs.createTime()
	}
	if err != nil {
		c.fail(result.CheckOpen, fmt.Errorf("creating a %s session: %w", c.Target.Provider, err))
	}
	c.session = s
	start = time.Now()
	got, err := s.Run(ref.Inputs)
	c.first = time.Since(start)
	if err != nil {
		c.fail(result.CheckOpen, fmt.Errorf("first inference on %s: %w", c.Target.ID, err))
	}
	c.run = &Run{Model: c.Model, Target: c.Target, Session: s, Reference: ref, Got: got, Tolerance: c.tolerance()}
	c.opened = true
	c.record(result.CheckOpen, c.passStatus(), c.passReason(), func(r *result.CellReport) { r.Outputs = OutputsOf(got) })
}

// OutputsOf describes the outputs a target returned: names, ONNX element type
// names and shapes, in the model's output order.
func OutputsOf(got []Tensor) []result.Output {
	out := make([]result.Output, len(got))
	for i, t := range got {
		dtype := elementTypes[t.Type].name
		if dtype == "" {
			dtype = t.Type.String() // fromValue and the browser refuse any other type; never silent
		}
		// A scalar's shape is [], not null, in the report.
		out[i] = result.Output{Name: t.Name, DType: dtype, Shape: append([]int64{}, t.Shape...)}
	}
	return out
}

// openBackend creates the target's session. Native accelerators are strict first:
// when the EP is here but cannot take every node, the model runs again with CPU
// fallback and the profile says how much of it the EP took. Browser targets read
// onnxruntime-web's own placement log.
func (c *Cell) openBackend(path string, inputs []Tensor) (Backend, error) {
	if c.Target.Runner == "browser" {
		bs, err := openBrowserSession(path, c.Target)
		if err != nil {
			return nil, err
		}
		c.placement = bs.placement()
		if c.placement != nil {
			c.placement.EP = c.Target.EP()
		}
		c.device = bs.device(c.Target)
		return bs, nil
	}
	s, err := OpenSession(path, c.Target, true)
	switch {
	case err == nil:
		return s, nil
	case !FallbackDisabled(err):
		return nil, err // not a nil *Session inside a non-nil Backend
	}
	pl, perr := ProfilePlacement(path, c.Target, inputs)
	if perr != nil {
		return nil, fmt.Errorf("%v; with CPU fallback allowed: %w", err, perr)
	}
	pl.EP = c.Target.EP()
	c.placement = &pl
	// Again, after the placement profile's session: its leftovers are not this one's.
	c.mem = openPeakWindow()
	return OpenSession(path, c.Target, false)
}

// Close releases the target's session and announces that the cell ended.
func (c *Cell) Close() {
	if c.session != nil {
		c.session.Close()
		c.session = nil
	}
	c.announceDone()
}

// Measure times warm inferences after a warm-up and reads the peak RSS.
func (c *Cell) Measure() {
	ginkgo.GinkgoHelper()
	c.mustBeOpen()
	b, err := DefaultBudget()
	if err != nil {
		c.fail("measure", err)
	}
	inputs := c.run.Reference.Inputs
	bound, err := c.session.Bind(inputs)
	if err != nil {
		c.fail(result.CheckMeasure, err)
	}
	defer bound.Close()
	warm, err := b.WarmUp(bound.Run)
	if err != nil {
		c.fail(result.CheckMeasure, err)
	}
	begin := time.Now()
	samples, err := b.Measure(bound.Run)
	timed := time.Since(begin)
	if err != nil {
		c.fail(result.CheckMeasure, err)
	}
	m := LatencyStats(samples)
	m.WarmupRuns, m.WarmupMS, m.WarmupSettled, m.WarmupDrift = warm.Runs, ms(warm.Time), warm.Settled, warm.Drift
	m.TimedMS = ms(timed)
	m.LoadMS = ms(c.load)
	m.FirstRunMS = ms(c.first)
	m.Batch = batchOf(inputs)
	if m.MeanMS > 0 {
		m.ThroughputPerS = float64(m.Batch) / (m.MeanMS / 1000)
	}
	if bs, ok := c.session.(*browserSession); ok { // the model lives in Chromium
		browserMemory(&m, bs.memory())
	} else {
		c.mem.native(&m)
	}
	c.record(result.CheckMeasure, c.passStatus(), c.passReason(), func(r *result.CellReport) {
		r.Metrics, r.SamplesMS = &m, SamplesMS(samples)
	})
	c.p50 = m.P50MS
}

// Check asserts one family invariant on the target's outputs.
func (c *Cell) Check(inv Invariant) {
	ginkgo.GinkgoHelper()
	c.mustBeOpen()
	err := inv.Check(c.run)
	var na *NotApplicable
	switch {
	case err == nil:
		c.record(inv.Name, c.passStatus(), c.passReason(), nil)
		return
	case errors.As(err, &na):
		c.record(inv.Name, c.passStatus(), c.passReason(), func(r *result.CellReport) { r.Skipped = na.Reason })
		ginkgo.Skip("not applicable: " + na.Reason)
		return
	case misfit(inv, c.run):
		c.finish(inv.Name, result.StatusError, result.WithCause(result.CauseCheckMisfit,
			fmt.Errorf("%w; the CPU reference's own outputs break it too, so the check does not fit the model as models.yaml describes it (the output it names, or the axis: distribution and ranking take {output: NAME, axis: N}), which no tolerance fixes", err)), nil)
		return
	}
	status := result.StatusError
	var worst *result.Deviation
	if v, ok := err.(*Violation); ok {
		status, worst = result.StatusMismatch, v.Worst
	}
	c.finish(inv.Name, status, err, worst)
}

func (c *Cell) mustBeOpen() {
	ginkgo.GinkgoHelper()
	if !c.opened {
		// Ordered containers skip the rest after a failed BeforeAll, so this is only
		// reached when a spec runs on its own with --focus.
		ginkgo.Fail("the cell was not opened: its BeforeAll did not run or failed")
	}
}

// passStatus: a cell whose checks hold is a pass, partial when some nodes ran on
// the CPU, or cpu-only when the target's EP took none of them.
func (c *Cell) passStatus() result.Status {
	if c.placement == nil {
		return result.StatusPass
	}
	return c.placement.Status(c.Target.EP())
}

// passReason says how much ran on the EP for a partial or cpu-only cell, and flags
// a pass that hardware.yaml declared incompatible.
func (c *Cell) passReason() string {
	var why []string
	if c.passStatus().OnCPU() {
		why = append(why, c.placement.Summary(c.Target.EP()))
	}
	if c.Target.ExpectFail(c.Model.Family) != "" {
		why = append(why, "unexpected pass: hardware.yaml declares this family incompatible with "+c.Target.ID+": "+c.Target.ExpectFail(c.Model.Family))
	}
	return strings.Join(why, "; ")
}

func (c *Cell) fail(check string, err error) {
	ginkgo.GinkgoHelper()
	c.finish(check, result.StatusError, err, nil)
}

// finish records a failed step and ends the spec: as expected-fail (skipped) when
// hardware.yaml declared it, else as a failure.
func (c *Cell) finish(check string, status result.Status, err error, worst *result.Deviation) {
	ginkgo.GinkgoHelper()
	if c.Target.ExpectFail(c.Model.Family) != "" {
		c.record(check, result.StatusExpectedFail, fmt.Sprintf("%s (declared: %s)", err, c.Target.ExpectFail(c.Model.Family)), func(r *result.CellReport) { r.Cause = causeOf(err) })
		ginkgo.Skip(fmt.Sprintf("expected-fail: %v", err))
	}
	c.record(check, status, err.Error(), func(r *result.CellReport) { r.Worst, r.Cause = worst, causeOf(err) })
	ginkgo.Fail(fmt.Sprintf("%s: %v", status, err))
}

// causeOf classifies a failure from what runtime knows of it: the cause its
// source gave it, else a broken invariant (mismatch) or a run past its deadline.
// ONNX Runtime's own errors carry none; diagnose reads their text.
func causeOf(err error) result.Cause {
	switch {
	case result.CauseOf(err) != "":
		return result.CauseOf(err)
	case IsViolation(err):
		return result.CauseMismatch
	case errors.Is(err, ErrRunTimeout):
		return result.CauseTimeout
	case errors.Is(err, browser.ErrKernelFailed):
		return result.CauseKernelFailed
	case errors.Is(err, browser.ErrCrashed):
		return result.CauseBrowser
	}
	return ""
}

func (c *Cell) record(check string, status result.Status, reason string, extra func(*result.CellReport)) {
	r := result.CellReport{
		Model: c.Model.ID, Family: c.Model.Family, Target: c.Target.ID,
		Check: check, Status: status, Reason: reason, Fixture: c.model.Fixture,
		Size: c.size, Placement: c.placement, FallbackChain: c.Target.Fallback,
		Provenance: c.provenance(),
	}
	switch status {
	case result.StatusPartial:
		r.Cause = result.CausePartial
	case result.StatusCPUOnly:
		r.Cause = result.CauseCPUOnly
	}
	if extra != nil {
		extra(&r)
	}
	c.noteStatus(status, reason)
	ginkgo.AddReportEntry(result.ReportEntryName, r, ginkgo.ReportEntryVisibilityNever)
	fmt.Fprintln(ginkgo.GinkgoWriter, stepLine(r, c.Target.Provider))
}

func (c *Cell) provenance() *result.Provenance {
	lib, _ := Init()
	p := &result.Provenance{
		ORTVersion: lib.Version, ORTLibrary: lib.Path, ORTLibSHA256: lib.SHA256,
		Provider: c.Target.Provider, Options: c.sessionOptions(),
		HostCPU: HostCPU(), ModelSHA256: c.model.SHA256, CPUGovernor: CPUGovernor(),
		Device: c.deviceName(), Driver: devices()[c.Target.ID][1],
		CatalogCommit: os.Getenv("HWTEST_CATALOG_COMMIT"), CodeCommit: os.Getenv("HWTEST_CODE_COMMIT"),
		Catalog: os.Getenv("HWTEST_CATALOG"),
		Time:    time.Now().UTC(),
	}
	p.IntraOpThreads, p.InterOpThreads = c.threads()
	return p
}

// threads are the measured session's thread counts: HWTEST_THREADS or ONNX
// Runtime's default of one per physical core; in a browser, the page's wasm threads.
func (c *Cell) threads() (intraOp, interOp int) {
	if c.Target.Runner == "browser" {
		if bs, ok := c.session.(*browserSession); ok {
			return bs.s.NumThreads, 0
		}
		return 0, 0 // not open: unknown
	}
	if n, _ := Threads(); n > 0 {
		return n, 1
	}
	return PhysicalCores(), 1
}

// sessionOptions are the target's options as its session got them: hardware.yaml's,
// and HWTEST_THREADS's intra-op thread count when set (browser targets do not
// take it: onnxruntime-web's threads are the page's).
func (c *Cell) sessionOptions() map[string]string {
	threads, _ := Threads() // `hwtest run` refused a bad value; the session would have too
	if threads == 0 || c.Target.Runner == "browser" {
		return c.Target.Options
	}
	opts := maps.Clone(c.Target.Options)
	if opts == nil {
		opts = map[string]string{}
	}
	opts["intra_op_num_threads"] = strconv.Itoa(threads)
	return opts
}

func (c *Cell) deviceName() string {
	if c.device != "" {
		return c.device
	}
	return devices()[c.Target.ID][0]
}

// DevicesEnv carries `hwtest run`'s hardware detection to its suite processes: a
// JSON map of target id to [device, driver], so every result names its hardware
// without each process probing NVML again.
const DevicesEnv = "HWTEST_DEVICES"

var devices = sync.OnceValue(func() map[string][2]string {
	m := map[string][2]string{}
	_ = json.Unmarshal([]byte(os.Getenv(DevicesEnv)), &m)
	return m
})

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// batchOf is the leading dim of the first input: what throughput counts per run.
func batchOf(inputs []Tensor) int64 {
	if len(inputs) == 0 || len(inputs[0].Shape) == 0 {
		return 1
	}
	return inputs[0].Shape[0]
}
