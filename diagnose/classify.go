// Package diagnose turns the reasons hwtest records (a probe's "unavailable" reason, a
// session or run error, a failed check) into findings: what kind of problem it is, how
// serious, and what to install, set or change to fix it.
package diagnose

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/hwtest/hwtest/result"
)

// Kind is the class of a problem.
type Kind string

const (
	MissingDriver       Kind = "missing-driver"        // no GPU/NPU driver or device on the machine
	MissingEPLibrary    Kind = "missing-ep-library"    // the EP's plugin or a vendor library it dlopens is absent
	EPNotInBuild        Kind = "ep-not-in-build"       // this ONNX Runtime build was compiled without the EP
	WrongLibraryVersion Kind = "wrong-library-version" // a library is there but the wrong version
	UnsupportedOperator Kind = "unsupported-operator"  // a node the EP (or ONNX Runtime) cannot run
	OutOfMemory         Kind = "out-of-memory"
	PrecisionMismatch   Kind = "precision-mismatch"   // ran, outputs outside tolerance
	PlatformUnsupported Kind = "platform-unsupported" // the EP does not exist on this OS/architecture
	ModelFile           Kind = "model-file"           // the model file or its inputs are wrong
	CheckMisfit         Kind = "check-misfit"         // a family check the CPU reference breaks too: models.yaml describes the outputs wrongly
	Timeout             Kind = "timeout"
	Crash               Kind = "crash"
	KernelFailure       Kind = "kernel-failure" // an EP's kernel failed at run time on this model's shapes
	Interrupted         Kind = "interrupted"    // the run was stopped before the cell finished
	BrowserFailure      Kind = "browser"        // Chromium or its page failed
	Unknown             Kind = "unknown"
)

// Severity orders findings: critical stops every run, error fails a cell that should
// pass, warning is a target that could work here once fixed, info is expected.
type Severity string

const (
	Critical Severity = "critical"
	Error    Severity = "error"
	Warning  Severity = "warning"
	Info     Severity = "info"
)

// Severities in report order.
var Severities = []Severity{Critical, Error, Warning, Info}

func (s Severity) rank() int {
	for i, x := range Severities {
		if x == s {
			return i
		}
	}
	return len(Severities)
}

// Finding is one classified reason.
type Finding struct {
	Status         string   `json:"status,omitempty"` // the cell status: unavailable, error, mismatch, ...
	Target         string   `json:"target,omitempty"`
	Model          string   `json:"model,omitempty"` // set by the caller when known
	Kind           Kind     `json:"kind"`
	Severity       Severity `json:"severity"`
	Summary        string   `json:"summary"`        // one line: what is wrong
	Recommendation string   `json:"recommendation"` // what to do about it
	Reason         string   `json:"reason"`         // the exact text classified
}

// rule matches a reason; the first rule that matches wins, so specific rules come
// before general ones.
type rule struct {
	kind     Kind
	severity Severity
	re       *regexp.Regexp
	// when, if set, must also hold (e.g. the target's provider).
	when    func(target, reason string) bool
	summary func(m []string) string
	rec     func(m []string, target, reason string) string
}

func text(s string) func([]string) string { return func([]string) string { return s } }

func recText(s string) func([]string, string, string) string {
	return func([]string, string, string) string { return s }
}

func re(s string) *regexp.Regexp { return regexp.MustCompile(s) }

// ortSetup is where ONNX Runtime's provider plugins must go.
const ortSetup = "ONNX Runtime loads provider plugins from the directory of libonnxruntime.so (ONNXRUNTIME_LIB, default .hwtest/lib/)"

var (
	pluginName = re(`libonnxruntime_providers_(\w+)\.so`)
	appendName = re(`AppendExecutionProvider_(\w+?)(?:_V2)?:|SessionOptionsAppendExecutionProvider_(\w+?)(?:_V2)?:`)
)

// Rules that serve both tables below: ONNX Runtime's own text, and the causes
// hwtest records.
var (
	libraryTooOld = rule{kind: WrongLibraryVersion, severity: Critical,
		re:      re(`The requested API version \[(\d+)\] is not available(?:, only API versions \[1, (\d+)\])?|Error setting ORT API base: 2`),
		summary: text("the ONNX Runtime library is older than the C API hwtest is built against (onnxruntime_go v1.27.0 needs API 24, ONNX Runtime >= 1.24)"),
		rec:     recText("install ONNX Runtime >= 1.24: `make setup` (npm pack onnxruntime-node@1.30.0, libonnxruntime.so.1), or point ONNXRUNTIME_LIB at a libonnxruntime.so.1 of 1.24 or newer")}
	timedOut = rule{kind: Timeout, severity: Error,
		re:      re(`(?i)context deadline exceeded|Exiting due to terminate flag`),
		summary: text("the run did not finish in time"),
		rec:     recText("raise HWTEST_RUN_TIMEOUT (one inference) or `hwtest run --timeout` (whole process); a first run on TensorRT/MIGraphX/OpenVINO GPU includes engine compilation: enable their engine caches (trt_engine_cache_enable, migraphx_model_cache_dir, cache_dir)")}
)

// anyText is r matching whatever the reason says: for a cause that decides alone.
func anyText(r rule) rule {
	r.re = nil
	return r
}

var rules = []rule{
	// The ONNX Runtime library itself.
	libraryTooOld,

	// Drivers and devices.
	{kind: MissingDriver, severity: Info,
		re:      re(`libnvidia-ml\.so\.1 not found|libcuda\.so\.1: cannot open shared object file|no CUDA-capable device is detected|cudaErrorNoDevice|CUDA driver version is insufficient for CUDA runtime version|found no NVIDIA driver`),
		summary: text("no NVIDIA driver/GPU on this machine"),
		rec:     recText("on a machine with an NVIDIA GPU install the driver (Debian: `apt-get install nvidia-driver`, which provides libcuda.so.1 and libnvidia-ml.so.1; CUDA 12.x needs driver >= 525); in a container pass `--gpus all` (nvidia-container-toolkit)")},
	{kind: MissingDriver, severity: Info,
		re:      re(`/dev/kfd does not exist|/sys/class/kfd/kfd/topology/nodes does not exist|hipErrorNoDevice|No ROCm-capable device|not usable by ROCm`),
		summary: text("no AMD GPU usable by ROCm on this machine"),
		rec:     recText("install the amdgpu-dkms driver and ROCm (`amdgpu-install --usecase=rocm`), add the user to the `render` and `video` groups; in a container pass `--device=/dev/kfd --device=/dev/dri`")},
	{kind: MissingDriver, severity: Warning,
		re:      re(`Failed to get a WebGPU adapter|No supported adapters|libvulkan\.so\.1: cannot open shared object file`),
		summary: text("WebGPU (Dawn) found no usable GPU adapter: no Vulkan loader or driver, or a driver without the features Dawn needs"),
		rec:     recText("on a machine with a GPU, install its Vulkan driver and the loader (`apt-get install libvulkan1` plus the vendor's driver); check with `vulkaninfo --summary` (package vulkan-tools). Dawn prints why it rejected each adapter on stderr; Mesa's lavapipe (mesa-vulkan-drivers, CPU only) was rejected here for lacking shaderUniform*ArrayDynamicIndexing")},
	{kind: MissingDriver, severity: Info,
		re:      re(`/sys/class/drm does not exist|no DRM card with vendor 0x8086`),
		summary: text("no Intel GPU visible to the kernel's DRM drivers"),
		rec:     recText("on an Intel GPU host load the i915 or xe driver and install the compute runtime (`apt-get install intel-opencl-icd libze1`); in a container pass `--device=/dev/dri`")},

	// Platform: the EP does not exist on this OS.
	{kind: PlatformUnsupported, severity: Info,
		re:      re(`does not support CoreML|not macOS|Intel Mac .*no Apple Neural Engine`),
		summary: text("CoreML exists only on macOS/iOS (Apple silicon for the Neural Engine)"),
		rec:     recText("run the coreml target on a Mac with Apple silicon using an ONNX Runtime built with CoreML (the macOS arm64 release or npm onnxruntime-node on darwin-arm64)")},
	{kind: PlatformUnsupported, severity: Info,
		re:      re(`Specified provider is not supported\.`),
		when:    func(target, reason string) bool { return isDirectML(target, reason) },
		summary: text("DirectML is Windows-only"),
		rec:     recText("run the directml target on Windows 10+ with a DirectX 12 GPU and the DirectML build of ONNX Runtime (NuGet Microsoft.ML.OnnxRuntime.DirectML or pip onnxruntime-directml)")},

	// Provider plugins and vendor libraries.
	{kind: MissingEPLibrary, severity: Warning,
		re: re(`Failed to load library (\S*libonnxruntime_providers_(\w+)\.so) with error: \S*libonnxruntime_providers_\w+\.so: cannot open shared object file`),
		summary: func(m []string) string {
			return fmt.Sprintf("ONNX Runtime's %s provider plugin %s is missing", m[2], m[1])
		},
		rec: pluginRec},
	{kind: MissingEPLibrary, severity: Warning,
		re: re(`Failed to load library \S+ with error: (lib[\w.+-]+\.so[.\d]*): cannot open shared object file`),
		summary: func(m []string) string {
			return fmt.Sprintf("the provider plugin loads but its dependency %s is missing", m[1])
		},
		rec: vendorLibRec},
	{kind: MissingEPLibrary, severity: Warning,
		re:      re(`(lib[\w.+-]+\.so[.\d]*): cannot open shared object file`),
		summary: func(m []string) string { return fmt.Sprintf("%s cannot be loaded", m[1]) },
		rec:     vendorLibRec},
	{kind: MissingEPLibrary, severity: Warning,
		re: re(`(?:AppendExecutionProvider_(\w+)|SessionOptionsAppendExecutionProvider_(\w+?)(?:_V2)?): Failed to load shared library`),
		summary: func(m []string) string {
			return fmt.Sprintf("ONNX Runtime could not load the %s provider plugin", firstNonEmpty(m[1], m[2]))
		},
		rec: pluginRec},
	{kind: MissingEPLibrary, severity: Warning,
		re:      re(`not found: no (\S+)`),
		summary: func(m []string) string { return fmt.Sprintf("%s is not installed", m[1]) },
		rec:     vendorLibRec},
	{kind: MissingDriver, severity: Info,
		re:      re(`not present: (.*)`),
		summary: func(m []string) string { return "not on this machine: " + m[1] },
		rec:     recText("expected on a machine without this hardware; run this target on a host that has it")},

	// Versions.
	{kind: WrongLibraryVersion, severity: Error,
		re:      re("version `([\\w.]+)' not found|undefined symbol: (\\w+)|VERS_[\\d.]+' not found|was compiled against .* version|Unsupported ONNX Runtime version"),
		summary: text("a library is present but its version does not match what loads it"),
		rec:     recText("use provider plugins from the same ONNX Runtime release as libonnxruntime.so (ONNXRUNTIME_LIB) and the CUDA/cuDNN/TensorRT major versions that release was built for (ONNX Runtime 1.30 GPU: CUDA 12.x, cuDNN 9.x, TensorRT 10.x); `ldd` the plugin to see which library is wrong")},

	// Build.
	{kind: EPNotInBuild, severity: Warning,
		re:      re(`Unknown provider name '(\w+)'`),
		summary: func(m []string) string { return fmt.Sprintf("ONNX Runtime does not know the provider name %q", m[1]) },
		rec: func(m []string, target, reason string) string {
			if strings.EqualFold(m[1], "ROCM") {
				return "ONNX Runtime removed its ROCm EP; AMD GPUs run through MIGraphXExecutionProvider (hardware.yaml target rocm)"
			}
			return "use one of the names the error lists, spelled exactly (they are case-sensitive: 'WebGPU' not 'WebGpu', 'XNNPACK' not 'Xnnpack'); fix `provider:` in hardware.yaml or the short-name mapping in runtime/session.go"
		}},
	{kind: EPNotInBuild, severity: Warning,
		re: re(`(\w+?)(?:ExecutionProvider)? execution provider is not supported in this build`),
		summary: func(m []string) string {
			return fmt.Sprintf("this ONNX Runtime build has no %s execution provider", m[1])
		},
		rec: buildRec},
	{kind: EPNotInBuild, severity: Warning,
		re:      re(`Specified provider is not supported\.`),
		summary: text("this ONNX Runtime build does not include the requested provider"),
		rec:     buildRec},
	// Running.
	{kind: OutOfMemory, severity: Error,
		re:      re(`(?i)out of memory|Failed to allocate memory|CUBLAS_STATUS_ALLOC_FAILED|hipErrorOutOfMemory|std::bad_alloc|cudaErrorMemoryAllocation|OOM killer|MemoryError`),
		summary: text("the model did not fit in the device's (or host's) memory"),
		rec: recText("use a smaller batch or input dims (models.yaml `inputs:` dims), a smaller size tier or fp16/int8 variant; on CUDA cap the arena with provider option `gpu_mem_limit` and `arena_extend_strategy: kSameAsRequested`; " +
			"check free memory with `nvidia-smi` / `rocm-smi`; run models one per process (`hwtest run` does) so one model's arena is not held by the next")},
	{kind: UnsupportedOperator, severity: Error,
		re: re(`Could not find an implementation for (\w+)\((\d+)\) node with name '([^']*)'`),
		summary: func(m []string) string {
			return fmt.Sprintf("no kernel for %s (opset %s) node %q with these input types", m[1], m[2], m[3])
		},
		rec: func(m []string, target, reason string) string {
			return fmt.Sprintf("ONNX Runtime has no %s kernel for the node's data types on any registered EP (see docs/OperatorKernels.md); cast the inputs to a supported type (usually float32) or re-export the model with a different opset", m[1])
		}},
	{kind: UnsupportedOperator, severity: Error,
		re:      re(`No Op registered for (\w+) with domain_version of (\d+)`),
		summary: func(m []string) string { return fmt.Sprintf("operator %s does not exist in opset %s", m[1], m[2]) },
		rec: func(m []string, target, reason string) string {
			return fmt.Sprintf("%s is a custom or misspelled operator: register its custom-op library, or re-export the model with standard ONNX operators", m[1])
		}},
	{kind: UnsupportedOperator, severity: Warning,
		re:      re(`fallback to CPU EP has been explicitly disabled`),
		summary: text("the accelerator cannot take every node and CPU fallback is disabled (strict mode)"),
		rec:     recText("run `hwtest check MODEL` to see which operators the EP lacks; the cell is partial at best on this EP; re-export with supported ops or accept CPU fallback (session.disable_cpu_ep_fallback=0)")},
	{kind: UnsupportedOperator, severity: Error,
		re:      re(`Opset (\d+) is under development|Current official support for domain ([\w.]+) is till opset (\d+)`),
		summary: text("the model's opset is newer than this ONNX Runtime supports"),
		rec:     recText("re-export the model with an opset ONNX Runtime 1.30 supports (ai.onnx <= 26; hwtest's zoo uses 17), or upgrade ONNX Runtime")},
	{kind: ModelFile, severity: Error,
		re:      re(`Protobuf parsing failed|ModelProto does not have a graph|File doesn't exist|This is an invalid model|INVALID_PROTOBUF|ShapeInferenceError|Load model from .* failed`),
		summary: text("ONNX Runtime could not load the model file"),
		rec:     recText("check the path and that the file is a complete .onnx (`hwtest fetch` re-downloads, `python -m onnx.checker` validates); external-data models need their .data file next to the .onnx")},
	{kind: ModelFile, severity: Error,
		re:      re(`Got invalid dimensions for input: (\w+)|Unexpected input data type|invalid rank for input`),
		summary: text("the inputs hwtest fed do not match the model's input metadata"),
		rec:     recText("fix the model's `inputs:` overrides in models.yaml (dims, value ranges) to match the model's declared inputs (the message lists the model's inputs)")},
	timedOut,
}

func pluginRec(m []string, target, reason string) string {
	// Which EP: the plugin the hint or the error names, else the target.
	ep := strings.ToLower(target)
	if pm := pluginName.FindAllStringSubmatch(reason, -1); pm != nil {
		for _, x := range pm {
			if x[1] != "shared" {
				ep = strings.ToLower(x[1])
			}
		}
	}
	if pm := appendName.FindStringSubmatch(reason); pm != nil {
		ep = strings.ToLower(firstNonEmpty(pm[1], pm[2]))
	}
	switch {
	case strings.Contains(ep, "cuda"), strings.Contains(ep, "tensorrt"):
		return ortSetup + ": put libonnxruntime_providers_shared.so and libonnxruntime_providers_cuda.so (and _tensorrt.so for TensorRT) of the same release next to it, e.g. from onnxruntime-linux-x64-gpu-1.30.0.tgz (lib/) or pip onnxruntime-gpu==1.30.0 (onnxruntime/capi/); they need CUDA 12 (libcudart.so.12, libcublasLt.so.12), cuDNN 9 (libcudnn.so.9) and, for TensorRT, libnvinfer.so.10 on LD_LIBRARY_PATH"
	case strings.Contains(ep, "openvino"):
		return ortSetup + ": install the OpenVINO build of ONNX Runtime (pip onnxruntime-openvino==1.30.*, or build with --use_openvino) and put its libonnxruntime_providers_shared.so and libonnxruntime_providers_openvino.so next to libonnxruntime.so; OpenVINO's runtime (libopenvino.so) must be on LD_LIBRARY_PATH (`source /opt/intel/openvino/setupvars.sh`)"
	case strings.Contains(ep, "migraphx"):
		return ortSetup + ": build ONNX Runtime with --use_migraphx against ROCm (or use AMD's onnxruntime-rocm wheel) and put libonnxruntime_providers_shared.so and libonnxruntime_providers_migraphx.so next to libonnxruntime.so; ROCm's /opt/rocm/lib must be on LD_LIBRARY_PATH"
	}
	return ortSetup + ": put libonnxruntime_providers_shared.so and the EP's libonnxruntime_providers_<ep>.so of the same release next to it"
}

// vendorLibs maps a library to the package that provides it.
var vendorLibs = []struct{ prefix, rec string }{
	{"libonnxruntime_providers", ""},
	{"libcudart", "install the CUDA 12 runtime: `apt-get install cuda-cudart-12-x` (NVIDIA's CUDA repo) or pip nvidia-cuda-runtime-cu12, and add its lib directory to LD_LIBRARY_PATH"},
	{"libcublas", "install cuBLAS for CUDA 12: `apt-get install libcublas-12-x` or pip nvidia-cublas-cu12, and add its lib directory to LD_LIBRARY_PATH"},
	{"libcudnn", "install cuDNN 9 for CUDA 12: `apt-get install libcudnn9-cuda-12` or pip nvidia-cudnn-cu12, and add its lib directory to LD_LIBRARY_PATH"},
	{"libcufft", "install cuFFT for CUDA 12: `apt-get install libcufft-12-x` or pip nvidia-cufft-cu12"},
	{"libcurand", "install cuRAND for CUDA 12: `apt-get install libcurand-12-x` or pip nvidia-curand-cu12"},
	{"libnvinfer", "install TensorRT 10: `apt-get install libnvinfer10 libnvinfer-plugin10` (NVIDIA's repo) or pip tensorrt-cu12-libs, and add its lib directory to LD_LIBRARY_PATH"},
	{"libnvidia-ml", "install the NVIDIA driver (it ships libnvidia-ml.so.1)"},
	{"libcuda.so", "install the NVIDIA driver (it ships libcuda.so.1)"},
	{"libopenvino", "install OpenVINO 2025.x runtime (apt `openvino` from Intel's repo or pip openvino) and `source setupvars.sh`, or add its runtime/lib/intel64 to LD_LIBRARY_PATH"},
	{"libQnn", "install the Qualcomm AI Engine Direct (QNN) SDK and point the qnn target's backend_path at its lib/<arch>/libQnnHtp.so, or add that directory to LD_LIBRARY_PATH"},
	{"libmigraphx", "install MIGraphX from ROCm (`apt-get install migraphx`) and add /opt/rocm/lib to LD_LIBRARY_PATH"},
	{"libamdhip64", "install ROCm (`amdgpu-install --usecase=rocm`) and add /opt/rocm/lib to LD_LIBRARY_PATH"},
	{"libvulkan", "install the Vulkan loader: `apt-get install libvulkan1` (plus mesa-vulkan-drivers for a driver)"},
}

func vendorLibRec(m []string, target, reason string) string {
	lib := m[1]
	for _, v := range vendorLibs {
		if strings.HasPrefix(lib, v.prefix) {
			if v.rec == "" {
				return pluginRec(m, target, reason)
			}
			return v.rec
		}
	}
	return fmt.Sprintf("install the package that provides %s (Debian: `apt-file search %s`) and make sure the dynamic linker finds it (ldconfig or LD_LIBRARY_PATH)", lib, lib)
}

func buildRec(m []string, target, reason string) string {
	name := ""
	if len(m) > 1 {
		name = m[1]
	}
	ep := strings.ToLower(name)
	switch {
	case ep == "qnn" || strings.Contains(strings.ToLower(target), "qnn"):
		return "use the QNN build of ONNX Runtime (pip onnxruntime-qnn or NuGet Microsoft.ML.OnnxRuntime.QNN, Windows on Snapdragon/Android) or build with --use_qnn --qnn_home=<QNN SDK>; the qnn target needs backend_path libQnnHtp.so from the QNN SDK"
	case ep == "migraphx" || strings.Contains(strings.ToLower(target), "rocm"):
		return "use an ONNX Runtime built with MIGraphX (--use_migraphx, on ROCm) and point ONNXRUNTIME_LIB at it; npm onnxruntime-node has no MIGraphX EP"
	case ep == "webgpu" || ep == "webnn" || ep == "js":
		return "run this EP in the browser (onnxruntime-web): hwtest's webgpu/webnn targets use Chromium, not the native library"
	case ep == "dml" || strings.Contains(strings.ToLower(target), "directml"):
		return "DirectML needs Windows and the DirectML build of ONNX Runtime (NuGet Microsoft.ML.OnnxRuntime.DirectML)"
	}
	return fmt.Sprintf("use an ONNX Runtime build that includes the %s execution provider and point ONNXRUNTIME_LIB at it", firstNonEmpty(name, "requested"))
}

func isDirectML(target, reason string) bool {
	t := strings.ToLower(target)
	return strings.Contains(t, "directml") || strings.Contains(t, "dml") || strings.Contains(reason, "DmlExecutionProvider")
}

func firstNonEmpty(xs ...string) string {
	for _, x := range xs {
		if x != "" {
			return x
		}
	}
	return ""
}

// causeRules classify what hwtest itself saw, by the cause the code that saw it
// recorded (result.Cause), never by the wording of hwtest's own messages. A cause
// may have several rules: the first whose re matches (a nil re always does) wins,
// so third-party text inside a reason (ONNX Runtime's, Go's) can refine it.
var causeRules = map[result.Cause][]rule{
	result.CauseRuntimeLibrary: {
		libraryTooOld, // ONNX Runtime's own words inside hwtest's message say which
		{kind: MissingEPLibrary, severity: Critical,
			summary: text("ONNX Runtime itself could not be loaded"),
			rec:     recText("run `make setup` (installs libonnxruntime.so.1 from npm onnxruntime-node@1.30.0 into .hwtest/lib) or set ONNXRUNTIME_LIB to a libonnxruntime.so.1")},
	},
	result.CauseModelFile: {{kind: ModelFile, severity: Error,
		summary: text("the model file is missing, not a complete ONNX model, or not the file models.yaml pins (sha256)"),
		rec: recText("the reason names the file: a missing or truncated npm/hf/zoo model comes back with `make setup` (`hwtest fetch`) after deleting it; a `file:` model must be restored by you; " +
			"if the export changed on purpose, update sha256 in models.yaml")}},
	result.CauseInputs: {{kind: ModelFile, severity: Error,
		summary: text("the inputs models.yaml asks for do not fit the model"),
		rec:     recText("fix the model's `inputs:` in models.yaml (the message lists the model's real inputs and what hwtest would feed); an input only the real export has, not its fixture, takes `real_only: true`")}},
	result.CauseMismatch: {{kind: PrecisionMismatch, severity: Error,
		summary: text("outputs on the target differ from the CPU fp32 reference beyond tolerance, or a family invariant broke"),
		rec: recText("compare the worst element the report names; for fp16/TF32 targets loosen `tolerance:` for this target in hardware.yaml (or per model in models.yaml) only if the error is within the precision's expected range (fp16 ~1e-3 relative); " +
			"on CUDA set NVIDIA_TF32_OVERRIDE=0 to rule out TF32; otherwise report the EP bug with the model")}},
	result.CauseCheckMisfit: {{kind: CheckMisfit, severity: Error,
		summary: text("a family check fails on the CPU reference too: it does not fit the model as models.yaml describes it"),
		rec: recText("a check that fails on the CPU as well is not a precision problem, and loosening tolerances hides it: fix the model's `outputs:` in models.yaml (the output the check reads, or its axis: `distribution: {output: prob, axis: 1}` for a [batch, classes, 1, 1] softmax), " +
			"or drop the role if the output is not what the check assumes")}},
	result.CausePartial: {{kind: UnsupportedOperator, severity: Info,
		summary: text("the target ran, but some nodes fell back to the CPU (partial)"),
		rec:     recText("`hwtest check MODEL` lists the operators the EP lacks; re-export with supported operators, or accept the CPU share the reason gives")}},
	result.CauseCPUOnly: {{kind: UnsupportedOperator, severity: Warning,
		summary: text("the target's EP took none of the nodes: the model ran on the CPU (cpu-only), so the figures are the CPU's, not the target's"),
		rec:     recText("`hwtest check MODEL` lists the operators the EP lacks; an EP that supports every operator may still refuse the graph (dynamic shapes, data types): fix the input dims in models.yaml, or re-export; until then this target adds nothing over the CPU")}},
	result.CauseTimeout: {anyText(timedOut)},
	result.CauseCrash: {
		{kind: OutOfMemory, severity: Critical, re: re(`fatal error: out of memory|runtime: out of memory|std::bad_alloc|signal: killed|crashed \(killed\)`),
			summary: text("the suite process ran out of memory (a Go fatal error, or the kernel's OOM killer)"),
			rec:     recText("use smaller input dims or batch in models.yaml, or a smaller size tier; a SIGKILL is usually the OOM killer (`dmesg`); rerun the model alone (`hwtest run --model ID --target T`)")},
		{kind: Crash, severity: Critical,
			summary: text("the suite process died (native crash, Go fatal error, or no report written)"),
			rec:     recText("rerun that model alone (`hwtest run --model ID --target T`) and read the first error lines in the report; a SIGKILL is often the kernel's OOM killer (check `dmesg`); a crash inside an EP is a bug to report with the model and `ONNXRUNTIME_LIB` version; a full disk stops the report from being written (`df`)")},
	},
	result.CauseInterrupted: {{kind: Interrupted, severity: Warning,
		summary: text("the run was stopped (SIGINT/SIGTERM) before this cell finished"),
		rec:     recText("rerun the cell (`hwtest run --model ID --target T`); the cells that finished before the stop are kept")}},
	result.CauseKernelFailed: {{kind: KernelFailure, severity: Error,
		summary: text("an execution provider's kernel failed at run time on this model's shapes"),
		rec: recText("the EP accepted the node but its kernel rejects these shapes or types (an EP bug or gap): the reason names the node; the same model on another target (wasm, cpu) shows whether the model is at fault; " +
			"report it to the EP's project with the model, and run on another target meanwhile")}},
	result.CauseBrowser: {{kind: BrowserFailure, severity: Error,
		summary: text("Chromium or its page failed"),
		rec:     recText("rerun the cell alone; check `make setup` installed chromium (and the WebNN Chromium); the reason carries the page's or the browser's own error")}},
}

// ClassifyCause classifies a result by its recorded cause when it has one, and by
// the text of the reason (third-party messages: ONNX Runtime's, drivers') otherwise.
func ClassifyCause(status string, cause result.Cause, target, reason string) Finding {
	for _, r := range causeRules[cause] {
		m := []string{reason}
		if r.re != nil {
			if m = r.re.FindStringSubmatch(reason); m == nil {
				continue
			}
		}
		f := Finding{Status: status, Target: target, Reason: reason, Kind: r.kind, Severity: r.severity, Summary: r.summary(m), Recommendation: r.rec(m, target, reason)}
		return adjustSeverity(f)
	}
	return Classify(status, target, reason)
}

// Classify turns one recorded reason into a finding. status is the cell's status
// (unavailable, error, mismatch, expected-fail, ...), target the target id, reason
// the exact text. A mismatch without a recognised message is still a precision
// mismatch; an expected failure is only ever info.
func Classify(status, target, reason string) Finding {
	f := Finding{Status: status, Target: target, Reason: reason, Kind: Unknown, Severity: Warning}
	matched := false
	for _, r := range rules {
		m := r.re.FindStringSubmatch(reason)
		if m == nil || (r.when != nil && !r.when(target, reason)) {
			continue
		}
		f.Kind, f.Severity, f.Summary, f.Recommendation = r.kind, r.severity, r.summary(m), r.rec(m, target, reason)
		matched = true
		break
	}
	if !matched {
		switch status {
		case "mismatch": // a mismatch recorded without a cause (an older report)
			r := causeRules[result.CauseMismatch][0]
			f.Kind, f.Severity, f.Summary, f.Recommendation = r.kind, r.severity, r.summary(nil), r.rec(nil, target, reason)
		case "error":
			f.Severity = Error
			f.Summary = "unrecognised error"
			f.Recommendation = "read the exact reason; if it recurs, add a rule for it to diagnose/classify.go"
		default:
			f.Summary = "unrecognised reason"
			f.Recommendation = "read the exact reason; if it recurs, add a rule for it to diagnose/classify.go"
		}
	}
	return adjustSeverity(f)
}

// adjustSeverity: a run that failed is at least an error, whatever caused it; an
// expected failure is only ever info.
func adjustSeverity(f Finding) Finding {
	switch f.Status {
	case "error", "mismatch":
		if f.Severity.rank() > Error.rank() {
			f.Severity = Error
		}
	case "expected-fail":
		f.Severity = Info
	}
	return f
}
