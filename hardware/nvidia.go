package hardware

import (
	"errors"
	"fmt"
	"strings"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/hwtest/hwtest/result"
)

// NVIDIA is what NVML reports: the driver and every GPU it manages.
type NVIDIA struct {
	Probe
	DriverVersion     string      `json:"driver_version,omitempty"`
	CUDADriverVersion string      `json:"cuda_driver_version,omitempty"` // the CUDA API the driver supports, e.g. 12.4
	GPUs              []NVIDIAGPU `json:"gpus,omitempty"`
}

// NVIDIAGPU is one device as NVML reports it.
type NVIDIAGPU struct {
	Index             int      `json:"index"`
	Name              string   `json:"name"`
	UUID              string   `json:"uuid"`
	PCIBusID          string   `json:"pci_bus_id"`
	MemoryTotal       uint64   `json:"memory_total_bytes"`
	MemoryUsed        uint64   `json:"memory_used_bytes"`
	ComputeCapability string   `json:"compute_capability"` // "9.0"
	Errors            []string `json:"errors,omitempty"`   // queries NVML refused for this device
}

// NVMLLibrary is the library NVML's Init dlopens.
const NVMLLibrary = "libnvidia-ml.so.1"

// nvmlSnapshot is NVML's raw answers, kept as NVML gives them so that fixtures
// (testdata/nvml/*.json) record exactly what a real driver returns.
type nvmlSnapshot struct {
	DriverVersion     string       `json:"driver_version"`      // nvmlSystemGetDriverVersion
	CUDADriverVersion int          `json:"cuda_driver_version"` // nvmlSystemGetCudaDriverVersion: 1000*major + 10*minor
	Devices           []nvmlDevice `json:"devices"`
}

type nvmlDevice struct {
	Name        string   `json:"name"`
	UUID        string   `json:"uuid"`
	BusID       string   `json:"bus_id"` // nvmlPciInfo_t.busId
	MemoryTotal uint64   `json:"memory_total"`
	MemoryUsed  uint64   `json:"memory_used"`
	CCMajor     int      `json:"cc_major"`
	CCMinor     int      `json:"cc_minor"`
	Errors      []string `json:"errors,omitempty"`
}

// nvmlInitError is NVML's Init failing, with NVML's own return code.
type nvmlInitError struct{ ret nvml.Return }

func (e nvmlInitError) Error() string { return "nvmlInit: " + nvml.ErrorString(e.ret) }

// readNVML initialises NVML, reads every device and shuts NVML down again.
func readNVML() (nvmlSnapshot, error) {
	lib := nvml.New()
	if ret := lib.Init(); ret != nvml.SUCCESS {
		return nvmlSnapshot{}, nvmlInitError{ret}
	}
	defer lib.Shutdown()
	var s nvmlSnapshot
	if v, ret := lib.SystemGetDriverVersion(); ret == nvml.SUCCESS {
		s.DriverVersion = v
	}
	if v, ret := lib.SystemGetCudaDriverVersion(); ret == nvml.SUCCESS {
		s.CUDADriverVersion = v
	}
	n, ret := lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		return s, fmt.Errorf("nvmlDeviceGetCount: %s", nvml.ErrorString(ret))
	}
	for i := 0; i < n; i++ {
		d, ret := lib.DeviceGetHandleByIndex(i)
		if ret != nvml.SUCCESS {
			s.Devices = append(s.Devices, nvmlDevice{Errors: []string{fmt.Sprintf("nvmlDeviceGetHandleByIndex(%d): %s", i, nvml.ErrorString(ret))}})
			continue
		}
		var dev nvmlDevice
		note := func(what string, ret nvml.Return) {
			if ret != nvml.SUCCESS {
				dev.Errors = append(dev.Errors, fmt.Sprintf("%s: %s", what, nvml.ErrorString(ret)))
			}
		}
		dev.Name, ret = d.GetName()
		note("name", ret)
		dev.UUID, ret = d.GetUUID()
		note("uuid", ret)
		mem, ret := d.GetMemoryInfo()
		note("memory", ret)
		dev.MemoryTotal, dev.MemoryUsed = mem.Total, mem.Used
		dev.CCMajor, dev.CCMinor, ret = d.GetCudaComputeCapability()
		note("compute capability", ret)
		pci, ret := d.GetPciInfo()
		note("pci info", ret)
		dev.BusID = cString(pci.BusId[:])
		s.Devices = append(s.Devices, dev)
	}
	return s, nil
}

// cString converts NVML's NUL-terminated char array.
func cString(b []int8) string {
	var sb strings.Builder
	for _, c := range b {
		if c == 0 {
			break
		}
		sb.WriteByte(byte(c))
	}
	return sb.String()
}

func detectNVIDIA(e env) NVIDIA {
	s, err := e.nvml()
	return nvidiaFrom(s, err)
}

// nvidiaFrom turns NVML's answers (or its Init error) into the report's section.
func nvidiaFrom(s nvmlSnapshot, err error) NVIDIA {
	var ie nvmlInitError
	switch {
	case errors.As(err, &ie) && ie.ret == nvml.ERROR_LIBRARY_NOT_FOUND:
		return NVIDIA{Probe: missing("nvidia", fmt.Sprintf("not present: %s not found (no NVIDIA driver)", NVMLLibrary))}
	case errors.As(err, &ie) && ie.ret == nvml.ERROR_DRIVER_NOT_LOADED:
		return NVIDIA{Probe: missing("nvidia", fmt.Sprintf("not present: %s is installed but the NVIDIA kernel driver is not loaded (%v)", NVMLLibrary, err))}
	case errors.As(err, &ie) && ie.ret == nvml.ERROR_NO_PERMISSION:
		return NVIDIA{Probe: missing("nvidia", fmt.Sprintf("not usable: no permission to open the NVIDIA device nodes /dev/nvidia* (%v)", err))}
	case err != nil:
		return NVIDIA{Probe: missing("nvidia", fmt.Sprintf("not usable: %v", err))}
	}
	out := NVIDIA{DriverVersion: s.DriverVersion}
	if s.CUDADriverVersion > 0 {
		out.CUDADriverVersion = fmt.Sprintf("%d.%d", s.CUDADriverVersion/1000, (s.CUDADriverVersion%1000)/10)
	}
	var names []string
	for i, d := range s.Devices {
		g := NVIDIAGPU{
			Index: i, Name: d.Name, UUID: d.UUID, PCIBusID: d.BusID,
			MemoryTotal: d.MemoryTotal, MemoryUsed: d.MemoryUsed, Errors: d.Errors,
		}
		if d.CCMajor > 0 {
			g.ComputeCapability = fmt.Sprintf("%d.%d", d.CCMajor, d.CCMinor)
		}
		out.GPUs = append(out.GPUs, g)
		names = append(names, fmt.Sprintf("%s (%s, sm_%d%d)", orNone(d.Name), result.HumanBytes(int64(d.MemoryTotal)), d.CCMajor, d.CCMinor))
	}
	if len(out.GPUs) == 0 {
		out.Probe = missing("nvidia", fmt.Sprintf("not present: NVML %s loaded (driver %s) but reports no GPUs", NVMLLibrary, orNone(s.DriverVersion)))
		return out
	}
	out.Probe = found("nvidia", fmt.Sprintf("%d GPU(s): %s; driver %s, CUDA %s", len(out.GPUs), strings.Join(names, ", "), orNone(out.DriverVersion), orNone(out.CUDADriverVersion)))
	return out
}

func orNone(s string) string {
	if s == "" {
		return "?"
	}
	return s
}
