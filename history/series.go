package history

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/hwtest/hwtest/matrix"
	"github.com/hwtest/hwtest/result"
)

// Series is every stored run, oldest first, with what a trend over the runs needs
// of each cell: status, cause, family, fixture, p50, p99, peak RSS, placement and
// the provenance that keys a comparison (model sha256, ONNX Runtime version and
// library sha256, provider, device, driver, host CPU); and each run's host and
// detection. Checks, outputs, samples and the other metrics are left out: the
// whole history of 50 runs of 4,200 cells reads in well under a second this way,
// where RunMatrix takes a tenth of a second per run.
func (db *DB) Series(ctx context.Context) ([]matrix.Matrix, error) {
	var runs []matrix.Matrix
	index := map[string]int{}
	err := db.each(ctx, `SELECT run_id, finished_at, coalesce(host, '') FROM runs ORDER BY finished_at, run_id`, func(rows *sql.Rows) error {
		var m matrix.Matrix
		if err := rows.Scan(&m.RunID, &m.Generated, &m.Host); err != nil {
			return err
		}
		m.Generated = m.Generated.UTC()
		m.Summary = map[result.Status]int{}
		index[m.RunID] = len(runs)
		runs = append(runs, m)
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = db.each(ctx, `SELECT run_id, target, available, name, features, reason, detected_at FROM detections ORDER BY id`, func(rows *sql.Rows) error {
		var runID string
		var d result.Detected
		var name, reason sql.NullString
		var features anyList
		var at time.Time
		if err := rows.Scan(&runID, &d.Target, &d.Available, &name, &features, &reason, &at); err != nil {
			return err
		}
		d.Name, d.Reason, d.Features = name.String, reason.String, stringList(features)
		if i, ok := index[runID]; ok {
			runs[i].Detection = append(runs[i].Detection, d)
			runs[i].DetectedAt = at.UTC()
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	// Most of a cell's columns repeat from run to run (its names, status,
	// placement, provenance): each distinct combination is read once, and the
	// cells come as numbers naming them. Strings for every cell of every run took
	// three times as long.
	const (
		identity = `model, target, family, fixture, status, cause`
		provKey  = `provider, model_sha256, ort_version, ort_library_sha256, device, driver, host_cpu`
	)
	var idents []matrix.Cell
	err = db.each(ctx, `SELECT DISTINCT `+identity+` FROM cells ORDER BY `+identity, func(rows *sql.Rows) error {
		var c matrix.Cell
		var status string
		var family, fixture, cause sql.NullString
		if err := rows.Scan(&c.Model, &c.Target, &family, &fixture, &status, &cause); err != nil {
			return err
		}
		c.Family, c.Fixture, c.Status, c.Cause = family.String, fixture.String, result.Status(status), result.Cause(cause.String)
		idents = append(idents, c)
		return nil
	})
	if err != nil {
		return nil, err
	}
	var provs []*result.Provenance
	err = db.each(ctx, `SELECT DISTINCT `+provKey+` FROM cells WHERE has_provenance ORDER BY `+provKey, func(rows *sql.Rows) error {
		var provider, modelSHA, ortVersion, ortSHA, device, driver, cpu sql.NullString
		if err := rows.Scan(&provider, &modelSHA, &ortVersion, &ortSHA, &device, &driver, &cpu); err != nil {
			return err
		}
		provs = append(provs, &result.Provenance{Provider: provider.String, ModelSHA256: modelSHA.String, ORTVersion: ortVersion.String,
			ORTLibSHA256: ortSHA.String, Device: device.String, Driver: driver.String, HostCPU: cpu.String})
		return nil
	})
	if err != nil {
		return nil, err
	}
	var placements []*result.Placement
	err = db.each(ctx, `SELECT DISTINCT placement::VARCHAR AS p FROM cells WHERE placement IS NOT NULL ORDER BY p`, func(rows *sql.Rows) error {
		var text string
		if err := rows.Scan(&text); err != nil {
			return err
		}
		p := new(result.Placement)
		if err := json.Unmarshal([]byte(text), p); err != nil {
			return fmt.Errorf("a placement: %w", err)
		}
		placements = append(placements, p)
		return nil
	})
	if err != nil {
		return nil, err
	}
	// The numbers are row numbers in the orders of the queries above (1-based; 0:
	// none), and of the runs by time.
	err = db.each(ctx, `
WITH id AS (SELECT *, row_number() OVER (ORDER BY `+identity+`) AS n FROM (SELECT DISTINCT `+identity+` FROM cells)),
pv AS (SELECT *, row_number() OVER (ORDER BY `+provKey+`) AS n FROM (SELECT DISTINCT `+provKey+` FROM cells WHERE has_provenance)),
pl AS (SELECT p, row_number() OVER (ORDER BY p) AS n FROM (SELECT DISTINCT placement::VARCHAR AS p FROM cells WHERE placement IS NOT NULL)),
ru AS (SELECT run_id, row_number() OVER (ORDER BY finished_at, run_id) - 1 AS n FROM runs)
SELECT ru.n, id.n, c.has_metrics, c.p50_ms, c.p99_ms, c.peak_rss_bytes, coalesce(pl.n, 0), coalesce(pv.n, 0)
FROM cells c
JOIN ru USING (run_id)
JOIN id ON id.model = c.model AND id.target = c.target AND id.family IS NOT DISTINCT FROM c.family
	AND id.fixture IS NOT DISTINCT FROM c.fixture AND id.status = c.status AND id.cause IS NOT DISTINCT FROM c.cause
LEFT JOIN pl ON pl.p = c.placement::VARCHAR
LEFT JOIN pv ON c.has_provenance AND pv.provider IS NOT DISTINCT FROM c.provider AND pv.model_sha256 IS NOT DISTINCT FROM c.model_sha256
	AND pv.ort_version IS NOT DISTINCT FROM c.ort_version AND pv.ort_library_sha256 IS NOT DISTINCT FROM c.ort_library_sha256
	AND pv.device IS NOT DISTINCT FROM c.device AND pv.driver IS NOT DISTINCT FROM c.driver AND pv.host_cpu IS NOT DISTINCT FROM c.host_cpu
ORDER BY c.id`, func(rows *sql.Rows) error {
		var (
			ri, ident, placement, prov int
			p50, p99                   sql.NullFloat64
			peak                       sql.NullInt64
			hasMetrics                 bool
		)
		if err := rows.Scan(&ri, &ident, &hasMetrics, &p50, &p99, &peak, &placement, &prov); err != nil {
			return err
		}
		if ri < 0 || ri >= len(runs) || ident < 1 || ident > len(idents) || placement > len(placements) || prov > len(provs) {
			return fmt.Errorf("a cell's numbers are out of range: run %d of %d, identity %d of %d", ri, len(runs), ident, len(idents))
		}
		c := idents[ident-1]
		if hasMetrics {
			c.Metrics = &result.Metrics{P50MS: p50.Float64, P99MS: p99.Float64, PeakRSSBytes: peak.Int64}
		}
		// Shared between cells: the matrices are read-only.
		if placement > 0 {
			c.Placement = placements[placement-1]
		}
		if prov > 0 {
			c.Provenance = provs[prov-1]
		}
		runs[ri].Cells = append(runs[ri].Cells, c)
		runs[ri].Summary[c.Status]++
		return nil
	})
	return runs, err
}
