// Package layout says where things are: the repository root (models.yaml,
// hardware.yaml) and the git-ignored folder `make setup` fills. Every part of
// hwtest, and every test, finds them here, the same way.
package layout

import (
	"fmt"
	"os"
	"path/filepath"
)

// RootEnv overrides where the repository root is.
const RootEnv = "HWTEST_ROOT"

// LibraryEnv points at another libonnxruntime than the one `make setup` installs.
const LibraryEnv = "ONNXRUNTIME_LIB"

// StateDir is the git-ignored folder `make setup` fills: lib/, models/, bin/, web/.
const StateDir = ".hwtest"

// Root is $HWTEST_ROOT, or the nearest parent of the working directory holding
// hardware.yaml next to go.mod (the suite runs in generated/suite/, tests in their
// package folders).
func Root() (string, error) {
	if r := os.Getenv(RootEnv); r != "" {
		return filepath.Abs(r)
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	return RootAbove(dir)
}

// RootAbove is the nearest parent of dir (dir included) holding hardware.yaml next
// to go.mod.
func RootAbove(dir string) (string, error) {
	for d := dir; ; d = filepath.Dir(d) {
		if isFile(filepath.Join(d, "hardware.yaml")) && isFile(filepath.Join(d, "go.mod")) {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no hwtest root above %s (looked for hardware.yaml next to go.mod): set %s or pass --root", dir, RootEnv)
		}
	}
}

// State is a path under the state folder of the root: State(root, "lib").
func State(root string, elem ...string) string {
	return filepath.Join(append([]string{root, StateDir}, elem...)...)
}

// LibraryPath is $ONNXRUNTIME_LIB, else ROOT/.hwtest/lib/libonnxruntime.so.1.
func LibraryPath() (string, error) {
	if p := os.Getenv(LibraryEnv); p != "" {
		return p, nil
	}
	root, err := Root()
	if err != nil {
		return "", err
	}
	return State(root, "lib", "libonnxruntime.so.1"), nil
}

func isFile(p string) bool { _, err := os.Stat(p); return err == nil }

// ORTDebugLog is the empty file the telemetry SDK inside ONNX Runtime's Linux
// build (1DS, "MATSDK") creates for every process that initialises ONNX Runtime:
// one per suite process, left in /tmp forever.
func ORTDebugLog() string { return fmt.Sprintf("/tmp/mat-debug-%d.log", os.Getpid()) }

// RemoveORTDebugLog removes this process's ORTDebugLog; call it right after
// initialising ONNX Runtime, so nothing is left in /tmp even when the process
// crashes later. Unlinking a file the SDK may hold open is harmless on Linux.
func RemoveORTDebugLog() { _ = os.Remove(ORTDebugLog()) }
