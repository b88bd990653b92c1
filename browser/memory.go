package browser

import (
	"bufio"
	"os"
	"strconv"
	"strings"
)

// Memory is the browser's resident memory now: the proportional set size (PSS) of
// its processes, from /proc/PID/smaps_rollup. PSS splits each shared page among the
// processes that map it, so the sum counts Chromium's shared libraries once, where
// summing RSS would count them once per process. The kernel keeps no peak of PSS;
// read it right after the work to measure.
func (b *Browser) Memory() int64 {
	var total int64
	for _, pid := range processTree(b.PID) {
		total += pss(pid)
	}
	return total
}

// processTree is pid and every process descended from it. Chromium's zygote,
// renderer and GPU processes do not all carry --user-data-dir on their command
// line (the @sparticuz build's do not), but they are all the browser's descendants.
func processTree(root int) []int {
	children := map[int][]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		fields := statFields(pid)
		if len(fields) < 2 {
			continue
		}
		if ppid, err := strconv.Atoi(fields[1]); err == nil {
			children[ppid] = append(children[ppid], pid)
		}
	}
	tree := []int{root}
	for i := 0; i < len(tree); i++ {
		tree = append(tree, children[tree[i]]...)
	}
	return tree
}

// pss reads "Pss:" in kB; zombie processes, which hold no memory, give 0.
func pss(pid int) int64 {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/smaps_rollup")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "Pss:"); ok {
			fields := strings.Fields(rest) // "12345 kB"
			if len(fields) == 2 {
				kb, _ := strconv.ParseInt(fields[0], 10, 64)
				return kb * 1024
			}
		}
	}
	return 0
}
