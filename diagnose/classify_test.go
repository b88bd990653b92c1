package diagnose

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/hwtest/hwtest/result"
)

// Every reason below was produced here (ONNX Runtime 1.30.0 from npm onnxruntime-node,
// onnxruntime_go v1.27.0, Debian 12, no GPU) unless its comment says otherwise.
var realReasons = []struct {
	name, status, target, reason string
	kind                         Kind
	severity                     Severity
	recHas                       string
}{
	{"cuda plugin missing (runtime.Unavailable, first call)", "unavailable", "cuda",
		"CUDAExecutionProvider: /onnxruntime_src/onnxruntime/core/session/provider_bridge_ort.cc:1988 onnxruntime::Provider& onnxruntime::ProviderLibrary::Get() [ONNXRuntimeError] : 1 : FAIL : Failed to load library /work/main/.hwtest/lib/libonnxruntime_providers_shared.so with error: /work/main/.hwtest/lib/libonnxruntime_providers_shared.so: cannot open shared object file: No such file or directory (libonnxruntime_providers_shared.so and libonnxruntime_providers_cuda.so not found in /work/main/.hwtest/lib)",
		MissingEPLibrary, Warning, "libonnxruntime_providers_cuda.so"},
	{"tensorrt plugin missing", "unavailable", "tensorrt",
		"TensorrtExecutionProvider: /onnxruntime_src/onnxruntime/core/session/provider_bridge_ort.cc:1988 onnxruntime::Provider& onnxruntime::ProviderLibrary::Get() [ONNXRuntimeError] : 1 : FAIL : Failed to load library /work/main/.hwtest/lib/libonnxruntime_providers_shared.so with error: /work/main/.hwtest/lib/libonnxruntime_providers_shared.so: cannot open shared object file: No such file or directory (libonnxruntime_providers_shared.so and libonnxruntime_providers_tensorrt.so not found in /work/main/.hwtest/lib)",
		MissingEPLibrary, Warning, "libnvinfer.so.10"},
	{"cuda plugin missing, shared present (providers_shared.so copied next to the lib)", "unavailable", "cuda",
		"/onnxruntime_src/onnxruntime/core/session/provider_bridge_ort.cc:1988 onnxruntime::Provider& onnxruntime::ProviderLibrary::Get() [ONNXRuntimeError] : 1 : FAIL : Failed to load library /tmp/ort130/libonnxruntime_providers_cuda.so with error: /tmp/ort130/libonnxruntime_providers_cuda.so: cannot open shared object file: No such file or directory",
		MissingEPLibrary, Warning, "onnxruntime-linux-x64-gpu-1.30.0.tgz"},
	{"cuda append without options", "unavailable", "cuda",
		"OrtSessionOptionsAppendExecutionProvider_Cuda: Failed to load shared library",
		MissingEPLibrary, Warning, "libonnxruntime_providers_cuda.so"},
	{"openvino plugin missing", "unavailable", "openvino",
		"OpenVINOExecutionProvider: SessionOptionsAppendExecutionProvider_OpenVINO_V2: Failed to load shared library (libonnxruntime_providers_shared.so and libonnxruntime_providers_openvino.so not found in /work/main/.hwtest/lib)",
		MissingEPLibrary, Warning, "onnxruntime-openvino"},
	{"migraphx not in build", "unavailable", "rocm",
		"MIGraphXExecutionProvider: MIGraphX execution provider is not supported in this build. (libonnxruntime_providers_shared.so and libonnxruntime_providers_migraphx.so not found in /work/main/.hwtest/lib)",
		EPNotInBuild, Warning, "--use_migraphx"},
	{"qnn not in build", "unavailable", "qnn",
		"QNNExecutionProvider: QNN execution provider is not supported in this build.",
		EPNotInBuild, Warning, "onnxruntime-qnn"},
	{"qnn not in build, full EP name (as hwtest appends it)", "unavailable", "qnn",
		"QNNExecutionProvider: QNNExecutionProvider execution provider is not supported in this build.",
		EPNotInBuild, Warning, "onnxruntime-qnn"},
	{"xnnpack not in build", "unavailable", "xnnpack",
		"XNNPACK execution provider is not supported in this build.",
		EPNotInBuild, Warning, "XNNPACK"},
	{"coreml on linux", "unavailable", "coreml",
		"CoreMLExecutionProvider: Your platform or onnxruntime library does not support CoreML",
		PlatformUnsupported, Info, "Apple silicon"},
	{"directml on linux", "unavailable", "directml",
		"DmlExecutionProvider: Specified provider is not supported.",
		PlatformUnsupported, Info, "Microsoft.ML.OnnxRuntime.DirectML"},
	{"native webgpu EP without a Vulkan loader", "unavailable", "webgpu-native",
		"/onnxruntime_src/onnxruntime/core/providers/webgpu/webgpu_context.cc:136 onnxruntime::webgpu::WebGpuContext::Initialize(const onnxruntime::webgpu::WebGpuContextConfig&)::<lambda()> adapter_result.status == wgpu::RequestAdapterStatus::Success was false. Failed to get a WebGPU adapter: No supported adapters",
		MissingDriver, Warning, "vulkaninfo --summary"},
	{"provider name with the wrong case (runtime trims WebGpuExecutionProvider to WebGpu)", "unavailable", "webgpu-native",
		"WebGpuExecutionProvider: Unknown provider name 'WebGpu'. Currently supported values are 'DML'/'DmlExecutionProvider', 'QNN'/'QNNExecutionProvider', 'OpenVINO'/'OpenVINOExecutionProvider', 'SNPE'/'SNPEExecutionProvider', 'XNNPACK'/'XnnpackExecutionProvider', 'WEBNN'/'WebNNExecutionProvider', 'WebGPU'/'WebGpuExecutionProvider', 'AZURE'/'AzureExecutionProvider', 'JS'/'JsExecutionProvider', 'VitisAI'/'VitisAIExecutionProvider', 'CoreML'/'CoreMLExecutionProvider', 'NvTensorRtRtx'/'NvTensorRTRTXExecutionProvider', 'MIGraphX'/'MIGraphXExecutionProvider', and 'CPU'/'CPUExecutionProvider'.",
		EPNotInBuild, Warning, "case-sensitive"},
	{"ROCm EP name (removed from ONNX Runtime)", "unavailable", "rocm",
		"ROCMExecutionProvider: Unknown provider name 'ROCM'. Currently supported values are 'DML'/'DmlExecutionProvider', 'MIGraphX'/'MIGraphXExecutionProvider', and 'CPU'/'CPUExecutionProvider'.",
		EPNotInBuild, Warning, "MIGraphXExecutionProvider"},
	// Messages hwtest itself writes (runtime, onnx.Inspect), as the matrix has them.
	{"not an ONNX model (onnx.Inspect)", "error", "cpu",
		"model \"m\": /x/m.onnx is not a loadable ONNX model: /x/m.onnx: not an ONNX model: field 13: proto: cannot parse invalid wire-format data",
		ModelFile, Error, "make setup"},
	{"input override typo", "error", "cpu",
		"model \"gpt2\": input override \"input_idz\": the model has no such input (its inputs: input_ids)",
		ModelFile, Error, "real_only"},
	{"sha256 pin differs", "error", "cpu",
		"model \"silero-vad-v5\": .hwtest/models/npm/x.onnx has sha256 1111, models.yaml pins 2222: either the file is corrupt or truncated (delete it and run `make setup`) or the pin in models.yaml is wrong (update its sha256)",
		ModelFile, Error, "update sha256"},
	{"partial on a native EP (profile)", "partial", "cuda",
		"83% of 120 nodes (91% of kernel time) on CUDA, the rest on CPU",
		UnsupportedOperator, Info, "hwtest check"},
	{"partial on WebNN (compiled partitions)", "partial", "webnn",
		"WebNN ran 1 compiled partition(s) (the nodes inside are not logged); 71 nodes ran on CPU",
		UnsupportedOperator, Info, "hwtest check"},
	{"ORT 1.20.1 with onnxruntime_go v1.27.0 (npm onnxruntime-node@1.20.1): the error", "error", "cpu",
		"initialising ONNX Runtime from /tmp/oldort/package/bin/napi-v3/linux/x64/libonnxruntime.so.1.20.1: Platform-specific initialization failed: Error setting ORT API base: 2 (run `make setup`, or point ONNXRUNTIME_LIB at libonnxruntime.so)",
		WrongLibraryVersion, Critical, "ONNX Runtime >= 1.24"},
	{"ORT 1.20.1: what it prints on stderr", "error", "cpu",
		"The requested API version [24] is not available, only API versions [1, 20] are supported in this build. Current ORT Version is: 1.20.1",
		WrongLibraryVersion, Critical, "ONNXRUNTIME_LIB"},
	{"ORT library missing", "unavailable", "cuda",
		"ONNX Runtime library not found at /nonexistent/libonnxruntime.so: run `make setup` (it installs it from npm onnxruntime-node), or set ONNXRUNTIME_LIB",
		MissingEPLibrary, Critical, "make setup"},
	{"ORT library not ELF", "unavailable", "cuda",
		"/etc/hostname is not a shared library (no ELF header): point ONNXRUNTIME_LIB at libonnxruntime.so, or run `make setup`",
		MissingEPLibrary, Critical, "ONNXRUNTIME_LIB"},
	{"no kernel for the input type", "error", "cpu",
		"Error loading temporary session: Could not find an implementation for Det(11) node with name 'y'",
		UnsupportedOperator, Error, "Det"},
	{"unknown operator", "error", "cpu",
		`Error loading temporary session: Load model from /tmp/scratch_unknown_op.onnx failed:This is an invalid model. In Node, ("y", FooBar, "", -1) : ("x": tensor(float),) -> ("y": tensor(float),) , Error No Op registered for FooBar with domain_version of 17`,
		UnsupportedOperator, Error, "FooBar"},
	{"opset too new", "error", "cpu",
		"Error loading temporary session: Load model from /tmp/scratch_opset99.onnx failed:/onnxruntime_src/onnxruntime/core/graph/model_load_utils.h:46 void onnxruntime::model_load_utils::ValidateOpsetForDomain(const std::unordered_map<std::__cxx11::basic_string<char>, int>&, const onnxruntime::logging::Logger&, bool, const std::string&, int) ONNX Runtime only *guarantees* support for models stamped with official released onnx opset versions. Opset 99 is under development and support for this is limited. The operator schemas and or other functionality may change before next ONNX release and in this case ONNX Runtime will not guarantee backward compatibility. Current official support for domain ai.onnx is till opset 26.",
		UnsupportedOperator, Error, "opset"},
	{"strict mode: nodes left on CPU", "error", "openvino",
		"Error creating C session from file: This session contains graph nodes that are assigned to the default CPU EP, but fallback to CPU EP has been explicitly disabled by the user.",
		UnsupportedOperator, Error, "hwtest check"},
	{"CPU arena out of memory", "error", "cpu",
		"Error running network: Non-zero status code returned while running ConstantOfShape node. Name:'y' Status Message: /onnxruntime_src/onnxruntime/core/framework/bfc_arena.cc:360 void* onnxruntime::BFCArena::AllocateRawInternal(size_t, bool, onnxruntime::Stream*) Failed to allocate memory for requested buffer of size 70368744177664",
		OutOfMemory, Error, "gpu_mem_limit"},
	// From ONNX Runtime CUDA EP reports (not reproducible without a GPU): the form CUDA_CALL throws.
	{"CUDA out of memory (CUDA EP's CUDA_CALL form)", "error", "cuda",
		"[ONNXRuntimeError] : 6 : RUNTIME_EXCEPTION : Non-zero status code returned while running MatMul node. Name:'/MatMul' Status Message: /onnxruntime_src/onnxruntime/core/framework/bfc_arena.cc:376 void* onnxruntime::BFCArena::AllocateRawInternal(size_t, bool, onnxruntime::Stream*, bool, onnxruntime::WaitNotificationFn) Failed to allocate memory for requested buffer of size 4294967296",
		OutOfMemory, Error, "nvidia-smi"},
	{"CUDA failure 2", "error", "cuda",
		"CUDA failure 2: out of memory ; GPU=0 ; hostname=gpu1 ; file=/onnxruntime_src/onnxruntime/core/providers/cuda/cuda_allocator.cc ; line=47 ; expr=cudaMalloc((void**)&p, size);",
		OutOfMemory, Error, "batch"},
	{"wrong input dims", "error", "cpu",
		"Error running network: Got invalid dimensions for input: x for the following indices\n index: 0 Got: 2 Expected: 3\n Please fix either the inputs/outputs or the model.",
		ModelFile, Error, "models.yaml"},
	{"truncated file", "error", "cpu",
		"Error loading temporary session: Load model from /tmp/scratch_garbage.onnx failed:Protobuf parsing failed.",
		ModelFile, Error, "hwtest fetch"},
	{"empty file", "error", "cpu",
		"Error loading temporary session: Load model from /tmp/scratch_empty.onnx failed:/onnxruntime_src/onnxruntime/core/graph/model.cc:187 onnxruntime::Model::Model(onnx::ModelProto&&, const onnxruntime::PathString&, const onnxruntime::IOnnxRuntimeOpSchemaRegistryList*, const onnxruntime::logging::Logger&, const onnxruntime::ModelOptions&) ModelProto does not have a graph.",
		ModelFile, Error, ".onnx"},
	{"missing file", "error", "cpu",
		"Error loading temporary session: Load model from /tmp/scratch_missing.onnx failed:Load model /tmp/scratch_missing.onnx failed. File doesn't exist",
		ModelFile, Error, "path"},
	{"sha256 mismatch (runtime.Resolve)", "error", "cpu",
		`model "silero-vad-v5": .hwtest/models/silero_vad_v5.onnx has sha256 0f3c, models.yaml pins 2623a295: the file is corrupt or truncated; delete it and run ` + "`make setup`",
		ModelFile, Error, "make setup"},
	{"precision (runtime invariant)", "mismatch", "webgpu",
		"outputs differ from the CPU reference: output \"logits\"[0 3 17]: got 0.5123 want 0.7603 (|diff| 0.248 > allowed 0.0001)",
		PrecisionMismatch, Error, "tolerance"},
	{"streaming state", "mismatch", "cuda",
		"two chunks with carried state differ from the whole sequence",
		PrecisionMismatch, Error, "NVIDIA_TF32_OVERRIDE"},
	{"run timeout (runtime)", "error", "cpu",
		"inference timed out after 30s (HWTEST_RUN_TIMEOUT): Exiting due to terminate flag being set to true.",
		Timeout, Error, "HWTEST_RUN_TIMEOUT"},
	{"process timeout (runner)", "error", "tensorrt",
		"timed out after 10m0s (hwtest run --timeout); the process was killed",
		Timeout, Error, "trt_engine_cache_enable"},
	{"native crash (runner)", "error", "cuda",
		"the suite process crashed (segmentation fault) without a report",
		Crash, Critical, "dmesg"},
	{"nvidia probe", "unavailable", "cuda",
		"not present: libnvidia-ml.so.1 not found (no NVIDIA driver)",
		MissingDriver, Info, "nvidia-driver"},
	{"kfd probe", "unavailable", "rocm",
		"not present: /dev/kfd does not exist (amdgpu kernel driver with KFD not loaded, or the container was started without --device=/dev/kfd)",
		MissingDriver, Info, "--device=/dev/kfd"},
	{"library probe", "unavailable", "tensorrt",
		"not found: no libnvinfer.so* in ldconfig cache (586 names), LD_LIBRARY_PATH (unset), /work/main/.hwtest/lib (ONNX Runtime's directory)",
		MissingEPLibrary, Warning, "libnvinfer10"},
	{"apple probe", "unavailable", "coreml",
		"not present: not macOS (GOOS=linux)",
		PlatformUnsupported, Info, "Mac"},
	{"cudnn missing under the CUDA plugin (ONNX Runtime issue reports)", "unavailable", "cuda",
		"/onnxruntime_src/onnxruntime/core/session/provider_bridge_ort.cc:1539 onnxruntime::Provider& onnxruntime::ProviderLibrary::Get() [ONNXRuntimeError] : 1 : FAIL : Failed to load library libonnxruntime_providers_cuda.so with error: libcudnn.so.9: cannot open shared object file: No such file or directory",
		MissingEPLibrary, Warning, "libcudnn9-cuda-12"},
	{"expected failure stays info", "expected-fail", "coreml",
		"Could not find an implementation for Scan(16) node with name 'scan'",
		UnsupportedOperator, Info, "Scan"},
	{"unrecognised error", "error", "cpu",
		"something nobody has seen before",
		Unknown, Error, "diagnose/classify.go"},
	// Seen in the last full run as "unknown": a WebGPU (JSEP) partial cell, and
	// qwen2's fixture failing a WebGPU kernel in onnxruntime-web.
	{"partial on WebGPU (JSEP)", "partial", "webgpu",
		"88% of 52 nodes on WebGPU (JSEP), the rest on CPU",
		UnsupportedOperator, Info, "hwtest check"},
	{"WebGPU kernel failure (onnxruntime-web)", "error", "webgpu",
		`[WebGPU] Kernel "[Mul] /model/layers.0/self_attn/Mul_71" failed. Error: Can't perform binary op on the given tensors`,
		KernelFailure, Error, "another target"},
	{"interrupted run (runner)", "error", "cpu",
		"interrupted: hwtest run was stopped (interrupt) before this cell finished",
		Interrupted, Error, "rerun"},
	{"Go out of memory (runner)", "error", "cpu",
		"the suite process ended without a report: exit status 2\nfatal error: out of memory allocating heap arena metadata",
		OutOfMemory, Critical, "input dims"},
	{"SIGKILL, as the runner words it (the OOM killer, mostly)", "error", "cpu",
		"suite process failed: the suite process crashed (killed) without a report",
		OutOfMemory, Critical, "dmesg"},
	// runtime's TestOwnModelsEndToEnd: a [2, 10, 1, 1] softmax over axis 1 checked
	// along the last axis, as models.yaml's plain distribution: prob says.
	{"softmax checked along the wrong axis (runtime, on the CPU too)", "error", "cpu",
		`row 0 of "prob" [2 10 1 1] sums to 0.00483358: output "prob"[0]: got 0.00483358, want 1 (|error| 0.995, allowed 1.1e-05); the CPU reference's own outputs break it too, so the check does not fit the model as models.yaml describes it (the output it names, or the axis: distribution and ranking take {output: NAME, axis: N}), which no tolerance fixes`,
		CheckMisfit, Error, "`distribution: {output: prob, axis: 1}`"},
	{"unrecognised mismatch", "mismatch", "cpu",
		"argmax at position 3 is 17 on the target",
		PrecisionMismatch, Error, "tolerance"},
}

// causes are what hwtest's own code records with the reasons above it wrote
// (result.Cause); the others are third-party text, classified by their wording.
var causes = map[string]result.Cause{
	"not an ONNX model (onnx.Inspect)":       result.CauseModelFile,
	"input override typo":                    result.CauseInputs,
	"sha256 pin differs":                     result.CauseModelFile,
	"partial on a native EP (profile)":       result.CausePartial,
	"partial on WebNN (compiled partitions)": result.CausePartial,
	"ORT 1.20.1 with onnxruntime_go v1.27.0 (npm onnxruntime-node@1.20.1): the error": result.CauseRuntimeLibrary,
	"ORT library missing":               result.CauseRuntimeLibrary,
	"ORT library not ELF":               result.CauseRuntimeLibrary,
	"sha256 mismatch (runtime.Resolve)": result.CauseModelFile,
	"precision (runtime invariant)":     result.CauseMismatch,
	"streaming state":                   result.CauseMismatch,
	"softmax checked along the wrong axis (runtime, on the CPU too)": result.CauseCheckMisfit,
	"run timeout (runtime)":                                    result.CauseTimeout,
	"process timeout (runner)":                                 result.CauseTimeout,
	"native crash (runner)":                                    result.CauseCrash,
	"partial on WebGPU (JSEP)":                                 result.CausePartial,
	"WebGPU kernel failure (onnxruntime-web)":                  result.CauseKernelFailed,
	"interrupted run (runner)":                                 result.CauseInterrupted,
	"Go out of memory (runner)":                                result.CauseCrash,
	"SIGKILL, as the runner words it (the OOM killer, mostly)": result.CauseCrash,
}

func TestClassifyRealReasons(t *testing.T) {
	for _, c := range realReasons {
		t.Run(c.name, func(t *testing.T) {
			f := ClassifyCause(c.status, causes[c.name], c.target, c.reason)
			if f.Kind != c.kind || f.Severity != c.severity {
				t.Errorf("got %s/%s, want %s/%s\n  summary: %s", f.Kind, f.Severity, c.kind, c.severity, f.Summary)
			}
			if !strings.Contains(f.Recommendation, c.recHas) {
				t.Errorf("recommendation lacks %q:\n  %s", c.recHas, f.Recommendation)
			}
			if f.Reason != c.reason || f.Target != c.target || f.Status != c.status || f.Summary == "" {
				t.Errorf("finding lost its input: %+v", f)
			}
		})
	}
}

func TestReportGroupsBySeverityThenKind(t *testing.T) {
	var fs []Finding
	for _, c := range realReasons {
		f := ClassifyCause(c.status, causes[c.name], c.target, c.reason)
		f.Model = "silero-vad-v5"
		fs = append(fs, f)
	}
	// The same reason on a second model merges into the same group.
	dup := Classify("unavailable", "qnn", "QNNExecutionProvider: QNN execution provider is not supported in this build.")
	dup.Model = "tiny-bert"
	fs = append(fs, dup)

	md, js := Report(fs)
	groups := Groups(fs)
	for i := 1; i < len(groups); i++ {
		a, b := groups[i-1], groups[i]
		if a.Severity.rank() > b.Severity.rank() || (a.Severity == b.Severity && a.Kind > b.Kind) {
			t.Errorf("groups out of order: %s/%s before %s/%s", a.Severity, a.Kind, b.Severity, b.Kind)
		}
	}
	var qnn *Group
	for i := range groups {
		if groups[i].Kind == EPNotInBuild && contains(groups[i].Targets, "qnn") {
			qnn = &groups[i]
		}
	}
	// Two real messages (short and full EP name) on silero, one on tiny-bert.
	if qnn == nil || qnn.Count != 3 || len(qnn.Models) != 2 {
		t.Errorf("qnn group = %+v", qnn)
	}
	m := string(md)
	crit, warn, info := strings.Index(m, "\n## Critical"), strings.Index(m, "\n## Warning"), strings.Index(m, "\n## Info")
	if crit < 0 || warn < crit || info < warn {
		t.Errorf("markdown sections out of order:\n%s", m)
	}
	if !strings.Contains(m, "### wrong-library-version:") || !strings.Contains(m, "**fix:**") {
		t.Errorf("markdown:\n%s", m)
	}
	var back struct {
		Summary Summary
		Groups  []Group
	}
	if err := json.Unmarshal(js, &back); err != nil {
		t.Fatal(err)
	}
	if back.Summary.Total != len(fs) || len(back.Groups) != len(groups) || back.Summary.BySeverity[Critical] == 0 {
		t.Errorf("json summary %+v, %d groups", back.Summary, len(back.Groups))
	}
	md, _ = Report(nil)
	if !strings.Contains(string(md), "No findings") {
		t.Errorf("empty report: %s", md)
	}
}

// Every cause hwtest records has a rule, and every case above that names a cause
// exists (a typo in the map would silently test the text path).
func TestEveryCauseIsClassified(t *testing.T) {
	for _, c := range result.Causes {
		rs := causeRules[c]
		if len(rs) == 0 || rs[len(rs)-1].re != nil {
			t.Errorf("cause %q has no rule that always matches", c)
		}
	}
	names := map[string]bool{}
	for _, c := range realReasons {
		names[c.name] = true
	}
	for name := range causes {
		if !names[name] {
			t.Errorf("causes names %q, which is not a case", name)
		}
	}
}
