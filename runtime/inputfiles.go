package runtime

import (
	"fmt"
	"path/filepath"

	"github.com/hwtest/hwtest/onnx"
	"github.com/hwtest/hwtest/tensorfile"
	ort "github.com/yalue/onnxruntime_go"
)

// catalogFile is where a file models.yaml names lies: relative to the folder of the
// models.yaml naming the model, as file: sources are.
func catalogFile(m Model, name string) (string, error) {
	if filepath.IsAbs(name) {
		return name, nil
	}
	dir := m.CatalogDir
	if !filepath.IsAbs(dir) {
		root, err := Root()
		if err != nil {
			return "", err
		}
		dir = filepath.Join(root, dir)
	}
	return filepath.Join(dir, filepath.FromSlash(name)), nil
}

// imageOf is how an input's image fields read an image file.
func imageOf(in Input) tensorfile.Image {
	return tensorfile.Image{Resize: in.Resize, Layout: in.Layout, Channels: in.Channels, Scale: in.Scale, Mean: in.Mean, Std: in.Std}
}

// valueInfo is an input's metadata as package onnx describes a graph value, which
// is what tensorfile.Fit checks a file against.
func valueInfo(spec InputSpec) onnx.ValueInfo {
	v := onnx.ValueInfo{Name: spec.Name, Type: onnx.DataType(spec.DataType)}
	for i, d := range spec.Dimensions {
		dim := onnx.Dim{Value: d}
		if i < len(spec.Params) {
			dim.Param = spec.Params[i]
		}
		v.Dims = append(v.Dims, dim)
	}
	return v
}

// readInputFiles reads every input models.yaml gives from a file, checked against
// the model's input: its element type (an image's values go to any float type) and
// its fixed dims. Inputs the model lacks are left to SynthesizeInputs to report.
func readInputFiles(m Model, specs []InputSpec, overrides map[string]Input) (map[string]Tensor, []string) {
	files := map[string]Tensor{}
	var errs []string
	for _, spec := range specs {
		ov := overrides[spec.Name]
		if ov.File == "" {
			continue
		}
		path, err := catalogFile(m, ov.File)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		t, err := readInputFile(spec, path, ov)
		if err != nil {
			errs = append(errs, fmt.Sprintf("input %q (inputs.%s.file in models.yaml): %v", spec.Name, spec.Name, err))
			continue
		}
		files[spec.Name] = t
	}
	return files, errs
}

func readInputFile(spec InputSpec, path string, ov Input) (Tensor, error) {
	ft, err := tensorfile.Read(path, imageOf(ov))
	if err != nil {
		return Tensor{}, err
	}
	info := tensorfile.Info{Type: ft.Type, Shape: ft.Shape, AnyFloat: tensorfile.Kind(path) == tensorfile.KindImage}
	if err := tensorfile.Fit(path, info, valueInfo(spec)); err != nil {
		return Tensor{}, err
	}
	// ONNX's element type numbers are ONNX Runtime's; an image's values take the
	// model's float type.
	return Tensor{Name: spec.Name, Type: spec.DataType, Shape: ft.Shape, Data: ft.Data}, nil
}

// readExpected reads an expected output's file as a tensor of the type of the
// output it stands for.
func readExpected(m Model, name string, e Expected, got Tensor) (Tensor, string, error) {
	path, err := catalogFile(m, e.File)
	if err != nil {
		return Tensor{}, "", err
	}
	ft, err := tensorfile.Read(path, tensorfile.Image{})
	if err != nil {
		return Tensor{}, path, err
	}
	want := onnx.ValueInfo{Name: name, Type: onnx.DataType(got.Type)}
	for _, d := range got.Shape {
		want.Dims = append(want.Dims, onnx.Dim{Value: d})
	}
	if err := tensorfile.Fit(path, tensorfile.Info{Type: ft.Type, Shape: ft.Shape}, want); err != nil {
		return Tensor{}, path, fmt.Errorf("expected output %q: %w (the output on %v)", name, err, got.Shape)
	}
	return Tensor{Name: name, Type: ort.TensorElementDataType(ft.Type), Shape: ft.Shape, Data: ft.Data}, path, nil
}
