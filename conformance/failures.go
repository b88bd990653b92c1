package conformance

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hwtest/hwtest/result"
)

// What reports (`hwtest report --ops`, the HTML report) show of a Board besides its
// counts: a compact text per cell, the mismatches one by one with their worst
// element, and every other failure grouped by its exact message, so thirty cases
// refused with one error read as one line.

// Marks are the cell text's symbols for what did not pass, in CaseStatuses' order.
var Marks = []struct{ Status, Mark, Meaning string }{
	{result.CaseMismatch, "≠", "mismatch: ran, outputs outside ONNX's tolerance"},
	{result.CaseNotSupported, "✗", "not supported: the runtime refused the case"},
	{result.CaseError, "!", "error: hwtest's own failure or a crash"},
	{result.CaseSkipped, "~", "skipped: a case hwtest cannot feed"},
}

// Text is a cell in a few characters: "3/3" (passed of the cases tried), then a
// mark and a count for each other status: "12/16 ≠2 ✗2". Unavailable cases are not
// tried; a cell of only those is "–", a cell with no case "".
func (c Counts) Text() string {
	tried := c.Total() - c.Unavailable
	switch {
	case c.Total() == 0:
		return ""
	case tried == 0:
		return "–"
	}
	s := fmt.Sprintf("%d/%d", c.Pass, tried)
	for _, m := range Marks {
		if n := c.Of(m.Status); n > 0 {
			s += fmt.Sprintf(" %s%d", m.Mark, n)
		}
	}
	return s
}

// Of is the count of one status.
func (c Counts) Of(status string) int {
	switch status {
	case result.CasePass:
		return c.Pass
	case result.CaseMismatch:
		return c.Mismatch
	case result.CaseNotSupported:
		return c.NotSupported
	case result.CaseError:
		return c.Error
	case result.CaseSkipped:
		return c.Skipped
	}
	return c.Unavailable
}

// Absent is a target every case of which was unavailable (the target was not on
// the machine of its latest run), with the distinct reasons given: reports collapse
// it to one line instead of a column of dashes.
type Absent struct {
	Target  string   `json:"target"`
	Cases   int      `json:"cases"`
	Reasons []string `json:"reasons"`
}

// Absent lists the targets that ran no case at all, in the board's order.
func (b Board) Absent() []Absent {
	var out []Absent
	for _, t := range b.Targets {
		n := b.ByTarget[t]
		if n.Total() == 0 || n.Unavailable < n.Total() {
			continue
		}
		a := Absent{Target: t, Cases: n.Total()}
		for _, op := range b.Ops {
			for _, c := range b.Cases[op][t] {
				if !slices.Contains(a.Reasons, c.Error) {
					a.Reasons = append(a.Reasons, c.Error)
				}
			}
		}
		out = append(out, a)
	}
	return out
}

// Present is the board's targets that ran or tried at least one case.
func (b Board) Present() []string {
	var out []string
	for _, t := range b.Targets {
		if n := b.ByTarget[t]; n.Total() > n.Unavailable {
			out = append(out, t)
		}
	}
	return out
}

// Mismatches are the mismatching cases, by target (the board's order), then case.
func (b Board) Mismatches() []result.OpCaseReport {
	var out []result.OpCaseReport
	for _, t := range b.Targets {
		var of []result.OpCaseReport
		for _, op := range b.Ops {
			for _, c := range b.Cases[op][t] {
				if c.Status == result.CaseMismatch {
					of = append(of, c)
				}
			}
		}
		slices.SortFunc(of, func(x, y result.OpCaseReport) int { return strings.Compare(x.Case, y.Case) })
		out = append(out, of...)
	}
	return out
}

// FailureGroup is every case, on any present target, with one status and one exact
// message.
type FailureGroup struct {
	Status  string   `json:"status"`
	Message string   `json:"message"`
	Count   int      `json:"count"`   // cases × targets
	Targets []string `json:"targets"` // in the board's order
	Ops     []string `json:"ops"`     // sorted
	Cases   []string `json:"cases"`   // case names, sorted
}

// Failures groups the not-supported, error and skipped cases (and unavailable ones
// of a target that ran others) by status and exact message: by status in
// CaseStatuses' order, then the most cases first.
func (b Board) Failures() []FailureGroup {
	present := b.Present()
	index := map[string]int{}
	var out []FailureGroup
	for _, op := range b.Ops {
		for _, t := range present {
			for _, c := range b.Cases[op][t] {
				if c.Status == result.CasePass || c.Status == result.CaseMismatch {
					continue
				}
				key := c.Status + "\x00" + c.Error
				i, ok := index[key]
				if !ok {
					i = len(out)
					index[key] = i
					out = append(out, FailureGroup{Status: c.Status, Message: c.Error})
				}
				g := &out[i]
				g.Count++
				if !slices.Contains(g.Targets, t) {
					g.Targets = append(g.Targets, t)
				}
				if !slices.Contains(g.Ops, op) {
					g.Ops = append(g.Ops, op)
				}
				if !slices.Contains(g.Cases, c.Case) {
					g.Cases = append(g.Cases, c.Case)
				}
			}
		}
	}
	for i := range out {
		g := &out[i]
		slices.Sort(g.Ops)
		slices.Sort(g.Cases)
		slices.SortFunc(g.Targets, func(x, y string) int { return slices.Index(present, x) - slices.Index(present, y) })
	}
	slices.SortStableFunc(out, func(x, y FailureGroup) int {
		if d := slices.Index(result.CaseStatuses, x.Status) - slices.Index(result.CaseStatuses, y.Status); d != 0 {
			return d
		}
		if d := y.Count - x.Count; d != 0 {
			return d
		}
		return strings.Compare(x.Message, y.Message)
	})
	return out
}

// WorstText says where a mismatch is worst: "output y[17]: got 1.2301, want 1.2345,
// |error| 0.0044 > allowed 0.0012".
func WorstText(d *result.Deviation) string {
	if d == nil {
		return "no element recorded"
	}
	return fmt.Sprintf("output %s[%d]: got %.6g, want %.6g, |error| %.3g > allowed %.3g", d.Output, d.Index, d.Got, d.Want, d.AbsErr, d.Allowed)
}
