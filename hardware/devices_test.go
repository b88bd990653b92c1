package hardware

import (
	"testing"

	"github.com/hwtest/hwtest/runtime"
)

func TestDevice(t *testing.T) {
	r := Report{CPU: CPU{Brand: "AMD EPYC"}, NVIDIA: NVIDIA{DriverVersion: "550.54.15", CUDADriverVersion: "12.4",
		GPUs: []NVIDIAGPU{{Name: "NVIDIA H100 80GB HBM3", ComputeCapability: "9.0"}}}}
	for _, c := range []struct{ provider, device, driver string }{
		{runtime.CPUProvider, "AMD EPYC", ""},
		{"CUDAExecutionProvider", "NVIDIA H100 80GB HBM3 (compute 9.0)", "NVIDIA 550.54.15, CUDA 12.4"},
		{"MIGraphXExecutionProvider", "", ""},
		{"QNNExecutionProvider", "", ""},
	} {
		d, drv := r.Device(runtime.Target{Provider: c.provider})
		if d != c.device || drv != c.driver {
			t.Errorf("%s: %q %q, want %q %q", c.provider, d, drv, c.device, c.driver)
		}
	}
}
