package onnx

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"

	"google.golang.org/protobuf/encoding/protowire"
)

// TensorProto fields only ReadTensor needs (the builder writes raw_data).
const (
	fTensorInt32Data    protowire.Number = 5  // TensorProto.int32_data (repeated int32)
	fTensorStringData   protowire.Number = 6  // TensorProto.string_data (repeated bytes)
	fTensorDoubleData   protowire.Number = 10 // TensorProto.double_data (repeated double)
	fTensorUint64Data   protowire.Number = 11 // TensorProto.uint64_data (repeated uint64)
	fTensorDataLocation protowire.Number = 14 // TensorProto.data_location (1: EXTERNAL)
)

// ReadTensorFile reads a serialised TensorProto, such as a test case's input_0.pb.
func ReadTensorFile(path string) (*Tensor, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	t, err := ReadTensor(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// ReadTensor decodes a serialised TensorProto into a Tensor whose Raw holds the
// elements little-endian, whichever field the file used: raw_data, or the typed
// fields (float_data, int32_data, int64_data, double_data, uint64_data, packed or
// not); strings go to Strings. The element count must match the dims. A type the
// proto stores elsewhere (complex, external data) is an error, never zeros.
func ReadTensor(b []byte) (*Tensor, error) {
	t := &Tensor{}
	var raw []byte
	hasRaw := false
	var typed []uint64 // typed-field values in file order, as their wire bits
	var typedField protowire.Number
	err := fields(b, func(num protowire.Number, wt protowire.Type, v []byte, x uint64) error {
		switch num {
		case fTensorDims:
			ds, err := scalars(wt, v, x)
			for _, d := range ds {
				t.Dims = append(t.Dims, int64(d))
			}
			return err
		case fTensorDataType:
			t.Type = DataType(x)
		case fTensorName:
			t.Name = string(v)
		case fTensorRawData:
			raw, hasRaw = append(raw, v...), true
		case fTensorStringData:
			t.Strings = append(t.Strings, string(v))
		case fTensorFloatData, fTensorInt32Data, fTensorInt64Data, fTensorDoubleData, fTensorUint64Data:
			if typedField != 0 && typedField != num {
				return fmt.Errorf("values in both field %d and field %d", typedField, num)
			}
			typedField = num
			xs, err := scalars(wt, v, x)
			if (num == fTensorFloatData || num == fTensorDoubleData) && wt == protowire.BytesType {
				xs, err = fixed(num, v)
			}
			typed = append(typed, xs...)
			return err
		case fTensorExternal:
			return errors.New("the values are in an external file (external_data), which is not read")
		case fTensorDataLocation:
			if x == 1 {
				return errors.New("data_location is EXTERNAL, which is not read")
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("not a TensorProto: %w", err)
	}
	n := int64(1)
	for _, d := range t.Dims {
		n *= d
	}
	if t.Type == StringType {
		if int64(len(t.Strings)) != n {
			return nil, fmt.Errorf("tensor %q: %d strings for dims %v (%d elements)", t.Name, len(t.Strings), t.Dims, n)
		}
		return t, nil
	}
	size := t.Type.Size()
	if size == 0 {
		return nil, fmt.Errorf("tensor %q: element type %d (%v) is not read", t.Name, t.Type, t.Type)
	}
	switch {
	case hasRaw && typedField != 0:
		return nil, fmt.Errorf("tensor %q: values in both raw_data and field %d", t.Name, typedField)
	case hasRaw:
		t.Raw = raw
	default:
		if t.Raw, err = packTyped(t.Type, typedField, typed); err != nil {
			return nil, fmt.Errorf("tensor %q: %w", t.Name, err)
		}
	}
	if int64(len(t.Raw)) != n*int64(size) {
		return nil, fmt.Errorf("tensor %q: %d bytes of %v for dims %v, want %d", t.Name, len(t.Raw), t.Type, t.Dims, n*int64(size))
	}
	return t, nil
}

// scalars reads a repeated varint field, packed (one length-delimited run) or not.
func scalars(wt protowire.Type, v []byte, x uint64) ([]uint64, error) {
	if wt != protowire.BytesType {
		return []uint64{x}, nil
	}
	var out []uint64
	for len(v) > 0 {
		d, n := protowire.ConsumeVarint(v)
		if n < 0 {
			return nil, protowire.ParseError(n)
		}
		out = append(out, d)
		v = v[n:]
	}
	return out, nil
}

// fixed reads a packed float_data (4-byte) or double_data (8-byte) run.
func fixed(num protowire.Number, v []byte) ([]uint64, error) {
	w := 8
	if num == fTensorFloatData {
		w = 4
	}
	if len(v)%w != 0 {
		return nil, fmt.Errorf("field %d: %d bytes is not a whole number of %d-byte values", num, len(v), w)
	}
	out := make([]uint64, 0, len(v)/w)
	for i := 0; i < len(v); i += w {
		if w == 4 {
			out = append(out, uint64(binary.LittleEndian.Uint32(v[i:])))
		} else {
			out = append(out, binary.LittleEndian.Uint64(v[i:]))
		}
	}
	return out, nil
}

// typedFields is where onnx.proto keeps each type's values outside raw_data.
// float16 and bfloat16 keep their bits in int32_data.
var typedFields = map[DataType]protowire.Number{
	Float32: fTensorFloatData, Float64: fTensorDoubleData,
	Int32: fTensorInt32Data, Int16: fTensorInt32Data, Int8: fTensorInt32Data,
	Uint16: fTensorInt32Data, Uint8: fTensorInt32Data, Bool: fTensorInt32Data,
	Float16: fTensorInt32Data, BFloat16: fTensorInt32Data,
	Int64: fTensorInt64Data, Uint32: fTensorUint64Data, Uint64: fTensorUint64Data,
}

// packTyped lays typed-field values out as raw_data would hold them.
func packTyped(typ DataType, field protowire.Number, xs []uint64) ([]byte, error) {
	if len(xs) == 0 {
		return nil, nil
	}
	if want := typedFields[typ]; field != want {
		return nil, fmt.Errorf("%v values in field %d, onnx.proto keeps them in field %d", typ, field, want)
	}
	out := make([]byte, 0, len(xs)*typ.Size())
	for _, x := range xs {
		switch typ.Size() {
		case 1:
			out = append(out, byte(x))
		case 2:
			out = binary.LittleEndian.AppendUint16(out, uint16(x))
		case 4:
			out = binary.LittleEndian.AppendUint32(out, uint32(x))
		case 8:
			out = binary.LittleEndian.AppendUint64(out, x)
		}
	}
	return out, nil
}

// Float64s decodes Raw into one float64 per element: bool as 0 or 1, float16 and
// bfloat16 widened exactly. 64-bit integers beyond 2^53 lose their low bits.
func (t *Tensor) Float64s() ([]float64, error) {
	size := t.Type.Size()
	if size == 0 {
		return nil, fmt.Errorf("tensor %q: %v elements are not numbers", t.Name, t.Type)
	}
	if len(t.Raw)%size != 0 {
		return nil, fmt.Errorf("tensor %q: %d bytes is not a whole number of %v", t.Name, len(t.Raw), t.Type)
	}
	out := make([]float64, len(t.Raw)/size)
	le := binary.LittleEndian
	for i := range out {
		b := t.Raw[i*size:]
		switch t.Type {
		case Float32:
			out[i] = float64(math.Float32frombits(le.Uint32(b)))
		case Float64:
			out[i] = math.Float64frombits(le.Uint64(b))
		case Float16:
			out[i] = HalfValue(le.Uint16(b))
		case BFloat16:
			out[i] = BFloat16Value(le.Uint16(b))
		case Uint8:
			out[i] = float64(b[0])
		case Int8:
			out[i] = float64(int8(b[0]))
		case Bool:
			if b[0] != 0 {
				out[i] = 1
			}
		case Uint16:
			out[i] = float64(le.Uint16(b))
		case Int16:
			out[i] = float64(int16(le.Uint16(b)))
		case Int32:
			out[i] = float64(int32(le.Uint32(b)))
		case Uint32:
			out[i] = float64(le.Uint32(b))
		case Int64:
			out[i] = float64(int64(le.Uint64(b)))
		case Uint64:
			out[i] = float64(le.Uint64(b))
		}
	}
	return out, nil
}

// HalfValue is the value of IEEE 754 half-precision bits.
func HalfValue(h uint16) float64 {
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	exp, mant := int(h>>10)&0x1f, float64(h&0x3ff)
	switch exp {
	case 0: // zero and subnormals: mant · 2^-24
		return sign * math.Ldexp(mant, -24)
	case 0x1f:
		if mant != 0 {
			return math.NaN()
		}
		return sign * math.Inf(1)
	}
	return sign * math.Ldexp(1024+mant, exp-25)
}

// HalfBits rounds f to the nearest half-precision value, ties to even, as a
// conversion to float16 does; beyond the largest half it is infinite.
func HalfBits(f float64) uint16 {
	var sign uint16
	if math.Signbit(f) {
		sign = 0x8000
	}
	a := math.Abs(f)
	switch {
	case math.IsNaN(f):
		return sign | 0x7e00
	case a >= 65520: // halfway between 65504 (the largest half) and 2^16 rounds up
		return sign | 0x7c00
	case a < 0x1p-14: // subnormal: a whole number of 2^-24 steps (1024 steps is the smallest normal)
		return sign | uint16(math.RoundToEven(a*0x1p24))
	}
	frac, exp := math.Frexp(a) // a = frac · 2^exp, frac in [0.5, 1)
	mant := math.RoundToEven(math.Ldexp(frac, 11))
	if mant == 2048 {
		mant, exp = 1024, exp+1
	}
	if exp+14 > 30 {
		return sign | 0x7c00
	}
	return sign | uint16(exp+14)<<10 | uint16(mant-1024)
}

// BFloat16Value is the value of bfloat16 bits: the top half of a float32.
func BFloat16Value(h uint16) float64 {
	return float64(math.Float32frombits(uint32(h) << 16))
}

// BFloat16Bits rounds f to bfloat16, ties to even, through float32 (exact for any
// value that came from a float32 or a bfloat16).
func BFloat16Bits(f float64) uint16 {
	b := math.Float32bits(float32(f))
	if math.IsNaN(f) {
		return uint16(b>>16) | 0x40
	}
	b += 0x7fff + (b>>16)&1
	return uint16(b >> 16)
}

// Marshal serialises the tensor as a TensorProto, the form of a test case's .pb
// files (raw_data, or string_data for strings).
func (t *Tensor) Marshal() []byte { return t.marshal() }
