package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/hwtest/hwtest/fleet"
	"github.com/hwtest/hwtest/history"
	"github.com/hwtest/hwtest/internal/fleettest"
	"github.com/hwtest/hwtest/matrix"
	"github.com/hwtest/hwtest/result"
)

// startWorkerProcess starts a real `hwtest worker` and waits until it takes jobs.
func startWorkerProcess(t *testing.T, bin, url, name string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(bin, "worker", "--root", "../..", "--nats", url, "--name", name, "--target", "cpu", "--ack-wait", "2s")
	cmd.Env = append(os.Environ(), "HWTEST_MEASURE_TIME=300ms")
	r, w := io.Pipe()
	cmd.Stderr = w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait(); w.Close() })
	ready := make(chan struct{})
	var log strings.Builder
	go func() {
		s := bufio.NewScanner(r)
		for s.Scan() {
			log.WriteString(s.Text() + "\n")
			if strings.Contains(s.Text(), "taking jobs for [cpu]") {
				close(ready)
			}
		}
	}()
	select {
	case <-ready:
	case <-time.After(3 * time.Minute):
		t.Fatalf("worker %s not ready after 3 minutes:\n%s", name, log.String())
	}
	return cmd
}

// A fleet run on real `hwtest worker` processes: the cells are real measurements
// of the suites the workers ran; a worker SIGKILLed mid-job loses nothing (its job
// runs on the other); a target no worker has is unavailable, naming the workers,
// and falls back to one that is.
func TestFleetRunOnRealWorkers(t *testing.T) {
	needSuites(t)
	bin := buildHwtest(t)
	srv, err := fleet.StartServer(fleet.ServerOptions{Listen: "127.0.0.1:0", StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	workers := map[string]*exec.Cmd{"wa": startWorkerProcess(t, bin, srv.URL, "wa"), "wb": startWorkerProcess(t, bin, srv.URL, "wb")}
	reports := t.TempDir()
	db := filepath.Join(t.TempDir(), "history.duckdb")
	// The submitter's measurement settings go with its jobs: the workers' own
	// (300ms) do not apply.
	p := startRun(t, bin, []string{"HWTEST_DB=" + db, "HWTEST_MEASURE_TIME=1s"}, "--fleet", srv.URL, "--reports", reports,
		"--model", "silero-vad-v5", "--model", "bert-base-uncased", "--target", "cpu", "--target", "cuda")
	// Kill the worker of the first job while it runs it.
	took := regexp.MustCompile(`^(w[ab]): took (\S+) on cpu`)
	var victim, job string
	deadline := time.After(2 * time.Minute)
	for victim == "" {
		select {
		case line, ok := <-p.lines:
			if !ok {
				t.Fatalf("hwtest run ended before a job was taken:\n%s", p.stderr.String())
			}
			if m := took.FindStringSubmatch(line); m != nil {
				victim, job = m[1], m[2]
			}
		case <-deadline:
			t.Fatalf("no job taken after 2 minutes:\n%s", p.stderr.String())
		}
	}
	workers[victim].Process.Signal(syscall.SIGKILL)
	p.waitFor(t, "took "+job+" on cpu (attempt 2", time.Minute)
	if err := p.cmd.Wait(); err != nil {
		t.Fatalf("hwtest run --fleet: %v\n%s\n%s", err, p.stdout.String(), p.stderr.String())
	}
	b, err := os.ReadFile(filepath.Join(reports, "latest", "matrix.json"))
	if err != nil {
		t.Fatal(err)
	}
	var mx matrix.Matrix
	if err := json.Unmarshal(b, &mx); err != nil {
		t.Fatal(err)
	}
	got := map[string]matrix.Cell{}
	for _, c := range mx.Cells {
		got[c.Model+"/"+c.Target] = c
	}
	if len(mx.Cells) != 4 {
		t.Errorf("%d cells, want 4", len(mx.Cells))
	}
	for _, m := range []string{"silero-vad-v5", "bert-base-uncased"} {
		c := got[m+"/cpu"]
		if c.Status != result.StatusPass || c.Metrics == nil || c.Metrics.P50MS <= 0 || c.Provenance == nil {
			t.Errorf("%s/cpu: %s %q metrics %v: want a measured pass", m, c.Status, c.Reason, c.Metrics)
		}
		if c.Metrics != nil && c.Metrics.TimedMS < 900 {
			t.Errorf("%s/cpu: timed for %.0f ms, want about the submitter's HWTEST_MEASURE_TIME=1s", m, c.Metrics.TimedMS)
		}
		cuda := got[m+"/cuda"]
		if cuda.Status != result.StatusUnavailable || !strings.HasPrefix(cuda.Reason, "no worker in the fleet has cuda (workers seen: wa (cpu); wb (cpu))") || cuda.FallsBackTo != "cuda → cpu" {
			t.Errorf("%s/cuda: %s %q falls back %q", m, cuda.Status, cuda.Reason, cuda.FallsBackTo)
		}
	}
	out := p.stdout.String()
	if !strings.Contains(out, "history: ") || !strings.Contains(out, "jobs") {
		t.Errorf("stdout:\n%s", out)
	}
	if _, err := os.Stat(db); err != nil {
		t.Errorf("no history: %v", err)
	}
}

// `hwtest serve` keeps the queue and stores each fleet run in its history: a run
// submitted through it is in its DuckDB file once the submitter ends it, with the
// cells the workers ran and the ones the submitter made (no worker has cuda).
func TestServeStoresFleetRunsInTheHistory(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	db := filepath.Join(t.TempDir(), "serve.duckdb")
	var stdout, stderr syncBuffer
	g := &Globals{Root: "../..", DB: db, Stdout: &stdout, Stderr: &stderr}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- serveRun(ctx, &ServeOptions{Globals: g, Listen: addr, Store: t.TempDir()}) }()
	defer func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
	}()
	url := "nats://" + addr
	var nc *nats.Conn
	for range 100 { // serve is starting
		if nc, err = fleet.Connect(fleet.ConnectOptions{URL: url}); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	wctx, stopWorker := context.WithCancel(context.Background())
	defer stopWorker()
	w := &fleet.Worker{JS: js, NC: nc, Exec: fleettest.Exec("w1"), Heartbeat: 200 * time.Millisecond,
		Announce: fleet.Announcement{ID: "w1", Targets: []string{"cpu"}, CatalogSHA256: "c"}}
	go w.Run(wctx)
	out, err := (&fleet.Submitter{JS: js, NC: nc}).Run(context.Background(), fleet.Plan{Run: "20261124T000000Z-abcdef",
		Models: []string{"m1", "m2"}, Targets: []string{"cpu", "cuda"}, CatalogSHA256: "c", Chains: map[string][]string{"cuda": {"cpu"}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Cells) != 4 {
		t.Fatalf("%d cells, want 4", len(out.Cells))
	}
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(stderr.String(), "run 20261124T000000Z-abcdef stored: 4 cells") {
		if time.Now().After(deadline) {
			t.Fatalf("serve did not store the run:\n%s", stderr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	h, err := history.Open(context.Background(), db, history.ReadOnly, history.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	runs, err := h.Runs(context.Background())
	if err != nil || len(runs) != 1 || runs[0].ID != "20261124T000000Z-abcdef" || runs[0].Cells != 4 || runs[0].Source != "fleet" {
		t.Fatalf("runs %+v, %v; want the fleet run with 4 cells", runs, err)
	}
	cur, err := h.Current(context.Background(), []string{"m1", "m2"}, []string{"cpu", "cuda"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cur.Cells {
		want := result.StatusPass
		if c.Target == "cuda" {
			want = result.StatusUnavailable
		}
		if c.Status != want {
			t.Errorf("%s/%s: %s, want %s", c.Model, c.Target, c.Status, want)
		}
	}
}

// syncBuffer is a buffer a goroutine writes while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
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

// Ctrl-C on `hwtest run --fleet`: exit 130, the matrix of what finished, the run
// stored as interrupted, and none of its jobs left queued for workers to run later.
func TestFleetRunInterrupted(t *testing.T) {
	needSuites(t)
	bin := buildHwtest(t)
	srv, err := fleet.StartServer(fleet.ServerOptions{Listen: "127.0.0.1:0", StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	sum, err := fleet.CatalogSHA256("../../models.yaml", "../../hardware.yaml")
	if err != nil {
		t.Fatal(err)
	}
	nc, err := fleet.Connect(fleet.ConnectOptions{URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	// A worker whose jobs run until it is stopped.
	w := &fleet.Worker{JS: js, NC: nc, Heartbeat: 200 * time.Millisecond,
		Exec:     func(ctx context.Context, j fleet.Job) ([]matrix.Cell, error) { <-ctx.Done(); return nil, ctx.Err() },
		Announce: fleet.Announcement{ID: "slow", Targets: []string{"cpu"}, CatalogSHA256: sum}}
	wctx, stopWorker := context.WithCancel(context.Background())
	defer stopWorker()
	go w.Run(wctx)

	db := filepath.Join(t.TempDir(), "history.duckdb")
	p := startRun(t, bin, []string{"HWTEST_DB=" + db}, "--fleet", srv.URL, "--reports", t.TempDir(), "--target", "cpu")
	p.waitFor(t, "slow: took ", time.Minute)
	p.cmd.Process.Signal(os.Interrupt)
	err = p.cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != ExitInterrupted {
		t.Fatalf("exit %v, want %d\n%s", err, ExitInterrupted, p.stderr.String())
	}
	if !strings.Contains(p.stderr.String(), "interrupted: the matrix holds the cells that finished") {
		t.Errorf("stderr:\n%s", p.stderr.String())
	}
	st, err := js.Stream(context.Background(), fleet.JobsStream)
	if err != nil {
		t.Fatal(err)
	}
	if info, err := st.Info(context.Background()); err != nil || info.State.Msgs != 0 {
		t.Errorf("jobs left queued: %+v, %v", info.State, err)
	}
	h, err := history.Open(context.Background(), db, history.ReadOnly, history.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	runs, err := h.Runs(context.Background())
	if err != nil || len(runs) != 1 || !runs[0].Interrupted || runs[0].Source != "fleet" {
		t.Errorf("runs %+v, %v: want one interrupted fleet run", runs, err)
	}
}

// `hwtest run --fleet` exits as a local run does: ExitCellsFailed when a cell is
// error (a real worker's suite process past the run's --timeout of 10ms), after
// the matrix and the history are written. (--allow-failures is the local run's
// code: TestRunExitsNonZeroOnFailedCells.)
func TestFleetRunExitsNonZeroOnFailedCells(t *testing.T) {
	needSuites(t)
	bin := buildHwtest(t)
	srv, err := fleet.StartServer(fleet.ServerOptions{Listen: "127.0.0.1:0", StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	startWorkerProcess(t, bin, srv.URL, "w")
	reports := t.TempDir()
	p := startRun(t, bin, []string{"HWTEST_DB=" + filepath.Join(t.TempDir(), "history.duckdb")},
		"--fleet", srv.URL, "--reports", reports, "--model", "silero-vad-v5", "--target", "cpu", "--timeout", "10ms")
	p.waitFor(t, "hwtest: 1 cell failed (silero-vad-v5 on cpu: error); the matrix and the history are written", 3*time.Minute)
	p.cmd.Wait()
	if code := p.cmd.ProcessState.ExitCode(); code != ExitCellsFailed {
		t.Fatalf("exit %d, want %d\n%s%s", code, ExitCellsFailed, p.stdout.String(), p.stderr.String())
	}
	if c := readMatrix(t, filepath.Join(reports, "latest", "matrix.json"))["silero-vad-v5/cpu"]; c.Status != result.StatusError || !strings.Contains(c.Reason, "timed out") {
		t.Errorf("the matrix has %s %q, want error: timed out", c.Status, c.Reason)
	}
	if !strings.Contains(p.stdout.String(), "history: ") {
		t.Errorf("no history written:\n%s", p.stdout.String())
	}
}
