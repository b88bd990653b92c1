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
)

// RuntimePath is the import path of the package generated suites run on.
const RuntimePath = "github.com/hwtest/hwtest/runtime"

// GinkgoPath is dot-imported by every generated file, as Ginkgo suites do.
const GinkgoPath = "github.com/onsi/ginkgo/v2"

// ginkgo refers to a Ginkgo DSL name; files dot-import Ginkgo, so it renders bare.
func ginkgo(name string) *jen.Statement { return jen.Qual(GinkgoPath, name) }

// field renders "Name: value" so literals keep the field order of the struct (a
// jen.Dict would sort them).
func field(name string, value jen.Code) jen.Code { return jen.Id(name).Op(":").Add(value) }

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
)

// commonByOutput applies to every family: a declared role is always checked.
var commonByOutput = []Conditional{
	{Role: RoleProbabilities, Invariants: []string{"ProbabilitiesInUnitRange"}},
	{Role: RoleDistribution, Invariants: []string{"ProbabilitiesInUnitRange", "DistributionSumsToOne"}},
	{Role: RoleRanking, Invariants: []string{"RankingAgrees"}},
	{Role: RoleRouter, Invariants: []string{"RouterTopKAgrees"}},
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

// Specs emits the Its of a family template inside a target's Context, given the
// cell variable's name:
//
//	It("measures load, latency and memory", cell.Measure)
//	It(runtime.OutputsAgree.Name, func() { cell.Check(runtime.OutputsAgree) })
func (f FamilyTemplate) Specs(m catalog.Model, cell string) []jen.Code {
	specs := []jen.Code{
		ginkgo("It").Call(jen.Lit("measures load, latency and memory"), jen.Id(cell).Dot("Measure")),
	}
	for _, inv := range f.InvariantsFor(m) {
		specs = append(specs, ginkgo("It").Call(
			jen.Qual(RuntimePath, inv).Dot("Name"),
			jen.Func().Params().Block(jen.Id(cell).Dot("Check").Call(jen.Qual(RuntimePath, inv))),
		))
	}
	return specs
}

// TargetTemplate emits the Context for one target of a model. Runner selects it.
type TargetTemplate struct {
	Runner string
	// Context renders the target's Context around the family's specs.
	Context func(t catalog.Target, m catalog.Model, specs func(cell string) []jen.Code) jen.Code
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

// cellContext renders:
//
//	Context("cuda", Ordered, Label("hw:cuda"), func() {
//		cell := runtime.NewCell(model, runtime.Target{ID: "cuda", ...})
//		BeforeAll(cell.Open)
//		AfterAll(cell.Close)
//		It(...)
//	})
//
// Ordered, so one session serves every spec of the cell and a failed Open skips the
// rest instead of failing each of them for the same reason.
func cellContext(t catalog.Target, m catalog.Model, specs func(cell string) []jen.Code) jen.Code {
	body := []jen.Code{
		jen.Id("cell").Op(":=").Qual(RuntimePath, "NewCell").Call(jen.Id("model"), targetLiteral(t, m)),
		ginkgo("BeforeAll").Call(jen.Id("cell").Dot("Open")),
		ginkgo("AfterAll").Call(jen.Id("cell").Dot("Close")),
	}
	body = append(body, specs("cell")...)
	return ginkgo("Context").Call(
		jen.Lit(t.ID), ginkgo("Ordered"), ginkgo("Label").Call(jen.Lit("hw:"+t.ID)),
		jen.Func().Params().Block(body...),
	)
}

// targetLiteral renders the target as runtime.Target, with the family's declared
// incompatibility (if any) resolved for this model.
func targetLiteral(t catalog.Target, m catalog.Model) jen.Code {
	fields := []jen.Code{
		field("ID", jen.Lit(t.ID)),
		field("Name", jen.Lit(t.Name)),
		field("Runner", jen.Lit(t.Runner)),
		field("Provider", jen.Lit(t.Provider)),
	}
	if t.Bundle != "" {
		fields = append(fields, field("Bundle", jen.Lit(t.Bundle)))
	}
	if len(t.Options) > 0 {
		fields = append(fields, field("Options", stringMap(t.Options)))
	}
	fields = append(fields,
		field("Precision", jen.Lit(t.Precision)),
		field("Tolerance", tolerance(t.Tolerance)))
	if len(t.Fallback) > 0 {
		fields = append(fields, field("Fallback", stringSlice(t.Fallback)))
	}
	if reason := t.Expect[m.Family]; reason != "" {
		fields = append(fields, field("ExpectFail", jen.Lit(reason)))
	}
	return jen.Qual(RuntimePath, "Target").Add(multiline(fields))
}

// ModelLiteral renders the model as runtime.Model.
func ModelLiteral(m catalog.Model) jen.Code {
	fields := []jen.Code{
		field("ID", jen.Lit(m.ID)),
		field("Family", jen.Lit(m.Family)),
	}
	if m.Architecture != "" {
		fields = append(fields, field("Architecture", jen.Lit(m.Architecture)))
	}
	fields = append(fields, field("Source", jen.Lit(m.Source)))
	if m.SHA256 != "" {
		fields = append(fields, field("SHA256", jen.Lit(m.SHA256)))
	}
	if m.Fixture != "" {
		fields = append(fields, field("Fixture", jen.Lit(m.Fixture)))
	}
	if len(m.Inputs) > 0 {
		inputs := jen.Dict{} // rendered sorted by input name
		for name, in := range m.Inputs {
			var f []jen.Code
			if in.Dims != nil {
				f = append(f, field("Dims", jen.Index().Int64().ValuesFunc(func(g *jen.Group) {
					for _, d := range in.Dims {
						g.Lit(int(d))
					}
				})))
			}
			if in.Value != nil {
				f = append(f, field("Value", floats(in.Value)))
			}
			if in.Range != nil {
				f = append(f, field("Range", floats(in.Range)))
			}
			if in.RealOnly {
				f = append(f, field("RealOnly", jen.True()))
			}
			inputs[jen.Lit(name)] = jen.Values(f...)
		}
		fields = append(fields, field("Inputs", jen.Map(jen.String()).Qual(RuntimePath, "Input").Values(inputs)))
	}
	if m.Outputs != (catalog.OutputSpec{}) {
		var o []jen.Code
		for _, f := range []struct{ name, value string }{
			{"Primary", m.Outputs.Primary}, {"State", m.Outputs.State}, {"StateIn", m.Outputs.StateIn},
			{"Probabilities", m.Outputs.Probabilities}, {"Distribution", m.Outputs.Distribution},
			{"Ranking", m.Outputs.Ranking}, {"Router", m.Outputs.Router},
		} {
			if f.value != "" {
				o = append(o, field(f.name, jen.Lit(f.value)))
			}
		}
		if m.Outputs.RouterTopK != 0 {
			o = append(o, field("RouterTopK", jen.Lit(m.Outputs.RouterTopK)))
		}
		fields = append(fields, field("Outputs", jen.Qual(RuntimePath, "Outputs").Values(o...)))
	}
	if m.Tolerance != nil {
		fields = append(fields, field("Tolerance", jen.Op("&").Add(tolerance(*m.Tolerance))))
	}
	return jen.Qual(RuntimePath, "Model").Add(multiline(fields))
}

// multiline renders a composite literal one field a line, as a person would write it.
func multiline(fields []jen.Code) jen.Code {
	return jen.Custom(jen.Options{Open: "{", Close: "}", Separator: ",", Multi: true}, fields...)
}

func tolerance(t catalog.Tolerance) *jen.Statement {
	return jen.Qual(RuntimePath, "Tolerance").Values(field("RTol", jen.Lit(t.RTol)), field("ATol", jen.Lit(t.ATol)))
}

func floats(xs []float64) *jen.Statement {
	return jen.Index().Float64().ValuesFunc(func(g *jen.Group) {
		for _, x := range xs {
			g.Lit(x)
		}
	})
}

func stringSlice(xs []string) *jen.Statement {
	return jen.Index().String().ValuesFunc(func(g *jen.Group) {
		for _, x := range xs {
			g.Lit(x)
		}
	})
}

func stringMap(m map[string]string) *jen.Statement {
	d := jen.Dict{}
	for k, v := range m {
		d[jen.Lit(k)] = jen.Lit(v)
	}
	return jen.Map(jen.String()).String().Values(d)
}
