// Package conformance finds the ONNX project's own backend test cases (Debian's
// libonnx-testdata: node/test_*/model.onnx with test_data_set_0/{input,output}_K.pb)
// that the generated conformance suites run on every target. It reads what a case
// is (its operator, opset, inputs and outputs); runtime/ runs it.
package conformance

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/hwtest/hwtest/layout"
	"github.com/hwtest/hwtest/onnx"
	"github.com/hwtest/hwtest/spec"
)

// Version is the libonnx-testdata release `make setup` installs (Debian bookworm).
const Version = "1.12.0"

// Tolerance is what ONNX's own backend tests allow: onnx v1.12.0's
// onnx/backend/test/loader/__init__.py gives every node case rtol 1e-3 and atol 1e-7
// (|got − want| ≤ atol + rtol·|want|, NaN equal to NaN), with no per-case overrides
// in this release. Integer, bool outputs are compared by the same rule, which makes
// them exact.
var Tolerance = spec.Tolerance{RTol: 1e-3, ATol: 1e-7}

// ToleranceText states Tolerance as reports print it.
const ToleranceText = "rtol 1e-3, atol 1e-7 (ONNX 1.12's backend tests)"

// Case is one node test case.
type Case struct {
	Name     string // folder name: "test_add_bcast"
	Op       string // the operator it tests: "Add"
	Domain   string // "" for ai.onnx
	Opset    int64  // the model's opset for Domain
	Expanded bool   // a *_expanded case: the operator's function body, inlined
	Dir      string // the case's folder
	Inputs   int    // input_K.pb files
	Outputs  int    // output_K.pb files
}

// Model is the case's model file.
func (c Case) Model() string { return filepath.Join(c.Dir, "model.onnx") }

// Input and Output are the data files of the case's only data set.
func (c Case) Input(k int) string {
	return filepath.Join(c.Dir, "test_data_set_0", fmt.Sprintf("input_%d.pb", k))
}
func (c Case) Output(k int) string {
	return filepath.Join(c.Dir, "test_data_set_0", fmt.Sprintf("output_%d.pb", k))
}

// QualifiedOp is "Op", or "domain:Op" outside ai.onnx.
func (c Case) QualifiedOp() string { return QualifiedOp(c.Domain, c.Op) }

// QualifiedOp names an operator as the scoreboard and onnx.Inspect's Ops do: "Op",
// or "domain:Op" outside ai.onnx.
func QualifiedOp(domain, op string) string {
	if domain == "" {
		return op
	}
	return domain + ":" + op
}

// DataDir is the folder of node cases make setup installs under the state folder
// of the repository at root (.hwtest/onnx-testdata/...), else a system install of
// libonnx-testdata; then the repository of the working directory. The error says
// how to get them.
func DataDir(root string) (string, error) {
	var tried []string
	here, _ := layout.Root() // a test's root in a temporary folder has no .hwtest
	for _, r := range []string{root, here} {
		if r == "" || slices.Contains(tried, stateDir(r)) {
			continue
		}
		if d := stateDir(r); isDir(d) {
			return d, nil
		}
		tried = append(tried, stateDir(r))
	}
	const system = "/usr/share/libonnx-testdata/data/node"
	if isDir(system) {
		return system, nil
	}
	tried = append(tried, system)
	return "", fmt.Errorf("ONNX's test cases (libonnx-testdata %s) are not installed: none of %s exists; run `make setup` (it installs them into .hwtest/onnx-testdata)",
		Version, strings.Join(tried, ", "))
}

func stateDir(root string) string {
	return layout.State(root, "onnx-testdata", "usr", "share", "libonnx-testdata", "data", "node")
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// Load reads every case under dir (a node/ folder), sorted by name.
func Load(dir string) ([]Case, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var cases []Case
	var errs []error
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), "test_") {
			continue
		}
		c, err := load(filepath.Join(dir, e.Name()))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		cases = append(cases, c)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	// An expanded case tests the operator its plain case is named for, whatever the
	// function body inlined (Softmax's body is Exp, ReduceSum, Div...).
	plain := map[string]Case{}
	for _, c := range cases {
		if !c.Expanded {
			plain[c.Name] = c
		}
	}
	for i, c := range cases {
		if p, ok := plain[strings.TrimSuffix(c.Name, "_expanded")]; ok && c.Expanded {
			cases[i].Op, cases[i].Domain, cases[i].Opset = p.Op, p.Domain, p.Opset
		}
	}
	sort.Slice(cases, func(i, j int) bool { return cases[i].Name < cases[j].Name })
	return cases, nil
}

func load(dir string) (Case, error) {
	c := Case{Name: filepath.Base(dir), Dir: dir, Expanded: strings.HasSuffix(filepath.Base(dir), "_expanded")}
	s, err := onnx.InspectFile(c.Model())
	if err != nil {
		return c, fmt.Errorf("case %s: %w", c.Name, err)
	}
	// The operator under test: the case's one node that is not a Constant (one case
	// builds its Resize's scales with two Constants). Summary counts subgraph nodes
	// too, so a control-flow case (a Loop whose body adds) is the control-flow op.
	var ops []string
	for op := range s.Ops {
		if op != "Constant" {
			ops = append(ops, op)
		}
	}
	if len(ops) == 0 {
		ops = []string{"Constant"}
	}
	slices.Sort(ops)
	op := ops[0]
	for _, cf := range []string{"If", "Loop", "Scan", "SequenceMap"} { // outermost last
		if s.Ops[cf] > 0 {
			op = cf
		}
	}
	if i := strings.LastIndex(op, ":"); i >= 0 {
		c.Domain, c.Op = op[:i], op[i+1:]
	} else {
		c.Op = op
	}
	for _, o := range s.Opsets {
		if o.Domain == c.Domain || (c.Domain == "" && o.Domain == "ai.onnx") {
			c.Opset = o.Version
		}
	}
	for ; isFile(c.Input(c.Inputs)); c.Inputs++ {
	}
	for ; isFile(c.Output(c.Outputs)); c.Outputs++ {
	}
	return c, nil
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// ByOp groups cases by QualifiedOp, each group in name order.
func ByOp(cases []Case) map[string][]Case {
	m := map[string][]Case{}
	for _, c := range cases {
		m[c.QualifiedOp()] = append(m[c.QualifiedOp()], c)
	}
	return m
}
