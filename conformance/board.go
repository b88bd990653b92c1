package conformance

import (
	"slices"

	"github.com/hwtest/hwtest/result"
)

// Counts sums cases by status.
type Counts struct {
	Pass, Mismatch, NotSupported, Error, Skipped, Unavailable int
}

func (c *Counts) add(status string) {
	switch status {
	case result.CasePass:
		c.Pass++
	case result.CaseMismatch:
		c.Mismatch++
	case result.CaseNotSupported:
		c.NotSupported++
	case result.CaseError:
		c.Error++
	case result.CaseSkipped:
		c.Skipped++
	default:
		c.Unavailable++
	}
}

// Total is every case counted.
func (c Counts) Total() int {
	return c.Pass + c.Mismatch + c.NotSupported + c.Error + c.Skipped + c.Unavailable
}

// Ran is the cases the target gave an answer to: pass, mismatch or not-supported
// (error is hwtest's failure, skipped and unavailable never ran).
func (c Counts) Ran() int { return c.Pass + c.Mismatch + c.NotSupported }

// Board is the operator × target scoreboard, as the ONNX backend scoreboard keeps it
// per backend, with finer classes: pass, mismatch, not supported.
type Board struct {
	Targets  []string                     // in the order given, then any other seen
	Ops      []string                     // qualified operator names, sorted
	Cells    map[string]map[string]Counts // op → target → counts
	ByTarget map[string]Counts
	Cases    map[string]map[string][]result.OpCaseReport // op → target → its cases
}

// Summarise sums cases per operator and target. order is the targets' order (the
// catalog's); targets not in it come after, sorted.
func Summarise(cases []result.OpCaseReport, order []string) Board {
	b := Board{Cells: map[string]map[string]Counts{}, ByTarget: map[string]Counts{}, Cases: map[string]map[string][]result.OpCaseReport{}}
	seen := map[string]bool{}
	var extra []string
	for _, c := range cases {
		op := qualified(c)
		if b.Cells[op] == nil {
			b.Cells[op] = map[string]Counts{}
			b.Cases[op] = map[string][]result.OpCaseReport{}
			b.Ops = append(b.Ops, op)
		}
		n := b.Cells[op][c.Target]
		n.add(c.Status)
		b.Cells[op][c.Target] = n
		t := b.ByTarget[c.Target]
		t.add(c.Status)
		b.ByTarget[c.Target] = t
		b.Cases[op][c.Target] = append(b.Cases[op][c.Target], c)
		if !seen[c.Target] {
			seen[c.Target] = true
			if !slices.Contains(order, c.Target) {
				extra = append(extra, c.Target)
			}
		}
	}
	for _, t := range order {
		if seen[t] {
			b.Targets = append(b.Targets, t)
		}
	}
	slices.Sort(extra)
	b.Targets = append(b.Targets, extra...)
	slices.Sort(b.Ops)
	return b
}

func qualified(c result.OpCaseReport) string { return QualifiedOp(c.Domain, c.Op) }

// Support is what the measured cases say about an operator on a target.
type Support string

const (
	Supported   Support = "supported"   // every case that ran passed
	Partly      Support = "partly"      // some cases passed, some did not
	Unsupported Support = "unsupported" // cases ran and none passed
	Unmeasured  Support = "unmeasured"  // no case of the operator ran on the target
)

// Support reads the board's cell for op ("Op" or "domain:Op") on target.
func (b Board) Support(op, target string) Support {
	n, ok := b.Cells[op][target]
	switch {
	case !ok || n.Ran() == 0:
		return Unmeasured
	case n.Pass == n.Ran():
		return Supported
	case n.Pass == 0:
		return Unsupported
	}
	return Partly
}
