package runtime

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/hwtest/hwtest/onnx"
)

// Session is one ONNX Runtime session of a model on a target.
type Session struct {
	session *ort.DynamicAdvancedSession
	inputs  []InputSpec
	outputs []ort.InputOutputInfo
	// preset holds, per output, the shape Run allocates it with before the run,
	// or nil where ONNX Runtime allocates it (see newOutput for why some cannot be).
	preset  [][]int64
	timeout time.Duration
}

// RunTimeout bounds one inference; a hung run is terminated and reported as an
// error instead of stalling the suite. HWTEST_RUN_TIMEOUT overrides it; a value
// that is not a positive duration is an error, not silently the default.
func RunTimeout() (time.Duration, error) {
	s := os.Getenv("HWTEST_RUN_TIMEOUT")
	if s == "" {
		return 60 * time.Second, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("HWTEST_RUN_TIMEOUT=%q: want a positive duration such as 30s or 2m", s)
	}
	return d, nil
}

// Threads is $HWTEST_THREADS, the intra-op thread count of each target's ONNX
// Runtime session; 0 (or unset) leaves ONNX Runtime's default, one thread per
// physical core. The CPU reference keeps the default: only the target is
// measured. Limiting a session to one thread is a real slowdown to show the
// history's regression detection on. A value that is not a count is an error.
func Threads() (int, error) {
	s := os.Getenv("HWTEST_THREADS")
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("HWTEST_THREADS=%q: want a thread count such as 1 or 4 (0: ONNX Runtime's default)", s)
	}
	return n, nil
}

// newSessionOptions builds the options for a target: its execution provider with its
// options, and, for accelerators, CPU fallback disabled so a model the EP cannot
// take whole fails at creation instead of silently running on the CPU.
//
// reference marks the CPU reference's own session: graph optimisations off, so the
// cpu target (optimisations on, as users run it) is compared with the model as
// written, and its cell tests ONNX Runtime's fusions, not itself.
func newSessionOptions(t Target, strict, reference bool) (*ort.SessionOptions, error) {
	threads, err := Threads()
	if err != nil {
		return nil, err
	}
	opts, err := ort.NewSessionOptions()
	if err != nil {
		return nil, err
	}
	if err := appendProvider(opts, t); err != nil {
		opts.Destroy()
		return nil, err
	}
	if reference {
		if err := opts.SetGraphOptimizationLevel(ort.GraphOptimizationLevelDisableAll); err != nil {
			opts.Destroy()
			return nil, err
		}
	} else if threads > 0 {
		if err := opts.SetIntraOpNumThreads(threads); err != nil {
			opts.Destroy()
			return nil, err
		}
	}
	if strict && t.Accelerator() {
		if err := opts.AddSessionConfigEntry("session.disable_cpu_ep_fallback", "1"); err != nil {
			opts.Destroy()
			return nil, err
		}
	}
	return opts, nil
}

// appendProvider appends the target's execution provider. Its error is the exact
// reason ONNX Runtime gives when the EP's library or device is missing.
func appendProvider(opts *ort.SessionOptions, t Target) error {
	switch t.Provider {
	case CPUProvider:
		return nil
	case "CUDAExecutionProvider":
		c, err := ort.NewCUDAProviderOptions()
		if err != nil {
			return err
		}
		defer c.Destroy()
		if err := c.Update(t.Options); err != nil {
			return err
		}
		return opts.AppendExecutionProviderCUDA(c)
	case "TensorrtExecutionProvider":
		c, err := ort.NewTensorRTProviderOptions()
		if err != nil {
			return err
		}
		defer c.Destroy()
		if err := c.Update(t.Options); err != nil {
			return err
		}
		return opts.AppendExecutionProviderTensorRT(c)
	case "CoreMLExecutionProvider":
		return opts.AppendExecutionProviderCoreMLV2(t.Options)
	case "DmlExecutionProvider":
		device := 0
		if s, ok := t.Options["device_id"]; ok {
			d, err := strconv.Atoi(s)
			if err != nil {
				return fmt.Errorf("DirectML option device_id %q is not an integer", s)
			}
			device = d
		}
		return opts.AppendExecutionProviderDirectML(device)
	case "OpenVINOExecutionProvider":
		return opts.AppendExecutionProviderOpenVINO(t.Options)
	default:
		// QNN, XNNPACK, WebGPU, MIGraphX, ... go through the generic entry point,
		// which takes the full names ONNX Runtime lists ('QNNExecutionProvider',
		// 'WebGpuExecutionProvider'); trimming the suffix would give 'WebGpu', which
		// it rejects (it wants 'WebGPU').
		return opts.AppendExecutionProvider(t.Provider, t.Options)
	}
}

// ProviderLibraryHint names the provider plugin library ONNX Runtime looks for
// next to libonnxruntime, so "Failed to load shared library" says which one.
func ProviderLibraryHint(libPath string, t Target) string {
	plugin := map[string]string{
		"CUDAExecutionProvider":     "libonnxruntime_providers_cuda.so",
		"TensorrtExecutionProvider": "libonnxruntime_providers_tensorrt.so",
		"OpenVINOExecutionProvider": "libonnxruntime_providers_openvino.so",
		"MIGraphXExecutionProvider": "libonnxruntime_providers_migraphx.so",
		"ROCMExecutionProvider":     "libonnxruntime_providers_rocm.so",
	}[t.Provider]
	if plugin == "" {
		return ""
	}
	dir := filepath.Dir(libPath)
	var missing []string
	for _, lib := range []string{"libonnxruntime_providers_shared.so", plugin} {
		if !fileExists(filepath.Join(dir, lib)) {
			missing = append(missing, lib)
		}
	}
	if len(missing) == 0 {
		return ""
	}
	return fmt.Sprintf("%s not found in %s", strings.Join(missing, " and "), dir)
}

// OpenSession creates a session of the model file on the target.
func OpenSession(path string, t Target, strict bool) (*Session, error) {
	return openSession(path, t, strict, false, "")
}

// openSession optionally profiles the session: ONNX Runtime writes
// <profilePrefix>_<time>.json when the session is destroyed.
func openSession(path string, t Target, strict, reference bool, profilePrefix string) (*Session, error) {
	io, err := modelIOOf(path)
	if err != nil {
		return nil, err
	}
	opts, err := newSessionOptions(t, strict, reference)
	if err != nil {
		return nil, err
	}
	defer opts.Destroy()
	if profilePrefix != "" {
		if err := opts.EnableProfiling(profilePrefix); err != nil {
			return nil, err
		}
	}
	names := func(infos []ort.InputOutputInfo) []string {
		out := make([]string, len(infos))
		for i, info := range infos {
			out[i] = info.Name
		}
		return out
	}
	inputs := make([]ort.InputOutputInfo, len(io.inputs))
	for i, in := range io.inputs {
		inputs[i] = in.InputOutputInfo
	}
	timeout, err := RunTimeout()
	if err != nil {
		return nil, err
	}
	s, err := ort.NewDynamicAdvancedSession(path, names(inputs), names(io.outputs), opts)
	if err != nil {
		return nil, err
	}
	return &Session{session: s, inputs: io.inputs, outputs: io.outputs, preset: presetShapes(io.outputs, io.declared, len(inputs) == 0), timeout: timeout}, nil
}

// presetShapes picks the outputs Run allocates itself, with their shapes:
// scalars, which only the model file tells apart from an output of unknown rank
// (ONNX Runtime reports both with no dims), and float16/bfloat16 outputs of a
// fixed shape. An output the file names without a type (explain's exposed
// intermediates, onnx.Expose) has what ONNX Runtime inferred: with no dims it
// is taken for a scalar, as it nearly always is; one of unknown rank fails the run
// ("Shape mismatch attempting to re-use buffer"). A model without inputs gets every output it can, because its
// runs go through an IoBinding, which needs them. Everything else is left to
// ONNX Runtime, as before: no copy, no cost.
func presetShapes(outputs []ort.InputOutputInfo, declared []onnx.ValueInfo, noInputs bool) [][]int64 {
	decl := map[string]onnx.ValueInfo{}
	for _, d := range declared {
		decl[d.Name] = d
	}
	preset := make([][]int64, len(outputs))
	for i, o := range outputs {
		if o.OrtValueType != ort.ONNXTypeTensor {
			continue
		}
		d, ok := decl[o.Name]
		scalar := ok && d.Kind == "" && !d.Unranked && len(d.Dims) == 0 && len(o.Dimensions) == 0
		fixed := len(o.Dimensions) > 0 && !slices.ContainsFunc(o.Dimensions, func(d int64) bool { return d < 0 })
		half := o.DataType == ort.TensorElementDataTypeFloat16 || o.DataType == ort.TensorElementDataTypeBFloat16
		switch {
		case scalar:
			preset[i] = []int64{}
		case fixed && (half || noInputs):
			preset[i] = slices.Clone([]int64(o.Dimensions))
		}
	}
	return preset
}

// modelIO is a model file's inputs and outputs as ONNX Runtime names them.
type modelIO struct {
	inputs  []InputSpec
	outputs []ort.InputOutputInfo
	// declared is the model file's graph outputs as written, which say what
	// ONNX Runtime's info cannot: whether an output with no dims is a scalar.
	declared []onnx.ValueInfo
}

// modelIOs caches modelIO per file (path, size, modification time). Reading it
// costs a throwaway ONNX Runtime session and a Go parse of the whole file: once
// per file, at the CPU reference, not again inside the target's session
// creation, where it would be counted in the load time and the memory peak (with
// 100 MiB of weights, another full copy of them).
var modelIOs sync.Map

func modelIOOf(path string) (modelIO, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return modelIO{}, fmt.Errorf("reading %s: %w", path, err)
	}
	key := fmt.Sprintf("%s\x00%d\x00%d", path, fi.Size(), fi.ModTime().UnixNano())
	if v, ok := modelIOs.Load(key); ok {
		return v.(modelIO), nil
	}
	inputs, outputs, err := ort.GetInputOutputInfo(path)
	if err != nil {
		return modelIO{}, fmt.Errorf("reading %s: %w", path, err)
	}
	sum, err := onnx.InspectFile(path)
	if err != nil {
		return modelIO{}, err
	}
	io := modelIO{inputs: inputSpecs(sum, inputs), outputs: outputs, declared: sum.Outputs}
	modelIOs.Store(key, io)
	return io, nil
}

// Inputs is the model's input metadata.
func (s *Session) Inputs() []InputSpec { return s.inputs }

// inputSpecs adds the symbolic dim names read from the model file.
func inputSpecs(sum *onnx.Summary, infos []ort.InputOutputInfo) []InputSpec {
	params := map[string][]string{}
	for _, in := range sum.Inputs {
		for _, d := range in.Dims {
			params[in.Name] = append(params[in.Name], d.Param)
		}
	}
	specs := make([]InputSpec, len(infos))
	for i, info := range infos {
		specs[i] = InputSpec{InputOutputInfo: info, Params: params[info.Name]}
	}
	return specs
}

// Close releases the session.
func (s *Session) Close() error {
	if s == nil || s.session == nil {
		return nil
	}
	err := s.session.Destroy()
	s.session = nil
	return err
}

// ErrRunTimeout is returned when an inference outlives RunTimeout.
var ErrRunTimeout = errors.New("inference timed out")

// Run runs one inference and reads every output back.
func (s *Session) Run(inputs []Tensor) ([]Tensor, error) {
	values := make([]ort.Value, len(inputs))
	defer func() {
		for _, v := range values {
			if v != nil {
				v.Destroy()
			}
		}
	}()
	for i, in := range inputs {
		v, err := toValue(in)
		if err != nil {
			return nil, tensorError{err}
		}
		values[i] = v
	}
	outs, err := s.newOutputs()
	defer destroyAll(outs)
	if err != nil {
		return nil, err
	}
	if err := s.runWithTimeout(values, outs); err != nil {
		return nil, withFed(err, FedText(inputs))
	}
	result := make([]Tensor, len(outs))
	for i, v := range outs {
		t, err := fromValue(s.outputs[i].Name, v)
		if err != nil {
			return nil, tensorError{err}
		}
		result[i] = t
	}
	return result, nil
}

// newOutputs allocates the outputs presetShapes chose; the others stay nil for
// ONNX Runtime to allocate.
func (s *Session) newOutputs() ([]ort.Value, error) {
	outs := make([]ort.Value, len(s.outputs))
	for i, shape := range s.preset {
		if shape == nil {
			continue
		}
		v, err := newOutput(s.outputs[i].DataType, shape)
		if err != nil {
			return outs, tensorError{fmt.Errorf("output %q: %w", s.outputs[i].Name, err)}
		}
		outs[i] = v
	}
	return outs, nil
}

// destroyAll releases values. One that onnxruntime_go failed to convert is a
// nil pointer inside a non-nil Value (its Run stores the failed result), whose
// Destroy would crash.
func destroyAll(vs []ort.Value) {
	for _, v := range vs {
		if v != nil && !reflect.ValueOf(v).IsNil() {
			v.Destroy()
		}
	}
}

// infer runs one inference into outs, filling the nil ones with what ONNX Runtime
// allocated. A model without inputs runs through an IoBinding: onnxruntime_go's
// Run indexes its first input and would panic. That path takes no run options
// (no timeout), and every output must have been allocated.
func (s *Session) infer(in, outs []ort.Value, ro *ort.RunOptions) error {
	if len(in) > 0 {
		err := s.session.RunWithOptions(in, outs, ro)
		// The run succeeded and the binding could not read an output back.
		if err != nil && strings.HasPrefix(err.Error(), "Error creating tensor from ort") {
			return tensorError{err}
		}
		return err
	}
	b, err := s.session.CreateIoBinding()
	if err != nil {
		return err
	}
	defer b.Destroy()
	for i, v := range outs {
		if v == nil {
			return tensorError{fmt.Errorf("output %q (dims %v): a model without inputs runs only when every output's shape is fixed, and this one's is not", s.outputs[i].Name, s.outputs[i].Dimensions)}
		}
		if err := b.BindOutput(s.outputs[i].Name, v); err != nil {
			return err
		}
	}
	return s.session.RunWithBinding(b)
}

// Bound is a session with its inputs already converted to ONNX Runtime tensors, so
// a measured run times the inference alone, not hwtest's conversions.
type Bound struct {
	s      *Session
	values []ort.Value
	opts   *ort.RunOptions
	fed    string // the bound inputs, for errors (FedText)
}

// Bind converts inputs once for repeated timed runs.
func (s *Session) Bind(inputs []Tensor) (TimedRun, error) {
	b := &Bound{s: s, fed: FedText(inputs)}
	for _, in := range inputs {
		v, err := toValue(in)
		if err != nil {
			b.Close()
			return nil, tensorError{err}
		}
		b.values = append(b.values, v)
	}
	opts, err := ort.NewRunOptions()
	if err != nil {
		b.Close()
		return nil, err
	}
	b.opts = opts
	return b, nil
}

// Run runs one inference and returns how long ONNX Runtime took, outputs
// allocated and released included (they are part of every real inference).
func (b *Bound) Run() (time.Duration, error) {
	// A timer that fired just after the previous run ended left the flag set;
	// without this every later run would be refused.
	if err := b.opts.UnsetTerminate(); err != nil {
		return 0, err
	}
	outs, err := b.s.newOutputs()
	defer destroyAll(outs)
	if err != nil {
		return 0, err
	}
	timer := time.AfterFunc(b.s.timeout, func() { b.opts.Terminate() })
	start := time.Now()
	err = b.s.infer(b.values, outs, b.opts)
	took := time.Since(start)
	stopped := timer.Stop()
	if err != nil && !stopped {
		err = fmt.Errorf("%w after %v (HWTEST_RUN_TIMEOUT): %v", ErrRunTimeout, took.Round(time.Millisecond), err)
	}
	return took, withFed(err, b.fed)
}

// Close releases the bound tensors.
func (b *Bound) Close() {
	for _, v := range b.values {
		v.Destroy()
	}
	if b.opts != nil {
		b.opts.Destroy()
	}
}

// runWithTimeout asks ONNX Runtime to terminate the run when it outlives the timeout,
// which it does between nodes; a run stuck inside one native kernel still returns
// only when that kernel does, which is why `hwtest run` adds a process timeout.
func (s *Session) runWithTimeout(in, out []ort.Value) error {
	ro, err := ort.NewRunOptions()
	if err != nil {
		return err
	}
	defer ro.Destroy()
	timer := time.AfterFunc(s.timeout, func() { ro.Terminate() })
	start := time.Now()
	err = s.infer(in, out, ro)
	if !timer.Stop() && err != nil {
		return fmt.Errorf("%w after %v (HWTEST_RUN_TIMEOUT): %v", ErrRunTimeout, time.Since(start).Round(time.Millisecond), err)
	}
	return err
}
