package catalog

import (
	"bytes"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hwtest/hwtest/onnx"
)

// FileInfo reads an input file's type and shape relative to the catalog's folder,
// the image fields applied.
func TestInputFileInfo(t *testing.T) {
	dir := t.TempDir()
	img := image.NewNRGBA(image.Rect(0, 0, 5, 4))
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "cat.png"), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		in   Input
		want []int64
	}{
		{Input{File: "cat.png"}, []int64{1, 3, 4, 5}},
		{Input{File: "cat.png", Resize: []int64{8, 8}, Layout: "nhwc", Channels: "gray"}, []int64{1, 8, 8, 1}},
	} {
		info, err := c.in.FileInfo(dir)
		if err != nil || info.Type != onnx.Float32 || !slices.Equal(info.Shape, c.want) {
			t.Errorf("%+v: %+v, %v; want float %v", c.in, info, err, c.want)
		}
	}
	if _, err := (Input{File: "dog.npy"}).FileInfo(dir); err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "dog.npy")) {
		t.Errorf("a missing file: %v", err)
	}
}
