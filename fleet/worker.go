package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/hwtest/hwtest/matrix"
	"github.com/hwtest/hwtest/result"
)

// Announcement is a worker's entry in the workers' bucket, rewritten every heartbeat.
type Announcement struct {
	ID   string `json:"id"`
	Host string `json:"host"`
	// Targets are the ones its probes found: the only jobs it takes.
	Targets   []string          `json:"targets"`
	Detection []result.Detected `json:"detection,omitempty"`
	// CatalogSHA256: the catalogs it runs; jobs of other catalogs are refused.
	CatalogSHA256 string            `json:"catalog_sha256"`
	Versions      map[string]string `json:"versions,omitempty"` // hwtest commit, ORT, Go
	Started       time.Time         `json:"started"`
	Heartbeat     time.Time         `json:"heartbeat"`
	Stopped       bool              `json:"stopped,omitempty"` // said goodbye
}

// Executor runs one job and returns its cells (a failing model is failing cells,
// not an error). An error is the job's result, an error cell: a worker that will
// not run a job (its catalogs or model file differ) says so in the cell rather than
// handing the job back, which could go round the fleet for ever.
type Executor func(ctx context.Context, j Job) ([]matrix.Cell, error)

// Worker takes jobs of its targets one at a time.
type Worker struct {
	JS         jetstream.JetStream
	NC         *nats.Conn
	Announce   Announcement
	Exec       Executor
	Queue      QueueOptions
	MaxCrashes int           // a job delivered more often than this ends as "crashed N workers"; DefaultMaxCrashes when 0
	Heartbeat  time.Duration // 2s when 0
	Log        io.Writer
}

// Run announces the worker and runs jobs until ctx ends. A job running then is
// handed back (Nak) for another worker, not finished.
func (w *Worker) Run(ctx context.Context) error {
	if w.MaxCrashes <= 0 {
		w.MaxCrashes = DefaultMaxCrashes
	}
	if w.Heartbeat <= 0 {
		w.Heartbeat = 2 * time.Second
	}
	if w.Log == nil {
		w.Log = io.Discard
	}
	if len(w.Announce.Targets) == 0 {
		return errors.New("worker: no target is available on this machine: nothing to take")
	}
	if err := Setup(ctx, w.JS); err != nil {
		return err
	}
	kv, err := w.JS.KeyValue(ctx, WorkersBucket)
	if err != nil {
		return fmt.Errorf("worker: %w", err)
	}
	consumers, ackWait, err := w.openConsumers(ctx)
	if err != nil {
		return err
	}
	w.Announce.Started = time.Now().UTC()
	if err := w.beat(ctx, kv); err != nil {
		return fmt.Errorf("worker: announcing: %w", err)
	}
	var wg sync.WaitGroup
	beatCtx, stopBeat := context.WithCancel(context.Background())
	wg.Go(func() {
		t := time.NewTicker(w.Heartbeat)
		defer t.Stop()
		for {
			select {
			case <-beatCtx.Done():
				return
			case <-t.C:
				err := w.beat(beatCtx, kv)
				if errors.Is(err, jetstream.ErrNoStreamResponse) || errors.Is(err, nats.ErrNoResponders) || errors.Is(err, jetstream.ErrBucketNotFound) {
					// The server lost its files: make the bucket again.
					if Setup(beatCtx, w.JS) == nil {
						if k, kerr := w.JS.KeyValue(beatCtx, WorkersBucket); kerr == nil {
							kv = k
							err = w.beat(beatCtx, kv)
						}
					}
				}
				if err != nil && beatCtx.Err() == nil {
					fmt.Fprintf(w.Log, "worker: heartbeat: %v\n", err)
				}
			}
		}
	})
	defer func() {
		stopBeat()
		wg.Wait()
		// Goodbye, so submitters do not wait for a worker that left.
		w.Announce.Stopped = true
		bye, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		w.beat(bye, kv)
	}()
	fmt.Fprintf(w.Log, "worker %s: taking jobs for %v\n", w.Announce.ID, w.Announce.Targets)
	wait := 250 * time.Millisecond
	if len(consumers) == 1 {
		wait = 2 * time.Second
	}
	empty := 0  // fetches in a row that found no job
	failed := 0 // fetches in a row that failed
	var lastErr string
	for i := 0; ctx.Err() == nil; i++ {
		if failed >= 2*len(consumers) {
			// Every consumer keeps failing: the server may have lost its files
			// (a new store, a wiped cluster), and with them the queue's streams
			// and consumers. Make them again, or this worker would look alive
			// and never take a job.
			if cs, aw, err := w.openConsumers(ctx); err == nil {
				consumers, ackWait = cs, aw
				fmt.Fprintf(w.Log, "worker %s: the queue's consumers were made again\n", w.Announce.ID)
			}
			failed = 0
		}
		// One job at a time, the targets in turn: a worker never holds a job it is
		// not running (another worker could run it meanwhile).
		c := consumers[i%len(consumers)]
		var batch jetstream.MessageBatch
		var err error
		if empty < len(consumers) {
			// Busy: a target with no job answers at once instead of holding up the
			// others for its wait (a worker with 5 targets took 1 job/s from a run
			// of one of them).
			batch, err = c.FetchNoWait(1)
		} else {
			// A whole round found nothing: wait for a job on each in turn, not spin.
			batch, err = c.Fetch(1, jetstream.FetchMaxWait(wait))
		}
		if err != nil {
			failed++
			if ctx.Err() == nil {
				sleep(ctx, 250*time.Millisecond) // the server is restarting, or gone for now
			}
			continue
		}
		got := false
		for msg := range batch.Messages() {
			got = true
			w.handle(ctx, msg, ackWait)
		}
		if got {
			empty, failed = 0, 0
			continue
		}
		empty++
		if err := batch.Error(); err != nil && ctx.Err() == nil {
			failed++
			// Refused by the server (e.g. more workers waiting on this target than
			// its consumer's MaxWaiting): asking again at once would only spin.
			if err.Error() != lastErr {
				fmt.Fprintf(w.Log, "worker %s: fetching from %s: %v\n", w.Announce.ID, c.CachedInfo().Name, err)
				lastErr = err.Error()
			}
			sleep(ctx, 250*time.Millisecond)
		}
	}
	return nil
}

// openConsumers makes the queue (when missing) and opens the consumers of the
// worker's targets; ackWait is the shortest of theirs.
func (w *Worker) openConsumers(ctx context.Context) ([]jetstream.Consumer, time.Duration, error) {
	if err := Setup(ctx, w.JS); err != nil {
		return nil, 0, err
	}
	var consumers []jetstream.Consumer
	ackWait := time.Duration(0)
	for _, t := range w.Announce.Targets {
		c, err := targetConsumer(ctx, w.JS, w.Announce.CatalogSHA256, t, w.Queue)
		if err != nil {
			return nil, 0, err
		}
		consumers = append(consumers, c)
		if aw := c.CachedInfo().Config.AckWait; ackWait == 0 || aw < ackWait {
			ackWait = aw
		}
	}
	return consumers, ackWait, nil
}

func (w *Worker) beat(ctx context.Context, kv jetstream.KeyValue) error {
	w.Announce.Heartbeat = time.Now().UTC()
	b, err := json.Marshal(w.Announce)
	if err != nil {
		return err
	}
	_, err = kv.Put(ctx, w.Announce.ID, b)
	return err
}

// handle runs one job and acknowledges it once its result is stored in
// HWTEST_RESULTS. Killed before that, the job is redelivered; killed between the two,
// it runs again elsewhere and the submitter keeps the first result of the job.
// Nats-Msg-Id (job and worker) drops a result this worker published twice (a
// publish retried after its acknowledgement was lost).
func (w *Worker) handle(ctx context.Context, msg jetstream.Msg, ackWait time.Duration) {
	var j Job
	if err := json.Unmarshal(msg.Data(), &j); err != nil || j.ID == "" {
		fmt.Fprintf(w.Log, "worker: dropping a malformed job on %s: %v\n", msg.Subject(), err)
		msg.TermWithReason("malformed job")
		return
	}
	attempt := 1
	if md, err := msg.Metadata(); err == nil {
		attempt = int(md.NumDelivered)
	}
	res := Result{Job: j, Worker: w.Announce.ID, Attempt: attempt, Started: time.Now().UTC()}
	if crashed := attempt - 1; crashed >= w.MaxCrashes {
		// Every worker that took it before died or hung without a result: running
		// it again would kill this one too. Its result is that, once.
		res.Cells = []Cell{errorCell(j, fmt.Sprintf("crashed %d workers: each worker that took this job died before finishing it (a poison job); it was not run again", crashed), result.CauseCrash)}
		res.Ended = res.Started
		w.finish(ctx, msg, res)
		return
	}
	if ev, err := json.Marshal(Event{Job: j.ID, Worker: w.Announce.ID, Attempt: attempt}); err == nil {
		w.NC.Publish(eventSubject(j.Run), ev)
	}
	// Keep the job while it runs, however long: InProgress resets its AckWait.
	jobCtx, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		t := time.NewTicker(max(ackWait/3, 10*time.Millisecond))
		defer t.Stop()
		for {
			select {
			case <-jobCtx.Done():
				return
			case <-t.C:
				msg.InProgress()
			}
		}
	}()
	fmt.Fprintf(w.Log, "worker %s: %s (attempt %d)\n", w.Announce.ID, j.ID, attempt)
	cells, err := w.Exec(jobCtx, j)
	stop()
	switch {
	case ctx.Err() != nil:
		w.handBack(msg, j, attempt)
		return
	case err != nil:
		res.Cells = []Cell{errorCell(j, err.Error(), "")}
	default:
		res.Cells = WireCells(cells)
	}
	res.Ended = time.Now().UTC()
	w.finish(ctx, msg, res)
}

// finish stores the result, then acknowledges the job, retrying both while the
// server is away (restarting): a result is never dropped for a broken connection.
func (w *Worker) finish(ctx context.Context, msg jetstream.Msg, res Result) {
	b, err := json.Marshal(res)
	if err != nil {
		b, _ = json.Marshal(Result{Job: res.Job, Worker: res.Worker, Attempt: res.Attempt, Started: res.Started, Ended: res.Ended,
			Cells: []Cell{errorCell(res.Job, "the result could not be encoded: "+err.Error(), "")}})
	}
	for {
		pctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err := w.JS.Publish(pctx, resultSubject(res.Job.Run), b, jetstream.WithMsgID(res.Job.ID+"@"+res.Worker))
		cancel()
		if err == nil {
			break
		}
		if errors.Is(err, nats.ErrMaxPayload) {
			fmt.Fprintf(w.Log, "worker %s: %s: result of %d bytes is over the server's max_payload\n", w.Announce.ID, res.Job.ID, len(b))
			b, _ = json.Marshal(Result{Job: res.Job, Worker: res.Worker, Attempt: res.Attempt, Started: res.Started, Ended: res.Ended,
				Cells: []Cell{errorCell(res.Job, fmt.Sprintf("the result (%d bytes) is larger than the NATS server's max_payload: raise it (hwtest serve uses 8 MiB) or lower HWTEST_MEASURE_TIME", len(b)), "")}})
			continue
		}
		if ctx.Err() != nil {
			w.handBack(msg, res.Job, res.Attempt) // stopped with the result unstored
			return
		}
		fmt.Fprintf(w.Log, "worker %s: storing %s: %v (retrying)\n", w.Announce.ID, res.Job.ID, err)
		sleep(ctx, 250*time.Millisecond)
	}
	for range 20 {
		actx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := msg.DoubleAck(actx)
		cancel()
		if err == nil || ctx.Err() != nil {
			return
		}
		sleep(ctx, 250*time.Millisecond)
	}
	// Unacknowledged, the job is redelivered and its second result dropped.
}

// handBack gives the job of a worker being stopped (SIGINT/SIGTERM) to another
// worker now, not after AckWait. A Nak would count as a delivery, and three workers
// stopped by their users would make the job look poison ("crashed 3 workers"); so
// the job is queued again as a new message and this one ended. Stopped between the
// two, the job is in the queue twice and its second result is dropped by the
// submitter, as after a crash.
func (w *Worker) handBack(msg jetstream.Msg, j Job, attempt int) {
	j.HandedBack++
	b, err := json.Marshal(j)
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err = w.JS.Publish(ctx, msg.Subject(), b, jetstream.WithMsgID(fmt.Sprintf("%s#%d", j.ID, j.HandedBack)))
		cancel()
	}
	if err != nil {
		msg.Nak() // the job stays queued all the same
		return
	}
	msg.Term()
	fmt.Fprintf(w.Log, "worker %s: stopped: %s handed back (attempt %d)\n", w.Announce.ID, j.ID, attempt)
}

// errorCell is the cell of a job that gave no cells of its own.
func errorCell(j Job, reason string, cause result.Cause) Cell {
	return Cell{Cell: matrix.Cell{
		Model: j.Model, Target: j.Target, Status: result.StatusError, Reason: reason, Cause: cause,
		Checks: []matrix.CheckResult{{Name: "fleet", Status: result.StatusError, Reason: reason, Cause: cause}},
	}}
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
