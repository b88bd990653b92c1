//go:build linux && cgo

package runtime

// #include <malloc.h>
import "C"

import "runtime/debug"

// releaseFreeMemory gives the pages the process holds but no longer uses back to
// the kernel: Go's free heap, and what glibc's malloc kept of memory ONNX Runtime
// freed (a closed session's: the CPU reference's). Without it, the RSS read before
// a session counts that free memory, which the session then reuses without its
// RSS growing: the peak above it would hide part of the session.
func releaseFreeMemory() {
	debug.FreeOSMemory()
	C.malloc_trim(0)
}
