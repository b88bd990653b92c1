// Package runner is `hwtest run`: it builds the generated suite once and runs every
// model's specs in a process of its own, with a timeout, so a native crash or a hang
// in one model is recorded as that model's error and the others still finish.
package runner

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/hwtest/hwtest/catalog"
	"github.com/hwtest/hwtest/generator"
	"github.com/hwtest/hwtest/hardware"
	"github.com/hwtest/hwtest/layout"
	"github.com/hwtest/hwtest/matrix"
	"github.com/hwtest/hwtest/result"
	"github.com/hwtest/hwtest/runtime"
)

// Options configure a run.
type Options struct {
	Root        string
	Catalogs    *catalog.Catalogs
	SuiteDir    string        // the suite's package, slash-separated under Root; generator.SuiteDir when empty
	RunID       string        // from NewRunDir; stored in the matrix
	OutDir      string        // the run's own folder, from NewRunDir: reports/<run id>
	Timeout     time.Duration // per model process
	LabelFilter string        // extra Ginkgo label filter ANDed with the model's, e.g. "hw:cpu"
	ModelIDs    []string      // only these models; all when empty
	TargetIDs   []string      // the targets LabelFilter selects; all when empty
	Env         []string      // extra environment for suite processes
	Log         io.Writer
	// Progress, when set, hears of every cell as it starts and ends (the suites
	// announce them through result.ProgressEnv), and once more of each cell whose
	// status in its model's report differs from what its suite announced, or that
	// its suite never announced (crash, timeout, interrupt): Revised.
	Progress func(result.CellEvent)
	// Explain, when set, traces a mismatch cell to its first divergent node, after
	// its model's suite process ended, and returns the one line the cell carries
	// (matrix.Cell.Explain). `hwtest run` runs `hwtest explain` in a child process,
	// so a crash there costs the line, not the run.
	Explain func(ctx context.Context, model, target string) string
}

// againstReference says whether some check of a mismatch cell disagrees with the
// CPU reference, which explain traces node by node. A cell that only misses its
// declared expected outputs agrees with the reference: there is nothing to trace.
func againstReference(c matrix.Cell) bool {
	for _, ch := range c.Checks {
		if ch.Status == result.StatusMismatch && ch.Name != runtime.ExpectedOutputsCheck {
			return true
		}
	}
	return len(c.Checks) == 0
}

// suiteDir is the suite's package: another catalog's suites are in a folder of
// their own (generator.Out).
func (o Options) suiteDir() string {
	if o.SuiteDir == "" {
		return generator.SuiteDir
	}
	return o.SuiteDir
}

// Result is what a run produced.
type Result struct {
	Matrix    matrix.Matrix
	Failures  []matrix.ProcessFailure
	ReportDir string
	// Interrupted: a signal (SIGINT/SIGTERM) stopped a model or kept models from
	// starting. The matrix holds the cells that finished; the running model's
	// others say so. A signal after the last model finished interrupts nothing.
	Interrupted bool
	// Detection is the run's detect.json: what the probes found when it began.
	Detection json.RawMessage
	// Time is where the run's wall time went outside the cells (see Breakdown).
	Time Timings
}

// NewRunDir creates the folder of a new run under reports and returns its id: the
// UTC time to the second and a random suffix. os.Mkdir fails on an existing folder,
// so two runs started in the same second can never share one.
func NewRunDir(reports string) (id, dir string, err error) {
	if err := os.MkdirAll(reports, 0o755); err != nil {
		return "", "", err
	}
	for range 10 {
		b := make([]byte, 3)
		if _, err := rand.Read(b); err != nil {
			return "", "", err
		}
		id = time.Now().UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b)
		dir = filepath.Join(reports, id)
		err = os.Mkdir(dir, 0o755)
		if err == nil {
			return id, dir, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return "", "", err
		}
	}
	return "", "", fmt.Errorf("could not create a new run folder in %s: %w", reports, err)
}

// LinkLatest points reports/latest at the run id. The link is made under a name of
// its own and renamed over latest, so a reader (or another run) never sees no
// latest, and two runs finishing together leave one of them, whole.
func LinkLatest(reports, id string) error {
	tmp := filepath.Join(reports, ".latest-"+id)
	os.Remove(tmp)
	if err := os.Symlink(id, tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(reports, "latest")); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// Run builds, runs and collects. It returns an error only when it could not run at
// all; failing cells are results, not errors. When ctx is cancelled it stops the
// running suite, keeps every finished cell and writes the matrix all the same.
func Run(ctx context.Context, o Options) (res *Result, err error) {
	// A run that fails before any model ran leaves no folder; once one has run,
	// its reports stay (an hour of results is never deleted for a later failure).
	ran := false
	defer func() {
		if err != nil && !ran {
			os.RemoveAll(o.OutDir)
		} else if err != nil {
			err = fmt.Errorf("%w (the reports of the models that ran are kept in %s)", err, o.OutDir)
		}
	}()
	if !filepath.IsAbs(o.Root) || !filepath.IsAbs(o.OutDir) {
		return nil, fmt.Errorf("runner: Root %q and OutDir %q must be absolute: suites run in their own folders", o.Root, o.OutDir)
	}
	if o.RunID == "" {
		return nil, errors.New("runner: no RunID: make the run's folder with NewRunDir")
	}
	if err := os.MkdirAll(filepath.Join(o.OutDir, "ginkgo"), 0o755); err != nil {
		return nil, err
	}
	binDir, err := newBuildDir(o.Root, o.RunID)
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(binDir)
	// At the end, remove the Chromium profiles of suites that crashed before their
	// AfterSuite (CloseAll removes dead processes' profiles), so a run leaves none.
	defer runtime.Shutdown()
	// Detection is stored with the run, and each result names its device.
	rts := hardware.Targets(o.Catalogs.Targets)
	began := time.Now()
	var tm Timings
	// The suite builds while the targets are probed: both wait on other processes
	// (go's compiler and linker, Chromium), and nothing is measured yet.
	build := startBuild(ctx, o, binDir)
	defer build.stop() // before binDir is removed
	det := hardware.Detect(ctx, rts...)
	runtime.Shutdown() // the browser probes started Chromium; each suite starts its own
	tm.Detect = time.Since(began)
	detection, err := json.MarshalIndent(det, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(o.OutDir, "detect.json"), detection, 0o644); err != nil {
		return nil, err
	}
	devs, _ := json.Marshal(det.Devices(rts))
	o.Env = append(o.Env, runtime.DevicesEnv+"="+string(devs))
	wanted := map[string]bool{}
	for _, id := range o.ModelIDs {
		wanted[id] = true
	}
	var models, targets []string // every catalog model, run or not, so the matrix can say which were not run
	for _, m := range o.Catalogs.Models {
		models = append(models, m.ID)
	}
	for _, t := range o.Catalogs.Targets {
		targets = append(targets, t.ID)
	}
	// Each model's report is merged as its process ends and then dropped: a run's
	// memory stays flat however many models it runs.
	merged := matrix.NewMerger(targets)
	var failures []matrix.ProcessFailure
	explained := map[[2]string]string{} // (model, target) → Explain's line
	bin := ""                           // the suite, built before the first model runs
	interrupted := false
	for _, m := range o.Catalogs.Models {
		if ctx.Err() != nil {
			interrupted = true
			break // the models not started are "not run"
		}
		if len(wanted) > 0 && !wanted[m.ID] {
			continue
		}
		if bin == "" {
			var err error
			start := time.Now()
			bin, err = build.wait()
			tm.Build += time.Since(start)
			if err != nil {
				if ctx.Err() != nil {
					interrupted = true
					break
				}
				return nil, err
			}
		}
		fmt.Fprintf(o.Log, "run: %s (%s)\n", m.ID, m.Family)
		ran = true
		announced := map[string]result.Status{}
		start := time.Now()
		rep, fail := runModel(ctx, o, bin, m, announced)
		tm.Suites += time.Since(start)
		if fail != nil && fail.Cause == result.CauseInterrupted {
			interrupted = true
		}
		var fs []matrix.ProcessFailure
		if fail != nil {
			fail.Targets = o.TargetIDs // a crash marks only the targets this run asked for
			fmt.Fprintf(o.Log, "run: %s: %s\n", m.ID, fail.Err)
			failures = append(failures, *fail)
			fs = []matrix.ProcessFailure{*fail}
		}
		reviseProgress(o, m.ID, rep, fail, announced)
		for _, c := range merged.Add(m.ID, rep, fs) {
			if c.Status == result.StatusMismatch && againstReference(c) && o.Explain != nil && ctx.Err() == nil {
				start := time.Now()
				line := o.Explain(ctx, c.Model, c.Target)
				tm.Explain += time.Since(start)
				fmt.Fprintf(o.Log, "explain: %s on %s: %s\n", c.Model, c.Target, line)
				explained[[2]string{c.Model, c.Target}] = line
			}
		}
	}
	mx := merged.Matrix(models)
	for i, c := range mx.Cells {
		mx.Cells[i].Explain = explained[[2]string{c.Model, c.Target}]
	}
	mx.RunID = o.RunID
	mx.Host, mx.DetectedAt, mx.Detection = det.Host.Hostname, det.Generated, det.Detected(rts)
	if err := matrix.Write(o.OutDir, mx); err != nil {
		return nil, err
	}
	tm.Total = time.Since(began)
	return &Result{Matrix: mx, Failures: failures, ReportDir: o.OutDir, Interrupted: interrupted, Detection: detection, Time: tm}, nil
}

// newBuildDir makes the folder this run builds its suites into,
// .hwtest/build/<pid>-<run id>: another run may be building the suite from
// another generated/ at the same time. Folders of runs whose process is gone (killed
// before it could remove its own) are removed first.
func newBuildDir(root, runID string) (string, error) {
	parent := layout.State(root, "build")
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", err
	}
	entries, _ := os.ReadDir(parent)
	for _, e := range entries {
		pid, _, ok := strings.Cut(e.Name(), "-")
		n, err := strconv.Atoi(pid)
		if !ok || err != nil || !e.IsDir() || n <= 0 {
			continue
		}
		if syscall.Kill(n, 0) == syscall.ESRCH {
			os.RemoveAll(filepath.Join(parent, e.Name()))
		}
	}
	dir := filepath.Join(parent, fmt.Sprintf("%d-%s", os.Getpid(), runID))
	return dir, os.Mkdir(dir, 0o755)
}

// buildSuite compiles the suite (`go test -c`), as `ginkgo build` does: one binary
// holding every family's models.
func buildSuite(ctx context.Context, o Options, binDir string) (string, error) {
	return buildTest(ctx, o.Root, o.Log, o.suiteDir(), filepath.Join(binDir, "suite.test"))
}

// buildTest compiles the test package at dir (relative to root) into bin.
func buildTest(ctx context.Context, root string, log io.Writer, dir, bin string) (string, error) {
	pkg := "./" + dir
	fmt.Fprintf(log, "build: %s\n", pkg)
	cmd := exec.CommandContext(ctx, "go", "test", "-c", "-o", bin, pkg)
	cmd.Dir = root
	// go's compilers and linker go with it when the run is stopped.
	cmd.SysProcAttr = childProcAttr()
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	err := startAndWait(cmd)
	if err != nil {
		return "", fmt.Errorf("building %s: %v\n%s", pkg, err, out.String())
	}
	return bin, nil
}

// backgroundBuild is the suite's build, started before detection.
type backgroundBuild struct {
	done   chan struct{}
	bin    string
	err    error
	cancel context.CancelFunc
}

func startBuild(ctx context.Context, o Options, binDir string) *backgroundBuild {
	ctx, cancel := context.WithCancel(ctx)
	b := &backgroundBuild{done: make(chan struct{}), cancel: cancel}
	go func() {
		defer close(b.done)
		b.bin, b.err = buildSuite(ctx, o, binDir)
	}()
	return b
}

// wait is the built suite, or why it could not be built.
func (b *backgroundBuild) wait() (string, error) {
	<-b.done
	return b.bin, b.err
}

// stop ends a build no model waited for (the run stopped first) and waits for it.
func (b *backgroundBuild) stop() {
	b.cancel()
	<-b.done
}

// interruptGrace is how long a stopped suite may take to end its specs and write its
// report (Ginkgo does both on SIGINT) before its process group is killed.
const interruptGrace = 10 * time.Second

// runModel runs one model's specs in its own process and reads its JSON report.
// With o.Progress it forwards the cells the suite announces, noting the status
// each ended with in announced (by target).
func runModel(ctx context.Context, o Options, bin string, m catalog.Model, announced map[string]result.Status) ([]types.Report, *matrix.ProcessFailure) {
	report := filepath.Join(o.OutDir, "ginkgo", safeName(m.ID)+".json")
	filter := result.ModelLabel(m.ID)
	if o.LabelFilter != "" {
		filter = "(" + filter + ") && (" + o.LabelFilter + ")"
	}
	runCtx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	cmd := exec.CommandContext(runCtx, bin,
		"-test.timeout=0",
		"--ginkgo.label-filter="+filter,
		"--ginkgo.json-report="+report,
		"--ginkgo.no-color",
	)
	// The suite runs in its package folder, as `go test` would run it.
	cmd.Dir = filepath.Join(o.Root, filepath.FromSlash(o.suiteDir()))
	// The suite declares only this model's specs (runtime.Selected): one process per
	// model need not build, filter and report every other model's.
	cmd.Env = append(append(os.Environ(), "HWTEST_ROOT="+o.Root, runtime.ModelEnv+"="+m.ID), o.Env...)
	if o.Progress != nil {
		path := filepath.Join(filepath.Dir(bin), safeName(m.ID)+".progress.jsonl")
		stop, err := tailProgress(path, func(e result.CellEvent) {
			if e.Model != m.ID {
				return // not this model's: the suite's label filter would not run it
			}
			if e.Event == result.CellDone {
				announced[e.Target] = e.Status
			}
			o.Progress(e)
		})
		if err == nil {
			cmd.Env = append(cmd.Env, result.ProgressEnv+"="+path)
			defer stop()
		} else {
			fmt.Fprintf(o.Log, "run: %s: no live progress: %v\n", m.ID, err)
		}
	}
	// Its own process group, so a timeout or an interrupt reaches whatever the suite
	// started too (Chromium).
	cmd.SysProcAttr = childProcAttr()
	interruptedAt := make(chan time.Time, 1)
	cmd.Cancel = func() error {
		if ctx.Err() != nil {
			// Interrupted: Ginkgo ends the running spec and still writes its report,
			// which keeps the cells that finished. WaitDelay bounds the wait.
			interruptedAt <- time.Now()
			return syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
		}
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	cmd.WaitDelay = interruptGrace
	var out output
	cmd.Stdout = &out
	cmd.Stderr = &out
	os.Remove(report)
	err := startAndWait(cmd)
	if cmd.Process != nil {
		// Whatever the suite left in its group (a browser it did not close) ends
		// with it: no process of a run outlives it.
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	reports, readErr := matrix.ReadReports(report)
	switch {
	case ctx.Err() != nil:
		select {
		case at := <-interruptedAt:
			reports = endedBefore(reports, at)
		default: // the suite had ended by itself
		}
		return reports, &matrix.ProcessFailure{Model: m.ID, Cause: result.CauseInterrupted, Err: "the run was stopped (SIGINT or SIGTERM) before this cell finished"}
	case errors.Is(runCtx.Err(), context.DeadlineExceeded):
		return reports, &matrix.ProcessFailure{Model: m.ID, Cause: result.CauseTimeout, Err: fmt.Sprintf("timed out after %v (hwtest run --timeout); the process was killed", o.Timeout) + out.crashNote(), Stderr: out.String()}
	case readErr != nil:
		msg := fmt.Sprintf("the suite process ended without a report: %v", err)
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				msg = fmt.Sprintf("the suite process crashed (%v) without a report", ws.Signal())
			}
		}
		if full := diskFull(filepath.Dir(report), out.String()); full != "" {
			msg += "; " + full
		}
		return nil, &matrix.ProcessFailure{Model: m.ID, Cause: result.CauseCrash, Err: msg + out.crashNote(), Stderr: out.String()}
	}
	// A non-zero exit with a complete report is failing cells, already in the report.
	return reports, nil
}

// endedBefore keeps the specs that ended before the interrupt. Ginkgo, interrupted,
// runs the cleanup nodes (AfterAll closes the session) while the interrupted spec's
// inference may still be running in ONNX Runtime: what ended later is no result
// (seen: "Invalid input name" from a run on a closed session). The cells left
// without their specs are then the process failure's: "interrupted".
func endedBefore(reports []types.Report, at time.Time) []types.Report {
	out := slices.Clone(reports)
	for i := range out {
		out[i].SpecReports = slices.DeleteFunc(slices.Clone(out[i].SpecReports), func(s types.SpecReport) bool {
			return s.EndTime.IsZero() || !s.EndTime.Before(at)
		})
	}
	return out
}

// startAndWait runs cmd with its OS thread locked. Pdeathsig (childProcAttr) fires
// when the thread that forked the child exits, not the process, and Go ends threads
// it no longer needs; a thread locked to this goroutine until the child is reaped
// cannot end, so the child dies with hwtest and not before.
func startAndWait(cmd *exec.Cmd) error {
	goruntime.LockOSThread()
	defer goruntime.UnlockOSThread()
	return cmd.Run()
}

// diskFull says why a report could not be written when the disk is the cause: the
// suite printed ENOSPC's message, or the report's filesystem has (almost) no space.
func diskFull(dir, stderr string) string {
	if strings.Contains(strings.ToLower(stderr), "no space left on device") {
		return "disk full: the suite printed \"no space left on device\" (free space on " + dir + ")"
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err == nil {
		if free := int64(st.Bavail) * int64(st.Bsize); free < 1<<20 {
			return fmt.Sprintf("disk full: %s has %d bytes free", dir, free)
		}
	}
	return ""
}

func safeName(id string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.' || r == '_' {
			return r
		}
		return '_'
	}, id)
}

// output keeps what a suite printed that explains how it ended: the last 8 KiB, and
// the first lines of a Go crash ("panic:", "fatal error:", the top frames of the
// first goroutine), which a long goroutine dump pushes far out of any tail.
type output struct {
	tail      []byte // the last tailSize bytes (up to twice that between trims)
	total     int64  // bytes written so far
	line      []byte // the start of the current line, while no crash is seen
	lineStart int64  // stream offset of the current line
	crashed   bool   // a crash line was seen
	crash     []byte // from the first crash line on, up to crashSize bytes
	crashAt   int64  // stream offset of crash
}

const (
	tailSize  = 8 << 10
	crashSize = 2 << 10
	// shownTail is about how much of Stderr's end a matrix cell shows: a crash that
	// began further back is quoted in the failure's message instead.
	shownTail = 2000
)

// crashPrefixes start the lines the Go runtime prints when a program dies.
var crashPrefixes = []string{"panic: ", "fatal error: ", "runtime: ", "SIGSEGV", "SIGBUS", "SIGILL", "SIGABRT"}

func (o *output) Write(p []byte) (int, error) {
	o.tail = append(o.tail, p...)
	if len(o.tail) > 2*tailSize {
		o.tail = append(o.tail[:0], o.tail[len(o.tail)-tailSize:]...)
	}
	start := o.total
	o.total += int64(len(p))
	for i := 0; i < len(p); {
		if o.crashed {
			if room := crashSize - len(o.crash); room > 0 {
				o.crash = append(o.crash, p[i:min(len(p), i+room)]...)
			}
			break
		}
		end := len(p)
		if j := bytes.IndexByte(p[i:], '\n'); j >= 0 {
			end = i + j + 1
		}
		if room := 256 - len(o.line); room > 0 {
			o.line = append(o.line, p[i:min(end, i+room)]...)
		}
		if end == len(p) && p[end-1] != '\n' {
			break // the line goes on in the next write
		}
		if isCrashLine(string(o.line)) {
			o.crashed, o.crashAt = true, o.lineStart
			o.crash = append(o.crash, o.line...)
		}
		o.line = o.line[:0]
		o.lineStart = start + int64(end)
		i = end
	}
	return len(p), nil
}

func isCrashLine(line string) bool {
	for _, p := range crashPrefixes {
		if strings.HasPrefix(line, p) {
			return true
		}
	}
	return false
}

// String is the last 8 KiB.
func (o *output) String() string {
	b := o.tail
	if len(b) > tailSize {
		b = b[len(b)-tailSize:]
	}
	return string(b)
}

// crashNote quotes the start of a crash the cell's tail of stderr would not show,
// cut at a line end; "" when there was none or the tail shows it.
func (o *output) crashNote() string {
	if !o.crashed || o.crashAt >= o.total-shownTail {
		return ""
	}
	c := o.crash
	if i := strings.LastIndexByte(string(c), '\n'); i > 0 && len(c) == crashSize {
		c = c[:i]
	}
	return "\nthe crash began with:\n" + strings.TrimRight(string(c), "\n")
}
