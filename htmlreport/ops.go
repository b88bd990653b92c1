package htmlreport

import (
	"fmt"
	"strings"

	"github.com/hwtest/hwtest/conformance"
	"github.com/hwtest/hwtest/history"
	"github.com/hwtest/hwtest/result"
)

// Scoreboard is the operator × target conformance scoreboard the page shows:
// ONNX's own node test cases on each target, from each target's latest conformance
// run that had it.
type Scoreboard struct {
	Board conformance.Board
	Runs  map[string]history.ScoreRun
}

// supportColors colour a scoreboard cell by what its cases say of the operator on
// the target (conformance.Board.Support).
var supportColors = []struct {
	Support conformance.Support
	Color   string
	Label   string
}{
	{conformance.Supported, "#2e9d4f", "supported: every case tried passed"},
	{conformance.Partly, "#f0c14b", "partly: some cases passed"},
	{conformance.Unsupported, "#d64545", "unsupported: no case passed"},
	{conformance.Unmeasured, "#c4c4c4", "unmeasured: no case ran (unavailable, skipped or hwtest's error)"},
}

// maxCaseNames bounds the case names a failure group lists.
const maxCaseNames = 8

type opsSection struct {
	Tolerance  string
	Targets    []opsTarget
	Absent     []opsAbsent
	Legend     []legendItem
	Marks      string
	Rows       []opsRow
	Mismatches []opsMismatch
	Failures   []opsFailure
}

type opsTarget struct {
	Target, Run, Finished, Host string
	Counts                      conformance.Counts
	Passed                      string // of the cases tried
}

type opsAbsent struct {
	conformance.Absent
	Run, Host string
}

type opsRow struct {
	Op    string
	Cells []opsCell
}

type opsCell struct{ Class, Text, Title string }

type opsMismatch struct {
	Target, Case, Op, Worst string
}

type opsFailure struct {
	conformance.FailureGroup
	Shown, ShownOps string // the first case and operator names
}

// firstOf lists the first n names and says how many more there are.
func firstOf(names []string, n int) string {
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s, … (%d more)", strings.Join(names[:n], ", "), len(names)-n)
}

func opsOf(sb *Scoreboard) *opsSection {
	if sb == nil {
		return nil
	}
	b := sb.Board
	s := &opsSection{Tolerance: conformance.ToleranceText}
	for _, a := range b.Absent() {
		s.Absent = append(s.Absent, opsAbsent{Absent: a, Run: sb.Runs[a.Target].RunID, Host: sb.Runs[a.Target].Host})
	}
	for _, c := range supportColors {
		s.Legend = append(s.Legend, legendItem{"o-" + string(c.Support), c.Label})
	}
	var marks []string
	for _, m := range conformance.Marks {
		marks = append(marks, m.Mark+" "+m.Meaning)
	}
	s.Marks = strings.Join(marks, "; ")
	present := b.Present()
	for _, t := range present {
		run, n := sb.Runs[t], b.ByTarget[t]
		ot := opsTarget{Target: t, Run: run.RunID, Host: run.Host, Counts: n, Passed: pct(n.Pass, n.Total()-n.Unavailable)}
		if !run.Finished.IsZero() {
			ot.Finished = run.Finished.UTC().Format("2006-01-02 15:04 UTC")
		}
		s.Targets = append(s.Targets, ot)
	}
	for _, op := range b.Ops {
		row := opsRow{Op: op}
		for _, t := range present {
			n, ok := b.Cells[op][t]
			if !ok {
				row.Cells = append(row.Cells, opsCell{Class: "none"})
				continue
			}
			support := b.Support(op, t)
			var parts []string
			for _, st := range result.CaseStatuses {
				if k := n.Of(st); k > 0 {
					parts = append(parts, fmt.Sprintf("%d %s", k, st))
				}
			}
			row.Cells = append(row.Cells, opsCell{Class: "o-" + string(support), Text: n.Text(),
				Title: fmt.Sprintf("%s on %s: %s (%s)", op, t, strings.Join(parts, ", "), support)})
		}
		s.Rows = append(s.Rows, row)
	}
	for _, c := range b.Mismatches() {
		s.Mismatches = append(s.Mismatches, opsMismatch{Target: c.Target, Case: c.Case, Op: c.Op, Worst: conformance.WorstText(c.Worst)})
	}
	for _, g := range b.Failures() {
		s.Failures = append(s.Failures, opsFailure{FailureGroup: g, Shown: firstOf(g.Cases, maxCaseNames), ShownOps: firstOf(g.Ops, maxCaseNames)})
	}
	return s
}
