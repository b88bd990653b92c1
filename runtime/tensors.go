package runtime

import (
	"encoding/binary"
	"fmt"
	"slices"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/hwtest/hwtest/onnx"
)

func isFloat(t ort.TensorElementDataType) bool {
	return t == ort.TensorElementDataTypeFloat || t == ort.TensorElementDataTypeDouble
}

// supportedType: the element types input synthesis fills (conversions take more).
func supportedType(t ort.TensorElementDataType) bool {
	switch t {
	case ort.TensorElementDataTypeFloat, ort.TensorElementDataTypeDouble,
		ort.TensorElementDataTypeInt64, ort.TensorElementDataTypeInt32,
		ort.TensorElementDataTypeInt8, ort.TensorElementDataTypeUint8,
		ort.TensorElementDataTypeBool:
		return true
	}
	return false
}

// tensorError marks a failure of hwtest's own conversion between its tensors and
// ONNX Runtime's (a type it cannot convert, a value the binding cannot read back),
// as opposed to ONNX Runtime refusing or failing the model. The text is the
// conversion's own.
type tensorError struct{ error }

func (e tensorError) Unwrap() error { return e.error }

// toValue copies a host tensor into an ONNX Runtime tensor of its element type.
func toValue(t Tensor) (ort.Value, error) {
	switch t.Type {
	case ort.TensorElementDataTypeFloat:
		return numeric[float32](t)
	case ort.TensorElementDataTypeDouble:
		return numeric[float64](t)
	case ort.TensorElementDataTypeInt64:
		return numeric[int64](t)
	case ort.TensorElementDataTypeInt32:
		return numeric[int32](t)
	case ort.TensorElementDataTypeInt16:
		return numeric[int16](t)
	case ort.TensorElementDataTypeInt8:
		return numeric[int8](t)
	case ort.TensorElementDataTypeUint64:
		return numeric[uint64](t)
	case ort.TensorElementDataTypeUint32:
		return numeric[uint32](t)
	case ort.TensorElementDataTypeUint16:
		return numeric[uint16](t)
	case ort.TensorElementDataTypeUint8:
		return numeric[uint8](t)
	case ort.TensorElementDataTypeBool:
		b := make([]bool, len(t.Data))
		for i, x := range t.Data {
			b[i] = x != 0
		}
		return newValue(t, b)
	case ort.TensorElementDataTypeFloat16:
		return halves(t, onnx.HalfBits)
	case ort.TensorElementDataTypeBFloat16:
		return halves(t, onnx.BFloat16Bits)
	case ort.TensorElementDataTypeString:
		if len(t.Shape) == 0 {
			return nil, fmt.Errorf("input %q: a string scalar cannot be made with onnxruntime_go (string tensors need a dim)", t.Name)
		}
		v, err := ort.NewStringTensor(ort.NewShape(t.Shape...))
		if err != nil {
			return nil, err
		}
		if err := v.SetContents(t.Strings); err != nil {
			v.Destroy()
			return nil, fmt.Errorf("input %q: %w", t.Name, err)
		}
		return v, nil
	}
	return nil, fmt.Errorf("input %q: element type %v is not supported", t.Name, t.Type)
}

type number interface {
	~int8 | ~uint8 | ~int16 | ~uint16 | ~int32 | ~uint32 | ~int64 | ~uint64 | ~float32 | ~float64
}

func numeric[T number](t Tensor) (ort.Value, error) {
	return newValue(t, convert[T](t.Data))
}

// newValue makes a tensor, or a scalar (a sample rate, a timestep) for rank 0:
// onnxruntime_go keeps those apart from tensors, which must have a dimension.
func newValue[T ort.TensorData](t Tensor, data []T) (ort.Value, error) {
	if len(t.Shape) == 0 {
		if len(data) != 1 {
			return nil, fmt.Errorf("input %q: a scalar needs exactly one value, got %d", t.Name, len(data))
		}
		return ort.NewScalar(data[0])
	}
	return ort.NewTensor(ort.NewShape(t.Shape...), data)
}

// halves makes a float16 or bfloat16 tensor from its bits, which onnxruntime_go
// has no Go type for.
func halves(t Tensor, bits func(float64) uint16) (ort.Value, error) {
	if len(t.Shape) == 0 || len(t.Data) == 0 {
		return nil, fmt.Errorf("input %q: onnxruntime_go cannot make a %v tensor of shape %v (it needs a dim and an element)", t.Name, t.Type, t.Shape)
	}
	raw := make([]byte, 0, 2*len(t.Data))
	for _, x := range t.Data {
		raw = binary.LittleEndian.AppendUint16(raw, bits(x))
	}
	return ort.NewCustomDataTensor(ort.NewShape(t.Shape...), raw, t.Type)
}

func convert[T number](xs []float64) []T {
	out := make([]T, len(xs))
	for i, x := range xs {
		out[i] = T(x)
	}
	return out
}

// fromValue reads an output back into a host tensor.
func fromValue(name string, v ort.Value) (Tensor, error) {
	t := Tensor{Name: name, Shape: slices.Clone([]int64(v.GetShape()))}
	switch tv := v.(type) {
	case *ort.Tensor[float32]:
		t.Type, t.Data = ort.TensorElementDataTypeFloat, widen(tv.GetData())
	case *ort.Tensor[float64]:
		t.Type, t.Data = ort.TensorElementDataTypeDouble, widen(tv.GetData())
	case *ort.Tensor[int64]:
		t.Type, t.Data = ort.TensorElementDataTypeInt64, widen(tv.GetData())
	case *ort.Tensor[int32]:
		t.Type, t.Data = ort.TensorElementDataTypeInt32, widen(tv.GetData())
	case *ort.Tensor[int16]:
		t.Type, t.Data = ort.TensorElementDataTypeInt16, widen(tv.GetData())
	case *ort.Tensor[int8]:
		t.Type, t.Data = ort.TensorElementDataTypeInt8, widen(tv.GetData())
	case *ort.Tensor[uint64]:
		t.Type, t.Data = ort.TensorElementDataTypeUint64, widen(tv.GetData())
	case *ort.Tensor[uint32]:
		t.Type, t.Data = ort.TensorElementDataTypeUint32, widen(tv.GetData())
	case *ort.Tensor[uint16]:
		t.Type, t.Data = ort.TensorElementDataTypeUint16, widen(tv.GetData())
	case *ort.Tensor[uint8]:
		t.Type, t.Data = ort.TensorElementDataTypeUint8, widen(tv.GetData())
	case *ort.Tensor[bool]:
		t.Type, t.Data = ort.TensorElementDataTypeBool, bools(tv.GetData())
	case *ort.Scalar[float32]:
		t.Type, t.Data = ort.TensorElementDataTypeFloat, widen([]float32{tv.GetData()})
	case *ort.Scalar[float64]:
		t.Type, t.Data = ort.TensorElementDataTypeDouble, []float64{tv.GetData()}
	case *ort.Scalar[int64]:
		t.Type, t.Data = ort.TensorElementDataTypeInt64, widen([]int64{tv.GetData()})
	case *ort.Scalar[int32]:
		t.Type, t.Data = ort.TensorElementDataTypeInt32, widen([]int32{tv.GetData()})
	case *ort.Scalar[int16]:
		t.Type, t.Data = ort.TensorElementDataTypeInt16, widen([]int16{tv.GetData()})
	case *ort.Scalar[int8]:
		t.Type, t.Data = ort.TensorElementDataTypeInt8, widen([]int8{tv.GetData()})
	case *ort.Scalar[uint64]:
		t.Type, t.Data = ort.TensorElementDataTypeUint64, widen([]uint64{tv.GetData()})
	case *ort.Scalar[uint32]:
		t.Type, t.Data = ort.TensorElementDataTypeUint32, widen([]uint32{tv.GetData()})
	case *ort.Scalar[uint16]:
		t.Type, t.Data = ort.TensorElementDataTypeUint16, widen([]uint16{tv.GetData()})
	case *ort.Scalar[uint8]:
		t.Type, t.Data = ort.TensorElementDataTypeUint8, widen([]uint8{tv.GetData()})
	case *ort.Scalar[bool]:
		t.Type, t.Data = ort.TensorElementDataTypeBool, bools([]bool{tv.GetData()})
	case *ort.CustomDataTensor:
		t.Type = ort.TensorElementDataType(tv.DataType())
		value := map[ort.TensorElementDataType]func(uint16) float64{
			ort.TensorElementDataTypeFloat16:  onnx.HalfValue,
			ort.TensorElementDataTypeBFloat16: onnx.BFloat16Value,
		}[t.Type]
		raw := tv.GetData()
		if value == nil || int64(len(raw)) != 2*t.Elements() {
			return Tensor{}, fmt.Errorf("output %q: %v data of %d bytes for shape %v is not read", name, t.Type, len(raw), t.Shape)
		}
		t.Data = make([]float64, len(raw)/2)
		for i := range t.Data {
			t.Data[i] = value(binary.LittleEndian.Uint16(raw[2*i:]))
		}
	case *ort.StringTensor:
		if len(t.Shape) == 0 { // GetContents indexes its first offset: it would panic
			return Tensor{}, fmt.Errorf("output %q: onnxruntime_go cannot read a string scalar", name)
		}
		s, err := tv.GetContents()
		if err != nil {
			return Tensor{}, fmt.Errorf("output %q: %w", name, err)
		}
		t.Type, t.Strings = ort.TensorElementDataTypeString, s
	default:
		return Tensor{}, fmt.Errorf("output %q: value of type %T is not supported", name, v)
	}
	return t, nil
}

func widen[T number](xs []T) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = float64(x)
	}
	return out
}

func bools(bs []bool) []float64 {
	out := make([]float64, len(bs))
	for i, b := range bs {
		if b {
			out[i] = 1
		}
	}
	return out
}

// newOutput allocates an output for ONNX Runtime to fill in place: onnxruntime_go
// v1.27 cannot read back the outputs ONNX Runtime allocates when they are scalars
// ("The shape has no dimensions") or float16/bfloat16 (it copies half their bytes).
// shape is the output's, known before the run.
func newOutput(typ ort.TensorElementDataType, shape []int64) (ort.Value, error) {
	if len(shape) == 0 {
		switch typ {
		case ort.TensorElementDataTypeFloat:
			return ort.NewEmptyScalar[float32]()
		case ort.TensorElementDataTypeDouble:
			return ort.NewEmptyScalar[float64]()
		case ort.TensorElementDataTypeInt64:
			return ort.NewEmptyScalar[int64]()
		case ort.TensorElementDataTypeInt32:
			return ort.NewEmptyScalar[int32]()
		case ort.TensorElementDataTypeInt16:
			return ort.NewEmptyScalar[int16]()
		case ort.TensorElementDataTypeInt8:
			return ort.NewEmptyScalar[int8]()
		case ort.TensorElementDataTypeUint64:
			return ort.NewEmptyScalar[uint64]()
		case ort.TensorElementDataTypeUint32:
			return ort.NewEmptyScalar[uint32]()
		case ort.TensorElementDataTypeUint16:
			return ort.NewEmptyScalar[uint16]()
		case ort.TensorElementDataTypeUint8:
			return ort.NewEmptyScalar[uint8]()
		case ort.TensorElementDataTypeBool:
			return ort.NewEmptyScalar[bool]()
		}
		return nil, fmt.Errorf("a %v scalar output cannot be read with onnxruntime_go", typ)
	}
	s := ort.NewShape(shape...)
	switch typ {
	case ort.TensorElementDataTypeFloat:
		return ort.NewEmptyTensor[float32](s)
	case ort.TensorElementDataTypeDouble:
		return ort.NewEmptyTensor[float64](s)
	case ort.TensorElementDataTypeInt64:
		return ort.NewEmptyTensor[int64](s)
	case ort.TensorElementDataTypeInt32:
		return ort.NewEmptyTensor[int32](s)
	case ort.TensorElementDataTypeInt16:
		return ort.NewEmptyTensor[int16](s)
	case ort.TensorElementDataTypeInt8:
		return ort.NewEmptyTensor[int8](s)
	case ort.TensorElementDataTypeUint64:
		return ort.NewEmptyTensor[uint64](s)
	case ort.TensorElementDataTypeUint32:
		return ort.NewEmptyTensor[uint32](s)
	case ort.TensorElementDataTypeUint16:
		return ort.NewEmptyTensor[uint16](s)
	case ort.TensorElementDataTypeUint8:
		return ort.NewEmptyTensor[uint8](s)
	case ort.TensorElementDataTypeBool:
		return ort.NewEmptyTensor[bool](s)
	case ort.TensorElementDataTypeFloat16, ort.TensorElementDataTypeBFloat16:
		if s.FlattenedSize() == 0 {
			return nil, fmt.Errorf("an empty %v output %v cannot be read with onnxruntime_go", typ, shape)
		}
		return ort.NewCustomDataTensor(s, make([]byte, 2*s.FlattenedSize()), typ)
	case ort.TensorElementDataTypeString:
		return ort.NewStringTensor(s)
	}
	return nil, fmt.Errorf("a %v output cannot be read with onnxruntime_go", typ)
}
