// Package tensorfile reads the tensors a catalog names by file: real inputs and
// expected outputs, as NumPy .npy arrays, ONNX TensorProto .pb files (ONNX's own test
// data format) or images (.png, .jpg) resized and normalised as the catalog states.
// It is plain Go (no cgo, no ONNX Runtime), so a generate-time check can read a file's
// type and shape (Describe) and the runtime its values (Read) with the same rules.
package tensorfile

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/hwtest/hwtest/onnx"
)

// Tensor is a tensor read from a file: its element type, shape and values, held as
// float64 whatever the type (64-bit integers beyond 2^53 lose their low bits).
type Tensor struct {
	Type  onnx.DataType
	Shape []int64
	Data  []float64
}

// Info is what a file holds, without its values.
type Info struct {
	Type  onnx.DataType
	Shape []int64
	// AnyFloat: the values may be fed as any float type (an image's are computed,
	// so float16 and double models take them as well as float32 ones).
	AnyFloat bool
}

// Kinds of file, by extension.
const (
	KindNPY   = "npy"
	KindPB    = "pb"
	KindImage = "image"
)

// Extensions lists the file extensions Kind knows, for messages.
var Extensions = []string{".npy", ".pb", ".png", ".jpg", ".jpeg"}

// Kind is the kind of file path names, by its extension (case-insensitive); "" for
// one it does not read.
func Kind(path string) string {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".npy":
		return KindNPY
	case ".pb":
		return KindPB
	case ".png", ".jpg", ".jpeg":
		return KindImage
	}
	return ""
}

// Read reads a tensor file; img says how an image becomes a tensor and must be
// the zero value for .npy and .pb files.
func Read(path string, img Image) (Tensor, error) {
	if k := Kind(path); k != KindImage && k != "" && !img.IsZero() {
		return Tensor{}, fmt.Errorf("%s is a .%s file, not an image: resize, layout, channels, scale, mean and std apply to images only", path, k)
	}
	switch Kind(path) {
	case KindNPY:
		return readNPY(path)
	case KindPB:
		return readPB(path)
	case KindImage:
		return readImage(path, img)
	}
	return Tensor{}, unknownKind(path)
}

// Describe reads what a file holds, not its values: a .npy file's header, checked
// against the file's size (so a truncated file fails here, not at run time), an
// image's size; a .pb file is decoded whole (TensorProto has no separate header).
func Describe(path string, img Image) (Info, error) {
	switch Kind(path) {
	case KindNPY:
		h, f, _, err := npyData(path)
		if err != nil {
			return Info{}, err
		}
		f.Close()
		return Info{Type: h.typ, Shape: h.shape}, nil
	case KindPB:
		t, err := readPB(path)
		return Info{Type: t.Type, Shape: t.Shape}, err
	case KindImage:
		return describeImage(path, img)
	}
	return Info{}, unknownKind(path)
}

func unknownKind(path string) error {
	return fmt.Errorf("%s: hwtest reads %s files; save the tensor as .npy (numpy.save) or as an ONNX TensorProto .pb", path, strings.Join(Extensions, ", "))
}

func readPB(path string) (Tensor, error) {
	pt, err := onnx.ReadTensorFile(path)
	if err != nil {
		return Tensor{}, err
	}
	if pt.Type == onnx.StringType {
		return Tensor{}, fmt.Errorf("%s holds strings; hwtest reads numeric tensors only", path)
	}
	data, err := pt.Float64s()
	if err != nil {
		return Tensor{}, fmt.Errorf("%s: %w", path, err)
	}
	return Tensor{Type: pt.Type, Shape: append([]int64{}, pt.Dims...), Data: data}, nil
}

// Fit checks that a file's tensor can feed (or stand for) the model value want:
// the same element type and rank, and every fixed dim equal. Symbolic dims take the
// file's size; the caller binds them across inputs. The message names the file and
// the fix.
func Fit(path string, got Info, want onnx.ValueInfo) error {
	if got.AnyFloat && !isFloat(want.Type) {
		return fmt.Errorf("%s is an image, read as float values, and %q is %v: hwtest feeds images to float inputs only; save the tensor you want as .npy instead", path, want.Name, want.Type)
	}
	if got.Type != want.Type && !got.AnyFloat {
		// ONNX's type names and numpy's differ (float is float32, double float64):
		// the user saved the file with numpy, so both are given.
		return fmt.Errorf("%s holds %v (numpy %s), %q is %v: save it as %v (numpy %s: x.astype(numpy.%s))", path, got.Type, numpyName(got.Type), want.Name, want.Type, want.Type, numpyName(want.Type), numpyName(want.Type))
	}
	if want.Unranked {
		return nil
	}
	if len(got.Shape) != len(want.Dims) {
		return fmt.Errorf("%s has shape %v (rank %d), %q has shape %s (rank %d): save it with that rank", path, got.Shape, len(got.Shape), want.Name, dimsText(want.Dims), len(want.Dims))
	}
	for i, d := range want.Dims {
		if d.Param == "" && d.Value >= 0 && d.Value != got.Shape[i] {
			return fmt.Errorf("%s has shape %v, %q has shape %s: dim %d must be %d", path, got.Shape, want.Name, dimsText(want.Dims), i, d.Value)
		}
	}
	return nil
}

func isFloat(t onnx.DataType) bool {
	return t == onnx.Float32 || t == onnx.Float16 || t == onnx.Float64
}

func dimsText(dims []onnx.Dim) string {
	parts := make([]string, len(dims))
	for i, d := range dims {
		parts[i] = d.String()
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// numpyName is the NumPy dtype name of an ONNX element type, for the fix a message gives.
func numpyName(t onnx.DataType) string {
	for _, d := range npyTypes {
		if d.typ == t {
			return d.numpy
		}
	}
	return strings.ToLower(t.String())
}

// Elements is the number of elements a shape holds.
func Elements(shape []int64) int64 {
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	return n
}
