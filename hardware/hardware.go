// Package hardware detects what this machine offers hwtest's targets: the CPU and its
// vector extensions, NVIDIA, AMD, Intel and Apple GPUs, the vendor runtime libraries
// the ONNX Runtime execution providers load, and which execution providers the loaded
// ONNX Runtime accepts.
//
// Every probe answers with a Probe: found or not, and when not, the exact reason
// ("not present: libnvidia-ml.so.1 not found (no NVIDIA driver)"), never a bare false.
// Reading (sysfs, NVML, ldconfig) is kept apart from parsing so that the parsers run
// in tests on recorded fixtures under testdata/.
package hardware

import (
	"context"
	"os"
	goruntime "runtime"
	"time"

	"github.com/hwtest/hwtest/runtime"
)

// Probe is the answer of one detector. Reason says exactly why Found is false; Detail
// says what was found (or, when not found, what was looked at).
type Probe struct {
	Name   string `json:"name"`
	Found  bool   `json:"found"`
	Detail string `json:"detail,omitempty"`
	Reason string `json:"reason,omitempty"`
}

func found(name, detail string) Probe { return Probe{Name: name, Found: true, Detail: detail} }

func missing(name, reason string) Probe { return Probe{Name: name, Reason: reason} }

// Report is everything Detect found, ready for `hwtest detect --json`.
type Report struct {
	Generated time.Time  `json:"generated"`
	Host      Host       `json:"host"`
	CPU       CPU        `json:"cpu"`
	NVIDIA    NVIDIA     `json:"nvidia"`
	AMD       AMD        `json:"amd"`
	Intel     Intel      `json:"intel"`
	Apple     Apple      `json:"apple"`
	Libraries []Library  `json:"libraries"`
	Runtime   Probe      `json:"onnxruntime"`
	Providers []Provider `json:"providers"`
	Web       *Web       `json:"web,omitempty"`
}

// Host is the operating system hwtest runs on.
type Host struct {
	OS       string `json:"os"`
	Arch     string `json:"arch"`
	Hostname string `json:"hostname,omitempty"`
	Kernel   string `json:"kernel,omitempty"`
}

// Probes lists every probe of the report in the order Table prints them.
func (r Report) Probes() []Probe {
	out := []Probe{r.CPU.Probe, r.NVIDIA.Probe, r.AMD.Probe, r.AMD.KFD, r.Intel.Probe, r.Apple.Probe}
	for _, l := range r.Libraries {
		out = append(out, l.Probe)
	}
	out = append(out, r.Runtime)
	for _, p := range r.Providers {
		out = append(out, p.Probe)
	}
	return out
}

// env is where Detect reads from: the real machine by default, fixtures in tests.
type env struct {
	root     string                                    // filesystem root for /proc, /sys, /dev, /opt
	goos     string                                    // runtime.GOOS
	goarch   string                                    // runtime.GOARCH
	ldconfig func(ctx context.Context) (string, error) // `ldconfig -p` output
	nvml     func() (nvmlSnapshot, error)              // NVML read; error when Init fails
	sysctl   func(ctx context.Context, name string) (string, error)
	ortInit  func() (runtime.Library, error)
	ortProbe func(runtime.Target) string
	getenv   func(string) string
	// probeBrowsers starts Chromium for the WebGPU adapter and WebNN contexts.
	probeBrowsers bool
}

func realEnv() env {
	return env{
		root: "/", goos: goruntime.GOOS, goarch: goruntime.GOARCH,
		ldconfig: runLdconfig, nvml: readNVML, sysctl: runSysctl,
		ortInit: runtime.Init, ortProbe: runtime.Unavailable, getenv: os.Getenv,
		probeBrowsers: true,
	}
}

// Detect probes this machine. targets are the hardware.yaml targets whose execution
// providers are tried on the loaded ONNX Runtime (runtime.Unavailable); pass none to
// skip that part.
func Detect(ctx context.Context, targets ...runtime.Target) Report {
	return detect(ctx, realEnv(), targets)
}

func detect(ctx context.Context, e env, targets []runtime.Target) Report {
	r := Report{Generated: time.Now().UTC(), Host: detectHost(e)}
	r.CPU = detectCPU(e)
	r.NVIDIA = detectNVIDIA(e)
	r.AMD = detectAMD(e)
	r.Intel = detectIntel(e)
	r.Apple = detectApple(ctx, e)
	r.Runtime, r.Providers = detectProviders(e, targets)
	r.Libraries = detectLibraries(ctx, e, r.Runtime)
	if e.probeBrowsers {
		r.Web = detectWeb(targets)
	}
	return r
}

func detectHost(e env) Host {
	h := Host{OS: e.goos, Arch: e.goarch}
	if e.root == "/" {
		h.Hostname, _ = os.Hostname()
	}
	if b, err := os.ReadFile(join(e.root, "proc/sys/kernel/osrelease")); err == nil {
		h.Kernel = trim(string(b))
	}
	return h
}
