package hardware

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/hwtest/hwtest/result"
)

// AMD is every AMD GPU ROCm can use: the KFD (kernel fusion driver) topology under
// /sys/class/kfd, the /dev/kfd node ROCm opens, and the marketing names amdgpu
// exposes through DRM.
type AMD struct {
	Probe
	KFD  Probe    `json:"kfd"` // /dev/kfd: without it ROCm/MIGraphX cannot open any GPU
	GPUs []AMDGPU `json:"gpus,omitempty"`
}

// AMDGPU is one KFD topology node with SIMDs (a GPU; on MI250 each GCD is one node).
type AMDGPU struct {
	Node             int    `json:"node"`
	Name             string `json:"name"`
	GFXTarget        string `json:"gfx_target"`         // gfx942
	GFXTargetVersion int    `json:"gfx_target_version"` // 90402
	VendorID         string `json:"vendor_id"`          // 0x1002
	DeviceID         string `json:"device_id"`          // 0x74a1
	SIMDCount        int    `json:"simd_count"`
	ComputeUnits     int    `json:"compute_units"`
	XCCs             int    `json:"xccs,omitempty"`
	MemoryTotal      uint64 `json:"memory_total_bytes"`
	RenderMinor      int    `json:"drm_render_minor,omitempty"`
}

// AMDVendorID is AMD's PCI vendor id (4098 as KFD prints it).
const AMDVendorID = 0x1002

const kfdTopology = "sys/class/kfd/kfd/topology/nodes"

// amdNames names devices whose sysfs has no product_name (Linux amdgpu PCI ids).
var amdNames = map[uint16]string{
	0x74a1: "AMD Instinct MI300X",
	0x74a0: "AMD Instinct MI300A",
	0x740c: "AMD Instinct MI250X / MI250",
	0x740f: "AMD Instinct MI210",
	0x738c: "AMD Instinct MI100",
	0x744c: "AMD Radeon RX 7900 XTX / XT",
}

// kfdNode is one node directory of the KFD topology as read from sysfs.
type kfdNode struct {
	ID         int
	Name       string           // the node's `name` file (gfx target on recent kernels)
	Properties map[string]int64 // properties file
	MemBanks   []map[string]int64
}

// parseKFDProperties reads a KFD `properties` file: one "key value" pair per line,
// every value an integer (AMD's kfd_topology.c prints them with "%s %llu").
func parseKFDProperties(s string) (map[string]int64, error) {
	out := map[string]int64{}
	for i, line := range strings.Split(s, "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		if len(fields) != 2 {
			return nil, fmt.Errorf("line %d: %q is not \"key value\"", i+1, line)
		}
		v, err := strconv.ParseInt(fields[1], 10, 64)
		if err != nil {
			u, uerr := strconv.ParseUint(fields[1], 10, 64)
			if uerr != nil {
				return nil, fmt.Errorf("line %d: %s: %w", i+1, fields[0], err)
			}
			v = int64(u) // ids such as unique_id use all 64 bits
		}
		out[fields[0]] = v
	}
	return out, nil
}

// gfxTarget decodes gfx_target_version (major*10000 + minor*100 + stepping) into the
// LLVM target name: 90402 → gfx942, 90010 → gfx90a, 110000 → gfx1100.
func gfxTarget(v int) string {
	if v <= 0 {
		return ""
	}
	major, minor, step := v/10000, (v/100)%100, v%100
	return fmt.Sprintf("gfx%d%x%x", major, minor, step)
}

// readKFD reads every node of the KFD topology under root.
func readKFD(root string) ([]kfdNode, error) {
	dir := join(root, kfdTopology)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var nodes []kfdNode
	for _, e := range entries {
		id, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		nd := filepath.Join(dir, e.Name())
		b, err := os.ReadFile(filepath.Join(nd, "properties"))
		if err != nil {
			return nil, err
		}
		props, err := parseKFDProperties(string(b))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(nd, "properties"), err)
		}
		n := kfdNode{ID: id, Name: readTrim(filepath.Join(nd, "name")), Properties: props}
		banks, _ := filepath.Glob(filepath.Join(nd, "mem_banks", "*", "properties"))
		sort.Strings(banks)
		for _, bank := range banks {
			if b, err := os.ReadFile(bank); err == nil {
				if p, err := parseKFDProperties(string(b)); err == nil {
					n.MemBanks = append(n.MemBanks, p)
				}
			}
		}
		nodes = append(nodes, n)
	}
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].ID < nodes[j].ID })
	return nodes, nil
}

// amdGPUs keeps the GPU nodes (simd_count > 0, vendor 0x1002) and names them from
// DRM's product_name (matched by render minor), else the device-id table.
func amdGPUs(nodes []kfdNode, productName func(renderMinor int) string) []AMDGPU {
	var out []AMDGPU
	for _, n := range nodes {
		p := n.Properties
		if p["simd_count"] == 0 || p["vendor_id"] != AMDVendorID {
			continue
		}
		g := AMDGPU{
			Node: n.ID, GFXTargetVersion: int(p["gfx_target_version"]),
			VendorID: fmt.Sprintf("0x%04x", p["vendor_id"]), DeviceID: fmt.Sprintf("0x%04x", p["device_id"]),
			SIMDCount: int(p["simd_count"]), XCCs: int(p["num_xcc"]), RenderMinor: int(p["drm_render_minor"]),
		}
		g.GFXTarget = gfxTarget(g.GFXTargetVersion)
		if spc := p["simd_per_cu"]; spc > 0 {
			g.ComputeUnits = int(p["simd_count"] / spc)
		}
		for _, bank := range n.MemBanks {
			// heap_type 1 = FB_PUBLIC, 2 = FB_PRIVATE: the GPU's own memory.
			if ht := bank["heap_type"]; ht == 1 || ht == 2 {
				g.MemoryTotal += uint64(bank["size_in_bytes"])
			}
		}
		if g.MemoryTotal == 0 {
			g.MemoryTotal = uint64(p["local_mem_size"])
		}
		if productName != nil && g.RenderMinor > 0 {
			g.Name = productName(g.RenderMinor)
		}
		if g.Name == "" {
			g.Name = amdNames[uint16(p["device_id"])]
		}
		if g.Name == "" {
			g.Name = fmt.Sprintf("AMD GPU %s (%s)", g.DeviceID, g.GFXTarget)
		}
		out = append(out, g)
	}
	return out
}

func detectAMD(e env) AMD {
	var out AMD
	kfdDev := join(e.root, "dev/kfd")
	if exists(kfdDev) {
		out.KFD = found("amd-kfd", "/dev/kfd present")
	} else {
		out.KFD = missing("amd-kfd", "not present: /dev/kfd does not exist (amdgpu kernel driver with KFD not loaded, or the container was started without --device=/dev/kfd)")
	}
	nodes, err := readKFD(e.root)
	if err != nil {
		reason := fmt.Sprintf("not readable: %v", err)
		if errors.Is(err, fs.ErrNotExist) {
			reason = "not present: /" + kfdTopology + " does not exist (no amdgpu KFD driver)"
			// An AMD card DRM drives but KFD does not: ROCm cannot use it, say so.
			if cards, derr := readDRM(e.root); derr == nil {
				for _, c := range cards {
					if c.VendorID == AMDVendorID {
						reason = fmt.Sprintf("not usable by ROCm: %s is an AMD GPU (0x%04x, driver %s) but /%s does not exist", c.Card, c.DeviceID, orNone(c.Driver), kfdTopology)
					}
				}
			}
		}
		out.Probe = missing("amd-gpu", reason)
		return out
	}
	out.GPUs = amdGPUs(nodes, func(minor int) string {
		return readTrim(join(e.root, fmt.Sprintf("sys/class/drm/renderD%d/device/product_name", minor)))
	})
	if len(out.GPUs) == 0 {
		out.Probe = missing("amd-gpu", fmt.Sprintf("not present: KFD topology has %d node(s), none a GPU with vendor_id 4098", len(nodes)))
		return out
	}
	var names []string
	for _, g := range out.GPUs {
		names = append(names, fmt.Sprintf("%s (%s, %d CUs, %s)", g.Name, g.GFXTarget, g.ComputeUnits, result.HumanBytes(int64(g.MemoryTotal))))
	}
	out.Probe = found("amd-gpu", fmt.Sprintf("%d GPU node(s): %s", len(out.GPUs), strings.Join(names, ", ")))
	if !out.KFD.Found {
		out.Detail += "; but /dev/kfd is missing, so ROCm cannot open them"
	}
	return out
}
