//go:build !linux || !cgo

package runtime

import "runtime/debug"

// releaseFreeMemory gives Go's free heap back to the kernel; only glibc's
// malloc_trim returns what ONNX Runtime freed (trim_linux.go).
func releaseFreeMemory() { debug.FreeOSMemory() }
