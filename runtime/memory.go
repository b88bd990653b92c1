package runtime

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
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
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok || name != field {
			continue
		}
		fields := strings.Fields(rest) // "12345 kB"
		if len(fields) != 2 || fields[1] != "kB" {
			return 0, fmt.Errorf("/proc/self/status %s: unexpected %q", field, rest)
		}
		kb, err := strconv.ParseInt(fields[0], 10, 64)
		return kb * 1024, err
	}
	return 0, fmt.Errorf("/proc/self/status has no %s", field)
}
