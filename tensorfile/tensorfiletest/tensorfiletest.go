// Package tensorfiletest writes the tensor files tests read: .npy arrays byte by
// byte as numpy.save lays them out (format 1.0), independently of the reader.
package tensorfiletest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/hwtest/hwtest/onnx"
)

// NPY writes data as a .npy array of dtype descr ('<f4', '<i8', '|u1', '|b1', ...)
// and shape, and returns path.
func NPY(t testing.TB, path, descr string, shape []int64, data []float64) string {
	t.Helper()
	dims := make([]string, len(shape))
	for i, d := range shape {
		dims[i] = fmt.Sprint(d)
	}
	shapeText := strings.Join(dims, ", ")
	if len(shape) == 1 {
		shapeText += "," // a Python 1-tuple
	}
	header := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': (%s), }", descr, shapeText)
	// numpy pads the header with spaces to end, with its newline, on a multiple of 64.
	header += strings.Repeat(" ", (64-(10+len(header)+1)%64)%64) + "\n"
	var b bytes.Buffer
	b.WriteString("\x93NUMPY\x01\x00")
	binary.Write(&b, binary.LittleEndian, uint16(len(header)))
	b.WriteString(header)
	le := binary.LittleEndian
	for _, x := range data {
		switch descr[1:] {
		case "f4":
			binary.Write(&b, le, math.Float32bits(float32(x)))
		case "f8":
			binary.Write(&b, le, math.Float64bits(x))
		case "i8":
			binary.Write(&b, le, int64(x))
		case "i4":
			binary.Write(&b, le, int32(x))
		case "i2":
			binary.Write(&b, le, int16(x))
		case "i1":
			binary.Write(&b, le, int8(x))
		case "f2":
			binary.Write(&b, le, onnx.HalfBits(x))
		case "u1", "b1":
			b.WriteByte(byte(x))
		default:
			t.Fatalf("tensorfiletest.NPY: dtype %q not written", descr)
		}
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
