package runtime

import (
	"fmt"
	"os"
	"sync"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/hwtest/hwtest/browser"
)

var probeCache sync.Map // target id -> string

// Unavailable returns "" when the target can be tried on this machine, else the exact
// reason the probe found: the error ONNX Runtime gave when the target's execution
// provider was appended to throwaway session options, plus which plugin library is
// missing where that is the cause.
func Unavailable(t Target) string {
	if r, ok := probeCache.Load(t.ID); ok {
		return r.(string)
	}
	r := probe(t)
	probeCache.Store(t.ID, r)
	return r
}

func probe(t Target) string {
	if t.Runner == "browser" {
		return browser.Available(BrowserConfig(), t.Provider, t.Bundle)
	}
	lib, err := Init()
	if err != nil {
		return err.Error()
	}
	if t.Provider == CPUProvider {
		return ""
	}
	// The provider alone: a bad HWTEST_THREADS is an error of the cell, not the
	// target being absent.
	opts, err := ort.NewSessionOptions()
	if err != nil {
		return err.Error()
	}
	// What native code prints while the EP is appended (Dawn's warnings) is
	// captured: it explains an unavailable target in its reason, and is passed on
	// as it was otherwise.
	captured := captureNativeStderr(func() { err = appendProvider(opts, t) })
	opts.Destroy()
	warnings, rest := dawnWarnings(captured)
	if err == nil {
		os.Stderr.WriteString(captured)
		return ""
	}
	os.Stderr.WriteString(rest)
	reason := fmt.Sprintf("%s: %v", t.Provider, err)
	if hint := ProviderLibraryHint(lib.Path, t); hint != "" {
		reason += " (" + hint + ")"
	}
	for _, w := range warnings {
		reason += " (Dawn: " + w + ")"
	}
	return reason
}
