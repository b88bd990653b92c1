package fleet

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/hwtest/hwtest/catalog"
	"github.com/hwtest/hwtest/matrix"
	"github.com/hwtest/hwtest/runner"
)

// CatalogSHA256 names a pair of catalogs in the fleet: the sha256 of models.yaml's
// bytes and hardware.yaml's, with CRLF line ends read as LF. A worker runs only jobs of the catalogs it has, so a
// model id means the same model on every machine.
func CatalogSHA256(modelsFile, hardwareFile string) (string, error) {
	h := sha256.New()
	for _, f := range []string{modelsFile, hardwareFile} {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		// A Windows checkout (core.autocrlf) has the same catalogs in CRLF.
		b = bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n"))
		fmt.Fprintf(h, "%s %d\n", filepath.Base(f), len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// ModelSHA256 is the hash of the file a model runs from on this machine (its source,
// or the fixture standing in for it); "" when neither is here.
func ModelSHA256(root string, m catalog.Model) string {
	sha, _, _ := ResolveModel(root, m)
	return sha
}

// SuiteExecutor runs jobs as `hwtest run` runs models: each job is the model's
// specs on the job's target, in a suite process of its own.
type SuiteExecutor struct {
	Machine       *runner.Machine
	Catalogs      *catalog.Catalogs
	Root          string
	CatalogSHA256 string
	WorkDir       string // each job's Ginkgo report, removed when the job ends
	// JS and NC reach the fleet, to fetch a model file this machine lacks.
	JS jetstream.JetStream
	NC *nats.Conn
}

// Exec runs one job. It refuses, with the reason as the job's error cell, a job of
// other catalogs or of a model file other than this machine's: it never runs
// something else under the job's name.
func (e *SuiteExecutor) Exec(ctx context.Context, j Job) ([]matrix.Cell, error) {
	if j.CatalogSHA256 != e.CatalogSHA256 {
		return nil, fmt.Errorf("refused: the job's catalogs have sha256 %s, this worker's %s: bring the worker's checkout to the submitter's commit and restart it", short(j.CatalogSHA256), short(e.CatalogSHA256))
	}
	m, ok := e.Catalogs.Model(j.Model)
	if !ok {
		return nil, fmt.Errorf("refused: model %q is not in this worker's catalog", j.Model)
	}
	if j.ModelSHA256 != "" {
		have := ModelSHA256(e.Root, m)
		if have == "" && e.JS != nil {
			// Neither the model nor its fixture is here: the submitter's file comes
			// through the fleet, checked against the job's sha256.
			path, err := fetchPath(e.Root, m, j.ModelFixture)
			if err == nil {
				err = FetchModel(ctx, e.JS, e.NC, j.Run, j.ModelSHA256, path)
			}
			if err != nil {
				return nil, fmt.Errorf("refused: model %q is not on this worker and fetching it from the fleet failed: %v (run `make setup` there)", j.Model, err)
			}
			have = ModelSHA256(e.Root, m)
		}
		switch {
		case have == "":
			return nil, fmt.Errorf("refused: model %q is not on this worker (run `make setup` there)", j.Model)
		case have != j.ModelSHA256:
			return nil, fmt.Errorf("refused: this worker's file for %q has sha256 %s, the submitter's %s (one has the real model, the other its fixture?): run `make setup` on both", j.Model, short(have), short(j.ModelSHA256))
		}
	}
	dir, err := os.MkdirTemp(e.WorkDir, "job-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	var env []string
	for _, k := range MeasurementSettings {
		if v, ok := j.Settings[k]; ok {
			env = append(env, k+"="+v)
		}
	}
	return e.Machine.RunCell(ctx, m, j.Target, dir, j.Timeout, env)
}
