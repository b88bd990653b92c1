//go:build !linux

package browser

import "os/exec"

// dieWithParent does nothing where the kernel has no parent-death signal:
// CloseAll is then the only cleanup.
func dieWithParent(*exec.Cmd) {}
