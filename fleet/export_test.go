package fleet

import (
	"context"

	"github.com/nats-io/nats.go/jetstream"
)

// ReadWorkers is what a submitter does every second: read every announcement in
// the workers' bucket. It returns how many it read.
func ReadWorkers(ctx context.Context, kv jetstream.KeyValue) (int, error) {
	r := &fleetRun{kv: kv, announced: map[string]bool{}}
	err := r.readWorkers(ctx)
	return len(r.workers), err
}

// TargetConsumer opens the consumer of a target's jobs, as a worker does (a test's
// rogue client takes a job with it).
func TargetConsumer(ctx context.Context, js jetstream.JetStream, catalogSHA, target string) (jetstream.Consumer, error) {
	return targetConsumer(ctx, js, catalogSHA, target, QueueOptions{})
}
