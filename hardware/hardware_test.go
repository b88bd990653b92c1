package hardware

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/hwtest/hwtest/runtime"
)

// fixtureEnv reads everything from a fixture root and fakes the processes.
func fixtureEnv(t *testing.T, root string) env {
	t.Helper()
	ld, err := os.ReadFile("testdata/ldconfig-p.txt")
	if err != nil {
		t.Fatal(err)
	}
	return env{
		root: root, goos: "linux", goarch: "amd64",
		ldconfig: func(context.Context) (string, error) { return string(ld), nil },
		nvml:     func() (nvmlSnapshot, error) { return nvmlSnapshot{}, nvmlInitError{nvml.ERROR_LIBRARY_NOT_FOUND} },
		sysctl:   func(context.Context, string) (string, error) { return "", errors.New("no sysctl") },
		ortInit: func() (runtime.Library, error) {
			return runtime.Library{Path: "/opt/ort/lib/libonnxruntime.so.1", Version: "1.30.0", SHA256: "ffb75a925ba05e47"}, nil
		},
		ortProbe: func(t runtime.Target) string {
			if t.Provider == runtime.CPUProvider {
				return ""
			}
			return t.Provider + ": QNN execution provider is not supported in this build."
		},
		getenv: func(string) string { return "" },
	}
}

// The real machine: every probe answers, and each one that is absent here says why.
func TestDetectThisMachine(t *testing.T) {
	targets := []runtime.Target{
		{ID: "cpu", Runner: "native", Provider: runtime.CPUProvider},
		{ID: "qnn", Runner: "native", Provider: "QNNExecutionProvider"},
	}
	r := Detect(context.Background(), targets...)
	if !r.CPU.Found || r.CPU.LogicalCores == 0 || r.CPU.MemoryTotal == 0 {
		t.Errorf("cpu probe: %+v", r.CPU)
	}
	for _, p := range r.Probes() {
		if p.Name == "" {
			t.Errorf("probe without a name: %+v", p)
		}
		if !p.Found && p.Reason == "" {
			t.Errorf("probe %s: not found and no reason", p.Name)
		}
	}
	// What this machine (2 cores, no GPU, Debian 12 container) lacks, with the reason.
	if _, err := os.Stat("/dev/nvidiactl"); err != nil && !r.NVIDIA.Found {
		if r.NVIDIA.Reason != "not present: libnvidia-ml.so.1 not found (no NVIDIA driver)" {
			t.Errorf("nvidia reason = %q", r.NVIDIA.Reason)
		}
	}
	if _, err := os.Stat("/sys/class/kfd"); err != nil {
		if r.AMD.Found || !strings.HasPrefix(r.AMD.Reason, "not present: /sys/class/kfd/kfd/topology/nodes does not exist") {
			t.Errorf("amd = %+v", r.AMD.Probe)
		}
	}
	if _, err := os.Stat("/dev/kfd"); err != nil && r.AMD.KFD.Found {
		t.Errorf("kfd found without /dev/kfd: %+v", r.AMD.KFD)
	}
	if _, err := os.Stat("/sys/class/drm"); err != nil {
		if r.Intel.Found || !strings.Contains(r.Intel.Reason, "/sys/class/drm does not exist") {
			t.Errorf("intel = %+v", r.Intel.Probe)
		}
	}
	if goruntime.GOOS == "linux" && r.Apple.Reason != "not present: not macOS (GOOS=linux)" {
		t.Errorf("apple = %+v", r.Apple.Probe)
	}
	for _, l := range r.Libraries {
		if !l.Found && !strings.HasPrefix(l.Reason, "not found: no ") {
			t.Errorf("library %s: reason %q", l.Name, l.Reason)
		}
	}
	if r.Runtime.Found {
		if len(r.Providers) != 2 || !r.Providers[0].Found {
			t.Fatalf("providers: %+v", r.Providers)
		}
		// This ONNX Runtime (npm onnxruntime-node) has no QNN EP.
		if q := r.Providers[1]; q.Found || !strings.Contains(q.Reason, "QNNExecutionProvider execution provider is not supported in this build.") {
			t.Errorf("qnn provider: %+v", q)
		}
	}
	table := r.Table()
	for _, want := range []string{"PROBE", "nvidia", "amd-gpu", "intel-gpu", "apple-silicon", "vulkan-loader", "TARGET"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.NVIDIA.Reason != r.NVIDIA.Reason || len(back.Libraries) != len(r.Libraries) {
		t.Errorf("JSON round trip lost data")
	}
	t.Logf("\n%s", table)
}

func TestNVMLFixture(t *testing.T) {
	b, err := os.ReadFile("testdata/nvml/h100x2.json")
	if err != nil {
		t.Fatal(err)
	}
	var s nvmlSnapshot
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	n := nvidiaFrom(s, nil)
	if !n.Found || len(n.GPUs) != 2 {
		t.Fatalf("%+v", n)
	}
	g := n.GPUs[0]
	if g.Name != "NVIDIA H100 80GB HBM3" || g.ComputeCapability != "9.0" || g.PCIBusID != "00000000:19:00.0" ||
		g.MemoryTotal != 85520809984 || g.MemoryUsed != 565182464 || !strings.HasPrefix(g.UUID, "GPU-") {
		t.Errorf("gpu 0 = %+v", g)
	}
	if n.DriverVersion != "550.54.15" || n.CUDADriverVersion != "12.4" {
		t.Errorf("driver %q cuda %q", n.DriverVersion, n.CUDADriverVersion)
	}
	if len(n.GPUs[1].Errors) != 1 {
		t.Errorf("gpu 1 errors = %v", n.GPUs[1].Errors)
	}
	if !strings.Contains(n.Detail, "2 GPU(s): NVIDIA H100 80GB HBM3 (79.6 GiB, sm_90)") {
		t.Errorf("detail = %q", n.Detail)
	}
}

func TestNVMLInitFailures(t *testing.T) {
	for _, c := range []struct {
		ret  nvml.Return
		want string
	}{
		{nvml.ERROR_LIBRARY_NOT_FOUND, "not present: libnvidia-ml.so.1 not found (no NVIDIA driver)"},
		{nvml.ERROR_DRIVER_NOT_LOADED, "not present: libnvidia-ml.so.1 is installed but the NVIDIA kernel driver is not loaded (nvmlInit: ERROR_DRIVER_NOT_LOADED)"},
		{nvml.ERROR_NO_PERMISSION, "not usable: no permission to open the NVIDIA device nodes /dev/nvidia* (nvmlInit: ERROR_NO_PERMISSION)"},
	} {
		n := nvidiaFrom(nvmlSnapshot{}, nvmlInitError{c.ret})
		if n.Found || n.Reason != c.want {
			t.Errorf("%v: %+v", c.ret, n.Probe)
		}
	}
	if n := nvidiaFrom(nvmlSnapshot{DriverVersion: "550.54.15"}, nil); n.Found || !strings.Contains(n.Reason, "reports no GPUs") {
		t.Errorf("no devices: %+v", n.Probe)
	}
}

// readNVML on this machine: no driver, so Init fails with LIBRARY_NOT_FOUND.
func TestReadNVMLHere(t *testing.T) {
	if _, err := os.Stat("/dev/nvidiactl"); err == nil {
		t.Skip("this machine has an NVIDIA driver")
	}
	_, err := readNVML()
	var ie nvmlInitError
	if !errors.As(err, &ie) || ie.ret != nvml.ERROR_LIBRARY_NOT_FOUND {
		t.Fatalf("readNVML: %v", err)
	}
}

func TestKFDMI300X(t *testing.T) {
	a := detectAMD(fixtureEnv(t, "testdata/kfd/mi300x"))
	if !a.Found || !a.KFD.Found || len(a.GPUs) != 2 {
		t.Fatalf("%+v", a)
	}
	g := a.GPUs[0]
	want := AMDGPU{Node: 1, Name: "AMD Instinct MI300X", GFXTarget: "gfx942", GFXTargetVersion: 90402,
		VendorID: "0x1002", DeviceID: "0x74a1", SIMDCount: 1216, ComputeUnits: 304, XCCs: 8,
		MemoryTotal: 206141652992, RenderMinor: 128}
	if g != want {
		t.Errorf("gpu = %+v\nwant  %+v", g, want)
	}
	if a.GPUs[1].Node != 2 || a.GPUs[1].RenderMinor != 129 {
		t.Errorf("gpu 1 = %+v", a.GPUs[1])
	}
}

func TestKFDMI250X(t *testing.T) {
	a := detectAMD(fixtureEnv(t, "testdata/kfd/mi250x"))
	if !a.Found || len(a.GPUs) != 2 {
		t.Fatalf("%+v", a)
	}
	for _, g := range a.GPUs {
		if g.Name != "AMD Instinct MI250X / MI250" || g.GFXTarget != "gfx90a" || g.ComputeUnits != 110 || g.MemoryTotal != 68702699520 {
			t.Errorf("gcd = %+v", g)
		}
	}
	if !strings.Contains(a.Detail, "2 GPU node(s): AMD Instinct MI250X / MI250 (gfx90a, 110 CUs, 64.0 GiB)") {
		t.Errorf("detail = %q", a.Detail)
	}
}

// A topology whose GPU is listed but whose /dev/kfd is missing (container without
// --device=/dev/kfd): found, with the warning that ROCm cannot open it.
func TestKFDWithoutDeviceNode(t *testing.T) {
	root := t.TempDir()
	if err := os.CopyFS(root, os.DirFS("testdata/kfd/mi250x")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(root, "dev/kfd")); err != nil {
		t.Fatal(err)
	}
	a := detectAMD(fixtureEnv(t, root))
	if !a.Found || a.KFD.Found || !strings.Contains(a.Detail, "/dev/kfd is missing") {
		t.Errorf("%+v", a)
	}
}

func TestParseKFDProperties(t *testing.T) {
	p, err := parseKFDProperties("gfx_target_version 90400\nsimd_count 912\nvendor_id 4098\ndevice_id 29856\nunique_id 18446744073709551615\n")
	if err != nil {
		t.Fatal(err)
	}
	if p["gfx_target_version"] != 90400 || p["simd_count"] != 912 || p["vendor_id"] != AMDVendorID || p["device_id"] != 0x74a0 {
		t.Errorf("%v", p)
	}
	if _, err := parseKFDProperties("gfx_target_version\n"); err == nil {
		t.Error("a key without a value parsed")
	}
	for v, want := range map[int]string{90400: "gfx940", 90402: "gfx942", 90010: "gfx90a", 90008: "gfx908", 110000: "gfx1100", 100300: "gfx1030", 0: ""} {
		if got := gfxTarget(v); got != want {
			t.Errorf("gfxTarget(%d) = %q, want %q", v, got, want)
		}
	}
}

func TestIntelArcDRM(t *testing.T) {
	in := detectIntel(fixtureEnv(t, "testdata/drm/intel-arc"))
	if !in.Found || len(in.GPUs) != 2 {
		t.Fatalf("%+v", in)
	}
	want := []IntelGPU{
		{Card: "card0", Name: "Intel Arc A770", DeviceID: "0x56a0", Driver: "i915", PCISlot: "0000:03:00.0"},
		{Card: "card1", Name: "Intel Arc B580", DeviceID: "0xe20b", Driver: "xe", PCISlot: "0000:08:00.0"},
	}
	for i := range want {
		if in.GPUs[i] != want[i] {
			t.Errorf("gpu %d = %+v, want %+v", i, in.GPUs[i], want[i])
		}
	}
	// The Intel tree has no AMD GPU and no KFD.
	if a := detectAMD(fixtureEnv(t, "testdata/drm/intel-arc")); a.Found || !strings.HasPrefix(a.Reason, "not present: ") {
		t.Errorf("amd on intel tree: %+v", a.Probe)
	}
}

// An AMD card that DRM drives but KFD does not know: ROCm cannot use it, and says so.
func TestAMDCardWithoutKFD(t *testing.T) {
	root := t.TempDir()
	dev := filepath.Join(root, "sys/class/drm/card0/device")
	if err := os.MkdirAll(dev, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dev, "vendor"), []byte("0x1002\n"), 0o644)
	os.WriteFile(filepath.Join(dev, "device"), []byte("0x744c\n"), 0o644)
	os.WriteFile(filepath.Join(dev, "uevent"), []byte("DRIVER=amdgpu\n"), 0o644)
	a := detectAMD(fixtureEnv(t, root))
	if a.Found || !strings.HasPrefix(a.Reason, "not usable by ROCm: card0 is an AMD GPU (0x744c, driver amdgpu)") {
		t.Errorf("%+v", a.Probe)
	}
}

func TestParseLdconfig(t *testing.T) {
	b, err := os.ReadFile("testdata/ldconfig-p.txt")
	if err != nil {
		t.Fatal(err)
	}
	libs := parseLdconfig(string(b))
	if got := libs["libcuda.so.1"]; len(got) != 2 || got[0] != "/lib/x86_64-linux-gnu/libcuda.so.1" {
		t.Errorf("libcuda.so.1 = %v", got)
	}
	if got := libs["libc.so.6"]; len(got) != 1 || got[0] != "/lib/x86_64-linux-gnu/libc.so.6" {
		t.Errorf("libc.so.6 = %v", got)
	}
	if len(libs) != 10 {
		t.Errorf("%d names: %v", len(libs), libs)
	}
}

func TestLibrariesFromFixture(t *testing.T) {
	e := fixtureEnv(t, t.TempDir())
	ortDir := t.TempDir()
	os.WriteFile(filepath.Join(ortDir, "libonnxruntime_providers_shared.so"), nil, 0o644)
	qnnDir := t.TempDir()
	os.WriteFile(filepath.Join(qnnDir, "libQnnHtp.so"), nil, 0o644)
	e.ortInit = func() (runtime.Library, error) {
		return runtime.Library{Path: filepath.Join(ortDir, "libonnxruntime.so.1")}, nil
	}
	e.getenv = func(k string) string {
		if k == "LD_LIBRARY_PATH" {
			return qnnDir
		}
		return ""
	}
	libs := map[string]Library{}
	for _, l := range detectLibraries(context.Background(), e, Probe{}) {
		libs[l.Name] = l
	}
	for name, path := range map[string]string{
		"tensorrt":             "/lib/x86_64-linux-gnu/libnvinfer.so.10",
		"cudnn":                "/lib/x86_64-linux-gnu/libcudnn.so.9",
		"cuda-runtime":         "/usr/local/cuda-12.4/targets/x86_64-linux/lib/libcudart.so.12",
		"cublas":               "/usr/local/cuda-12.4/targets/x86_64-linux/lib/libcublasLt.so.12",
		"vulkan-loader":        "/lib/x86_64-linux-gnu/libvulkan.so.1",
		"qnn-htp":              filepath.Join(qnnDir, "libQnnHtp.so"),
		"ort-providers-shared": filepath.Join(ortDir, "libonnxruntime_providers_shared.so"),
	} {
		l := libs[name]
		if !l.Found || len(l.Paths) == 0 || l.Paths[0] != path {
			t.Errorf("%s = %+v, want %s", name, l, path)
		}
	}
	if l := libs["tensorrt"]; len(l.Paths) != 1 {
		t.Errorf("libnvinfer_plugin matched libnvinfer.so*: %v", l.Paths)
	}
	for _, name := range []string{"openvino", "migraphx", "qnn-cpu", "ort-provider-cuda"} {
		l := libs[name]
		if l.Found || !strings.HasPrefix(l.Reason, "not found: no ") {
			t.Errorf("%s = %+v", name, l)
		}
	}
	if r := libs["openvino"].Reason; !strings.Contains(r, "ldconfig cache (10 names)") || !strings.Contains(r, "LD_LIBRARY_PATH="+qnnDir) {
		t.Errorf("openvino reason = %q", r)
	}
}

func TestMemAndCPUInfo(t *testing.T) {
	b, _ := os.ReadFile("testdata/proc/meminfo")
	n, err := parseMemTotal(string(b))
	if err != nil || n != 24641180*1024 {
		t.Errorf("MemTotal = %d, %v", n, err)
	}
	if _, err := parseMemTotal("MemFree: 1 kB\n"); err == nil {
		t.Error("no MemTotal parsed")
	}
	b, _ = os.ReadFile("testdata/proc/cpuinfo")
	ci := parseCPUInfo(string(b))
	if ci.Processors != 4 || ci.Cores != 2 || ci.ModelName != "Intel(R) Xeon(R) Platinum 8480+" {
		t.Errorf("%+v", ci)
	}
}

func TestApple(t *testing.T) {
	e := fixtureEnv(t, t.TempDir())
	if a := detectApple(context.Background(), e); a.Reason != "not present: not macOS (GOOS=linux)" {
		t.Errorf("%+v", a)
	}
	e.goos, e.goarch = "darwin", "arm64"
	e.sysctl = func(_ context.Context, name string) (string, error) {
		if name != "machdep.cpu.brand_string" {
			return "", errors.New("unknown oid")
		}
		return "Apple M2 Max", nil
	}
	if a := detectApple(context.Background(), e); !a.Found || a.Chip != "Apple M2 Max" {
		t.Errorf("%+v", a)
	}
	e.goarch = "amd64"
	if a := detectApple(context.Background(), e); a.Found || !strings.Contains(a.Reason, "Intel Mac") {
		t.Errorf("%+v", a)
	}
}

// The whole report from fixtures: an MI300X host's table lines up and every absent
// probe carries its reason.
func TestReportFromFixtures(t *testing.T) {
	e := fixtureEnv(t, "testdata/kfd/mi300x")
	r := detect(context.Background(), e, []runtime.Target{
		{ID: "cpu", Runner: "native", Provider: runtime.CPUProvider},
		{ID: "qnn", Runner: "native", Provider: "QNNExecutionProvider"},
	})
	if !r.AMD.Found || r.NVIDIA.Found || !r.Runtime.Found || len(r.Providers) != 2 {
		t.Fatalf("%+v", r)
	}
	table := r.Table()
	lines := strings.Split(table, "\n")
	col := -1
	for _, l := range lines {
		if strings.HasPrefix(l, "PROBE") {
			col = strings.Index(l, "FOUND")
		}
		if col > 0 && (strings.HasPrefix(l, "amd-gpu ") || strings.HasPrefix(l, "nvidia ")) {
			if strings.Index(l, "yes") != col && strings.Index(l, "no ") != col {
				t.Errorf("misaligned row %q (FOUND at %d)", l, col)
			}
		}
	}
	if !strings.Contains(table, "qnn     QNNExecutionProvider  no         QNNExecutionProvider: QNN execution provider is not supported in this build.") {
		t.Errorf("providers table:\n%s", table)
	}
}
