package generator

import (
	"bytes"
	"errors"
	"fmt"
	"io"
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
	return DiffIn(root, Repo, files)
}

// DiffIn is Diff for out's folder and files.
func DiffIn(root string, out Out, files map[string][]byte) ([]Change, error) {
	var changes []Change
	for _, p := range SortedPaths(files) {
		old, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(p)))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			changes = append(changes, Change{Path: p, Kind: "missing", Diff: unified(p, nil, files[p])})
		case err != nil:
			return nil, err
		case out.foreign(old) != "":
			// Two catalogs given the same --out: overwriting would leave each
			// folder holding the other's models, compiled into its suite.
			return nil, fmt.Errorf("%s belongs to the suites of %s, not of %s: give %s's suites a folder of their own (--out)", p, out.foreign(old), out.Models, out.Models)
		case !bytes.Equal(old, files[p]):
			changes = append(changes, Change{Path: p, Kind: "changed", Diff: unified(p, old, files[p])})
		}
	}
	stale, err := staleFiles(root, out, files)
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

// Compare is Diff under a shared generate lock (see readLock), so it never reads a
// tree a Write in another process is halfway through.
func Compare(root string, files map[string][]byte, waiting io.Writer) ([]Change, error) {
	return CompareIn(root, Repo, files, waiting)
}

// CompareIn is Compare for out's folder and files.
func CompareIn(root string, out Out, files map[string][]byte, waiting io.Writer) ([]Change, error) {
	unlock, err := readLock(root, out, waiting)
	if err != nil {
		return nil, err
	}
	defer unlock()
	return DiffIn(root, out, files)
}

// staleFiles are files under out's folder that carry out's header but are not in
// files. Hand-written files (no header), and another catalog's suites (a header
// naming another catalog), are left alone.
func staleFiles(root string, out Out, files map[string][]byte) ([]string, error) {
	var stale []string
	dir := filepath.Join(root, filepath.FromSlash(out.Dir))
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
		generated, err := out.generated(p)
		if generated {
			stale = append(stale, rel)
		}
		return err
	})
	return stale, err
}

// generated reports whether the file at path is one of out's generated files.
func (o Out) generated(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	head := make([]byte, 256)
	n, _ := f.Read(head)
	return o.owns(head[:n]), nil
}

// Write brings root/generated in line with files: it writes missing and changed
// files (unchanged ones are not touched, so build caches stay warm) and removes
// stale ones. It is all or nothing: new contents are first written to temporary
// files, every file about to be replaced or removed is linked to a backup, and only
// then are they moved into place; if any step fails, the backups are put back and
// new files removed, so the tree is the old one or the new one, never a mix.
//
// Write holds an exclusive lock on root/generated for its whole run, so concurrent
// writers (two `hwtest run`s at once) take turns; while it waits for one, it says so
// on waiting (nil: silently).
func Write(root string, files map[string][]byte, waiting io.Writer) ([]Change, error) {
	return WriteIn(root, Repo, files, waiting)
}

// WriteIn is Write for out's folder and files.
func WriteIn(root string, out Out, files map[string][]byte, waiting io.Writer) ([]Change, error) {
	unlock, err := LockIn(root, out, waiting)
	if err != nil {
		return nil, err
	}
	defer unlock()
	dir := filepath.Join(root, filepath.FromSlash(out.Dir))
	if err := removeDebris(dir); err != nil {
		return nil, err
	}
	changes, err := DiffIn(root, out, files)
	if err != nil {
		return nil, err
	}
	var u update
	if err := u.apply(root, files, changes); err != nil {
		if rerr := u.undo(); rerr != nil {
			return nil, fmt.Errorf("%w; and restoring the old tree failed: %v", err, rerr)
		}
		return nil, err
	}
	u.discard()
	removeEmptyDirs(dir)
	return changes, nil
}

// update is one Write in progress: what it created and what it can undo.
type update struct {
	dirs    []string          // folders it created, parents first
	temps   map[string]string // destination → temporary file with its new content
	backups map[string]string // destination → hard link to its old content
	done    []string          // destinations already replaced, created or removed
}

func (u *update) apply(root string, files map[string][]byte, changes []Change) error {
	u.temps, u.backups = map[string]string{}, map[string]string{}
	for _, c := range changes {
		dst := filepath.Join(root, filepath.FromSlash(c.Path))
		if c.Kind != "stale" {
			if err := u.mkdirAll(filepath.Dir(dst)); err != nil {
				return err
			}
			tmp, err := writeTemp(dst, files[c.Path])
			if err != nil {
				return fmt.Errorf("writing %s: %w", c.Path, err)
			}
			u.temps[dst] = tmp
		}
		if c.Kind != "missing" {
			backup, err := linkBackup(dst)
			if err != nil {
				return fmt.Errorf("backing up %s: %w", c.Path, err)
			}
			u.backups[dst] = backup
		}
	}
	for _, c := range changes {
		dst := filepath.Join(root, filepath.FromSlash(c.Path))
		var err error
		if c.Kind == "stale" {
			err = remove(dst)
		} else {
			err = rename(u.temps[dst], dst)
		}
		if err != nil {
			return fmt.Errorf("updating %s: %w", c.Path, err)
		}
		delete(u.temps, dst)
		u.done = append(u.done, dst)
	}
	return nil
}

// undo puts every replaced or removed file back from its backup, removes the files
// and folders it created and its temporary files.
func (u *update) undo() error {
	var errs []error
	for i := len(u.done) - 1; i >= 0; i-- {
		dst := u.done[i]
		if backup, ok := u.backups[dst]; ok {
			if err := rename(backup, dst); err != nil {
				errs = append(errs, err)
				continue
			}
			delete(u.backups, dst)
		} else if err := remove(dst); err != nil {
			errs = append(errs, err)
		}
	}
	u.discard()
	for i := len(u.dirs) - 1; i >= 0; i-- {
		os.Remove(u.dirs[i]) // only if empty: something else may have put a file there
	}
	return errors.Join(errs...)
}

// discard removes what is left of temporary files and backups.
func (u *update) discard() {
	for _, p := range u.temps {
		os.Remove(p)
	}
	for _, p := range u.backups {
		os.Remove(p)
	}
}

// mkdirAll is os.MkdirAll remembering the folders it made, for undo.
func (u *update) mkdirAll(dir string) error {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil || filepath.Dir(d) == d {
			break
		}
		missing = append(missing, d)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for i := len(missing) - 1; i >= 0; i-- {
		u.dirs = append(u.dirs, missing[i])
	}
	return nil
}

// writeTemp writes data to a new file next to dst. Its name is unique to this
// process and starts with a dot, so the go tool never reads it as source.
func writeTemp(dst string, data []byte) (string, error) {
	f, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".*.hwtest-tmp")
	if err != nil {
		return "", err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o644) // CreateTemp makes 0600; generated files are 0644
	}
	if err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

// linkBackup makes a second name for dst's current content: cheap, and dst itself
// is untouched until the step that replaces or removes it.
func linkBackup(dst string) (string, error) {
	for i := 0; ; i++ {
		backup := filepath.Join(filepath.Dir(dst), fmt.Sprintf(".%s.%d-%d.hwtest-backup", filepath.Base(dst), os.Getpid(), i))
		err := os.Link(dst, backup)
		if !errors.Is(err, fs.ErrExist) {
			return backup, err
		}
	}
}

// Write changes the tree only through these, so a test can make a step fail as a
// read-only folder would, even as root (whom chmod does not stop).
var (
	rename = os.Rename
	remove = os.Remove
)

// removeDebris removes the temporary files and backups of a writer killed before
// it could clean up. Only a writer holding the lock may call it: then no live
// writer owns them.
func removeDebris(dir string) error {
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if strings.HasSuffix(p, ".hwtest-tmp") || strings.HasSuffix(p, ".hwtest-backup") {
			return os.Remove(p)
		}
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
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

// ReadGenerated reads the generated files (those with a generated header) under
// root/dir, keyed by slash-separated path relative to root: what is there, to keep
// as it is.
func ReadGenerated(root, dir string) (map[string][]byte, error) {
	files := map[string][]byte{}
	top := filepath.Join(root, filepath.FromSlash(dir))
	err := filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) && p == top {
			return fs.SkipDir
		}
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") {
			return err
		}
		if ok, err := Repo.generated(p); err != nil || !ok {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		files[filepath.ToSlash(rel)] = data
		return nil
	})
	return files, err
}
