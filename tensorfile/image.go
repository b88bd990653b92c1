package tensorfile

import (
	"fmt"
	"image"
	"image/color"
	_ "image/jpeg" // registers the decoder image.Decode uses for .jpg
	_ "image/png"
	"math"
	"os"

	"github.com/hwtest/hwtest/onnx"
)

// Image says how an image file becomes a tensor; models.yaml documents the fields.
// A zero field takes its default: the image's own size, layout nchw, channels rgb,
// scale 255, mean 0, std 1. Each value is (pixel/scale - mean[c]) / std[c], pixel
// in 0..255 (a 16-bit image is read at 8 bits; alpha is dropped), as float32 of
// shape [1, C, H, W] (nchw) or [1, H, W, C] (nhwc).
type Image struct {
	// Resize is [height, width]: bilinear with half-pixel centres and no
	// antialiasing (OpenCV's INTER_LINEAR, PyTorch's interpolate with
	// align_corners=False), before normalising.
	Resize   []int64
	Layout   string    // nchw or nhwc
	Channels string    // rgb, bgr or gray (ITU-R 601 luma, as Go's color.GrayModel)
	Scale    float64   // pixels are divided by it first
	Mean     []float64 // one value, or one per channel
	Std      []float64 // one value, or one per channel
}

// Layouts and Channels an Image may name; the first is the default.
var (
	Layouts      = []string{"nchw", "nhwc"}
	ChannelOrder = []string{"rgb", "bgr", "gray"}
)

// DefaultScale maps 8-bit pixels to [0, 1].
const DefaultScale = 255

// IsZero reports whether no image field is set.
func (o Image) IsZero() bool {
	return o.Resize == nil && o.Layout == "" && o.Channels == "" && o.Scale == 0 && o.Mean == nil && o.Std == nil
}

func (o Image) channels() int {
	if o.Channels == "gray" {
		return 1
	}
	return 3
}

// shape is the tensor's shape for an image of height h and width w (after resize).
func (o Image) shape(h, w int64) []int64 {
	c := int64(o.channels())
	if o.Layout == "nhwc" {
		return []int64{1, h, w, c}
	}
	return []int64{1, c, h, w}
}

// check refuses options Read could only misapply.
func (o Image) check() error {
	if o.Resize != nil && (len(o.Resize) != 2 || o.Resize[0] < 1 || o.Resize[1] < 1) {
		return fmt.Errorf("resize %v: want [height, width], both at least 1", o.Resize)
	}
	if o.Layout != "" && o.Layout != "nchw" && o.Layout != "nhwc" {
		return fmt.Errorf("layout %q: want nchw or nhwc", o.Layout)
	}
	if o.Channels != "" && o.Channels != "rgb" && o.Channels != "bgr" && o.Channels != "gray" {
		return fmt.Errorf("channels %q: want rgb, bgr or gray", o.Channels)
	}
	if o.Scale < 0 || math.IsNaN(o.Scale) {
		return fmt.Errorf("scale %g: want a positive number", o.Scale)
	}
	for _, p := range []struct {
		name string
		xs   []float64
	}{{"mean", o.Mean}, {"std", o.Std}} {
		if p.xs != nil && len(p.xs) != 1 && len(p.xs) != o.channels() {
			return fmt.Errorf("%s has %d values: give one, or one per channel (%d)", p.name, len(p.xs), o.channels())
		}
	}
	for _, s := range o.Std {
		if s == 0 {
			return fmt.Errorf("std has a 0: every value is divided by it")
		}
	}
	return nil
}

func describeImage(path string, o Image) (Info, error) {
	if err := o.check(); err != nil {
		return Info{}, fmt.Errorf("%s: %w", path, err)
	}
	f, err := os.Open(path)
	if err != nil {
		return Info{}, err
	}
	defer f.Close()
	cfg, _, err := image.DecodeConfig(f)
	if err != nil {
		return Info{}, fmt.Errorf("%s: not a PNG or JPEG image: %w", path, err)
	}
	h, w := int64(cfg.Height), int64(cfg.Width)
	if o.Resize != nil {
		h, w = o.Resize[0], o.Resize[1]
	}
	return Info{Type: onnx.Float32, Shape: o.shape(h, w), AnyFloat: true}, nil
}

func readImage(path string, o Image) (Tensor, error) {
	if err := o.check(); err != nil {
		return Tensor{}, fmt.Errorf("%s: %w", path, err)
	}
	f, err := os.Open(path)
	if err != nil {
		return Tensor{}, err
	}
	defer f.Close()
	img, _, err := image.Decode(f)
	if err != nil {
		return Tensor{}, fmt.Errorf("%s: not a PNG or JPEG image: %w", path, err)
	}
	planes := pixelPlanes(img, o.Channels)
	b := img.Bounds()
	h, w := b.Dy(), b.Dx()
	if o.Resize != nil {
		oh, ow := int(o.Resize[0]), int(o.Resize[1])
		for c := range planes {
			planes[c] = resizeBilinear(planes[c], h, w, oh, ow)
		}
		h, w = oh, ow
	}
	scale := o.Scale
	if scale == 0 {
		scale = DefaultScale
	}
	nc := len(planes)
	data := make([]float64, nc*h*w)
	for c, plane := range planes {
		mean, std := at(o.Mean, c, 0), at(o.Std, c, 1)
		for i, p := range plane {
			v := float64(float32((p/scale - mean) / std)) // the float32 the model is fed
			if o.Layout == "nhwc" {
				data[i*nc+c] = v
			} else {
				data[c*h*w+i] = v
			}
		}
	}
	return Tensor{Type: onnx.Float32, Shape: o.shape(int64(h), int64(w)), Data: data}, nil
}

// at is xs[c], xs[0] for a single value, def for none.
func at(xs []float64, c int, def float64) float64 {
	switch len(xs) {
	case 0:
		return def
	case 1:
		return xs[0]
	}
	return xs[c]
}

// pixelPlanes reads an image as one plane per channel, row by row, values 0..255.
func pixelPlanes(img image.Image, channels string) [][]float64 {
	b := img.Bounds()
	n := b.Dx() * b.Dy()
	if channels == "gray" {
		g := make([]float64, 0, n)
		for y := b.Min.Y; y < b.Max.Y; y++ {
			for x := b.Min.X; x < b.Max.X; x++ {
				g = append(g, float64(color.GrayModel.Convert(img.At(x, y)).(color.Gray).Y))
			}
		}
		return [][]float64{g}
	}
	r, gr, bl := make([]float64, 0, n), make([]float64, 0, n), make([]float64, 0, n)
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			c := color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA)
			r, gr, bl = append(r, float64(c.R)), append(gr, float64(c.G)), append(bl, float64(c.B))
		}
	}
	if channels == "bgr" {
		return [][]float64{bl, gr, r}
	}
	return [][]float64{r, gr, bl}
}

// resizeBilinear resamples a plane of h×w to oh×ow: each output pixel's centre
// maps to (o+0.5)·in/out − 0.5 in the input, clamped to its edge, and is the
// bilinear blend of the four pixels around it.
func resizeBilinear(src []float64, h, w, oh, ow int) []float64 {
	out := make([]float64, oh*ow)
	for y := 0; y < oh; y++ {
		y0, y1, fy := sample(y, h, oh)
		for x := 0; x < ow; x++ {
			x0, x1, fx := sample(x, w, ow)
			top := src[y0*w+x0]*(1-fx) + src[y0*w+x1]*fx
			bottom := src[y1*w+x0]*(1-fx) + src[y1*w+x1]*fx
			out[y*ow+x] = top*(1-fy) + bottom*fy
		}
	}
	return out
}

// sample is where output position o of n falls in an input of size in: the two
// input positions around it and the weight of the second.
func sample(o, in, n int) (lo, hi int, frac float64) {
	s := (float64(o)+0.5)*float64(in)/float64(n) - 0.5
	s = max(0, min(s, float64(in-1)))
	lo = int(math.Floor(s))
	hi = min(lo+1, in-1)
	return lo, hi, s - float64(lo)
}
