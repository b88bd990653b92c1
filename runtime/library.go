// Package runtime is what every generated suite runs on: it finds and initialises
// ONNX Runtime once per process, opens a session per (model, target), synthesises
// inputs, computes the CPU reference, compares, measures and records each spec's
// result as a typed Ginkgo report entry.
package runtime

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/hwtest/hwtest/layout"
	"github.com/hwtest/hwtest/result"
	"github.com/hwtest/hwtest/sources"
)

// LibraryEnv, RootEnv and StateDir: see package layout.
const (
	LibraryEnv = layout.LibraryEnv
	RootEnv    = layout.RootEnv
	StateDir   = layout.StateDir
)

// Root finds the repository root (layout.Root).
func Root() (string, error) { return layout.Root() }

// LibraryPath is $ONNXRUNTIME_LIB, else ROOT/.hwtest/lib/libonnxruntime.so.1.
func LibraryPath() (string, error) { return layout.LibraryPath() }

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// Library describes the ONNX Runtime library this process initialised.
type Library struct {
	Path    string
	SHA256  string
	Version string
}

var (
	initOnce sync.Once
	initLib  Library
	initErr  error
)

// Init loads and initialises ONNX Runtime once per process. Repeated
// Initialize/Destroy (dlopen/dlclose) is not safe, so the environment lives as long
// as the process does.
func Init() (Library, error) {
	initOnce.Do(func() {
		initLib, initErr = initialise()
		initErr = result.WithCause(result.CauseRuntimeLibrary, initErr)
	})
	return initLib, initErr
}

func initialise() (Library, error) {
	path, err := LibraryPath()
	if err != nil {
		return Library{}, err
	}
	if err := checkSharedLibrary(path); err != nil {
		return Library{}, err
	}
	sum, err := fileSHA256(path)
	if err != nil {
		return Library{}, err
	}
	ort.SetSharedLibraryPath(path)
	// Fatal only: ORT's own coloured log lines would interleave with the specs'
	// output; every error we need comes back as a returned error instead.
	if err := ort.InitializeEnvironment(ort.WithLogLevelFatal()); err != nil {
		return Library{}, initError(path, err)
	}
	layout.RemoveORTDebugLog()
	return Library{Path: path, SHA256: sum, Version: ort.GetVersion()}, nil
}

// initError explains a failed initialisation. onnxruntime_go reports a library
// older than its C API as "Error setting ORT API base: 2" (ORT itself prints "The
// requested API version [24] is not available" to stderr).
func initError(path string, err error) error {
	msg := err.Error()
	if strings.Contains(msg, "API version") || strings.Contains(msg, "Error setting ORT API base") {
		return fmt.Errorf("ONNX Runtime library %s is too old: %s; hwtest needs ONNX Runtime >= 1.24 (C API 24): run `make setup` or point %s at a newer libonnxruntime.so", path, msg, LibraryEnv)
	}
	return fmt.Errorf("initialising ONNX Runtime from %s: %w (run `make setup`, or point %s at libonnxruntime.so)", path, err, LibraryEnv)
}

// checkSharedLibrary fails early and clearly where dlopen would give a cryptic
// message: a missing file, or a file that is not an ELF shared object.
func checkSharedLibrary(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("ONNX Runtime library not found at %s: run `make setup` (it installs it from npm onnxruntime-node), or set %s", path, LibraryEnv)
	}
	if err != nil {
		return fmt.Errorf("ONNX Runtime library %s: %w", path, err)
	}
	defer f.Close()
	magic := make([]byte, 4)
	if _, err := io.ReadFull(f, magic); err != nil || !bytes.Equal(magic, []byte("\x7fELF")) {
		return fmt.Errorf("%s is not a shared library (no ELF header): point %s at libonnxruntime.so, or run `make setup`", path, LibraryEnv)
	}
	return nil
}

// fileSHA256 is the hex sha256 of a file.
func fileSHA256(path string) (string, error) { return sources.SHA256(path) }
