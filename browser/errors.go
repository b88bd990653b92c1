package browser

import (
	"errors"
	"fmt"
	"regexp"
)

// Errors from this package are typed where they arise, so that callers (the
// runtime's causes, diagnose) test them with errors.Is and errors.As instead
// of matching message texts. Each message is the one the package always gave.
var (
	// ErrKernelFailed: an onnxruntime-web kernel failed at run time
	// (*KernelError).
	ErrKernelFailed = errors.New("onnxruntime-web kernel failed")
	// ErrCrashed: the page's renderer or the browser process died
	// (*CrashError).
	ErrCrashed = errors.New("chromium crashed")
	// ErrTimedOut: the page did not answer a call within its timeout (a run
	// that hangs).
	ErrTimedOut = errors.New("no answer from the page in time")
	// ErrUnavailable: a browser target cannot run here (*UnavailableError);
	// one of the three below says why, when it is one of them.
	ErrUnavailable = errors.New("browser target unavailable")
	// ErrNotInstalled: Chromium or onnxruntime-web is missing (make setup).
	ErrNotInstalled = errors.New("not installed")
	// ErrNoWebGPU: the browser runs but gives no WebGPU adapter.
	ErrNoWebGPU = errors.New("no WebGPU adapter")
	// ErrNoWebNN: the browser runs but gives no WebNN CPU context.
	ErrNoWebNN = errors.New("no WebNN context")
)

// KernelError is onnxruntime-web's report of a kernel that failed while a
// session ran, e.g. from JSEP:
//
//	[WebGPU] Kernel "[Mul] /model/layers.0/self_attn/Mul_71" failed. Error: Can't perform binary op on the given tensors
//
// or from ONNX Runtime's core (wasm, WebNN):
//
//	Non-zero status code returned while running Mul node. Name:'/Mul_71' Status Message: ...
type KernelError struct {
	EP   string // "WebGPU" for JSEP's message, "" for ONNX Runtime's own
	Op   string // the operator, e.g. "Mul"
	Node string // the node's name
	Msg  string // the page's message, verbatim
}

func (e *KernelError) Error() string        { return e.Msg }
func (e *KernelError) Is(target error) bool { return target == ErrKernelFailed }

var (
	jsepKernel = regexp.MustCompile(`\[(\w+)\] Kernel "\[(\w+)\] ([^"]*)" failed`)
	ortKernel  = regexp.MustCompile(`Non-zero status code returned while running (\w+) node\. Name:'([^']*)'`)
)

// pageError is the error the page threw, as it gave it: a *KernelError when
// onnxruntime-web says a kernel failed.
func pageError(msg string) error {
	if m := jsepKernel.FindStringSubmatch(msg); m != nil {
		return &KernelError{EP: m[1], Op: m[2], Node: m[3], Msg: msg}
	}
	if m := ortKernel.FindStringSubmatch(msg); m != nil {
		return &KernelError{Op: m[1], Node: m[2], Msg: msg}
	}
	return errors.New(msg)
}

// CrashError says the page (its renderer process) or the whole browser died
// under a call.
type CrashError struct {
	Browser bool  // the browser process died, not only the page's renderer
	Err     error // chromedp's error: for the browser, it wraps the *exec.ExitError
}

func (e *CrashError) Error() string {
	if e.Browser {
		return fmt.Sprintf("chromium crashed: the browser process died: %v", e.Err)
	}
	return fmt.Sprintf("chromium page crashed: its renderer process died: %v", e.Err)
}
func (e *CrashError) Is(target error) bool { return target == ErrCrashed }
func (e *CrashError) Unwrap() error        { return e.Err }

// UnavailableError says why a browser target cannot run here.
type UnavailableError struct {
	Provider string
	Why      error // ErrNotInstalled, ErrNoWebGPU, ErrNoWebNN, or nil (another reason)
	Msg      string
	Err      error // the error underneath (a failed launch, the page's), if any
}

func (e *UnavailableError) Error() string { return e.Msg }
func (e *UnavailableError) Is(target error) bool {
	return target == ErrUnavailable || (e.Why != nil && target == e.Why)
}
func (e *UnavailableError) Unwrap() error { return e.Err }

func unavailable(provider string, why, err error, format string, args ...any) *UnavailableError {
	return &UnavailableError{Provider: provider, Why: why, Err: err, Msg: fmt.Sprintf(format, args...)}
}
