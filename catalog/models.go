package catalog

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

// models decodes the list under models.yaml's "models" key.
func (d *decoder) models(list *yaml.Node) []Model {
	if list == nil {
		return nil
	}
	items, ok := d.sequence("models", list)
	if !ok {
		return nil
	}
	if len(items) == 0 {
		d.errorf(list, "models: the list is empty; a catalog needs at least one model")
		return nil
	}
	firstID := map[string]*yaml.Node{}
	models := make([]Model, 0, len(items))
	for i, item := range items {
		m, idNode := d.model(i, item)
		if idNode != nil {
			if first, dup := firstID[m.ID]; dup {
				d.errorf(idNode, "duplicate model id %q (first defined at %s:%d:%d)", m.ID, d.file, first.Line, first.Column)
			} else {
				firstID[m.ID] = idNode
			}
		}
		models = append(models, m)
	}
	return models
}

// entryContext names an entry in messages by its id as written, whatever it holds,
// or by its place in the list when it has none.
func entryContext(kind string, i int, fs []field) string {
	for _, f := range fs {
		if f.key.Kind != yaml.ScalarNode || f.key.Value != "id" {
			continue
		}
		r := resolve(f.value)
		if r.Kind != yaml.ScalarNode || r.ShortTag() == "!!null" {
			break
		}
		id := r.Value
		if len(id) > 80 {
			id = id[:77] + "..."
		}
		return fmt.Sprintf("%s %q", kind, id)
	}
	return fmt.Sprintf("%s #%d", kind, i+1)
}

// model decodes one entry; idNode is where its valid id is written, nil when it has none.
func (d *decoder) model(i int, n *yaml.Node) (m Model, idNode *yaml.Node) {
	ctx := fmt.Sprintf("model #%d", i+1)
	mn, ok := d.mapping(ctx, n)
	if !ok {
		return m, nil
	}
	m.Line, m.Column = mn.Line, mn.Column
	fs := d.pairs(ctx, mn)
	ctx = entryContext("model", i, fs)
	f := d.checkFields(ctx, fs, modelFields)
	d.required(ctx, mn, f, "id", "family", "task", "source")

	if v, ok := f["id"]; ok {
		if id, ok := d.str(ctx+": id", v.value); ok {
			m.ID = id
			if p := idProblem("id", id); p != "" {
				d.errorf(v.value, "%s: %s", ctx, p)
			} else {
				idNode = v.value
			}
		}
	}
	if v, ok := f["family"]; ok {
		m.Family, _ = d.oneOf(ctx, "family", v.value, Families)
	}
	if v, ok := f["architecture"]; ok {
		if arch, ok := d.oneOf(ctx, "architecture", v.value, TextArchitectures); ok {
			m.Architecture = arch
			if m.Family != "text" && m.Family != "" {
				d.errorf(v.key, "%s: architecture is only for text models, and this one is %s", ctx, m.Family)
			}
		}
	} else if m.Family == "text" {
		d.errorf(mn, "%s: missing required field \"architecture\" for a text model (%s)", ctx, quoteList(TextArchitectures))
	}
	if v, ok := f["task"]; ok {
		m.Task, _ = d.nonEmpty(ctx+": task", v.value)
	}
	var src Source
	if v, ok := f["source"]; ok {
		if s, ok := d.nonEmpty(ctx+": source", v.value); ok {
			m.Source = s
			parsed, err := ParseSource(s)
			if err != nil {
				d.errorf(v.value, "%s: source %q: %v", ctx, s, err)
			}
			src = parsed
		}
	}
	if v, ok := f["sha256"]; ok {
		if s, ok := d.str(ctx+": sha256", v.value); ok && s != "" {
			m.SHA256 = s
			if !sha256Hex.MatchString(s) {
				hint := ""
				if sha256Hex.MatchString(strings.ToLower(s)) {
					hint = " (write it in lowercase)"
				}
				d.errorf(v.value, "%s: sha256 %q is not 64 lowercase hex digits%s", ctx, s, hint)
			}
		}
	}
	if v, ok := f["fixture"]; ok {
		if s, ok := d.nonEmpty(ctx+": fixture", v.value); ok {
			m.Fixture = s
			fix, err := ParseSource(s)
			switch {
			case err != nil:
				d.errorf(v.value, "%s: fixture %q: %v", ctx, s, err)
			case fix.Scheme != "zoo":
				d.errorf(v.value, "%s: fixture %q must be a zoo: source (a model the project builds itself)", ctx, s)
			}
		}
	}
	if m.SHA256 == "" {
		at := mn
		if v, ok := f["sha256"]; ok {
			at = v.value
		}
		switch {
		case src.Scheme == "npm":
			d.errorf(at, "%s: sha256 is required for npm: sources", ctx)
		case src.Scheme == "hf" && m.Fixture == "":
			d.errorf(at, "%s: sha256 is required for hf: sources without a fixture (or give fixture: zoo:NAME to run offline)", ctx)
		}
	}
	if v, ok := f["inputs"]; ok {
		m.Inputs = d.inputs(ctx, v.value)
	}
	if v, ok := f["outputs"]; ok {
		m.Outputs = d.outputs(ctx, v.value)
	}
	if v, ok := f["tolerance"]; ok {
		if t, ok := d.tolerance(ctx, v.value); ok {
			m.Tolerance = &t
		}
	}
	if v, ok := f["expected"]; ok {
		m.Expected = d.expected(ctx, v.value)
	}
	if v, ok := f["tags"]; ok {
		tags, nodes, _ := d.stringList(ctx+": tags", v.value)
		seen := map[string]bool{}
		for j, t := range tags {
			if seen[t] {
				d.errorf(nodes[j], "%s: duplicate tag %q", ctx, t)
				continue
			}
			// A tag becomes the label tag:NAME, which --label-filter must be able to select.
			if err := CheckLabel(t); err != nil {
				d.errorf(nodes[j], "%s: tag %v", ctx, err)
				continue
			}
			seen[t] = true
			m.Tags = append(m.Tags, t)
		}
	}
	if v, ok := f["tier"]; ok {
		m.Tier, _ = d.oneOf(ctx, "tier", v.value, Tiers)
	}
	return m, idNode
}

// required reports each named field the mapping lacks.
func (d *decoder) required(ctx string, n *yaml.Node, f map[string]field, names ...string) {
	for _, name := range names {
		if _, ok := f[name]; !ok {
			d.errorf(n, "%s: missing required field %q", ctx, name)
		}
	}
}

// oneOf decodes a string that must be one of options.
func (d *decoder) oneOf(ctx, what string, n *yaml.Node, options []string) (string, bool) {
	s, ok := d.str(ctx+": "+what, n)
	if !ok {
		return "", false
	}
	if !contains(options, s) {
		d.errorf(n, "%s: unknown %s %q%s", ctx, what, s, choices(s, options))
		return "", false
	}
	return s, true
}

// choices suggests the closest option, or lists them all when none is close.
func choices(got string, options []string) string {
	if s := didYouMean(got, options); s != "" {
		return s
	}
	return " (want " + quoteList(options) + ")"
}

func (d *decoder) inputs(ctx string, n *yaml.Node) map[string]Input {
	m, ok := d.mapping(ctx+": inputs", n)
	if !ok {
		return nil
	}
	out := map[string]Input{}
	seen := map[string]*yaml.Node{}
	for _, f := range d.pairs(ctx, m) {
		name, ok := d.nonEmpty(ctx+": input name", f.key)
		if !ok {
			continue
		}
		if first, dup := seen[name]; dup {
			d.errorf(f.key, "%s: duplicate input %q (first at %d:%d)", ctx, name, first.Line, first.Column)
			continue
		}
		seen[name] = f.key
		if in, ok := d.input(fmt.Sprintf("%s: input %q", ctx, name), f.value); ok {
			in.Line, in.Column = f.key.Line, f.key.Column
			out[name] = in
		}
	}
	return out
}

func (d *decoder) input(ctx string, n *yaml.Node) (Input, bool) {
	var in Input
	mn, ok := d.mapping(ctx, n)
	if !ok {
		return in, false
	}
	f := d.checkFields(ctx, d.pairs(ctx, mn), inputFields)
	valid := true
	if v, ok := f["dims"]; ok {
		items, ok := d.sequence(ctx+": dims", v.value)
		valid = valid && ok
		for j, item := range items {
			dim, ok := d.integer(fmt.Sprintf("%s: dims[%d]", ctx, j), item)
			if ok && dim <= 0 {
				d.errorf(item, "%s: dims[%d] is %d; dims must be positive", ctx, j, dim)
				ok = false
			}
			valid = valid && ok
			in.Dims = append(in.Dims, dim)
		}
		// The run refuses inputs beyond its memory budget, naming their size; dims
		// whose product does not even fit a number are refused here, where they are written.
		if valid && !fitsElements(in.Dims) {
			d.errorf(v.value, "%s: dims %s hold more than %d elements, which no tensor can: lower them", ctx, dimsText(in.Dims), int64(maxElements))
			valid = false
		}
	}
	if v, ok := f["value"]; ok {
		value, ok := d.numbers(ctx+": value", v.value)
		if ok && len(value) == 0 {
			d.errorf(v.value, "%s: value is empty", ctx)
			ok = false
		}
		valid = valid && ok
		in.Value = value
	}
	if v, ok := f["range"]; ok {
		r, ok := d.numbers(ctx+": range", v.value)
		switch {
		case !ok:
		case len(r) != 2:
			d.errorf(v.value, "%s: range wants [low, high], got %d numbers", ctx, len(r))
			ok = false
		case !(r[0] < r[1]):
			d.errorf(v.value, "%s: range [%g, %g]: low must be below high", ctx, r[0], r[1])
			ok = false
		}
		valid = valid && ok
		in.Range = r
	}
	if v, ok := f["real_only"]; ok {
		if v.value.Kind != yaml.ScalarNode || (v.value.Value != "true" && v.value.Value != "false") {
			d.errorf(v.value, "%s: real_only is true or false", ctx)
			valid = false
		}
		in.RealOnly = v.value.Value == "true"
	}
	valid = d.inputFile(ctx, f, &in) && valid
	_, hasValue := f["value"]
	_, hasRange := f["range"]
	_, hasDims := f["dims"]
	switch {
	case hasValue && hasRange:
		d.errorf(f["range"].key, "%s: set value or range, not both", ctx)
		valid = false
	case len(mn.Content) == 0:
		d.errorf(n, "%s: overrides nothing; give dims, and value or range, or a file", ctx)
		valid = false
	}
	// One value fills the whole tensor (an all-ones attention mask); more must match.
	if valid && hasDims && hasValue && len(in.Value) != 1 {
		if size, ok := elements(in.Dims); !ok || size != int64(len(in.Value)) {
			d.errorf(f["value"].value, "%s: value has %d numbers but dims %s hold %s: give one value to fill it, or one per element", ctx, len(in.Value), dimsText(in.Dims), sizeText(size, ok))
			valid = false
		}
	}
	return in, valid
}

// maxElements bounds element counts so that multiplying dims cannot overflow.
const maxElements = 1 << 53

// elements is the number of elements positive dims hold; false above maxElements.
func elements(dims []int64) (int64, bool) {
	size := int64(1)
	for _, dim := range dims {
		if dim > maxElements/size {
			return 0, false
		}
		size *= dim
	}
	return size, true
}

func fitsElements(dims []int64) bool { _, ok := elements(dims); return ok }

func sizeText(size int64, ok bool) string {
	if !ok {
		return fmt.Sprintf("more than %d", int64(maxElements))
	}
	return fmt.Sprint(size)
}

func dimsText(dims []int64) string {
	parts := make([]string, len(dims))
	for i, dim := range dims {
		parts[i] = fmt.Sprint(dim)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func (d *decoder) outputs(ctx string, n *yaml.Node) OutputSpec {
	var out OutputSpec
	mn, ok := d.mapping(ctx+": outputs", n)
	if !ok {
		return out
	}
	octx := ctx + ": outputs"
	f := d.checkFields(octx, d.pairs(octx, mn), outputFields)
	at := func(key string, n *yaml.Node) { // where each name is written, for modelcheck
		if out.At == nil {
			out.At = map[string]Position{}
		}
		out.At[key] = Position{n.Line, n.Column}
	}
	for key, dst := range map[string]*string{
		"primary": &out.Primary, "state": &out.State, "state_input": &out.StateIn,
		"probabilities": &out.Probabilities, "router": &out.Router,
	} {
		if v, ok := f[key]; ok {
			*dst, _ = d.nonEmpty(octx+": "+key, v.value)
			at(key, v.value)
		}
	}
	if v, ok := f["distribution"]; ok {
		out.Distribution, out.DistributionAxis = d.outputRole(octx, "distribution", v.value)
		at("distribution", v.value)
	}
	if v, ok := f["ranking"]; ok {
		out.Ranking, out.RankingAxis = d.outputRole(octx, "ranking", v.value)
		at("ranking", v.value)
	}
	if v, ok := f["router_top_k"]; ok {
		if k, ok := d.integer(octx+": router_top_k", v.value); ok {
			if k < 1 {
				d.errorf(v.value, "%s: router_top_k is %d; want the number of experts each token is routed to (≥ 1)", octx, k)
			}
			out.RouterTopK = int(k)
		}
	}
	_, hasRouter := f["router"]
	_, hasTopK := f["router_top_k"]
	if hasRouter != hasTopK {
		d.errorf(mn, "%s: router and router_top_k go together: the check compares each token's top-k experts", octx)
	}
	_, hasState := f["state"]
	_, hasStateIn := f["state_input"]
	if hasState != hasStateIn {
		d.errorf(mn, "%s: state and state_input go together: the state output is fed back as the state input", octx)
	}
	return out
}

func (d *decoder) tolerance(ctx string, n *yaml.Node) (Tolerance, bool) {
	var t Tolerance
	tctx := ctx + ": tolerance"
	mn, ok := d.mapping(tctx, n)
	if !ok {
		return t, false
	}
	f := d.checkFields(tctx, d.pairs(tctx, mn), toleranceFields)
	d.required(tctx, mn, f, toleranceFields...)
	valid := len(f) == len(toleranceFields)
	for _, name := range toleranceFields {
		v, ok := f[name]
		if !ok {
			continue
		}
		x, ok := d.number(tctx+": "+name, v.value)
		if ok && x < 0 {
			d.errorf(v.value, "%s: %s is %g; it must be at least 0", tctx, name, x)
			ok = false
		}
		valid = valid && ok
		if name == "rtol" {
			t.RTol = x
		} else {
			t.ATol = x
		}
	}
	return t, valid
}
