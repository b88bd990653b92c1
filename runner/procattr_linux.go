package runner

import "syscall"

// childProcAttr puts a child in a process group of its own (so the whole group can
// be signalled) and has the kernel kill it when hwtest dies, even by SIGKILL, which
// no handler sees. See startAndWait for why the forking thread is locked.
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
