package catalog

import (
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// maxNodes bounds the work one file may cause. Aliases let a small file name the
// same subtree many times over (a "billion laughs" file); a real catalog of a few
// hundred models visits tens of thousands of nodes.
const maxNodes = 1 << 20

// maxFileBytes bounds the memory one file may cost: the YAML library's node tree
// takes about 50 bytes per byte of text (a 4 MiB catalog of 77,000 one-line models
// took 1.3 s and 270 MB RSS in `hwtest models` here; a 50 MB one took 4.1 GB before
// this bound). hwtest's own catalog of 20 models is 11 KiB.
const maxFileBytes = 4 << 20

// decoder walks one file's node tree, collecting every error with its position.
type decoder struct {
	file    string
	errs    []*Error
	visited int
	tooBig  bool
}

// errorf records an error at n. Once the node limit is hit, nothing more is: the
// walk is cut short there, and what it finds missing after that is the cut's doing,
// not the file's (a 50 MB catalog once drew a million "missing required field").
func (d *decoder) errorf(n *yaml.Node, format string, args ...any) {
	if d.tooBig {
		return
	}
	line, col := 1, 1
	if n != nil && n.Line > 0 {
		line, col = n.Line, n.Column
	}
	d.errs = append(d.errs, &Error{File: d.file, Line: line, Column: col, Msg: fmt.Sprintf(format, args...)})
}

// visit counts a node against maxNodes; false means stop walking.
func (d *decoder) visit(n *yaml.Node) bool {
	if d.tooBig {
		return false
	}
	d.visited++
	if d.visited > maxNodes {
		d.errorf(n, "the catalog holds more than %d YAML nodes once aliases and merges (<<) are expanded, where a catalog of hundreds of models holds tens of thousands; stopped reading here: remove aliases that repeat whole lists or mappings, or split the file", maxNodes)
		d.tooBig = true
		return false
	}
	return true
}

// sizeOK reports a file larger than maxFileBytes, which is then not parsed at all.
func (d *decoder) sizeOK(size int64) bool {
	if size <= maxFileBytes {
		return true
	}
	d.errs = append(d.errs, &Error{File: d.file, Msg: fmt.Sprintf(
		"the file is %d bytes; a catalog may be at most %d bytes (%d MiB), where one of hundreds of models takes well under 1 MiB: check this is the catalog you meant, or split it",
		size, maxFileBytes, maxFileBytes>>20)})
	return false
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): `)

// document parses data into its single top-level node; nil when the file is empty,
// malformed or not one document, each reported.
func (d *decoder) document(data []byte) *yaml.Node {
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil
		}
		d.yamlError(err)
		return nil
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case err == nil:
		d.errorf(&extra, "a second YAML document; a catalog is one document (remove the \"---\")")
		return nil
	case !errors.Is(err, io.EOF):
		d.yamlError(err)
		return nil
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil
	}
	return doc.Content[0]
}

func (d *decoder) yamlError(err error) {
	msg := err.Error()
	e := &Error{File: d.file, Msg: strings.TrimPrefix(msg, "yaml: ")}
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		e.Line, _ = strconv.Atoi(m[1]) // the pattern admits only digits
		e.Msg = msg[len(m[0]):]
	}
	// The YAML parser reports where it noticed the problem, which can be a line
	// after (an unclosed bracket) or before (a mis-indented line) its cause.
	e.Msg += " (the YAML itself is malformed: check indentation, unclosed [ or {, and quoting around this line)"
	d.errs = append(d.errs, e)
}

// resolve follows an alias to the node it names.
func resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if n.ShortTag() == "!!null" {
			return "nothing"
		}
		return fmt.Sprintf("%q", n.Value)
	}
	return "something else"
}

// field is one key: value pair of a mapping.
type field struct{ key, value *yaml.Node }

// pairs lists a mapping's pairs in order, merge keys (<<) expanded: keys written in
// the mapping win over merged ones, and earlier merged mappings over later ones.
// Duplicates among the written keys are kept for checkFields to report.
func (d *decoder) pairs(ctx string, n *yaml.Node) []field {
	var written, merged []field
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if !d.visit(k) {
			return nil
		}
		if k.Kind == yaml.ScalarNode && k.Value == "<<" && k.ShortTag() == "!!merge" {
			merged = append(merged, d.mergeSources(ctx, v)...)
			continue
		}
		// An aliased key (*name: value) is named by what it points to.
		written = append(written, field{resolve(k), v})
	}
	seen := map[string]bool{}
	for _, f := range written {
		seen[f.key.Value] = true
	}
	out := written
	for _, f := range merged {
		if !seen[f.key.Value] {
			seen[f.key.Value] = true
			out = append(out, f)
		}
	}
	return out
}

func (d *decoder) mergeSources(ctx string, v *yaml.Node) []field {
	r := resolve(v)
	switch r.Kind {
	case yaml.MappingNode:
		return d.pairs(ctx, r)
	case yaml.SequenceNode:
		var out []field
		for _, item := range r.Content {
			if m := resolve(item); m.Kind == yaml.MappingNode {
				out = append(out, d.pairs(ctx, m)...)
				continue
			}
			d.errorf(item, "%s: a merge (<<) takes mappings, got %s", ctx, kindName(resolve(item)))
		}
		return out
	}
	d.errorf(v, "%s: a merge (<<) takes a mapping or a list of mappings, got %s", ctx, kindName(r))
	return nil
}

// checkFields reports keys that are not strings, repeated or not among known, and
// returns the rest by name.
func (d *decoder) checkFields(ctx string, fs []field, known []string) map[string]field {
	out := make(map[string]field, len(fs))
	for _, f := range fs {
		if f.key.Kind != yaml.ScalarNode {
			d.errorf(f.key, "%s: a field name must be a string, got %s", ctx, kindName(f.key))
			continue
		}
		name := f.key.Value
		if first, ok := out[name]; ok {
			d.errorf(f.key, "%s: duplicate field %q (first at %d:%d)", ctx, name, first.key.Line, first.key.Column)
			continue
		}
		if !contains(known, name) {
			d.errorf(f.key, "%s: unknown field %q%s", ctx, name, didYouMean(name, known))
			continue
		}
		out[name] = f
	}
	return out
}

// mapping returns the resolved node when it is a mapping, reporting it otherwise.
func (d *decoder) mapping(ctx string, n *yaml.Node) (*yaml.Node, bool) {
	r := resolve(n)
	if r.Kind != yaml.MappingNode {
		d.errorf(n, "%s: want a mapping, got %s", ctx, kindName(r))
		return nil, false
	}
	return r, true
}

// sequence returns a list's items, reporting a non-list. A null value is an empty list.
func (d *decoder) sequence(ctx string, n *yaml.Node) ([]*yaml.Node, bool) {
	r := resolve(n)
	if r.Kind == yaml.ScalarNode && r.ShortTag() == "!!null" {
		return nil, true
	}
	if r.Kind != yaml.SequenceNode {
		d.errorf(n, "%s: want a list, got %s", ctx, kindName(r))
		return nil, false
	}
	for _, item := range r.Content {
		if !d.visit(item) {
			return nil, false
		}
	}
	return r.Content, true
}

// str decodes a scalar as text; null is "". Any scalar is taken as written, so
// `id: 007` is the id "007", not the number 7.
func (d *decoder) str(ctx string, n *yaml.Node) (string, bool) {
	r := resolve(n)
	if r.Kind != yaml.ScalarNode {
		d.errorf(n, "%s: want a string, got %s", ctx, kindName(r))
		return "", false
	}
	if r.ShortTag() == "!!null" {
		return "", true
	}
	return r.Value, true
}

// nonEmpty decodes a string that must have a value.
func (d *decoder) nonEmpty(ctx string, n *yaml.Node) (string, bool) {
	s, ok := d.str(ctx, n)
	if ok && strings.TrimSpace(s) == "" {
		d.errorf(n, "%s: must not be empty", ctx)
		return "", false
	}
	return s, ok
}

// number decodes a finite int or float scalar.
func (d *decoder) number(ctx string, n *yaml.Node) (float64, bool) {
	r := resolve(n)
	if r.Kind != yaml.ScalarNode || (r.ShortTag() != "!!int" && r.ShortTag() != "!!float") {
		d.errorf(n, "%s: want a number, got %s", ctx, kindName(r))
		return 0, false
	}
	var f float64
	if err := r.Decode(&f); err != nil {
		d.errorf(n, "%s: want a number, got %q", ctx, r.Value)
		return 0, false
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		d.errorf(n, "%s: want a finite number, got %s", ctx, r.Value)
		return 0, false
	}
	return f, true
}

// integer decodes an int scalar.
func (d *decoder) integer(ctx string, n *yaml.Node) (int64, bool) {
	r := resolve(n)
	if r.Kind != yaml.ScalarNode || r.ShortTag() != "!!int" {
		d.errorf(n, "%s: want an integer, got %s", ctx, kindName(r))
		return 0, false
	}
	var i int64
	if err := r.Decode(&i); err != nil {
		d.errorf(n, "%s: %q does not fit in 64 bits", ctx, r.Value)
		return 0, false
	}
	return i, true
}

// numbers decodes a list of numbers.
func (d *decoder) numbers(ctx string, n *yaml.Node) ([]float64, bool) {
	items, ok := d.sequence(ctx, n)
	if !ok {
		return nil, false
	}
	out := make([]float64, 0, len(items))
	for i, item := range items {
		f, ok := d.number(fmt.Sprintf("%s[%d]", ctx, i), item)
		if !ok {
			return nil, false
		}
		out = append(out, f)
	}
	return out, true
}

// stringList decodes a list of non-empty strings.
func (d *decoder) stringList(ctx string, n *yaml.Node) ([]string, []*yaml.Node, bool) {
	items, ok := d.sequence(ctx, n)
	if !ok {
		return nil, nil, false
	}
	out := make([]string, 0, len(items))
	nodes := make([]*yaml.Node, 0, len(items))
	all := true
	for i, item := range items {
		s, ok := d.nonEmpty(fmt.Sprintf("%s[%d]", ctx, i), item)
		if !ok {
			all = false
			continue
		}
		out = append(out, s)
		nodes = append(nodes, item)
	}
	return out, nodes, all
}

// stringMap decodes a mapping of strings to strings in file order.
func (d *decoder) stringMap(ctx string, n *yaml.Node) ([]field, map[string]string, bool) {
	m, ok := d.mapping(ctx, n)
	if !ok {
		return nil, nil, false
	}
	var fs []field
	out := map[string]string{}
	seen := map[string]*yaml.Node{}
	all := true
	for _, f := range d.pairs(ctx, m) {
		key, ok := d.nonEmpty(ctx+": key", f.key)
		if !ok {
			all = false
			continue
		}
		if first, dup := seen[key]; dup {
			d.errorf(f.key, "%s: duplicate key %q (first at %d:%d)", ctx, key, first.Line, first.Column)
			all = false
			continue
		}
		seen[key] = f.key
		v, ok := d.str(fmt.Sprintf("%s: %q", ctx, key), f.value)
		if !ok {
			all = false
			continue
		}
		out[key] = v
		fs = append(fs, f)
	}
	return fs, out, all
}

// topLevel checks the file's top-level mapping holds only key and returns its value.
func (d *decoder) topLevel(root *yaml.Node, key, what string) *yaml.Node {
	if root == nil {
		if len(d.errs) == 0 {
			d.errs = append(d.errs, &Error{File: d.file, Line: 1, Column: 1,
				Msg: fmt.Sprintf("the file is empty; want a top-level %q list of %s", key, what)})
		}
		return nil
	}
	m := resolve(root)
	if m.Kind != yaml.MappingNode {
		d.errorf(root, "want a mapping with a top-level %q list of %s, got %s", key, what, kindName(m))
		return nil
	}
	// Keys starting with "x-" are ignored, as in Compose files: a place to define
	// anchors that entries merge in (<<: *name).
	var fields []field
	for _, f := range d.pairs("top level", m) {
		if !(f.key.Kind == yaml.ScalarNode && strings.HasPrefix(f.key.Value, "x-")) {
			fields = append(fields, f)
		}
	}
	fs := d.checkFields("top level", fields, []string{key})
	f, ok := fs[key]
	if !ok {
		for _, other := range fields {
			if didYouMean(other.key.Value, []string{key}) != "" {
				return nil // already reported as a misspelling of key
			}
		}
		d.errorf(root, "missing the top-level %q list of %s (keys starting with \"x-\" are ignored)", key, what)
		return nil
	}
	return f.value
}

var idPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]*$`)

const maxIDLen = 64

// idProblem says what is wrong with an id (or a zoo name, which follows the same
// rules), or "" when it is valid. The value itself is not repeated: the message's
// context already quotes it.
func idProblem(what, id string) string {
	switch {
	case id == "":
		return what + " must not be empty"
	case len(id) > maxIDLen:
		return fmt.Sprintf("%s is %d bytes long; the limit is %d", what, len(id), maxIDLen)
	case !idPattern.MatchString(id):
		return what + " is not valid: use lowercase letters, digits, '-', '.' and '_', starting with a letter or digit"
	}
	return ""
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
