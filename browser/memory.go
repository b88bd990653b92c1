package browser

import (
	"bufio"
	"os"
	"strconv"
	"strings"
)

// ResetPeakMemory resets the high-water mark (VmHWM) of every process of this
// browser, so PeakMemory covers what happens after it.
func (b *Browser) ResetPeakMemory() {
	for _, pid := range processesUsing(b.userDataDir) {
		_ = os.WriteFile("/proc/"+strconv.Itoa(pid)+"/clear_refs", []byte("5"), 0)
	}
}

// PeakMemory sums the peak resident size of the browser's processes (browser,
// renderer, GPU, utility). The processes may peak at different moments, so the sum
// is an upper bound of the browser's peak, never below it. Zombie processes, which
// hold no memory, count nothing.
func (b *Browser) PeakMemory() int64 {
	var total int64
	for _, pid := range processesUsing(b.userDataDir) {
		total += vmHWM(pid)
	}
	return total
}

func vmHWM(pid int) int64 {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			fields := strings.Fields(rest) // "12345 kB"
			if len(fields) == 2 {
				kb, _ := strconv.ParseInt(fields[0], 10, 64)
				return kb * 1024
			}
		}
	}
	return 0
}
