package matrix

import (
	"testing"

	"github.com/hwtest/hwtest/result"
)

func TestFallsBackToFirstTargetThatRan(t *testing.T) {
	cells := []Cell{
		{Model: "m", Target: "cpu", Status: result.StatusPass},
		{Model: "m", Target: "cuda", Status: result.StatusUnavailable, chain: []string{"cpu"}},
		{Model: "m", Target: "tensorrt", Status: result.StatusUnavailable, chain: []string{"cuda", "cpu"}},
		{Model: "m", Target: "wasm", Status: result.StatusUnavailable, chain: []string{"webgpu"}},
		{Model: "m", Target: "webgpu", Status: result.StatusUnavailable},
	}
	resolveFallbacks(cells)
	for i, want := range []string{"", "cuda → cpu", "tensorrt → cpu", "", ""} {
		if cells[i].FallsBackTo != want {
			t.Errorf("%s: falls back to %q, want %q", cells[i].Target, cells[i].FallsBackTo, want)
		}
	}
	if cells[2].Status != result.StatusUnavailable {
		t.Error("a fallback made the cell something else than unavailable")
	}
}

func TestDevicesOnlyWhereACellRan(t *testing.T) {
	e := environment([]Cell{
		{Target: "cpu", Status: result.StatusPass, Provenance: &result.Provenance{Device: "AMD EPYC"}},
		{Target: "openvino", Status: result.StatusUnavailable, Provenance: &result.Provenance{Device: "AMD EPYC"}},
	})
	if len(e.Devices) != 1 || e.Devices[0] != "cpu: AMD EPYC" {
		t.Errorf("devices %v", e.Devices)
	}
}
