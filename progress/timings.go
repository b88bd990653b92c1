package progress

import (
	"context"
	"fmt"
	"time"

	"github.com/hwtest/hwtest/history"
)

// Timings are cells' past wall times: for each cell, the median of its last
// pastRuns timed results in the history.
type Timings map[Cell]time.Duration

// pastRuns is how many of a cell's latest results its timing is the median of:
// enough to shrug off one slow run, few enough to follow a changed cell.
const pastRuns = 5

// ReadTimings reads every cell's timing from the history. Cells stopped by a signal
// or killed at their timeout did not run their course and are left out; so are
// results stored before the history kept wall times (schema 3).
func ReadTimings(ctx context.Context, db *history.DB) (Timings, error) {
	rows, err := db.SQL().QueryContext(ctx, `
SELECT model, target, median(wall_ms)
FROM (
	SELECT c.model, c.target, c.wall_ms,
	       row_number() OVER (PARTITION BY c.model, c.target ORDER BY r.finished_at DESC, c.run_id DESC) AS n
	FROM cells c JOIN runs r USING (run_id)
	WHERE c.wall_ms IS NOT NULL AND coalesce(c.cause, '') NOT IN ('interrupted', 'timeout')
)
WHERE n <= ?
GROUP BY model, target`, pastRuns)
	if err != nil {
		return nil, fmt.Errorf("reading past timings: %w", err)
	}
	defer rows.Close()
	t := Timings{}
	for rows.Next() {
		var c Cell
		var ms float64
		if err := rows.Scan(&c.Model, &c.Target, &ms); err != nil {
			return nil, err
		}
		t[c] = time.Duration(ms * float64(time.Millisecond))
	}
	return t, rows.Err()
}

// OpenTimings reads the timings of the history at path for a run about to start,
// waiting at most wait for another hwtest that holds the database. Its error
// wraps history.ErrNoHistory when there is none yet.
func OpenTimings(ctx context.Context, path string, wait time.Duration) (Timings, error) {
	db, err := history.Open(ctx, path, history.ReadOnly, history.Options{Wait: wait})
	if err != nil {
		return nil, err
	}
	defer db.Close()
	return ReadTimings(ctx, db)
}
