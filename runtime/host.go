package runtime

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/klauspost/cpuid/v2"
)

var hostCPU = sync.OnceValue(func() string {
	return fmt.Sprintf("%s (%d cores, %s/%s)", cpuid.CPU.BrandName, runtime.NumCPU(), runtime.GOOS, runtime.GOARCH)
})

// HostCPU names the machine's CPU for provenance.
func HostCPU() string { return hostCPU() }

// CPUGovernor is the frequency governor the kernel runs the CPUs with (cpufreq's
// scaling_governor: "performance", "powersave", "schedutil"…), "cpu0 X, cpu1 Y" when
// they differ, or why there is none to read: a governor that lowers the clock
// between runs makes latencies longer and noisier, so every result says which ran.
func CPUGovernor() string { return cpuGovernor() }

var cpuGovernor = sync.OnceValue(func() string { return governorIn("/sys/devices/system/cpu") })

func governorIn(sys string) string {
	paths, _ := filepath.Glob(filepath.Join(sys, "cpu[0-9]*", "cpufreq", "scaling_governor"))
	if len(paths) == 0 {
		return "none: the kernel exposes no cpufreq (" + filepath.Join(sys, "cpu0", "cpufreq") + " is absent); the clock is the firmware's or the hypervisor's"
	}
	byCPU := map[string]string{}
	var cpus []string
	for _, p := range paths {
		b, err := os.ReadFile(p)
		cpu := filepath.Base(filepath.Dir(filepath.Dir(p)))
		if err != nil {
			byCPU[cpu] = "unreadable"
		} else {
			byCPU[cpu] = strings.TrimSpace(string(b))
		}
		cpus = append(cpus, cpu)
	}
	slices.SortFunc(cpus, func(a, b string) int { return cmpCPU(a, b) })
	same := true
	for _, c := range cpus {
		same = same && byCPU[c] == byCPU[cpus[0]]
	}
	if same {
		return byCPU[cpus[0]]
	}
	parts := make([]string, len(cpus))
	for i, c := range cpus {
		parts[i] = c + " " + byCPU[c]
	}
	return strings.Join(parts, ", ")
}

// cmpCPU orders cpu2 before cpu10.
func cmpCPU(a, b string) int {
	na, _ := strconv.Atoi(strings.TrimPrefix(a, "cpu"))
	nb, _ := strconv.Atoi(strings.TrimPrefix(b, "cpu"))
	return na - nb
}

// PhysicalCores counts distinct (package, core) pairs in /sys: what ONNX Runtime
// sizes its default intra-op thread pool by. runtime.NumCPU when /sys says nothing.
func PhysicalCores() int { return physicalCores() }

var physicalCores = sync.OnceValue(func() int {
	ids, _ := filepath.Glob("/sys/devices/system/cpu/cpu[0-9]*/topology/core_id")
	cores := map[string]bool{}
	for _, p := range ids {
		core, err1 := os.ReadFile(p)
		pkg, err2 := os.ReadFile(filepath.Join(filepath.Dir(p), "physical_package_id"))
		if err1 == nil && err2 == nil {
			cores[strings.TrimSpace(string(pkg))+"/"+strings.TrimSpace(string(core))] = true
		}
	}
	if len(cores) == 0 {
		return runtime.NumCPU()
	}
	return len(cores)
})
