package history

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"sync"
	"syscall"
	"testing"
	"time"
)

// childEnv holds a childTask as JSON: set, this test binary is a child process
// that writes a history instead of running tests. DuckDB's one-writer lock, a
// process killed while writing and a full disk are only real across processes.
const childEnv = "HWTEST_HISTORY_CHILD"

// childTask is what a child does: open Path, store one synthetic run, close. It
// tells its parent how far it got, one word a line on stdout: "open", "began"
// (Store called), "stored", "closed", or "error: …".
type childTask struct {
	Path    string
	RunID   string
	Cells   int
	Samples int
	Seed    uint64
	// Hold: after "open", wait for a line on stdin before storing, so a test can
	// make a second writer find the file locked.
	Hold bool
	// FileSizeLimit > 0: the child's writes past this many bytes of any file fail
	// (RLIMIT_FSIZE with SIGXFSZ ignored), as they do on a full disk.
	FileSizeLimit uint64
}

func TestMain(m *testing.M) {
	if spec := os.Getenv(childEnv); spec != "" {
		os.Exit(runChild(spec))
	}
	code := m.Run()
	removeBenchHistory()
	os.Exit(code)
}

func runChild(spec string) int {
	var task childTask
	if err := json.Unmarshal([]byte(spec), &task); err != nil {
		fmt.Printf("error: %s: %v\n", childEnv, err)
		return 2
	}
	fail := func(err error) int {
		fmt.Printf("error: %v\n", err)
		return 1
	}
	if task.FileSizeLimit > 0 {
		signal.Ignore(syscall.SIGXFSZ) // a write past the limit then fails with EFBIG
		lim := syscall.Rlimit{Cur: task.FileSizeLimit, Max: task.FileSizeLimit}
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
			return fail(err)
		}
	}
	run := syntheticRun(task.RunID, time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC), task.Cells, task.Samples, task.Seed)
	ctx := context.Background()
	db, err := Open(ctx, task.Path, ReadWrite, Options{Log: os.Stderr, Wait: 2 * time.Minute})
	if err != nil {
		return fail(err)
	}
	fmt.Println("open")
	if task.Hold {
		bufio.NewReader(os.Stdin).ReadString('\n')
	}
	fmt.Println("began")
	if err := db.Store(ctx, run); err != nil {
		db.Close()
		return fail(err)
	}
	fmt.Println("stored")
	if err := db.Close(); err != nil {
		return fail(err)
	}
	fmt.Println("closed")
	return 0
}

// child is a running child process.
type child struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string // stdout, a line at a time; closed at its end
	stderr *syncBuffer
	done   chan error // the process's exit
}

// startChild runs this test binary as a child doing task; cred, when set, runs it
// as another user (the binary must then be readable by that user: see exe).
func startChild(t *testing.T, exe string, task childTask, cred *syscall.Credential) *child {
	t.Helper()
	spec, err := json.Marshal(task)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), childEnv+"="+string(spec))
	if cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	c := &child{cmd: cmd, lines: make(chan string, 16), stderr: &syncBuffer{}, done: make(chan error, 1)}
	cmd.Stderr = c.stderr
	if c.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		s := bufio.NewScanner(stdout)
		for s.Scan() {
			c.lines <- s.Text()
		}
		close(c.lines)
		c.done <- cmd.Wait()
	}()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
		}
	})
	return c
}

// expect waits for the child to say want, failing on any other line.
func (c *child) expect(t *testing.T, want string) {
	t.Helper()
	select {
	case line, ok := <-c.lines:
		if !ok {
			t.Fatalf("child ended before saying %q; stderr:\n%s", want, c.stderr)
		}
		if line != want {
			t.Fatalf("child said %q, want %q; stderr:\n%s", line, want, c.stderr)
		}
	case <-time.After(2 * time.Minute):
		t.Fatalf("child did not say %q in 2 minutes; stderr:\n%s", want, c.stderr)
	}
}

// rest is everything the child says until it ends, and how it ended.
func (c *child) rest() ([]string, error) {
	var out []string
	for line := range c.lines {
		out = append(out, line)
	}
	return out, <-c.done
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
