package history

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/hwtest/hwtest/matrix"
	"github.com/hwtest/hwtest/result"
)

// RunInfo is one stored run, as `hwtest history` and `hwtest diff` list them.
type RunInfo struct {
	ID          string
	Finished    time.Time
	Host        string
	Source      string
	Interrupted bool
	Cells       int
	Summary     map[result.Status]int
}

// Runs lists the stored runs, newest first.
func (db *DB) Runs(ctx context.Context) ([]RunInfo, error) {
	rows, err := db.sql.QueryContext(ctx, `
SELECT r.run_id, r.finished_at, coalesce(r.host, ''), r.source, r.interrupted, c.status, count(c.id)
FROM runs r LEFT JOIN cells c USING (run_id)
GROUP BY ALL
ORDER BY r.finished_at DESC, r.run_id DESC`)
	if err != nil {
		return nil, fmt.Errorf("history %s: %w", db.path, err)
	}
	defer rows.Close()
	var out []RunInfo
	for rows.Next() {
		var r RunInfo
		var status sql.NullString
		var n int
		if err := rows.Scan(&r.ID, &r.Finished, &r.Host, &r.Source, &r.Interrupted, &status, &n); err != nil {
			return nil, err
		}
		if len(out) == 0 || out[len(out)-1].ID != r.ID {
			r.Summary = map[result.Status]int{}
			out = append(out, r)
		}
		last := &out[len(out)-1]
		if status.Valid {
			last.Summary[result.Status(status.String)] += n
			last.Cells += n
		}
	}
	return out, rows.Err()
}

// RunMatrix is one stored run's matrix, as it was written (Samples reads its raw
// latencies, most of the database's bytes).
func (db *DB) RunMatrix(ctx context.Context, runID string, models, targets []string) (matrix.Matrix, error) {
	var m matrix.Matrix
	var host, detection sql.NullString
	var devices, problems anyList
	var finished time.Time
	err := db.sql.QueryRowContext(ctx, `SELECT finished_at, host, problems, devices, detection::VARCHAR FROM runs WHERE run_id = ?`, runID).
		Scan(&finished, &host, &problems, &devices, &detection)
	if err == sql.ErrNoRows {
		return m, fmt.Errorf("history %s has no run %q: `hwtest history` lists them", db.path, runID)
	}
	if err != nil {
		return m, fmt.Errorf("history %s: %w", db.path, err)
	}
	cells, err := db.readCells(ctx, `WHERE c.run_id = ?`, runID)
	if err != nil {
		return m, err
	}
	for i := range cells {
		cells[i].RunID, cells[i].RunTime = "", time.Time{} // one run's matrix: said once
	}
	m = matrix.Assemble(cells, models, targets)
	m.RunID, m.Generated, m.Host, m.Problems = runID, finished, host.String, stringList(problems)
	m.Detection, m.DetectedAt, err = db.detection(ctx, runID)
	return m, err
}

// Samples are a stored run's raw latencies per cell, "model/target" → ms in the
// order they ran.
func (db *DB) Samples(ctx context.Context, runID string) (map[string][]float64, error) {
	out := map[string][]float64{}
	err := db.each(ctx, `SELECT c.model, c.target, list(s.latency_ms ORDER BY s.seq) FROM samples s JOIN cells c ON c.id = s.cell_id
WHERE c.run_id = ? GROUP BY ALL`, func(rows *sql.Rows) error {
		var model, target string
		var xs anyList
		if err := rows.Scan(&model, &target, &xs); err != nil {
			return err
		}
		out[model+"/"+target] = float64s(xs)
		return nil
	}, runID)
	return out, err
}

// Current is the latest result of every (model, target) across runs: each cell says
// which run it came from and when. A cell a run did not finish (interrupted) does
// not hide the one before it.
func (db *DB) Current(ctx context.Context, models, targets []string) (matrix.Matrix, error) {
	// The latest cell's id first, then its columns: a window over every column of
	// every run's cells is five times slower (1.5 s against 0.3 s for 50 runs of
	// 4,200 cells).
	cells, err := db.readCells(ctx, `WHERE c.id IN (
SELECT c.id FROM cells c JOIN runs r USING (run_id)
WHERE coalesce(c.cause, '') <> 'interrupted'
QUALIFY row_number() OVER (PARTITION BY c.model, c.target ORDER BY r.finished_at DESC, c.run_id DESC) = 1)`)
	if err != nil {
		return matrix.Matrix{}, err
	}
	return matrix.Assemble(cells, models, targets), nil
}

// History is one cell's results over time, newest first (every target of the
// model when target is "").
func (db *DB) History(ctx context.Context, model, target string) ([]matrix.Cell, error) {
	where, args := `WHERE c.model = ?`, []any{model}
	if target != "" {
		where += ` AND c.target = ?`
		args = append(args, target)
	}
	return db.readCells(ctx, where+` ORDER BY r.finished_at DESC, c.run_id DESC, c.target`, args...)
}

const cellQuery = `
SELECT c.id, c.run_id, r.finished_at, c.model, c.family, c.target, c.status, c.reason, c.cause, c.fixture, c.fallback, c.falls_back_to,
       c.placement::VARCHAR,
       c.load_ms, c.first_run_ms, c.runs, c.warmup_runs, c.min_ms, c.p50_ms, c.p90_ms, c.p95_ms, c.p99_ms, c.max_ms, c.mean_ms,
       c.stdev_ms, c.cov, c.block_p50_ms, c.throughput_per_s, c.batch, c.peak_rss_bytes, c.base_rss_bytes, c.peak_rss_scope,
       c.worst::VARCHAR, c.params, c.weight_bytes, c.size_tier, c.estimate_bytes,
       c.ort_version, c.ort_library, c.ort_library_sha256, c.provider, c.options::VARCHAR, c.host_cpu, c.device, c.driver,
       c.model_sha256, c.catalog_commit, c.code_commit, c.cell_time, c.has_metrics, c.has_size, c.has_provenance,
       c.wall_ms, c.warmup_ms, c.warmup_settled, c.warmup_drift, c.timed_ms, c.block_cov, c.unstable,
       c.intra_op_threads, c.inter_op_threads, c.cpu_governor,
       c.model_peak_bytes, c.model_peak_scope, c.explain, c.catalog
FROM cells c JOIN runs r USING (run_id)
`

// readCells reads the cells a clause selects, with their checks and outputs (not
// their samples, most of the database's bytes: Samples reads those).
func (db *DB) readCells(ctx context.Context, clause string, args ...any) ([]matrix.Cell, error) {
	rows, err := db.sql.QueryContext(ctx, cellQuery+clause, args...)
	if err != nil {
		return nil, fmt.Errorf("history %s: %w", db.path, err)
	}
	defer rows.Close()
	var cells []matrix.Cell
	var ids []int64
	for rows.Next() {
		var (
			id                                                 int64
			c                                                  matrix.Cell
			family, reason, cause, fixture, fallback, fallsTo  sql.NullString
			placement, scope, worst, tier, modelScope          sql.NullString
			load, first, min, p50, p90, p95, p99, max, mean    sql.NullFloat64
			stdev, cov, throughput, wall                       sql.NullFloat64
			runs, warm                                         sql.NullInt32
			batch, peak, base, params, weights, estimate       sql.NullInt64
			modelPeak                                          sql.NullInt64
			blocks                                             anyList
			ortVersion, ortLib, ortSHA, provider, options, cpu sql.NullString
			device, driver, modelSHA, catalogCommit, code      sql.NullString
			cellTime                                           sql.NullTime
			hasMetrics, hasSize, hasProvenance                 bool
			status                                             string
			warmMS, drift, timed, blockCoV                     sql.NullFloat64
			settled                                            sql.NullBool
			unstable, governor, explain, catalogFiles          sql.NullString
			intraOp, interOp                                   sql.NullInt32
		)
		err := rows.Scan(&id, &c.RunID, &c.RunTime, &c.Model, &family, &c.Target, &status, &reason, &cause, &fixture, &fallback, &fallsTo,
			&placement,
			&load, &first, &runs, &warm, &min, &p50, &p90, &p95, &p99, &max, &mean,
			&stdev, &cov, &blocks, &throughput, &batch, &peak, &base, &scope,
			&worst, &params, &weights, &tier, &estimate,
			&ortVersion, &ortLib, &ortSHA, &provider, &options, &cpu, &device, &driver,
			&modelSHA, &catalogCommit, &code, &cellTime, &hasMetrics, &hasSize, &hasProvenance,
			&wall, &warmMS, &settled, &drift, &timed, &blockCoV, &unstable,
			&intraOp, &interOp, &governor, &modelPeak, &modelScope, &explain, &catalogFiles)
		if err != nil {
			return nil, fmt.Errorf("history %s: reading cells: %w", db.path, err)
		}
		c.Family, c.Status, c.Reason, c.Cause = family.String, result.Status(status), reason.String, result.Cause(cause.String)
		c.Fixture, c.Fallback, c.FallsBackTo = fixture.String, fallback.String, fallsTo.String
		c.WallMS = wall.Float64
		c.Explain = explain.String
		if err := unmarshal(placement, &c.Placement); err != nil {
			return nil, err
		}
		if err := unmarshal(worst, &c.Worst); err != nil {
			return nil, err
		}
		if hasMetrics {
			c.Metrics = &result.Metrics{
				LoadMS: load.Float64, FirstRunMS: first.Float64, Runs: int(runs.Int32), WarmupRuns: int(warm.Int32),
				MinMS: min.Float64, P50MS: p50.Float64, P90MS: p90.Float64, P95MS: p95.Float64, P99MS: p99.Float64,
				MaxMS: max.Float64, MeanMS: mean.Float64, StdevMS: stdev.Float64, CoV: cov.Float64, BlockP50MS: float64s(blocks),
				ThroughputPerS: throughput.Float64, Batch: batch.Int64, PeakRSSBytes: peak.Int64, BaseRSSBytes: base.Int64,
				PeakRSSScope: scope.String, ModelPeakBytes: modelPeak.Int64, ModelPeakScope: modelScope.String,
				WarmupMS: warmMS.Float64, WarmupSettled: settled.Bool, WarmupDrift: drift.Float64, TimedMS: timed.Float64,
				BlockCoV: blockCoV.Float64, Unstable: unstable.String,
			}
		}
		if hasSize {
			c.Size = &result.ModelSize{Params: params.Int64, WeightBytes: weights.Int64, Tier: tier.String, EstimateBytes: estimate.Int64}
		}
		if hasProvenance {
			p := &result.Provenance{
				ORTVersion: ortVersion.String, ORTLibrary: ortLib.String, ORTLibSHA256: ortSHA.String, Provider: provider.String,
				HostCPU: cpu.String, Device: device.String, Driver: driver.String, ModelSHA256: modelSHA.String,
				CatalogCommit: catalogCommit.String, CodeCommit: code.String, Catalog: catalogFiles.String,
				IntraOpThreads: int(intraOp.Int32), InterOpThreads: int(interOp.Int32), CPUGovernor: governor.String,
			}
			if cellTime.Valid {
				p.Time = cellTime.Time.UTC()
			}
			if err := unmarshal(options, &p.Options); err != nil {
				return nil, err
			}
			c.Provenance = p
		}
		c.RunTime = c.RunTime.UTC()
		cells = append(cells, c)
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return cells, nil
	}
	index := make(map[int64]int, len(ids))
	for i, id := range ids {
		index[id] = i
	}
	in := idList(ids)
	if err := db.each(ctx, `SELECT cell_id, name, status, reason, cause, skipped FROM checks WHERE cell_id IN `+in+` ORDER BY cell_id, seq`, func(rows *sql.Rows) error {
		var id int64
		var ch matrix.CheckResult
		var status string
		var reason, cause, skipped sql.NullString
		if err := rows.Scan(&id, &ch.Name, &status, &reason, &cause, &skipped); err != nil {
			return err
		}
		ch.Status, ch.Reason, ch.Cause, ch.Skipped = result.Status(status), reason.String, result.Cause(cause.String), skipped.String
		c := &cells[index[id]]
		c.Checks = append(c.Checks, ch)
		return nil
	}); err != nil {
		return nil, err
	}
	if err := db.each(ctx, `SELECT cell_id, name, dtype, shape FROM outputs WHERE cell_id IN `+in+` ORDER BY cell_id, seq`, func(rows *sql.Rows) error {
		var id int64
		var o result.Output
		var dtype sql.NullString
		var shape anyList
		if err := rows.Scan(&id, &o.Name, &dtype, &shape); err != nil {
			return err
		}
		o.DType, o.Shape = dtype.String, int64s(shape)
		c := &cells[index[id]]
		c.Outputs = append(c.Outputs, o)
		return nil
	}); err != nil {
		return nil, err
	}
	return cells, nil
}

func (db *DB) detection(ctx context.Context, runID string) ([]result.Detected, time.Time, error) {
	var out []result.Detected
	var at time.Time
	err := db.each(ctx, `SELECT target, available, name, features, reason, detected_at FROM detections WHERE run_id = ? ORDER BY id`, func(rows *sql.Rows) error {
		var d result.Detected
		var name, reason sql.NullString
		var features anyList
		if err := rows.Scan(&d.Target, &d.Available, &name, &features, &reason, &at); err != nil {
			return err
		}
		d.Name, d.Reason, d.Features = name.String, reason.String, stringList(features)
		out = append(out, d)
		return nil
	}, runID)
	if !at.IsZero() {
		at = at.UTC()
	}
	return out, at, err
}

func (db *DB) each(ctx context.Context, query string, row func(*sql.Rows) error, args ...any) error {
	rows, err := db.sql.QueryContext(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("history %s: %w", db.path, err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := row(rows); err != nil {
			return fmt.Errorf("history %s: %w", db.path, err)
		}
	}
	return rows.Err()
}

// idList is an SQL list of ids; they are integers, so writing them is safe.
func idList(ids []int64) string {
	var b []byte
	b = append(b, '(')
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, id, 10)
	}
	return string(append(b, ')'))
}

func unmarshal[T any](s sql.NullString, into *T) error {
	if !s.Valid {
		return nil
	}
	if err := json.Unmarshal([]byte(s.String), into); err != nil {
		return fmt.Errorf("history: reading %T: %w", *into, err)
	}
	return nil
}

// anyList scans a LIST, which DuckDB's driver gives as []any, or NULL as nil.
type anyList []any

func (l *anyList) Scan(v any) error {
	switch v := v.(type) {
	case nil:
		*l = nil
	case []any:
		*l = v
	default:
		return fmt.Errorf("history: a list column holds %T", v)
	}
	return nil
}

func float64s(xs anyList) []float64 {
	if xs == nil {
		return nil
	}
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i], _ = x.(float64)
	}
	return out
}

func int64s(xs anyList) []int64 {
	if xs == nil {
		return nil
	}
	out := make([]int64, len(xs))
	for i, x := range xs {
		out[i], _ = x.(int64)
	}
	return out
}

func stringList(xs anyList) []string {
	if xs == nil {
		return nil
	}
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i], _ = x.(string)
	}
	return out
}
