package runtime

// Model is what a generated suite knows about its model: the catalog entry,
// flattened to plain data by the generator.
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

	// CatalogDir is the folder of the models.yaml naming the model, which a file:
	// source is relative to: relative to the repository root ("" is the root), or
	// absolute for a catalog outside it (see sources.CatalogDir).
	CatalogDir string
}

// Input overrides what would be synthesised from the model's input metadata.
type Input struct {
	Dims  []int64   // concrete shape
	Value []float64 // fixed values; one value fills the whole tensor
	Range []float64 // [low, high) for seeded random values
	// RealOnly: only the real export has this input; its fixture skips it.
	RealOnly bool
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
}

// Tolerance bounds |got - want| <= ATol + RTol*|want|.
type Tolerance struct {
	RTol, ATol float64
}

// Target is one hardware target as the generated suite sees it.
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
	// ExpectFail is hardware.yaml's reason this target cannot run this model's
	// family; "" when it should.
	ExpectFail string

	// reference marks the CPU reference's own session: graph optimisations off, so
	// the cpu target (optimisations on, as users run it) is compared with the
	// model as written, and its cell tests ONNX Runtime's fusions, not itself.
	reference bool
}

// Accelerator reports whether a target must run every node on its own EP. The CPU
// target cannot be strict: with CPU fallback disabled every CPU session fails.
func (t Target) Accelerator() bool { return t.Provider != CPUProvider }

// EP is the execution provider name nodes report when they run on this target.
func (t Target) EP() string {
	if t.Runner == "browser" {
		return webEP(t)
	}
	return t.Provider
}

// CPUProvider is ONNX Runtime's name for the default execution provider.
const CPUProvider = "CPUExecutionProvider"
