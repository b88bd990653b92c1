package runtime

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/hwtest/hwtest/result"
)

// ResetPeakRSS resets the kernel's high-water mark (VmHWM) to the current RSS, so
// the next PeakRSS covers only what happens after it.
func ResetPeakRSS() error {
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
}

// PeakRSS is VmHWM from /proc/self/status, in bytes.
func PeakRSS() (int64, error) { return statusBytes("VmHWM") }

// CurrentRSS is VmRSS from /proc/self/status, in bytes.
func CurrentRSS() (int64, error) { return statusBytes("VmRSS") }

func statusBytes(field string) (int64, error) {
	v, err := readStatus(field)
	return v[0], err
}

// readStatus reads fields of /proc/self/status in one read, in bytes, in the
// order asked.
func readStatus(fields ...string) ([]int64, error) {
	out := make([]int64, len(fields))
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return out, err
	}
	defer f.Close()
	found := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		for i, field := range fields {
			if name != field {
				continue
			}
			v := strings.Fields(rest) // "12345 kB"
			if len(v) != 2 || v[1] != "kB" {
				return out, fmt.Errorf("/proc/self/status %s: unexpected %q", field, rest)
			}
			kb, err := strconv.ParseInt(v[0], 10, 64)
			if err != nil {
				return out, fmt.Errorf("/proc/self/status %s: %w", field, err)
			}
			out[i] = kb * 1024
			found++
		}
	}
	if found < len(fields) {
		return out, fmt.Errorf("/proc/self/status lacks one of %v", fields)
	}
	return out, sc.Err()
}

// resetSlack is how far VmHWM may sit above VmRSS just after a reset that took:
// pages the Go runtime or ONNX Runtime's threads gave back between the kernel's
// reset and the read. A kernel that ignored the reset leaves the whole earlier
// peak, the model reference's included: far more.
const resetSlack = 4 << 20

// peakWindow is where a native cell's memory figures start: the high-water mark
// reset and the resident size read just before the target's session is created.
type peakWindow struct {
	// base is VmRSS right after the reset: what the process used before the
	// session (ONNX Runtime's library, the CPU reference's inputs and outputs,
	// Go's live heap), free memory given back first.
	base int64
	// err says why the window could not be opened (clear_refs refused, or the
	// kernel left VmHWM where it was): the peak then is the process's whole life's
	// and no figure can be laid at the model's door.
	err error
}

// openPeakWindow resets VmHWM and reads the base, checking the reset took: on a
// kernel that accepts the write to clear_refs but keeps VmHWM, the peak would
// silently be the process's lifetime peak. Free memory is given back first, so
// the base is what the process uses, not what its allocators kept.
func openPeakWindow() peakWindow {
	releaseFreeMemory()
	reset := ResetPeakRSS()
	v, err := readStatus("VmHWM", "VmRSS")
	switch {
	case err != nil:
		return peakWindow{err: err}
	case reset != nil:
		return peakWindow{base: v[1], err: fmt.Errorf("resetting VmHWM through /proc/self/clear_refs: %w", reset)}
	case v[0]-v[1] > resetSlack:
		return peakWindow{base: v[1], err: fmt.Errorf("the kernel kept VmHWM at %s MiB after clear_refs 5 (VmRSS %s MiB): it does not reset the high-water mark", result.FormatMiB(v[0]), result.FormatMiB(v[1]))}
	}
	return peakWindow{base: v[1]}
}

// Scopes of the memory figures, as reports show them next to the numbers.
const (
	nativePeakScope  = "hwtest suite process (ONNX Runtime in process)"
	nativeModelScope = "the suite process's VmHWM since just before the target's session was created, less its VmRSS then: the session's weights, ONNX Runtime's copies of them, activations and arena"
	browserPeakScope = "Chromium's processes: their proportional set size (PSS) after the measured runs"
	// The kernel keeps no peak of PSS and the page's memory before the session is
	// not read, so there is no baseline to subtract: none is made up.
	browserModelScope = "not measured for browser targets: Chromium's PSS has no peak and no reading before the session to subtract"
)

// native sets a native cell's memory figures from the window: the process peak
// (VmHWM now), the base, and the model-attributable peak, peak − base. This is
// the one place the attributable peak is computed.
func (w peakWindow) native(m *result.Metrics) {
	m.PeakRSSBytes, _ = PeakRSS()
	m.PeakRSSScope, m.BaseRSSBytes = nativePeakScope, w.base
	if w.err != nil {
		m.PeakRSSScope += "; over the process's whole life: " + w.err.Error()
		m.ModelPeakScope = "not measured: " + w.err.Error()
		return
	}
	if m.PeakRSSBytes > 0 {
		m.ModelPeakBytes = m.PeakRSSBytes - w.base
		m.ModelPeakScope = nativeModelScope
	}
}

// browserMemory sets a browser cell's memory figures: Chromium's PSS after the
// runs, and why no model-attributable peak is given.
func browserMemory(m *result.Metrics, pss int64) {
	m.PeakRSSBytes, m.PeakRSSScope = pss, browserPeakScope
	m.ModelPeakScope = browserModelScope
}
