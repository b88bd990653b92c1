package main

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hwtest/hwtest/fleet"
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
	p := startRun(t, bin, []string{"HWTEST_DB=" + db}, "--fleet", srv.URL, "--reports", reports,
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
