package browser

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"math"
)

// Tensor is an input or output. Type is an onnxruntime-web tensor type:
// "float32", "float64", "float16", "int64", "uint64", "int32", "uint32",
// "int16", "uint16", "int8", "uint8", "bool" or "string". Data holds the
// values row-major as float64 (64-bit integers beyond 2^53 lose precision;
// bool is 0/1; float16 is its value, not its bits); a string tensor has
// Strings instead.
type Tensor struct {
	Name    string
	Type    string
	Shape   []int64
	Data    []float64
	Strings []string
}

// wireTensor is a Tensor as it crosses to and from the page: the values'
// little-endian bytes in base64 (one call carries many cases' inputs, so the
// JSON stays compact), or the strings themselves.
type wireTensor struct {
	Name    string   `json:"name"`
	Type    string   `json:"type"`
	Shape   []int64  `json:"shape"`
	B64     string   `json:"b64,omitempty"`
	Strings []string `json:"strings,omitempty"`
}

// elemSize is the byte size of each numeric type's element; the page makes
// the matching typed array (harness.js ctors).
var elemSize = map[string]int{
	"float32": 4, "float64": 8, "float16": 2,
	"int64": 8, "uint64": 8, "int32": 4, "uint32": 4, "int16": 2, "uint16": 2,
	"int8": 1, "uint8": 1, "bool": 1,
}

func numElements(shape []int64) int64 {
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	return n
}

func encode(t Tensor) (wireTensor, error) {
	shape := t.Shape
	if shape == nil {
		shape = []int64{}
	}
	n := numElements(t.Shape)
	if t.Type == "string" {
		if n != int64(len(t.Strings)) {
			return wireTensor{}, fmt.Errorf("input %q: shape %v holds %d strings, got %d", t.Name, t.Shape, n, len(t.Strings))
		}
		strs := t.Strings
		if strs == nil {
			strs = []string{} // the page wants an array, even empty
		}
		return wireTensor{Name: t.Name, Type: t.Type, Shape: shape, Strings: strs}, nil
	}
	size, ok := elemSize[t.Type]
	if !ok {
		return wireTensor{}, fmt.Errorf("input %q: unsupported type %q", t.Name, t.Type)
	}
	if n != int64(len(t.Data)) {
		return wireTensor{}, fmt.Errorf("input %q: shape %v holds %d values, got %d", t.Name, t.Shape, n, len(t.Data))
	}
	buf := make([]byte, size*len(t.Data))
	for i, v := range t.Data {
		p := buf[i*size:]
		switch t.Type {
		case "float32":
			binary.LittleEndian.PutUint32(p, math.Float32bits(float32(v)))
		case "float64":
			binary.LittleEndian.PutUint64(p, math.Float64bits(v))
		case "float16":
			binary.LittleEndian.PutUint16(p, halfBits(float32(v)))
		case "int64":
			binary.LittleEndian.PutUint64(p, uint64(int64(v)))
		case "uint64":
			binary.LittleEndian.PutUint64(p, uint64(v))
		case "int32":
			binary.LittleEndian.PutUint32(p, uint32(int32(v)))
		case "uint32":
			binary.LittleEndian.PutUint32(p, uint32(v))
		case "int16":
			binary.LittleEndian.PutUint16(p, uint16(int16(v)))
		case "uint16":
			binary.LittleEndian.PutUint16(p, uint16(v))
		case "uint8":
			p[0] = uint8(v)
		case "int8":
			p[0] = uint8(int8(v))
		case "bool":
			if v != 0 {
				p[0] = 1
			}
		}
	}
	return wireTensor{Name: t.Name, Type: t.Type, Shape: shape, B64: base64.StdEncoding.EncodeToString(buf)}, nil
}

func decode(w wireTensor) (Tensor, error) {
	shape := w.Shape
	if shape == nil {
		shape = []int64{}
	}
	if w.Type == "string" {
		strs := w.Strings
		if strs == nil {
			strs = []string{}
		}
		return Tensor{Name: w.Name, Type: w.Type, Shape: shape, Strings: strs}, nil
	}
	size, ok := elemSize[w.Type]
	if !ok {
		return Tensor{}, fmt.Errorf("output %q: unsupported type %q", w.Name, w.Type)
	}
	buf, err := base64.StdEncoding.DecodeString(w.B64)
	if err != nil {
		return Tensor{}, fmt.Errorf("output %q: %w", w.Name, err)
	}
	if len(buf)%size != 0 {
		return Tensor{}, fmt.Errorf("output %q: %d bytes is not a whole number of %s", w.Name, len(buf), w.Type)
	}
	data := make([]float64, len(buf)/size)
	for i := range data {
		p := buf[i*size:]
		switch w.Type {
		case "float32":
			data[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(p)))
		case "float64":
			data[i] = math.Float64frombits(binary.LittleEndian.Uint64(p))
		case "float16":
			data[i] = halfValue(binary.LittleEndian.Uint16(p))
		case "int64":
			data[i] = float64(int64(binary.LittleEndian.Uint64(p)))
		case "uint64":
			data[i] = float64(binary.LittleEndian.Uint64(p))
		case "int32":
			data[i] = float64(int32(binary.LittleEndian.Uint32(p)))
		case "uint32":
			data[i] = float64(binary.LittleEndian.Uint32(p))
		case "int16":
			data[i] = float64(int16(binary.LittleEndian.Uint16(p)))
		case "uint16":
			data[i] = float64(binary.LittleEndian.Uint16(p))
		case "uint8", "bool":
			data[i] = float64(p[0])
		case "int8":
			data[i] = float64(int8(p[0]))
		}
	}
	if int64(len(data)) != numElements(shape) {
		return Tensor{}, fmt.Errorf("output %q: shape %v holds %d values, got %d", w.Name, shape, numElements(shape), len(data))
	}
	return Tensor{Name: w.Name, Type: w.Type, Shape: shape, Data: data}, nil
}

// halfBits is f as IEEE 754 binary16, rounded to nearest even (what
// Float16Array and ONNX's float16 conversions do).
func halfBits(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int(b>>23) & 0xff
	mant := b & 0x7fffff
	if exp == 0xff { // Inf, NaN
		if mant != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	}
	e := exp - 127 + 15
	if e >= 0x1f {
		return sign | 0x7c00
	}
	if e <= 0 { // subnormal in binary16 (or zero)
		if e < -10 {
			return sign
		}
		mant |= 0x800000
		shift := uint(14 - e)
		h := mant >> shift
		rem, half := mant&(1<<shift-1), uint32(1)<<(shift-1)
		if rem > half || (rem == half && h&1 == 1) {
			h++
		}
		return sign | uint16(h)
	}
	h := uint32(e)<<10 | mant>>13
	if rem := mant & 0x1fff; rem > 0x1000 || (rem == 0x1000 && h&1 == 1) {
		h++ // a carry into the exponent is right: it rounds up to the next binade, or Inf
	}
	return sign | uint16(h)
}

// halfValue is the value of the binary16 bits h.
func halfValue(h uint16) float64 {
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	e, m := int(h>>10)&0x1f, float64(h&0x3ff)
	switch e {
	case 0:
		return sign * math.Ldexp(m, -24)
	case 0x1f:
		if m != 0 {
			return math.NaN()
		}
		return math.Inf(int(sign))
	}
	return sign * math.Ldexp(1+m/1024, e-15)
}
