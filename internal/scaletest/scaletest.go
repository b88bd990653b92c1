// Package scaletest builds large catalogs for scale benchmarks from the repository's
// own models.yaml: its real entries, copied under new ids, so every generated suite
// is one a real model produces (no made-up model).
package scaletest

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// Models returns models.yaml text holding n models: the entries of src (a models.yaml)
// whose ids are in ids (every entry when ids is empty), taken in turn and each copy
// renamed "<id>-c<i>" (i from 0 to n-1). The anchors src defines stay, once.
func Models(src []byte, n int, ids ...string) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return nil, err
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("models.yaml: not one mapping")
	}
	top := doc.Content[0]
	var models *yaml.Node
	for i := 0; i+1 < len(top.Content); i += 2 {
		if top.Content[i].Value == "models" {
			models = top.Content[i+1]
		}
	}
	if models == nil || models.Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("models.yaml: no models list")
	}
	var picked []*yaml.Node
	found := map[string]bool{}
	for _, m := range models.Content {
		id := idNode(m)
		if id == nil {
			return nil, fmt.Errorf("models.yaml:%d: an entry without an id", m.Line)
		}
		if len(ids) == 0 || slices.Contains(ids, id.Value) {
			picked = append(picked, m)
			found[id.Value] = true
		}
	}
	for _, id := range ids {
		if !found[id] {
			return nil, fmt.Errorf("models.yaml has no model %q", id)
		}
	}
	if len(picked) == 0 {
		return nil, fmt.Errorf("models.yaml has no models")
	}
	copies := make([]*yaml.Node, n)
	for i := range copies {
		// A shallow copy with a new id node; the other values are shared, which the
		// encoder writes out once per copy (aliases stay aliases).
		m := *picked[i%len(picked)]
		m.Content = slices.Clone(m.Content)
		for j := 0; j+1 < len(m.Content); j += 2 {
			if m.Content[j].Value == "id" {
				id := *m.Content[j+1]
				id.Value = fmt.Sprintf("%s-c%d", id.Value, i)
				m.Content[j+1] = &id
			}
		}
		copies[i] = &m
	}
	models.Content = copies
	return encode(&doc)
}

// encode writes a YAML document back with models.yaml's two-space indent.
func encode(doc *yaml.Node) ([]byte, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	err := enc.Close()
	return buf.Bytes(), err
}

func idNode(m *yaml.Node) *yaml.Node { return value(m, "id") }

// value is the value of key in mapping m; nil when m is no mapping or lacks key.
func value(m *yaml.Node, key string) *yaml.Node {
	if m.Kind != yaml.MappingNode {
		return nil
	}
	for j := 0; j+1 < len(m.Content); j += 2 {
		if m.Content[j].Value == key {
			return m.Content[j+1]
		}
	}
	return nil
}

// Tag returns models.yaml text with tag added to the tags of the model with the
// given id: a change to one model's entry that changes its generated file (each
// tag is a label there) and nothing else.
func Tag(src []byte, id, tag string) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return nil, err
	}
	var models *yaml.Node
	if len(doc.Content) == 1 {
		models = value(doc.Content[0], "models")
	}
	if models == nil {
		return nil, fmt.Errorf("models.yaml: no models list")
	}
	for _, m := range models.Content {
		if n := idNode(m); n == nil || n.Value != id {
			continue
		}
		tags := value(m, "tags")
		if tags == nil {
			tags = &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
			m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: "tags"}, tags)
		}
		tags.Content = append(tags.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: tag})
		return encode(&doc)
	}
	return nil, fmt.Errorf("models.yaml has no model %q", id)
}

// Module makes a copy of the module at repo in a new temporary folder, for scale
// runs that build the generated suites: every file the module's packages need to
// compile (no testdata, no generated suites, no build output), repo's .hwtest
// linked (ONNX Runtime, ginkgo, the models), and a catalog of n models (see Models)
// with repo's hardware.yaml. It returns the copy's root; generated/ is not written.
//
// A copy rather than a folder inside repo: the suites must import this module's
// packages under its own path (generated/targets included), and a copy leaves the
// checkout, its generated/ and its `go list ./...` untouched. A copy in a new
// folder compiles the module's packages once more (the build cache keys them by
// folder); the first build there pays for it.
func Module(tb testing.TB, repo string, n int, ids ...string) string {
	tb.Helper()
	repo, err := filepath.Abs(repo)
	if err != nil {
		tb.Fatal(err)
	}
	root := tb.TempDir()
	err = filepath.WalkDir(repo, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(repo, p)
		if err != nil || rel == "." {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			top := strings.Split(filepath.ToSlash(rel), "/")[0]
			if strings.HasPrefix(name, ".") || name == "testdata" || slices.Contains([]string{"bin", "reports", "tmp"}, top) ||
				filepath.Dir(rel) == "generated" {
				return fs.SkipDir
			}
			return os.Mkdir(filepath.Join(root, rel), 0o755)
		}
		if strings.HasPrefix(name, ".") || !d.Type().IsRegular() || strings.HasSuffix(name, ".test") || strings.HasSuffix(name, ".prof") {
			return nil
		}
		return copyFile(p, filepath.Join(root, rel))
	})
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(repo, ".hwtest"), filepath.Join(root, ".hwtest")); err != nil {
		tb.Fatal(err)
	}
	WriteCatalogs(tb, repo, root, n, ids...)
	return root
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}

// Root makes a repository root in a new temporary folder for a catalog of n models
// copied from the repository at repo (see Models): its hardware.yaml as it is, the
// scaled models.yaml, and a go.mod naming this module. It returns the root.
func Root(tb testing.TB, repo string, n int, ids ...string) string {
	tb.Helper()
	root := tb.TempDir()
	WriteCatalogs(tb, repo, root, n, ids...)
	mod, err := os.ReadFile(filepath.Join(repo, "go.mod"))
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "go.mod"), mod, 0o644); err != nil {
		tb.Fatal(err)
	}
	return root
}

// WriteCatalogs writes into root the hardware.yaml of repo and a models.yaml of n
// models copied from repo's (see Models).
func WriteCatalogs(tb testing.TB, repo, root string, n int, ids ...string) {
	tb.Helper()
	src, err := os.ReadFile(filepath.Join(repo, "models.yaml"))
	if err != nil {
		tb.Fatal(err)
	}
	models, err := Models(src, n, ids...)
	if err != nil {
		tb.Fatal(err)
	}
	hw, err := os.ReadFile(filepath.Join(repo, "hardware.yaml"))
	if err != nil {
		tb.Fatal(err)
	}
	for name, data := range map[string][]byte{"models.yaml": models, "hardware.yaml": hw} {
		if err := os.WriteFile(filepath.Join(root, name), data, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
}
