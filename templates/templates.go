// Package templates holds the two tables the generator renders from: one template
// per pipeline family (the invariants that must hold on every target) and one per
// kind of target (the setup of a Context: labels, availability, provider options,
// tolerance). They are data, dispatched by name, so a coverage check can loop over
// them; the logic they call lives in package runtime.
package templates

import (
	"fmt"
	"slices"

	"github.com/dave/jennifer/jen"

	"github.com/hwtest/hwtest/catalog"
	"github.com/hwtest/hwtest/result"
)

// RuntimePath is the import path of the package generated suites run on.
const RuntimePath = "github.com/hwtest/hwtest/runtime"

// GinkgoPath is dot-imported by every generated file, as Ginkgo suites do.
const GinkgoPath = "github.com/onsi/ginkgo/v2"

// ginkgo refers to a Ginkgo DSL name; files dot-import Ginkgo, so it renders bare.
func ginkgo(name string) *jen.Statement { return jen.Qual(GinkgoPath, name) }

// Ginkgo is a Ginkgo identifier, for the generator's own files.
func Ginkgo(name string) *jen.Statement { return ginkgo(name) }

// FamilyTemplate lists the invariants, by their identifier in package runtime, that
// a family's model must satisfy on every target. Architecture narrows the text
// family to one kind of model; "" matches any.
type FamilyTemplate struct {
	Family       string
	Architecture string
	Invariants   []string // asserted on every model of the family
	// ByOutput adds invariants for models that declare an output role in
	// models.yaml (outputs.state, outputs.ranking, ...).
	ByOutput []Conditional
	// ByTask adds invariants for models of one task (speech recognition decodes
	// tokens frame by frame, so its argmax must agree).
	ByTask map[string][]string
	// Requires are the output roles every model of the family must declare, since
	// the family's defining check reads them.
	Requires []string
}

// Conditional is a set of invariants that apply when a model declares an output role.
type Conditional struct {
	Role       string
	Invariants []string
}

// Output roles a model can declare under outputs: in models.yaml.
const (
	RoleState         = "state"
	RoleProbabilities = "probabilities"
	RoleDistribution  = "distribution"
	RoleRanking       = "ranking"
	RoleRouter        = "router"
	// RoleExpected is not an output role but known answers (expected:), which
	// every target is compared with as the roles' checks are.
	RoleExpected = "expected"
)

// commonByOutput applies to every family: a declared role is always checked.
var commonByOutput = []Conditional{
	{Role: RoleProbabilities, Invariants: []string{"ProbabilitiesInUnitRange"}},
	{Role: RoleDistribution, Invariants: []string{"ProbabilitiesInUnitRange", "DistributionSumsToOne"}},
	{Role: RoleRanking, Invariants: []string{"RankingAgrees"}},
	{Role: RoleRouter, Invariants: []string{"RouterTopKAgrees"}},
	{Role: RoleExpected, Invariants: []string{"MatchesExpectedOutputs"}},
}

// Families is the family table. Every family asserts agreement with the CPU
// reference first; the rest are the family's own properties (DESIGN.md, Invariants).
var Families = []FamilyTemplate{
	{Family: "text", Architecture: "encoder", Invariants: []string{"OutputsAgree", "HiddenStateShape", "PooledEmbeddingCosine", "PaddingIgnored"}},
	{Family: "text", Architecture: "decoder", Invariants: []string{"OutputsAgree", "ArgmaxAgrees", "Causality"}},
	{Family: "text", Architecture: "encoder-decoder", Invariants: []string{"OutputsAgree", "ArgmaxAgrees"}},
	{Family: "vision", Invariants: []string{"OutputsAgree", "TopKAgrees"}},
	{Family: "vision-text", Invariants: []string{"OutputsAgree"}, Requires: []string{RoleRanking}},
	{Family: "audio", Invariants: []string{"OutputsAgree"},
		ByOutput: []Conditional{{Role: RoleState, Invariants: []string{"StreamingStateAgrees"}}},
		ByTask:   map[string][]string{"automatic-speech-recognition": {"ArgmaxAgrees"}}},
	{Family: "multimodal", Invariants: []string{"OutputsAgree", "ArgmaxAgrees", "Causality"}},
	{Family: "diffusion", Invariants: []string{"OutputsAgree", "SameInputsSameOutputs"}},
	{Family: "mixture-of-experts", Invariants: []string{"OutputsAgree", "ArgmaxAgrees"}, Requires: []string{RoleRouter}},
	{Family: "state-space", Invariants: []string{"OutputsAgree"}, Requires: []string{RoleState},
		ByOutput: []Conditional{{Role: RoleState, Invariants: []string{"ChunkedScanEqualsWhole"}}}},
	{Family: "rag", Invariants: []string{"OutputsAgree", "ArgmaxAgrees"}, Requires: []string{RoleRanking}},
}

// FamilyFor finds the template for a model's family and architecture.
func FamilyFor(family, architecture string) (FamilyTemplate, bool) {
	for _, f := range Families {
		if f.Family == family && (f.Architecture == "" || f.Architecture == architecture) {
			return f, true
		}
	}
	return FamilyTemplate{}, false
}

// declared reports whether a model names an output for a role.
func declared(m catalog.Model, role string) bool {
	switch role {
	case RoleState:
		return m.Outputs.State != ""
	case RoleProbabilities:
		return m.Outputs.Probabilities != ""
	case RoleDistribution:
		return m.Outputs.Distribution != ""
	case RoleRanking:
		return m.Outputs.Ranking != ""
	case RoleRouter:
		return m.Outputs.Router != ""
	case RoleExpected:
		return len(m.Expected) > 0
	}
	return false
}

// Check reports a model that lacks an output role its family's checks need.
func (f FamilyTemplate) Check(m catalog.Model) error {
	for _, role := range f.Requires {
		if !declared(m, role) {
			return fmt.Errorf("a %s model must name its outputs.%s in models.yaml (the family's checks read it)", f.Family, role)
		}
	}
	return nil
}

// InvariantsFor is the ordered list of invariants a model is checked with, each once.
func (f FamilyTemplate) InvariantsFor(m catalog.Model) []string {
	out := append([]string(nil), f.Invariants...)
	for _, inv := range f.ByTask[m.Task] {
		if !slices.Contains(out, inv) {
			out = append(out, inv)
		}
	}
	for _, c := range append(append([]Conditional(nil), commonByOutput...), f.ByOutput...) {
		if !declared(m, c.Role) {
			continue
		}
		for _, inv := range c.Invariants {
			if !slices.Contains(out, inv) {
				out = append(out, inv)
			}
		}
	}
	return out
}

// Titles are the invariants' names as their specs are titled, literal in generated
// code so a suite reads on its own; a test holds them equal to each runtime
// Invariant's Name, which is what results record.
var Titles = map[string]string{
	"OutputsAgree":             "agrees with the CPU reference",
	"ProbabilitiesInUnitRange": "gives probabilities in [0, 1]",
	"StreamingStateAgrees":     "carries streaming state across chunks like the CPU",
	"HiddenStateShape":         "returns hidden states of shape [batch, sequence, hidden]",
	"PooledEmbeddingCosine":    "pools to embeddings with cosine >= 0.999 to the CPU's",
	"PaddingIgnored":           "ignores masked padding tokens",
	"ArgmaxAgrees":             "predicts the CPU's token at every position",
	"Causality":                "is causal: a later token does not change earlier logits",
	"TopKAgrees":               "ranks the same top-5 classes as the CPU",
	"DistributionSumsToOne":    "gives distributions that sum to 1",
	"RankingAgrees":            "ranks candidates in the CPU's order",
	"RouterTopKAgrees":         "routes every token to the CPU's top-k experts",
	"SameInputsSameOutputs":    "gives the same output for the same inputs and seed",
	"ChunkedScanEqualsWhole":   "scans in chunks with carried state like the whole sequence",
	"MatchesExpectedOutputs":   "matches the expected outputs",
}

// Specs emits the Its of a family template for a model, on the cell CellSpecs
// declares, one line each:
//
//	It("measures load, latency and memory", cell.Measure)
//	It("agrees with the CPU reference", func() { cell.Check(runtime.OutputsAgree) })
func (f FamilyTemplate) Specs(m catalog.Model) ([]jen.Code, error) {
	specs := []jen.Code{
		ginkgo("It").Call(jen.Lit("measures load, latency and memory"), jen.Id(cellVar).Dot("Measure")),
	}
	for _, inv := range f.InvariantsFor(m) {
		title, ok := Titles[inv]
		if !ok {
			return nil, fmt.Errorf("family template %s names invariant %q, which has no title", f.Family, inv)
		}
		specs = append(specs, ginkgo("It").Call(
			jen.Lit(title),
			jen.Func().Params().Custom(jen.Options{Open: "{ ", Close: " }"},
				jen.Id(cellVar).Dot("Check").Call(jen.Qual(RuntimePath, inv))),
		))
	}
	return specs, nil
}

// TargetTemplate emits the Context for one target of a model. Runner selects it.
type TargetTemplate struct {
	Runner string
	// Context renders the target's Context, given the name of the model's
	// variable, the target's value (a variable the generator emits once, in
	// package targets) and the name of the func that declares the model's specs
	// on a cell.
	Context func(t catalog.Target, model string, target jen.Code, specs string) jen.Code
}

// Targets is the target table, one template per runner.
var Targets = []TargetTemplate{
	{Runner: "native", Context: cellContext},
	{Runner: "browser", Context: cellContext},
}

// TargetFor finds the template for a target.
func TargetFor(t catalog.Target) (TargetTemplate, bool) {
	for _, tt := range Targets {
		if tt.Runner == t.Runner {
			return tt, true
		}
	}
	return TargetTemplate{}, false
}

// cellContext renders, on one line:
//
//	Context("cuda", Ordered, Label("hw:cuda"), func() { specs(runtime.NewCell(model, targets.Cuda)) })
//
// Ordered, so one session serves every spec of the cell and a failed Open skips the
// rest instead of failing each of them for the same reason.
func cellContext(t catalog.Target, model string, target jen.Code, specs string) jen.Code {
	return ginkgo("Context").Call(
		jen.Lit(t.ID), ginkgo("Ordered"), ginkgo("Label").Call(jen.Lit(result.TargetLabel(t.ID))),
		jen.Func().Params().Custom(jen.Options{Open: "{ ", Close: " }"},
			jen.Id(specs).Call(jen.Qual(RuntimePath, "NewCell").Call(jen.Id(model), target))),
	)
}

// cellVar names the cell inside the func CellSpecs renders; the Its of Specs use it.
const cellVar = "cell"

// CellSpecs renders the func every Context of a model calls with its cell:
//
//	specs := func(cell *runtime.Cell) {
//		BeforeAll(cell.Open)
//		AfterAll(cell.Close)
//		It(...)
//	}
func CellSpecs(name string, its []jen.Code) jen.Code {
	body := append([]jen.Code{
		ginkgo("BeforeAll").Call(jen.Id(cellVar).Dot("Open")),
		ginkgo("AfterAll").Call(jen.Id(cellVar).Dot("Close")),
	}, its...)
	return jen.Id(name).Op(":=").Func().Params(jen.Id(cellVar).Op("*").Qual(RuntimePath, "Cell")).Block(body...)
}
