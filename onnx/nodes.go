package onnx

import (
	"errors"
	"fmt"
	"strconv"

	"google.golang.org/protobuf/encoding/protowire"
)

// GraphProto fields Nodes and the editors read besides those the writer uses.
const (
	fGraphValueInfo         protowire.Number = 13 // GraphProto.value_info (repeated ValueInfoProto)
	fGraphSparseInitializer protowire.Number = 15 // GraphProto.sparse_initializer (repeated SparseTensorProto)
)

// NodeInfo is one node of a model's top-level graph, as the file has it.
type NodeInfo struct {
	// Name is the node's name; a node the file leaves unnamed gets "OpType_index"
	// (its position in the graph), so every node can be named in a report.
	Name    string
	OpType  string
	Domain  string   // "" for ai.onnx
	Inputs  []string // "" where an optional input is left out
	Outputs []string
	// Branches are an If node's then_branch and else_branch (GraphProto bytes);
	// nil for every other node.
	Branches map[string][]byte
}

// Listing is a model's top-level graph: its nodes in file order (which ONNX requires
// to be topological) and the names its values come from.
type Listing struct {
	Nodes        []NodeInfo
	Inputs       []string // graph inputs; old IR versions list initializers here too
	Initializers []string
	Outputs      []string
}

// List reads a model's top-level graph. Nodes inside subgraphs (If branches, Loop
// and Scan bodies) are not listed: their values cannot be graph outputs.
func List(model []byte) (*Listing, error) {
	graph, err := modelGraph(model)
	if err != nil {
		return nil, err
	}
	l := &Listing{}
	err = fields(graph, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		if typ != protowire.BytesType {
			return nil
		}
		switch num {
		case fGraphNode:
			n, err := readNodeInfo(v)
			if err != nil {
				return fmt.Errorf("node %d: %w", len(l.Nodes), err)
			}
			if n.Name == "" {
				n.Name = n.OpType + "_" + strconv.Itoa(len(l.Nodes))
			}
			l.Nodes = append(l.Nodes, n)
		case fGraphInput, fGraphOutput:
			vi, err := readValueInfo(v)
			if err != nil {
				return err
			}
			if num == fGraphInput {
				l.Inputs = append(l.Inputs, vi.Name)
			} else {
				l.Outputs = append(l.Outputs, vi.Name)
			}
		case fGraphInitializer:
			name, err := tensorName(v)
			if err != nil {
				return err
			}
			l.Initializers = append(l.Initializers, name)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("graph: %w", err)
	}
	return l, nil
}

func readNodeInfo(b []byte) (NodeInfo, error) {
	var n NodeInfo
	err := fields(b, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		if typ != protowire.BytesType {
			return nil
		}
		switch num {
		case fNodeInput:
			n.Inputs = append(n.Inputs, string(v))
		case fNodeOutput:
			n.Outputs = append(n.Outputs, string(v))
		case fNodeName:
			n.Name = string(v)
		case fNodeOpType:
			n.OpType = string(v)
		case fNodeDomain:
			n.Domain = string(v)
		case fNodeAttribute:
			var name string
			var g []byte
			if err := fields(v, func(an protowire.Number, at protowire.Type, av []byte, _ uint64) error {
				switch {
				case an == fAttrName && at == protowire.BytesType:
					name = string(av)
				case an == fAttrG && at == protowire.BytesType:
					g = av
				}
				return nil
			}); err != nil {
				return err
			}
			if g != nil && (name == "then_branch" || name == "else_branch") {
				if n.Branches == nil {
					n.Branches = map[string][]byte{}
				}
				n.Branches[name] = g
			}
		}
		return nil
	})
	if n.Domain == "ai.onnx" {
		n.Domain = ""
	}
	if n.OpType != "If" || n.Domain != "" {
		n.Branches = nil
	}
	return n, err
}

func tensorName(t []byte) (string, error) {
	var name string
	err := fields(t, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		if num == fTensorName && typ == protowire.BytesType {
			name = string(v)
		}
		return nil
	})
	return name, err
}

// modelGraph returns the bytes of a ModelProto's graph.
func modelGraph(model []byte) ([]byte, error) {
	var graph []byte
	err := fields(model, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		if num == fModelGraph && typ == protowire.BytesType {
			graph = v
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("not an ONNX model: %w", err)
	}
	if graph == nil {
		return nil, errors.New("not an ONNX model: no graph")
	}
	return graph, nil
}

// rawFields walks one message's fields like fields, handing over each field's
// whole encoding (tag included) as well, so an editor copies the fields it leaves
// alone byte for byte.
func rawFields(b []byte, f func(num protowire.Number, typ protowire.Type, v, raw []byte) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return fmt.Errorf("bad field tag: %w", protowire.ParseError(n))
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return fmt.Errorf("field %d: %w", num, protowire.ParseError(m))
		}
		raw := b[:n+m]
		var v []byte
		if typ == protowire.BytesType {
			v, _ = protowire.ConsumeBytes(b[n:])
		}
		b = b[n+m:]
		if err := f(num, typ, v, raw); err != nil {
			return err
		}
	}
	return nil
}

// editGraph rewrites a model's graph with edit, copying every other field of the
// ModelProto as it was.
func editGraph(model []byte, edit func(graph []byte) ([]byte, error)) ([]byte, error) {
	var out []byte
	seen := false
	err := rawFields(model, func(num protowire.Number, typ protowire.Type, v, raw []byte) error {
		if num != fModelGraph || typ != protowire.BytesType {
			out = append(out, raw...)
			return nil
		}
		g, err := edit(v)
		if err != nil {
			return err
		}
		seen = true
		out = appendBytes(out, fModelGraph, g)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("not an ONNX model: %w", err)
	}
	if !seen {
		return nil, errors.New("not an ONNX model: no graph")
	}
	return out, nil
}
