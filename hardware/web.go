package hardware

import (
	"fmt"
	"sort"

	"github.com/hwtest/hwtest/browser"
	"github.com/hwtest/hwtest/runtime"
)

// Web is what the browsers behind the browser targets offer: the WebGPU adapter
// (SwiftShader reports itself as a fallback adapter: a CPU, not a GPU) and a WebNN
// context per device type (Chromium on Linux runs every one on the CPU).
type Web struct {
	WebGPU        Probe                `json:"webgpu"`
	Adapter       *browser.AdapterInfo `json:"webgpu_adapter,omitempty"`
	WebNN         Probe                `json:"webnn"`
	WebNNContexts map[string]string    `json:"webnn_contexts,omitempty"` // device type → "" (ok) or the error
}

// detectWeb probes the browsers only when a browser target asks for them, since
// starting Chromium takes a second.
func detectWeb(targets []runtime.Target) *Web {
	want := map[string]bool{}
	for _, t := range targets {
		if t.Runner == "browser" {
			want[t.Provider] = true
		}
	}
	if len(want) == 0 {
		return nil
	}
	cfg := runtime.BrowserConfig()
	w := &Web{WebGPU: missing("webgpu-adapter", "no webgpu target"), WebNN: missing("webnn-context", "no webnn target")}
	if want["webgpu"] {
		if b, err := browser.Shared(cfg, false); err != nil {
			w.WebGPU.Reason = err.Error()
		} else if a, err := b.Adapter(); err != nil {
			w.WebGPU.Reason = fmt.Sprintf("%s: %v", b.Version, err)
		} else {
			w.Adapter = &a
			kind := "hardware adapter"
			if a.IsFallbackAdapter {
				kind = "software fallback adapter (CPU, not a GPU)"
			}
			w.WebGPU = found("webgpu-adapter", fmt.Sprintf("%s/%s, %s, in %s", a.Vendor, a.Architecture, kind, b.Version))
		}
	}
	if want["webnn"] {
		if b, err := browser.Shared(cfg, true); err != nil {
			w.WebNN.Reason = err.Error()
		} else {
			w.WebNNContexts = b.WebNNContexts()
			var ok, failed []string
			for _, dev := range sortedKeys(w.WebNNContexts) {
				if e := w.WebNNContexts[dev]; e == "" {
					ok = append(ok, dev)
				} else {
					failed = append(failed, dev+": "+e)
				}
			}
			if len(ok) > 0 {
				w.WebNN = found("webnn-context", fmt.Sprintf("contexts for %v in %s (on Linux every WebNN device runs on the CPU through XNNPACK)", ok, b.Version))
			} else {
				w.WebNN.Reason = fmt.Sprintf("%s: %v", b.Version, failed)
			}
		}
	}
	return w
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
