// Package zoo builds tiny-random ONNX models of the architectures hwtest
// covers but cannot download here (BERT, GPT-2, OPT, Qwen2, ViT, DETR,
// Mamba, Mixtral, CLIP, X-CLIP, CLAP, T5, Whisper, Wav2Vec2, a diffusion
// UNet, LLaVA, LLaVA-Next, RAG). Like Hugging Face's own
// "tiny-random" test checkpoints they have the real architecture's operator
// graph and I/O signature at a toy size, with weights drawn from a fixed
// seed, so every build is byte-identical.
//
// Every model also has a deliberately broken variant (Options.Perturb, with
// Info.Perturbation saying what it breaks) with the same inputs and
// outputs, chosen so that one invariant of the model's pipeline family
// holds on the original and fails on the variant.
package zoo

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"slices"

	"github.com/hwtest/hwtest/onnx"
)

// Info describes a zoo model.
type Info struct {
	Name         string
	Architecture string // e.g. "bert", "gpt2"
	Family       string // hwtest pipeline family, e.g. "text", "state-space"
	Description  string
	// Perturbation says what Options.Perturb breaks in this model, so that
	// the family's invariant can be seen to fail; empty if not supported.
	Perturbation string
	// Scale is the width multiplier the model was built at (Options.Scale);
	// 1 for the registered toy size.
	Scale            int64
	Params           int64 // floating-point weights
	InitializerBytes int64
	Opset            int64
	Inputs           []Port
	Outputs          []Port
}

// Port is a model input or output.
type Port struct {
	Name string
	Type onnx.DataType
	Dims []onnx.Dim
	// Max bounds the valid values of an integer input: [0, Max). Token ids
	// are below the vocabulary size, masks below 2. Zero for float ports.
	Max int64
}

// Options change how a model is built.
type Options struct {
	// Perturb builds a deliberately broken variant (see Info.Perturbation),
	// for tests that must see an invariant fail.
	Perturb bool
	// Scale multiplies the hidden width and feed-forward size (heads and layers
	// unchanged), so that a model with the real architecture's graph carries
	// real-sized weights: what a memory measurement needs to be checked
	// against. 0 and 1 build the registered toy size. Only models whose entry
	// is scalable take it; the graph's name and doc string say the scale, so a
	// scaled file is never mistaken for the registered one. Scaled models are
	// built at test time, never written by BuildAll.
	Scale int64
}

// model is one registry entry.
type model struct {
	arch, family, desc, perturbation string
	max                              map[string]int64 // Port.Max per input name
	scalable                         bool             // its build honours Options.Scale
	build                            func(g *onnx.Graph, o Options)
}

var registry = map[string]model{}

func register(name string, m model) {
	if _, dup := registry[name]; dup {
		panic("zoo: duplicate model " + name)
	}
	registry[name] = m
}

// Names lists the zoo's models in sorted order.
func Names() []string {
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Build builds the named model and returns its ONNX bytes.
func Build(name string) ([]byte, Info, error) { return BuildWith(name, Options{}) }

// BuildWith builds the named model with options.
func BuildWith(name string, o Options) ([]byte, Info, error) {
	m, ok := registry[name]
	if !ok {
		return nil, Info{}, fmt.Errorf("zoo: unknown model %q (have %v)", name, Names())
	}
	if o.Perturb && m.perturbation == "" {
		return nil, Info{}, fmt.Errorf("zoo: model %q has no perturbed variant", name)
	}
	if o.Scale < 0 || o.Scale > 1 && !m.scalable {
		return nil, Info{}, fmt.Errorf("zoo: model %q cannot be built at scale %d", name, o.Scale)
	}
	o.Scale = max(o.Scale, 1)
	graphName, desc := name, m.desc
	if o.Scale > 1 {
		graphName = fmt.Sprintf("%s-x%d", name, o.Scale)
		desc = fmt.Sprintf("%s; built at %d× the registered width (Options.Scale) so that its weights are real-sized", desc, o.Scale)
	}
	g := onnx.NewGraph(graphName).Seed(seed(name))
	m.build(g, o)
	mod := g.Model()
	mod.Doc = desc
	info := Info{
		Name:             name,
		Architecture:     m.arch,
		Family:           m.family,
		Description:      desc,
		Perturbation:     m.perturbation,
		Scale:            o.Scale,
		Params:           mod.Params(),
		InitializerBytes: mod.InitializerBytes(),
		Opset:            onnx.DefaultOpset,
	}
	for _, v := range g.Inputs {
		info.Inputs = append(info.Inputs, Port{Name: v.Name, Type: v.Type, Dims: v.Dims, Max: m.max[v.Name]})
	}
	for _, v := range g.Outputs {
		info.Outputs = append(info.Outputs, Port{Name: v.Name, Type: v.Type, Dims: v.Dims})
	}
	return mod.Marshal(), info, nil
}

// seed derives a model's weight seed from its name, so that models do not
// share weights and adding a model changes no other model's bytes.
func seed(name string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	return h.Sum64()
}

// BuildAll writes every model to dir/<name>.onnx, creating dir if needed.
// A file whose bytes are already right is left untouched (so its mtime
// stays and make-style tools see no change). It returns the paths written.
func BuildAll(dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var written []string
	for _, name := range Names() {
		data, _, err := Build(name)
		if err != nil {
			return written, err
		}
		path := filepath.Join(dir, name+".onnx")
		if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
			continue
		}
		// Write then rename so a reader never sees a half-written model.
		tmp := path + ".tmp"
		if err := os.WriteFile(tmp, data, 0o644); err != nil {
			return written, err
		}
		if err := os.Rename(tmp, path); err != nil {
			return written, err
		}
		written = append(written, path)
	}
	return written, nil
}
