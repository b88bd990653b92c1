package fleet_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hwtest/hwtest/fleet"
	"github.com/hwtest/hwtest/internal/fleettest"
	"github.com/hwtest/hwtest/result"
)

// BenchmarkQueueThroughput times trivial jobs end to end through a real embedded
// server: the submitter publishes them, in-process workers (each on its own
// connection, running the fleet's worker code) take, run and acknowledge them, and
// the submitter collects every result. jobs/s is what the queue itself sustains:
// a real job (a suite process) takes seconds, so the fleet needs far less.
func BenchmarkQueueThroughput(b *testing.B) {
	all := []string{"cpu", "cuda", "rocm", "wasm", "webgpu"}
	for _, bc := range []struct {
		name    string
		workers int
		has     []string // each worker's targets
		jobs    []string // the plan's targets
		models  int
	}{
		{"workers=1", 1, all[:1], all[:1], 2000},
		{"workers=4", 4, all[:1], all[:1], 2000},
		{"workers=16", 16, all[:1], all[:1], 2000},
		// A worker with 5 targets rotates its Fetch over their consumers: jobs of
		// one target only, and jobs spread over all five. An idle worker waits
		// 250 ms on each in turn, so a run of one target starts up to 1 s late;
		// runs back to back (-benchtime above 1x) hit that worst case each time,
		// as every worker went idle at the same moment.
		{"workers=4/targets=5/jobs-on-1", 4, all, all[:1], 2000},
		{"workers=4/targets=5/jobs-on-5", 4, all, all, 400},
	} {
		b.Run(bc.name, func(b *testing.B) {
			s := startServer(b)
			for i := range bc.workers {
				id := fmt.Sprintf("w%d", i)
				startWorker(b, s.URL, id, bc.has, fleettest.Exec(id))
			}
			_, js := connect(b, s.URL)
			waitAnnounced(b, js, bc.workers)
			jobs := 0
			b.ResetTimer()
			for i := range b.N {
				out := submit(b, s.URL, fleet.Plan{Run: fmt.Sprintf("bench%d", i), Models: models(bc.models), Targets: bc.jobs})
				if want := bc.models * len(bc.jobs); len(out.Cells) != want {
					b.Fatalf("%d cells, want %d", len(out.Cells), want)
				}
				jobs += len(out.Cells)
			}
			b.ReportMetric(float64(jobs)/b.Elapsed().Seconds(), "jobs/s")
		})
	}
}

// BenchmarkThousandWorkers: 1,000 workers of one target, each on its own
// connection with the default heartbeat (2 s, 500 KV puts/s in all) and AckWait,
// as a fleet of 1,000 machines would be, all in this process with the server.
// Every idle worker keeps a pull request waiting on the target's consumer; none
// may be refused (a refused worker polls instead of waiting).
func BenchmarkThousandWorkers(b *testing.B) {
	const n = 1000
	s := startServer(b)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	b.Cleanup(func() { cancel(); wg.Wait() })
	var logMu sync.Mutex
	logs := &strings.Builder{}
	for i := range n {
		nc, js := connect(b, s.URL)
		id := fmt.Sprintf("w%04d", i)
		w := &fleet.Worker{JS: js, NC: nc, Exec: fleettest.Exec(id), Log: lockedWriter{&logMu, logs},
			Announce: fleet.Announcement{ID: id, Host: "bench", Targets: []string{"cpu"}, CatalogSHA256: "test-catalog"}}
		wg.Go(func() {
			if err := w.Run(ctx); err != nil {
				b.Errorf("worker %s: %v", id, err)
			}
		})
	}
	_, js := connect(b, s.URL)
	waitAnnounced(b, js, n)
	time.Sleep(500 * time.Millisecond) // every worker waits on the consumer
	jobs := 0
	b.ResetTimer()
	for i := range b.N {
		out := submit(b, s.URL, fleet.Plan{Run: fmt.Sprintf("bench%d", i), Models: models(2000), Targets: []string{"cpu"}})
		jobs += len(out.Cells)
	}
	b.ReportMetric(float64(jobs)/b.Elapsed().Seconds(), "jobs/s")
	b.StopTimer()
	logMu.Lock()
	defer logMu.Unlock()
	for line := range strings.Lines(logs.String()) {
		if strings.Contains(line, "fetching from") {
			b.Errorf("%d workers were refused a pull request, e.g. %s", strings.Count(logs.String(), "fetching from"), line)
			break
		}
	}
}

// announcement is a worker's entry as a real one looks: a machine with a few
// targets, their detection and versions (about 1 KB of JSON).
func announcement(id string) []byte {
	a := fleet.Announcement{ID: id, Host: "host-" + id, Targets: []string{"cpu", "cuda", "tensorrt"}, CatalogSHA256: strings.Repeat("c", 64),
		Versions: map[string]string{"hwtest": strings.Repeat("0", 40), "onnxruntime": "1.30.0", "go": "go1.26"}, Started: time.Now().UTC()}
	for _, t := range a.Targets {
		a.Detection = append(a.Detection, result.Detected{Target: t, Available: true, Name: "the device of " + t + " (driver 570.86)",
			Features: []string{"avx2", "avx512f", "avx512_vnni", "fma"}})
	}
	a.Heartbeat = time.Now().UTC()
	bs, _ := json.Marshal(a)
	return bs
}

// BenchmarkHeartbeats: 1,000 workers' heartbeats as 1,000 goroutines on one
// connection, each putting its announcement into the workers' bucket, all at once
// (a round); and a submitter's read of the 1,000 entries, which it does every
// second. A fleet of 1,000 workers beating every 2 s needs 500 puts/s.
func BenchmarkHeartbeats(b *testing.B) {
	const n = 1000
	s := startServer(b)
	_, js := connect(b, s.URL)
	ctx := context.Background()
	if err := fleet.Setup(ctx, js); err != nil {
		b.Fatal(err)
	}
	kv, err := js.KeyValue(ctx, fleet.WorkersBucket)
	if err != nil {
		b.Fatal(err)
	}
	entries := make([][]byte, n)
	for i := range n {
		entries[i] = announcement(fmt.Sprintf("w%04d", i))
	}
	b.Run("put-1000", func(b *testing.B) {
		for range b.N {
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() {
					if _, err := kv.Put(ctx, fmt.Sprintf("w%04d", i), entries[i]); err != nil {
						b.Error(err)
					}
				})
			}
			wg.Wait()
		}
		b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "puts/s")
	})
	b.Run("read-1000", func(b *testing.B) {
		for range b.N {
			got, err := fleet.ReadWorkers(ctx, kv)
			if err != nil || got != n {
				b.Fatalf("read %d announcements (%v), want %d", got, err, n)
			}
		}
	})
}
