package fleet_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/hwtest/hwtest/fleet"
	"github.com/hwtest/hwtest/internal/fleettest"
	"github.com/hwtest/hwtest/matrix"
	"github.com/hwtest/hwtest/result"
)

// startServer starts a real embedded NATS server with JetStream in a folder of
// the test's.
func startServer(t testing.TB) *fleet.Server {
	t.Helper()
	s, err := fleet.StartServer(fleet.ServerOptions{Listen: "127.0.0.1:0", StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Shutdown)
	return s
}

func connect(t testing.TB, url string) (*nats.Conn, jetstream.JetStream) {
	t.Helper()
	return connectWith(t, fleet.ConnectOptions{URL: url})
}

// startWorker runs a worker of the catalogs "test-catalog" in this process, on its
// own connection, until the test ends.
func startWorker(t testing.TB, url, id string, targets []string, exec fleet.Executor) {
	t.Helper()
	startWorkerOf(t, url, id, "test-catalog", targets, exec)
}

func startWorkerOf(t testing.TB, url, id, catalogs string, targets []string, exec fleet.Executor) {
	t.Helper()
	nc, js := connect(t, url)
	// Ended for every worker at once when the test ends (a worker stops within
	// its Fetch wait, 2 s: one after the other, 16 workers took half a minute).
	ctx := t.Context()
	var wg sync.WaitGroup
	w := &fleet.Worker{JS: js, NC: nc, Exec: exec, Heartbeat: 200 * time.Millisecond, Queue: fleet.QueueOptions{AckWait: time.Second},
		Announce: fleet.Announcement{ID: id, Host: "test", Targets: targets, CatalogSHA256: catalogs}}
	wg.Go(func() {
		if err := w.Run(ctx); err != nil {
			t.Errorf("worker %s: %v", id, err)
		}
	})
	t.Cleanup(wg.Wait)
}

// waitAnnounced waits until n workers have an entry in the workers' bucket: a
// submitter waits only for a first one, and a benchmark times the queue, not the
// workers' start.
func waitAnnounced(t testing.TB, js jetstream.JetStream, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for ctx.Err() == nil {
		if kv, err := js.KeyValue(ctx, fleet.WorkersBucket); err == nil {
			if keys, err := kv.Keys(ctx); err == nil && len(keys) >= n {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%d workers did not announce themselves in 30s", n)
}

// workersBucket makes the fleet's streams and bucket on the server at url, as the
// first worker or submitter would, and opens the workers' bucket.
func workersBucket(t testing.TB, url string) (*nats.Conn, jetstream.JetStream, jetstream.KeyValue) {
	t.Helper()
	nc, js := connect(t, url)
	if err := fleet.Setup(context.Background(), js); err != nil {
		t.Fatal(err)
	}
	kv, err := js.KeyValue(context.Background(), fleet.WorkersBucket)
	if err != nil {
		t.Fatal(err)
	}
	return nc, js, kv
}

func submit(t testing.TB, url string, p fleet.Plan) *fleet.Outcome {
	t.Helper()
	nc, js := connect(t, url)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if p.CatalogSHA256 == "" {
		p.CatalogSHA256 = "test-catalog"
	}
	out, err := (&fleet.Submitter{JS: js, NC: nc, WaitWorkers: 2 * time.Second}).Run(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func cellsByKey(t testing.TB, cells []matrix.Cell) map[string]matrix.Cell {
	t.Helper()
	m := map[string]matrix.Cell{}
	for _, c := range cells {
		k := c.Model + "/" + c.Target
		if _, dup := m[k]; dup {
			t.Errorf("two cells for %s", k)
		}
		m[k] = c
	}
	return m
}

func models(n int) []string {
	var ms []string
	for i := range n {
		ms = append(ms, fmt.Sprintf("m%03d", i))
	}
	return ms
}

// Jobs go only to workers that have their target; a target no worker has is
// unavailable, naming the workers seen, and falls back along its chain.
func TestJobsGoToWorkersWithTheTarget(t *testing.T) {
	s := startServer(t)
	startWorker(t, s.URL, "w-cpu", []string{"cpu"}, fleettest.Exec("w-cpu"))
	startWorker(t, s.URL, "w-wasm", []string{"wasm"}, fleettest.Exec("w-wasm"))
	_, js := connect(t, s.URL)
	waitAnnounced(t, js, 2) // both are seen: the cuda cells name them
	out := submit(t, s.URL, fleet.Plan{Run: "r1", Models: models(6), Targets: []string{"cpu", "wasm", "cuda"},
		Chains: map[string][]string{"cuda": {"cpu"}}})
	cells := cellsByKey(t, out.Cells)
	if len(cells) != 18 {
		t.Fatalf("%d cells, want 18 (6 models × 3 targets)", len(cells))
	}
	for _, m := range models(6) {
		for _, tg := range []string{"cpu", "wasm"} {
			c := cells[m+"/"+tg]
			if c.Status != result.StatusPass || !strings.Contains(c.Checks[0].Reason, "w-"+tg) {
				t.Errorf("%s/%s: %s %q, want pass run by w-%s", m, tg, c.Status, c.Checks[0].Reason, tg)
			}
		}
		c := cells[m+"/cuda"]
		want := "no worker in the fleet has cuda (workers seen: w-cpu (cpu); w-wasm (wasm))"
		if c.Status != result.StatusUnavailable || c.Reason != want || c.FallsBackTo != "cuda → cpu" {
			t.Errorf("%s/cuda: %s %q falls back %q; want unavailable %q, cuda → cpu", m, c.Status, c.Reason, c.FallsBackTo, want)
		}
	}
	if out.PerWorker["w-cpu"] != 6 || out.PerWorker["w-wasm"] != 6 || out.Jobs != 12 {
		t.Errorf("jobs %d per worker %v; want 12: 6 each", out.Jobs, out.PerWorker)
	}
}

// A job whose target fails on its worker runs on the next target of the chain; the
// failed cell stays the target's, pointing at the fallback, never a pass.
func TestFailedTargetRetriedOnItsChain(t *testing.T) {
	s := startServer(t)
	trivial := fleettest.Exec("w1")
	startWorker(t, s.URL, "w1", []string{"tensorrt", "cuda", "cpu"}, func(ctx context.Context, j fleet.Job) ([]matrix.Cell, error) {
		if j.Target != "cpu" {
			return []matrix.Cell{{Model: j.Model, Target: j.Target, Status: result.StatusError, Reason: "session creation failed on " + j.Target}}, nil
		}
		return trivial(ctx, j)
	})
	out := submit(t, s.URL, fleet.Plan{Run: "r2", Models: []string{"m"}, Targets: []string{"tensorrt"},
		Chains: map[string][]string{"tensorrt": {"cuda", "cpu"}, "cuda": {"cpu"}}})
	cells := cellsByKey(t, out.Cells)
	trt, cuda, cpu := cells["m/tensorrt"], cells["m/cuda"], cells["m/cpu"]
	if trt.Status != result.StatusError || trt.FallsBackTo != "tensorrt → cuda" {
		t.Errorf("tensorrt: %s, falls back %q; want error, tensorrt → cuda", trt.Status, trt.FallsBackTo)
	}
	if cuda.Status != result.StatusError || cuda.FallsBackTo != "cuda → cpu" {
		t.Errorf("cuda: %s, falls back %q; want error, cuda → cpu", cuda.Status, cuda.FallsBackTo)
	}
	if cpu.Status != result.StatusPass {
		t.Errorf("cpu: %s, want pass", cpu.Status)
	}
	if len(cells) != 3 {
		t.Errorf("%d cells, want 3", len(cells))
	}
}

// A result from a worker that never announced itself is rejected; the job's real
// result is taken.
func TestResultOfUnannouncedWorkerRejected(t *testing.T) {
	s := startServer(t)
	nc, js := connect(t, s.URL)
	ctx := context.Background()
	if err := fleet.Setup(ctx, js); err != nil {
		t.Fatal(err)
	}
	// The forged result is in the stream before the job is even submitted.
	forged, _ := json.Marshal(fleet.Result{Job: fleet.Job{ID: fleet.JobID("r3", "m", "cpu"), Run: "r3", Model: "m", Target: "cpu"}, Worker: "rogue",
		Cells: fleet.WireCells([]matrix.Cell{{Model: "m", Target: "cpu", Status: result.StatusPass, Reason: "forged"}})})
	if _, err := js.Publish(ctx, "hwtest.results.r3", forged); err != nil {
		t.Fatal(err)
	}
	_ = nc
	startWorker(t, s.URL, "w1", []string{"cpu"}, func(ctx context.Context, j fleet.Job) ([]matrix.Cell, error) {
		time.Sleep(300 * time.Millisecond) // the forged result is read first
		return fleettest.Exec("w1")(ctx, j)
	})
	out := submit(t, s.URL, fleet.Plan{Run: "r3", Models: []string{"m"}, Targets: []string{"cpu"}})
	c := cellsByKey(t, out.Cells)["m/cpu"]
	if c.Reason == "forged" || !strings.Contains(c.Checks[0].Reason, "w1") {
		t.Errorf("took the cell %+v, want w1's", c)
	}
	if len(out.Rejected) != 1 || !strings.Contains(out.Rejected[0], `"rogue" rejected: that worker never announced itself`) {
		t.Errorf("rejected %q, want the rogue's result", out.Rejected)
	}
}

// A worker whose catalog differs is not given the jobs: the cell says why; and
// beside a worker of the run's catalogs it takes none of them (it pulls only its
// own catalogs' jobs).
func TestWorkerWithOtherCatalogNotUsed(t *testing.T) {
	s := startServer(t)
	startWorker(t, s.URL, "w-old", []string{"cpu"}, fleettest.Exec("w-old"))
	out := submit(t, s.URL, fleet.Plan{Run: "r4", Models: []string{"m"}, Targets: []string{"cpu"}, CatalogSHA256: "newer-catalog"})
	c := cellsByKey(t, out.Cells)["m/cpu"]
	if c.Status != result.StatusUnavailable || !strings.Contains(c.Reason, "w-old (cpu; other catalogs: sha256 test-catalog, this run's newer-catalo: update its checkout)") {
		t.Errorf("cell %s %q", c.Status, c.Reason)
	}

	startWorkerOf(t, s.URL, "w-new", "newer-catalog", []string{"cpu"}, fleettest.Exec("w-new"))
	out = submit(t, s.URL, fleet.Plan{Run: "r5", Models: models(20), Targets: []string{"cpu"}, CatalogSHA256: "newer-catalog"})
	for k, c := range cellsByKey(t, out.Cells) {
		if c.Status != result.StatusPass || !strings.Contains(c.Checks[0].Reason, "w-new") {
			t.Errorf("%s: %s %q, want a pass by w-new", k, c.Status, c.Checks[0].Reason)
		}
	}
	if out.PerWorker["w-old"] != 0 || out.PerWorker["w-new"] != 20 {
		t.Errorf("jobs per worker %v, want all 20 by w-new", out.PerWorker)
	}
}

// A worker of a target that turns up after the run began does not give a
// (model, target) a second cell: the run's answer for it was given (unavailable),
// and a fallback skips it.
func TestLateWorkerAddsNoSecondCell(t *testing.T) {
	s := startServer(t)
	startWorker(t, s.URL, "w-trt", []string{"tensorrt", "cpu"}, func(ctx context.Context, j fleet.Job) ([]matrix.Cell, error) {
		if j.Target == "tensorrt" {
			time.Sleep(time.Second) // meanwhile a cuda worker announces itself
			return []matrix.Cell{{Model: j.Model, Target: j.Target, Status: result.StatusError, Reason: "engine build failed"}}, nil
		}
		return fleettest.Exec("w-trt")(ctx, j)
	})
	go func() {
		time.Sleep(2500 * time.Millisecond) // after the submitter's 2 s wait for cuda
		startWorker(t, s.URL, "w-cuda", []string{"cuda"}, fleettest.Exec("w-cuda"))
	}()
	out := submit(t, s.URL, fleet.Plan{Run: "late", Models: []string{"m"}, Targets: []string{"tensorrt", "cuda"},
		Chains: map[string][]string{"tensorrt": {"cuda", "cpu"}, "cuda": {"cpu"}}})
	cells := cellsByKey(t, out.Cells) // fails on two cells of one (model, target)
	if c := cells["m/tensorrt"]; c.FallsBackTo != "tensorrt → cpu" {
		t.Errorf("tensorrt falls back %q, want tensorrt → cpu (cuda's answer was given)", c.FallsBackTo)
	}
	if c := cells["m/cuda"]; c.Status != result.StatusUnavailable {
		t.Errorf("cuda: %s", c.Status)
	}
	if len(cells) != 3 {
		t.Errorf("%d cells, want 3", len(cells))
	}
}

// A run stopped (Ctrl-C) leaves none of its jobs queued: no worker runs them later
// for nothing, ahead of other runs' jobs.
func TestStoppedRunLeavesNoJobs(t *testing.T) {
	s := startServer(t)
	startWorker(t, s.URL, "w1", []string{"cpu"}, fleettest.Exec("w1"))
	nc, js := connect(t, s.URL)
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	_, err := (&fleet.Submitter{JS: js, NC: nc}).Run(ctx, fleet.Plan{Run: "stop", Models: models(10), Targets: []string{"cpu"}, CatalogSHA256: "test-catalog",
		Payload: func(string, string) []byte { return fleettest.Payload{SleepMS: 1000}.Encode() }})
	if err == nil {
		t.Fatal("the run ended before it was stopped")
	}
	st, err := js.Stream(context.Background(), fleet.JobsStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != 0 {
		t.Errorf("%d jobs left queued after the run stopped, want 0", info.State.Msgs)
	}
}

// A job that takes longer than AckWait stays with its worker (InProgress), not
// redelivered to another while it runs.
func TestLongJobKeptWhileItRuns(t *testing.T) {
	s := startServer(t)
	startWorker(t, s.URL, "w1", []string{"cpu"}, fleettest.Exec("w1"))
	startWorker(t, s.URL, "w2", []string{"cpu"}, fleettest.Exec("w2"))
	nc, js := connect(t, s.URL)
	attempts := map[string]int{}
	var mu sync.Mutex
	sub := &fleet.Submitter{JS: js, NC: nc, Progress: func(p fleet.Progress) {
		mu.Lock()
		defer mu.Unlock()
		if p.Taken {
			attempts[p.Job.ID]++
		}
	}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// AckWait is 1 s (startWorker); the job runs 3.5 s.
	out, err := sub.Run(ctx, fleet.Plan{Run: "long", Models: []string{"m"}, Targets: []string{"cpu"}, CatalogSHA256: "test-catalog",
		Payload: func(string, string) []byte { return fleettest.Payload{SleepMS: 3500}.Encode() }})
	if err != nil {
		t.Fatal(err)
	}
	if c := cellsByKey(t, out.Cells)["m/cpu"]; c.Status != result.StatusPass {
		t.Errorf("cell %s %q", c.Status, c.Reason)
	}
	time.Sleep(200 * time.Millisecond) // the events of a redelivery would be in by now
	mu.Lock()
	defer mu.Unlock()
	if n := attempts[fleet.JobID("long", "m", "cpu")]; n != 1 {
		t.Errorf("the job was taken %d times, want once", n)
	}
}

// A job with two results (its first worker stored one and died before the ack; the
// job ran again) counts once: the first.
func TestSecondResultOfAJobIgnored(t *testing.T) {
	s := startServer(t)
	_, js, kv := workersBucket(t, s.URL)
	ctx := context.Background()
	// w-dead announced itself, stored the result of job a twice (its publish
	// retried after a lost acknowledgement, on a connection of another id) and died.
	ann, _ := json.Marshal(fleet.Announcement{ID: "w-dead", Targets: []string{"cpu"}, CatalogSHA256: "test-catalog", Stopped: true})
	if _, err := kv.Put(ctx, "w-dead", ann); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		res, _ := json.Marshal(fleet.Result{Job: fleet.Job{ID: fleet.JobID("dup", "a", "cpu"), Run: "dup", Model: "a", Target: "cpu"}, Worker: "w-dead",
			Cells: fleet.WireCells([]matrix.Cell{{Model: "a", Target: "cpu", Status: result.StatusPass, Reason: "first"}})})
		if _, err := js.Publish(ctx, "hwtest.results.dup", res); err != nil {
			t.Fatal(err)
		}
	}
	startWorker(t, s.URL, "w1", []string{"cpu"}, func(ctx context.Context, j fleet.Job) ([]matrix.Cell, error) {
		time.Sleep(500 * time.Millisecond) // b ends after both results of a are read
		return fleettest.Exec("w1")(ctx, j)
	})
	out := submit(t, s.URL, fleet.Plan{Run: "dup", Models: []string{"a", "b"}, Targets: []string{"cpu"}})
	cells := cellsByKey(t, out.Cells)
	if cells["a/cpu"].Reason != "first" || len(cells) != 2 {
		t.Errorf("cells %v", cells)
	}
	if out.PerWorker["w-dead"] != 1 {
		t.Errorf("w-dead's results counted %d times, want once", out.PerWorker["w-dead"])
	}
}

// Jobs whose target has lost every worker end, after Orphaned, as unavailable
// saying so: the run does not wait for ever.
func TestJobsOfALostTargetEnd(t *testing.T) {
	s := startServer(t)
	nc, js, kv := workersBucket(t, s.URL)
	ctx := context.Background()
	// w-gpu announced cuda and then stopped sending heartbeats (its machine died).
	ann, _ := json.Marshal(fleet.Announcement{ID: "w-gpu", Targets: []string{"cuda"}, CatalogSHA256: "test-catalog"})
	kv.Put(ctx, "w-gpu", ann)
	startWorker(t, s.URL, "w-cpu", []string{"cpu"}, fleettest.Exec("w-cpu"))
	waitAnnounced(t, js, 2)   // the fallback needs w-cpu live (a slow start here failed 1 run in 10)
	kv.Put(ctx, "w-gpu", ann) // its last heartbeat: now
	sub := &fleet.Submitter{JS: js, NC: nc, Orphaned: 2 * time.Second, Silent: time.Second}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	start := time.Now()
	out, err := sub.Run(ctx, fleet.Plan{Run: "lost", Models: []string{"m"}, Targets: []string{"cuda"}, CatalogSHA256: "test-catalog",
		Chains: map[string][]string{"cuda": {"cpu"}}})
	if err != nil {
		t.Fatal(err)
	}
	cells := cellsByKey(t, out.Cells)
	c := cells["m/cuda"]
	if c.Status != result.StatusUnavailable || !strings.Contains(c.Reason, "w-gpu (cuda; last heard") || !strings.Contains(c.Reason, "was given up") || c.FallsBackTo != "cuda → cpu" {
		t.Errorf("cuda: %s %q falls back %q", c.Status, c.Reason, c.FallsBackTo)
	}
	if cells["m/cpu"].Status != result.StatusPass {
		t.Errorf("cpu: %s", cells["m/cpu"].Status)
	}
	t.Logf("ended after %v", time.Since(start).Round(time.Millisecond))
}

// A worker with several targets takes the jobs of one without waiting on the
// others' empty queues each time (it did: 1 job/s with 5 targets).
func TestWorkerWithManyTargetsNotHeldUpByEmptyOnes(t *testing.T) {
	s := startServer(t)
	startWorker(t, s.URL, "w1", []string{"cpu", "cuda", "rocm", "wasm", "webgpu"}, fleettest.Exec("w1"))
	start := time.Now()
	out := submit(t, s.URL, fleet.Plan{Run: "r5", Models: models(20), Targets: []string{"cuda"}})
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("20 trivial jobs of one target took %v, want well under 5s", took.Round(time.Millisecond))
	}
	if out.PerWorker["w1"] != 20 {
		t.Errorf("w1 ran %d jobs, want 20", out.PerWorker["w1"])
	}
}

// A client that never announced itself takes a job, acknowledges it and sends a
// result: the result is rejected and the job queued again for a real worker,
// instead of the run waiting for it for ever.
func TestJobTakenByUnannouncedClientRunsAgain(t *testing.T) {
	s := startServer(t)
	nc, js := connect(t, s.URL)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := fleet.Setup(ctx, js); err != nil {
		t.Fatal(err)
	}
	rogue, err := fleet.TargetConsumer(ctx, js, "test-catalog", "cpu")
	if err != nil {
		t.Fatal(err)
	}
	took := make(chan struct{})
	go func() {
		defer close(took)
		for ctx.Err() == nil {
			batch, err := rogue.Fetch(1, jetstream.FetchMaxWait(time.Second))
			if err != nil {
				continue
			}
			for m := range batch.Messages() {
				var j fleet.Job
				json.Unmarshal(m.Data(), &j)
				m.DoubleAck(ctx)
				res, _ := json.Marshal(fleet.Result{Job: j, Worker: "rogue",
					Cells: fleet.WireCells([]matrix.Cell{{Model: j.Model, Target: j.Target, Status: result.StatusPass, Reason: "forged"}})})
				js.Publish(ctx, "hwtest.results."+j.Run, res)
				return
			}
		}
	}()
	// A worker announced, so the submitter submits; it joins the queue only once
	// the rogue has the job.
	kv, _ := js.KeyValue(ctx, fleet.WorkersBucket)
	ann, _ := json.Marshal(fleet.Announcement{ID: "w1", Targets: []string{"cpu"}, CatalogSHA256: "test-catalog"})
	kv.Put(ctx, "w1", ann)
	go func() {
		<-took
		startWorker(t, s.URL, "w1", []string{"cpu"}, fleettest.Exec("w1"))
	}()
	out, err := (&fleet.Submitter{JS: js, NC: nc}).Run(ctx, fleet.Plan{Run: "rogue", Models: []string{"m"}, Targets: []string{"cpu"}, CatalogSHA256: "test-catalog"})
	if err != nil {
		t.Fatal(err)
	}
	c := cellsByKey(t, out.Cells)["m/cpu"]
	if c.Reason == "forged" || len(c.Checks) == 0 || !strings.Contains(c.Checks[0].Reason, "w1") {
		t.Errorf("cell %+v, want w1's", c)
	}
	if len(out.Rejected) != 1 {
		t.Errorf("rejected %q, want the rogue's result", out.Rejected)
	}
}

// `hwtest serve`'s recorder stores the matrix the submitter made: the same cells,
// the fallbacks the submitter gave failed targets, the workers as host and
// detection.
func TestRecorderStoresTheSubmittersMatrix(t *testing.T) {
	s := startServer(t)
	startWorker(t, s.URL, "w1", []string{"tensorrt", "cpu"}, func(ctx context.Context, j fleet.Job) ([]matrix.Cell, error) {
		if j.Target == "tensorrt" {
			return []matrix.Cell{{Model: j.Model, Target: j.Target, Status: result.StatusError, Reason: "engine build failed"}}, nil
		}
		return fleettest.Exec("w1")(ctx, j)
	})
	out := submit(t, s.URL, fleet.Plan{Run: "rec", Models: []string{"m"}, Targets: []string{"tensorrt", "cuda"},
		Chains: map[string][]string{"tensorrt": {"cpu"}, "cuda": {"cpu"}}})
	want := fleet.Assemble("rec", []string{"m"}, []string{"tensorrt", "cuda", "cpu"}, out.Cells, out.Workers, time.Now())

	_, js := connect(t, s.URL)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	stored := make(chan matrix.Matrix, 1)
	go (&fleet.Recorder{JS: js, Store: func(_ context.Context, m matrix.Matrix) error {
		stored <- m
		cancel()
		return nil
	}}).Run(ctx)
	var got matrix.Matrix
	select {
	case got = <-stored:
	case <-ctx.Done():
		t.Fatal("the recorder stored nothing")
	}
	byKey := cellsByKey(t, got.Cells)
	for _, w := range want.Cells {
		g := byKey[w.Model+"/"+w.Target]
		if g.Status != w.Status || g.FallsBackTo != w.FallsBackTo || g.Reason != w.Reason {
			t.Errorf("%s/%s: stored %s %q falls back %q; the submitter's %s %q falls back %q", w.Model, w.Target, g.Status, g.Reason, g.FallsBackTo, w.Status, w.Reason, w.FallsBackTo)
		}
	}
	if len(got.Cells) != len(want.Cells) || got.Host != "fleet: w1" || len(got.Detection) == 0 || got.RunID != "rec" {
		t.Errorf("stored %d cells (want %d), host %q, %d detections, run %q", len(got.Cells), len(want.Cells), got.Host, len(got.Detection), got.RunID)
	}
}
