package runtime

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Placement says where ONNX Runtime ran a model's nodes, from its profile: the
// nodes and kernel time per execution provider.
type Placement struct {
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

// Summary reads "83% of 120 nodes (91% of kernel time) on CUDA, the rest on CPU",
// or, where the EP compiled partitions, "WebNN ran 1 compiled partition (nodes
// inside not logged); 71 nodes ran on CPU".
func (p Placement) Summary(provider string) string {
	var others []string
	for name := range p.ByProvider {
		if name != provider {
			others = append(others, name)
		}
	}
	sort.Strings(others)
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
		short := make([]string, len(others))
		for i, o := range others {
			short[i] = shortProvider(o)
		}
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

// profileEvent is one event of ONNX Runtime's profile (Chrome trace format). A
// node's kernel run is cat "Node", name "<node>_kernel_time", with args.provider.
type profileEvent struct {
	Cat  string `json:"cat"`
	Name string `json:"name"`
	Dur  int64  `json:"dur"`
	Args struct {
		Provider string `json:"provider"`
		OpName   string `json:"op_name"`
	} `json:"args"`
}

// ParsePlacement counts each node once per provider (a profile of several runs
// holds each node several times) and sums its kernel time.
func ParsePlacement(profile []byte) (Placement, error) {
	var events []profileEvent
	if err := json.Unmarshal(profile, &events); err != nil {
		return Placement{}, fmt.Errorf("reading ONNX Runtime's profile: %w", err)
	}
	p := Placement{ByProvider: map[string]ProviderShare{}}
	seen := map[string]bool{}
	for _, e := range events {
		if e.Cat != "Node" || !strings.HasSuffix(e.Name, "_kernel_time") || e.Args.Provider == "" {
			continue
		}
		share := p.ByProvider[e.Args.Provider]
		share.TimeUS += e.Dur
		p.TimeUS += e.Dur
		if node := e.Args.Provider + "\x00" + e.Name; !seen[node] {
			seen[node] = true
			share.Nodes++
			p.Nodes++
		}
		p.ByProvider[e.Args.Provider] = share
	}
	if p.Nodes == 0 {
		return p, fmt.Errorf("ONNX Runtime's profile has no node events")
	}
	return p, nil
}

// ProfilePlacement runs the model once on the target with CPU fallback allowed and
// profiling on, and reads where each node ran.
func ProfilePlacement(path string, t Target, inputs []Tensor) (Placement, error) {
	dir, err := os.MkdirTemp("", "hwtest-profile-")
	if err != nil {
		return Placement{}, err
	}
	defer os.RemoveAll(dir)
	s, err := openSession(path, t, false, false, filepath.Join(dir, "profile"))
	if err != nil {
		return Placement{}, err
	}
	_, runErr := s.Run(inputs)
	if err := s.Close(); err != nil { // the profile is written here
		return Placement{}, err
	}
	if runErr != nil {
		return Placement{}, runErr
	}
	files, _ := filepath.Glob(filepath.Join(dir, "profile*.json"))
	if len(files) != 1 {
		return Placement{}, fmt.Errorf("ONNX Runtime wrote %d profiles, want 1", len(files))
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		return Placement{}, err
	}
	return ParsePlacement(data)
}

// FallbackDisabled reports ONNX Runtime's refusal to create a strict session because
// some nodes would have run on the CPU: the EP is here, but cannot take the whole
// model.
func FallbackDisabled(err error) bool {
	return err != nil && strings.Contains(err.Error(), "fallback to CPU EP has been explicitly disabled")
}
