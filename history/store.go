package history

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/duckdb/duckdb-go/v2"

	"github.com/hwtest/hwtest/matrix"
)

// Run is one run to store: its matrix and what only the run knows.
type Run struct {
	Matrix      matrix.Matrix // RunID set; Generated is the run's end
	Interrupted bool          // stopped by a signal: its matrix holds what finished
	// Source is "run" for a `hwtest run`, "import FILE" for an imported matrix.
	Source string
	// ContentSHA256 identifies an imported file, so importing it twice adds nothing.
	ContentSHA256 string
	// Detection is `hwtest detect --json`'s report, kept whole when the run had one.
	Detection json.RawMessage
}

// ErrDuplicate: the run (its id, or an imported file's content) is already stored.
var ErrDuplicate = errors.New("already in the history")

// Store writes a run, its detection, cells, checks, outputs and samples in one
// transaction: a run is in the history whole or not at all, even when the process
// is killed while writing (DuckDB's write-ahead log drops what was not committed).
func (db *DB) Store(ctx context.Context, r Run) (err error) {
	m := r.Matrix
	if m.RunID == "" {
		return errors.New("history: a run to store needs a run id")
	}
	if r.Source == "" {
		r.Source = "run"
	}
	conn, err := db.sql.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN TRANSACTION"); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			conn.ExecContext(context.Background(), "ROLLBACK")
			if !errors.Is(err, ErrDuplicate) {
				err = fmt.Errorf("history %s: storing run %s: %w (nothing of it was stored)", db.path, m.RunID, err)
			}
		}
	}()

	var dup string
	err = conn.QueryRowContext(ctx, `SELECT run_id FROM runs WHERE run_id = ? OR (content_sha256 IS NOT NULL AND content_sha256 = ?) LIMIT 1`,
		m.RunID, nullable(r.ContentSHA256)).Scan(&dup)
	switch {
	case err == nil:
		return fmt.Errorf("run %s: %w (as %s)", m.RunID, ErrDuplicate, dup)
	case !errors.Is(err, sql.ErrNoRows):
		return err
	}

	finished := m.Generated
	if finished.IsZero() {
		finished = time.Now()
	}
	env := m.Environment
	var detection any
	if len(r.Detection) > 0 {
		detection = string(r.Detection)
	}
	_, err = conn.ExecContext(ctx, `INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		m.RunID, utc(finished), utc(time.Now()), nullable(m.Host),
		nullable(first(env.HostCPU)), nullable(first(env.ORTVersion)), nullable(first(env.ORTLibrary)), nullable(first(env.ORTLibrarySHA256)),
		nullable(first(env.CodeCommit)), nullable(first(env.CatalogCommit)), list(env.Devices),
		r.Interrupted, list(m.Problems), r.Source, nullable(r.ContentSHA256), detection, nullable(strings.Join(env.Catalog, "; ")))
	if err != nil {
		return fmt.Errorf("runs: %w", err)
	}

	detectionID, err := nextID(ctx, conn, "detections")
	if err != nil {
		return err
	}
	detectedAt := m.DetectedAt
	if detectedAt.IsZero() {
		detectedAt = finished
	}
	for i, d := range m.Detection {
		_, err = conn.ExecContext(ctx, `INSERT INTO detections VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
			detectionID+int64(i), m.RunID, d.Target, d.Available, nullable(d.Name), list(d.Features), nullable(d.Reason), utc(detectedAt))
		if err != nil {
			return fmt.Errorf("detections: %w", err)
		}
	}

	cellID, err := nextID(ctx, conn, "cells")
	if err != nil {
		return err
	}
	// Cells, checks, outputs and samples go through DuckDB's appender, in the same
	// transaction: a run of 300 cells has ~10⁶ samples, and an INSERT of a cell's
	// 52 columns costs a millisecond, a third of the whole store.
	err = conn.Raw(func(dc any) error {
		return appendCells(dc.(driver.Conn), m.RunID, cellID, m.Cells)
	})
	if err != nil {
		return err
	}
	_, err = conn.ExecContext(ctx, "COMMIT")
	return err
}

func appendCells(dc driver.Conn, runID string, firstID int64, cells []matrix.Cell) error {
	var appenders []*duckdb.Appender
	closeAll := func() error {
		var errs []error
		for _, a := range appenders {
			errs = append(errs, a.Close())
		}
		return errors.Join(errs...)
	}
	for _, table := range []string{"cells", "checks", "outputs", "samples"} {
		a, err := duckdb.NewAppenderFromConn(dc, "", table)
		if err != nil {
			closeAll()
			return fmt.Errorf("%s: %w", table, err)
		}
		appenders = append(appenders, a)
	}
	cellRows, checks, outputs, samples := appenders[0], appenders[1], appenders[2], appenders[3]
	fail := func(what string, err error) error {
		closeAll()
		return fmt.Errorf("%s: %w", what, err)
	}
	for i := range cells {
		c := &cells[i]
		id := firstID + int64(i)
		if err := cellRows.AppendRow(cellValues(id, runID, c)...); err != nil {
			return fail(fmt.Sprintf("cell %s on %s", c.Model, c.Target), err)
		}
		for j, ch := range c.Checks {
			if err := checks.AppendRow(id, int32(j), ch.Name, string(ch.Status), nullable(ch.Reason), nullable(string(ch.Cause)), nullable(ch.Skipped)); err != nil {
				return fail("checks", err)
			}
		}
		for j, o := range c.Outputs {
			shape := o.Shape
			if shape == nil {
				shape = []int64{}
			}
			if err := outputs.AppendRow(id, int32(j), o.Name, nullable(o.DType), shape); err != nil {
				return fail("outputs", err)
			}
		}
		for j, ms := range c.SamplesMS {
			if err := samples.AppendRow(id, int32(j), ms); err != nil {
				return fail("samples", err)
			}
		}
	}
	return closeAll()
}

// cellValues is a row of the cells table, its columns in order.
func cellValues(id int64, runID string, c *matrix.Cell) []driver.Value {
	v := []driver.Value{id, runID, c.Model, nullable(c.Family), c.Target, string(c.Status), nullable(c.Reason), nullable(string(c.Cause)),
		nullable(c.Fixture), nullable(c.Fallback), nullable(c.FallsBackTo)}
	if p := c.Placement; p != nil {
		var share any
		provider := ""
		if c.Provenance != nil {
			provider = c.Provenance.Provider
		}
		if p.EP != "" || provider != "" {
			share = p.TargetShare(provider)
		}
		v = append(v, share, jsonValue(p))
	} else {
		v = append(v, nil, nil)
	}
	if m := c.Metrics; m != nil {
		v = append(v, m.LoadMS, m.FirstRunMS, int32(m.Runs), int32(m.WarmupRuns), m.MinMS, m.P50MS, m.P90MS, m.P95MS, m.P99MS,
			m.MaxMS, m.MeanMS, m.StdevMS, m.CoV, floats(m.BlockP50MS), m.ThroughputPerS, m.Batch, m.PeakRSSBytes, m.BaseRSSBytes, nullable(m.PeakRSSScope))
	} else {
		v = append(v, make([]driver.Value, 19)...)
	}
	if c.Worst != nil {
		v = append(v, jsonValue(c.Worst))
	} else {
		v = append(v, nil)
	}
	if s := c.Size; s != nil {
		v = append(v, s.Params, s.WeightBytes, nullable(s.Tier), s.EstimateBytes)
	} else {
		v = append(v, nil, nil, nil, nil)
	}
	if p := c.Provenance; p != nil {
		var options any
		if p.Options != nil {
			options = jsonValue(p.Options)
		}
		var t any
		if !p.Time.IsZero() {
			t = utc(p.Time)
		}
		v = append(v, nullable(p.ORTVersion), nullable(p.ORTLibrary), nullable(p.ORTLibSHA256), nullable(p.Provider), options,
			nullable(p.HostCPU), nullable(p.Device), nullable(p.Driver), nullable(p.ModelSHA256), nullable(p.CatalogCommit), nullable(p.CodeCommit), t)
	} else {
		v = append(v, make([]driver.Value, 12)...)
	}
	v = append(v, c.Metrics != nil, c.Size != nil, c.Provenance != nil)
	var wall any
	if c.WallMS > 0 {
		wall = c.WallMS
	}
	v = append(v, wall)
	if m := c.Metrics; m != nil {
		v = append(v, m.WarmupMS, m.WarmupSettled, m.WarmupDrift, m.TimedMS, m.BlockCoV, nullable(m.Unstable))
	} else {
		v = append(v, make([]driver.Value, 6)...)
	}
	if p := c.Provenance; p != nil {
		v = append(v, int32(p.IntraOpThreads), int32(p.InterOpThreads), nullable(p.CPUGovernor))
	} else {
		v = append(v, nil, nil, nil)
	}
	var modelPeak, modelScope any
	if m := c.Metrics; m != nil {
		modelScope = nullable(m.ModelPeakScope)
		if m.ModelPeakBytes != 0 {
			modelPeak = m.ModelPeakBytes
		}
	}
	var catalog string
	if c.Provenance != nil {
		catalog = c.Provenance.Catalog
	}
	return append(v, modelPeak, modelScope, nullable(c.Explain), nullable(catalog))
}

// nextID is one past the largest id of a table. Ids are assigned here rather than
// by a sequence so a run's child rows can name their cell before it is read back;
// DuckDB's single writer makes that safe.
func nextID(ctx context.Context, conn *sql.Conn, table string) (int64, error) {
	var id int64
	if err := conn.QueryRowContext(ctx, `SELECT coalesce(max(id), 0) + 1 FROM `+table).Scan(&id); err != nil {
		return 0, fmt.Errorf("%s: %w", table, err)
	}
	return id, nil
}

// nullable stores "" as NULL, so SQL users can write IS NULL.
func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func list(s []string) any {
	if s == nil {
		return nil
	}
	return s
}

func floats(f []float64) any {
	if f == nil {
		return nil
	}
	return f
}

// jsonValue is v for a JSON column: the appender writes a json.RawMessage as it is
// (a string it would quote).
func jsonValue(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return json.RawMessage(b)
}

// utc drops the location and keeps microseconds, which is what DuckDB's TIMESTAMP
// holds.
func utc(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}
