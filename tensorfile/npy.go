package tensorfile

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/hwtest/hwtest/onnx"
)

// npyTypes are the NumPy dtypes read: kind and size as in a .npy descr ('<f4').
var npyTypes = []struct {
	descr string // without the byte-order character
	typ   onnx.DataType
	numpy string
}{
	{"f2", onnx.Float16, "float16"}, {"f4", onnx.Float32, "float32"}, {"f8", onnx.Float64, "float64"},
	{"i1", onnx.Int8, "int8"}, {"i2", onnx.Int16, "int16"}, {"i4", onnx.Int32, "int32"}, {"i8", onnx.Int64, "int64"},
	{"u1", onnx.Uint8, "uint8"}, {"u2", onnx.Uint16, "uint16"}, {"u4", onnx.Uint32, "uint32"}, {"u8", onnx.Uint64, "uint64"},
	{"b1", onnx.Bool, "bool"},
}

var npyMagic = []byte("\x93NUMPY")

var (
	npyDescr   = regexp.MustCompile(`'descr'\s*:\s*'([^']*)'`)
	npyFortran = regexp.MustCompile(`'fortran_order'\s*:\s*(True|False)`)
	npyShape   = regexp.MustCompile(`'shape'\s*:\s*\(([^)]*)\)`)
)

type npyInfo struct {
	typ   onnx.DataType
	shape []int64
}

// npyHeader reads a .npy file's header (format 1.0, 2.0 or 3.0) and leaves f at the
// first element. Only little-endian, C-order arrays of npyTypes are read.
func npyHeader(path string) (npyInfo, *os.File, error) {
	f, err := os.Open(path)
	if err != nil {
		return npyInfo{}, nil, err
	}
	h, err := readNPYHeader(f)
	if err != nil {
		f.Close()
		return npyInfo{}, nil, fmt.Errorf("%s: %w", path, err)
	}
	return h, f, nil
}

func readNPYHeader(r io.Reader) (npyInfo, error) {
	var h npyInfo
	pre := make([]byte, 8)
	if _, err := io.ReadFull(r, pre); err != nil || !bytes.Equal(pre[:6], npyMagic) {
		return h, fmt.Errorf("not a NumPy .npy file (no \\x93NUMPY magic): write it with numpy.save")
	}
	var size int
	switch major := pre[6]; major {
	case 1:
		var n uint16
		if err := binary.Read(r, binary.LittleEndian, &n); err != nil {
			return h, fmt.Errorf("truncated .npy header")
		}
		size = int(n)
	case 2, 3:
		var n uint32
		if err := binary.Read(r, binary.LittleEndian, &n); err != nil {
			return h, fmt.Errorf("truncated .npy header")
		}
		size = int(n)
	default:
		return h, fmt.Errorf(".npy format %d.%d is not read (1.0, 2.0 and 3.0 are)", major, pre[7])
	}
	if size > 1<<20 {
		return h, fmt.Errorf(".npy header of %d bytes: not a plain array", size)
	}
	buf := make([]byte, size)
	if _, err := io.ReadFull(r, buf); err != nil {
		return h, fmt.Errorf("truncated .npy header")
	}
	header := string(buf)
	m := npyDescr.FindStringSubmatch(header)
	if m == nil {
		return h, fmt.Errorf(".npy header %q has no plain dtype (a structured array?): save one plain numeric array", strings.TrimSpace(header))
	}
	descr := m[1]
	if len(descr) < 2 {
		return h, fmt.Errorf(".npy dtype %q is not read", descr)
	}
	order, kind := descr[0], descr[1:]
	found := false
	for _, t := range npyTypes {
		if t.descr == kind {
			h.typ, found = t.typ, true
		}
	}
	switch {
	case !found:
		return h, fmt.Errorf(".npy dtype %q is not read (hwtest reads %s)", descr, npyTypeList())
	case order == '>' && h.typ.Size() > 1:
		return h, fmt.Errorf(".npy dtype %q is big-endian: save it little-endian (numpy: x.astype('<%s'))", descr, kind)
	case order != '<' && order != '|' && order != '=' && order != '>':
		return h, fmt.Errorf(".npy dtype %q has an unknown byte order", descr)
	}
	m = npyFortran.FindStringSubmatch(header)
	switch {
	case m == nil:
		return h, fmt.Errorf(".npy header %q has no fortran_order", strings.TrimSpace(header))
	case m[1] == "True":
		return h, fmt.Errorf(".npy array is in Fortran order: save it in C order (numpy: numpy.save(path, numpy.ascontiguousarray(x)))")
	}
	m = npyShape.FindStringSubmatch(header)
	if m == nil {
		return h, fmt.Errorf(".npy header %q has no shape", strings.TrimSpace(header))
	}
	h.shape = []int64{}
	for _, part := range strings.Split(m[1], ",") {
		part = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(part), "L"))
		if part == "" {
			continue
		}
		d, err := strconv.ParseInt(part, 10, 64)
		if err != nil || d < 0 {
			return h, fmt.Errorf(".npy shape (%s) is not a list of sizes", m[1])
		}
		h.shape = append(h.shape, d)
	}
	return h, nil
}

func npyTypeList() string {
	names := make([]string, len(npyTypes))
	for i, t := range npyTypes {
		names[i] = t.numpy
	}
	return strings.Join(names, ", ")
}

// npyData reads a .npy file's header, checks that the file holds exactly the data
// the header's shape needs, and leaves f at the first element; n is the element count.
// The size is checked before anything is allocated: a wrong shape must not ask
// for gigabytes.
func npyData(path string) (h npyInfo, f *os.File, n int64, err error) {
	h, f, err = npyHeader(path)
	if err != nil {
		return h, nil, 0, err
	}
	st, err := f.Stat()
	if err == nil {
		var here int64
		here, err = f.Seek(0, io.SeekCurrent)
		if err == nil {
			n, err = checkDataSize(path, h, st.Size()-here)
		}
	}
	if err != nil {
		f.Close()
		return h, nil, 0, err
	}
	return h, f, n, nil
}

// checkDataSize compares the bytes after a header with what its shape needs.
func checkDataSize(path string, h npyInfo, have int64) (int64, error) {
	n, ok := checkedElements(h.shape)
	size := int64(h.typ.Size())
	switch {
	case !ok || n > have/size || n*size > have:
		needs := "more bytes than a file holds"
		if ok {
			needs = fmt.Sprint(n * size)
		}
		return 0, fmt.Errorf("%s is truncated: %d bytes of data, the header's shape %v of %v needs %s: copy the file again, or write it again with numpy.save", path, have, h.shape, h.typ, needs)
	case n*size < have:
		return 0, fmt.Errorf("%s has %d bytes of data, the header's shape %v of %v needs %d: not one array as numpy.save writes it (numpy.savez and appended arrays are not read): save one array per file", path, have, h.shape, h.typ, n*size)
	}
	return n, nil
}

func readNPY(path string) (Tensor, error) {
	h, f, n, err := npyData(path)
	if err != nil {
		return Tensor{}, err
	}
	defer f.Close()
	raw := make([]byte, n*int64(h.typ.Size()))
	if _, err := io.ReadFull(f, raw); err != nil {
		return Tensor{}, fmt.Errorf("%s: %w", path, err)
	}
	pt := onnx.Tensor{Type: h.typ, Dims: h.shape, Raw: raw}
	data, err := pt.Float64s()
	if err != nil {
		return Tensor{}, fmt.Errorf("%s: %w", path, err)
	}
	return Tensor{Type: h.typ, Shape: h.shape, Data: data}, nil
}

// checkedElements is the product of non-negative dims; false when it overflows.
func checkedElements(shape []int64) (int64, bool) {
	n := int64(1)
	for _, d := range shape {
		if d != 0 && n > (1<<62)/d {
			return 0, false
		}
		n *= d
	}
	return n, true
}
