package matrix

import (
	"testing"

	"github.com/hwtest/hwtest/runtime"
)

func TestFallsBackToFirstTargetThatRan(t *testing.T) {
	cells := []Cell{
		{Model: "m", Target: "cpu", Status: runtime.StatusPass},
		{Model: "m", Target: "cuda", Status: runtime.StatusUnavailable, chain: []string{"cpu"}},
		{Model: "m", Target: "tensorrt", Status: runtime.StatusUnavailable, chain: []string{"cuda", "cpu"}},
		{Model: "m", Target: "wasm", Status: runtime.StatusUnavailable, chain: []string{"webgpu"}},
		{Model: "m", Target: "webgpu", Status: runtime.StatusUnavailable},
	}
	resolveFallbacks(cells)
	for i, want := range []string{"", "cuda → cpu", "tensorrt → cpu", "", ""} {
		if cells[i].FallsBackTo != want {
			t.Errorf("%s: falls back to %q, want %q", cells[i].Target, cells[i].FallsBackTo, want)
		}
	}
	if cells[2].Status != runtime.StatusUnavailable {
		t.Error("a fallback made the cell something else than unavailable")
	}
}

func TestDevicesOnlyWhereACellRan(t *testing.T) {
	e := environment([]Cell{
		{Target: "cpu", Status: runtime.StatusPass, Provenance: &runtime.Provenance{Device: "AMD EPYC"}},
		{Target: "openvino", Status: runtime.StatusUnavailable, Provenance: &runtime.Provenance{Device: "AMD EPYC"}},
	})
	if len(e.Devices) != 1 || e.Devices[0] != "cpu: AMD EPYC" {
		t.Errorf("devices %v", e.Devices)
	}
}
