package generator

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
)

// Change is one difference between generated output and the files on disk.
type Change struct {
	Path string // slash-separated, relative to the root
	Kind string // "missing", "changed" or "stale"
	Diff string // unified diff, disk → generated
}

// Diff compares the generated files with what is under root/generated: files to
// create (missing), to rewrite (changed), and generated files no model produces any
// more (stale). Sorted by path.
func Diff(root string, files map[string][]byte) ([]Change, error) {
	var changes []Change
	for _, p := range SortedPaths(files) {
		old, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(p)))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			changes = append(changes, Change{Path: p, Kind: "missing", Diff: unified(p, nil, files[p])})
		case err != nil:
			return nil, err
		case !bytes.Equal(old, files[p]):
			changes = append(changes, Change{Path: p, Kind: "changed", Diff: unified(p, old, files[p])})
		}
	}
	stale, err := staleFiles(root, files)
	if err != nil {
		return nil, err
	}
	for _, p := range stale {
		old, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(p)))
		if err != nil {
			return nil, err
		}
		changes = append(changes, Change{Path: p, Kind: "stale", Diff: unified(p, old, nil)})
	}
	slices.SortFunc(changes, func(a, b Change) int { return strings.Compare(a.Path, b.Path) })
	return changes, nil
}

// staleFiles are files under root/generated that carry the generated header but are
// not in files. Hand-written files (no header) are left alone.
func staleFiles(root string, files map[string][]byte) ([]string, error) {
	var stale []string
	dir := filepath.Join(root, Dir)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) && p == dir {
			return fs.SkipDir
		}
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if _, ok := files[rel]; ok {
			return nil
		}
		generated, err := isGenerated(p)
		if generated {
			stale = append(stale, rel)
		}
		return err
	})
	return stale, err
}

func isGenerated(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	head := make([]byte, 256)
	n, _ := f.Read(head)
	return bytes.HasPrefix(head[:n], []byte("// "+Header)), nil
}

// Write brings root/generated in line with files: it writes missing and changed
// files (unchanged ones are not touched, so build caches stay warm) and removes
// stale ones. Every new file is first written next to its target and only renamed
// into place once all of them were written, so a failure leaves the old tree.
func Write(root string, files map[string][]byte) ([]Change, error) {
	changes, err := Diff(root, files)
	if err != nil {
		return nil, err
	}
	var temps []string
	cleanup := func() {
		for _, t := range temps {
			os.Remove(t)
		}
	}
	for _, c := range changes {
		if c.Kind == "stale" {
			continue
		}
		dst := filepath.Join(root, filepath.FromSlash(c.Path))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			cleanup()
			return nil, err
		}
		tmp := dst + ".hwtest-tmp"
		if err := os.WriteFile(tmp, files[c.Path], 0o644); err != nil {
			cleanup()
			return nil, fmt.Errorf("writing %s: %w", c.Path, err)
		}
		temps = append(temps, tmp)
	}
	for _, c := range changes {
		dst := filepath.Join(root, filepath.FromSlash(c.Path))
		if c.Kind == "stale" {
			err = os.Remove(dst)
		} else {
			err = os.Rename(dst+".hwtest-tmp", dst)
		}
		if err != nil {
			cleanup()
			return nil, fmt.Errorf("updating %s: %w", c.Path, err)
		}
	}
	removeEmptyDirs(filepath.Join(root, Dir))
	return changes, nil
}

// removeEmptyDirs drops family folders whose last model went away.
func removeEmptyDirs(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if e.IsDir() {
			sub := filepath.Join(dir, e.Name())
			removeEmptyDirs(sub)
			if left, err := os.ReadDir(sub); err == nil && len(left) == 0 {
				os.Remove(sub)
			}
		}
	}
}

func unified(path string, old, new []byte) string {
	d := difflib.UnifiedDiff{
		A: difflib.SplitLines(string(old)), B: difflib.SplitLines(string(new)),
		FromFile: "a/" + path, ToFile: "b/" + path, Context: 3,
	}
	if old == nil {
		d.FromFile = "/dev/null"
	}
	if new == nil {
		d.ToFile = "/dev/null"
	}
	s, err := difflib.GetUnifiedDiffString(d)
	if err != nil {
		return err.Error()
	}
	return s
}
