// Package onnx builds ONNX models in Go and serialises them to the ONNX
// protobuf wire format without protoc or generated code.
//
// A model is built by adding inputs, initializers, nodes and outputs to a
// Graph; helper methods return the name of the value they create so that
// calls compose:
//
//	g := onnx.NewGraph("mlp")
//	x := g.Input("x", onnx.Float32, "batch", 16)
//	w := g.Random("w", 0.02, 16, 4)
//	y := g.Op("MatMul", []string{x, w})
//	g.Node("Relu", []string{y}, []string{"y"})
//	g.Output("y", onnx.Float32, "batch", 4)
//	data := g.Model().Marshal()
//
// Everything is deterministic: the same calls with the same seed give the
// same bytes.
package onnx

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Dim is one dimension of a value's shape: a fixed size, or a symbolic name
// such as "batch" when Param is not empty.
type Dim struct {
	Value int64
	Param string
}

// String is the dim as shapes are written: its symbol, "?" for an anonymous
// dynamic dim (a negative Value), else its size.
func (d Dim) String() string {
	switch {
	case d.Param != "":
		return d.Param
	case d.Value < 0:
		return "?"
	}
	return strconv.FormatInt(d.Value, 10)
}

// dims converts the dims of Input and Output: a string is a symbolic
// dimension, an integer a fixed one. Anything else is a programming error in
// the model definition, so it panics rather than returning an error that
// every caller would have to thread through.
func dims(ds []any) []Dim {
	out := make([]Dim, len(ds))
	for i, d := range ds {
		switch v := d.(type) {
		case string:
			out[i] = Dim{Param: v}
		case int:
			out[i] = Dim{Value: int64(v)}
		case int64:
			out[i] = Dim{Value: v}
		case Dim:
			out[i] = v
		default:
			panic(fmt.Sprintf("onnx: dim %d is %T, want string (symbolic) or int (fixed)", i, d))
		}
	}
	return out
}

// ValueInfo describes a graph input or output.
type ValueInfo struct {
	Name string
	Type DataType
	Dims []Dim
	// Unranked: the tensor type has no shape at all, so its rank is unknown. An
	// empty Dims alone is a scalar.
	Unranked bool
	// Kind is "" for a tensor, else the TypeProto it read ("sequence", "map",
	// "optional", "sparse_tensor"): values the builder does not write and ONNX
	// Runtime's Go binding does not feed as tensors.
	Kind string
}

// Tensor is a constant tensor: an initializer or a tensor attribute. Data is
// kept as little-endian raw bytes, the form TensorProto.raw_data takes.
type Tensor struct {
	Name    string
	Type    DataType
	Dims    []int64
	Raw     []byte
	Strings []string // a StringType tensor's elements (string_data), in place of Raw
}

// NumElements is the product of the dims (1 for a scalar).
func (t *Tensor) NumElements() int64 {
	n := int64(1)
	for _, d := range t.Dims {
		n *= d
	}
	return n
}

// FloatTensor returns a float32 tensor with the given dims and data.
func FloatTensor(dims []int64, data []float32) *Tensor {
	raw := make([]byte, 0, 4*len(data))
	for _, v := range data {
		raw = binary.LittleEndian.AppendUint32(raw, math.Float32bits(v))
	}
	return checked(&Tensor{Type: Float32, Dims: dims, Raw: raw})
}

// Int64Tensor returns an int64 tensor with the given dims and data.
func Int64Tensor(dims []int64, data []int64) *Tensor {
	raw := make([]byte, 0, 8*len(data))
	for _, v := range data {
		raw = binary.LittleEndian.AppendUint64(raw, uint64(v))
	}
	return checked(&Tensor{Type: Int64, Dims: dims, Raw: raw})
}

func checked(t *Tensor) *Tensor {
	if want := t.NumElements() * int64(t.Type.Size()); want != int64(len(t.Raw)) {
		panic(fmt.Sprintf("onnx: tensor dims %v need %d bytes of %v, got %d", t.Dims, want, t.Type, len(t.Raw)))
	}
	return t
}

// Attr is a node attribute. Build one with Int, Ints, Float, Floats, String,
// TensorAttr or GraphAttr.
type Attr struct {
	name   string
	typ    int
	i      int64
	f      float32
	s      string
	ints   []int64
	floats []float32
	t      *Tensor
	g      *Graph
}

// Int is an INT attribute.
func Int(name string, v int64) Attr { return Attr{name: name, typ: attrTypeInt, i: v} }

// Ints is an INTS attribute.
func Ints(name string, vs ...int64) Attr { return Attr{name: name, typ: attrTypeInts, ints: vs} }

// Float is a FLOAT attribute.
func Float(name string, v float32) Attr { return Attr{name: name, typ: attrTypeFloat, f: v} }

// Floats is a FLOATS attribute.
func Floats(name string, vs ...float32) Attr {
	return Attr{name: name, typ: attrTypeFloats, floats: vs}
}

// String is a STRING attribute.
func String(name, v string) Attr { return Attr{name: name, typ: attrTypeString, s: v} }

// TensorAttr is a TENSOR attribute, e.g. Constant's value.
func TensorAttr(name string, t *Tensor) Attr { return Attr{name: name, typ: attrTypeTensor, t: t} }

// GraphAttr is a GRAPH attribute: the body of Scan, Loop or If. The body is
// normally made with Graph.Subgraph so that its value names cannot clash
// with the outer graph's.
func GraphAttr(name string, g *Graph) Attr { return Attr{name: name, typ: attrTypeGraph, g: g} }

// Node is one operator application.
type Node struct {
	Name    string
	OpType  string
	Domain  string // "" is the default ONNX domain
	Inputs  []string
	Outputs []string
	Attrs   []Attr
}

// namer hands out unique value names. A graph and its subgraphs share one,
// because ONNX forbids a subgraph from reusing a name of its outer scope.
type namer struct {
	next  int
	taken map[string]bool
}

// Graph is a GraphProto under construction.
type Graph struct {
	Name    string
	Doc     string
	Nodes   []Node
	Inputs  []ValueInfo
	Outputs []ValueInfo
	Inits   []*Tensor

	names  *namer
	scope  []string
	consts map[string]string // constant key -> initializer name, for reuse
	rng    *RNG
}

// NewGraph starts an empty graph. Its weights come from an RNG seeded with
// 0 until Seed is called.
func NewGraph(name string) *Graph {
	return &Graph{
		Name:   name,
		names:  &namer{taken: map[string]bool{}},
		consts: map[string]string{},
		rng:    NewRNG(0),
	}
}

// Seed reseeds the graph's weight generator. Call it before adding weights.
func (g *Graph) Seed(seed uint64) *Graph {
	g.rng = NewRNG(seed)
	return g
}

// RNG is the generator Random draws from, for weights that need custom
// shaping.
func (g *Graph) RNG() *RNG { return g.rng }

// Subgraph starts a graph for a control-flow body (Scan, Loop, If) of g. It
// shares g's names so the body's values never shadow outer ones, and g's
// RNG so its weights continue g's deterministic stream. The body may refer
// to any value of g by name.
func (g *Graph) Subgraph(name string) *Graph {
	return &Graph{
		Name:   name,
		names:  g.names,
		scope:  append([]string(nil), g.scope...),
		consts: map[string]string{},
		rng:    g.rng,
	}
}

// Scope prefixes the names of values created until the returned function is
// called, so that a graph reads like the model's module tree
// ("layer.0/attn/MatMul_12"). Use as: defer g.Scope("attn")().
func (g *Graph) Scope(name string) (end func()) {
	g.scope = append(g.scope, name)
	n := len(g.scope)
	return func() { g.scope = g.scope[:n-1] }
}

// Fresh returns a new unique value name built from the current scope and
// hint. The name is unique because of a counter shared by the graph and its
// subgraphs; it is recorded as taken when a node or initializer defines it.
func (g *Graph) Fresh(hint string) string {
	base := hint
	if len(g.scope) > 0 {
		base = strings.Join(g.scope, "/") + "/" + hint
	}
	for {
		g.names.next++
		name := base + "_" + strconv.Itoa(g.names.next)
		if !g.names.taken[name] {
			return name
		}
	}
}

// claim records a name chosen by the caller; reusing a name is a bug in the
// model definition (ONNX graphs are in SSA form).
func (g *Graph) claim(name string) string {
	if g.names.taken[name] {
		panic(fmt.Sprintf("onnx: value name %q defined twice", name))
	}
	g.names.taken[name] = true
	return name
}

// Input declares a graph input. dims are strings for symbolic dimensions and
// ints for fixed ones. It returns name.
func (g *Graph) Input(name string, t DataType, ds ...any) string {
	g.Inputs = append(g.Inputs, ValueInfo{Name: g.claim(name), Type: t, Dims: dims(ds)})
	return name
}

// Output declares a graph output; a node must produce name.
func (g *Graph) Output(name string, t DataType, ds ...any) {
	g.Outputs = append(g.Outputs, ValueInfo{Name: name, Type: t, Dims: dims(ds)})
}

// AddInitializer adds t as an initializer named t.Name (a fresh name if
// empty) and returns the name.
func (g *Graph) AddInitializer(t *Tensor) string {
	if t.Name == "" {
		t.Name = g.Fresh("const")
	} else {
		g.claim(t.Name)
	}
	g.Inits = append(g.Inits, t)
	return t.Name
}

// Initializer adds a float32 initializer and returns its name.
func (g *Graph) Initializer(name string, dims []int64, data []float32) string {
	t := FloatTensor(dims, data)
	t.Name = name
	return g.AddInitializer(t)
}

// Random adds a float32 weight of the given dims drawn from N(0, std²) with
// the graph's RNG, the way tiny-random checkpoints are initialised.
func (g *Graph) Random(name string, std float32, dims ...int64) string {
	n := int64(1)
	for _, d := range dims {
		n *= d
	}
	return g.Initializer(name, dims, g.rng.NormalFloat32s(int(n), std))
}

// Fill adds a float32 initializer with every element equal to v (LayerNorm
// scales of 1, biases of 0).
func (g *Graph) Fill(name string, v float32, dims ...int64) string {
	n := int64(1)
	for _, d := range dims {
		n *= d
	}
	data := make([]float32, n)
	for i := range data {
		data[i] = v
	}
	return g.Initializer(name, dims, data)
}

// Int64s returns a 1-D int64 constant (shapes, axes, indices). Equal
// constants are added once and shared.
func (g *Graph) Int64s(vs ...int64) string {
	key := fmt.Sprint("i64", vs)
	if name, ok := g.consts[key]; ok {
		return name
	}
	name := g.AddInitializer(Int64Tensor([]int64{int64(len(vs))}, vs))
	g.consts[key] = name
	return name
}

// Int64Scalar returns a 0-d int64 constant, shared like Int64s.
func (g *Graph) Int64Scalar(v int64) string {
	key := fmt.Sprint("i64s", v)
	if name, ok := g.consts[key]; ok {
		return name
	}
	name := g.AddInitializer(Int64Tensor(nil, []int64{v}))
	g.consts[key] = name
	return name
}

// Scalar returns a 0-d float32 constant, shared like Int64s.
func (g *Graph) Scalar(v float32) string {
	key := fmt.Sprint("f32s", math.Float32bits(v))
	if name, ok := g.consts[key]; ok {
		return name
	}
	name := g.AddInitializer(FloatTensor(nil, []float32{v}))
	g.consts[key] = name
	return name
}

// Node adds a node of the default domain with the given inputs and outputs.
// An empty input name marks an omitted optional input.
func (g *Graph) Node(opType string, inputs, outputs []string, attrs ...Attr) {
	g.AddNode(Node{OpType: opType, Inputs: inputs, Outputs: outputs, Attrs: attrs})
}

// AddNode adds n, naming it after its first output when it has no name.
func (g *Graph) AddNode(n Node) {
	for _, o := range n.Outputs {
		if o != "" {
			g.claim(o)
		}
	}
	if n.Name == "" && len(n.Outputs) > 0 {
		n.Name = n.Outputs[0]
	}
	g.Nodes = append(g.Nodes, n)
}

// Op adds a single-output node and returns the fresh name of its output.
func (g *Graph) Op(opType string, inputs []string, attrs ...Attr) string {
	out := g.Fresh(opType)
	g.Node(opType, inputs, []string{out}, attrs...)
	return out
}

// OpN adds a node with n outputs and returns their fresh names.
func (g *Graph) OpN(opType string, inputs []string, n int, attrs ...Attr) []string {
	outs := make([]string, n)
	for i := range outs {
		outs[i] = g.Fresh(opType)
	}
	g.Node(opType, inputs, outs, attrs...)
	return outs
}

// Opset is an OperatorSetIdProto: a domain ("" for ai.onnx) and version.
type Opset struct {
	Domain  string
	Version int64
}

// DefaultOpset is the ai.onnx opset models are built against: 17 has
// LayerNormalization and is supported by every current ONNX Runtime EP.
const DefaultOpset = 17

// Model is a ModelProto: a graph plus the opsets it imports.
type Model struct {
	Graph           *Graph
	Opsets          []Opset
	ProducerName    string
	ProducerVersion string
	Doc             string
}

// Model wraps g into a model importing the given opsets, or ai.onnx
// DefaultOpset when none are given. Add Opset{"com.microsoft", 1} only when
// a node uses a contrib operator.
func (g *Graph) Model(opsets ...Opset) *Model {
	if len(opsets) == 0 {
		opsets = []Opset{{Domain: "", Version: DefaultOpset}}
	}
	return &Model{Graph: g, Opsets: opsets, ProducerName: "hwtest", ProducerVersion: "1"}
}

// Params is the number of floating-point weights in the model's
// initializers, subgraphs included: the "parameter count" of the model.
// Integer constants (shapes, axes) are not parameters.
func (m *Model) Params() int64 {
	var n int64
	m.Graph.walkInits(func(t *Tensor) {
		switch t.Type {
		case Float32, Float16, Float64:
			n += t.NumElements()
		}
	})
	return n
}

// InitializerBytes is the total size of all initializer data, subgraphs
// included: roughly the size of the model file.
func (m *Model) InitializerBytes() int64 {
	var n int64
	m.Graph.walkInits(func(t *Tensor) { n += int64(len(t.Raw)) })
	return n
}

func (g *Graph) walkInits(f func(*Tensor)) {
	for _, t := range g.Inits {
		f(t)
	}
	for _, n := range g.Nodes {
		for _, a := range n.Attrs {
			if a.t != nil {
				f(a.t)
			}
			if a.g != nil {
				a.g.walkInits(f)
			}
		}
	}
}
