package fleet

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/hwtest/hwtest/matrix"
	"github.com/hwtest/hwtest/result"
)

// Plan is what a run submits: every (model, target) of Models × Targets.
type Plan struct {
	Run     string
	Models  []string
	Targets []string
	// Chains are each target's fallback chain after itself ("tensorrt": cuda,
	// cpu), from hardware.yaml.
	Chains        map[string][]string
	CatalogSHA256 string
	ModelSHA256   map[string]string // by model id
	// ModelFiles are the submitter's model files by sha256, which a worker without
	// one fetches through the fleet while the run lasts.
	ModelFiles map[string]ModelFile
	Timeout    time.Duration
	// Settings go with every job (see MeasurementSettings).
	Settings map[string]string
	// Payload, when set, gives each job's payload (tests and benchmarks).
	Payload func(model, target string) []byte
}

// Submitter runs a plan on the fleet.
type Submitter struct {
	JS  jetstream.JetStream
	NC  *nats.Conn
	Log io.Writer
	// WaitWorkers is how long to wait for a first live worker; 5s when 0.
	WaitWorkers time.Duration
	// Orphaned is how long a job waits with no live worker for its target before
	// its cell says so (the workers that had it all died); 2 minutes when 0.
	Orphaned time.Duration
	// Silent is how long a worker may go without a heartbeat before it is taken
	// for gone; 15s when 0 (workers beat every 2 s).
	Silent time.Duration
	// Progress hears of each job taken and each result.
	Progress func(Progress)
}

// Progress is one step of a fleet run, for the submitter's display.
type Progress struct {
	Worker  string
	Job     Job
	Taken   bool          // taken by Worker (attempt Attempt); else finished
	Cells   []matrix.Cell // when finished
	Attempt int
}

// Outcome is a fleet run's result.
type Outcome struct {
	Cells   []matrix.Cell
	Workers []Announcement // every worker seen, live or not
	// Jobs per worker that published the accepted result.
	PerWorker map[string]int
	Rejected  []string // results refused: from workers that never announced themselves
	Jobs      int
}

// Run submits the plan's jobs and collects their results until each job has one
// (or ctx ends: the cells so far are returned with ctx's error).
func (s *Submitter) Run(ctx context.Context, p Plan) (*Outcome, error) {
	if s.Log == nil {
		s.Log = io.Discard
	}
	if s.WaitWorkers <= 0 {
		s.WaitWorkers = 5 * time.Second
	}
	if s.Orphaned <= 0 {
		s.Orphaned = 2 * time.Minute
	}
	if s.Silent <= 0 {
		s.Silent = 15 * time.Second
	}
	if err := Setup(ctx, s.JS); err != nil {
		return nil, err
	}
	kv, err := s.JS.KeyValue(ctx, WorkersBucket)
	if err != nil {
		return nil, err
	}
	r := &fleetRun{s: s, p: p, kv: kv, out: &Outcome{PerWorker: map[string]int{}},
		cells: map[string][]matrix.Cell{}, pending: map[string]Job{}, planned: map[string]bool{}, own: map[string]bool{}, announced: map[string]bool{}}
	if err := r.waitWorkers(ctx); err != nil {
		return nil, err
	}
	defer r.purgeJobs()
	// Results and events are subscribed to before the first job is out.
	cons, err := s.JS.OrderedConsumer(ctx, ResultsStream, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{resultSubject(p.Run)}, DeliverPolicy: jetstream.DeliverAllPolicy,
	})
	if err != nil {
		return nil, fmt.Errorf("fleet: reading results: %w", err)
	}
	results := make(chan jetstream.Msg, 256)
	cc, err := cons.Consume(func(m jetstream.Msg) { results <- m })
	if err != nil {
		return nil, fmt.Errorf("fleet: reading results: %w", err)
	}
	defer cc.Stop()
	if s.Progress != nil {
		sub, err := s.NC.Subscribe(eventSubject(p.Run), func(m *nats.Msg) {
			var ev Event
			if json.Unmarshal(m.Data, &ev) == nil {
				r.mu.Lock()
				j, ok := r.pending[ev.Job]
				r.mu.Unlock()
				if ok {
					s.Progress(Progress{Worker: ev.Worker, Job: j, Taken: true, Attempt: ev.Attempt})
				}
			}
		})
		if err == nil {
			defer sub.Unsubscribe()
		}
	}
	if len(p.ModelFiles) > 0 {
		sub, err := serveModels(ctx, s.JS, s.NC, p.Run, p.ModelFiles)
		if err != nil {
			return nil, fmt.Errorf("fleet: serving model files: %w", err)
		}
		defer sub.Unsubscribe()
	}
	var jobs []Job
	for _, m := range p.Models {
		for _, t := range p.Targets {
			jobs = append(jobs, r.jobFor(m, t)...)
		}
	}
	if err := r.submit(ctx, jobs); err != nil {
		return r.outcome(), err
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for len(r.pending) > 0 {
		select {
		case <-ctx.Done():
			return r.outcome(), ctx.Err()
		case m := <-results:
			more := r.take(ctx, m)
			if err := r.submit(ctx, more); err != nil {
				return r.outcome(), err
			}
		case <-tick.C:
			more := r.orphans(ctx)
			if err := r.submit(ctx, more); err != nil {
				return r.outcome(), err
			}
		}
	}
	out := r.outcome()
	r.publishManifest(ctx)
	return out, nil
}

type fleetRun struct {
	s  *Submitter
	p  Plan
	kv jetstream.KeyValue

	mu      sync.Mutex
	pending map[string]Job // job id → job, until its result arrives
	planned map[string]bool
	cells   map[string][]matrix.Cell // by job id, or another key for the submitter's own
	own     map[string]bool          // keys of the cells the submitter made
	order   []string
	out     *Outcome
	// workers: the announcements read last, by id; announced caches which ids
	// have an entry (results of others are rejected).
	workers   map[string]Announcement
	announced map[string]bool
	// noWorkerSince: when each target of a pending job was first seen without a
	// live worker.
	noWorkerSince map[string]time.Time
}

// readWorkers reads every announcement.
func (r *fleetRun) readWorkers(ctx context.Context) error {
	lister, err := r.kv.ListKeys(ctx)
	if err != nil {
		return err
	}
	ws := map[string]Announcement{}
	for k := range lister.Keys() {
		e, err := r.kv.Get(ctx, k)
		if err != nil {
			continue
		}
		var a Announcement
		if json.Unmarshal(e.Value(), &a) == nil {
			// The server's time of the last heartbeat, not the worker's clock.
			a.Heartbeat = e.Created()
			ws[k] = a
			r.announced[k] = true
		}
	}
	r.workers = ws
	return nil
}

func (r *fleetRun) live(a Announcement) bool {
	return !a.Stopped && time.Since(a.Heartbeat) < r.s.Silent
}

// waitWorkers waits, up to WaitWorkers, until every target of the plan has a live
// worker: workers started with the run build their suite before they announce
// themselves, and a target declared unavailable now stays so for the run.
func (r *fleetRun) waitWorkers(ctx context.Context) error {
	deadline := time.Now().Add(r.s.WaitWorkers)
	for {
		if err := r.readWorkers(ctx); err != nil {
			return fmt.Errorf("fleet: reading the workers: %w", err)
		}
		if !slices.ContainsFunc(r.p.Targets, func(t string) bool { return !r.has(t) }) || time.Now().After(deadline) {
			return nil
		}
		sleep(ctx, 250*time.Millisecond)
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
}

// has says whether a live worker of the plan's catalog has target.
func (r *fleetRun) has(target string) bool {
	for _, a := range r.workers {
		if r.live(a) && a.CatalogSHA256 == r.p.CatalogSHA256 && slices.Contains(a.Targets, target) {
			return true
		}
	}
	return false
}

// missing says why no worker runs target: the workers seen and what they have.
func (r *fleetRun) missing(target string) string {
	var seen []string
	for _, id := range slices.Sorted(maps.Keys(r.workers)) {
		a := r.workers[id]
		if time.Since(a.Heartbeat) > 24*time.Hour {
			continue // gone long ago: not worth naming (the bucket keeps it a week)
		}
		desc := id + " (" + strings.Join(a.Targets, ", ")
		switch {
		case a.Stopped:
			desc += "; stopped"
		case !r.live(a):
			desc += fmt.Sprintf("; last heard %s ago", time.Since(a.Heartbeat).Round(time.Second))
		}
		if a.CatalogSHA256 != r.p.CatalogSHA256 && slices.Contains(a.Targets, target) {
			desc += "; other catalogs: sha256 " + short(a.CatalogSHA256) + ", this run's " + short(r.p.CatalogSHA256) + ": update its checkout"
		}
		seen = append(seen, desc+")")
	}
	if len(seen) == 0 {
		return "no worker in the fleet has " + target + " (no worker seen: start `hwtest worker --nats URL` on a machine that has it)"
	}
	return "no worker in the fleet has " + target + " (workers seen: " + strings.Join(seen, "; ") + ")"
}

func short(sum string) string {
	if len(sum) > 12 {
		return sum[:12]
	}
	return sum
}

// jobFor is the job of (model, target), or, when no worker has target, its cell
// saying so and the job of the first target of its chain some worker has.
func (r *fleetRun) jobFor(model, target string) []Job {
	if r.has(target) {
		return r.plan(model, target, "")
	}
	c := matrix.Cell{Model: model, Target: target, Status: result.StatusUnavailable, Reason: r.missing(target),
		Checks: []matrix.CheckResult{{Name: "fleet", Status: result.StatusUnavailable, Reason: r.missing(target)}}}
	// The cell is this run's answer for (model, target): a worker of it that
	// turns up later does not add a second one (as another target's fallback).
	r.planned[JobID(r.p.Run, model, target)] = true
	jobs := r.fallback(&c)
	r.recordOwn(model+"/"+target, c)
	return jobs
}

// fallback points c at the first target of its chain a worker has, and plans that
// job unless the run has it already.
func (r *fleetRun) fallback(c *matrix.Cell) []Job {
	for _, t := range r.p.Chains[c.Target] {
		if r.has(t) && !r.own[c.Model+"/"+t] {
			c.FallsBackTo = c.Target + " → " + t
			return r.plan(c.Model, t, c.Target)
		}
	}
	return nil
}

func (r *fleetRun) plan(model, target, fallbackFor string) []Job {
	id := JobID(r.p.Run, model, target)
	if r.planned[id] {
		return nil
	}
	r.planned[id] = true
	j := Job{ID: id, Run: r.p.Run, Model: model, Target: target, FallbackFor: fallbackFor,
		CatalogSHA256: r.p.CatalogSHA256, ModelSHA256: r.p.ModelSHA256[model], Timeout: r.p.Timeout, Settings: r.p.Settings}
	j.ModelFixture = r.p.ModelFiles[j.ModelSHA256].Fixture
	if r.p.Payload != nil {
		j.Payload = r.p.Payload(model, target)
	}
	return []Job{j}
}

func (r *fleetRun) record(key string, cells []matrix.Cell) {
	if _, ok := r.cells[key]; !ok {
		r.order = append(r.order, key)
	}
	r.cells[key] = cells
}

// recordOwn keeps a cell the submitter made itself (no worker ran it).
func (r *fleetRun) recordOwn(key string, c matrix.Cell) {
	r.own[key] = true
	r.record(key, []matrix.Cell{c})
}

// submit publishes jobs, each with its id as Nats-Msg-Id (a retried publish does
// not queue a job twice). Publishes that fail (the server restarting) are retried
// until ctx ends.
func (r *fleetRun) submit(ctx context.Context, jobs []Job) error {
	if len(jobs) == 0 {
		return nil
	}
	r.mu.Lock()
	for _, j := range jobs {
		r.pending[j.ID] = j
	}
	r.mu.Unlock()
	r.out.Jobs += len(jobs)
	var retry []Job
	futures := map[string]jetstream.PubAckFuture{}
	for _, j := range jobs {
		b, err := json.Marshal(j)
		if err != nil {
			return err
		}
		f, err := r.s.JS.PublishAsync(jobSubject(j.CatalogSHA256, j.Target, j.Run), b, jetstream.WithMsgID(j.ID))
		if err != nil {
			retry = append(retry, j)
			continue
		}
		futures[j.ID] = f
	}
	select {
	case <-r.s.JS.PublishAsyncComplete():
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(30 * time.Second): // stalled: the ones not acknowledged are retried
	}
	for _, j := range jobs {
		f, ok := futures[j.ID]
		if !ok {
			continue
		}
		select {
		case <-f.Ok():
		default:
			retry = append(retry, j)
		}
	}
	for _, j := range retry {
		if err := r.publish(ctx, j, j.ID); err != nil {
			return err
		}
	}
	return nil
}

// publish queues j with message id msgID, retrying while the server is away.
func (r *fleetRun) publish(ctx context.Context, j Job, msgID string) error {
	b, err := json.Marshal(j)
	if err != nil {
		return err
	}
	for {
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		_, err := r.s.JS.Publish(pctx, jobSubject(j.CatalogSHA256, j.Target, j.Run), b, jetstream.WithMsgID(msgID))
		cancel()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("fleet: submitting %s: %w", j.ID, err)
		}
		fmt.Fprintf(r.s.Log, "fleet: submitting %s: %v (retrying)\n", j.ID, err)
		sleep(ctx, 250*time.Millisecond)
	}
}

// purgeJobs removes the run's jobs still queued when it ends (finished, stopped or
// failed): jobs given up, second copies, or all of them after Ctrl-C. No later
// worker runs them for nothing, ahead of other runs' jobs.
func (r *fleetRun) purgeJobs() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := r.s.JS.Stream(ctx, JobsStream)
	if err == nil {
		err = st.Purge(ctx, jetstream.WithPurgeSubject(runJobs(r.p.Run)))
	}
	if err != nil {
		fmt.Fprintf(r.s.Log, "fleet: the run's queued jobs were not removed (workers may still run them, for nothing): %v\n", err)
	}
}

// take accepts one result: the first for its job from an announced worker. It
// returns the fallback jobs the result calls for.
func (r *fleetRun) take(ctx context.Context, m jetstream.Msg) []Job {
	var res Result
	if err := json.Unmarshal(m.Data(), &res); err != nil {
		fmt.Fprintf(r.s.Log, "fleet: dropping an unreadable result: %v\n", err)
		return nil
	}
	r.mu.Lock()
	job, pending := r.pending[res.Job.ID]
	r.mu.Unlock()
	if !pending {
		return nil // a second result of a job (its first worker died after storing it), or another run's
	}
	if !r.announced[res.Worker] {
		r.readWorkers(ctx)
		if !r.announced[res.Worker] {
			msg := fmt.Sprintf("result of %s from %q rejected: that worker never announced itself", res.Job.ID, res.Worker)
			fmt.Fprintln(r.s.Log, "fleet: "+msg)
			r.out.Rejected = append(r.out.Rejected, msg)
			// Whoever sent it may have taken (and acknowledged) the job: queue it
			// again, or the run would wait for it for ever. A second result, if
			// the job was running elsewhere too, is dropped.
			// The job as this run made it, not as the sender tells it.
			if err := r.publish(ctx, job, fmt.Sprintf("%s#rejected-%d", job.ID, len(r.out.Rejected))); err != nil {
				fmt.Fprintf(r.s.Log, "fleet: %v\n", err)
			}
			return nil
		}
	}
	r.mu.Lock()
	delete(r.pending, res.Job.ID)
	r.mu.Unlock()
	res.Job = job // as this run made it
	r.out.PerWorker[res.Worker]++
	cells := MatrixCells(res.Cells)
	var more []Job
	for i := range cells {
		c := &cells[i]
		if c.Model != res.Job.Model || c.Target != res.Job.Target {
			continue
		}
		if c.Status == result.StatusError || c.Status == result.StatusUnavailable {
			// The target failed on its worker: the model runs on the next target of
			// the chain, and that target's cell is reported, never this one as a pass.
			more = append(more, r.fallback(c)...)
		}
	}
	r.record(res.Job.ID, cells)
	if r.s.Progress != nil {
		r.s.Progress(Progress{Worker: res.Worker, Job: res.Job, Cells: cells, Attempt: res.Attempt})
	}
	return more
}

// orphans ends the jobs whose target has had no live worker for Orphaned.
func (r *fleetRun) orphans(ctx context.Context) []Job {
	if err := r.readWorkers(ctx); err != nil {
		return nil
	}
	if r.noWorkerSince == nil {
		r.noWorkerSince = map[string]time.Time{}
	}
	r.mu.Lock()
	pending := make([]Job, 0, len(r.pending))
	for _, j := range r.pending {
		pending = append(pending, j)
	}
	r.mu.Unlock()
	var more []Job
	for _, j := range pending {
		if r.has(j.Target) {
			delete(r.noWorkerSince, j.Target)
			continue
		}
		since, ok := r.noWorkerSince[j.Target]
		if !ok {
			r.noWorkerSince[j.Target] = time.Now()
			continue
		}
		if time.Since(since) < r.s.Orphaned {
			continue
		}
		reason := fmt.Sprintf("%s; the job waited %v for one and was given up", r.missing(j.Target), r.s.Orphaned)
		c := matrix.Cell{Model: j.Model, Target: j.Target, Status: result.StatusUnavailable, Reason: reason,
			Checks: []matrix.CheckResult{{Name: "fleet", Status: result.StatusUnavailable, Reason: reason}}}
		more = append(more, r.fallback(&c)...)
		r.mu.Lock()
		delete(r.pending, j.ID)
		r.mu.Unlock()
		r.recordOwn("orphaned:"+j.ID, c)
	}
	return more
}

func (r *fleetRun) outcome() *Outcome {
	out := *r.out
	out.Cells = nil
	for _, k := range r.order {
		out.Cells = append(out.Cells, r.cells[k]...)
	}
	// The workers of the run: those that gave a result, and those live now (a
	// worker gone for days is no part of it).
	for _, id := range slices.Sorted(maps.Keys(r.workers)) {
		if a := r.workers[id]; r.out.PerWorker[id] > 0 || r.live(a) {
			out.Workers = append(out.Workers, a)
		}
	}
	return &out
}

// publishManifest tells `hwtest serve` the run ended, for its history.
func (r *fleetRun) publishManifest(ctx context.Context) {
	m := Manifest{Run: r.p.Run, Models: r.p.Models, Targets: r.p.Targets, Ended: time.Now().UTC(),
		Fallbacks: map[string]string{}, Workers: r.outcome().Workers}
	for _, k := range r.order {
		if r.own[k] {
			m.Cells = append(m.Cells, WireCells(r.cells[k])...)
			continue
		}
		m.Jobs = append(m.Jobs, k)
		for _, c := range r.cells[k] {
			if c.FallsBackTo != "" {
				m.Fallbacks[c.Model+"/"+c.Target] = c.FallsBackTo
			}
		}
	}
	b, err := json.Marshal(m)
	if err == nil {
		_, err = r.s.JS.Publish(ctx, runSubject(r.p.Run), b)
	}
	if err != nil {
		fmt.Fprintf(r.s.Log, "fleet: the run's manifest was not published (hwtest serve will not store it): %v\n", err)
	}
}
