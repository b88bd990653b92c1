package result

import (
	"fmt"
	"sort"
	"strings"
)

// Placement says where ONNX Runtime ran a model's nodes, from its profile: the
// nodes and kernel time per execution provider.
type Placement struct {
	// EP is the target's execution provider as the profile names it
	// ("WebGpuExecutionProvider" for the webgpu-native target, whose catalog
	// provider is "webgpu"); empty in results from before it was recorded.
	EP         string                   `json:"ep,omitempty"`
	Nodes      int                      `json:"nodes"`
	TimeUS     int64                    `json:"time_us"`
	ByProvider map[string]ProviderShare `json:"by_provider"`
}

// ProviderShare is one execution provider's part of a run.
type ProviderShare struct {
	Nodes  int   `json:"nodes"`
	TimeUS int64 `json:"time_us"`
	// Partitions is how many of Nodes are subgraphs the EP compiled as one (WebNN
	// does); how many model nodes each holds is not logged, so node shares are not
	// computed for such an EP.
	Partitions int `json:"partitions,omitempty"`
}

// AllOn reports whether every node ran on provider.
func (p Placement) AllOn(provider string) bool {
	for name, s := range p.ByProvider {
		if name != provider && s.Nodes > 0 {
			return false
		}
	}
	return true
}

// NoneOn reports whether provider took none of the nodes while others ran some: the
// model ran on the CPU. An EP that compiles partitions (WebNN) counts each
// partition as a node, so one partition is not none.
func (p Placement) NoneOn(provider string) bool {
	if s := p.ByProvider[provider]; s.Nodes > 0 || s.Partitions > 0 {
		return false
	}
	for _, s := range p.ByProvider {
		if s.Nodes > 0 {
			return true
		}
	}
	return false
}

// Status is what the placement makes of a cell whose outputs agreed: pass when
// every node ran on provider, cpu-only when none did, else partial.
func (p Placement) Status(provider string) Status {
	switch {
	case p.AllOn(provider):
		return StatusPass
	case p.NoneOn(provider):
		return StatusCPUOnly
	}
	return StatusPartial
}

// Share is the percentage of nodes and of kernel time that ran on provider.
func (p Placement) Share(provider string) (nodesPct, timePct float64) {
	s := p.ByProvider[provider]
	if p.Nodes > 0 {
		nodesPct = 100 * float64(s.Nodes) / float64(p.Nodes)
	}
	if p.TimeUS > 0 {
		timePct = 100 * float64(s.TimeUS) / float64(p.TimeUS)
	}
	return nodesPct, timePct
}

// TargetShare is the percentage of nodes that ran on the target's EP: EP when the
// placement names it, else provider (the target's, from its provenance).
func (p Placement) TargetShare(provider string) float64 {
	if p.EP != "" {
		provider = p.EP
	}
	nodes, _ := p.Share(provider)
	return nodes
}

// Summary reads "83% of 120 nodes (91% of kernel time) on CUDA, the rest on CPU",
// or, where the EP compiled partitions, "WebNN ran 1 compiled partition (nodes
// inside not logged); 71 nodes ran on CPU", or, where the EP took nothing, "WebNN
// took none of the 33 nodes: all ran on CPU".
func (p Placement) Summary(provider string) string {
	var others []string
	for name := range p.ByProvider {
		if name != provider {
			others = append(others, name)
		}
	}
	sort.Strings(others)
	short := make([]string, len(others))
	for i, o := range others {
		short[i] = shortProvider(o)
	}
	if p.NoneOn(provider) {
		return fmt.Sprintf("%s took none of the %d nodes: all ran on %s", shortProvider(provider), p.Nodes, strings.Join(short, ", "))
	}
	if s := p.ByProvider[provider]; s.Partitions > 0 {
		text := fmt.Sprintf("%s ran %d compiled partition(s) (the nodes inside are not logged)", shortProvider(provider), s.Partitions)
		for _, o := range others {
			text += fmt.Sprintf("; %d nodes ran on %s", p.ByProvider[o].Nodes, shortProvider(o))
		}
		return text
	}
	nodes, time := p.Share(provider)
	text := fmt.Sprintf("%.0f%% of %d nodes", nodes, p.Nodes)
	if p.TimeUS > 0 {
		text += fmt.Sprintf(" (%.0f%% of kernel time)", time)
	}
	text += " on " + shortProvider(provider)
	if len(others) > 0 {
		text += ", the rest on " + strings.Join(short, ", ")
	}
	return text
}

func shortProvider(name string) string {
	if name == "JsExecutionProvider" {
		return "WebGPU (JSEP)" // onnxruntime-web's JavaScript EP is how ort.min.js runs WebGPU
	}
	return strings.TrimSuffix(name, "ExecutionProvider")
}
