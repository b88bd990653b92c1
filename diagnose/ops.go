package diagnose

import (
	"fmt"
	"sort"
	"strings"
)

// Coverage says how much a prediction can be trusted.
const (
	CoverageDocumented = "documented" // the EP's published operator table
	CoverageReference  = "reference"  // the CPU EP itself: everything ONNX Runtime runs
	CoverageUnknown    = "unknown"    // no table for this EP
)

// Prediction is what `hwtest check MODEL` says about one execution provider before
// anything runs: which of the model's operators the EP's documented table lists.
// An operator the table lists may still fall back under the constraints in
// Conditions (static shapes, constant inputs, ranks); one it does not list is
// predicted to run on the CPU. It is a prediction: the run's node placement is the
// measurement.
type Prediction struct {
	Provider      string            `json:"provider"`
	Coverage      string            `json:"coverage"`
	Source        string            `json:"source,omitempty"`
	Supported     []string          `json:"supported"`            // op types the table lists
	Unsupported   []string          `json:"unsupported"`          // op types it does not: predicted CPU fallback
	Conditions    map[string]string `json:"conditions,omitempty"` // supported op → documented constraint
	Nodes         int               `json:"nodes"`
	FallbackNodes int               `json:"fallback_nodes"`
	Verdict       string            `json:"verdict"`
}

// opTable is one EP's documented operator list. Keys are "Op" for ai.onnx and
// "domain:Op" otherwise, as onnx.Inspect counts them; values are the documented
// constraint ("" when none).
type opTable struct {
	provider string
	source   string
	ops      map[string]string
}

// alwaysPlaced are nodes ONNX Runtime removes or folds before partitioning, so no
// EP needs a kernel for them.
var alwaysPlaced = map[string]string{
	"Constant": "folded into an initializer by ONNX Runtime before partitioning",
}

func ops(list string, notes map[string]string) map[string]string {
	out := map[string]string{}
	for _, op := range strings.Fields(list) {
		out[op] = notes[op]
	}
	for op, n := range notes {
		out[op] = n
	}
	return out
}

// The tables. Sources are the ONNX Runtime (and onnx-tensorrt) documents at the
// commits named; where a document marks an op as partial, its constraint is kept.
var opTables = []opTable{
	{
		provider: "CoreMLExecutionProvider",
		// "Supported operators" of the CoreML EP page (ML Program format, the default
		// since 1.20): https://onnxruntime.ai/docs/execution-providers/CoreML-ExecutionProvider.html,
		// generated from tools/ci_build/github/apple/coreml_supported_mlprogram_ops.md
		// (microsoft/onnxruntime @04f568d). The page spells ArgMax "Argmax".
		source: "onnxruntime tools/ci_build/github/apple/coreml_supported_mlprogram_ops.md @04f568d (CoreML EP docs, ML Program)",
		ops: ops("Add ArgMax Cast Clip Concat Cos Ceil Div Elu Erf Exp Gelu GlobalAveragePool GlobalMaxPool GroupNormalization HardSigmoid Identity InstanceNormalization LayerNormalization LeakyRelu Max Mul PRelu ReduceSum ReduceMean ReduceMax Relu Reshape Round Shape Sin Softplus Sub Sigmoid Softmax Sqrt Squeeze Tanh Transpose Unsqueeze com.microsoft:QuickGelu com.microsoft:FusedConv",
			map[string]string{
				"AveragePool":   "only 2D pooling",
				"Conv":          "only 1D/2D; bias must be constant",
				"ConvTranspose": "weight and bias constant; no SAME_UPPER/SAME_LOWER, output_shape or output_padding",
				"DepthToSpace":  "mode CRD needs a fixed input shape",
				"GatherND":      "batch_dims must be 0",
				"Gemm":          "input B must be constant",
				"GridSample":    "4D input, mode linear or zeros",
				"MatMul":        "only transA == 0, alpha == 1.0, beta == 1.0",
				"MaxPool":       "only 2D pooling",
				"Pow":           "both inputs fp32",
				"Range":         "MLProgram only; int32/fp16/fp32",
				"Reciprocal":    "adds an epsilon (1e-4) ONNX does not have",
				"Resize":        "many mode combinations unsupported (resize_op_builder.cc)",
				"Slice":         "starts/ends/axes/steps must be constant initializers",
				"Split":         "splits must be constant",
				"Tile":          "input rank up to 5",
			}),
	},
	{
		provider: "WebNNExecutionProvider",
		// js/web/docs/webnn-operators.md (microsoft/onnxruntime @1aecb41), linked from
		// https://onnxruntime.ai/docs/execution-providers/WebNN-ExecutionProvider.html.
		source: "onnxruntime js/web/docs/webnn-operators.md @1aecb41",
		ops: ops("Abs Add And ArgMax ArgMin BatchNormalization Cast Ceil Clip Concat Conv ConvTranspose Cos CumSum Div DequantizeLinear Dropout Einsum Elu Equal Erf Exp Expand Flatten Floor Gather GatherElements GatherND Gelu Gemm GlobalAveragePool GlobalMaxPool GlobalLpPool Greater GreaterOrEqual GRU HardSigmoid HardSwish Identity InstanceNormalization LayerNormalization LeakyRelu Less LessOrEqual Log LpPool LRN LSTM MatMul Max MaxPool Min Mul Neg Not Or Pad Pow PRelu QuantizeLinear Reciprocal ReduceL1 ReduceL2 ReduceLogSum ReduceLogSumExp ReduceMax ReduceMean ReduceMin ReduceProd ReduceSum ReduceSumSquare Relu Reshape Resize ScatterElements ScatterND Shape SimplifiedLayerNormalization Sigmoid Sign Softplus Softsign Sin Slice Softmax Split Sqrt Squeeze Sub Tan Tanh Tile Transpose Trilu Unsqueeze Where Xor com.microsoft:GroupQueryAttention com.microsoft:MatMulNBits com.microsoft:RotaryEmbedding com.microsoft:SkipSimplifiedLayerNormalization",
			map[string]string{
				"AveragePool": "4-D input, 2-D kernel_shape",
				"Expand":      "shape input must be constant",
				"Reshape":     "shape input must be constant; no 0 in shape",
				"Resize":      "4-D input, linear/nearest, constant scales/sizes",
				"Slice":       "starts/ends/axes/steps must be constant",
				"CumSum":      "axis must be constant",
				"Tile":        "repeats must be constant",
				"ReduceMean":  "axes must be constant",
				"ReduceSum":   "axes must be constant",
				"Squeeze":     "axes must be constant",
				"Split":       "split must be constant",
			}),
	},
	{
		provider: "JsExecutionProvider",
		// WebGPU in onnxruntime-web (JSEP, what hwtest's webgpu target runs via
		// ort.min.js): js/web/docs/webgpu-operators.md (microsoft/onnxruntime @51f6177).
		source: "onnxruntime js/web/docs/webgpu-operators.md @51f6177 (JSEP)",
		ops: ops("Abs Acos Acosh Add ArgMax ArgMin Asin Asinh Atan Atanh AveragePool BatchNormalization Cast Ceil Clip Concat Conv ConvTranspose Cos Cosh Div Einsum Elu Equal Erf Exp Expand Flatten Floor Gather GatherElements Gemm GlobalAveragePool GlobalMaxPool Greater GreaterOrEqual If InstanceNormalization LayerNormalization LeakyRelu Less LessOrEqual Log MatMul MaxPool Mul Neg Not Pad Pow Range Reciprocal ReduceL1 ReduceL2 ReduceLogSum ReduceLogSumExp ReduceMax ReduceMean ReduceMin ReduceProd ReduceSum ReduceSumSquare Relu Reshape Resize Shape Sigmoid Sin Sinh Slice Softmax Split Sqrt Squeeze Sub Tan Tanh ThresholdedRelu Tile Transpose Unsqueeze Where com.microsoft:BiasAdd com.microsoft:BiasSplitGelu com.microsoft:FusedConv com.microsoft:Gelu com.microsoft:SkipLayerNormalization",
			map[string]string{
				"Conv":          "no 3-D conv",
				"ConvTranspose": "no 3-D ConvTranspose",
				"Reshape":       "no GPU kernel (runs on CPU, cheap)",
				"Shape":         "no GPU kernel (runs on CPU, cheap)",
				"Resize":        "align_corners not supported with downsampling",
			}),
	},
	{
		provider: "OpenVINOExecutionProvider",
		// "Support Coverage: ONNX Layers supported using OpenVINO" (CPU column) of
		// https://onnxruntime.ai/docs/execution-providers/OpenVINO-ExecutionProvider.html
		// (docs/execution-providers/OpenVINO-ExecutionProvider.md @2f66a50). GatherElements
		// is listed as No there; LayerNormalization is not listed (ORT's graph optimiser
		// may have decomposed it for this table's models).
		source: "onnxruntime docs/execution-providers/OpenVINO-ExecutionProvider.md @2f66a50 (Support Coverage, CPU)",
		ops:    ops("Abs Acos Acosh Add And ArgMax ArgMin Asin Asinh Atan Atanh AveragePool BatchNormalization BitShift Ceil Celu Cast Clip Concat Constant ConstantOfShape Conv ConvInteger ConvTranspose Cos Cosh CumSum DepthToSpace DequantizeLinear Div Dropout Einsum Elu Equal Erf Exp Expand EyeLike Flatten Floor Gather GatherND Gemm GlobalAveragePool GlobalLpPool GlobalMaxPool Greater GreaterOrEqual GridSample Hardmax HardSigmoid Identity If ImageScaler InstanceNormalization LeakyRelu Less LessOrEqual Log LogSoftmax Loop LRN LSTM MatMul MatMulInteger Max MaxPool Mean MeanVarianceNormalization Min Mod Mul Neg NonMaxSuppression NonZero Not OneHot Or Pad Pow PRelu QuantizeLinear QLinearMatMul Range Reciprocal ReduceL1 ReduceL2 ReduceLogSum ReduceLogSumExp ReduceMax ReduceMean ReduceMin ReduceProd ReduceSum ReduceSumSquare Relu Reshape Resize ReverseSequence RoiAlign Round Scatter ScatterElements ScatterND Selu Shape Shrink Sigmoid Sign Sin Sinh Size Slice Softmax Softplus Softsign SpaceToDepth Split Sqrt Squeeze Sub Sum Tan Tanh ThresholdedRelu Tile TopK Transpose Unsqueeze Upsample Where Xor", nil),
	},
	{
		provider: "QNNExecutionProvider",
		// The QNN EP page (https://onnxruntime.ai/docs/execution-providers/QNN-ExecutionProvider.html)
		// has no operator table; the EP's own op builder registrations are the list:
		// onnxruntime/core/providers/qnn/builder/op_builder_factory.cc @7f44b08.
		// Newer releases register more (e.g. Expand, Erf): conservative.
		source: "onnxruntime onnxruntime/core/providers/qnn/builder/op_builder_factory.cc @7f44b08 (no table in the QNN EP docs)",
		ops:    ops("Add Asin Atan Mul Abs And Ceil Cos Sign Div Equal Exp Floor Greater GreaterOrEqual LeakyRelu Less LessOrEqual Log Max Min Neg Not Or Pow PRelu Relu Gelu Elu Round Where Sigmoid Sin Softmax Sqrt Sub Tanh Transpose LogSoftmax MatMul Concat QuantizeLinear DequantizeLinear HardSwish Cast ReduceMax ReduceMean ReduceMin ReduceProd ReduceSum Conv ConvTranspose GlobalAveragePool AveragePool MaxPool Reshape Flatten Squeeze Unsqueeze Gemm Gather ArgMax ArgMin Clip Slice Split Resize TopK Tile InstanceNormalization BatchNormalization LayerNormalization LRN", nil),
	},
	{
		provider: "DmlExecutionProvider",
		// "Operators implemented by DmlExecutionProvider" in docs/OperatorKernels.md
		// (microsoft/onnxruntime @8f06330), linked from
		// https://onnxruntime.ai/docs/reference/operators/OperatorKernels.html.
		source: "onnxruntime docs/OperatorKernels.md @8f06330 (DmlExecutionProvider)",
		ops: ops("Abs Acos Acosh Add Affine And ArgMax ArgMin Asin Asinh Atan Atanh AveragePool BatchNormalization BitShift BitwiseAnd BitwiseNot BitwiseOr BitwiseXor Cast CastLike Ceil Celu Clip Concat ConcatFromSequence ConstantOfShape Conv ConvInteger ConvTranspose Cos Cosh Crop CumSum DFT DepthToSpace DequantizeLinear Div Dropout DynamicQuantizeLinear Einsum Elu Equal Erf Exp Expand EyeLike Flatten Floor GRU Gather GatherElements GatherND Gemm GlobalAveragePool GlobalLpPool GlobalMaxPool Greater GreaterOrEqual GridSample HardSigmoid Hardmax Identity If ImageScaler InstanceNormalization IsInf IsNaN LRN LSTM LayerNormalization LeakyRelu Less LessOrEqual Log LogSoftmax LpNormalization LpPool MatMul MatMulInteger Max MaxPool MaxRoiPool MaxUnpool Mean MeanVarianceNormalization MemcpyFromHost MemcpyToHost Min Mod Mul Neg NonZero Not OneHot OptionalGetElement OptionalHasElement Or PRelu Pad ParametricSoftplus Pow QLinearConv QLinearMatMul QuantizeLinear RNN Range Reciprocal ReduceL1 ReduceL2 ReduceLogSum ReduceLogSumExp ReduceMax ReduceMean ReduceMin ReduceProd ReduceSum ReduceSumSquare Relu Reshape Resize ReverseSequence RoiAlign Round STFT ScaledTanh Scatter ScatterElements ScatterND Selu SequenceAt SequenceConstruct SequenceEmpty SequenceErase SequenceInsert SequenceLength Shape Shrink Sigmoid Sign Sin Sinh Size Slice Softmax Softplus Softsign SpaceToDepth Split Sqrt Squeeze Sub Sum Tan Tanh ThresholdedRelu Tile TopK Transpose Trilu Unsqueeze Upsample Where Xor "+
			"com.microsoft:Attention com.microsoft:BiasAdd com.microsoft:BiasGelu com.microsoft:BiasSplitGelu com.microsoft:ConvTransposeWithDynamicPads com.microsoft:DequantizeLinear com.microsoft:EmbedLayerNormalization com.microsoft:FusedMatMul com.microsoft:FusedMatMulActivation com.microsoft:Gelu com.microsoft:GroupNorm com.microsoft:MultiHeadAttention com.microsoft:NhwcConv com.microsoft:QLinearAdd com.microsoft:QLinearSigmoid com.microsoft:QuantizeLinear com.microsoft:QuickGelu com.microsoft:RotaryEmbedding com.microsoft:SkipLayerNormalization", nil),
	},
	{
		provider: "TensorrtExecutionProvider",
		// The TensorRT EP page defers to onnx-tensorrt's operator matrix:
		// onnx/onnx-tensorrt docs/operators.md @6d0ab7b (the TensorRT 8.5 matrix; rows
		// marked Y). TensorRT 10 adds LayerNormalization and more: conservative. Nodes
		// TensorRT rejects go to the CUDA EP when it is registered, else the CPU.
		source: "onnx/onnx-tensorrt docs/operators.md @6d0ab7b (TensorRT 8.5 matrix)",
		ops: ops("Abs Acos Acosh Add And ArgMax ArgMin Asin Asinh Atan Atanh AveragePool BatchNormalization Cast Ceil Celu Clip Concat Constant ConstantOfShape Conv ConvTranspose Cos Cosh CumSum DepthToSpace DequantizeLinear Div Dropout Einsum Elu Equal Erf Exp Expand EyeLike Flatten Floor Gather GatherElements GatherND Gemm GlobalAveragePool GlobalLpPool GlobalMaxPool Greater GreaterOrEqual GridSample GRU HardSwish HardSigmoid Identity If ImageScaler InstanceNormalization IsNaN LeakyRelu Less LessOrEqual Log LogSoftmax Loop LRN LSTM LpNormalization LpPool MatMul Max MaxPool Mean MeanVarianceNormalization Min Mod Mul Neg NonMaxSuppression NonZero Not OneHot Or Pad ParametricSoftplus Pow PRelu QuantizeLinear RandomNormal RandomNormalLike RandomUniform RandomUniformLike Range Reciprocal ReduceL1 ReduceL2 ReduceLogSum ReduceLogSumExp ReduceMax ReduceMean ReduceMin ReduceProd ReduceSum ReduceSumSquare Relu Reshape Resize ReverseSequence RNN RoiAlign Round ScaledTanh Scan Scatter ScatterElements ScatterND Selu Shape Shrink Sigmoid Sign Sin Sinh Size Slice Softmax Softplus Softsign SpaceToDepth Split Sqrt Squeeze Sub Sum Tan Tanh ThresholdedRelu Tile TopK Transpose Trilu Unsqueeze Upsample Where Xor",
			map[string]string{
				"AveragePool":           "2D or 3D pooling only",
				"CumSum":                "axis must be an initializer",
				"DequantizeLinear":      "x_zero_point must be zero",
				"Einsum":                "no ellipsis, diagonal or broadcasting",
				"InstanceNormalization": "scale and B must be initializers; rank 3-5",
				"MaxPool":               "2D or 3D; no Indices output",
				"QuantizeLinear":        "y_zero_point must be 0",
				"Slice":                 "axes must be an initializer",
				"Squeeze":               "axes must be an initializer",
				"TopK":                  "K must be an initializer",
				"Unsqueeze":             "axes must be a constant",
				"ReverseSequence":       "no dynamic input shapes",
			}),
	},
}

// providerAliases maps what users type (target ids, short EP names) to EP names.
var providerAliases = map[string]string{
	"coreml": "CoreMLExecutionProvider", "webnn": "WebNNExecutionProvider",
	"webgpu": "JsExecutionProvider", "js": "JsExecutionProvider", "jsep": "JsExecutionProvider",
	"openvino": "OpenVINOExecutionProvider", "qnn": "QNNExecutionProvider",
	"directml": "DmlExecutionProvider", "dml": "DmlExecutionProvider",
	"tensorrt": "TensorrtExecutionProvider", "trt": "TensorrtExecutionProvider",
	"cpu": "CPUExecutionProvider", "wasm": "CPUExecutionProvider",
	"cuda": "CUDAExecutionProvider", "rocm": "MIGraphXExecutionProvider", "migraphx": "MIGraphXExecutionProvider",
}

// CanonicalProvider returns the EP name for a provider or target id ("coreml",
// "CoreMLExecutionProvider", "webgpu" → the JSEP table hwtest's browser target uses).
func CanonicalProvider(p string) string {
	// ONNX Runtime's native WebGPU EP is not JSEP: its full name is kept, not
	// aliased through the "webgpu" target id.
	if p == "WebGpuExecutionProvider" {
		return p
	}
	key := strings.ToLower(strings.TrimSuffix(strings.TrimSuffix(p, "ExecutionProvider"), "executionprovider"))
	if c, ok := providerAliases[key]; ok {
		return c
	}
	for _, t := range opTables {
		if strings.EqualFold(t.provider, p) {
			return t.provider
		}
	}
	return p
}

// Providers lists the EPs that have an operator table.
func Providers() []string {
	var out []string
	for _, t := range opTables {
		out = append(out, t.provider)
	}
	return out
}

// Predict says, from the model's operator counts (onnx.Inspect's Ops), whether the
// provider's documented table covers every operator.
func Predict(opCounts map[string]int, provider string) Prediction {
	ep := CanonicalProvider(provider)
	p := Prediction{Provider: ep}
	for _, n := range opCounts {
		p.Nodes += n
	}
	if ep == "CPUExecutionProvider" {
		p.Coverage = CoverageReference
		p.Source = "the CPU EP is the reference every other target is compared with"
		p.Supported = sortedKeys(opCounts)
		p.Verdict = "should run"
		return p
	}
	var table *opTable
	for i := range opTables {
		if opTables[i].provider == ep {
			table = &opTables[i]
		}
	}
	if table == nil {
		p.Coverage = CoverageUnknown
		p.Verdict = "unknown: no op table for EP"
		return p
	}
	p.Coverage, p.Source = CoverageDocumented, table.source
	for _, op := range sortedKeys(opCounts) {
		note, ok := table.ops[op]
		if !ok {
			note, ok = alwaysPlaced[op]
		}
		if !ok {
			p.Unsupported = append(p.Unsupported, op)
			p.FallbackNodes += opCounts[op]
			continue
		}
		p.Supported = append(p.Supported, op)
		if note != "" {
			if p.Conditions == nil {
				p.Conditions = map[string]string{}
			}
			p.Conditions[op] = note
		}
	}
	if len(p.Unsupported) == 0 {
		p.Verdict = "should run"
	} else {
		verb := "fall"
		if len(p.Unsupported) == 1 {
			verb = "falls"
		}
		p.Verdict = fmt.Sprintf("partial: %s %s back to CPU", plural(len(p.Unsupported), "operator"), verb)
	}
	return p
}

// String is the one-line summary `hwtest check` prints per EP.
func (p Prediction) String() string {
	s := fmt.Sprintf("%s: %s", p.Provider, p.Verdict)
	if len(p.Unsupported) > 0 {
		s += fmt.Sprintf(" (%s; %d of %d nodes)", strings.Join(p.Unsupported, ", "), p.FallbackNodes, p.Nodes)
	}
	if len(p.Conditions) > 0 {
		s += fmt.Sprintf("; %s with documented constraints", plural(len(p.Conditions), "supported operator"))
	}
	return s
}

func sortedKeys(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
