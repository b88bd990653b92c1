package result

import (
	"errors"
	"fmt"
)

// Cause is the class of a result that is not a pass, set by the code that saw it
// happen, so reports and diagnosis need not recognise hwtest's own message texts.
// Errors that come from outside (ONNX Runtime's, a driver's) carry no cause; their
// text is classified where it is read.
type Cause string

const (
	CauseRuntimeLibrary Cause = "runtime-library" // ONNX Runtime itself missing, not a library, or too old
	CauseModelFile      Cause = "model-file"      // the model file missing, corrupt or not the one models.yaml pins
	CauseInputs         Cause = "inputs"          // the inputs models.yaml asks for do not fit the model
	CauseMismatch       Cause = "mismatch"        // outputs wrong: a comparison or family invariant failed
	CausePartial        Cause = "partial"         // ran, but some nodes ran on the CPU
	CauseCPUOnly        Cause = "cpu-only"        // ran, but the target's EP took no node: all ran on the CPU
	CauseTimeout        Cause = "timeout"         // an inference or the whole process ran out of time
	CauseCrash          Cause = "crash"           // the suite process died (signal, Go fatal error, no report)
	CauseInterrupted    Cause = "interrupted"     // the run was stopped (SIGINT/SIGTERM) before the cell finished
	CauseKernelFailed   Cause = "kernel-failed"   // an execution provider's kernel failed at run time
	CauseBrowser        Cause = "browser"         // Chromium or its page failed (crash, no adapter, script error)
	CauseCheckMisfit    Cause = "check-misfit"    // a family check the CPU reference breaks too: it does not fit the model as catalogued
)

// Causes lists every cause, so a consumer can check it handles each.
var Causes = []Cause{CauseRuntimeLibrary, CauseModelFile, CauseInputs, CauseMismatch, CausePartial,
	CauseCPUOnly, CauseTimeout, CauseCrash, CauseInterrupted, CauseKernelFailed, CauseBrowser, CauseCheckMisfit}

// Error is an error that knows its cause.
type Error struct {
	Cause Cause
	Err   error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Errorf formats an error (with %w, as fmt.Errorf) that carries a cause.
func Errorf(cause Cause, format string, args ...any) error {
	return &Error{Cause: cause, Err: fmt.Errorf(format, args...)}
}

// WithCause gives err a cause unless it already carries one (the innermost code
// knows best); nil stays nil.
func WithCause(cause Cause, err error) error {
	if err == nil || CauseOf(err) != "" {
		return err
	}
	return &Error{Cause: cause, Err: err}
}

// CauseOf is the cause err carries, "" when none does.
func CauseOf(err error) Cause {
	var e *Error
	if errors.As(err, &e) {
		return e.Cause
	}
	return ""
}
