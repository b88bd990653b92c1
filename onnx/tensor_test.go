package onnx

import (
	"encoding/binary"
	"math"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

// Every numeric type written as raw_data by the builder reads back element for
// element.
func TestReadTensorRawRoundTrip(t *testing.T) {
	values := []float64{0, 1, -2, 3, 100, -7}
	for _, typ := range []DataType{Float32, Float64, Float16, BFloat16, Int8, Uint8, Int16, Uint16, Int32, Uint32, Int64, Uint64, Bool} {
		want := slices.Clone(values)
		for i, v := range want {
			switch {
			case typ == Bool && v != 0:
				want[i] = 1
			case (typ == Uint8 || typ == Uint16 || typ == Uint32 || typ == Uint64) && v < 0:
				want[i] = -v
			}
		}
		raw := make([]byte, 0, len(want)*typ.Size())
		for _, v := range want {
			raw = appendElement(raw, typ, v)
		}
		in := &Tensor{Name: "x", Type: typ, Dims: []int64{2, 3}, Raw: raw}
		got, err := ReadTensor(in.marshal())
		if err != nil {
			t.Fatalf("%v: %v", typ, err)
		}
		if got.Name != "x" || got.Type != typ || !slices.Equal(got.Dims, in.Dims) {
			t.Errorf("%v: read %s %v %v", typ, got.Name, got.Type, got.Dims)
		}
		xs, err := got.Float64s()
		if err != nil || !slices.Equal(xs, want) {
			t.Errorf("%v: values %v (%v), want %v", typ, xs, err, want)
		}
	}
}

func appendElement(b []byte, typ DataType, v float64) []byte {
	le := binary.LittleEndian
	switch typ {
	case Float32:
		return le.AppendUint32(b, math.Float32bits(float32(v)))
	case Float64:
		return le.AppendUint64(b, math.Float64bits(v))
	case Float16:
		return le.AppendUint16(b, HalfBits(v))
	case BFloat16:
		return le.AppendUint16(b, BFloat16Bits(v))
	case Int8, Uint8, Bool:
		return append(b, byte(int64(v)))
	case Int16, Uint16:
		return le.AppendUint16(b, uint16(int64(v)))
	case Int32, Uint32:
		return le.AppendUint32(b, uint32(int64(v)))
	}
	return le.AppendUint64(b, uint64(int64(v)))
}

// The typed fields, packed and not, give the same values raw_data would.
func TestReadTensorTypedFields(t *testing.T) {
	header := func(typ DataType, dims ...int64) []byte {
		b := appendInts(nil, fTensorDims, dims)
		return appendVarint(b, fTensorDataType, int64(typ))
	}
	packed := func(b []byte, num protowire.Number, xs ...uint64) []byte {
		var run []byte
		for _, x := range xs {
			run = protowire.AppendVarint(run, x)
		}
		return appendBytes(b, num, run)
	}
	negOne := uint64(math.MaxUint64) // -1 as a sign-extended varint
	cases := []struct {
		name string
		data []byte
		want []float64
	}{
		{"float_data unpacked", appendFloats(header(Float32, 2), fTensorFloatData, []float32{1.5, -2}), []float64{1.5, -2}},
		{"float_data packed", appendBytes(header(Float32, 2), fTensorFloatData, binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, math.Float32bits(0.25)), math.Float32bits(-8))), []float64{0.25, -8}},
		{"double_data packed", appendBytes(header(Float64, 1), fTensorDoubleData, binary.LittleEndian.AppendUint64(nil, math.Float64bits(1e-300))), []float64{1e-300}},
		{"double_data unpacked", appendFixed64(header(Float64, 1), fTensorDoubleData, math.Float64bits(-3.5)), []float64{-3.5}},
		{"int32_data", packed(header(Int32, 3), fTensorInt32Data, 7, negOne, 1<<31-1), []float64{7, -1, 1<<31 - 1}},
		{"int32_data unpacked int8", appendInts(header(Int8, 2), fTensorInt32Data, []int64{-128, 127}), []float64{-128, 127}},
		{"float16 bits in int32_data", packed(header(Float16, 2), fTensorInt32Data, 0x3c00, 0xc000), []float64{1, -2}},
		{"bfloat16 bits in int32_data", packed(header(BFloat16, 1), fTensorInt32Data, 0x3fc0), []float64{1.5}},
		{"int64_data", packed(header(Int64, 2), fTensorInt64Data, negOne, 1<<40), []float64{-1, 1 << 40}},
		{"uint64_data uint32", packed(header(Uint32, 1), fTensorUint64Data, 1<<32-1), []float64{1<<32 - 1}},
		{"uint64_data uint64", packed(header(Uint64, 1), fTensorUint64Data, 1<<50), []float64{1 << 50}},
		{"bool in int32_data", packed(header(Bool, 2), fTensorInt32Data, 1, 0), []float64{1, 0}},
		{"scalar", appendFloats(header(Float32), fTensorFloatData, []float32{4}), []float64{4}},
		{"empty", header(Float32, 0, 3), []float64{}},
	}
	for _, c := range cases {
		got, err := ReadTensor(c.data)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		xs, err := got.Float64s()
		if err != nil || !slices.Equal(xs, c.want) {
			t.Errorf("%s: %v (%v), want %v", c.name, xs, err, c.want)
		}
	}
}

func appendFixed64(b []byte, num protowire.Number, x uint64) []byte {
	b = protowire.AppendTag(b, num, protowire.Fixed64Type)
	return protowire.AppendFixed64(b, x)
}

func TestReadTensorStrings(t *testing.T) {
	in := &Tensor{Name: "s", Type: StringType, Dims: []int64{3}, Strings: []string{"a", "", "ünï"}}
	got, err := ReadTensor(in.marshal())
	if err != nil || !slices.Equal(got.Strings, in.Strings) {
		t.Fatalf("%q (%v), want %q", got.Strings, err, in.Strings)
	}
	if _, err := got.Float64s(); err == nil {
		t.Error("strings decoded as numbers")
	}
}

// What cannot be read is said, never read as zeros or short data.
func TestReadTensorRefuses(t *testing.T) {
	short := &Tensor{Type: Float32, Dims: []int64{3}, Raw: make([]byte, 8)}
	ext := appendBytes(appendVarint(appendInts(nil, fTensorDims, []int64{1}), fTensorDataType, int64(Float32)), fTensorExternal, appendString(nil, fStringEntryKey, "location"))
	complex64 := appendVarint(appendInts(nil, fTensorDims, []int64{1}), fTensorDataType, 14)
	wrongField := appendInts(appendVarint(appendInts(nil, fTensorDims, []int64{1}), fTensorDataType, int64(Float32)), fTensorInt64Data, []int64{1})
	for name, c := range map[string]struct {
		data []byte
		want string
	}{
		"short raw":      {short.marshal(), "8 bytes of float for dims [3], want 12"},
		"external":       {ext, "external file"},
		"complex64":      {complex64, "element type 14"},
		"wrong field":    {wrongField, "keeps them in field 4"},
		"missing values": {appendVarint(appendInts(nil, fTensorDims, []int64{2}), fTensorDataType, int64(Int64)), "want 16"},
		"garbage":        {[]byte{0xff, 0xff}, "not a TensorProto"},
	} {
		_, err := ReadTensor(c.data)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", name, err, c.want)
		}
	}
}

// Every half-precision value survives HalfValue then HalfBits, and rounding ties
// go to even as a float16 cast does.
func TestHalf(t *testing.T) {
	for h := 0; h < 1<<16; h++ {
		v := HalfValue(uint16(h))
		if math.IsNaN(v) {
			if h&0x7c00 != 0x7c00 || h&0x3ff == 0 {
				t.Fatalf("%#04x decoded as NaN", h)
			}
			continue
		}
		if got := HalfBits(v); got != uint16(h) {
			t.Fatalf("%#04x → %g → %#04x", h, v, got)
		}
	}
	for _, c := range []struct {
		f    float64
		want uint16
	}{
		{1, 0x3c00}, {1 + 0x1p-11, 0x3c00}, {1 + 3*0x1p-11, 0x3c02}, {1 + 0x1p-11 + 0x1p-30, 0x3c01},
		{65504, 0x7bff}, {65519.99, 0x7bff}, {65520, 0x7c00}, {1e9, 0x7c00}, {-1e9, 0xfc00},
		{0x1p-24, 0x0001}, {0x1p-25, 0x0000}, {3 * 0x1p-25, 0x0002}, {0x1p-14 - 0x1p-26, 0x0400},
		{math.Copysign(0, -1), 0x8000},
	} {
		if got := HalfBits(c.f); got != c.want {
			t.Errorf("HalfBits(%g) = %#04x, want %#04x", c.f, got, c.want)
		}
	}
	if !math.IsNaN(HalfValue(HalfBits(math.NaN()))) {
		t.Error("NaN does not survive")
	}
}

func TestBFloat16(t *testing.T) {
	for h := 0; h < 1<<16; h++ {
		v := BFloat16Value(uint16(h))
		if math.IsNaN(v) {
			continue
		}
		if got := BFloat16Bits(v); got != uint16(h) {
			t.Fatalf("%#04x → %g → %#04x", h, v, got)
		}
	}
	if got := BFloat16Bits(1 + 0x1p-8); got != 0x3f80 { // a tie: to even
		t.Errorf("BFloat16Bits(1+2^-8) = %#04x, want 0x3f80", got)
	}
	if got := BFloat16Bits(1 + 3*0x1p-8); got != 0x3f82 {
		t.Errorf("BFloat16Bits(1+3·2^-8) = %#04x, want 0x3f82", got)
	}
	if !math.IsNaN(BFloat16Value(BFloat16Bits(math.NaN()))) {
		t.Error("NaN does not survive")
	}
}
