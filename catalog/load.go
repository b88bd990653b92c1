package catalog

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Load reads and validates both catalogs. Messages name the files as given.
func Load(modelsPath, hardwarePath string) (*Catalogs, error) {
	models, errM := readCatalog(modelsPath)
	hardware, errH := readCatalog(hardwarePath)
	if err := errors.Join(errM, errH); err != nil {
		return nil, fmt.Errorf("read catalogs: %w", err)
	}
	c, err := parse(models, hardware)
	if err != nil {
		return nil, err
	}
	// Absolute, since suites run in their package folders: a file: source must not
	// depend on where the command that loaded the catalog was started.
	dir, err := filepath.Abs(c.ModelsDir)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", modelsPath, err)
	}
	c.setModelsDir(dir)
	return c, nil
}

func (c *Catalogs) setModelsDir(dir string) {
	c.ModelsDir = dir
	for i := range c.Models {
		c.Models[i].Dir = dir
	}
}

// catalogFile is one catalog's text, named for messages. size is the file's size,
// which for a file too large to be a catalog is more than the text read (none).
type catalogFile struct {
	name string
	data []byte
	size int64
}

// readCatalog reads a file, unless it is larger than a catalog may be: then only
// its size, for parse to report, so a wrong path to a huge file costs nothing.
func readCatalog(path string) (catalogFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return catalogFile{}, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return catalogFile{}, err
	}
	if info.Size() > maxFileBytes {
		return catalogFile{name: path, size: info.Size()}, nil
	}
	// A file that grows while read (or a pipe, whose size is 0) still stops at the limit.
	data, err := io.ReadAll(io.LimitReader(f, maxFileBytes+1))
	return catalogFile{name: path, data: data, size: max(info.Size(), int64(len(data)))}, err
}

// Parse decodes and validates both catalogs from memory; it reads no file, so the
// file: sources are checked for syntax only. On failure the error joins every
// *Error found, models file first, each file's in order of position.
func Parse(modelsName string, modelsData []byte, hardwareName string, hardwareData []byte) (*Catalogs, error) {
	return parse(catalogFile{modelsName, modelsData, int64(len(modelsData))},
		catalogFile{hardwareName, hardwareData, int64(len(hardwareData))})
}

func parse(m, h catalogFile) (*Catalogs, error) {
	md := &decoder{file: m.name}
	var models []Model
	if md.sizeOK(m.size) {
		models = md.models(md.topLevel(md.document(m.data), "models", "models"))
	}
	hd := &decoder{file: h.name}
	var targets []Target
	if hd.sizeOK(h.size) {
		targets = hd.targets(hd.topLevel(hd.document(h.data), "targets", "hardware targets"))
	}

	sortErrors(md.errs)
	sortErrors(hd.errs)
	all := make([]error, 0, len(md.errs)+len(hd.errs))
	for _, e := range append(md.errs, hd.errs...) {
		all = append(all, e)
	}
	if len(all) > 0 {
		return nil, errors.Join(all...)
	}
	c := &Catalogs{Models: models, Targets: targets, ModelsFile: m.name, HardwareFile: h.name}
	c.setModelsDir(filepath.Dir(m.name))
	return c, nil
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
