// Package runner is `hwtest run`: it builds each family's suite once and runs every
// model's specs in a process of its own, with a timeout, so a native crash or a hang
// in one model is recorded as that model's error and the others still finish.
package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/hwtest/hwtest/layout"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/hwtest/hwtest/catalog"
	"github.com/hwtest/hwtest/generator"
	"github.com/hwtest/hwtest/hardware"
	"github.com/hwtest/hwtest/matrix"
	"github.com/hwtest/hwtest/runtime"
)

// Options configure a run.
type Options struct {
	Root        string
	Catalogs    *catalog.Catalogs
	OutDir      string        // the report folder to write: reports/<timestamp>
	Timeout     time.Duration // per model process
	LabelFilter string        // extra Ginkgo label filter ANDed with the model's, e.g. "hw:cpu"
	Models      []string      // only these model ids; all when empty
	Targets     []string      // the targets LabelFilter selects; all when empty
	Env         []string      // extra environment for suite processes
	Log         io.Writer
}

// Result is what a run produced.
type Result struct {
	Matrix    matrix.Matrix
	Failures  []matrix.ProcessFailure
	ReportDir string
}

// Run builds, runs and collects. It returns an error only when it could not run at
// all; failing cells are results, not errors.
func Run(ctx context.Context, o Options) (*Result, error) {
	if !filepath.IsAbs(o.Root) || !filepath.IsAbs(o.OutDir) {
		return nil, fmt.Errorf("runner: Root %q and OutDir %q must be absolute: suites run in their own folders", o.Root, o.OutDir)
	}
	if err := os.MkdirAll(filepath.Join(o.OutDir, "ginkgo"), 0o755); err != nil {
		return nil, err
	}
	binDir := layout.State(o.Root, "build")
	if err := os.MkdirAll(binDir, 0o755); err != nil {
		return nil, err
	}
	// Detection is stored with the run, and each result names its device.
	rts := hardware.Targets(o.Catalogs.Targets)
	det := hardware.Detect(ctx, rts...)
	runtime.Shutdown() // the browser probes started Chromium; each suite starts its own
	if b, err := json.MarshalIndent(det, "", "  "); err == nil {
		if err := os.WriteFile(filepath.Join(o.OutDir, "detect.json"), b, 0o644); err != nil {
			return nil, err
		}
	}
	devs, _ := json.Marshal(det.Devices(rts))
	o.Env = append(o.Env, runtime.DevicesEnv+"="+string(devs))
	wanted := map[string]bool{}
	for _, id := range o.Models {
		wanted[id] = true
	}
	var reports []types.Report
	var failures []matrix.ProcessFailure
	built := map[string]string{}
	for _, m := range o.Catalogs.Models {
		if len(wanted) > 0 && !wanted[m.ID] {
			continue
		}
		bin, ok := built[m.Family]
		if !ok {
			var err error
			if bin, err = buildSuite(ctx, o, binDir, m.Family); err != nil {
				return nil, err
			}
			built[m.Family] = bin
		}
		fmt.Fprintf(o.Log, "run: %s (%s)\n", m.ID, m.Family)
		rep, fail := runModel(ctx, o, bin, m)
		if fail != nil {
			fail.Targets = o.Targets // a crash marks only the targets this run asked for
			fmt.Fprintf(o.Log, "run: %s: %s\n", m.ID, fail.Err)
			failures = append(failures, *fail)
		}
		reports = append(reports, rep...)
	}
	// Every catalog model, run or not, so the matrix can say which were not run.
	var models, targets []string
	for _, m := range o.Catalogs.Models {
		models = append(models, m.ID)
	}
	for _, t := range o.Catalogs.Targets {
		targets = append(targets, t.ID)
	}
	mx := matrix.FromReports(reports, failures, models, targets)
	if err := matrix.Write(o.OutDir, mx); err != nil {
		return nil, err
	}
	return &Result{Matrix: mx, Failures: failures, ReportDir: o.OutDir}, nil
}

// buildSuite compiles a family's package once (`go test -c`), as `ginkgo build` does.
func buildSuite(ctx context.Context, o Options, binDir, family string) (string, error) {
	pkg := "./" + filepath.ToSlash(filepath.Join(generator.Dir, family))
	bin := filepath.Join(binDir, generator.PackageName(family)+".test")
	fmt.Fprintf(o.Log, "build: %s\n", pkg)
	cmd := exec.CommandContext(ctx, "go", "test", "-c", "-o", bin, pkg)
	cmd.Dir = o.Root
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("building %s: %v\n%s", pkg, err, out)
	}
	return bin, nil
}

// runModel runs one model's specs in its own process and reads its JSON report.
func runModel(ctx context.Context, o Options, bin string, m catalog.Model) ([]types.Report, *matrix.ProcessFailure) {
	report := filepath.Join(o.OutDir, "ginkgo", safeName(m.ID)+".json")
	filter := "model:" + m.ID
	if o.LabelFilter != "" {
		filter = "(" + filter + ") && (" + o.LabelFilter + ")"
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin,
		"-test.timeout=0",
		"--ginkgo.label-filter="+filter,
		"--ginkgo.json-report="+report,
		"--ginkgo.no-color",
	)
	// The suite runs in its package folder, as `go test` would run it.
	cmd.Dir = filepath.Join(o.Root, generator.Dir, m.Family)
	cmd.Env = append(append(os.Environ(), "HWTEST_ROOT="+o.Root), o.Env...)
	// Its own process group, so a timeout kills whatever the suite started too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var stderr tail
	cmd.Stdout = &stderr
	cmd.Stderr = &stderr
	os.Remove(report)
	err := cmd.Run()
	reports, readErr := matrix.ReadReports(report)
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return reports, &matrix.ProcessFailure{Model: m.ID, Err: fmt.Sprintf("timed out after %v (hwtest run --timeout); the process was killed", o.Timeout), Stderr: stderr.String()}
	case readErr != nil:
		msg := fmt.Sprintf("the suite process ended without a report: %v", err)
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				msg = fmt.Sprintf("the suite process crashed (%v) without a report", ws.Signal())
			}
		}
		return nil, &matrix.ProcessFailure{Model: m.ID, Err: msg, Stderr: stderr.String()}
	}
	// A non-zero exit with a complete report is failing cells, already in the report.
	return reports, nil
}

func safeName(id string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.' || r == '_' {
			return r
		}
		return '_'
	}, id)
}

// tail keeps the last 8 KiB written to it: enough to see a crash's message.
type tail struct{ buf bytes.Buffer }

const tailSize = 8 << 10

func (t *tail) Write(p []byte) (int, error) {
	t.buf.Write(p)
	if t.buf.Len() > 2*tailSize {
		b := t.buf.Bytes()
		keep := append([]byte(nil), b[len(b)-tailSize:]...)
		t.buf.Reset()
		t.buf.Write(keep)
	}
	return len(p), nil
}

func (t *tail) String() string {
	b := t.buf.Bytes()
	if len(b) > tailSize {
		b = b[len(b)-tailSize:]
	}
	return string(b)
}
