package analysis_test

import (
	"strings"
	"testing"

	"github.com/hwtest/hwtest/analysis"
	"github.com/hwtest/hwtest/matrix"
	"github.com/hwtest/hwtest/result"
)

// The memory summary carries the model-attributable peak next to the process
// peak: its mean over the cells that have one, and each heaviest cell's own.
func TestMemoryModelPeak(t *testing.T) {
	cell := func(model, target string, peak, modelPeak int64, scope string) matrix.Cell {
		return matrix.Cell{Model: model, Target: target, Status: result.StatusPass,
			Metrics: &result.Metrics{P50MS: 1, PeakRSSBytes: peak << 20, ModelPeakBytes: modelPeak << 20, ModelPeakScope: scope}}
	}
	m := matrix.Matrix{Models: []string{"a", "b", "c"}, Targets: []string{"cpu", "wasm"}, Cells: []matrix.Cell{
		cell("a", "cpu", 300, 200, "native"), cell("b", "cpu", 100, 40, "native"), cell("c", "cpu", 90, 0, "not measured: no reset"),
		cell("a", "wasm", 500, 0, "browser: none"),
	}}
	r := analysis.Analyze(m, []matrix.Matrix{m}, analysis.Options{})
	cpu, wasm := r.Memory.ByTarget[0], r.Memory.ByTarget[1]
	if cpu.ModelPeakCells != 2 || cpu.MeanModelPeakBytes != 120<<20 || cpu.ModelPeakScope != "native" {
		t.Errorf("cpu: %d cells, mean %d, scope %q; want 2, %d, native", cpu.ModelPeakCells, cpu.MeanModelPeakBytes, cpu.ModelPeakScope, 120<<20)
	}
	if wasm.ModelPeakCells != 0 || wasm.MeanModelPeakBytes != 0 || wasm.ModelPeakScope != "browser: none" {
		t.Errorf("wasm: %+v, want no model peak and why", wasm)
	}
	if h := r.Memory.Heaviest[0].Cells[0]; h.Model != "a" || h.ModelPeakBytes != 200<<20 {
		t.Errorf("heaviest on cpu: %+v", h)
	}
	text := string(r.Text())
	for _, want := range []string{"120.0 (2 cells)", "a 300.0 (model 200.0)", "b 100.0 (model 40.0)"} {
		if !strings.Contains(text, want) {
			t.Errorf("the text lacks %q:\n%s", want, text)
		}
	}
}
