package onnx

import (
	"fmt"
	"strconv"

	"google.golang.org/protobuf/encoding/protowire"
)

// Expose makes intermediate values of a model's top-level graph graph outputs, so a
// run returns them: each name is appended to GraphProto.output as a ValueInfoProto
// holding only the name. ONNX Runtime infers their element types and shapes (seen
// with 1.30), so the model needs no shape inference of ours. Names that already are
// outputs are left as they are; the model is otherwise copied byte for byte.
func Expose(model []byte, names []string) ([]byte, error) {
	l, err := List(model)
	if err != nil {
		return nil, err
	}
	have := map[string]bool{}
	for _, o := range l.Outputs {
		have[o] = true
	}
	return editGraph(model, func(graph []byte) ([]byte, error) {
		g := append([]byte(nil), graph...)
		for _, name := range names {
			if name == "" || have[name] {
				continue
			}
			have[name] = true
			g = appendBytes(g, fGraphOutput, appendString(nil, fValueInfoName, name))
		}
		return g, nil
	})
}

// InlineIfs replaces top-level If nodes by the branch they take: taken maps an If's
// first output name to its condition's value (true: then_branch). The branch's
// nodes, initializers and value_info move into the top-level graph, and an Identity
// node per output (named "<If's name>_out<k>") gives the branch's outputs the If's
// output names, so every consumer is unchanged. ONNX forbids a subgraph to reuse a
// name of its outer scopes, so nothing moved can collide. Ifs nested in a branch are
// top-level after it is inlined: call again to inline them. Ifs not in taken stay.
func InlineIfs(model []byte, taken map[string]bool) ([]byte, error) {
	return editGraph(model, func(graph []byte) ([]byte, error) {
		var g, moved []byte // moved: branch initializers and value_info, appended last
		index := 0
		err := rawFields(graph, func(num protowire.Number, typ protowire.Type, v, raw []byte) error {
			if num != fGraphNode || typ != protowire.BytesType {
				g = append(g, raw...)
				return nil
			}
			defer func() { index++ }()
			n, err := readNodeInfo(v)
			if err != nil {
				return fmt.Errorf("node %d: %w", index, err)
			}
			cond, ok := false, false
			if n.Branches != nil && len(n.Outputs) > 0 {
				cond, ok = taken[n.Outputs[0]]
			}
			if !ok {
				g = append(g, raw...)
				return nil
			}
			if n.Name == "" {
				n.Name = n.OpType + "_" + strconv.Itoa(index)
			}
			branch := "else_branch"
			if cond {
				branch = "then_branch"
			}
			body := n.Branches[branch]
			if body == nil {
				return fmt.Errorf("node %s (If) has no %s", n.Name, branch)
			}
			var outs []string
			err = rawFields(body, func(bn protowire.Number, bt protowire.Type, bv, braw []byte) error {
				if bt != protowire.BytesType {
					return nil
				}
				switch bn {
				case fGraphNode:
					g = append(g, braw...)
				case fGraphInitializer, fGraphSparseInitializer, fGraphValueInfo:
					moved = append(moved, braw...)
				case fGraphOutput:
					vi, err := readValueInfo(bv)
					if err != nil {
						return err
					}
					outs = append(outs, vi.Name)
				}
				return nil
			})
			if err != nil {
				return fmt.Errorf("node %s (If), %s: %w", n.Name, branch, err)
			}
			if len(outs) != len(n.Outputs) {
				return fmt.Errorf("node %s (If): %s has %d outputs, the node %d", n.Name, branch, len(outs), len(n.Outputs))
			}
			for k, out := range n.Outputs {
				if out == "" {
					continue
				}
				id := appendString(nil, fNodeInput, outs[k])
				id = appendString(id, fNodeOutput, out)
				id = appendString(id, fNodeName, n.Name+"_out"+strconv.Itoa(k))
				id = appendString(id, fNodeOpType, "Identity")
				g = appendBytes(g, fGraphNode, id)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		return append(g, moved...), nil
	})
}
