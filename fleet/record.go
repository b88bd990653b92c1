package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/hwtest/hwtest/matrix"
)

// Recorder is `hwtest serve`'s history writer: for each run's manifest it reads the
// run's results from HWTEST_RESULTS, merges them as the submitter did (the first
// result of each job from a worker that announced itself) and stores the matrix.
type Recorder struct {
	JS jetstream.JetStream
	// Store keeps a run's matrix (in the history database); a run stored already
	// (its submitter shares the database) is not an error.
	Store func(ctx context.Context, m matrix.Matrix) error
	Log   io.Writer
}

// Run records runs until ctx ends. Its durable consumer acknowledges a manifest
// once the run is stored, so a serve restarted meanwhile records it then.
func (r *Recorder) Run(ctx context.Context) error {
	if r.Log == nil {
		r.Log = io.Discard
	}
	cons, err := r.JS.CreateOrUpdateConsumer(ctx, RunsStream, jetstream.ConsumerConfig{
		Durable: "recorder", AckPolicy: jetstream.AckExplicitPolicy, AckWait: 5 * time.Minute,
	})
	if err != nil {
		return fmt.Errorf("fleet: recorder: %w", err)
	}
	for ctx.Err() == nil {
		batch, err := cons.Fetch(1, jetstream.FetchMaxWait(2*time.Second))
		if err != nil {
			sleep(ctx, time.Second)
			continue
		}
		for msg := range batch.Messages() {
			var m Manifest
			if err := json.Unmarshal(msg.Data(), &m); err != nil {
				fmt.Fprintf(r.Log, "serve: dropping an unreadable manifest: %v\n", err)
				msg.Term()
				continue
			}
			mx, err := r.matrix(ctx, m)
			if err == nil {
				err = r.Store(ctx, mx)
			}
			if err != nil {
				fmt.Fprintf(r.Log, "serve: run %s not stored (retried later): %v\n", m.Run, err)
				msg.NakWithDelay(30 * time.Second)
				continue
			}
			fmt.Fprintf(r.Log, "serve: run %s stored: %d cells\n", m.Run, len(mx.Cells))
			msg.Ack()
		}
	}
	return nil
}

// matrix merges a run's results.
func (r *Recorder) matrix(ctx context.Context, m Manifest) (matrix.Matrix, error) {
	kv, err := r.JS.KeyValue(ctx, WorkersBucket)
	if err != nil {
		return matrix.Matrix{}, err
	}
	wanted := map[string]bool{}
	for _, j := range m.Jobs {
		wanted[j] = true
	}
	cons, err := r.JS.OrderedConsumer(ctx, ResultsStream, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{resultSubject(m.Run)}, DeliverPolicy: jetstream.DeliverAllPolicy,
	})
	if err != nil {
		return matrix.Matrix{}, err
	}
	cells := MatrixCells(m.Cells)
	announced := map[string]bool{}
	for len(wanted) > 0 {
		batch, err := cons.Fetch(100, jetstream.FetchMaxWait(2*time.Second))
		if err != nil {
			return matrix.Matrix{}, err
		}
		n := 0
		for msg := range batch.Messages() {
			n++
			var res Result
			if json.Unmarshal(msg.Data(), &res) != nil || !wanted[res.Job.ID] {
				continue
			}
			if !announced[res.Worker] {
				if _, err := kv.Get(ctx, res.Worker); errors.Is(err, jetstream.ErrKeyNotFound) {
					continue // not from an announced worker
				}
				announced[res.Worker] = true
			}
			delete(wanted, res.Job.ID)
			for _, c := range MatrixCells(res.Cells) {
				c.FallsBackTo = m.Fallbacks[c.Model+"/"+c.Target]
				cells = append(cells, c)
			}
		}
		if n == 0 {
			break // the stream has no more of this run's results
		}
	}
	if len(wanted) > 0 {
		return matrix.Matrix{}, fmt.Errorf("%d of its jobs have no result in %s", len(wanted), ResultsStream)
	}
	return Assemble(m.Run, m.Models, m.Targets, cells, m.Workers, m.Ended), nil
}
