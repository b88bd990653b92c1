package runtime

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/hwtest/hwtest/result"
	"github.com/hwtest/hwtest/shapes"
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
// Shapes follow package shapes: an override's dims fix its symbols ("batch", "seq")
// for every input that shares them, so an attention mask follows the token ids. A
// dim nothing binds is an error naming the fix, as `hwtest generate` reports it
// (the model that runs may not be the one generate saw: a real export fetched
// later, in place of its fixture).
func SynthesizeInputs(modelID string, specs []InputSpec, overrides map[string]Input) ([]Tensor, error) {
	return buildInputs(modelID, specs, overrides, nil, nil)
}

// buildInputs is SynthesizeInputs with the inputs models.yaml gives from files
// already read (files, by input name; errs, the files that could not be): a file's
// shape binds the symbols it covers, as dims do, and its values are fed as they are.
func buildInputs(modelID string, specs []InputSpec, overrides map[string]Input, files map[string]Tensor, errs []string) ([]Tensor, error) {
	ovs := ShapeOverrides(overrides)
	for name, f := range files {
		ovs[name] = shapes.Override{Dims: f.Shape, From: overrides[name].File}
	}
	shapesOf, problems := shapes.Bind(ShapeInputs(specs), ovs)
	for _, p := range problems {
		if ov := overrides[p.Input]; ov.File != "" && files[p.Input].Shape == nil {
			continue // its file could not be read: errs says why
		}
		errs = append(errs, p.Msg)
	}
	var out []Tensor
	for i, spec := range specs {
		if shapesOf[i] == nil {
			continue
		}
		if file, ok := files[spec.Name]; ok {
			out = append(out, file)
			continue
		}
		if err := checkInputBudget(spec.InputOutputInfo, shapesOf[i]); err != nil {
			errs = append(errs, err.Error())
			continue
		}
		data, err := synthesizeValues(modelID, spec.InputOutputInfo, overrides[spec.Name], elements(shapesOf[i]))
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		out = append(out, Tensor{Name: spec.Name, Type: spec.DataType, Shape: shapesOf[i], Data: data})
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("model %q: %s", modelID, strings.Join(errs, "; "))
	}
	return out, nil
}

// ShapeInputs is the model's inputs as package shapes reads them.
func ShapeInputs(specs []InputSpec) []shapes.Input {
	out := make([]shapes.Input, len(specs))
	for i, s := range specs {
		out[i] = shapes.Input{Name: s.Name, Dims: []int64(s.Dimensions), Params: s.Params}
	}
	return out
}

// ShapeOverrides is the catalog's overrides as package shapes reads them.
func ShapeOverrides(overrides map[string]Input) map[string]shapes.Override {
	out := make(map[string]shapes.Override, len(overrides))
	for name, ov := range overrides {
		out[name] = shapes.Override{Dims: ov.Dims, Values: len(ov.Value)}
	}
	return out
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

// FedText names the tensors a run was fed, with their element types and shapes:
// "input_ids int64 [2 8], attention_mask int64 [2 8]".
func FedText(inputs []Tensor) string {
	parts := make([]string, len(inputs))
	for i, t := range inputs {
		dtype := elementTypes[t.Type].name
		if dtype == "" {
			dtype = t.Type.String()
		}
		parts[i] = fmt.Sprintf("%s %s %v", t.Name, dtype, t.Shape)
	}
	if len(parts) == 0 {
		return "no inputs"
	}
	return strings.Join(parts, ", ")
}

// fedError is a failed run with the shapes hwtest fed it. ONNX Runtime's shape
// errors name a node deep inside the graph ("Attempting to broadcast an axis by a
// dimension other than 1. 2 by 8"), never the inputs that led there; every run
// error carries them, since telling shape errors apart by their text would miss some.
type fedError struct {
	err error
	fed string
}

// Error trims the newline onnxruntime-web ends its messages with.
func (e fedError) Error() string {
	return strings.TrimRight(e.err.Error(), " \n") + "; fed " + e.fed
}
func (e fedError) Unwrap() error { return e.err }

// withFed adds the fed shapes to a run's error; nil stays nil.
func withFed(err error, fed string) error {
	if err == nil {
		return nil
	}
	return fedError{err: err, fed: fed}
}
