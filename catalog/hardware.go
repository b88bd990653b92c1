package catalog

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

// ReferenceTarget is the target every other target's outputs are compared against.
const ReferenceTarget = "cpu"

// targetEntry keeps what the fallback checks need once every target is known.
type targetEntry struct {
	ctx      string
	fallback []*yaml.Node // the nodes of Target.Fallback, in order
}

// targets decodes the list under hardware.yaml's "targets" key.
func (d *decoder) targets(list *yaml.Node) []Target {
	if list == nil {
		return nil
	}
	items, ok := d.sequence("targets", list)
	if !ok {
		return nil
	}
	if len(items) == 0 {
		d.errorf(list, "targets: the list is empty; it needs at least the %q reference target", ReferenceTarget)
		return nil
	}
	firstID := map[string]*yaml.Node{}
	targets := make([]Target, 0, len(items))
	entries := make([]targetEntry, 0, len(items))
	for i, item := range items {
		t, e, idNode := d.target(i, item)
		if idNode != nil {
			if first, dup := firstID[t.ID]; dup {
				d.errorf(idNode, "duplicate target id %q (first defined at %s:%d:%d)", t.ID, d.file, first.Line, first.Column)
			} else {
				firstID[t.ID] = idNode
			}
		}
		targets = append(targets, t)
		entries = append(entries, e)
	}
	if _, ok := firstID[ReferenceTarget]; !ok && !d.tooBig {
		d.errorf(list, "targets: no target has id %q; it is the reference every other target is compared against", ReferenceTarget)
	}
	d.fallbacks(targets, entries, firstID)
	return targets
}

func (d *decoder) target(i int, n *yaml.Node) (t Target, e targetEntry, idNode *yaml.Node) {
	ctx := fmt.Sprintf("target #%d", i+1)
	e.ctx = ctx
	mn, ok := d.mapping(ctx, n)
	if !ok {
		return t, e, nil
	}
	t.Line, t.Column = mn.Line, mn.Column
	fs := d.pairs(ctx, mn)
	ctx = entryContext("target", i, fs)
	e.ctx = ctx
	f := d.checkFields(ctx, fs, targetFields)
	d.required(ctx, mn, f, "id", "name", "runner", "provider", "probe", "precision", "tolerance")

	if v, ok := f["id"]; ok {
		if id, ok := d.str(ctx+": id", v.value); ok {
			t.ID = id
			if p := idProblem("id", id); p != "" {
				d.errorf(v.value, "%s: %s", ctx, p)
			} else {
				idNode = v.value
			}
		}
	}
	if v, ok := f["name"]; ok {
		t.Name, _ = d.nonEmpty(ctx+": name", v.value)
	}
	if v, ok := f["runner"]; ok {
		t.Runner, _ = d.oneOf(ctx, "runner", v.value, Runners)
	}
	if v, ok := f["provider"]; ok {
		t.Provider, _ = d.nonEmpty(ctx+": provider", v.value)
	}
	if v, ok := f["bundle"]; ok {
		t.Bundle, _ = d.nonEmpty(ctx+": bundle", v.value)
		if t.Runner != "" && t.Runner != "browser" {
			d.errorf(v.key, "%s: bundle is only for browser targets, and this one's runner is %s", ctx, t.Runner)
		}
	}
	if v, ok := f["options"]; ok {
		_, t.Options, _ = d.stringMap(ctx+": options", v.value)
	}
	if v, ok := f["probe"]; ok {
		t.Probe, _ = d.nonEmpty(ctx+": probe", v.value)
	}
	if v, ok := f["precision"]; ok {
		t.Precision, _ = d.oneOf(ctx, "precision", v.value, Precisions)
	}
	if v, ok := f["tolerance"]; ok {
		t.Tolerance, _ = d.tolerance(ctx, v.value)
	}
	if v, ok := f["fallback"]; ok {
		t.Fallback, e.fallback, _ = d.stringList(ctx+": fallback", v.value)
	}
	if v, ok := f["expect"]; ok {
		ectx := ctx + ": expect"
		fields, expect, _ := d.stringMap(ectx, v.value)
		for _, ef := range fields {
			family := ef.key.Value
			switch {
			case !contains(Families, family):
				d.errorf(ef.key, "%s: unknown family %q%s", ectx, family, choices(family, Families))
				delete(expect, family)
			case strings.TrimSpace(expect[family]) == "":
				d.errorf(ef.value, "%s: %s: give the reason it is expected to fail", ectx, family)
				delete(expect, family)
			}
		}
		t.Expect = expect
	}
	return t, e, idNode
}

// fallbacks checks every fallback names another target, once, and that no chain of
// fallbacks comes back to where it started.
func (d *decoder) fallbacks(targets []Target, entries []targetEntry, index map[string]*yaml.Node) {
	ids := make([]string, 0, len(index))
	byID := map[string]int{}
	for i, t := range targets {
		if _, ok := index[t.ID]; !ok {
			continue
		}
		if _, ok := byID[t.ID]; !ok {
			byID[t.ID] = i
			ids = append(ids, t.ID)
		}
	}
	// edges[i] are the valid fallbacks of target i, with the node naming each.
	type edge struct {
		to   int
		node *yaml.Node
	}
	edges := make([][]edge, len(targets))
	for i, t := range targets {
		seen := map[string]bool{}
		for j, fb := range t.Fallback {
			node := entries[i].fallback[j]
			switch _, known := index[fb]; {
			case fb == t.ID:
				d.errorf(node, "%s: fallback %q is the target itself", entries[i].ctx, fb)
			case !known:
				d.errorf(node, "%s: fallback %q is not a target in %s%s", entries[i].ctx, fb, d.file, didYouMean(fb, ids))
			case seen[fb]:
				d.errorf(node, "%s: fallback %q is listed twice", entries[i].ctx, fb)
			default:
				edges[i] = append(edges[i], edge{byID[fb], node})
			}
			seen[fb] = true
		}
	}

	// Depth-first in file order; a fallback to a target still on the path closes a cycle.
	const (
		unseen = iota
		onPath
		done
	)
	state := make([]int, len(targets))
	var path []int
	var walk func(i int)
	walk = func(i int) {
		state[i] = onPath
		path = append(path, i)
		for _, e := range edges[i] {
			switch state[e.to] {
			case unseen:
				walk(e.to)
			case onPath:
				start := len(path) - 1
				for path[start] != e.to {
					start--
				}
				names := make([]string, 0, len(path)-start+1)
				for _, k := range path[start:] {
					names = append(names, targets[k].ID)
				}
				names = append(names, targets[e.to].ID)
				d.errorf(e.node, "%s: fallback %q makes a cycle: %s", entries[i].ctx, targets[e.to].ID, strings.Join(names, " -> "))
			}
		}
		path = path[:len(path)-1]
		state[i] = done
	}
	for i := range targets {
		if state[i] == unseen {
			walk(i)
		}
	}
}
