// Package sources resolves a catalog source (file:, zoo:, npm:, hf:) to the local
// file it lives in, and fetches it there. The layout is shared by `make setup`, which
// fills it, and the runtime, which reads it.
package sources

import (
	"fmt"

	"github.com/hwtest/hwtest/layout"

	"os"
	"path/filepath"
	"strings"

	"github.com/hwtest/hwtest/catalog"
)

// Parse splits a catalog source; see catalog.ParseSource.
func Parse(src string) (catalog.Source, error) {
	s, err := catalog.ParseSource(src)
	if err != nil {
		return s, fmt.Errorf("source %q: %w", src, err)
	}
	return s, nil
}

// ModelsDir is where fetched and built models live under the repository root.
const ModelsDir = layout.StateDir + "/models"

// LocalPath is where the source's model file lives on this machine. A file: path
// is relative to catalogDir, the folder of the models.yaml that names it (absolute,
// or relative to root; "" is root), as the catalog documents; the other kinds live
// under root or the Hugging Face cache, wherever the catalog is.
func LocalPath(root, catalogDir string, s catalog.Source) string {
	switch s.Scheme {
	case "file":
		if filepath.IsAbs(s.Path) {
			return s.Path
		}
		if !filepath.IsAbs(catalogDir) {
			catalogDir = filepath.Join(root, catalogDir)
		}
		return filepath.Join(catalogDir, filepath.FromSlash(s.Path))
	case "zoo":
		return filepath.Join(root, ModelsDir, "zoo", s.Name+".onnx")
	case "npm":
		return filepath.Join(root, ModelsDir, "npm", s.Package+"@"+s.Version, s.Path)
	case "hf":
		return filepath.Join(HubCacheDir(), "models--"+strings.ReplaceAll(s.Repo, "/", "--"), "snapshots", s.Revision, s.Path)
	}
	return ""
}

// CatalogDir is how a generated suite names the folder of its models.yaml: relative
// to root when it is inside it ("" for root itself), so generated code stays the
// same on every checkout, else absolute.
func CatalogDir(root, dir string) string {
	rel, err := filepath.Rel(root, dir)
	switch {
	case err != nil || !filepath.IsAbs(dir) || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)):
		return dir
	case rel == ".":
		return ""
	}
	return filepath.ToSlash(rel)
}

// HubCacheDir follows huggingface_hub: $HF_HUB_CACHE, else $HF_HOME/hub, else
// ~/.cache/huggingface/hub.
func HubCacheDir() string {
	if d := os.Getenv("HF_HUB_CACHE"); d != "" {
		return d
	}
	if d := os.Getenv("HF_HOME"); d != "" {
		return filepath.Join(d, "hub")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		home = "."
	}
	return filepath.Join(home, ".cache", "huggingface", "hub")
}

// RootRelative rewrites every model's Dir as CatalogDir(root, Dir): what generated
// suites carry, the same on every checkout.
func RootRelative(c *catalog.Catalogs, root string) {
	for i := range c.Models {
		c.Models[i].Dir = CatalogDir(root, c.Models[i].Dir)
	}
}
