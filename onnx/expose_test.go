package onnx_test

import (
	"slices"
	"testing"

	"github.com/hwtest/hwtest/onnx"
)

// ifModel: c = x > 0 (reduced), y = If(c, then: Relu(x)*2, else: Neg(x)).
func ifModel() []byte {
	g := onnx.NewGraph("if")
	x := g.Input("x", onnx.Float32, 4)
	c := g.Op("ReduceMax", []string{g.Op("Greater", []string{x, g.Scalar(0)})}, onnx.Int("keepdims", 0))
	then := g.Subgraph("then")
	t := then.Op("Mul", []string{then.Op("Relu", []string{x}), then.Scalar(2)})
	then.Output(t, onnx.Float32, 4)
	els := g.Subgraph("else")
	e := els.Op("Neg", []string{x})
	els.Output(e, onnx.Float32, 4)
	g.AddNode(onnx.Node{OpType: "If", Inputs: []string{c}, Outputs: []string{"y"},
		Attrs: []onnx.Attr{onnx.GraphAttr("then_branch", then), onnx.GraphAttr("else_branch", els)}})
	g.Output("y", onnx.Float32, 4)
	return g.Model().Marshal()
}

func names(ns []onnx.NodeInfo) []string {
	var out []string
	for _, n := range ns {
		out = append(out, n.OpType)
	}
	return out
}

func TestListNodes(t *testing.T) {
	l, err := onnx.List(mlp(1).Marshal())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := names(l.Nodes), []string{"MatMul", "Add", "Relu"}; !slices.Equal(got, want) {
		t.Fatalf("ops %v, want %v (file order)", got, want)
	}
	if l.Nodes[2].Outputs[0] != "y" || l.Nodes[2].Inputs[0] != l.Nodes[1].Outputs[0] {
		t.Fatalf("Relu's edges: %+v", l.Nodes[2])
	}
	if !slices.Equal(l.Inputs, []string{"x"}) || !slices.Equal(l.Outputs, []string{"y"}) || len(l.Initializers) != 2 {
		t.Fatalf("inputs %v outputs %v initializers %v", l.Inputs, l.Outputs, l.Initializers)
	}
}

func TestExposeAppendsOutputs(t *testing.T) {
	m := mlp(1).Marshal()
	l, _ := onnx.List(m)
	mid := l.Nodes[0].Outputs[0]
	out, err := onnx.Expose(m, []string{mid, "y", mid})
	if err != nil {
		t.Fatal(err)
	}
	l2, err := onnx.List(out)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"y", mid}; !slices.Equal(l2.Outputs, want) {
		t.Fatalf("outputs %v, want %v (y once, the intermediate once)", l2.Outputs, want)
	}
	if s, err := onnx.Inspect(out); err != nil || s.Ops["MatMul"] != 1 || len(s.Inputs) != 1 {
		t.Fatalf("exposed model no longer the same graph: %+v, %v", s, err)
	}
}

func TestInlineIfs(t *testing.T) {
	m := ifModel()
	l, _ := onnx.List(m)
	ifNode := l.Nodes[len(l.Nodes)-1]
	if ifNode.OpType != "If" || len(ifNode.Branches) != 2 {
		t.Fatalf("last node %+v, want an If with two branches", ifNode)
	}
	for cond, want := range map[bool][]string{true: {"Relu", "Mul", "Identity"}, false: {"Neg", "Identity"}} {
		out, err := onnx.InlineIfs(m, map[string]bool{"y": cond})
		if err != nil {
			t.Fatal(err)
		}
		l2, err := onnx.List(out)
		if err != nil {
			t.Fatal(err)
		}
		got := names(l2.Nodes[len(l.Nodes)-1:])
		if !slices.Equal(got, want) {
			t.Fatalf("cond %v: inlined ops %v, want %v", cond, got, want)
		}
		last := l2.Nodes[len(l2.Nodes)-1]
		if last.Outputs[0] != "y" || last.Name != ifNode.Name+"_out0" {
			t.Fatalf("cond %v: the Identity %+v does not give the branch's output the If's name", cond, last)
		}
		if cond && len(l2.Initializers) != len(l.Initializers)+1 {
			t.Fatalf("the then branch's constant 2 did not move to the top graph: %v", l2.Initializers)
		}
	}
	// An If not named in taken stays.
	out, err := onnx.InlineIfs(m, map[string]bool{"other": true})
	if err != nil {
		t.Fatal(err)
	}
	if l2, _ := onnx.List(out); names(l2.Nodes)[len(l2.Nodes)-1] != "If" {
		t.Fatal("an If not in taken was inlined")
	}
}
