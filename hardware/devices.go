package hardware

import (
	"strings"

	"github.com/hwtest/hwtest/result"
	"github.com/hwtest/hwtest/runtime"
)

// Device names the hardware a target runs on, as Detect found it, for the
// provenance of every result: the GPU and driver behind CUDA, the CPU behind the
// CPU EP. "" when Detect found nothing for that target (it is then unavailable).
func (r Report) Device(t runtime.Target) (device, driver string) {
	switch t.Provider {
	case runtime.CPUProvider, "XnnpackExecutionProvider":
		return r.CPU.Brand, ""
	case "CUDAExecutionProvider", "TensorrtExecutionProvider":
		var names []string
		for _, g := range r.NVIDIA.GPUs {
			names = append(names, g.Name+" (compute "+g.ComputeCapability+")")
		}
		if len(names) == 0 {
			return "", ""
		}
		return strings.Join(names, ", "), "NVIDIA " + r.NVIDIA.DriverVersion + ", CUDA " + r.NVIDIA.CUDADriverVersion
	case "MIGraphXExecutionProvider", "ROCMExecutionProvider":
		var names []string
		for _, g := range r.AMD.GPUs {
			names = append(names, g.Name+" ("+g.GFXTarget+")")
		}
		return strings.Join(names, ", "), ""
	case "OpenVINOExecutionProvider":
		if dev := t.Options["device_type"]; strings.HasPrefix(dev, "GPU") {
			var names []string
			for _, g := range r.Intel.GPUs {
				names = append(names, g.Name+" ("+g.Driver+")")
			}
			return strings.Join(names, ", "), ""
		}
		return r.CPU.Brand, ""
	}
	return "", ""
}

// Devices maps each target id to its device and driver, for runs to record.
func (r Report) Devices(targets []runtime.Target) map[string][2]string {
	out := map[string][2]string{}
	for _, t := range targets {
		if d, drv := r.Device(t); d != "" {
			out[t.ID] = [2]string{d, drv}
		}
	}
	return out
}

// Detected sums up, per target, what the probes found: whether it is available, the
// device (or the provider's own words) and why not. It is what a run stores in its
// history next to the full report.
func (r Report) Detected(targets []runtime.Target) []result.Detected {
	probes := map[string]Provider{}
	for _, p := range r.Providers {
		probes[p.Target] = p
	}
	var out []result.Detected
	for _, t := range targets {
		p, ok := probes[t.ID]
		d := result.Detected{Target: t.ID, Available: ok && p.Found, Reason: p.Reason}
		if !ok {
			d.Reason = "not probed"
		}
		d.Name, _ = r.Device(t)
		if d.Name == "" {
			d.Name = p.Detail
		}
		if t.Provider == runtime.CPUProvider {
			d.Features = r.CPU.Features
		}
		out = append(out, d)
	}
	return out
}
