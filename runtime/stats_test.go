package runtime

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// Block medians follow the run order: a slowdown halfway through the timed runs
// shows in the later blocks only.
func TestBlockMedians(t *testing.T) {
	runs := func(n int, ms func(i int) float64) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = ms(i)
		}
		return out
	}
	// 100 runs: 10 blocks of 10; the first half at 1 ms, the second at 2 ms, each
	// block with one outlier the median ignores.
	steps := runs(100, func(i int) float64 {
		if i%10 == 3 {
			return 50
		}
		if i < 50 {
			return 1
		}
		return 2
	})
	if got := fmt.Sprint(BlockMedians(steps)); got != "[1 1 1 1 1 2 2 2 2 2]" {
		t.Errorf("100 runs: %s", got)
	}
	faster := func(i int) float64 { return float64(22 - i) }
	ramp := runs(23, faster)
	// 23 runs: 4 blocks (at least 5 runs each) of 5, 6, 6, 6 runs.
	if got := fmt.Sprint(BlockMedians(ramp)); got != "[20 14.5 8.5 2.5]" {
		t.Errorf("23 runs: %s", got)
	}
	if !slices.Equal(ramp, runs(23, faster)) {
		t.Error("BlockMedians reordered its input: the samples kept with it would be out of run order")
	}
	for n, want := range map[int]int{9: 0, 10: 2, 49: 9, 50: 10, 5000: 10} {
		if got := len(BlockMedians(runs(n, func(int) float64 { return 1 }))); got != want {
			t.Errorf("%d runs: %d blocks, want %d", n, got, want)
		}
	}
}

// LatencyStats's blocks are in run order, though its percentiles sort.
func TestLatencyStatsBlocksInRunOrder(t *testing.T) {
	var s []time.Duration
	for i := 100; i > 0; i-- {
		s = append(s, time.Duration(i)*time.Millisecond)
	}
	m := LatencyStats(s)
	if len(m.BlockP50MS) != 10 || m.BlockP50MS[0] != 95.5 || m.BlockP50MS[9] != 5.5 {
		t.Errorf("blocks = %v", m.BlockP50MS)
	}
	if got := SamplesMS(s[:3]); fmt.Sprint(got) != "[100 99 98]" {
		t.Errorf("samples = %v", got)
	}
}

// A cell whose timed runs shift halfway (another process took a core) is flagged
// unstable; one whose runs only have outliers is not.
func TestUnstableCellsAreFlagged(t *testing.T) {
	var steady, shifted []time.Duration
	for i := range 200 {
		d := time.Millisecond
		if i%17 == 0 {
			d = 9 * time.Millisecond // outliers: the block medians ignore them
		}
		steady = append(steady, d)
		if i >= 100 {
			d += 300 * time.Microsecond
		}
		shifted = append(shifted, d)
	}
	if m := LatencyStats(steady); m.Unstable != "" || m.BlockCoV != 0 {
		t.Errorf("steady: block CoV %g, unstable %q", m.BlockCoV, m.Unstable)
	}
	m := LatencyStats(shifted)
	if m.BlockCoV < 0.1 || !strings.Contains(m.Unstable, "10 blocks") || !strings.Contains(m.Unstable, "over 5%") {
		t.Errorf("shifted: block CoV %g, unstable %q", m.BlockCoV, m.Unstable)
	}
}

// The governor is read from cpufreq, each CPU's; without cpufreq the provenance
// says why there is none instead of guessing.
func TestGovernorIn(t *testing.T) {
	sys := t.TempDir()
	if got := governorIn(sys); !strings.HasPrefix(got, "none: the kernel exposes no cpufreq") {
		t.Errorf("no cpufreq: %q", got)
	}
	write := func(cpu, gov string) {
		dir := filepath.Join(sys, cpu, "cpufreq")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "scaling_governor"), []byte(gov+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("cpu0", "performance")
	write("cpu10", "performance")
	if got := governorIn(sys); got != "performance" {
		t.Errorf("same: %q", got)
	}
	write("cpu2", "powersave")
	if got := governorIn(sys); got != "cpu0 performance, cpu2 powersave, cpu10 performance" {
		t.Errorf("mixed: %q", got)
	}
}
