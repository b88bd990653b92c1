// Package shapes decides the shape of every input hwtest feeds a model, from the
// model file's dims and the catalog's overrides. `hwtest generate` and `verify` call
// it on the model file before any suite exists (package modelcheck), and the runtime
// calls it again before it synthesises inputs, so both refuse the same catalogs with
// the same words.
//
// Binding rules:
//   - an override's dims: fix the input's whole shape, and bind each symbolic dim's
//     name ("batch", "seq") for every other input that shares it, so an attention
//     mask follows its token ids;
//   - an input without dims: takes its fixed dims from the model and its symbolic
//     ones from the names other inputs' dims bind;
//   - value: never binds a dim: one value fills whatever shape the input has, and
//     more than one must match it in count. (A value-only input of a symbolic shape
//     needs dims, or a symbol bound elsewhere, like any other.)
//   - a dim left open (a symbol no dims bind, or an anonymous dim of an input
//     without dims) is an error naming the input, the axis and the symbol. It used
//     to become 1 on axis 0 and 8 elsewhere, silently, and fail later inside ONNX
//     Runtime ("Attempting to broadcast an axis by a dimension other than 1") with
//     no hint that the catalog had left it open. The fix suggests those same sizes.
package shapes

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/hwtest/hwtest/catalog"
	"github.com/hwtest/hwtest/onnx"
)

// Input is a model input as the model file declares it.
type Input struct {
	Name   string
	Dims   []int64  // per axis: the fixed size, -1 where the file leaves it open
	Params []string // per axis: the symbol's name, "" for fixed or anonymous dims
	// Suggest is, per axis, the size a fix suggests for a dim left open; nil for
	// shapes' own default (SuggestedBatch, SuggestedDim). modelcheck sets the dims
	// `hwtest add` writes (onnx.PlanInputs), so both advise the same.
	Suggest []int64
}

// FromONNX is an input as package onnx reads it (Inspect) or builds it (zoo): a
// dim with a symbol is open whatever its Value, since the builder leaves it 0.
func FromONNX(name string, dims []onnx.Dim) Input {
	in := Input{Name: name, Dims: make([]int64, len(dims)), Params: make([]string, len(dims))}
	for axis, d := range dims {
		in.Dims[axis], in.Params[axis] = d.Value, d.Param
		if d.Param != "" {
			in.Dims[axis] = -1
		}
	}
	return in
}

// Override is what the catalog says about an input's shape.
type Override struct {
	Dims   []int64 // the whole shape; nil: the input follows symbols other inputs bind
	Values int     // how many fixed values (value:) it gives; 0 for none
	// From names the file Dims are the shape of (an input's file:), for messages:
	// the user wrote a file, not dims. "" for dims written in the catalog.
	From string
}

// Problem is an input shape the catalog leaves open or sets against the model.
type Problem struct {
	Input    string // the input it is about
	Override bool   // the catalog's override of Input is wrong (else one is missing)
	Msg      string // the problem and its fix
}

func (p Problem) Error() string { return p.Msg }

// Suggested sizes for a dim the catalog leaves open, as the runtime used to pick
// them silently: batch 1 on axis 0, 8 elsewhere (long enough for attention and
// scans to mix positions, small enough to be quick).
const (
	SuggestedBatch = 1
	SuggestedDim   = 8
)

// Bind returns each input's shape, in the order of inputs (nil where it has a
// problem), and every problem found: overrides naming no input, dims of the
// wrong rank or against a fixed dim, symbols bound to two sizes, dims left open,
// value counts that do not fit the shape.
func Bind(inputs []Input, overrides map[string]Override) ([][]int64, []Problem) {
	var problems []Problem
	symbols := map[string]int64{}  // bound by an override's dims
	boundBy := map[string]string{} // symbol -> what bound it, as a message's subject and verb
	shapes := make([][]int64, len(inputs))
	// Overrides with dims first: they bind the symbols the others follow.
	for i, in := range inputs {
		ov, ok := overrides[in.Name]
		if !ok || ov.Dims == nil {
			continue
		}
		if p := bindDims(in, ov, symbols, boundBy); p != "" {
			problems = append(problems, Problem{Input: in.Name, Override: true, Msg: p})
			continue
		}
		shapes[i] = slices.Clone(ov.Dims)
	}
	// What a fix would set each still-open symbol to, consistently across inputs.
	suggested := map[string]int64{}
	for i, in := range inputs {
		if ov := overrides[in.Name]; ov.Dims != nil {
			continue
		}
		shape, open := follow(in, symbols)
		if len(open) > 0 {
			problems = append(problems, Problem{Input: in.Name, Msg: openMessage(in, open, inputs, overrides, symbols, suggested)})
			continue
		}
		shapes[i] = shape
	}
	for i, in := range inputs {
		ov := overrides[in.Name]
		if shapes[i] == nil || ov.Values <= 1 {
			continue
		}
		if n := elements(shapes[i]); n != int64(ov.Values) {
			problems = append(problems, Problem{Input: in.Name, Override: true, Msg: fmt.Sprintf(
				"input override %q: %d values for shape %v (%d elements): give one value to fill it, or one per element", in.Name, ov.Values, shapes[i], n)})
			shapes[i] = nil
		}
	}
	known := map[string]bool{}
	for _, in := range inputs {
		known[in.Name] = true
	}
	overridden := make([]string, 0, len(overrides))
	for name := range overrides {
		overridden = append(overridden, name)
	}
	sort.Strings(overridden)
	for _, name := range overridden {
		if !known[name] {
			problems = append(problems, Problem{Input: name, Override: true, Msg: fmt.Sprintf(
				"input override %q: the model has no such input%s (its inputs: %s): rename the override to one of them, or remove it", name, catalog.DidYouMean(name, names(inputs)), Names(inputs))})
		}
	}
	return shapes, problems
}

// bindDims checks an override's dims against the model's and binds their symbols;
// it returns the problem, "" when there is none. boundBy says what bound each
// symbol, as messages name it.
func bindDims(in Input, ov Override, symbols map[string]int64, boundBy map[string]string) string {
	dims := ov.Dims
	if len(dims) != len(in.Dims) {
		if ov.From != "" {
			return fmt.Sprintf("input %q: %s has shape %v (rank %d), the model's input has rank %d (shape %s): give a file of rank %d", in.Name, ov.From, dims, len(dims), len(in.Dims), in.ShapeText(), len(in.Dims))
		}
		return fmt.Sprintf("input override %q: dims %v have rank %d, the model's input has rank %d (shape %s): give %d dims", in.Name, dims, len(dims), len(in.Dims), in.ShapeText(), len(in.Dims))
	}
	for axis, d := range dims {
		if in.Dims[axis] >= 0 && in.Dims[axis] != d {
			if ov.From != "" {
				return fmt.Sprintf("input %q: %s has shape %v, the model fixes dim %d at %d (shape %s): give a file of that shape", in.Name, ov.From, dims, axis, in.Dims[axis], in.ShapeText())
			}
			return fmt.Sprintf("input override %q: dim %d is %d, the model fixes it at %d (shape %s): set it to %d", in.Name, axis, d, in.Dims[axis], in.ShapeText(), in.Dims[axis])
		}
	}
	for axis, d := range dims {
		p := in.param(axis)
		if p == "" {
			continue
		}
		if bound, ok := symbols[p]; ok && bound != d {
			if ov.From != "" {
				return fmt.Sprintf("input %q: %s has shape %v, so dim %d (%q) is %d, but %s %q to %d: make them agree", in.Name, ov.From, dims, axis, p, d, boundBy[p], p, bound)
			}
			return fmt.Sprintf("input override %q: dim %d (%q) is %d, but %s %q to %d: make them agree", in.Name, axis, p, d, boundBy[p], p, bound)
		}
		symbols[p] = d
		if ov.From != "" {
			boundBy[p] = fmt.Sprintf("%s (the file of input %q) sets", ov.From, in.Name)
		} else {
			boundBy[p] = fmt.Sprintf("the dims of %q set", in.Name)
		}
	}
	return ""
}

// follow is the shape of an input without dims: its fixed dims and the bound
// symbols; open lists the axes nothing binds.
func follow(in Input, symbols map[string]int64) (shape []int64, open []int) {
	shape = make([]int64, len(in.Dims))
	for axis, d := range in.Dims {
		bound, ok := symbols[in.param(axis)]
		switch {
		case d >= 0:
			shape[axis] = d
		case in.param(axis) != "" && ok:
			shape[axis] = bound
		default:
			open = append(open, axis)
		}
	}
	return shape, open
}

// openMessage names an input's open axes and the fix: dims for the whole input
// (bound symbols as bound, open ones as the runtime used to guess them), or
// dims on another input that shares the symbol.
func openMessage(in Input, open []int, inputs []Input, overrides map[string]Override, symbols, suggested map[string]int64) string {
	var axes, sharedNote []string
	fix := suggest(in, symbols, suggested)
	var sharers []string            // other inputs sharing an open symbol, in model order
	shared := map[string][]string{} // sharer -> the open symbols it shares
	for _, axis := range open {
		p := in.param(axis)
		if p == "" {
			axes = append(axes, fmt.Sprintf("axis %d (anonymous)", axis))
			continue
		}
		axes = append(axes, fmt.Sprintf("axis %d (%q)", axis, p))
		for _, other := range inputs {
			if other.Name == in.Name || !slices.Contains(other.Params, p) {
				continue
			}
			if _, seen := shared[other.Name]; !seen {
				sharers = append(sharers, other.Name)
			}
			shared[other.Name] = append(shared[other.Name], fmt.Sprintf("%q", p))
		}
	}
	for _, name := range sharers {
		sharedNote = append(sharedNote, fmt.Sprintf("%s (%s)", name, strings.Join(shared[name], ", ")))
	}
	verb := "is"
	if len(axes) > 1 {
		verb = "are"
	}
	msg := fmt.Sprintf("input %q (shape %s): %s %s bound by no dims: add dims: [%s] to inputs.%s",
		in.Name, in.ShapeText(), strings.Join(axes, ", "), verb, dimsText(fix), in.Name)
	if len(sharedNote) > 0 {
		msg += ", or to an input that shares its symbols: " + strings.Join(sharedNote, ", ")
	}
	if ov, ok := overrides[in.Name]; ok && ov.Values > 0 {
		msg += " (value: fills the shape, it does not set it)"
	}
	return msg
}

// suggest is a full shape for in: fixed dims as fixed, symbols as bound, and open
// dims as in.Suggest says, else as the runtime used to guess them (SuggestedBatch
// on axis 0, else SuggestedDim), one size per symbol across inputs (suggested
// remembers them).
func suggest(in Input, symbols, suggested map[string]int64) []int64 {
	dims := make([]int64, len(in.Dims))
	for axis, d := range in.Dims {
		p := in.param(axis)
		bound, isBound := symbols[p]
		guess, guessed := suggested[p]
		switch {
		case d >= 0:
			dims[axis] = d
		case p != "" && isBound:
			dims[axis] = bound
		case p != "" && guessed:
			dims[axis] = guess
		case axis < len(in.Suggest) && in.Suggest[axis] > 0:
			dims[axis] = in.Suggest[axis]
		case axis == 0:
			dims[axis] = SuggestedBatch
		default:
			dims[axis] = SuggestedDim
		}
		if p != "" && d < 0 && !isBound {
			suggested[p] = dims[axis]
		}
	}
	return dims
}

// Suggest gives dims for every input with a dim the file leaves open, binding
// each symbol to one size (1 on axis 0, else 8): what a catalog entry of a model
// nobody has described yet can start from, and what a run of a bare model file
// (no catalog: `hwtest explain zoo:NAME`) feeds.
func Suggest(inputs []Input) map[string][]int64 {
	out := map[string][]int64{}
	suggested := map[string]int64{}
	for _, in := range inputs {
		if slices.ContainsFunc(in.Dims, func(d int64) bool { return d < 0 }) {
			out[in.Name] = suggest(in, nil, suggested)
		}
	}
	return out
}

func dimsText(dims []int64) string {
	parts := make([]string, len(dims))
	for i, d := range dims {
		parts[i] = fmt.Sprint(d)
	}
	return strings.Join(parts, ", ")
}

func (in Input) param(axis int) string {
	if axis < len(in.Params) {
		return in.Params[axis]
	}
	return ""
}

// ShapeText writes the input's shape as the model declares it: sizes, symbols,
// and "?" for anonymous dims, e.g. [batch 3 224 ?].
func (in Input) ShapeText() string {
	parts := make([]string, len(in.Dims))
	for axis, d := range in.Dims {
		switch p := in.param(axis); {
		case d >= 0:
			parts[axis] = fmt.Sprint(d)
		case p != "":
			parts[axis] = p
		default:
			parts[axis] = "?"
		}
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// Names lists the inputs' names for messages.
func Names(inputs []Input) string { return strings.Join(names(inputs), ", ") }

func names(inputs []Input) []string {
	out := make([]string, len(inputs))
	for i, in := range inputs {
		out[i] = in.Name
	}
	return out
}

func elements(shape []int64) int64 {
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	return n
}
