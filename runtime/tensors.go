package runtime

import (
	"fmt"

	ort "github.com/yalue/onnxruntime_go"
)

func isFloat(t ort.TensorElementDataType) bool {
	return t == ort.TensorElementDataTypeFloat || t == ort.TensorElementDataTypeDouble
}

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

// toValue copies a host tensor into an ONNX Runtime tensor of its element type.
func toValue(t Tensor) (ort.Value, error) {
	if len(t.Shape) == 0 {
		return toScalar(t)
	}
	shape := ort.NewShape(t.Shape...)
	switch t.Type {
	case ort.TensorElementDataTypeFloat:
		return ort.NewTensor(shape, convert[float32](t.Data))
	case ort.TensorElementDataTypeDouble:
		return ort.NewTensor(shape, convert[float64](t.Data))
	case ort.TensorElementDataTypeInt64:
		return ort.NewTensor(shape, convert[int64](t.Data))
	case ort.TensorElementDataTypeInt32:
		return ort.NewTensor(shape, convert[int32](t.Data))
	case ort.TensorElementDataTypeInt8:
		return ort.NewTensor(shape, convert[int8](t.Data))
	case ort.TensorElementDataTypeUint8:
		return ort.NewTensor(shape, convert[uint8](t.Data))
	case ort.TensorElementDataTypeBool:
		b := make([]bool, len(t.Data))
		for i, x := range t.Data {
			b[i] = x != 0
		}
		return ort.NewTensor(shape, b)
	}
	return nil, fmt.Errorf("input %q: element type %v is not supported", t.Name, t.Type)
}

// toScalar makes a rank-0 tensor (a sample rate, a timestep): onnxruntime_go keeps
// those apart from tensors, which must have at least one dimension.
func toScalar(t Tensor) (ort.Value, error) {
	if len(t.Data) != 1 {
		return nil, fmt.Errorf("input %q: a scalar needs exactly one value, got %d", t.Name, len(t.Data))
	}
	x := t.Data[0]
	switch t.Type {
	case ort.TensorElementDataTypeFloat:
		return ort.NewScalar(float32(x))
	case ort.TensorElementDataTypeDouble:
		return ort.NewScalar(x)
	case ort.TensorElementDataTypeInt64:
		return ort.NewScalar(int64(x))
	case ort.TensorElementDataTypeInt32:
		return ort.NewScalar(int32(x))
	case ort.TensorElementDataTypeInt8:
		return ort.NewScalar(int8(x))
	case ort.TensorElementDataTypeUint8:
		return ort.NewScalar(uint8(x))
	case ort.TensorElementDataTypeBool:
		return ort.NewScalar(x != 0)
	}
	return nil, fmt.Errorf("input %q: element type %v is not supported", t.Name, t.Type)
}

func convert[T int8 | uint8 | int32 | int64 | float32 | float64](xs []float64) []T {
	out := make([]T, len(xs))
	for i, x := range xs {
		out[i] = T(x)
	}
	return out
}

// fromValue reads an output ONNX Runtime allocated back into a host tensor.
func fromValue(name string, v ort.Value) (Tensor, error) {
	t := Tensor{Name: name, Shape: []int64(v.GetShape())}
	switch tv := v.(type) {
	case *ort.Tensor[float32]:
		t.Type, t.Data = ort.TensorElementDataTypeFloat, widen(tv.GetData())
	case *ort.Tensor[float64]:
		t.Type, t.Data = ort.TensorElementDataTypeDouble, widen(tv.GetData())
	case *ort.Tensor[int64]:
		t.Type, t.Data = ort.TensorElementDataTypeInt64, widen(tv.GetData())
	case *ort.Tensor[int32]:
		t.Type, t.Data = ort.TensorElementDataTypeInt32, widen(tv.GetData())
	case *ort.Tensor[int8]:
		t.Type, t.Data = ort.TensorElementDataTypeInt8, widen(tv.GetData())
	case *ort.Tensor[uint8]:
		t.Type, t.Data = ort.TensorElementDataTypeUint8, widen(tv.GetData())
	case *ort.Tensor[bool]:
		t.Type = ort.TensorElementDataTypeBool
		for _, b := range tv.GetData() {
			if b {
				t.Data = append(t.Data, 1)
			} else {
				t.Data = append(t.Data, 0)
			}
		}
	case *ort.Scalar[float32]:
		t.Type, t.Data = ort.TensorElementDataTypeFloat, []float64{float64(tv.GetData())}
	case *ort.Scalar[float64]:
		t.Type, t.Data = ort.TensorElementDataTypeDouble, []float64{tv.GetData()}
	case *ort.Scalar[int64]:
		t.Type, t.Data = ort.TensorElementDataTypeInt64, []float64{float64(tv.GetData())}
	case *ort.Scalar[int32]:
		t.Type, t.Data = ort.TensorElementDataTypeInt32, []float64{float64(tv.GetData())}
	case *ort.Scalar[int8]:
		t.Type, t.Data = ort.TensorElementDataTypeInt8, []float64{float64(tv.GetData())}
	case *ort.Scalar[uint8]:
		t.Type, t.Data = ort.TensorElementDataTypeUint8, []float64{float64(tv.GetData())}
	case *ort.Scalar[bool]:
		t.Type, t.Data = ort.TensorElementDataTypeBool, []float64{0}
		if tv.GetData() {
			t.Data[0] = 1
		}
	default:
		return Tensor{}, fmt.Errorf("output %q: value of type %T is not supported", name, v)
	}
	if t.Shape == nil {
		t.Shape = []int64{} // a scalar's shape is [], as ONNX Runtime allocated ones say
	}
	return t, nil
}

// emptyScalar pre-allocates a rank-0 output. onnxruntime_go cannot wrap a rank-0
// tensor ONNX Runtime allocated ("Invalid tensor shape: The shape has no
// dimensions"), so Run hands ONNX Runtime a scalar to fill instead.
func emptyScalar(info ort.InputOutputInfo) (ort.Value, error) {
	switch info.DataType {
	case ort.TensorElementDataTypeFloat:
		return ort.NewEmptyScalar[float32]()
	case ort.TensorElementDataTypeDouble:
		return ort.NewEmptyScalar[float64]()
	case ort.TensorElementDataTypeInt64:
		return ort.NewEmptyScalar[int64]()
	case ort.TensorElementDataTypeInt32:
		return ort.NewEmptyScalar[int32]()
	case ort.TensorElementDataTypeInt8:
		return ort.NewEmptyScalar[int8]()
	case ort.TensorElementDataTypeUint8:
		return ort.NewEmptyScalar[uint8]()
	case ort.TensorElementDataTypeBool:
		return ort.NewEmptyScalar[bool]()
	}
	return nil, fmt.Errorf("output %q: a scalar of element type %v is not supported", info.Name, info.DataType)
}

func widen[T int8 | uint8 | int32 | int64 | float32 | float64](xs []T) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = float64(x)
	}
	return out
}
