package catalog

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Load reads and validates both catalogs. Messages name the files as given.
func Load(modelsPath, hardwarePath string) (*Catalogs, error) {
	models, errM := os.ReadFile(modelsPath)
	hardware, errH := os.ReadFile(hardwarePath)
	if err := errors.Join(errM, errH); err != nil {
		return nil, fmt.Errorf("read catalogs: %w", err)
	}
	return Parse(modelsPath, models, hardwarePath, hardware)
}

// Parse decodes and validates both catalogs from memory; it reads no file, so the
// file: sources are checked for syntax only. On failure the error joins every
// *Error found, models file first, each file's in order of position.
func Parse(modelsName string, modelsData []byte, hardwareName string, hardwareData []byte) (*Catalogs, error) {
	md := &decoder{file: modelsName}
	models := md.models(md.topLevel(md.document(modelsData), "models", "models"))
	hd := &decoder{file: hardwareName}
	targets := hd.targets(hd.topLevel(hd.document(hardwareData), "targets", "hardware targets"))

	sortErrors(md.errs)
	sortErrors(hd.errs)
	all := make([]error, 0, len(md.errs)+len(hd.errs))
	for _, e := range append(md.errs, hd.errs...) {
		all = append(all, e)
	}
	if len(all) > 0 {
		return nil, errors.Join(all...)
	}
	return &Catalogs{Models: models, Targets: targets, ModelsFile: modelsName, HardwareFile: hardwareName}, nil
}

// Target returns the target with the given id.
func (c *Catalogs) Target(id string) (Target, bool) {
	for _, t := range c.Targets {
		if t.ID == id {
			return t, true
		}
	}
	return Target{}, false
}

// Model returns the model with the given id.
func (c *Catalogs) Model(id string) (Model, bool) {
	for _, m := range c.Models {
		if m.ID == id {
			return m, true
		}
	}
	return Model{}, false
}

// ModelsByFamily groups the models by family, each group in file order. Ranging
// over the map is unordered: iterate Families for a stable order.
func (c *Catalogs) ModelsByFamily() map[string][]Model {
	out := map[string][]Model{}
	for _, m := range c.Models {
		out[m.Family] = append(out[m.Family], m)
	}
	return out
}

// EffectiveSource is the source a run uses: the fixture when one is set (an
// offline stand-in for a model that cannot be fetched here), else the source.
func (m Model) EffectiveSource() string {
	if m.Fixture != "" {
		return m.Fixture
	}
	return m.Source
}

// FilePath resolves a file: source against the directory of the models file; false
// when the source is not a file: source.
func (c *Catalogs) FilePath(source string) (string, bool) {
	src, err := ParseSource(source)
	if err != nil || src.Scheme != "file" {
		return "", false
	}
	return filepath.Join(filepath.Dir(c.ModelsFile), filepath.FromSlash(src.Path)), true
}
