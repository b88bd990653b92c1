package hardware

import (
	"fmt"

	"github.com/hwtest/hwtest/catalog"
	"github.com/hwtest/hwtest/runtime"
	"github.com/hwtest/hwtest/spec"
)

// Targets converts hardware.yaml's targets into what runtime's probe takes, with no
// family's expectation (probing is per target).
func Targets(ts []catalog.Target) []runtime.Target {
	out := make([]runtime.Target, 0, len(ts))
	for _, t := range ts {
		out = append(out, spec.TargetOf(t))
	}
	return out
}

// Provider is whether the loaded ONNX Runtime accepts one target's execution
// provider on this machine: ok, or the exact error it gave (runtime.Unavailable).
type Provider struct {
	Probe
	Target   string `json:"target"`
	Provider string `json:"provider"`
	Runner   string `json:"runner"`
}

func detectProviders(e env, targets []runtime.Target) (Probe, []Provider) {
	ort := Probe{Name: "onnxruntime"}
	lib, err := e.ortInit()
	if err != nil {
		ort.Reason = err.Error()
	} else {
		ort.Found = true
		ort.Detail = fmt.Sprintf("ONNX Runtime %s at %s (sha256 %s)", lib.Version, lib.Path, short(lib.SHA256))
	}
	var out []Provider
	for _, t := range targets {
		p := Provider{Target: t.ID, Provider: t.Provider, Runner: t.Runner}
		p.Name = "ep:" + t.ID
		reason := e.ortProbe(t)
		if reason == "" {
			p.Found = true
			p.Detail = t.Provider + " accepted"
		} else {
			p.Reason = reason
		}
		out = append(out, p)
	}
	return ort, out
}

func short(sum string) string {
	if len(sum) > 12 {
		return sum[:12] + "…"
	}
	return sum
}
