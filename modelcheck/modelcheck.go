// Package modelcheck checks a catalog against its model files, at `hwtest generate`
// and `hwtest verify` time, so that a catalog entry that cannot run is refused where
// it is written instead of failing later inside a suite: an input or output name the
// model lacks, a symbolic dim no dims bind (package shapes), dims of the wrong rank
// or against a fixed dim. It reads the file that would run on this machine (the
// real file when present, else its fixture) with package onnx, without ONNX
// Runtime; zoo: models are built in memory, as `make setup` writes them.
package modelcheck

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/hwtest/hwtest/catalog"
	"github.com/hwtest/hwtest/onnx"
	"github.com/hwtest/hwtest/shapes"
	"github.com/hwtest/hwtest/sources"
	"github.com/hwtest/hwtest/tensorfile"
	"github.com/hwtest/hwtest/zoo"
)

// Result is what Check found.
type Result struct {
	// NotChecked has one line per model whose file is not on this machine, with
	// why and how to get it: not an error, since generating suites needs no model.
	NotChecked []string
	Checked    int // models whose file was read
}

// Check reads, for every model of c, the file that would run under root, and
// reports every problem at once as *catalog.Error values joined, in file order.
func Check(c *catalog.Catalogs, root string) (Result, error) {
	var res Result
	var errs []*catalog.Error
	built := map[string][]byte{} // zoo name -> bytes: a fixture may serve several models
	for _, m := range c.Models {
		sum, fixture, why, err := inspect(root, m, built)
		switch {
		case err != nil:
			errs = append(errs, &catalog.Error{File: c.ModelsFile, Line: m.Line, Column: m.Column,
				Msg: fmt.Sprintf("model %q: %v", m.ID, err)})
			continue
		case sum == nil:
			res.NotChecked = append(res.NotChecked, fmt.Sprintf("not checked: model %q: %s", m.ID, why))
			continue
		}
		res.Checked++
		dir := m.Dir // file inputs are relative to the catalog's folder, as file: sources
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(root, dir)
		}
		errs = append(errs, checkModel(c.ModelsFile, dir, m, sum, fixture)...)
	}
	sort.SliceStable(errs, func(i, j int) bool {
		if errs[i].Line != errs[j].Line {
			return errs[i].Line < errs[j].Line
		}
		return errs[i].Column < errs[j].Column
	})
	all := make([]error, len(errs))
	for i, e := range errs {
		all[i] = e
	}
	return res, errors.Join(all...)
}

// inspect summarises the file that would run for m: its source when present, else
// its fixture (fixture names which). A nil summary with why set means neither is
// on this machine.
func inspect(root string, m catalog.Model, built map[string][]byte) (sum *onnx.Summary, fixture string, why string, err error) {
	src, err := catalog.ParseSource(m.Source)
	if err != nil {
		return nil, "", "", err
	}
	data, why, err := read(root, m.Dir, src, built)
	if err != nil || data == nil && m.Fixture == "" {
		return nil, "", why, err
	}
	if data == nil {
		fx, err := catalog.ParseSource(m.Fixture)
		if err != nil {
			return nil, "", "", err
		}
		if data, why, err = read(root, m.Dir, fx, built); err != nil || data == nil {
			return nil, "", why, err
		}
		fixture = m.Fixture
	}
	sum, err = onnx.Inspect(data)
	if err != nil {
		what := m.Source
		if fixture != "" {
			what = fixture
		}
		return nil, "", "", fmt.Errorf("%s: %w", what, err)
	}
	return sum, fixture, "", nil
}

// read returns a source's model bytes, or nil and why when the file is not here.
func read(root, catalogDir string, src catalog.Source, built map[string][]byte) ([]byte, string, error) {
	if src.Scheme == "zoo" {
		if data, ok := built[src.Name]; ok {
			return data, "", nil
		}
		data, _, err := zoo.Build(src.Name)
		if err != nil {
			return nil, "", fmt.Errorf("%s: %w (`hwtest zoo list` names them)", src, err)
		}
		built[src.Name] = data
		return data, "", nil
	}
	path := sources.LocalPath(root, catalogDir, src)
	data, err := os.ReadFile(path)
	switch {
	case err == nil:
		return data, "", nil
	case !errors.Is(err, os.ErrNotExist):
		return nil, "", err
	}
	shown := path
	if r, err := filepath.Rel(root, path); err == nil && !strings.HasPrefix(r, "..") {
		shown = r
	}
	fix := "run hwtest fetch"
	switch src.Scheme {
	case "hf":
		fix = "run hwtest fetch --hf"
	case "file":
		fix = "put the model there, or fix the path: it is relative to the folder of the catalog"
	}
	return nil, fmt.Sprintf("%s is not on this machine (%s)", shown, fix), nil
}

// checkModel checks one entry against its model file's summary.
func checkModel(file, dir string, m catalog.Model, sum *onnx.Summary, fixture string) []*catalog.Error {
	var errs []*catalog.Error
	against := ""
	if fixture != "" {
		against = fmt.Sprintf(" (checked against its fixture %s: the real file is not on this machine)", fixture)
	}
	at := func(p catalog.Position, format string, args ...any) {
		if p.Line == 0 {
			p = catalog.Position{Line: m.Line, Column: m.Column}
		}
		errs = append(errs, &catalog.Error{File: file, Line: p.Line, Column: p.Column,
			Msg: fmt.Sprintf("model %q: ", m.ID) + fmt.Sprintf(format, args...) + against})
	}

	overrides := map[string]shapes.Override{}
	reported := map[string]bool{} // file inputs whose file is the problem already reported
	for name, in := range m.Inputs {
		// The catalog's overrides describe the real export; its tiny fixture may
		// lack inputs marked real_only (BERT's token_type_ids), as the runtime knows.
		if fixture != "" && in.RealOnly {
			continue
		}
		overrides[name] = shapes.Override{Dims: in.Dims, Values: len(in.Value)}
		// An input from a file has the file's shape, which binds symbols as dims do.
		// The runtime feeds a fixture synthesised values instead (the file is the
		// real export's), following the symbols the others bind.
		if in.File == "" || fixture != "" {
			continue
		}
		info, err := in.FileInfo(dir)
		if err != nil {
			at(catalog.Position{Line: in.Line, Column: in.Column}, "inputs.%s: %v", name, err)
			reported[name] = true
			continue
		}
		if vi, ok := valueInfo(sum.Inputs, name); ok {
			if err := tensorfile.Fit(in.File, info, vi); err != nil {
				// Fit says what is wrong with the file; shapes would say it again.
				at(catalog.Position{Line: in.Line, Column: in.Column}, "inputs.%s: %v", name, err)
				reported[name] = true
			}
		}
		overrides[name] = shapes.Override{Dims: info.Shape, From: in.File}
	}
	// A dim left open is suggested as `hwtest add` would write it, one rule for both.
	plans := onnx.PlanInputs(sum, m.Family)
	inputs := make([]shapes.Input, len(sum.Inputs))
	for i, in := range sum.Inputs {
		inputs[i] = shapes.FromONNX(in.Name, in.Dims)
		if i < len(plans) && plans[i].Name == in.Name && len(plans[i].Dims) == len(in.Dims) {
			inputs[i].Suggest = plans[i].Dims
		}
	}
	_, problems := shapes.Bind(inputs, overrides)
	for _, p := range problems {
		if reported[p.Input] {
			continue
		}
		pos := catalog.Position{}
		if in, ok := m.Inputs[p.Input]; ok {
			pos = catalog.Position{Line: in.Line, Column: in.Column}
		}
		at(pos, "%s", p.Msg)
	}

	outputs := make([]string, len(sum.Outputs))
	for i, o := range sum.Outputs {
		outputs[i] = o.Name
	}
	for _, f := range outputFields(m.Outputs) {
		// state_input names the input the state output is fed back into.
		names, kind := outputs, "output"
		if f.field == "state_input" {
			names, kind = inputNames(sum.Inputs), "input"
		}
		if !slices.Contains(names, f.name) {
			at(m.Outputs.At[f.field], "outputs.%s: %q: the model has no such %s%s (its %ss: %s): use one of them",
				f.field, f.name, kind, catalog.DidYouMean(f.name, names), kind, strings.Join(names, ", "))
		}
	}
	for _, r := range []struct {
		field, name string
		axis        int
	}{{"distribution", m.Outputs.Distribution, m.Outputs.DistributionAxis}, {"ranking", m.Outputs.Ranking, m.Outputs.RankingAxis}} {
		vi, ok := valueInfo(sum.Outputs, r.name)
		if r.axis == 0 || !ok || vi.Unranked { // 0: the last axis; an unknown name is reported above
			continue
		}
		if msg := axisProblem(r.axis, vi); msg != "" {
			at(m.Outputs.At[r.field], "outputs.%s: %s", r.field, msg)
		}
	}

	// Expected outputs hold the real model's answers: a fixture's outputs are not
	// compared with them (the runtime skips them too), so neither are they checked.
	if fixture != "" {
		return errs
	}
	for _, name := range slices.Sorted(maps.Keys(m.Expected)) {
		e := m.Expected[name]
		pos := catalog.Position{Line: e.Line, Column: e.Column}
		vi, ok := valueInfo(sum.Outputs, name)
		if !ok {
			at(pos, "expected.%s: the model has no such output%s (its outputs: %s): use one of them",
				name, catalog.DidYouMean(name, outputs), strings.Join(outputs, ", "))
			continue
		}
		info, err := e.FileInfo(dir)
		if err == nil {
			err = tensorfile.Fit(e.File, info, vi)
		}
		if err != nil {
			at(pos, "expected.%s: %v", name, err)
		}
	}
	return errs
}

// axisProblem says why axis is not one of output v's axes; "" when it is.
// Negative axes count from the end, as the runtime reads them.
func axisProblem(axis int, v onnx.ValueInfo) string {
	rank := len(v.Dims)
	if axis >= -rank && axis < rank {
		return ""
	}
	// The fix names the axes past the batch axis, which a distribution or a
	// ranking never runs along.
	var fix string
	switch {
	case rank <= 1:
		fix = "leave axis out: the output's only axis is the one it runs along"
	case rank == 2:
		fix = "give axis 1 (or -1), or leave axis out: the last axis is the default"
	default:
		fix = fmt.Sprintf("give an axis from 1 to %d, or from -1 to -%d counting from the end", rank-1, rank-1)
	}
	return fmt.Sprintf("axis %d: output %q has shape %s (rank %d): %s", axis, v.Name, shapes.FromONNX(v.Name, v.Dims).ShapeText(), rank, fix)
}

func valueInfo(vs []onnx.ValueInfo, name string) (onnx.ValueInfo, bool) {
	for _, v := range vs {
		if v.Name == name {
			return v, true
		}
	}
	return onnx.ValueInfo{}, false
}

type namedOutput struct{ field, name string }

// outputFields lists the names outputs: gives, by field, in the catalog's order.
func outputFields(o catalog.OutputSpec) []namedOutput {
	var out []namedOutput
	for _, f := range []namedOutput{
		{"primary", o.Primary}, {"state", o.State}, {"state_input", o.StateIn},
		{"probabilities", o.Probabilities}, {"distribution", o.Distribution},
		{"ranking", o.Ranking}, {"router", o.Router},
	} {
		if f.name != "" {
			out = append(out, f)
		}
	}
	return out
}

func inputNames(ins []onnx.ValueInfo) []string {
	names := make([]string, len(ins))
	for i, in := range ins {
		names[i] = in.Name
	}
	return names
}
