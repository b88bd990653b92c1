package main

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hwtest/hwtest/internal/testenv"
)

// Through a pipe (CI, a log file) `hwtest run` prints one line per finished cell,
// with what a real run of silero-vad-v5 measured: the p50 and wall time the matrix
// holds, never a bar's escape codes.
func TestRunProgressLines(t *testing.T) {
	needSuites(t)
	bin := buildHwtest(t)
	reports := t.TempDir()
	p := startRun(t, bin, []string{"HWTEST_MEASURE_TIME=100ms", "HWTEST_DB=" + filepath.Join(t.TempDir(), "history.duckdb")},
		"--reports", reports, "--model", "silero-vad-v5", "--target", "cpu", "--target", "qnn")
	if err := p.cmd.Wait(); err != nil {
		t.Fatalf("%v\n%s%s", err, p.stdout.String(), p.stderr.String())
	}
	stderr := p.stderr.String()
	files, _ := filepath.Glob(filepath.Join(reports, "2*", "matrix.json"))
	if len(files) != 1 {
		t.Fatalf("matrix.json files: %v", files)
	}
	m := readMatrix(t, files[0])
	cpu, qnn := m["silero-vad-v5/cpu"], m["silero-vad-v5/qnn"]
	if cpu.Status != "pass" || cpu.Metrics == nil || cpu.WallMS <= 0 || qnn.Status != "unavailable" {
		t.Fatalf("the run itself: cpu %s %+v, qnn %s\n%s", cpu.Status, cpu.Metrics, qnn.Status, stderr)
	}

	line := regexp.MustCompile(`(?m)^cell 1/2: silero-vad-v5 on cpu: pass, p50 ([0-9.]+) ms, took (\S+)$`).FindStringSubmatch(stderr)
	if line == nil {
		t.Fatalf("no line for the cpu cell:\n%s", stderr)
	}
	// The measured median, rounded to the digits printed.
	decimals := 0
	if _, frac, ok := strings.Cut(line[1], "."); ok {
		decimals = len(frac)
	}
	if p50, _ := strconv.ParseFloat(line[1], 64); math.Abs(p50-cpu.Metrics.P50MS) > 0.5*math.Pow(10, -float64(decimals))+1e-12 {
		t.Errorf("p50 %s ms printed, the matrix holds %v", line[1], cpu.Metrics.P50MS)
	}
	// The suite times Open to Close, Ginkgo the cell's specs: the same span, printed
	// to 1 ms under a second and 100 ms under ten.
	if took, err := time.ParseDuration(line[2]); err != nil || math.Abs(float64(took)/1e6-cpu.WallMS) > 100 {
		t.Errorf("took %s printed (%v), the matrix says %.1f ms", line[2], err, cpu.WallMS)
	}
	if !regexp.MustCompile(`(?m)^cell 2/2: silero-vad-v5 on qnn: unavailable, took \S+$`).MatchString(stderr) {
		t.Errorf("no line for the qnn cell:\n%s", stderr)
	}
	if strings.Contains(stderr, "\x1b[") || strings.Contains(stderr, "ETA") {
		t.Errorf("a bar was drawn into a pipe:\n%q", stderr)
	}
}

// openPTY opens a pseudo-terminal of 120×40, as a terminal emulator would: the
// command writes to tty, the test reads what it drew from pty.
func openPTY(t *testing.T) (pty, tty *os.File) {
	t.Helper()
	pty, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	testenv.Need(t, "a pseudo-terminal (/dev/ptmx)", err)
	if err := unix.IoctlSetPointerInt(int(pty.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(pty.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.IoctlSetWinsize(int(tty.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 40, Col: 120}); err != nil {
		t.Fatal(err)
	}
	return pty, tty
}

// screen collects what a command drew on a terminal.
type screen struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *screen) read(pty *os.File) {
	b := make([]byte, 4096)
	for {
		n, err := pty.Read(b)
		s.mu.Lock()
		s.buf.Write(b[:n])
		s.mu.Unlock()
		if err != nil {
			return // EIO once the command's end of the terminal is closed
		}
	}
}

func (s *screen) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

func (s *screen) waitFor(t *testing.T, what string, limit time.Duration) {
	t.Helper()
	for deadline := time.Now().Add(limit); !strings.Contains(s.String(), what); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q on the terminal after %v:\n%q", what, limit, s.String())
		}
	}
}

// On a terminal `hwtest run` draws the bar, with an ETA from the history's past
// timings of these cells; Ctrl-C in the middle of the second model ends it as it
// does without a bar: the bar stops where it was, the summary is printed, the
// status is 130 and nothing the run started is left.
func TestRunInterruptedWithBar(t *testing.T) {
	needSuites(t)
	pty, tty := openPTY(t)
	defer pty.Close()
	// A history holding the recorded timings of silero-vad-v5 and v6.
	db := filepath.Join(t.TempDir(), "history.duckdb")
	t.Setenv("HWTEST_DB", db)
	recorded, _ := filepath.Glob("../../progress/testdata/history/*.json")
	if code, out, errs := hwtest(append([]string{"import", "--root", "../.."}, recorded...)...); code != ExitOK || len(recorded) == 0 {
		t.Fatalf("import %v: exit %d\n%s%s", recorded, code, out, errs)
	}
	bin := buildHwtest(t)
	reports := t.TempDir()
	p := &runProcess{marker: "HWTEST_TEST_MARKER=bar" + strconv.Itoa(os.Getpid())}
	p.cmd = exec.Command(bin, "run", "--root", "../..", "--no-generate", "--reports", reports,
		"--model", "silero-vad-v5", "--model", "silero-vad-v6", "--model", "bert-base-uncased", "--target", "cpu")
	p.cmd.Env = append(os.Environ(), p.marker, "HWTEST_MEASURE_TIME=5s")
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, tty
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close() // the command holds its own
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		for _, pid := range p.leftovers() {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	s := &screen{}
	go s.read(pty)

	s.waitFor(t, "now silero-vad-v6 on cpu", 3*time.Minute)
	time.Sleep(2 * time.Second) // inside v6's measuring
	p.cmd.Process.Signal(syscall.SIGINT)
	ended := make(chan error, 1)
	go func() { ended <- p.cmd.Wait() }()
	var err error
	select {
	case err = <-ended:
	case <-time.After(time.Minute):
		t.Fatalf("hwtest run still runs a minute after SIGINT\nterminal:\n%q", s.String())
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != ExitInterrupted {
		t.Errorf("exit: %v, want status 130\nstdout:\n%s\nterminal:\n%q", err, p.stdout.String(), s.String())
	}
	if left := p.waitGone(2 * time.Second); len(left) > 0 {
		t.Errorf("processes of the run outlived it:\n%s", describe(left))
	}
	drawn := s.String()
	// A bar, redrawn in place, with an ETA from the recorded timings (v5 and v6 on
	// cpu took about a second each) that says bert-base-uncased was never timed,
	// and the first cell's status once it ended.
	for _, want := range []string{"\x1b[2A\x1b[J", "cells 0/3 [", "ETA ≥ 0:02 (1 of 3 cells never timed)", "cells 1/3 [", "1 pass"} {
		if !strings.Contains(drawn, want) {
			t.Errorf("the terminal never showed %q:\n%q", want, drawn)
		}
	}
	// The last frame: v6's cell, revised by its report to interrupted; bert never
	// started, so the bar stops at 2 of 3.
	frames := regexp.MustCompile(`cells \d+/\d+ \[`).FindAllStringIndex(drawn, -1)
	last := drawn[frames[len(frames)-1][0]:]
	if !strings.HasPrefix(last, "cells 2/3") || !strings.Contains(last, "1 error · 1 pass") {
		t.Errorf("the last frame does not show the interrupted cell:\n%q", last)
	}
	if !strings.Contains(p.stdout.String(), "1 error · 1 pass (2 cells)") {
		t.Errorf("no summary on stdout:\n%s", p.stdout.String())
	}
	files, _ := filepath.Glob(filepath.Join(reports, "2*", "matrix.json"))
	if len(files) != 1 {
		t.Fatalf("matrix.json files: %v", files)
	}
	m := readMatrix(t, files[0])
	if c := m["silero-vad-v6/cpu"]; c.Status != "error" || !strings.Contains(c.Reason, "interrupted") {
		t.Errorf("v6/cpu, running at the interrupt: %s %q", c.Status, c.Reason)
	}
}
