// Package catalog holds the two YAML catalogs hwtest is driven by, models.yaml and
// hardware.yaml, and decodes them strictly: unknown fields, unknown references and
// bad values are errors that carry FILE:LINE:COL, all reported at once.
package catalog

// Families are the nine pipeline families, in the order reports list them.
var Families = []string{
	"text", "vision", "vision-text", "audio", "multimodal",
	"diffusion", "mixture-of-experts", "state-space", "rag",
}

// TextArchitectures are the kinds of text model; a text model must name one,
// since each has its own invariants (causality only holds for decoders).
var TextArchitectures = []string{"encoder", "decoder", "encoder-decoder"}

// Tiers are the size tiers, smallest first.
var Tiers = []string{"tiny", "small", "base", "large", "xl"}

// Catalogs is both catalogs, decoded and validated.
type Catalogs struct {
	Models  []Model  // in file order
	Targets []Target // in file order

	ModelsFile   string // path as given, used in messages and the generated header
	HardwareFile string
	// ModelsDir is the folder of ModelsFile, which file: sources are relative to:
	// absolute after Load, as given after Parse.
	ModelsDir string
}

// Model is one entry of models.yaml.
type Model struct {
	ID           string           `yaml:"id"`
	Family       string           `yaml:"family"`
	Architecture string           `yaml:"architecture,omitempty"` // text only: encoder, decoder, encoder-decoder
	Task         string           `yaml:"task"`
	Source       string           `yaml:"source"`            // file:PATH | zoo:NAME | npm:PKG@VER/PATH | hf:ORG/REPO/PATH@REV
	SHA256       string           `yaml:"sha256,omitempty"`  // required for npm: and hf: sources
	Fixture      string           `yaml:"fixture,omitempty"` // zoo:NAME run offline in place of an hf: source
	Inputs       map[string]Input `yaml:"inputs,omitempty"`
	Outputs      OutputSpec       `yaml:"outputs,omitempty"`
	Tolerance    *Tolerance       `yaml:"tolerance,omitempty"`
	Tags         []string         `yaml:"tags,omitempty"`
	Tier         string           `yaml:"tier,omitempty"`

	// Expected are known answers: per output, a file every target's output is
	// compared with, next to the CPU reference.
	Expected map[string]Expected `yaml:"expected,omitempty"`

	Line, Column int `yaml:"-"` // where the entry starts in models.yaml
	// Dir is the folder of the models.yaml naming the model (Catalogs.ModelsDir
	// after Load), carried by each model so that what runs it alone (spec.ModelOf)
	// resolves its file: source as the catalog means it. sources.RootRelative
	// rewrites it relative to the repository root for generated suites.
	Dir string `yaml:"-"`
}

// Input overrides what the runtime would otherwise synthesise from the model's own
// input metadata.
type Input struct {
	Dims  []int64   `yaml:"dims,omitempty"`  // concrete shape; replaces symbolic dims
	Value []float64 `yaml:"value,omitempty"` // fixed values (a sample rate, token ids)
	Range []float64 `yaml:"range,omitempty"` // [low, high] for random values
	// RealOnly marks an input only the real export has (BERT's token_type_ids):
	// its tiny fixture skips the override instead of calling it unknown.
	RealOnly bool `yaml:"real_only,omitempty"`

	Line, Column int `yaml:"-"` // where the input's name is written in models.yaml

	// File gives the input's values and shape: a .npy array, an ONNX TensorProto
	// .pb, or an image (.png, .jpg) made a tensor as the fields below say
	// (package tensorfile; models.yaml's header documents them and their defaults).
	// Relative to the folder of the models.yaml naming it.
	File     string    `yaml:"file,omitempty"`
	Resize   []int64   `yaml:"resize,omitempty"`   // image: [height, width], bilinear
	Layout   string    `yaml:"layout,omitempty"`   // image: nchw or nhwc
	Channels string    `yaml:"channels,omitempty"` // image: rgb, bgr or gray
	Scale    float64   `yaml:"scale,omitempty"`    // image: pixels (0..255) are divided by it
	Mean     []float64 `yaml:"mean,omitempty"`     // image: subtracted per channel after scaling
	Std      []float64 `yaml:"std,omitempty"`      // image: then divided by, per channel
}

// Expected is a known answer for one output.
type Expected struct {
	File      string     `yaml:"file"` // .npy or .pb, relative to the catalog's folder
	Tolerance *Tolerance `yaml:"tolerance,omitempty"`

	Line, Column int `yaml:"-"` // where the output's name is written in models.yaml
}

// OutputSpec names the outputs a family check reads when the model has several.
type OutputSpec struct {
	Primary string `yaml:"primary,omitempty"` // logits, embeddings, probabilities
	State   string `yaml:"state,omitempty"`   // recurrent state output, fed back as StateInput
	StateIn string `yaml:"state_input,omitempty"`

	Probabilities string `yaml:"probabilities,omitempty"` // an output of probabilities: every value in [0, 1]
	Distribution  string `yaml:"distribution,omitempty"`  // a softmax output: rows sum to 1
	Ranking       string `yaml:"ranking,omitempty"`       // scores whose order per row is the answer (similarity, retrieval)
	Router        string `yaml:"router,omitempty"`        // mixture-of-experts router logits [..., experts]
	RouterTopK    int    `yaml:"router_top_k,omitempty"`  // experts chosen per token

	// At is where each output name is written, by field ("primary", "state", ...),
	// for checks against the model file.
	At map[string]Position `yaml:"-"`

	// The axis distribution and ranking run along, from their mapping form
	// ({output: prob, axis: 1}); 0 is the last axis (the string form), since a
	// distribution or ranking is never over the batch axis.
	DistributionAxis int `yaml:"-"`
	RankingAxis      int `yaml:"-"`
}

// Position is a place in a catalog file.
type Position struct{ Line, Column int }

// Tolerance bounds |got-want| <= atol + rtol*|want|.
type Tolerance struct {
	RTol float64 `yaml:"rtol"`
	ATol float64 `yaml:"atol"`
}

// Target is one entry of hardware.yaml.
type Target struct {
	ID        string            `yaml:"id"`
	Name      string            `yaml:"name"`
	Runner    string            `yaml:"runner"`           // native (ONNX Runtime in process) or browser
	Provider  string            `yaml:"provider"`         // ONNX Runtime EP name, or the onnxruntime-web EP
	Bundle    string            `yaml:"bundle,omitempty"` // browser: the onnxruntime-web bundle
	Options   map[string]string `yaml:"options,omitempty"`
	Probe     string            `yaml:"probe"`
	Precision string            `yaml:"precision"`
	Tolerance Tolerance         `yaml:"tolerance"`
	Fallback  []string          `yaml:"fallback,omitempty"` // target ids tried in order when this one is unavailable
	Expect    map[string]string `yaml:"expect,omitempty"`   // family -> reason it is expected to fail

	Line, Column int `yaml:"-"`
}

// Runners a target can use.
var Runners = []string{"native", "browser"}

// Precisions a target can run at; each has its own tolerance.
var Precisions = []string{"fp32", "fp16", "int8"}

// TierFor is the size tier of a model with this many parameters (weights): tiny
// below 50M, small below 200M, base below 1B, large below 20B, xl from 20B. The
// tier follows the count, not the model's name: BERT-base (110M) is small.
func TierFor(params int64) string {
	switch {
	case params < 50e6:
		return "tiny"
	case params < 200e6:
		return "small"
	case params < 1e9:
		return "base"
	case params < 20e9:
		return "large"
	}
	return "xl"
}
