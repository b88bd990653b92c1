package history

import (
	"context"
	"fmt"
	"strings"
)

// SchemaVersion is the version of the schema this hwtest writes. A database of an
// older version is migrated; a newer one is refused.
const SchemaVersion = 9

// migrations[i] takes a database from version i to version i+1. Each runs in one
// transaction with the version bump, so a database is at one version or the next,
// never between. Append; never edit a released step.
var migrations = []string{
	// 0 → 1: the tables. Times are UTC; latencies in milliseconds; memory in bytes.
	`
CREATE TABLE hwtest_schema (version INTEGER NOT NULL);
INSERT INTO hwtest_schema VALUES (0);

-- One row per stored run: an hwtest run, or a matrix.json brought in by
-- hwtest import.
CREATE TABLE runs (
	run_id             VARCHAR PRIMARY KEY,
	finished_at        TIMESTAMP NOT NULL, -- the end of the last suite merged
	stored_at          TIMESTAMP NOT NULL,
	host               VARCHAR,            -- hostname
	host_cpu           VARCHAR,
	ort_version        VARCHAR,
	ort_library        VARCHAR,
	ort_library_sha256 VARCHAR,
	code_commit        VARCHAR,
	catalog_commit     VARCHAR,
	devices            VARCHAR[],          -- "target: device (driver …)"
	interrupted        BOOLEAN NOT NULL,
	problems           VARCHAR[],
	source             VARCHAR NOT NULL,   -- "run", or "import FILE"
	content_sha256     VARCHAR,            -- of an imported file: the same file twice adds nothing
	detection          JSON                -- hwtest detect's report, when the run had one
);

-- What detection said about each target at the start of a run.
CREATE TABLE detections (
	id          BIGINT PRIMARY KEY,
	run_id      VARCHAR NOT NULL,
	target      VARCHAR NOT NULL,
	available   BOOLEAN NOT NULL,
	name        VARCHAR,   -- the device or runtime that serves the target
	features    VARCHAR[],
	reason      VARCHAR,   -- why not available: the probe's exact words
	detected_at TIMESTAMP NOT NULL
);

-- One row per (run, model, target): the matrix cell.
CREATE TABLE cells (
	id                 BIGINT PRIMARY KEY,
	run_id             VARCHAR NOT NULL,
	model              VARCHAR NOT NULL,
	family             VARCHAR,
	target             VARCHAR NOT NULL,
	status             VARCHAR NOT NULL,
	reason             VARCHAR,
	cause              VARCHAR,
	fixture            VARCHAR,   -- the zoo model that stood in, when one did
	fallback           VARCHAR,
	falls_back_to      VARCHAR,
	placement_nodes_pct DOUBLE,   -- % of nodes on the target's EP (partial cells)
	placement          JSON,
	load_ms            DOUBLE,
	first_run_ms       DOUBLE,
	runs               INTEGER,
	warmup_runs        INTEGER,
	min_ms             DOUBLE,
	p50_ms             DOUBLE,
	p90_ms             DOUBLE,
	p95_ms             DOUBLE,
	p99_ms             DOUBLE,
	max_ms             DOUBLE,
	mean_ms            DOUBLE,
	stdev_ms           DOUBLE,
	cov                DOUBLE,
	block_p50_ms       DOUBLE[],
	throughput_per_s   DOUBLE,
	batch              BIGINT,
	peak_rss_bytes     BIGINT,
	base_rss_bytes     BIGINT,
	peak_rss_scope     VARCHAR,
	worst              JSON,
	params             BIGINT,
	weight_bytes       BIGINT,
	size_tier          VARCHAR,
	estimate_bytes     BIGINT,
	ort_version        VARCHAR,
	ort_library        VARCHAR,
	ort_library_sha256 VARCHAR,
	provider           VARCHAR,
	options            JSON,
	host_cpu           VARCHAR,
	device             VARCHAR,
	driver             VARCHAR,
	model_sha256       VARCHAR,
	catalog_commit     VARCHAR,
	code_commit        VARCHAR,
	cell_time          TIMESTAMP, -- when the cell's session was opened
	has_metrics        BOOLEAN NOT NULL,
	has_size           BOOLEAN NOT NULL,
	has_provenance     BOOLEAN NOT NULL,
	UNIQUE (run_id, model, target)
);

-- A cell's steps: open, measure, the family invariants, and what the matrix added.
CREATE TABLE checks (
	cell_id BIGINT NOT NULL,
	seq     INTEGER NOT NULL,
	name    VARCHAR NOT NULL,
	status  VARCHAR NOT NULL,
	reason  VARCHAR,
	cause   VARCHAR
);

-- The outputs the target returned.
CREATE TABLE outputs (
	cell_id BIGINT NOT NULL,
	seq     INTEGER NOT NULL,
	name    VARCHAR NOT NULL,
	dtype   VARCHAR,
	shape   BIGINT[]
);

-- The raw timed latencies of a cell, in the order they ran.
CREATE TABLE samples (
	cell_id    BIGINT PRIMARY KEY,
	latency_ms DOUBLE[] NOT NULL
);
`,
	// 1 → 2: the views of the system hwtest replaces, so its users' queries run
	// unchanged. inference_time is the median latency in ms, load_time ms,
	// memory_usage the peak resident memory in MiB; success means the cell ran and
	// agreed with the CPU reference (pass, or partial: some nodes on the CPU).
	// Interrupted cells are not results of the hardware and are left out.
	`
CREATE VIEW hardware_results AS
SELECT c.id,
       c.model AS model_id,
       c.family AS model_type,
       c.target AS hardware,
       c.status IN ('pass', 'partial') AS success,
       c.load_ms AS load_time,
       c.p50_ms AS inference_time,
       c.peak_rss_bytes / 1048576.0 AS memory_usage,
       CASE WHEN c.status IN ('pass', 'partial') THEN NULL
            ELSE c.status || ': ' || coalesce(c.reason, '') END AS error,
       coalesce(c.cell_time, r.finished_at) AS timestamp,
       CASE WHEN o.shape IS NULL THEN NULL
            ELSE '[' || array_to_string(o.shape, ', ') || ']' END AS output_shape
FROM cells c
JOIN runs r USING (run_id)
LEFT JOIN outputs o ON o.cell_id = c.id AND o.seq = 0
WHERE coalesce(c.cause, '') <> 'interrupted';

CREATE VIEW hardware_detection AS
SELECT id,
       target AS hardware_type,
       available,
       name,
       array_to_string(features, ',') AS features,
       detected_at AS timestamp
FROM detections;
`,
	// 2 → 3: how long each cell took (matrix.Cell.WallMS), so `hwtest run` can
	// estimate how long the cells it is about to run will take.
	`
ALTER TABLE cells ADD COLUMN wall_ms DOUBLE; -- first spec's start to last spec's end
`,
	// 3 → 4: samples one row per latency, seq in the order they ran. With a
	// DOUBLE[] per cell, DuckDB (1.5) wrote every list of the row group to its log
	// again at each commit: storing a run cost as much as the whole history.
	`
CREATE TABLE samples_by_row (
	cell_id    BIGINT NOT NULL,
	seq        INTEGER NOT NULL,
	latency_ms DOUBLE NOT NULL
);
INSERT INTO samples_by_row
SELECT cell_id, generate_subscripts(latency_ms, 1) - 1, unnest(latency_ms) FROM samples;
DROP TABLE samples;
ALTER TABLE samples_by_row RENAME TO samples;
`,
	// 4 → 5: how a cell was measured (issue 11): warm-up until settled, the time
	// spent measuring, the spread of its block medians and the unstable flag; the
	// threads and the CPU governor it ran with; the model-attributable peak
	// (result.Metrics.ModelPeakBytes: the process peak less its resident size just
	// before the session) and what it counts or why it is absent. Older rows keep
	// NULL: not measured then, and not recomputed from peak − base here, which would
	// repeat runtime's definition.
	`
ALTER TABLE cells ADD COLUMN warmup_ms DOUBLE;
ALTER TABLE cells ADD COLUMN warmup_settled BOOLEAN;
ALTER TABLE cells ADD COLUMN warmup_drift DOUBLE;
ALTER TABLE cells ADD COLUMN timed_ms DOUBLE;
ALTER TABLE cells ADD COLUMN block_cov DOUBLE;
ALTER TABLE cells ADD COLUMN unstable VARCHAR;     -- why the latency is not to be trusted (NULL when it is)
ALTER TABLE cells ADD COLUMN intra_op_threads INTEGER;
ALTER TABLE cells ADD COLUMN inter_op_threads INTEGER;
ALTER TABLE cells ADD COLUMN cpu_governor VARCHAR;
ALTER TABLE cells ADD COLUMN model_peak_bytes BIGINT;
ALTER TABLE cells ADD COLUMN model_peak_scope VARCHAR;
`,
	// 5 → 6: ONNX's own conformance cases on each target (issue 13), the operator ×
	// target scoreboard: one row per (conformance run, target, case); and, on a
	// mismatch cell, where `hwtest run` traced it ("first divergence: node …").
	`
CREATE TABLE conformance_runs (
	run_id       VARCHAR PRIMARY KEY,
	finished_at  TIMESTAMP NOT NULL,
	stored_at    TIMESTAMP NOT NULL,
	host         VARCHAR,
	ort_version  VARCHAR,
	data_version VARCHAR NOT NULL,  -- libonnx-testdata's version: "1.12.0"
	tolerance    VARCHAR NOT NULL,  -- what "pass" meant: "rtol 1e-3, atol 1e-7 …"
	targets      VARCHAR[] NOT NULL,
	interrupted  BOOLEAN NOT NULL
);
CREATE TABLE op_cases (
	run_id        VARCHAR NOT NULL,
	target        VARCHAR NOT NULL,
	op            VARCHAR NOT NULL,
	domain        VARCHAR NOT NULL,  -- '' is ai.onnx
	opset         BIGINT,
	case_name     VARCHAR NOT NULL,
	status        VARCHAR NOT NULL,  -- pass, mismatch, not-supported, error, skipped, unavailable
	worst_output  VARCHAR,
	worst_index   BIGINT,
	worst_got     DOUBLE,
	worst_want    DOUBLE,
	worst_abs_err DOUBLE,
	worst_allowed DOUBLE,
	error         VARCHAR,           -- the runtime's exact words
	device        VARCHAR,
	ms            DOUBLE,
	PRIMARY KEY (run_id, target, case_name)
);
ALTER TABLE cells ADD COLUMN explain VARCHAR;
`,
	// 6 → 7: which catalog files ran, with their sha256 (issue 14: a user's own
	// catalog is not in git, so a commit cannot say).
	`
ALTER TABLE runs ADD COLUMN catalog VARCHAR;
ALTER TABLE cells ADD COLUMN catalog VARCHAR;
`,
	// 7 → 8: a cell whose target's EP took none of the nodes is cpu-only (issue 14),
	// no longer partial: it ran and agreed, so it stays a success in the view the
	// older system's queries read. Older rows keep the status they were stored with.
	`
CREATE OR REPLACE VIEW hardware_results AS
SELECT c.id,
       c.model AS model_id,
       c.family AS model_type,
       c.target AS hardware,
       c.status IN ('pass', 'partial', 'cpu-only') AS success,
       c.load_ms AS load_time,
       c.p50_ms AS inference_time,
       c.peak_rss_bytes / 1048576.0 AS memory_usage,
       CASE WHEN c.status IN ('pass', 'partial', 'cpu-only') THEN NULL
            ELSE c.status || ': ' || coalesce(c.reason, '') END AS error,
       coalesce(c.cell_time, r.finished_at) AS timestamp,
       CASE WHEN o.shape IS NULL THEN NULL
            ELSE '[' || array_to_string(o.shape, ', ') || ']' END AS output_shape
FROM cells c
JOIN runs r USING (run_id)
LEFT JOIN outputs o ON o.cell_id = c.id AND o.seq = 0
WHERE coalesce(c.cause, '') <> 'interrupted';
`,
	// 8 → 9: why a check did not apply to the model's outputs (issue 14: top-5
	// classes on a dense map), kept with its passing status.
	`
ALTER TABLE checks ADD COLUMN skipped VARCHAR;
`,
}

// schemaVersion reads the version: 0 for a new, empty database. A DuckDB database
// that holds tables but is not a hwtest history is refused.
func (db *DB) schemaVersion(ctx context.Context) (int, error) {
	var n int
	err := db.sql.QueryRowContext(ctx, `SELECT count(*) FROM information_schema.tables WHERE table_name = 'hwtest_schema'`).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("history %s: %w", db.path, err)
	}
	if n == 0 {
		var tables int
		if err := db.sql.QueryRowContext(ctx, `SELECT count(*) FROM information_schema.tables`).Scan(&tables); err != nil {
			return 0, fmt.Errorf("history %s: %w", db.path, err)
		}
		if tables > 0 {
			return 0, fmt.Errorf("history %s is a DuckDB database of something else (%d tables, no hwtest_schema): it was left as it is; point --db or %s at another file", db.path, tables, EnvDB)
		}
		return 0, nil
	}
	var v int
	if err := db.sql.QueryRowContext(ctx, `SELECT version FROM hwtest_schema`).Scan(&v); err != nil {
		return 0, fmt.Errorf("history %s: reading its schema version: %w", db.path, err)
	}
	return v, nil
}

// migrate applies steps[from:] in one transaction: all of them or none.
func (db *DB) migrate(ctx context.Context, from int, steps []string) (err error) {
	tx, err := db.sql.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tx.Rollback()
			err = fmt.Errorf("history %s: migrating schema %d → %d failed, nothing changed: %w", db.path, from, len(steps), err)
		}
	}()
	for v := from; v < len(steps); v++ {
		for _, stmt := range statements(steps[v]) {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("step %d → %d: %w", v, v+1, err)
			}
		}
	}
	if _, err := tx.ExecContext(ctx, `UPDATE hwtest_schema SET version = ?`, len(steps)); err != nil {
		return err
	}
	return tx.Commit()
}

// statements splits a migration on the semicolons that end its statements
// (migrations hold no semicolons inside strings).
func statements(step string) []string {
	var out []string
	for _, s := range strings.Split(step, ";") {
		if s = strings.TrimSpace(stripComments(s)); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func stripComments(s string) string {
	var b strings.Builder
	for _, line := range strings.Split(s, "\n") {
		if i := strings.Index(line, "--"); i >= 0 {
			line = line[:i]
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return b.String()
}
