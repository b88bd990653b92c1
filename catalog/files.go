package catalog

import (
	"fmt"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/hwtest/hwtest/tensorfile"
)

// The fields of an input that say how an image file becomes a tensor.
var imageFields = []string{"resize", "layout", "channels", "scale", "mean", "std"}

// Field lists of the mapping forms below, for the strict decoder.
var (
	expectedFields   = yamlKeys(Expected{})
	outputRoleFields = []string{"output", "axis"}
)

// inputFile decodes an input's file and image fields (see Input.File).
func (d *decoder) inputFile(ctx string, f map[string]field, in *Input) bool {
	valid := true
	v, hasFile := f["file"]
	if hasFile {
		file, ok := d.nonEmpty(ctx+": file", v.value)
		in.File = file
		valid = ok
		if ok && tensorfile.Kind(file) == "" {
			d.errorf(v.value, "%s: file %q: hwtest reads %s files: save the tensor as .npy (numpy.save) or as an ONNX TensorProto .pb", ctx, file, strings.Join(tensorfile.Extensions, ", "))
			valid = false
		}
		for _, k := range []string{"dims", "value", "range"} {
			if g, ok := f[k]; ok {
				d.errorf(g.key, "%s: %s and file do not go together: the file gives the input's values and its shape (which binds the model's symbolic dims)", ctx, k)
				valid = false
			}
		}
	}
	image := hasFile && tensorfile.Kind(in.File) == tensorfile.KindImage
	for _, k := range imageFields {
		g, ok := f[k]
		if !ok {
			continue
		}
		if !image {
			d.errorf(g.key, "%s: %s says how an image becomes a tensor: it goes with file: NAME.png or NAME.jpg", ctx, k)
			valid = false
			continue
		}
		ok = true
		switch k {
		case "resize":
			items, isList := d.sequence(ctx+": resize", g.value)
			ok = isList && len(items) == 2
			for j, item := range items {
				n, isInt := d.integer(fmt.Sprintf("%s: resize[%d]", ctx, j), item)
				ok = ok && isInt && n >= 1
				in.Resize = append(in.Resize, n)
			}
			if isList && !ok {
				d.errorf(g.value, "%s: resize wants [height, width] in pixels, both at least 1", ctx)
			}
		case "layout":
			in.Layout, ok = d.oneOf(ctx, "layout", g.value, tensorfile.Layouts)
		case "channels":
			in.Channels, ok = d.oneOf(ctx, "channels", g.value, tensorfile.ChannelOrder)
		case "scale":
			in.Scale, ok = d.number(ctx+": scale", g.value)
			if ok && in.Scale <= 0 {
				d.errorf(g.value, "%s: scale is %g; pixels (0..255) are divided by it: want a positive number (255 maps them to [0, 1], 1 keeps them)", ctx, in.Scale)
				ok = false
			}
		case "mean":
			in.Mean, ok = d.numbers(ctx+": mean", g.value)
		case "std":
			in.Std, ok = d.numbers(ctx+": std", g.value)
			for _, s := range in.Std {
				if ok && s == 0 {
					d.errorf(g.value, "%s: std has a 0, and every value is divided by it", ctx)
					ok = false
				}
			}
		}
		valid = valid && ok
	}
	channels := 3
	if in.Channels == "gray" {
		channels = 1
	}
	for _, k := range []string{"mean", "std"} {
		xs := in.Mean
		if k == "std" {
			xs = in.Std
		}
		if g, ok := f[k]; ok && image && len(xs) != 1 && len(xs) != channels {
			d.errorf(g.value, "%s: %s has %d values: give one, or one per channel (%d for channels %s)", ctx, k, len(xs), channels, firstNonEmpty(in.Channels, "rgb"))
			valid = false
		}
	}
	return valid
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// expected decodes a model's expected outputs: output name -> {file, tolerance}.
func (d *decoder) expected(ctx string, n *yaml.Node) map[string]Expected {
	ectx := ctx + ": expected"
	m, ok := d.mapping(ectx, n)
	if !ok {
		return nil
	}
	out := map[string]Expected{}
	for _, p := range d.pairs(ectx, m) {
		name, ok := d.nonEmpty(ectx+": output name", p.key)
		if !ok {
			continue
		}
		octx := fmt.Sprintf("%s: output %q", ectx, name)
		mn, ok := d.mapping(octx, p.value)
		if !ok {
			continue
		}
		fs := d.checkFields(octx, d.pairs(octx, mn), expectedFields)
		d.required(octx, mn, fs, "file")
		e := Expected{Line: p.key.Line, Column: p.key.Column}
		valid := len(fs) > 0
		if v, ok := fs["file"]; ok {
			file, ok := d.nonEmpty(octx+": file", v.value)
			e.File = file
			if k := tensorfile.Kind(file); ok && k != tensorfile.KindNPY && k != tensorfile.KindPB {
				d.errorf(v.value, "%s: file %q: an expected output is a .npy (numpy.save) or an ONNX TensorProto .pb file", octx, file)
				ok = false
			}
			valid = valid && ok
		} else {
			valid = false
		}
		if v, ok := fs["tolerance"]; ok {
			t, ok := d.tolerance(octx, v.value)
			e.Tolerance = &t
			valid = valid && ok
		}
		if valid {
			out[name] = e
		}
	}
	return out
}

// outputRole decodes an output role that may take an axis: a name (the last axis)
// or {output: NAME, axis: N}.
func (d *decoder) outputRole(ctx, role string, n *yaml.Node) (name string, axis int) {
	rctx := ctx + ": " + role
	if r := resolve(n); r.Kind != yaml.MappingNode {
		name, _ = d.nonEmpty(rctx, n)
		return name, 0
	}
	mn, _ := d.mapping(rctx, n)
	fs := d.checkFields(rctx, d.pairs(rctx, mn), outputRoleFields)
	d.required(rctx, mn, fs, "output")
	if v, ok := fs["output"]; ok {
		name, _ = d.nonEmpty(rctx+": output", v.value)
	}
	if v, ok := fs["axis"]; ok {
		if a, ok := d.integer(rctx+": axis", v.value); ok {
			if a == 0 {
				d.errorf(v.value, "%s: axis 0 is the batch axis, which a %s never runs along: give the axis of the classes (1 for [batch, classes, 1, 1]; negative counts from the end), or leave axis out for the last one", rctx, role)
			} else if a < -64 || a > 64 {
				d.errorf(v.value, "%s: axis %d: no tensor has that many axes", rctx, a)
			} else {
				axis = int(a)
			}
		}
	}
	return name, axis
}

// FileInfo is the element type and shape an input's file gives (its image fields
// applied), read from the file's header: what a generate-time check compares with
// the model's input. dir is the folder of the models.yaml naming the input
// (Model.Dir). The zero Info and no error for an input without a file.
func (in Input) FileInfo(dir string) (tensorfile.Info, error) {
	if in.File == "" {
		return tensorfile.Info{}, nil
	}
	return tensorfile.Describe(catalogPath(dir, in.File), tensorfile.Image{Resize: in.Resize, Layout: in.Layout, Channels: in.Channels, Scale: in.Scale, Mean: in.Mean, Std: in.Std})
}

// FileInfo is the element type and shape an expected output's file holds, read
// from its header, as Input.FileInfo.
func (e Expected) FileInfo(dir string) (tensorfile.Info, error) {
	return tensorfile.Describe(catalogPath(dir, e.File), tensorfile.Image{})
}

// catalogPath is where a file the catalog in dir names lies: relative to dir.
func catalogPath(dir, name string) string {
	if filepath.IsAbs(name) {
		return name
	}
	return filepath.Join(dir, filepath.FromSlash(name))
}
