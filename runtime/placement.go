package runtime

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/hwtest/hwtest/result"
)

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
func ParsePlacement(profile []byte) (result.Placement, error) {
	var events []profileEvent
	if err := json.Unmarshal(profile, &events); err != nil {
		return result.Placement{}, fmt.Errorf("reading ONNX Runtime's profile: %w", err)
	}
	p := result.Placement{ByProvider: map[string]result.ProviderShare{}}
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
func ProfilePlacement(path string, t Target, inputs []Tensor) (result.Placement, error) {
	dir, err := os.MkdirTemp("", "hwtest-profile-")
	if err != nil {
		return result.Placement{}, err
	}
	defer os.RemoveAll(dir)
	s, err := openSession(path, t, false, false, filepath.Join(dir, "profile"))
	if err != nil {
		return result.Placement{}, err
	}
	_, runErr := s.Run(inputs)
	if err := s.Close(); err != nil { // the profile is written here
		return result.Placement{}, err
	}
	if runErr != nil {
		return result.Placement{}, runErr
	}
	files, _ := filepath.Glob(filepath.Join(dir, "profile*.json"))
	if len(files) != 1 {
		return result.Placement{}, fmt.Errorf("ONNX Runtime wrote %d profiles, want 1", len(files))
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		return result.Placement{}, err
	}
	return ParsePlacement(data)
}

// FallbackDisabled reports ONNX Runtime's refusal to create a strict session because
// some nodes would have run on the CPU: the EP is here, but cannot take the whole
// model.
func FallbackDisabled(err error) bool {
	return err != nil && strings.Contains(err.Error(), "fallback to CPU EP has been explicitly disabled")
}
