package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/hwtest/hwtest/catalog"
	"github.com/hwtest/hwtest/conformance"
	"github.com/hwtest/hwtest/generator"
	"github.com/hwtest/hwtest/matrix"
	"github.com/hwtest/hwtest/result"
	"github.com/hwtest/hwtest/runtime"
)

// ConformanceOptions is what RunConformance runs: the generated conformance suite
// (generated/conformance/), one process per target.
type ConformanceOptions struct {
	Root    string
	RunID   string
	OutDir  string             // where the Ginkgo reports go
	Targets []catalog.Target   // in hardware.yaml's order
	Cases   []conformance.Case // the cases to run (every one the suite has, or some operators')
	Timeout time.Duration      // per target process
	// CaseTimeout bounds one case's session and its run (runtime.CaseTimeoutEnv
	// in the suite; runtime.CaseTimeout when 0): a case is one node on a few
	// elements, so one still running after it hung, and the process goes on.
	CaseTimeout time.Duration
	Env         []string
	Log         io.Writer
	// Progress hears of each target as its process ends.
	Progress func(target string, cases []result.OpCaseReport, took time.Duration)
}

// ConformanceResult is every case on every target, as the suites reported them.
type ConformanceResult struct {
	Cases       []result.OpCaseReport
	Interrupted bool
	Took        map[string]time.Duration // per target process, build excluded
}

// RunConformance builds the conformance suite and runs it once per target: a
// native crash or a hung case on one target cannot cost another target its
// results, and a browser target's cases share one page in that process. Cases a
// process never reported (it crashed, timed out or was stopped) are `error` with
// what happened, so the scoreboard never silently shrinks.
func RunConformance(ctx context.Context, o ConformanceOptions) (*ConformanceResult, error) {
	if len(o.Cases) == 0 {
		return nil, errors.New("no conformance cases to run")
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	binDir, err := newBuildDir(o.Root, "conformance-"+o.RunID)
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(binDir)
	bin, err := buildTest(ctx, o.Root, o.Log, generator.ConformanceDir, filepath.Join(binDir, "conformance.test"))
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(o.OutDir, "ginkgo"), 0o755); err != nil {
		return nil, err
	}
	res := &ConformanceResult{Took: map[string]time.Duration{}}
	for _, t := range o.Targets {
		if ctx.Err() != nil {
			res.Interrupted = true
			break
		}
		start := time.Now()
		got, failure := runConformanceTarget(ctx, o, bin, t.ID)
		res.Took[t.ID] = time.Since(start)
		got = completeCases(got, o.Cases, t.ID, failure)
		if ctx.Err() != nil {
			res.Interrupted = true
		}
		res.Cases = append(res.Cases, got...)
		if o.Progress != nil {
			o.Progress(t.ID, got, res.Took[t.ID])
		}
	}
	return res, nil
}

// opFilter is the label filter for the operators of cases: every operator the suite
// has needs none.
func opFilter(cases []conformance.Case) string {
	var ops []string
	for _, c := range cases {
		if l := result.OpLabel(c.Op); !slices.Contains(ops, l) {
			ops = append(ops, l)
		}
	}
	return strings.Join(ops, " || ")
}

// runConformanceTarget runs the suite's specs of one target and reads the cases it
// reported; failure says why the process ended early ("" when it did not).
func runConformanceTarget(ctx context.Context, o ConformanceOptions, bin, target string) ([]result.OpCaseReport, string) {
	report := filepath.Join(o.OutDir, "ginkgo", "conformance-"+safeName(target)+".json")
	caseLog := strings.TrimSuffix(report, ".json") + ".jsonl"
	filter := result.TargetLabel(target)
	if ops := opFilter(o.Cases); ops != "" {
		filter += " && (" + ops + ")"
	}
	runCtx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	cmd := exec.CommandContext(runCtx, bin, "-test.timeout=0", "--ginkgo.label-filter="+filter,
		"--ginkgo.json-report="+report, "--ginkgo.no-color", "--ginkgo.succinct")
	cmd.Dir = filepath.Join(o.Root, filepath.FromSlash(generator.ConformanceDir))
	cmd.Env = append(append(os.Environ(), "HWTEST_ROOT="+o.Root, runtime.CasesLogEnv+"="+caseLog), o.Env...)
	if o.CaseTimeout > 0 {
		cmd.Env = append(cmd.Env, runtime.CaseTimeoutEnv+"="+o.CaseTimeout.String())
	}
	cmd.SysProcAttr = childProcAttr()
	cmd.Cancel = func() error {
		if ctx.Err() != nil { // stopped: Ginkgo still writes what finished
			return syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
		}
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	cmd.WaitDelay = interruptGrace
	var out output
	cmd.Stdout, cmd.Stderr = &out, &out
	os.Remove(report)
	os.Remove(caseLog)
	err := startAndWait(cmd)
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // Chromium goes with it
	}
	reports, readErr := matrix.ReadReports(report)
	cases := opCaseEntries(reports)
	if readErr != nil { // killed or crashed: what it logged as it went
		cases = loggedCases(caseLog)
	}
	switch {
	case ctx.Err() != nil:
		return cases, "the run was stopped (SIGINT or SIGTERM) before this case ran"
	case errors.Is(runCtx.Err(), context.DeadlineExceeded):
		return cases, fmt.Sprintf("the %s conformance process timed out after %v (--timeout) before this case ran; it was killed", target, o.Timeout) + out.crashNote()
	case readErr != nil:
		msg := fmt.Sprintf("the %s conformance process ended without a report (%v) before this case ran", target, err)
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				msg = fmt.Sprintf("the %s conformance process crashed (%v) before this case ran", target, ws.Signal())
			}
		}
		return cases, msg + out.crashNote()
	}
	return cases, "" // a non-zero exit with a report is failing cases, in the report
}

// opCaseEntries decodes the suites' conformance report entries.
func opCaseEntries(reports []types.Report) []result.OpCaseReport {
	var out []result.OpCaseReport
	for _, r := range reports {
		for _, s := range r.SpecReports {
			for _, e := range s.ReportEntries {
				if e.Name != result.OpCaseEntryName {
					continue
				}
				var c result.OpCaseReport
				if err := json.Unmarshal([]byte(e.Value.AsJSON), &c); err != nil {
					c = result.OpCaseReport{Case: s.LeafNodeText, Status: result.CaseError, Error: fmt.Sprintf("unreadable conformance report entry: %v", err)}
				}
				out = append(out, c)
			}
		}
	}
	return out
}

// loggedCases reads the cases a process appended to its log (runtime.CasesLogEnv);
// a line cut short by a kill is dropped.
func loggedCases(path string) []result.OpCaseReport {
	data, _ := os.ReadFile(path)
	var out []result.OpCaseReport
	seen := map[string]bool{}
	for _, line := range strings.Split(string(data), "\n") {
		var c result.OpCaseReport
		if json.Unmarshal([]byte(line), &c) == nil && c.Case != "" && !seen[c.Case] {
			seen[c.Case] = true
			out = append(out, c)
		}
	}
	return out
}

// completeCases adds an `error` case for every expected case of target the process
// did not report, saying why, and orders them by case name.
func completeCases(got []result.OpCaseReport, want []conformance.Case, target, failure string) []result.OpCaseReport {
	seen := map[string]bool{}
	for _, c := range got {
		seen[c.Case] = true
	}
	if failure == "" {
		failure = fmt.Sprintf("the %s conformance process reported no result for this case", target)
	}
	for _, c := range want {
		if !seen[c.Name] {
			got = append(got, result.OpCaseReport{Case: c.Name, Op: c.Op, Domain: c.Domain, Opset: c.Opset, Target: target,
				Status: result.CaseError, Error: failure})
		}
	}
	slices.SortFunc(got, func(a, b result.OpCaseReport) int { return strings.Compare(a.Case, b.Case) })
	return got
}
