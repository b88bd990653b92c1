//go:build unix && !linux

package runner

import "syscall"

// childProcAttr puts a child in a process group of its own. Without Linux's
// Pdeathsig, a child outlives a SIGKILLed hwtest here; SIGINT and SIGTERM still
// stop it (runModel's Cancel).
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
