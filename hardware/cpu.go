package hardware

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/hwtest/hwtest/result"
	"github.com/klauspost/cpuid/v2"
)

// CPU is the host processor as cpuid and /proc see it.
type CPU struct {
	Probe
	Brand          string   `json:"brand"`
	Vendor         string   `json:"vendor"`
	Family         int      `json:"family"`
	Model          int      `json:"model"`
	Stepping       int      `json:"stepping"`
	PhysicalCores  int      `json:"physical_cores"`
	LogicalCores   int      `json:"logical_cores"`
	ThreadsPerCore int      `json:"threads_per_core"`
	MemoryTotal    int64    `json:"memory_total_bytes"`
	Hypervisor     string   `json:"hypervisor,omitempty"`
	Features       []string `json:"features"` // present, in featureList order
	Missing        []string `json:"missing"`  // checked and absent
}

// featureList is what ONNX Runtime's kernels (MLAS, oneDNN, OpenVINO, XNNPACK) choose
// code paths by, in the order the table prints them. Names are the vendors' spellings.
var featureList = []struct {
	name string
	id   cpuid.FeatureID
	arch string // amd64 or arm64
}{
	{"SSE4.1", cpuid.SSE4, "amd64"},
	{"SSE4.2", cpuid.SSE42, "amd64"},
	{"AVX", cpuid.AVX, "amd64"},
	{"AVX2", cpuid.AVX2, "amd64"},
	{"FMA3", cpuid.FMA3, "amd64"},
	{"AVX-512F", cpuid.AVX512F, "amd64"},
	{"AVX-512BW", cpuid.AVX512BW, "amd64"},
	{"AVX-512VL", cpuid.AVX512VL, "amd64"},
	{"AVX-512VNNI", cpuid.AVX512VNNI, "amd64"},
	{"AVX-512BF16", cpuid.AVX512BF16, "amd64"},
	{"AVX-512FP16", cpuid.AVX512FP16, "amd64"},
	{"AVX-VNNI", cpuid.AVXVNNI, "amd64"},
	{"AMX-TILE", cpuid.AMXTILE, "amd64"},
	{"AMX-INT8", cpuid.AMXINT8, "amd64"},
	{"AMX-BF16", cpuid.AMXBF16, "amd64"},
	{"NEON/ASIMD", cpuid.ASIMD, "arm64"},
	{"ASIMD-DotProd", cpuid.ASIMDDP, "arm64"},
	{"SVE", cpuid.SVE, "arm64"},
	{"SVE2", cpuid.SVE2, "arm64"},
}

func detectCPU(e env) CPU {
	info := cpuid.CPU
	c := CPU{
		Brand: info.BrandName, Vendor: info.VendorString,
		Family: info.Family, Model: info.Model, Stepping: info.Stepping,
		PhysicalCores: info.PhysicalCores, LogicalCores: info.LogicalCores,
		ThreadsPerCore: info.ThreadsPerCore, Hypervisor: info.HypervisorVendorString,
	}
	for _, f := range featureList {
		if f.arch != e.goarch {
			continue
		}
		if info.Supports(f.id) {
			c.Features = append(c.Features, f.name)
		} else {
			c.Missing = append(c.Missing, f.name)
		}
	}
	if b, err := os.ReadFile(join(e.root, "proc/cpuinfo")); err == nil {
		ci := parseCPUInfo(string(b))
		if c.Brand == "" {
			c.Brand = ci.ModelName
		}
		// cpuid reports 0 where it cannot tell (some hypervisors, most ARM parts).
		if c.PhysicalCores == 0 {
			c.PhysicalCores = ci.Cores
		}
		if c.LogicalCores == 0 {
			c.LogicalCores = ci.Processors
		}
	}
	meminfo, err := os.ReadFile(join(e.root, "proc/meminfo"))
	if err == nil {
		c.MemoryTotal, err = parseMemTotal(string(meminfo))
	}
	c.Probe = found("cpu", fmt.Sprintf("%s, %d cores / %d threads, %s RAM", orUnknown(c.Brand), c.PhysicalCores, c.LogicalCores, result.HumanBytes(c.MemoryTotal)))
	if err != nil {
		c.Detail += fmt.Sprintf(" (memory unknown: %v)", err)
	}
	return c
}

// parseMemTotal reads MemTotal from /proc/meminfo ("MemTotal:  16305420 kB").
func parseMemTotal(meminfo string) (int64, error) {
	for _, line := range strings.Split(meminfo, "\n") {
		rest, ok := strings.CutPrefix(line, "MemTotal:")
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) == 0 {
			return 0, fmt.Errorf("/proc/meminfo: empty MemTotal line")
		}
		n, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/meminfo: MemTotal %q: %w", fields[0], err)
		}
		if len(fields) > 1 && strings.EqualFold(fields[1], "kB") {
			n *= 1024
		}
		return n, nil
	}
	return 0, fmt.Errorf("/proc/meminfo has no MemTotal line")
}

// cpuInfo is what /proc/cpuinfo adds where cpuid cannot tell.
type cpuInfo struct {
	ModelName  string
	Processors int // logical CPUs
	Cores      int // distinct (physical id, core id) pairs; 0 when not listed (ARM)
}

func parseCPUInfo(s string) cpuInfo {
	var ci cpuInfo
	cores := map[string]bool{}
	phys, core := "", ""
	flush := func() {
		if core != "" {
			cores[phys+"/"+core] = true
		}
		phys, core = "", ""
	}
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.TrimSpace(line) == "" {
			flush()
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch k {
		case "processor":
			ci.Processors++
		case "model name":
			if ci.ModelName == "" {
				ci.ModelName = v
			}
		case "physical id":
			phys = v
		case "core id":
			core = v
		}
	}
	flush()
	ci.Cores = len(cores)
	return ci
}

func join(root, rel string) string { return filepath.Join(root, rel) }

func trim(s string) string { return strings.TrimSpace(s) }

func orUnknown(s string) string {
	if s == "" {
		return "unknown CPU"
	}
	return s
}
