package history

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/hwtest/hwtest/result"
)

// ConformanceRun is one `hwtest conformance`: ONNX's own test cases on some targets,
// each case's result as the generated conformance suite reported it.
type ConformanceRun struct {
	RunID       string
	Finished    time.Time
	Host        string
	ORTVersion  string
	DataVersion string // libonnx-testdata's
	Tolerance   string // what pass meant
	Targets     []string
	Interrupted bool
	Cases       []result.OpCaseReport
}

// StoreConformance writes a conformance run and its cases in one transaction: all of
// it or nothing.
func (db *DB) StoreConformance(ctx context.Context, r ConformanceRun) (err error) {
	if r.RunID == "" {
		return errors.New("history: a conformance run to store needs a run id")
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
			err = fmt.Errorf("history %s: storing conformance run %s: %w (nothing of it was stored)", db.path, r.RunID, err)
		}
	}()
	if len(r.Targets) == 0 {
		for _, c := range r.Cases {
			if !slices.Contains(r.Targets, c.Target) {
				r.Targets = append(r.Targets, c.Target)
			}
		}
	}
	finished := r.Finished
	if finished.IsZero() {
		finished = time.Now()
	}
	_, err = conn.ExecContext(ctx, `INSERT INTO conformance_runs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.RunID, utc(finished), utc(time.Now()), nullable(r.Host), nullable(r.ORTVersion), r.DataVersion, r.Tolerance, list(r.Targets), r.Interrupted)
	if err != nil {
		return fmt.Errorf("conformance_runs: %w", err)
	}
	stmt, err := conn.PrepareContext(ctx, `INSERT INTO op_cases VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	defer stmt.Close()
	for _, c := range r.Cases {
		var output, index, got, want, abs, allowed any
		if w := c.Worst; w != nil {
			output, index, got, want, abs, allowed = w.Output, int64(w.Index), w.Got, w.Want, w.AbsErr, w.Allowed
		}
		var ms any
		if c.Ms > 0 {
			ms = c.Ms
		}
		if _, err := stmt.ExecContext(ctx, r.RunID, c.Target, c.Op, c.Domain, c.Opset, c.Case, c.Status,
			output, index, got, want, abs, allowed, nullable(c.Error), nullable(c.Device), ms); err != nil {
			return fmt.Errorf("op_cases %s on %s: %w", c.Case, c.Target, err)
		}
	}
	_, err = conn.ExecContext(ctx, "COMMIT")
	return err
}

// ScoreRun is the conformance run a target's scoreboard column comes from.
type ScoreRun struct {
	RunID    string
	Finished time.Time
	Host     string
}

// Scoreboard is every target's latest conformance results: the cases and, per
// target, the run they come from.
type Scoreboard struct {
	Cases []result.OpCaseReport // by target, then case
	Runs  map[string]ScoreRun
}

// Scoreboard reads, for each (target, case), the latest result that is an answer
// from the target (pass, mismatch or not-supported), else its latest of any status.
// So a later run on a machine without a GPU does not hide the run that had one, a
// run of some operators (--op) updates only theirs, and a run cut short by its
// timeout, an interrupt or a dead browser (its unfinished cases are errors) does
// not replace what an earlier run measured. Runs says, per target, the latest run
// its column draws on. No targets means all of them.
func (db *DB) Scoreboard(ctx context.Context, targets []string) (Scoreboard, error) {
	sb := Scoreboard{Runs: map[string]ScoreRun{}}
	query := `
SELECT target, op, domain, opset, case_name, status,
       worst_output, worst_index, worst_got, worst_want, worst_abs_err, worst_allowed,
       error, device, ms, run_id, finished_at, host
FROM (
	SELECT o.target, o.op, o.domain, coalesce(o.opset, 0) AS opset, o.case_name, o.status,
	       o.worst_output, o.worst_index, o.worst_got, o.worst_want, o.worst_abs_err, o.worst_allowed,
	       coalesce(o.error, '') AS error, coalesce(o.device, '') AS device, coalesce(o.ms, 0) AS ms,
	       o.run_id, r.finished_at, coalesce(r.host, '') AS host,
	       row_number() OVER (PARTITION BY o.target, o.case_name
	                          ORDER BY o.status IN ('pass', 'mismatch', 'not-supported') DESC, r.finished_at DESC, o.run_id DESC) AS n
	FROM op_cases o JOIN conformance_runs r USING (run_id))
WHERE n = 1
ORDER BY target, case_name`
	err := db.each(ctx, query, func(rows *sql.Rows) error {
		var c result.OpCaseReport
		var output sql.NullString
		var index sql.NullInt64
		var got, want, abs, allowed sql.NullFloat64
		var run ScoreRun
		if err := rows.Scan(&c.Target, &c.Op, &c.Domain, &c.Opset, &c.Case, &c.Status,
			&output, &index, &got, &want, &abs, &allowed, &c.Error, &c.Device, &c.Ms,
			&run.RunID, &run.Finished, &run.Host); err != nil {
			return err
		}
		if output.Valid {
			c.Worst = &result.Deviation{Output: output.String, Index: int(index.Int64), Got: got.Float64, Want: want.Float64, AbsErr: abs.Float64, Allowed: allowed.Float64}
		}
		if len(targets) > 0 && !slices.Contains(targets, c.Target) {
			return nil
		}
		sb.Cases = append(sb.Cases, c)
		if last, ok := sb.Runs[c.Target]; !ok || run.Finished.After(last.Finished) {
			sb.Runs[c.Target] = run
		}
		return nil
	})
	if err != nil {
		return Scoreboard{}, fmt.Errorf("history %s: reading the conformance scoreboard: %w", db.path, err)
	}
	return sb, nil
}
