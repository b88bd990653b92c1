package tensorfile_test

import (
	"bytes"
	"encoding/binary"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hwtest/hwtest/onnx"
	"github.com/hwtest/hwtest/tensorfile"
	"github.com/hwtest/hwtest/tensorfile/tensorfiletest"
)

func TestReadNPYTypes(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		descr string
		typ   onnx.DataType
		data  []float64
	}{
		{"<f4", onnx.Float32, []float64{0.5, -1.25, 3, 1e-3, 7, 8}},
		{"<f8", onnx.Float64, []float64{0.1, -1.25, 3, 1e-300, 7, 8}},
		{"<f2", onnx.Float16, []float64{0.5, -1.25, 3, 1024, 7, 8}},
		{"<i8", onnx.Int64, []float64{-3, 1 << 40, 0, 1, 2, 3}},
		{"<i4", onnx.Int32, []float64{-3, 1 << 30, 0, 1, 2, 3}},
		{"<i2", onnx.Int16, []float64{-3, 30000, 0, 1, 2, 3}},
		{"|i1", onnx.Int8, []float64{-128, 127, 0, 1, 2, 3}},
		{"|u1", onnx.Uint8, []float64{255, 0, 1, 2, 3, 4}},
		{"|b1", onnx.Bool, []float64{1, 0, 0, 1, 1, 0}},
	} {
		path := tensorfiletest.NPY(t, filepath.Join(dir, c.descr[1:]+".npy"), c.descr, []int64{2, 3}, c.data)
		got, err := tensorfile.Read(path, tensorfile.Image{})
		if err != nil {
			t.Fatalf("%s: %v", c.descr, err)
		}
		want := slices.Clone(c.data)
		if c.typ == onnx.Float32 {
			for i := range want {
				want[i] = float64(float32(want[i]))
			}
		}
		if got.Type != c.typ || !slices.Equal(got.Shape, []int64{2, 3}) || !slices.Equal(got.Data, want) {
			t.Errorf("%s: got %v %v %v, want %v [2 3] %v", c.descr, got.Type, got.Shape, got.Data, c.typ, want)
		}
		info, err := tensorfile.Describe(path, tensorfile.Image{})
		if err != nil || info.Type != c.typ || !slices.Equal(info.Shape, []int64{2, 3}) {
			t.Errorf("%s: Describe = %+v, %v", c.descr, info, err)
		}
	}
}

// A header of format 2.0 (4-byte length) and a scalar and a 1-D shape read too.
func TestReadNPYFormats(t *testing.T) {
	dir := t.TempDir()
	header := "{'descr': '<f8', 'fortran_order': False, 'shape': (), }\n"
	var b bytes.Buffer
	b.WriteString("\x93NUMPY\x02\x00")
	binary.Write(&b, binary.LittleEndian, uint32(len(header)))
	b.WriteString(header)
	binary.Write(&b, binary.LittleEndian, math.Float64bits(2.5))
	path := filepath.Join(dir, "v2.npy")
	os.WriteFile(path, b.Bytes(), 0o644)
	got, err := tensorfile.Read(path, tensorfile.Image{})
	if err != nil || len(got.Shape) != 0 || !slices.Equal(got.Data, []float64{2.5}) {
		t.Fatalf("format 2.0 scalar: %+v, %v", got, err)
	}
	one := tensorfiletest.NPY(t, filepath.Join(dir, "one.npy"), "<i8", []int64{3}, []float64{4, 5, 6})
	got, err = tensorfile.Read(one, tensorfile.Image{})
	if err != nil || !slices.Equal(got.Shape, []int64{3}) || !slices.Equal(got.Data, []float64{4, 5, 6}) {
		t.Fatalf("1-D: %+v, %v", got, err)
	}
}

func TestReadNPYRefuses(t *testing.T) {
	dir := t.TempDir()
	write := func(name, header string, data []byte) string {
		header += strings.Repeat(" ", (64-(10+len(header)+1)%64)%64) + "\n"
		var b bytes.Buffer
		b.WriteString("\x93NUMPY\x01\x00")
		binary.Write(&b, binary.LittleEndian, uint16(len(header)))
		b.WriteString(header)
		b.Write(data)
		p := filepath.Join(dir, name)
		os.WriteFile(p, b.Bytes(), 0o644)
		return p
	}
	eight := make([]byte, 8)
	for name, c := range map[string]struct {
		path, want string
	}{
		"fortran":    {write("f.npy", "{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }", eight), "Fortran order: save it in C order"},
		"big-endian": {write("b.npy", "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", eight), "big-endian: save it little-endian (numpy: x.astype('<f4'))"},
		"complex":    {write("c.npy", "{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", eight), `dtype "<c8" is not read`},
		"truncated":  {write("t.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", eight), "is truncated: 8 bytes of data, the header's shape [3] of float needs 12"},
		"too long":   {write("l.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", eight), "has 8 bytes of data, the header's shape [1] of float needs 4"},
		"huge":       {write("h.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (1000000000, 1000000000), }", eight), "is truncated: 8 bytes of data, the header's shape [1000000000 1000000000] of float needs 4000000000000000000"},
		"not npy":    {filepath.Join(dir, "x.npy"), "not a NumPy .npy file"},
	} {
		if name == "not npy" {
			os.WriteFile(c.path, []byte("hello, world"), 0o644)
		}
		_, err := tensorfile.Read(c.path, tensorfile.Image{})
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.path) {
			t.Errorf("%s: %v, want an error naming the file and saying %q", name, err, c.want)
		}
		// generate checks files with Describe: it refuses what Read refuses.
		_, err = tensorfile.Describe(c.path, tensorfile.Image{})
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.path) {
			t.Errorf("%s: Describe: %v, want an error naming the file and saying %q", name, err, c.want)
		}
	}
	if _, err := tensorfile.Read(filepath.Join(dir, "x.csv"), tensorfile.Image{}); err == nil || !strings.Contains(err.Error(), ".npy, .pb, .png, .jpg, .jpeg") {
		t.Errorf("csv: %v", err)
	}
}

// Describe closes the file it reads: generate describes every file input of a
// catalog, and a descriptor left open per file would run out on a large one.
func TestDescribeClosesTheFile(t *testing.T) {
	fds := func() int {
		ents, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Skip("no /proc/self/fd to count open files")
		}
		return len(ents)
	}
	path := tensorfiletest.NPY(t, filepath.Join(t.TempDir(), "x.npy"), "<f4", []int64{2}, []float64{1, 2})
	before := fds()
	for i := 0; i < 20; i++ {
		if _, err := tensorfile.Describe(path, tensorfile.Image{}); err != nil {
			t.Fatal(err)
		}
	}
	if after := fds(); after > before {
		t.Errorf("%d files open after 20 Describes, %d before", after, before)
	}
}

// A .pb file is decoded whole, so a truncated one is refused by Describe too.
func TestDescribeTruncatedPB(t *testing.T) {
	raw := binary.LittleEndian.AppendUint64(nil, 7)
	raw = binary.LittleEndian.AppendUint64(raw, 8)
	pt := onnx.Tensor{Name: "x", Type: onnx.Int64, Dims: []int64{1, 2}, Raw: raw}
	b := pt.Marshal()
	path := filepath.Join(t.TempDir(), "input_0.pb")
	os.WriteFile(path, b[:len(b)-4], 0o644)
	if _, err := tensorfile.Describe(path, tensorfile.Image{}); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("truncated .pb: %v, want an error naming the file", err)
	}
}

func TestReadPB(t *testing.T) {
	raw := make([]byte, 0, 16)
	for _, x := range []int64{7, -2} {
		raw = binary.LittleEndian.AppendUint64(raw, uint64(x))
	}
	pt := onnx.Tensor{Name: "x", Type: onnx.Int64, Dims: []int64{1, 2}, Raw: raw}
	path := filepath.Join(t.TempDir(), "input_0.pb")
	os.WriteFile(path, pt.Marshal(), 0o644)
	got, err := tensorfile.Read(path, tensorfile.Image{})
	if err != nil || got.Type != onnx.Int64 || !slices.Equal(got.Shape, []int64{1, 2}) || !slices.Equal(got.Data, []float64{7, -2}) {
		t.Fatalf("got %+v, %v", got, err)
	}
	if _, err := tensorfile.Read(path, tensorfile.Image{Scale: 1}); err == nil || !strings.Contains(err.Error(), "apply to images only") {
		t.Errorf("image options on a .pb: %v", err)
	}
}

// colours of a 3×2 test image, row by row.
var colours = []color.NRGBA{
	{10, 20, 30, 255}, {40, 50, 60, 255}, {70, 80, 90, 255},
	{255, 0, 128, 255}, {1, 2, 3, 255}, {200, 100, 50, 255},
}

func writePNG(t *testing.T, path string, w, h int, px []color.NRGBA) string {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for i, c := range px {
		img.SetNRGBA(i%w, i/w, c)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := png.Encode(f, img); err != nil {
		t.Fatal(err)
	}
	return path
}

// Each value is (pixel/scale - mean[c]) / std[c] as float32, in NCHW or NHWC.
func TestReadImageNormalises(t *testing.T) {
	path := writePNG(t, filepath.Join(t.TempDir(), "x.png"), 3, 2, colours)
	mean, std := []float64{0.485, 0.456, 0.406}, []float64{0.229, 0.224, 0.225}
	want := func(c int, px color.NRGBA, order string) float64 {
		v := [3]uint8{px.R, px.G, px.B}
		if order == "bgr" {
			v = [3]uint8{px.B, px.G, px.R}
		}
		return float64(float32((float64(v[c])/255 - mean[c]) / std[c]))
	}
	for _, layout := range []string{"", "nchw", "nhwc"} {
		for _, order := range []string{"", "rgb", "bgr"} {
			o := tensorfile.Image{Layout: layout, Channels: order, Mean: mean, Std: std}
			got, err := tensorfile.Read(path, o)
			if err != nil {
				t.Fatal(err)
			}
			shape := []int64{1, 3, 2, 3}
			if layout == "nhwc" {
				shape = []int64{1, 2, 3, 3}
			}
			if got.Type != onnx.Float32 || !slices.Equal(got.Shape, shape) {
				t.Fatalf("%s %s: %v %v, want float %v", layout, order, got.Type, got.Shape, shape)
			}
			for i, px := range colours {
				for c := 0; c < 3; c++ {
					at := c*6 + i
					if layout == "nhwc" {
						at = i*3 + c
					}
					if w := want(c, px, order); got.Data[at] != w {
						t.Fatalf("%s %s: pixel %d channel %d = %v, want %v", layout, order, i, c, got.Data[at], w)
					}
				}
			}
			info, err := tensorfile.Describe(path, o)
			if err != nil || !slices.Equal(info.Shape, shape) || !info.AnyFloat {
				t.Errorf("Describe: %+v, %v", info, err)
			}
		}
	}
	// Defaults: scale 255, no mean, std 1; gray is ITU-R 601 luma.
	got, err := tensorfile.Read(path, tensorfile.Image{Channels: "gray", Scale: 1})
	if err != nil || !slices.Equal(got.Shape, []int64{1, 1, 2, 3}) {
		t.Fatalf("gray: %v %v", got.Shape, err)
	}
	for i, px := range colours {
		luma := (19595*uint32(px.R)*0x101 + 38470*uint32(px.G)*0x101 + 7471*uint32(px.B)*0x101 + 1<<15) >> 24
		if got.Data[i] != float64(luma) {
			t.Errorf("gray pixel %d = %v, want %d", i, got.Data[i], luma)
		}
	}
	got, _ = tensorfile.Read(path, tensorfile.Image{})
	if got.Data[0] != float64(float32(10.0/255)) {
		t.Errorf("default normalisation: %v, want 10/255", got.Data[0])
	}
}

// Bilinear with half-pixel centres: halving averages each 2×2 block; doubling
// blends neighbours 3:1 and clamps at the edges.
func TestReadImageResizes(t *testing.T) {
	dir := t.TempDir()
	var px []color.NRGBA
	for i := 0; i < 16; i++ {
		px = append(px, color.NRGBA{uint8(i * 10), 0, 0, 255})
	}
	path := writePNG(t, filepath.Join(dir, "4x4.png"), 4, 4, px)
	got, err := tensorfile.Read(path, tensorfile.Image{Resize: []int64{2, 2}, Scale: 1})
	if err != nil || !slices.Equal(got.Shape, []int64{1, 3, 2, 2}) {
		t.Fatalf("%v %v", got.Shape, err)
	}
	// Block (0,0) holds 0, 10, 40, 50.
	if want := []float64{25, 45, 105, 125}; !slices.Equal(got.Data[:4], want) {
		t.Errorf("halved: %v, want %v", got.Data[:4], want)
	}
	small := writePNG(t, filepath.Join(dir, "2x1.png"), 2, 1, []color.NRGBA{{0, 0, 0, 255}, {200, 0, 0, 255}})
	got, err = tensorfile.Read(small, tensorfile.Image{Resize: []int64{1, 4}, Scale: 1})
	if err != nil {
		t.Fatal(err)
	}
	if want := []float64{0, 50, 150, 200}; !slices.Equal(got.Data[:4], want) {
		t.Errorf("doubled: %v, want %v", got.Data[:4], want)
	}
}

func TestReadJPEG(t *testing.T) {
	img := image.NewNRGBA(image.Rect(0, 0, 16, 8))
	for i := range img.Pix {
		img.Pix[i] = []uint8{120, 60, 200, 255}[i%4]
	}
	path := filepath.Join(t.TempDir(), "x.JPG")
	f, _ := os.Create(path)
	if err := jpeg.Encode(f, img, &jpeg.Options{Quality: 100}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	got, err := tensorfile.Read(path, tensorfile.Image{Scale: 1})
	if err != nil || !slices.Equal(got.Shape, []int64{1, 3, 8, 16}) {
		t.Fatalf("%v %v", got.Shape, err)
	}
	// JPEG is lossy: a flat colour comes back within a few levels.
	for c, want := range []float64{120, 60, 200} {
		if v := got.Data[c*128]; math.Abs(v-want) > 3 {
			t.Errorf("channel %d = %v, want about %v", c, v, want)
		}
	}
}

func TestImageOptionsRefused(t *testing.T) {
	path := writePNG(t, filepath.Join(t.TempDir(), "x.png"), 3, 2, colours)
	for _, c := range []struct {
		o    tensorfile.Image
		want string
	}{
		{tensorfile.Image{Resize: []int64{3}}, "want [height, width]"},
		{tensorfile.Image{Layout: "chw"}, "want nchw or nhwc"},
		{tensorfile.Image{Mean: []float64{1, 2}}, "mean has 2 values: give one, or one per channel (3)"},
		{tensorfile.Image{Std: []float64{0}}, "std has a 0"},
	} {
		if _, err := tensorfile.Read(path, c.o); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.o, err, c.want)
		}
	}
}

func TestFit(t *testing.T) {
	in := onnx.ValueInfo{Name: "pixel_values", Type: onnx.Float32, Dims: []onnx.Dim{{Param: "batch"}, {Value: 3}, {Value: 224}, {Value: 224}}}
	for _, c := range []struct {
		info tensorfile.Info
		want string
	}{
		{tensorfile.Info{Type: onnx.Float32, Shape: []int64{2, 3, 224, 224}}, ""},
		{tensorfile.Info{Type: onnx.Float64, Shape: []int64{1, 3, 224, 224}}, `x.npy holds double (numpy float64), "pixel_values" is float: save it as float (numpy float32: x.astype(numpy.float32))`},
		{tensorfile.Info{Type: onnx.Float32, Shape: []int64{3, 224, 224}}, `x.npy has shape [3 224 224] (rank 3), "pixel_values" has shape [batch, 3, 224, 224] (rank 4)`},
		{tensorfile.Info{Type: onnx.Float32, Shape: []int64{1, 3, 256, 224}}, "dim 2 must be 224"},
		{tensorfile.Info{Type: onnx.Float32, Shape: []int64{1, 3, 224, 224}, AnyFloat: true}, ""},
	} {
		err := tensorfile.Fit("x.npy", c.info, in)
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%+v: %v, want %q", c.info, err, c.want)
		}
	}
	half := in
	half.Type = onnx.Float16
	if err := tensorfile.Fit("x.png", tensorfile.Info{Type: onnx.Float32, Shape: []int64{1, 3, 224, 224}, AnyFloat: true}, half); err != nil {
		t.Errorf("an image feeds a float16 input: %v", err)
	}
	ints := in
	ints.Type = onnx.Uint8
	if err := tensorfile.Fit("x.png", tensorfile.Info{Type: onnx.Float32, Shape: []int64{1, 3, 224, 224}, AnyFloat: true}, ints); err == nil || !strings.Contains(err.Error(), "float inputs only") {
		t.Errorf("an image and a uint8 input: %v", err)
	}
}
