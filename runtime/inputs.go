package runtime

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"sort"
	"strings"

	"github.com/hwtest/hwtest/result"
	ort "github.com/yalue/onnxruntime_go"
)

// Tensor is a host-side tensor: the synthesised inputs and the outputs read back,
// held as float64 whatever the element type so every comparison is one code path.
type Tensor struct {
	Name  string
	Type  ort.TensorElementDataType
	Shape []int64
	Data  []float64
	// Strings holds a string tensor's elements, in place of Data (ONNX's own
	// conformance cases have some; the models hwtest synthesises inputs for none).
	Strings []string
}

// Elements is the product of the shape.
func (t Tensor) Elements() int64 { return elements(t.Shape) }

func elements(shape []int64) int64 {
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	return n
}

// maxInputBytes bounds one synthesised input in its own element type. hwtest holds
// it twice more (as float64 for comparisons, and converted for ONNX Runtime), so an
// input at the limit costs about 3 GiB as float32; an image batch or an hour of
// audio is a few hundred MB. Past it, dims are a mistake, and allocating them
// would end the suite in a Go fatal out-of-memory that loses the reason.
const maxInputBytes = 1 << 30

// elementTypes are the element types input synthesis supports, named as in ONNX,
// with their size in bytes.
var elementTypes = map[ort.TensorElementDataType]struct {
	name  string
	bytes int64
}{
	ort.TensorElementDataTypeFloat:  {"float32", 4},
	ort.TensorElementDataTypeDouble: {"float64", 8},
	ort.TensorElementDataTypeInt64:  {"int64", 8},
	ort.TensorElementDataTypeInt32:  {"int32", 4},
	ort.TensorElementDataTypeInt8:   {"int8", 1},
	ort.TensorElementDataTypeUint8:  {"uint8", 1},
	ort.TensorElementDataTypeBool:   {"bool", 1},
}

// checkInputBudget refuses an input of shape whose tensor would take more than
// maxInputBytes, before anything is allocated. An unsupported type passes: input
// synthesis refuses it with its own message.
func checkInputBudget(info ort.InputOutputInfo, shape []int64) error {
	et, ok := elementTypes[info.DataType]
	if !ok {
		return nil
	}
	for _, d := range shape {
		if d < 0 {
			return fmt.Errorf("input %q: dims %v: a dim is negative: set its dims in models.yaml", info.Name, shape)
		}
	}
	n, fits := checkedElements(shape)
	if !fits {
		return fmt.Errorf("input %q: dims %v hold more than %d elements: set smaller dims for it in models.yaml", info.Name, shape, int64(math.MaxInt64))
	}
	if n > maxInputBytes/et.bytes {
		return fmt.Errorf("input %q: dims %v hold %d %s elements, %d bytes (%s); hwtest synthesises inputs of at most %d bytes (%s) each, and holds each twice more (as float64, and converted for ONNX Runtime): set smaller dims for it in models.yaml",
			info.Name, shape, n, et.name, n*et.bytes, result.HumanBytes(n*et.bytes), int64(maxInputBytes), result.HumanBytes(maxInputBytes))
	}
	return nil
}

// checkedElements is the product of non-negative dims; false when it overflows int64.
func checkedElements(shape []int64) (int64, bool) {
	n := int64(1)
	for _, d := range shape {
		if d != 0 && n > math.MaxInt64/d {
			return 0, false
		}
		n *= d
	}
	return n, true
}

// Default sizes for dynamic dims the catalog leaves open: batch 1, everything else 8
// (long enough for attention and scans to mix positions, small enough to be quick).
const (
	defaultBatch = 1
	defaultDim   = 8
)

// InputSpec is one model input: ONNX Runtime's metadata plus the symbolic dim
// names from the model file (ONNX Runtime's Go binding reports those as -1 only).
type InputSpec struct {
	ort.InputOutputInfo
	Params []string // per axis: the symbolic name, "" for fixed or anonymous dims
}

// SynthesizeInputs builds one tensor per model input from the model's metadata and
// the catalog's overrides, from a seed derived from the model id and input name, so
// every target sees exactly the same inputs. Random values never come out all zero.
//
// Dynamic dims are bound by name: an override's dims fix its symbols ("batch",
// "seq") for every input that shares them, so an attention mask follows the token
// ids. Unbound symbols get batch 1 on axis 0, else 8.
func SynthesizeInputs(modelID string, specs []InputSpec, overrides map[string]Input) ([]Tensor, error) {
	return buildInputs(modelID, specs, overrides, nil, nil)
}

// buildInputs is SynthesizeInputs with the inputs models.yaml gives from files
// already read (files, by input name; errs, the files that could not be): a file's
// shape binds the symbols it covers, as dims do, and its values are fed as they are.
func buildInputs(modelID string, specs []InputSpec, overrides map[string]Input, files map[string]Tensor, errs []string) ([]Tensor, error) {
	known := map[string]bool{}
	symbols := map[string]int64{}
	shapes := make([][]int64, len(specs))
	// Overridden inputs and inputs from files first: they bind the symbols the others follow.
	for pass := 0; pass < 2; pass++ {
		for i, spec := range specs {
			ov, has := overrides[spec.Name]
			file, fromFile := files[spec.Name]
			if (pass == 0) != (fromFile || has && ov.Dims != nil) || has && ov.File != "" && !fromFile {
				continue // an unreadable file was reported already
			}
			var shape []int64
			var err error
			if fromFile {
				shape, err = bindFileShape(spec, ov.File, file.Shape, symbols)
			} else {
				shape, err = resolveShape(spec, ov, symbols)
			}
			if err != nil {
				errs = append(errs, err.Error())
				continue
			}
			shapes[i] = shape
		}
	}
	var out []Tensor
	for i, spec := range specs {
		known[spec.Name] = true
		if shapes[i] == nil {
			continue
		}
		if file, ok := files[spec.Name]; ok {
			out = append(out, file)
			continue
		}
		if err := checkInputBudget(spec.InputOutputInfo, shapes[i]); err != nil {
			errs = append(errs, err.Error())
			continue
		}
		data, err := synthesizeValues(modelID, spec.InputOutputInfo, overrides[spec.Name], elements(shapes[i]))
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		out = append(out, Tensor{Name: spec.Name, Type: spec.DataType, Shape: shapes[i], Data: data})
	}
	for _, name := range sortedKeys(overrides) {
		if !known[name] {
			errs = append(errs, fmt.Sprintf("input override %q: the model has no such input (its inputs: %s)", name, inputNames(specs)))
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("model %q: %s", modelID, strings.Join(errs, "; "))
	}
	return out, nil
}

// bindFileShape binds the symbolic dims a file's shape covers; tensorfile.Fit
// checked its rank and fixed dims.
func bindFileShape(spec InputSpec, file string, shape []int64, symbols map[string]int64) ([]int64, error) {
	for i, d := range shape {
		if i >= len(spec.Params) || spec.Params[i] == "" {
			continue
		}
		p := spec.Params[i]
		if bound, ok := symbols[p]; ok && bound != d {
			return nil, fmt.Errorf("input %q: %s has shape %v, so dim %d (%q) is %d, but another input set %q to %d: make the files and dims agree", spec.Name, file, shape, i, p, d, p, bound)
		}
		symbols[p] = d
	}
	return shape, nil
}

func resolveShape(spec InputSpec, ov Input, symbols map[string]int64) ([]int64, error) {
	meta := []int64(spec.Dimensions)
	param := func(i int) string {
		if i < len(spec.Params) {
			return spec.Params[i]
		}
		return ""
	}
	if ov.Dims != nil {
		if len(ov.Dims) != len(meta) {
			return nil, fmt.Errorf("input override %q: dims %v have rank %d, the model's input has rank %d (shape %v)", spec.Name, ov.Dims, len(ov.Dims), len(meta), meta)
		}
		for i, d := range ov.Dims {
			if meta[i] >= 0 && meta[i] != d {
				return nil, fmt.Errorf("input override %q: dim %d is %d, the model fixes it at %d (shape %v)", spec.Name, i, d, meta[i], meta)
			}
			if p := param(i); p != "" {
				if bound, ok := symbols[p]; ok && bound != d {
					return nil, fmt.Errorf("input override %q: dim %d (%q) is %d, another override set %q to %d", spec.Name, i, p, d, p, bound)
				}
				symbols[p] = d
			}
		}
		return append([]int64(nil), ov.Dims...), nil
	}
	shape := make([]int64, len(meta))
	for i, d := range meta {
		p := param(i)
		switch bound, ok := symbols[p]; {
		case d >= 0:
			shape[i] = d
		case p != "" && ok:
			shape[i] = bound
		case i == 0:
			shape[i] = defaultBatch
		default:
			shape[i] = defaultDim
		}
		if d < 0 && p != "" {
			symbols[p] = shape[i]
		}
	}
	if ov.Value != nil && len(ov.Value) > 1 && int64(len(ov.Value)) != elements(shape) {
		return nil, fmt.Errorf("input override %q: %d values for shape %v (%d elements): give one value or dims", spec.Name, len(ov.Value), shape, elements(shape))
	}
	return shape, nil
}

func synthesizeValues(modelID string, info ort.InputOutputInfo, ov Input, n int64) ([]float64, error) {
	if !supportedType(info.DataType) {
		return nil, fmt.Errorf("input %q: element type %v is not supported by hwtest's input synthesis", info.Name, info.DataType)
	}
	data := make([]float64, n)
	if ov.Value != nil {
		if len(ov.Value) != 1 && int64(len(ov.Value)) != n {
			return nil, fmt.Errorf("input override %q: %d values for %d elements: give one value or one per element", info.Name, len(ov.Value), n)
		}
		for i := range data {
			data[i] = ov.Value[i%len(ov.Value)]
		}
		return data, nil
	}
	lo, hi := defaultRange(info.DataType)
	if ov.Range != nil {
		if len(ov.Range) != 2 || !(ov.Range[0] < ov.Range[1]) {
			return nil, fmt.Errorf("input override %q: range %v: want [low, high] with low < high", info.Name, ov.Range)
		}
		lo, hi = ov.Range[0], ov.Range[1]
	}
	rng := rand.New(rand.NewPCG(seed(modelID, info.Name), 0x68777465737421)) // "hwtest!"
	integer := !isFloat(info.DataType)
	for i := range data {
		if integer {
			// [lo, hi) as integers; an empty integer range means the single value lo.
			span := int64(hi) - int64(lo)
			if span <= 0 {
				data[i] = lo
			} else {
				data[i] = float64(int64(lo) + rng.Int64N(span))
			}
			continue
		}
		data[i] = lo + (hi-lo)*rng.Float64()
	}
	if allZero(data) {
		return nil, fmt.Errorf("input %q: synthesised values are all zero (range %v..%v): widen its range in models.yaml", info.Name, lo, hi)
	}
	return data, nil
}

// defaultRange is where random values come from without an override: [-1, 1) for
// floats (audio samples, normalised pixels), [1, 100) for integers (token ids in any
// vocabulary, never the padding id 0).
func defaultRange(t ort.TensorElementDataType) (float64, float64) {
	switch {
	case isFloat(t):
		return -1, 1
	case t == ort.TensorElementDataTypeBool:
		return 1, 2
	default:
		return 1, 100
	}
}

func seed(modelID, input string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(modelID))
	h.Write([]byte{0})
	h.Write([]byte(input))
	return h.Sum64()
}

func allZero(xs []float64) bool {
	for _, x := range xs {
		if x != 0 {
			return false
		}
	}
	return len(xs) > 0
}

func inputNames(specs []InputSpec) string {
	names := make([]string, len(specs))
	for i, in := range specs {
		names[i] = in.Name
	}
	return strings.Join(names, ", ")
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
