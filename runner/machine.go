package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/hwtest/hwtest/catalog"
	"github.com/hwtest/hwtest/hardware"
	"github.com/hwtest/hwtest/matrix"
	"github.com/hwtest/hwtest/result"
	"github.com/hwtest/hwtest/runtime"
)

// Machine is this machine made ready to run models one cell at a time, as Run is
// before its first model: the suite built and the targets probed. `hwtest worker`
// keeps one for all the jobs it takes, so each job is a suite process of its own
// with the same isolation, timeout and provenance as in `hwtest run`.
type Machine struct {
	o        Options
	bin      string
	binDir   string
	Detected []result.Detected // what the probes said of each target probed
}

// NewMachine builds the suite and probes the catalog's targets, only o.TargetIDs'
// when set. o.RunID names the build folder; OutDir, ModelIDs and LabelFilter are set
// per cell.
func NewMachine(ctx context.Context, o Options) (*Machine, error) {
	if !filepath.IsAbs(o.Root) {
		return nil, fmt.Errorf("runner: Root %q must be absolute", o.Root)
	}
	binDir, err := newBuildDir(o.Root, o.RunID)
	if err != nil {
		return nil, err
	}
	rts := hardware.Targets(o.Catalogs.Targets)
	if len(o.TargetIDs) > 0 {
		rts = slices.DeleteFunc(rts, func(t runtime.Target) bool { return !slices.Contains(o.TargetIDs, t.ID) })
	}
	build := startBuild(ctx, o, binDir)
	det := hardware.Detect(ctx, rts...)
	runtime.Shutdown() // the browser probes started Chromium; each suite starts its own
	bin, err := build.wait()
	if err != nil {
		os.RemoveAll(binDir)
		return nil, err
	}
	devs, _ := json.Marshal(det.Devices(rts))
	o.Env = append(o.Env, runtime.DevicesEnv+"="+string(devs))
	return &Machine{o: o, bin: bin, binDir: binDir, Detected: det.Detected(rts)}, nil
}

// Available are the targets the probes found.
func (m *Machine) Available() []string {
	var ts []string
	for _, d := range m.Detected {
		if d.Available {
			ts = append(ts, d.Target)
		}
	}
	return ts
}

// RunCell runs model's specs on one target in a suite process of its own and
// returns that target's cells; outDir keeps the Ginkgo report. A crash, a hang
// (timeout, when positive, else the Machine's) or an interrupt is the cell's status,
// as in a run's matrix.
// env is added to the suite's environment, over the Machine's.
func (m *Machine) RunCell(ctx context.Context, model catalog.Model, target, outDir string, timeout time.Duration, env []string) ([]matrix.Cell, error) {
	o := m.o
	o.Env = append(slices.Clone(o.Env), env...)
	if timeout > 0 {
		o.Timeout = timeout
	}
	o.OutDir, o.ModelIDs, o.TargetIDs = outDir, []string{model.ID}, []string{target}
	o.LabelFilter = result.TargetLabel(target)
	if err := os.MkdirAll(filepath.Join(outDir, "ginkgo"), 0o755); err != nil {
		return nil, err
	}
	reports, fail := runModel(ctx, o, m.bin, model, map[string]result.Status{})
	var fs []matrix.ProcessFailure
	if fail != nil {
		fail.Targets = o.TargetIDs
		fs = []matrix.ProcessFailure{*fail}
	}
	var targets []string
	for _, t := range o.Catalogs.Targets {
		targets = append(targets, t.ID)
	}
	mx := matrix.FromReports(reports, fs, []string{model.ID}, targets)
	var cells []matrix.Cell
	for _, c := range mx.Cells {
		if c.Model == model.ID && c.Target == target {
			cells = append(cells, c)
		}
	}
	if len(cells) == 0 {
		return nil, fmt.Errorf("the suite ran no spec of %s on %s (is the suite generated from these catalogs?)", model.ID, target)
	}
	return cells, nil
}

// Close removes the built suite and any browser left behind.
func (m *Machine) Close() {
	os.RemoveAll(m.binDir)
	runtime.Shutdown()
}
