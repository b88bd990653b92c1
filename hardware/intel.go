package hardware

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
)

// Intel is every Intel GPU the kernel's DRM drivers (i915, xe) expose: what
// OpenVINO's GPU device and oneAPI Level Zero run on.
type Intel struct {
	Probe
	GPUs []IntelGPU `json:"gpus,omitempty"`
}

// IntelGPU is one /sys/class/drm/cardN with PCI vendor 0x8086.
type IntelGPU struct {
	Card     string `json:"card"`
	Name     string `json:"name"`
	DeviceID string `json:"device_id"` // 0x56a0
	Driver   string `json:"driver"`    // i915 or xe
	PCISlot  string `json:"pci_slot,omitempty"`
}

// IntelVendorID is Intel's PCI vendor id.
const IntelVendorID = 0x8086

// intelNames are the PCI device ids of Intel GPUs hwtest users are likely to meet
// (Linux kernel i915/xe PCI id tables); others print as "Intel GPU 0x....".
var intelNames = map[uint16]string{
	0x56a0: "Intel Arc A770",
	0x56a1: "Intel Arc A750",
	0x56a5: "Intel Arc A380",
	0x5690: "Intel Arc A770M",
	0xe20b: "Intel Arc B580",
	0xe20c: "Intel Arc B570",
	0x56c0: "Intel Data Center GPU Flex 170",
	0x0bd5: "Intel Data Center GPU Max 1550",
	0x9a49: "Intel Iris Xe Graphics (Tiger Lake)",
}

func detectIntel(e env) Intel {
	cards, err := readDRM(e.root)
	return intelFrom(cards, err)
}

func intelFrom(cards []drmCard, err error) Intel {
	if err != nil {
		return Intel{Probe: missing("intel-gpu", drmReason(err))}
	}
	var out Intel
	var names []string
	for _, c := range cards {
		if c.VendorID != IntelVendorID {
			continue
		}
		name := intelNames[c.DeviceID]
		if name == "" {
			name = fmt.Sprintf("Intel GPU 0x%04x", c.DeviceID)
		}
		g := IntelGPU{Card: c.Card, Name: name, DeviceID: fmt.Sprintf("0x%04x", c.DeviceID), Driver: c.Driver, PCISlot: c.PCISlot}
		out.GPUs = append(out.GPUs, g)
		names = append(names, fmt.Sprintf("%s (%s, driver %s)", g.Name, g.DeviceID, orNone(g.Driver)))
	}
	if len(out.GPUs) == 0 {
		out.Probe = missing("intel-gpu", fmt.Sprintf("not present: no DRM card with vendor 0x8086 among %d card(s) in /sys/class/drm", len(cards)))
		return out
	}
	out.Probe = found("intel-gpu", strings.Join(names, ", "))
	for _, g := range out.GPUs {
		if g.Driver != "i915" && g.Driver != "xe" {
			out.Detail += fmt.Sprintf("; %s has driver %q, not i915/xe: OpenVINO GPU needs one of them", g.Card, orNone(g.Driver))
		}
	}
	return out
}

// drmReason words a failed read of /sys/class/drm.
func drmReason(err error) string {
	if errors.Is(err, fs.ErrNotExist) {
		var pe *fs.PathError
		path := "/sys/class/drm"
		if errors.As(err, &pe) {
			path = filepath.ToSlash(pe.Path)
		}
		return fmt.Sprintf("not present: %s does not exist (no DRM GPU driver loaded, or a container without /sys/class/drm)", path)
	}
	return fmt.Sprintf("not readable: %v", err)
}
