// Package fleet spreads a run over many machines on NATS JetStream: `hwtest run
// --fleet` publishes one job per (model, target), each `hwtest worker` takes the jobs
// of the targets its machine has, runs them as `hwtest run` would and publishes the
// cells, and the submitter merges them into one matrix. JetStream keeps the queue and
// the results on disk, redelivers the job of a worker that died, and drops a result
// published twice; the code here only decides what to publish and when to
// acknowledge.
//
// Subjects and what JetStream keeps:
//
//	hwtest.jobs.<catalogs>.<target>.<run>
//	                         stream HWTEST_JOBS (work queue): one durable pull consumer
//	                         per catalogs and target, "jobs-<catalogs>-<target>",
//	                         shared by the workers that have both; a job leaves the
//	                         stream when acknowledged, or when its run ends
//	                         (<catalogs>: the first 12 hex digits of CatalogSHA256)
//	hwtest.results.<run>     stream HWTEST_RESULTS: one message per job, deduplicated
//	                         by job id (Nats-Msg-Id)
//	hwtest.runs.<run>        stream HWTEST_RUNS: a run's manifest, published when it
//	                         ends; `hwtest serve` stores the run in its history
//	hwtest.events.<run>      core NATS, not kept: "worker w took job j", for progress
//	KV hwtest-workers        one entry per worker: its announcement and heartbeat
package fleet

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/hwtest/hwtest/matrix"
	"github.com/hwtest/hwtest/result"
)

// Names of the streams, the bucket and the subjects.
const (
	JobsStream    = "HWTEST_JOBS"
	ResultsStream = "HWTEST_RESULTS"
	RunsStream    = "HWTEST_RUNS"
	WorkersBucket = "hwtest-workers"

	jobsPrefix    = "hwtest.jobs."
	resultsPrefix = "hwtest.results."
	runsPrefix    = "hwtest.runs."
	eventsPrefix  = "hwtest.events."
)

// Defaults of the queue. AckWait is short so that a dead worker's job runs elsewhere
// within seconds; a live worker keeps its job with InProgress every AckWait/3 however
// long the job takes.
const (
	DefaultAckWait    = 30 * time.Second
	DefaultMaxCrashes = 3
	// ResultsKept is how long results stay in HWTEST_RESULTS, and the window in
	// which JetStream drops a second result of the same job.
	ResultsKept = 7 * 24 * time.Hour
)

// Job is one (model, target) of a run.
type Job struct {
	ID     string `json:"id"` // <run>/<model>/<target>: unique, and the results' Nats-Msg-Id
	Run    string `json:"run"`
	Model  string `json:"model"`
	Target string `json:"target"`
	// FallbackFor is the target this job stands in for: it failed, or no worker
	// has it. The job's cell is this target's, never FallbackFor's.
	FallbackFor string `json:"fallback_for,omitempty"`
	// CatalogSHA256 is the hash of the submitter's catalogs (models.yaml and
	// hardware.yaml as loaded), ModelSHA256 that of the model file the submitter
	// resolved. A worker whose own differ never runs the job under this name.
	CatalogSHA256 string        `json:"catalog_sha256"`
	ModelSHA256   string        `json:"model_sha256,omitempty"`
	ModelFixture  bool          `json:"model_fixture,omitempty"` // that file is the model's zoo fixture
	Timeout       time.Duration `json:"timeout"`                 // per suite process, as `hwtest run --timeout`
	// Settings are the submitter's measurement settings (MeasurementSettings that
	// were set where it ran), so every cell of a matrix is measured alike.
	Settings map[string]string `json:"settings,omitempty"`
	// HandedBack counts the workers stopped (not crashed) while running the job,
	// which queued it again (Worker.handBack).
	HandedBack int `json:"handed_back,omitempty"`
	// Payload is for executors other than the suites' (the queue's own tests and
	// benchmarks run trivial jobs through the same code).
	Payload []byte `json:"payload,omitempty"`
}

// MeasurementSettings are the environment variables that change what a cell
// measures: a fleet run's jobs carry the submitter's, over each worker's own.
var MeasurementSettings = []string{"HWTEST_MEASURE_TIME", "HWTEST_RUN_TIMEOUT", "HWTEST_THREADS"}

// JobID is the id of the job running model on target in run (catalog ids hold no
// slash).
func JobID(run, model, target string) string { return run + "/" + model + "/" + target }

// Result is what a worker published for a job.
type Result struct {
	Job     Job       `json:"job"`
	Worker  string    `json:"worker"`
	Attempt int       `json:"attempt"` // JetStream's delivery count when it ran
	Started time.Time `json:"started"`
	Ended   time.Time `json:"ended"`
	Cells   []Cell    `json:"cells"`
}

// Cell is a matrix cell with its raw samples, which matrix.json leaves out but the
// history keeps.
type Cell struct {
	matrix.Cell
	SamplesMS []float64 `json:"samples_ms,omitempty"`
}

// WireCells carries cells with their samples.
func WireCells(cells []matrix.Cell) []Cell {
	out := make([]Cell, len(cells))
	for i, c := range cells {
		out[i] = Cell{Cell: c, SamplesMS: c.SamplesMS}
	}
	return out
}

// MatrixCells is the inverse of WireCells.
func MatrixCells(cells []Cell) []matrix.Cell {
	out := make([]matrix.Cell, len(cells))
	for i, c := range cells {
		out[i] = c.Cell
		out[i].SamplesMS = c.SamplesMS
	}
	return out
}

// Event is a worker's word that it took a job, for the submitter's progress.
type Event struct {
	Job     string `json:"job"`
	Worker  string `json:"worker"`
	Attempt int    `json:"attempt"`
}

// Manifest is a run as its submitter ended it: what `hwtest serve` needs to store
// it in its history from the results in HWTEST_RESULTS.
type Manifest struct {
	Run     string    `json:"run"`
	Models  []string  `json:"models"`
	Targets []string  `json:"targets"`
	Jobs    []string  `json:"jobs"`
	Ended   time.Time `json:"ended"`
	// Cells the submitter made itself: targets no worker has.
	Cells []Cell `json:"cells,omitempty"`
	// Fallbacks are the falls_back_to the submitter gave the workers' cells whose
	// target failed ("model/target" → "tensorrt → cpu").
	Fallbacks map[string]string `json:"fallbacks,omitempty"`
	// Workers are the ones the run used or saw live: the matrix's host and
	// detection.
	Workers []Announcement `json:"workers,omitempty"`
}

// Assemble is a fleet run's matrix: its cells in catalog order, its host the
// workers, and per target which workers have it (what the probes of a local run
// would say).
func Assemble(run string, models, targets []string, cells []matrix.Cell, workers []Announcement, ended time.Time) matrix.Matrix {
	mx := matrix.Assemble(cells, models, targets)
	mx.RunID = run
	if mx.Generated.IsZero() {
		mx.Generated = ended.UTC()
	}
	var names []string
	for _, w := range workers {
		names = append(names, w.ID)
	}
	mx.Host = "fleet: " + strings.Join(names, ", ")
	for _, t := range targets {
		d := result.Detected{Target: t}
		var have []string
		for _, w := range workers {
			if slices.Contains(w.Targets, t) {
				have = append(have, w.ID)
			}
		}
		if len(have) > 0 {
			d.Available, d.Name = true, "workers: "+strings.Join(have, ", ")
		} else {
			d.Reason = "no worker in the fleet has " + t
		}
		mx.Detection = append(mx.Detection, d)
	}
	return mx
}

// jobSubject is where a job of these catalogs and target is queued: a worker pulls
// only the jobs of its own catalogs (one with an older checkout never takes, and
// refuses, the others'), and a run's jobs can be purged by its id.
func jobSubject(catalogSHA, target, run string) string {
	return jobsPrefix + catalogToken(catalogSHA) + "." + token(target) + "." + token(run)
}

// runJobs matches every job of a run, whatever its catalogs and target.
func runJobs(run string) string { return jobsPrefix + "*.*." + token(run) }

func catalogToken(sha string) string { return token(short(sha)) }

func resultSubject(run string) string { return resultsPrefix + token(run) }
func runSubject(run string) string    { return runsPrefix + token(run) }
func eventSubject(run string) string  { return eventsPrefix + token(run) }
func consumerName(catalogSHA, target string) string {
	return "jobs-" + catalogToken(catalogSHA) + "-" + token(target)
}

// token makes an id one subject token and a valid consumer name: catalog ids may
// hold dots (llava-1.5-7b), which NATS reads as token separators, and never "~".
func token(id string) string { return strings.ReplaceAll(id, ".", "~") }

// Setup makes the streams and the workers' bucket when they are missing and leaves
// them as they are otherwise: the first to start (`hwtest serve`, a worker or a
// submitter on a user's own cluster) creates them, and a later one with other
// defaults does not change a queue in use.
func Setup(ctx context.Context, js jetstream.JetStream) error {
	streams := []jetstream.StreamConfig{{
		Name: JobsStream, Subjects: []string{jobsPrefix + ">"},
		Retention: jetstream.WorkQueuePolicy, Storage: jetstream.FileStorage,
		Duplicates: time.Hour,   // a submitter retrying a publish does not queue a job twice
		MaxAge:     ResultsKept, // a job no worker ever took (its run's end purges the rest)
	}, {
		Name: ResultsStream, Subjects: []string{resultsPrefix + ">"},
		Storage: jetstream.FileStorage, MaxAge: ResultsKept, Duplicates: ResultsKept,
	}, {
		Name: RunsStream, Subjects: []string{runsPrefix + ">"},
		Storage: jetstream.FileStorage, MaxAge: ResultsKept, MaxMsgsPerSubject: 1,
	}}
	for _, cfg := range streams {
		if _, err := js.Stream(ctx, cfg.Name); err == nil {
			continue
		} else if !errors.Is(err, jetstream.ErrStreamNotFound) {
			return fmt.Errorf("fleet: stream %s: %w", cfg.Name, err)
		}
		if _, err := js.CreateStream(ctx, cfg); err != nil && !errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			return fmt.Errorf("fleet: creating stream %s: %w", cfg.Name, err)
		}
	}
	if _, err := js.KeyValue(ctx, WorkersBucket); errors.Is(err, jetstream.ErrBucketNotFound) {
		_, err = js.CreateKeyValue(ctx, jetstream.KeyValueConfig{
			Bucket: WorkersBucket, Storage: jetstream.FileStorage,
			TTL: ResultsKept, // a worker gone for a week is forgotten
		})
		if err != nil && !errors.Is(err, jetstream.ErrBucketExists) {
			return fmt.Errorf("fleet: creating bucket %s: %w", WorkersBucket, err)
		}
	} else if err != nil {
		return fmt.Errorf("fleet: bucket %s: %w", WorkersBucket, err)
	}
	return nil
}

// MaxWorkersPerTarget is how many workers of one target can wait for its jobs at
// once (the consumer's MaxWaiting, fixed when it is made).
const MaxWorkersPerTarget = 10_000

// QueueOptions are the job consumers' settings, fixed when a target's consumer is
// first made.
type QueueOptions struct {
	AckWait time.Duration // a job not acknowledged (nor kept InProgress) this long is redelivered
}

// targetConsumer is the durable consumer of a target's jobs of these catalogs, made
// when missing.
func targetConsumer(ctx context.Context, js jetstream.JetStream, catalogSHA, target string, q QueueOptions) (jetstream.Consumer, error) {
	name := consumerName(catalogSHA, target)
	c, err := js.Consumer(ctx, JobsStream, name)
	if err == nil {
		return c, nil
	}
	if !errors.Is(err, jetstream.ErrConsumerNotFound) {
		return nil, fmt.Errorf("fleet: consumer %s: %w", name, err)
	}
	if q.AckWait <= 0 {
		q.AckWait = DefaultAckWait
	}
	c, err = js.CreateConsumer(ctx, JobsStream, jetstream.ConsumerConfig{
		Durable: name, FilterSubject: jobsPrefix + catalogToken(catalogSHA) + "." + token(target) + ".*",
		AckPolicy: jetstream.AckExplicitPolicy, AckWait: q.AckWait,
		// Unbounded: a job that kills its workers is ended by the worker that
		// takes it after DefaultMaxCrashes deliveries (a poison result), which
		// a dropped message would not give.
		MaxDeliver:    -1,
		MaxAckPending: -1,
		// Each idle worker of the target keeps one pull request waiting here;
		// past this many, the server refuses the rest (409) and they ask again
		// every 250ms instead of waiting. NATS's default is 512.
		MaxWaiting: MaxWorkersPerTarget,
	})
	if errors.Is(err, jetstream.ErrConsumerExists) {
		return js.Consumer(ctx, JobsStream, name)
	}
	if err != nil {
		return nil, fmt.Errorf("fleet: creating consumer %s: %w", name, err)
	}
	return c, nil
}
