package fleet_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hwtest/hwtest/fleet"
	"github.com/hwtest/hwtest/internal/fleettest"
	"github.com/hwtest/hwtest/result"
)

var (
	workerOnce sync.Once
	workerBin  string
	workerErr  error
)

// workerBinary builds the trivial-job worker (internal/fleettest/worker) once.
func workerBinary(t testing.TB) string {
	t.Helper()
	workerOnce.Do(func() {
		dir, err := os.MkdirTemp("", "hwtest-fleet-worker-")
		if err != nil {
			workerErr = err
			return
		}
		workerBin = filepath.Join(dir, "worker")
		out, err := exec.Command("go", "build", "-o", workerBin, "github.com/hwtest/hwtest/internal/fleettest/worker").CombinedOutput()
		if err != nil {
			workerErr = fmt.Errorf("building the worker: %v\n%s", err, out)
		}
	})
	if workerErr != nil {
		t.Fatal(workerErr)
	}
	return workerBin
}

// pool keeps worker processes; kill SIGKILLs one and starts another in its place.
type pool struct {
	t       testing.TB
	bin     string
	url     string
	args    []string
	mu      sync.Mutex
	procs   map[string]*exec.Cmd
	exited  map[string]bool // by the goroutine that waits for each
	next    int
	started int
	logMu   sync.Mutex
	logs    *strings.Builder
}

func newPool(t testing.TB, url string, n int, args ...string) *pool {
	p := &pool{t: t, bin: workerBinary(t), url: url, args: args, procs: map[string]*exec.Cmd{}, exited: map[string]bool{}, logs: &strings.Builder{}}
	for range n {
		p.start()
	}
	t.Cleanup(p.stopAll)
	return p
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *strings.Builder
}

func (w lockedWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(b)
}

func (p *pool) start() {
	p.mu.Lock()
	defer p.mu.Unlock()
	id := "w" + strconv.Itoa(p.next)
	p.next++
	cmd := exec.Command(p.bin, append([]string{"--nats", p.url, "--id", id}, p.args...)...)
	cmd.Stderr = lockedWriter{&p.logMu, p.logs}
	if err := cmd.Start(); err != nil {
		p.t.Fatal(err)
	}
	go func() {
		cmd.Wait()
		p.mu.Lock()
		p.exited[id] = true
		p.mu.Unlock()
	}()
	p.procs[id] = cmd
	p.started++
}

// kill SIGKILLs a random worker and starts a new one.
func (p *pool) kill() string {
	p.mu.Lock()
	var ids []string
	for id := range p.procs {
		ids = append(ids, id)
	}
	id := ids[rand.IntN(len(ids))]
	cmd := p.procs[id]
	delete(p.procs, id)
	p.mu.Unlock()
	cmd.Process.Signal(syscall.SIGKILL)
	p.start()
	return id
}

// count is how many worker processes were started.
func (p *pool) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.started
}

func (p *pool) stopAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, cmd := range p.procs {
		cmd.Process.Signal(syscall.SIGKILL)
	}
}

// ≥ 200 jobs across worker processes, 100 of them SIGKILLed while jobs run: every
// job ends with exactly one result, and it is a pass (no job counted twice, none
// lost, none mistaken for a poison job).
func TestWorkersKilledMidRunLoseNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("starts 100+ worker processes")
	}
	s := startServer(t)
	// A job redelivers 1 s after its worker died (AckWait); 20 deliveries before a
	// job counts as poison, which random kills never reach.
	p := newPool(t, s.URL, 4, "--max-crashes", "20")
	ms := models(210)
	done := make(chan struct{})
	kills := 0
	var killed []string
	go func() {
		defer close(done)
		time.Sleep(500 * time.Millisecond) // the first workers took jobs
		for kills < 100 {
			killed = append(killed, p.kill())
			kills++
			time.Sleep(60 * time.Millisecond)
		}
	}()
	nc, js := connect(t, s.URL)
	var redelivered int
	sub := &fleet.Submitter{JS: js, NC: nc, Progress: func(pr fleet.Progress) {
		if pr.Cells != nil && pr.Attempt > 1 {
			redelivered++
		}
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	out, err := sub.Run(ctx, fleet.Plan{Run: "kill", Models: ms, Targets: []string{"cpu"}, CatalogSHA256: "test-catalog",
		Payload: func(string, string) []byte { return fleettest.Payload{SleepMS: 40}.Encode() }})
	if err != nil {
		t.Fatal(err)
	}
	<-done
	cells := cellsByKey(t, out.Cells)
	if len(cells) != len(ms) || out.Jobs != len(ms) {
		t.Fatalf("%d cells of %d jobs, want %d", len(cells), out.Jobs, len(ms))
	}
	for k, c := range cells {
		if c.Status != result.StatusPass {
			t.Errorf("%s: %s %q", k, c.Status, c.Reason)
		}
	}
	total := 0
	for _, n := range out.PerWorker {
		total += n
	}
	if total != len(ms) {
		t.Errorf("results accepted %d, want %d", total, len(ms))
	}
	// The kills did land mid-job: those jobs' results are of a later delivery.
	t.Logf("%d kills, %d worker processes, %d workers gave results, %d results of a redelivered job", kills, p.count(), len(out.PerWorker), redelivered)
	if redelivered < 20 {
		t.Errorf("%d results of redelivered jobs: the kills did not hit running jobs", redelivered)
	}
	if kills < 100 {
		t.Errorf("%d kills, want 100", kills)
	}
}

// A job that kills every worker that takes it ends as "crashed N workers" after N
// deliveries, once, and the run goes on.
func TestPoisonJobEndsAfterCrashingWorkers(t *testing.T) {
	s := startServer(t)
	p := newPool(t, s.URL, 2, "--max-crashes", "3")
	// Each death is replaced, so the fleet has workers left for the other jobs.
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			p.mu.Lock()
			var dead []string
			for id := range p.procs {
				if p.exited[id] {
					dead = append(dead, id)
				}
			}
			for _, id := range dead {
				delete(p.procs, id)
			}
			p.mu.Unlock()
			for range dead {
				p.start()
			}
		}
	}()
	defer close(stop)
	out := submit(t, s.URL, fleet.Plan{Run: "poison", Models: []string{"good1", "bad", "good2"}, Targets: []string{"cpu"},
		Payload: func(model, _ string) []byte { return fleettest.Payload{KillSelf: model == "bad"}.Encode() }})
	cells := cellsByKey(t, out.Cells)
	bad := cells["bad/cpu"]
	if bad.Status != result.StatusError || !strings.HasPrefix(bad.Reason, "crashed 3 workers") || bad.Cause != result.CauseCrash {
		t.Errorf("bad: %s %q (%s), want error \"crashed 3 workers…\" (crash)", bad.Status, bad.Reason, bad.Cause)
	}
	for _, m := range []string{"good1", "good2"} {
		if c := cells[m+"/cpu"]; c.Status != result.StatusPass {
			t.Errorf("%s: %s %q", m, c.Status, c.Reason)
		}
	}
	if p.count() < 5 {
		t.Errorf("%d worker processes started, want at least 5 (2 + 3 killed by the poison job)", p.count())
	}
}

// The server stopped and started again (same port, same files) mid-run: workers
// and the submitter reconnect and every job ends with one result.
func TestServerRestartMidRunResumes(t *testing.T) {
	dir := t.TempDir()
	s, err := fleet.StartServer(fleet.ServerOptions{Listen: "127.0.0.1:0", StoreDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	url := s.URL
	newPool(t, url, 3)
	ms := models(60)
	restarted := make(chan *fleet.Server, 1)
	nc, js := connect(t, url)
	var mu sync.Mutex
	var downAt, upAt time.Time
	var ended []time.Time
	go func() {
		time.Sleep(700 * time.Millisecond)
		mu.Lock()
		downAt = time.Now()
		mu.Unlock()
		s.Shutdown()
		time.Sleep(time.Second)
		s2, err := fleet.StartServer(fleet.ServerOptions{Listen: strings.TrimPrefix(url, "nats://"), StoreDir: dir})
		if err != nil {
			t.Error(err)
		}
		mu.Lock()
		upAt = time.Now()
		mu.Unlock()
		restarted <- s2
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sub := &fleet.Submitter{JS: js, NC: nc, Progress: func(pr fleet.Progress) {
		if pr.Cells != nil {
			mu.Lock()
			ended = append(ended, time.Now())
			mu.Unlock()
		}
	}}
	out, err := sub.Run(ctx, fleet.Plan{Run: "restart", Models: ms, Targets: []string{"cpu"}, CatalogSHA256: "test-catalog",
		Payload: func(string, string) []byte { return fleettest.Payload{SleepMS: 100}.Encode() }})
	s2 := <-restarted
	if s2 != nil {
		defer s2.Shutdown()
	}
	if err != nil {
		t.Fatal(err)
	}
	cells := cellsByKey(t, out.Cells)
	if len(cells) != len(ms) {
		t.Fatalf("%d cells, want %d", len(cells), len(ms))
	}
	for k, c := range cells {
		if c.Status != result.StatusPass {
			t.Errorf("%s: %s %q", k, c.Status, c.Reason)
		}
	}
	// The restart was mid-run: results came in before it and after it.
	before, after := 0, 0
	for _, at := range ended {
		if at.Before(downAt) {
			before++
		} else if at.After(upAt) {
			after++
		}
	}
	if before == 0 || after == 0 {
		t.Errorf("results before the restart %d, after %d: want some of each", before, after)
	}
	t.Logf("results: %d before the restart, %d after", before, after)
}

// Workers stopped by their users (SIGINT) hand their job back; that is not a crash:
// three of them in a row do not make the job poison.
func TestStoppedWorkersDoNotMakeAJobPoison(t *testing.T) {
	s := startServer(t)
	p := newPool(t, s.URL, 1, "--max-crashes", "2")
	nc, js := connect(t, s.URL)
	taken := make(chan string, 10)
	sub := &fleet.Submitter{JS: js, NC: nc, Progress: func(pr fleet.Progress) {
		if pr.Taken {
			taken <- pr.Worker
		}
	}}
	go func() {
		for range 3 {
			w := <-taken
			time.Sleep(200 * time.Millisecond) // mid-job: it sleeps 1.5 s
			p.mu.Lock()
			cmd := p.procs[w]
			delete(p.procs, w)
			p.mu.Unlock()
			cmd.Process.Signal(os.Interrupt)
			p.start()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := sub.Run(ctx, fleet.Plan{Run: "stopped", Models: []string{"m"}, Targets: []string{"cpu"}, CatalogSHA256: "test-catalog",
		Payload: func(string, string) []byte { return fleettest.Payload{SleepMS: 1500}.Encode() }})
	if err != nil {
		t.Fatal(err)
	}
	if c := cellsByKey(t, out.Cells)["m/cpu"]; c.Status != result.StatusPass {
		t.Errorf("cell %s %q, want pass", c.Status, c.Reason)
	}
	if n := p.count(); n != 4 {
		t.Errorf("%d workers started, want 4 (3 stopped mid-job)", p.count())
	}
}

// A server that comes back without its files (a new store, a wiped cluster) has
// lost the queue's streams and consumers: running workers make them again and
// take the next run's jobs, instead of looking alive and taking none.
func TestWorkersRemakeALostQueue(t *testing.T) {
	s, err := fleet.StartServer(fleet.ServerOptions{Listen: "127.0.0.1:0", StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	url := s.URL
	newPool(t, url, 2)
	out := submit(t, url, fleet.Plan{Run: "before", Models: models(4), Targets: []string{"cpu"}})
	if len(out.Cells) != 4 {
		t.Fatalf("%d cells before, want 4", len(out.Cells))
	}
	s.Shutdown()
	s2, err := fleet.StartServer(fleet.ServerOptions{Listen: strings.TrimPrefix(url, "nats://"), StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Shutdown()
	nc, js := connect(t, url)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err = (&fleet.Submitter{JS: js, NC: nc, WaitWorkers: 20 * time.Second}).Run(ctx, fleet.Plan{Run: "after", Models: models(4), Targets: []string{"cpu"}, CatalogSHA256: "test-catalog"})
	if err != nil {
		t.Fatal(err)
	}
	for k, c := range cellsByKey(t, out.Cells) {
		if c.Status != result.StatusPass {
			t.Errorf("%s: %s %q", k, c.Status, c.Reason)
		}
	}
}
