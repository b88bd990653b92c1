package onnx

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"

	"google.golang.org/protobuf/encoding/protowire"
)

// Field numbers read (never written) by Inspect, from onnx/onnx.proto.
const (
	fAttrGraphs       protowire.Number = 11 // AttributeProto.graphs (repeated GraphProto)
	fTensorExternal   protowire.Number = 13 // TensorProto.external_data (repeated StringStringEntryProto)
	fTensorFloatData  protowire.Number = 4  // TensorProto.float_data (repeated float)
	fTensorInt64Data  protowire.Number = 7  // TensorProto.int64_data (repeated int64)
	fStringEntryKey   protowire.Number = 1  // StringStringEntryProto.key
	fStringEntryValue protowire.Number = 2  // StringStringEntryProto.value
)

// typeKinds are TypeProto's value fields other than tensor_type.
var typeKinds = map[protowire.Number]string{
	4: "sequence",      // TypeProto.sequence_type
	5: "map",           // TypeProto.map_type
	8: "sparse_tensor", // TypeProto.sparse_tensor_type
	9: "optional",      // TypeProto.optional_type
}

// Summary is what Inspect reads from a serialised model without running it: its
// interface (with symbolic dim names, which ONNX Runtime's Go binding does not
// expose), its operators and its size.
type Summary struct {
	IRVersion       int64
	Opsets          []Opset
	Inputs, Outputs []ValueInfo    // graph inputs that are not initializers
	Ops             map[string]int // "Op" or "domain:Op" → node count, subgraphs included
	// Params is the model's weights, Stored and InGraph together: floating-point
	// elements. WeightBytes is their bytes, integer constants included.
	Params, WeightBytes int64
	// Stored is the initializers, in the file or in external data; InGraph is what
	// nodes make when the session loads: Constant nodes' tensors and ConstantOfShape
	// over a constant shape. Third-party CNNs counted by initializers only read
	// "2.0k params" and used hundreds of MiB: their weights were made in-graph.
	Stored, InGraph Weights
	External        bool // some initializers live in external data files
	// Producers names, per graph output, the node that computes it, looking
	// through Identity: what a family guess reads (a Softmax last is a distribution).
	Producers map[string]Producer
	// TopK is the k of each TopK node whose k is a constant, in graph order.
	TopK []int64
}

// Weights counts tensors of weights: floating-point elements and bytes.
type Weights struct {
	Params int64 `json:"params"` // floating-point elements
	Bytes  int64 `json:"bytes"`  // every element's bytes, integer constants included
}

// Producer is the node that computes a graph output.
type Producer struct {
	Op   string
	Axis *int64 // its axis attribute, nil when it has none
}

// SoftmaxAxis is the axis a Softmax-like producer normalises over, as written or
// the default of the model's opset (1 before opset 13, -1 from it); false for
// other operators.
func (s *Summary) SoftmaxAxis(p Producer) (int64, bool) {
	if p.Op != "Softmax" && p.Op != "LogSoftmax" {
		return 0, false
	}
	if p.Axis != nil {
		return *p.Axis, true
	}
	if s.Opset("") < 13 {
		return 1, true
	}
	return -1, true
}

// Opset is the version the model imports for a domain ("" is ai.onnx); 0 when none.
func (s *Summary) Opset(domain string) int64 {
	for _, o := range s.Opsets {
		if o.Domain == domain || domain == "" && o.Domain == "ai.onnx" {
			return o.Version
		}
	}
	return 0
}

// InspectFile reads a model file and summarises it.
func InspectFile(path string) (*Summary, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	s, err := Inspect(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// Inspect summarises a serialised ModelProto. Bytes that are not one give an error
// saying so, with where decoding stopped.
func Inspect(data []byte) (*Summary, error) {
	if len(data) == 0 {
		return nil, errors.New("not an ONNX model: the file is empty")
	}
	s := &Summary{Ops: map[string]int{}, Producers: map[string]Producer{}}
	var graph []byte
	err := fields(data, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error {
		switch {
		case num == fModelIRVersion && typ == protowire.VarintType:
			s.IRVersion = int64(x)
		case num == fModelGraph && typ == protowire.BytesType:
			graph = v
		case num == fModelOpsetImport && typ == protowire.BytesType:
			var o Opset
			if err := fields(v, func(n protowire.Number, t protowire.Type, b []byte, x uint64) error {
				switch {
				case n == fOpsetDomain && t == protowire.BytesType:
					o.Domain = string(b)
				case n == fOpsetVersion && t == protowire.VarintType:
					o.Version = int64(x)
				}
				return nil
			}); err != nil {
				return err
			}
			s.Opsets = append(s.Opsets, o)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("not an ONNX model: %w", err)
	}
	if graph == nil || s.IRVersion == 0 {
		return nil, errors.New("not an ONNX model: no ir_version or graph (a truncated or foreign file)")
	}
	in := &inspector{Summary: s, initializers: map[string]bool{}, ints: map[string][]int64{}, top: map[string]node{}}
	if err := in.readGraph(graph, true); err != nil {
		return nil, fmt.Errorf("not an ONNX model: graph: %w", err)
	}
	in.finish()
	inputs := s.Inputs[:0]
	for _, vi := range s.Inputs {
		if !in.initializers[vi.Name] {
			inputs = append(inputs, vi)
		}
	}
	s.Inputs = inputs
	return s, nil
}

// OpNames lists the operators used, sorted.
func (s *Summary) OpNames() []string {
	names := make([]string, 0, len(s.Ops))
	for op := range s.Ops {
		names = append(names, op)
	}
	sort.Strings(names)
	return names
}

// inspector is Inspect's state while it reads a graph: what later nodes and the
// final tally need, since protobuf writes nodes before initializers.
type inspector struct {
	*Summary
	initializers map[string]bool
	// ints holds small integer constants by name (initializers and Constant
	// outputs, subgraphs included): the shapes ConstantOfShape fills and TopK's k.
	ints map[string][]int64
	// fills are ConstantOfShape nodes, resolved once every constant is known.
	fills []fill
	topK  []string        // each TopK's k input
	top   map[string]node // the top graph's nodes by output name
}

type fill struct {
	shape string
	typ   DataType
}

// node is what Inspect keeps of a top-level node.
type node struct {
	op     string
	inputs []string
	axis   *int64
}

// maxConstInts bounds the integer constants kept by value: shapes and k are short.
const maxConstInts = 16

func (in *inspector) readGraph(g []byte, top bool) error {
	return fields(g, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		if typ != protowire.BytesType {
			return nil
		}
		switch num {
		case fGraphNode:
			return in.readNode(v, top)
		case fGraphInitializer:
			t, err := readTensor(v)
			in.initializers[t.name] = true
			in.Stored.add(t)
			in.External = in.External || t.external
			if t.ints != nil {
				in.ints[t.name] = t.ints
			}
			return err
		case fGraphInput, fGraphOutput:
			if !top {
				return nil
			}
			vi, err := readValueInfo(v)
			if err != nil {
				return err
			}
			if num == fGraphInput {
				in.Inputs = append(in.Inputs, vi)
			} else {
				in.Outputs = append(in.Outputs, vi)
			}
		}
		return nil
	})
}

func (in *inspector) readNode(n []byte, top bool) error {
	var op, domain string
	var inputs, outputs []string
	var axis *int64
	var attrs []attribute
	err := fields(n, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		if typ != protowire.BytesType {
			return nil
		}
		switch num {
		case fNodeOpType:
			op = string(v)
		case fNodeDomain:
			domain = string(v)
		case fNodeInput:
			inputs = append(inputs, string(v))
		case fNodeOutput:
			outputs = append(outputs, string(v))
		case fNodeAttribute:
			a, err := in.readAttribute(v)
			attrs = append(attrs, a)
			return err
		}
		return nil
	})
	if domain != "" && domain != "ai.onnx" {
		op = domain + ":" + op
	}
	in.Ops[op]++
	fillType := Float32 // ConstantOfShape's default value is a float32 zero
	for _, a := range attrs {
		switch {
		case a.name == "axis" && a.hasInt:
			x := a.i
			axis = &x
		case op == "ConstantOfShape" && a.name == "value" && a.tensor != nil:
			fillType = a.tensor.typ
		}
		// Tensors held by attributes (Constant's value, ConstantOfShape's fill value)
		// are made by the graph; a Constant's value_ints is an integer constant.
		if a.tensor != nil {
			in.InGraph.add(*a.tensor)
		}
		if op == "Constant" && len(outputs) == 1 {
			switch {
			case a.tensor != nil && a.tensor.ints != nil:
				in.ints[outputs[0]] = a.tensor.ints
			case a.name == "value_ints":
				in.ints[outputs[0]] = a.ints
				in.InGraph.Bytes += 8 * int64(len(a.ints))
			case a.name == "value_int":
				in.ints[outputs[0]] = []int64{a.i}
				in.InGraph.Bytes += 8
			case a.name == "value_float" || a.name == "value_floats":
				in.InGraph.Params += a.floats
				in.InGraph.Bytes += 4 * a.floats
			}
		}
	}
	switch {
	case op == "ConstantOfShape" && len(inputs) == 1:
		in.fills = append(in.fills, fill{inputs[0], fillType})
	case op == "TopK" && len(inputs) == 2:
		in.topK = append(in.topK, inputs[1])
	}
	if top {
		for _, o := range outputs {
			in.top[o] = node{op: op, inputs: inputs, axis: axis}
		}
	}
	return err
}

// attribute is what Inspect reads of an AttributeProto.
type attribute struct {
	name   string
	i      int64
	hasInt bool
	ints   []int64
	floats int64 // how many floats (f or floats)
	tensor *tensorInfo
}

func (in *inspector) readAttribute(b []byte) (attribute, error) {
	var a attribute
	err := fields(b, func(n protowire.Number, t protowire.Type, v []byte, x uint64) error {
		switch {
		case n == fAttrName && t == protowire.BytesType:
			a.name = string(v)
		case n == fAttrI && t == protowire.VarintType:
			a.i, a.hasInt = int64(x), true
		case n == fAttrInts && t == protowire.VarintType:
			a.ints = append(a.ints, int64(x))
		case n == fAttrInts && t == protowire.BytesType:
			vals, err := varints(v)
			a.ints = append(a.ints, vals...)
			return err
		case n == fAttrF && t == protowire.Fixed32Type:
			a.floats++
		case n == fAttrFloats && t == protowire.Fixed32Type:
			a.floats++
		case n == fAttrFloats && t == protowire.BytesType:
			a.floats += int64(len(v) / 4)
		case n == fAttrT && t == protowire.BytesType:
			ti, err := readTensor(v)
			in.External = in.External || ti.external
			a.tensor = &ti
			return err
		case (n == fAttrG || n == fAttrGraphs) && t == protowire.BytesType:
			// Subgraphs (If, Loop, Scan bodies) hold nodes and weights too.
			return in.readGraph(v, false)
		}
		return nil
	})
	return a, err
}

// finish counts what needed every constant known: ConstantOfShape's weights, TopK's
// k, and each output's producer.
func (in *inspector) finish() {
	for _, f := range in.fills {
		shape, ok := in.ints[f.shape]
		if !ok {
			continue // a shape computed at run time: activations, not weights
		}
		elems, ok := product(shape)
		if !ok {
			continue
		}
		in.InGraph.add(tensorInfo{typ: f.typ, elems: elems})
	}
	for _, k := range in.topK {
		if v, ok := in.ints[k]; ok && len(v) == 1 {
			in.TopK = append(in.TopK, v[0])
		}
	}
	for _, o := range in.Outputs {
		name := o.Name
		for range len(in.top) + 1 { // bounded: a malformed graph may loop
			nd, ok := in.top[name]
			if !ok {
				break
			}
			if nd.op != "Identity" || len(nd.inputs) == 0 {
				in.Producers[o.Name] = Producer{Op: nd.op, Axis: nd.axis}
				break
			}
			name = nd.inputs[0]
		}
	}
	in.Params = in.Stored.Params + in.InGraph.Params
	in.WeightBytes = in.Stored.Bytes + in.InGraph.Bytes
}

// product multiplies non-negative dims; false for a negative dim or an overflow.
func product(dims []int64) (int64, bool) {
	n := int64(1)
	for _, d := range dims {
		if d < 0 || d != 0 && n > math.MaxInt64/d {
			return 0, false
		}
		n *= d
	}
	return n, true
}

// tensorInfo is what Inspect reads of a TensorProto.
type tensorInfo struct {
	name  string
	typ   DataType
	elems int64
	bytes int64 // as stored; 0 when only elems and the type say

	ints     []int64 // the values of a short integer tensor, else nil
	external bool
}

func (w *Weights) add(t tensorInfo) {
	if t.typ == Float32 || t.typ == Float16 || t.typ == Float64 || t.typ == BFloat16 {
		w.Params += t.elems // weights; integer constants (shapes, axes) are not parameters
	}
	switch {
	case t.bytes > 0: // as stored
		w.Bytes += t.bytes
	case t.typ.Size() > 0:
		w.Bytes += t.elems * int64(t.typ.Size())
	}
}

func readTensor(t []byte) (tensorInfo, error) {
	var ti tensorInfo
	var dims []int64
	var raw, packed []byte
	var unpacked []int64
	var inline int64
	var external int64 = -1
	err := fields(t, func(num protowire.Number, wt protowire.Type, v []byte, x uint64) error {
		switch {
		case num == fTensorDims && wt == protowire.VarintType:
			dims = append(dims, int64(x))
		case num == fTensorDims && wt == protowire.BytesType: // packed
			d, err := varints(v)
			dims = append(dims, d...)
			return err
		case num == fTensorDataType && wt == protowire.VarintType:
			ti.typ = DataType(x)
		case num == fTensorName && wt == protowire.BytesType:
			ti.name = string(v)
		case num == fTensorRawData && wt == protowire.BytesType:
			raw = v
		case num == fTensorInt64Data && wt == protowire.BytesType:
			packed = v
			inline += int64(len(v))
		case num == fTensorInt64Data && wt == protowire.VarintType:
			unpacked = append(unpacked, int64(x))
		case num == fTensorFloatData && wt == protowire.BytesType:
			inline += int64(len(v))
		case num == fTensorExternal && wt == protowire.BytesType:
			ti.external = true
			return fields(v, func(n protowire.Number, _ protowire.Type, b []byte, _ uint64) error {
				if n == fStringEntryKey && string(b) == "length" {
					external = 0 // the value follows
				} else if n == fStringEntryValue && external == 0 {
					external, _ = strconv.ParseInt(string(b), 10, 64)
				}
				return nil
			})
		}
		return nil
	})
	elems, ok := product(dims)
	if !ok {
		elems = 0
	}
	ti.elems = elems
	switch {
	case len(raw) > 0:
		ti.bytes = int64(len(raw))
	case external > 0:
		ti.bytes = external
	case ti.typ.Size() == 0:
		ti.bytes = inline
	}
	if ti.typ == Int64 && elems <= maxConstInts {
		switch {
		case int64(len(raw)) == 8*elems:
			for i := range elems {
				ti.ints = append(ti.ints, int64(binary.LittleEndian.Uint64(raw[8*i:])))
			}
		case packed != nil:
			ti.ints, _ = varints(packed)
		case unpacked != nil:
			ti.ints = unpacked
		case elems == 0:
			ti.ints = []int64{}
		}
		if int64(len(ti.ints)) != elems {
			ti.ints = nil
		}
	}
	return ti, err
}

// varints reads packed varints.
func varints(v []byte) ([]int64, error) {
	var out []int64
	for len(v) > 0 {
		d, n := protowire.ConsumeVarint(v)
		if n < 0 {
			return out, protowire.ParseError(n)
		}
		out = append(out, int64(d))
		v = v[n:]
	}
	return out, nil
}

func readValueInfo(b []byte) (ValueInfo, error) {
	var vi ValueInfo
	err := fields(b, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		if typ != protowire.BytesType {
			return nil
		}
		switch num {
		case fValueInfoName:
			vi.Name = string(v)
		case fValueInfoType:
			return fields(v, func(n protowire.Number, t protowire.Type, tv []byte, _ uint64) error {
				if t != protowire.BytesType {
					return nil
				}
				if kind, ok := typeKinds[n]; ok {
					vi.Kind = kind
					return nil
				}
				if n != fTypeTensorType {
					return nil
				}
				vi.Unranked = true // until a shape is read
				return fields(tv, func(n protowire.Number, t protowire.Type, sv []byte, x uint64) error {
					switch {
					case n == fTypeTensorElemType && t == protowire.VarintType:
						vi.Type = DataType(x)
					case n == fTypeTensorShape && t == protowire.BytesType:
						vi.Unranked = false
						return fields(sv, func(n protowire.Number, t protowire.Type, dv []byte, _ uint64) error {
							if n != fShapeDim || t != protowire.BytesType {
								return nil
							}
							d := Dim{Value: -1}
							err := fields(dv, func(n protowire.Number, t protowire.Type, b []byte, x uint64) error {
								switch {
								case n == fDimValue && t == protowire.VarintType:
									d.Value = int64(x)
								case n == fDimParam && t == protowire.BytesType:
									d.Param = string(b)
								}
								return nil
							})
							vi.Dims = append(vi.Dims, d)
							return err
						})
					}
					return nil
				})
			})
		}
		return nil
	})
	return vi, err
}

// fields walks one message's fields: v holds a length-delimited field's bytes, x a
// varint's or a fixed-width field's value.
func fields(b []byte, f func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return fmt.Errorf("bad field tag: %w", protowire.ParseError(n))
		}
		b = b[n:]
		var v []byte
		var x uint64
		switch typ {
		case protowire.VarintType:
			x, n = protowire.ConsumeVarint(b)
		case protowire.BytesType:
			v, n = protowire.ConsumeBytes(b)
		case protowire.Fixed32Type: // an unpacked float
			var u uint32
			u, n = protowire.ConsumeFixed32(b)
			x = uint64(u)
		case protowire.Fixed64Type: // an unpacked double
			x, n = protowire.ConsumeFixed64(b)
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return fmt.Errorf("field %d: %w", num, protowire.ParseError(n))
		}
		b = b[n:]
		if err := f(num, typ, v, x); err != nil {
			return err
		}
	}
	return nil
}
