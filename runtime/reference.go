package runtime

import (
	"fmt"
	"path/filepath"
	"sync"

	"github.com/hwtest/hwtest/result"
	"github.com/hwtest/hwtest/shapes"
	"github.com/hwtest/hwtest/sources"
)

// ResolvedModel is the file that will run for a catalog model on this machine.
type ResolvedModel struct {
	Path    string
	SHA256  string
	Fixture string // "tiny-random" when a zoo fixture stands in for the real model
}

// Resolve finds the model's file: its source when present, else its fixture. A
// declared sha256 must match, so a truncated or swapped file is caught before ONNX
// Runtime sees it.
func Resolve(m Model) (ResolvedModel, error) {
	root, err := Root()
	if err != nil {
		return ResolvedModel{}, err
	}
	return ResolveIn(root, m)
}

// ResolveIn is Resolve under a given repository root.
func ResolveIn(root string, m Model) (ResolvedModel, error) {
	src, err := sources.Parse(m.Source)
	if err != nil {
		return ResolvedModel{}, fmt.Errorf("model %q: %w", m.ID, err)
	}
	path := sources.LocalPath(root, m.CatalogDir, src)
	if !fileExists(path) && m.Fixture != "" {
		fx, err := sources.Parse(m.Fixture)
		if err != nil {
			return ResolvedModel{}, fmt.Errorf("model %q: fixture: %w", m.ID, err)
		}
		fpath := sources.LocalPath(root, m.CatalogDir, fx)
		if !fileExists(fpath) {
			return ResolvedModel{}, fmt.Errorf("model %q: neither %s nor its fixture %s is on this machine: run `make setup`", m.ID, path, fpath)
		}
		sum, err := fileSHA256(fpath)
		return ResolvedModel{Path: fpath, SHA256: sum, Fixture: "tiny-random"}, err
	}
	switch {
	case !fileExists(path) && src.Scheme == "file":
		return ResolvedModel{}, fmt.Errorf("model %q: %s is missing: nothing fetches a file: source; put the model there, or fix the path (it is relative to the folder of the models.yaml naming it)", m.ID, rel(root, path))
	case !fileExists(path):
		return ResolvedModel{}, fmt.Errorf("model %q: %s is missing: run `make setup` (it fetches %s)", m.ID, rel(root, path), m.Source)
	}
	sum, err := fileSHA256(path)
	if err != nil {
		return ResolvedModel{}, err
	}
	if m.SHA256 != "" && sum != m.SHA256 {
		return ResolvedModel{}, fmt.Errorf("model %q: %s has sha256 %s, models.yaml pins %s: %s", m.ID, rel(root, path), sum, m.SHA256, sources.MismatchAdvice(src, sum))
	}
	return ResolvedModel{Path: path, SHA256: sum}, nil
}

func rel(root, path string) string {
	if r, err := filepath.Rel(root, path); err == nil {
		return r
	}
	return path
}

// Reference is the CPU fp32 run of a model on its synthesised inputs: what every
// target is compared with.
type Reference struct {
	Inputs  []Tensor
	Outputs []Tensor
	// Chunks are the outputs of successive runs with recurrent state carried, for
	// stateful models (Model.Outputs.State set); nil otherwise.
	Chunks [][]Tensor
	// Fixture is "tiny-random" when a zoo fixture ran in place of the real model.
	Fixture string
}

var references sync.Map // model sha256 + id -> *referenceOnce

type referenceOnce struct {
	once sync.Once
	ref  *Reference
	err  error
}

// CPUReference computes the model's reference once per process, keyed by the model
// file's hash and the model id (whose overrides shape the inputs).
func CPUReference(m Model, rm ResolvedModel) (*Reference, error) {
	v, _ := references.LoadOrStore(rm.SHA256+"\x00"+m.ID, &referenceOnce{})
	r := v.(*referenceOnce)
	r.once.Do(func() { r.ref, r.err = computeReference(m, rm) })
	return r.ref, r.err
}

func computeReference(m Model, rm ResolvedModel) (*Reference, error) {
	s, err := openSession(rm.Path, Target{ID: "reference", Provider: CPUProvider}, false, true, "")
	if err != nil {
		return nil, fmt.Errorf("model %q: %s is not a loadable ONNX model: %w", m.ID, rm.Path, err)
	}
	defer s.Close()
	overrides := m.Inputs
	if rm.Fixture != "" {
		// The catalog's overrides describe the real export; inputs marked
		// real_only (BERT's token_type_ids) do not exist in its tiny stand-in. Any
		// other unknown name is still an error: a typo must not pass silently.
		// A file holds the real export's input (a 224×224 image for a fixture
		// of 32×32): the stand-in's is synthesised, and expected outputs, which
		// are the real model's, do not apply to it.
		// Its shape is what the stand-in's own metadata suggests (batch 1, else 8):
		// the file's shape is the real model's.
		suggested := shapes.Suggest(ShapeInputs(s.Inputs()))
		overrides = map[string]Input{}
		for name, ov := range m.Inputs {
			switch {
			case ov.RealOnly:
			case ov.File != "":
				overrides[name] = Input{Dims: suggested[name]}
			default:
				overrides[name] = ov
			}
		}
	}
	files, errs := readInputFiles(m, s.Inputs(), overrides)
	inputs, err := buildInputs(m.ID, s.Inputs(), overrides, files, errs)
	if err != nil {
		return nil, result.WithCause(result.CauseInputs, err)
	}
	out, err := s.Run(inputs)
	if err != nil {
		return nil, fmt.Errorf("model %q: CPU reference run failed: %w", m.ID, err)
	}
	ref := &Reference{Inputs: inputs, Outputs: out, Fixture: rm.Fixture}
	if m.Outputs.State != "" {
		if ref.Chunks, err = RunChunks(s, m, inputs, streamChunks); err != nil {
			return nil, fmt.Errorf("model %q: CPU reference, streaming: %w", m.ID, err)
		}
	}
	return ref, nil
}

// streamChunks is how many successive runs a stateful model's streaming check makes.
const streamChunks = 4

// RunChunks runs a stateful model n times, feeding each run's state output back as
// the next run's state input, with fresh seeded values for the other float inputs.
func RunChunks(s Backend, m Model, first []Tensor, n int) ([][]Tensor, error) {
	if m.Outputs.StateIn == "" {
		return nil, fmt.Errorf("outputs.state is set but outputs.state_input is not")
	}
	inputs := append([]Tensor(nil), first...)
	var all [][]Tensor
	for k := 0; k < n; k++ {
		out, err := s.Run(inputs)
		if err != nil {
			return nil, fmt.Errorf("chunk %d: %w", k, err)
		}
		all = append(all, out)
		state, ok := find(out, m.Outputs.State)
		if !ok {
			return nil, fmt.Errorf("model has no output %q (outputs.state)", m.Outputs.State)
		}
		next := make([]Tensor, len(inputs))
		for i, in := range inputs {
			switch {
			case in.Name == m.Outputs.StateIn:
				next[i] = Tensor{Name: in.Name, Type: in.Type, Shape: state.Shape, Data: state.Data}
			case isFloat(in.Type) && m.Inputs[in.Name].Value == nil:
				next[i] = rotate(in, k+1)
			default:
				next[i] = in
			}
		}
		inputs = next
	}
	return all, nil
}

// rotate gives a float input new values for chunk k: the first chunk's values
// rotated, so they stay in the catalog's range and need no second random source.
func rotate(in Tensor, k int) Tensor {
	out := Tensor{Name: in.Name, Type: in.Type, Shape: in.Shape, Data: make([]float64, len(in.Data))}
	n := len(in.Data)
	for i := range out.Data {
		out.Data[i] = in.Data[(i+k*7919)%n]
	}
	return out
}
