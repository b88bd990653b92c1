package browser

import (
	"os/exec"
	"syscall"
)

// dieWithParent makes the kernel SIGKILL the browser when the process that
// started it dies, however it dies (a SIGKILL included, which runs no
// cleanup). Chromium's own children (zygotes, renderers, GPU and utility
// processes, crashpad handlers) exit within half a second of the browser
// process on their own: TestKilledOwnerLeavesNothing checks both.
//
// Pdeathsig fires when the OS *thread* that forked the child exits, not the
// process, and Go may fork from any thread. chromedp's ExecAllocator starts
// the browser and waits for it from one goroutine locked to its OS thread
// (runtime.LockOSThread, chromedp issue 1566), so that thread lives as long as
// the browser; no LockOSThread is needed here. chromedp sets the same
// Pdeathsig by default, but a ModifyCmdFunc replaces that default: it is set
// here so that the guarantee is this package's, not a side effect.
//
// No process group of its own: Chromium stays in the group of the process
// that started it, so a runner that kills the suite's process group kills
// Chromium too.
func dieWithParent(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}
