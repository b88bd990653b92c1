//go:build linux

package runtime

import (
	"io"
	"os"
	"sync"
	"syscall"
	"time"
)

// stderrMu keeps captures one at a time: two would each save the other's pipe as
// the descriptor to restore.
var stderrMu sync.Mutex

// captureNativeStderr runs fn with file descriptor 2 pointed at a pipe and returns
// what was written to it: by native code (which writes to the descriptor, not to
// os.Stderr) and by Go code alike. If the pipe cannot be made, fn runs with stderr
// as it is and nothing is captured. A crash inside fn loses what was captured: keep
// fn to one call into native code.
func captureNativeStderr(fn func()) string {
	stderrMu.Lock()
	defer stderrMu.Unlock()
	r, w, err := os.Pipe()
	if err != nil {
		fn()
		return ""
	}
	saved, err := syscall.Dup(2)
	if err != nil {
		r.Close()
		w.Close()
		fn()
		return ""
	}
	out := make(chan string, 1)
	go func() { // drained while fn runs: a full pipe would block the writer
		b, _ := io.ReadAll(r)
		r.Close()
		out <- string(b)
	}()
	if err := syscall.Dup3(int(w.Fd()), 2, 0); err != nil {
		syscall.Close(saved)
		w.Close()
		<-out
		fn()
		return ""
	}
	fn()
	syscall.Dup3(saved, 2, 0) // back: every write from here on is the terminal's
	syscall.Close(saved)
	w.Close() // the pipe's last writer, unless fn's native code kept a copy of it:
	// then the end never comes, and what arrived within a second is what there is.
	r.SetReadDeadline(time.Now().Add(time.Second))
	return <-out
}
