// Package spec is what a generated suite knows about its model and target: plain
// data, converted from the catalogs by ModelOf and TargetOf, and nothing else. The
// generator renders these values as Go literals and the runtime runs them, so both
// see the same conversion; it is a leaf package (no cgo, no ONNX Runtime) so the
// generator can use it. Package runtime re-exports every type under the same name.
package spec

import (
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/hwtest/hwtest/catalog"
)

// Model is a catalog model as a suite runs it.
type Model struct {
	ID           string
	Family       string
	Architecture string // text only: encoder, decoder, encoder-decoder
	Source       string // catalog source; see package sources
	SHA256       string // expected sha256 of the file, "" when the catalog has none
	Fixture      string // zoo:NAME run in place of Source when Source is not on this machine
	Inputs       map[string]Input
	Outputs      Outputs
	Tolerance    *Tolerance // overrides the target's when set
	// Expected are known answers, per output name: every target is compared with them.
	Expected map[string]Expected

	// CatalogDir is the folder of the models.yaml naming the model, which a file:
	// source is relative to: relative to the repository root ("" is the root, so
	// generated code is the same on every checkout), or absolute for a catalog
	// outside it (see sources.CatalogDir).
	CatalogDir string
}

// Input overrides what would be synthesised from the model's input metadata.
type Input struct {
	Dims  []int64   // concrete shape
	Value []float64 // fixed values; one value fills the whole tensor
	Range []float64 // [low, high) for seeded random values
	// RealOnly: only the real export has this input; its fixture skips it.
	RealOnly bool
	// File gives the values and the shape (.npy, .pb, or an image made a tensor
	// as the image fields say), relative to CatalogDir; see catalog.Input.
	File     string
	Resize   []int64
	Layout   string
	Channels string
	Scale    float64
	Mean     []float64
	Std      []float64
}

// Expected is a known answer for one output: a .npy or .pb file relative to
// CatalogDir, compared with the model's tolerance when Tolerance is nil.
type Expected struct {
	File      string
	Tolerance *Tolerance
}

// Outputs names the outputs family checks read; see models.yaml's outputs.
type Outputs struct {
	Primary       string // the output property checks read; the first output when ""
	State         string // recurrent state out, fed back as StateIn on the next chunk
	StateIn       string
	Probabilities string // values in [0, 1]
	Distribution  string // softmax rows summing to 1
	Ranking       string // scores whose order along the last axis is the answer
	Router        string // mixture-of-experts router logits [..., experts]
	RouterTopK    int
	// The axes Distribution and Ranking run along; 0 is the last axis.
	DistributionAxis, RankingAxis int
}

// Tolerance bounds |got - want| <= ATol + RTol*|want|.
type Tolerance struct {
	RTol, ATol float64
}

// Allowed is the tolerance's allowance at a reference value.
func (t Tolerance) Allowed(want float64) float64 { return t.ATol + t.RTol*math.Abs(want) }

// Target is one hardware target as a suite sees it.
type Target struct {
	ID        string
	Name      string
	Runner    string // native or browser
	Provider  string // ONNX Runtime execution provider name
	Bundle    string // browser: onnxruntime-web bundle
	Options   map[string]string
	Precision string
	Tolerance Tolerance
	Fallback  []string
	// Expect is hardware.yaml's expect: per family, the reason this target is
	// declared unable to run it.
	Expect map[string]string
}

// ExpectFail is the reason hardware.yaml declares this target unable to run a
// family; "" when it should run it.
func (t Target) ExpectFail(family string) string { return t.Expect[family] }

// CPUProvider is ONNX Runtime's name for the default execution provider.
const CPUProvider = "CPUExecutionProvider"

// Accelerator reports whether a target must run every node on its own EP. The CPU
// target cannot be strict: with CPU fallback disabled every CPU session fails.
func (t Target) Accelerator() bool { return t.Provider != CPUProvider }

// EP is the execution provider name nodes report when they run on this target.
func (t Target) EP() string {
	if t.Runner != "browser" {
		return t.Provider
	}
	switch {
	case t.Provider == "webnn":
		return "WebNNExecutionProvider"
	case t.Provider == "webgpu" && strings.Contains(t.Bundle, "webgpu"):
		return "WebGpuExecutionProvider" // ort.webgpu.min.js: the native WebGPU EP
	case t.Provider == "webgpu":
		return "JsExecutionProvider" // ort.min.js: WebGPU through JSEP
	}
	return CPUProvider // wasm
}

// ModelOf is the one conversion of a catalog model. Task, Tags and Tier are not
// carried: the generator reads them to choose invariants and labels; a suite does
// not need them at run time.
func ModelOf(m catalog.Model) Model {
	out := Model{
		ID: m.ID, Family: m.Family, Architecture: m.Architecture,
		Source: m.Source, SHA256: m.SHA256, Fixture: m.Fixture, CatalogDir: m.Dir,
		Outputs: Outputs{
			Primary: m.Outputs.Primary, State: m.Outputs.State, StateIn: m.Outputs.StateIn,
			Probabilities: m.Outputs.Probabilities, Distribution: m.Outputs.Distribution,
			Ranking: m.Outputs.Ranking, Router: m.Outputs.Router, RouterTopK: m.Outputs.RouterTopK,
			DistributionAxis: m.Outputs.DistributionAxis, RankingAxis: m.Outputs.RankingAxis,
		},
	}
	if len(m.Inputs) > 0 {
		out.Inputs = map[string]Input{}
		for name, in := range m.Inputs {
			out.Inputs[name] = Input{
				Dims: slices.Clone(in.Dims), Value: slices.Clone(in.Value), Range: slices.Clone(in.Range),
				RealOnly: in.RealOnly,
				File:     in.File, Resize: slices.Clone(in.Resize), Layout: in.Layout, Channels: in.Channels,
				Scale: in.Scale, Mean: slices.Clone(in.Mean), Std: slices.Clone(in.Std),
			}
		}
	}
	if m.Tolerance != nil {
		out.Tolerance = &Tolerance{RTol: m.Tolerance.RTol, ATol: m.Tolerance.ATol}
	}
	if len(m.Expected) > 0 {
		out.Expected = map[string]Expected{}
		for name, e := range m.Expected {
			x := Expected{File: e.File}
			if e.Tolerance != nil {
				x.Tolerance = &Tolerance{RTol: e.Tolerance.RTol, ATol: e.Tolerance.ATol}
			}
			out.Expected[name] = x
		}
	}
	return out
}

// TargetOf is the one conversion of a hardware.yaml target. Probe is not carried:
// probing reads Runner and Provider.
func TargetOf(t catalog.Target) Target {
	return Target{
		ID: t.ID, Name: t.Name, Runner: t.Runner, Provider: t.Provider, Bundle: t.Bundle,
		Options:   maps.Clone(t.Options),
		Precision: t.Precision,
		Tolerance: Tolerance{RTol: t.Tolerance.RTol, ATol: t.Tolerance.ATol},
		Fallback:  slices.Clone(t.Fallback),
		Expect:    maps.Clone(t.Expect),
	}
}
