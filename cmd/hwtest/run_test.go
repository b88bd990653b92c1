package main

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/hwtest/hwtest/internal/testenv"
	"github.com/hwtest/hwtest/matrix"
	"github.com/hwtest/hwtest/result"
)

// These tests drive a real `hwtest run` process, as a user's shell would: signals and
// concurrent runs are about processes, so an in-process Run would not show them.

func needSuites(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs suites")
	}
	_, err := os.Stat("../../.hwtest/lib/libonnxruntime.so.1")
	testenv.Need(t, "ONNX Runtime (make setup)", err)
}

// buildHwtest compiles this command into a temporary folder.
func buildHwtest(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "hwtest")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// runProcess is one `hwtest run` child. Its environment carries a marker that every
// process it starts inherits, so the test can find any of them left behind.
type runProcess struct {
	cmd    *exec.Cmd
	marker string
	stdout bytes.Buffer
	lines  chan string // stderr, line by line
	stderr bytes.Buffer
}

func startRun(t *testing.T, bin string, env []string, args ...string) *runProcess {
	t.Helper()
	b := make([]byte, 8)
	rand.Read(b)
	p := &runProcess{marker: "HWTEST_TEST_MARKER=" + hex.EncodeToString(b), lines: make(chan string, 1000)}
	p.cmd = exec.Command(bin, append([]string{"run", "--root", "../..", "--no-generate"}, args...)...)
	p.cmd.Env = append(append(os.Environ(), p.marker), env...)
	p.cmd.Stdout = &p.stdout
	r, w := io.Pipe()
	p.cmd.Stderr = w
	go func() {
		s := bufio.NewScanner(r)
		for s.Scan() {
			p.stderr.WriteString(s.Text() + "\n")
			select {
			case p.lines <- s.Text():
			default:
			}
		}
		close(p.lines)
	}()
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		w.Close()
		for _, pid := range p.leftovers() {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	return p
}

// waitFor reads stderr until a line contains s.
func (p *runProcess) waitFor(t *testing.T, s string, limit time.Duration) {
	t.Helper()
	deadline := time.After(limit)
	for {
		select {
		case line, ok := <-p.lines:
			if !ok {
				t.Fatalf("hwtest run ended before %q\n%s", s, p.stderr.String())
			}
			if strings.Contains(line, s) {
				return
			}
		case <-deadline:
			t.Fatalf("no %q after %v\n%s", s, limit, p.stderr.String())
		}
	}
}

// leftovers are the live processes (zombies are dead) whose environment holds the
// marker, other than the hwtest process itself while it runs.
func (p *runProcess) leftovers() []int {
	var pids []int
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil || pid == p.cmd.Process.Pid {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", d.Name(), "environ"))
		if err != nil || !bytes.Contains(env, []byte(p.marker+"\x00")) {
			continue
		}
		if stat, err := os.ReadFile(filepath.Join("/proc", d.Name(), "stat")); err == nil {
			if _, after, ok := bytes.Cut(stat, []byte(") ")); ok && len(after) > 0 && after[0] == 'Z' {
				continue
			}
		}
		pids = append(pids, pid)
	}
	return pids
}

// waitGone waits until no marked process is left.
func (p *runProcess) waitGone(limit time.Duration) []int {
	deadline := time.Now().Add(limit)
	for {
		left := p.leftovers()
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func describe(pids []int) string {
	var b strings.Builder
	for _, pid := range pids {
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		fmt.Fprintf(&b, "  %d %s\n", pid, bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '}))
	}
	return b.String()
}

// Ctrl-C in the middle of the second model: the first model's cells are kept, the
// running model's unfinished cells say "interrupted", the summary is printed, the exit
// status is 130, and nothing the run started is left running.
func TestRunInterrupted(t *testing.T) {
	needSuites(t)
	bin := buildHwtest(t)
	reports := t.TempDir()
	p := startRun(t, bin, []string{"HWTEST_MEASURE_TIME=3s"}, "--reports", reports,
		"--model", "silero-vad-v5", "--model", "silero-vad-v6", "--target", "cpu")
	p.waitFor(t, "run: silero-vad-v6", 3*time.Minute)
	time.Sleep(2 * time.Second) // inside v6's measuring
	p.cmd.Process.Signal(syscall.SIGINT)
	err := p.cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Errorf("exit: %v, want status 130\nstdout:\n%s\nstderr:\n%s", err, p.stdout.String(), p.stderr.String())
	}
	if left := p.waitGone(2 * time.Second); len(left) > 0 {
		t.Errorf("processes of the run outlived it:\n%s", describe(left))
	}
	if !strings.Contains(p.stdout.String(), "pass") || !strings.Contains(p.stdout.String(), "matrix.json") {
		t.Errorf("no summary on stdout:\n%s", p.stdout.String())
	}
	dirs, _ := filepath.Glob(filepath.Join(reports, "*", "matrix.json"))
	if len(dirs) != 1 {
		t.Fatalf("matrix.json files: %v\nstderr:\n%s", dirs, p.stderr.String())
	}
	m := readMatrix(t, dirs[0])
	if c := m["silero-vad-v5/cpu"]; c.Status != "pass" {
		t.Errorf("v5/cpu, finished before the interrupt: %s %q", c.Status, c.Reason)
	}
	if c := m["silero-vad-v6/cpu"]; c.Status != "error" || !strings.Contains(c.Reason, "interrupted") {
		t.Errorf("v6/cpu, running at the interrupt: %s %q", c.Status, c.Reason)
	}
}

// SIGKILL cannot be caught: the suite process must die with hwtest all the same.
func TestRunKilledTakesItsSuiteAlong(t *testing.T) {
	needSuites(t)
	bin := buildHwtest(t)
	p := startRun(t, bin, []string{"HWTEST_MEASURE_TIME=60s"}, "--reports", t.TempDir(),
		"--model", "silero-vad-v5", "--target", "cpu")
	p.waitFor(t, "run: silero-vad-v5", 3*time.Minute)
	time.Sleep(time.Second)
	if len(p.leftovers()) == 0 {
		t.Fatalf("no suite process is running\n%s", p.stderr.String())
	}
	p.cmd.Process.Kill()
	p.cmd.Wait()
	if left := p.waitGone(5 * time.Second); len(left) > 0 {
		t.Errorf("5 s after hwtest was killed, its processes still run:\n%s", describe(left))
	}
}

// Two runs started together each get a folder of their own holding their own model.
func TestConcurrentRunsDoNotCollide(t *testing.T) {
	needSuites(t)
	bin := buildHwtest(t)
	reports := t.TempDir()
	// Both store into one history: DuckDB lets one process write at a time, so one
	// waits for the other; both runs must be kept.
	history := filepath.Join(t.TempDir(), "history.duckdb")
	env := []string{"HWTEST_MEASURE_TIME=100ms", "HWTEST_DB=" + history}
	a := startRun(t, bin, env, "--reports", reports, "--model", "silero-vad-v5", "--target", "cpu")
	b := startRun(t, bin, env, "--reports", reports, "--model", "silero-vad-v6", "--target", "cpu")
	for _, p := range []*runProcess{a, b} {
		if err := p.cmd.Wait(); err != nil {
			t.Fatalf("%v\n%s%s", err, p.stdout.String(), p.stderr.String())
		}
	}
	folder := func(p *runProcess) string {
		for _, line := range strings.Split(p.stdout.String(), "\n") {
			if _, path, ok := strings.Cut(line, "matrix: "); ok {
				return filepath.Dir(strings.TrimSpace(path))
			}
		}
		t.Fatalf("no matrix path printed:\n%s", p.stdout.String())
		return ""
	}
	da, db := folder(a), folder(b)
	if da == db {
		t.Fatalf("both runs wrote %s", da)
	}
	for dir, model := range map[string]string{da: "silero-vad-v5", db: "silero-vad-v6"} {
		m := readMatrix(t, filepath.Join(dir, "matrix.json"))
		if c := m[model+"/cpu"]; c.Status != "pass" {
			t.Errorf("%s: %s/cpu is %s %q", dir, model, c.Status, c.Reason)
		}
		// The model's process declared its own specs only (runtime.Selected), not
		// every model's of the suite, skipped.
		reports, err := matrix.ReadReports(filepath.Join(dir, "ginkgo", model+".json"))
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range reports {
			for _, s := range r.SpecReports {
				if id, _ := result.LabelValue(s.Labels(), result.ModelPrefix); s.LeafNodeType.Is(types.NodeTypeIt) && id != model {
					t.Errorf("%s's report holds a spec of %q: %s", model, id, s.FullText())
					break
				}
			}
		}
	}
	if latest, err := os.Readlink(filepath.Join(reports, "latest")); err != nil || (latest != filepath.Base(da) && latest != filepath.Base(db)) {
		t.Errorf("latest → %q (%v), want one of the two runs", latest, err)
	}
	t.Setenv("HWTEST_DB", history)
	rows := queryJSON(t, "SELECT run_id, model FROM cells ORDER BY model")
	if len(rows) != 2 || rows[0]["run_id"] != filepath.Base(da) || rows[1]["run_id"] != filepath.Base(db) {
		t.Errorf("the history holds %v, want both runs' cells", rows)
	}
}

// A bad value of a variable the suites read is one error before anything runs,
// naming the variable, its value and a good one; no run folder is made.
func TestRunRejectsBadEnvironment(t *testing.T) {
	root := newRoot(t, testModels)
	for _, v := range []string{"HWTEST_MEASURE_TIME", "HWTEST_RUN_TIMEOUT", "HWTEST_THREADS"} {
		t.Run(v, func(t *testing.T) {
			t.Setenv(v, "banana")
			reports := filepath.Join(t.TempDir(), "reports")
			code, _, stderr := hwtest("run", "--root", root, "--reports", reports)
			if code != ExitError || !strings.Contains(stderr, v+`="banana"`) || !strings.Contains(stderr, "such as") {
				t.Errorf("exit %d\n%s", code, stderr)
			}
			if _, err := os.Stat(reports); !os.IsNotExist(err) {
				t.Errorf("a run folder was made: %v", err)
			}
		})
	}
}

// A run with a cell that is error (ONNX Runtime's library is not a library here,
// a real failure of the real suite) exits ExitCellsFailed after writing the matrix
// and the history, naming the cell; --allow-failures exits 0 with the same results.
// (TestConcurrentRunsDoNotCollide sees passing runs exit 0.)
func TestRunExitsNonZeroOnFailedCells(t *testing.T) {
	needSuites(t)
	bin := buildHwtest(t)
	notALib := filepath.Join(t.TempDir(), "libonnxruntime.so")
	if err := os.WriteFile(notALib, []byte("not a library"), 0o644); err != nil {
		t.Fatal(err)
	}
	history := filepath.Join(t.TempDir(), "history.duckdb")
	env := []string{"HWTEST_MEASURE_TIME=100ms", "HWTEST_DB=" + history, "ONNXRUNTIME_LIB=" + notALib}
	for _, tc := range []struct {
		flags []string
		code  int
	}{{nil, ExitCellsFailed}, {[]string{"--allow-failures"}, ExitOK}} {
		reports := t.TempDir()
		p := startRun(t, bin, env, append([]string{"--reports", reports, "--model", "silero-vad-v5", "--target", "cpu"}, tc.flags...)...)
		p.waitFor(t, "cell 1/1: silero-vad-v5 on cpu: error", time.Minute)
		if tc.code != ExitOK {
			p.waitFor(t, "hwtest: 1 cell failed (silero-vad-v5 on cpu: error); the matrix and the history are written", time.Minute)
		}
		p.cmd.Wait()
		if code := p.cmd.ProcessState.ExitCode(); code != tc.code {
			t.Fatalf("%v: exit %d, want %d\n%s%s", tc.flags, code, tc.code, p.stdout.String(), p.stderr.String())
		}
		if c := readMatrix(t, filepath.Join(reports, "latest", "matrix.json"))["silero-vad-v5/cpu"]; c.Status != result.StatusError {
			t.Errorf("%v: the matrix has %s %q", tc.flags, c.Status, c.Reason)
		}
	}
	t.Setenv("HWTEST_DB", history)
	if rows := queryJSON(t, "SELECT status FROM cells"); len(rows) != 2 || rows[0]["status"] != "error" || rows[1]["status"] != "error" {
		t.Errorf("the history holds %v, want both runs' error cells", rows)
	}
}
