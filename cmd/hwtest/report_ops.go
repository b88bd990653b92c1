package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/hwtest/hwtest/conformance"
	"github.com/hwtest/hwtest/history"
	"github.com/hwtest/hwtest/result"
)

// `hwtest report --ops`: the operator × target scoreboard of ONNX's own conformance
// cases, as the history keeps it (each case's latest answer on each target;
// `hwtest conformance` stores them).

// scoreboard is the board the flags ask for, with the runs its columns come from.
type scoreboard struct {
	Board conformance.Board
	Runs  map[string]history.ScoreRun
}

// errNoConformance says how to fill an empty scoreboard.
var errNoConformance = errors.New("no conformance run in the history: run `hwtest conformance` (it runs ONNX's node test cases on every target and stores them)")

// readScoreboard reads the scoreboard of targets (all when none) from db, in the
// catalog's target order. A target asked for that no conformance run had is an
// error naming the ones there are.
func readScoreboard(ctx context.Context, g *Globals, db *history.DB, targets []string) (scoreboard, error) {
	sb, err := db.Scoreboard(ctx, targets)
	if err != nil {
		return scoreboard{}, err
	}
	if len(sb.Cases) == 0 && len(targets) > 0 {
		all, err := db.Scoreboard(ctx, nil)
		if err != nil {
			return scoreboard{}, err
		}
		if len(all.Cases) > 0 {
			return scoreboard{}, fmt.Errorf("no conformance case on %s; the history has %s", strings.Join(targets, ", "), strings.Join(sortedKeys(all.Runs), ", "))
		}
	}
	if len(sb.Cases) == 0 {
		return scoreboard{}, errNoConformance
	}
	var missing []string
	for _, t := range targets {
		if _, ok := sb.Runs[t]; !ok {
			missing = append(missing, t)
		}
	}
	if len(missing) > 0 {
		return scoreboard{}, fmt.Errorf("no conformance case on %s", strings.Join(missing, ", "))
	}
	_, order := g.catalogOrder()
	return scoreboard{Board: conformance.Summarise(sb.Cases, order), Runs: sb.Runs}, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// reportOps prints the scoreboard (--ops), as text or JSON.
func reportOps(ctx context.Context, opts *ReportOptions) error {
	db, err := opts.openHistory(ctx, history.ReadOnly)
	if errors.Is(err, history.ErrNoHistory) {
		return fmt.Errorf("%w; %w", err, errNoConformance)
	}
	if err != nil {
		return err
	}
	defer db.Close()
	sb, err := readScoreboard(ctx, opts.Globals, db, opts.Targets)
	if err != nil {
		return err
	}
	r := opsReportOf(sb)
	if opts.JSON {
		return writeJSON(opts.Stdout, r)
	}
	return r.writeText(opts.Stdout)
}

// opsReport is the scoreboard as `report --ops --json` prints it; its field names
// are the interface.
type opsReport struct {
	Tolerance string `json:"tolerance"`
	// Targets are those that tried at least one case, in the catalog's order.
	Targets []opsTarget `json:"targets"`
	// Absent are targets whose every case was unavailable: not on the machine.
	Absent     []opsAbsent                `json:"absent"`
	Ops        []opsRow                   `json:"ops"`
	Mismatches []result.OpCaseReport      `json:"mismatches"`
	Failures   []conformance.FailureGroup `json:"failures"` // not supported, error, skipped: grouped by exact message
	Cases      []result.OpCaseReport      `json:"cases"`    // every case of every target
}

type opsCounts struct {
	Pass         int `json:"pass"`
	Mismatch     int `json:"mismatch"`
	NotSupported int `json:"not_supported"`
	Error        int `json:"error"`
	Skipped      int `json:"skipped"`
	Unavailable  int `json:"unavailable"`
	Total        int `json:"total"`
}

func countsOf(c conformance.Counts) opsCounts {
	return opsCounts{c.Pass, c.Mismatch, c.NotSupported, c.Error, c.Skipped, c.Unavailable, c.Total()}
}

type opsTarget struct {
	Target   string    `json:"target"`
	RunID    string    `json:"run_id"`
	Finished time.Time `json:"finished"`
	Host     string    `json:"host,omitempty"`
	Counts   opsCounts `json:"counts"`
}

type opsAbsent struct {
	conformance.Absent
	RunID    string    `json:"run_id"`
	Finished time.Time `json:"finished"`
	Host     string    `json:"host,omitempty"`
}

type opsRow struct {
	Op    string             `json:"op"` // "Op", or "domain:Op" outside ai.onnx
	Cells map[string]opsCell `json:"cells"`
}

type opsCell struct {
	opsCounts
	Support conformance.Support `json:"support"`
	Text    string              `json:"text"` // as the text table shows it
}

func opsReportOf(sb scoreboard) opsReport {
	b := sb.Board
	r := opsReport{Tolerance: conformance.ToleranceText, Mismatches: b.Mismatches(), Failures: b.Failures()}
	for _, a := range b.Absent() {
		run := sb.Runs[a.Target]
		r.Absent = append(r.Absent, opsAbsent{Absent: a, RunID: run.RunID, Finished: run.Finished.UTC(), Host: run.Host})
	}
	present := b.Present()
	for _, t := range present {
		run := sb.Runs[t]
		r.Targets = append(r.Targets, opsTarget{Target: t, RunID: run.RunID, Finished: run.Finished.UTC(), Host: run.Host, Counts: countsOf(b.ByTarget[t])})
	}
	for _, op := range b.Ops {
		row := opsRow{Op: op, Cells: map[string]opsCell{}}
		for _, t := range present {
			if n, ok := b.Cells[op][t]; ok {
				row.Cells[t] = opsCell{opsCounts: countsOf(n), Support: b.Support(op, t), Text: n.Text()}
			}
		}
		r.Ops = append(r.Ops, row)
	}
	for _, t := range b.Targets {
		for _, op := range b.Ops {
			r.Cases = append(r.Cases, b.Cases[op][t]...)
		}
	}
	return r
}

// maxCaseNames bounds the case names a failure group's line lists.
const maxCaseNames = 6

func (r opsReport) writeText(w io.Writer) error {
	bw := &errWriter{w: w}
	bw.printf("# Operator conformance\n\n")
	bw.printf("ONNX's own node test cases (libonnx-testdata %s), each compared with the outputs the ONNX project wrote,\n", conformance.Version)
	bw.printf("not with hwtest's CPU reference. Pass: every output within %s.\n", r.Tolerance)
	bw.printf("Each case shows its latest answer on the target (pass, mismatch or not supported) across conformance runs; RUN is the latest run a target's column draws on.\n\n")

	bw.printf("## Targets\n\n")
	tw := tabwriter.NewWriter(bw, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TARGET\tCASES\tPASS\tMISMATCH\tNOT SUPPORTED\tERROR\tSKIPPED\tUNAVAILABLE\tRUN\tFINISHED\tHOST")
	for _, t := range r.Targets {
		c := t.Counts
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t%s\n", t.Target, c.Total, c.Pass, c.Mismatch, c.NotSupported, c.Error, c.Skipped, c.Unavailable,
			t.RunID, t.Finished.Format("2006-01-02 15:04 UTC"), dash(t.Host))
	}
	tw.Flush()
	for _, a := range r.Absent {
		bw.printf("%s: not on the machine of its latest run (%s on %s; %s unavailable): %s\n", a.Target, a.RunID, dash(a.Host),
			result.Plural(a.Cases, "case"), oneLine(strings.Join(a.Reasons, "; ")))
	}

	bw.printf("\n## Per operator\n\n")
	var legend []string
	for _, m := range conformance.Marks {
		legend = append(legend, m.Mark+" "+m.Meaning)
	}
	bw.printf("P/N: cases passed of those tried; %s; – every case unavailable; blank: no case.\n\n", strings.Join(legend, "; "))
	tw = tabwriter.NewWriter(bw, 0, 0, 2, ' ', 0)
	head := []string{"OPERATOR"}
	for _, t := range r.Targets {
		head = append(head, t.Target)
	}
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, row := range r.Ops {
		line := []string{row.Op}
		for _, t := range r.Targets {
			line = append(line, row.Cells[t.Target].Text)
		}
		fmt.Fprintln(tw, strings.Join(line, "\t"))
	}
	tw.Flush()

	bw.printf("\n## Mismatches (%d)\n\n", len(r.Mismatches))
	if len(r.Mismatches) == 0 {
		bw.printf("None.\n")
	}
	for _, c := range r.Mismatches {
		bw.printf("- %s %s (%s): %s\n", c.Target, c.Case, qualifiedOp(c), conformance.WorstText(c.Worst))
	}
	n := 0
	for _, g := range r.Failures {
		n += g.Count
	}
	bw.printf("\n## Not supported, errors, skipped (%s in %s, grouped by exact message)\n\n", result.Plural(n, "case"), result.Plural(len(r.Failures), "group"))
	if len(r.Failures) == 0 {
		bw.printf("None.\n")
	}
	for _, g := range r.Failures {
		bw.printf("- %s ×%d on %s (%s): %s\n    cases: %s\n", g.Status, g.Count, strings.Join(g.Targets, ", "), firstOf(g.Ops, maxCaseNames),
			oneLine(g.Message), firstOf(g.Cases, maxCaseNames))
	}
	return bw.err
}

// firstOf lists the first n names and says how many more there are.
func firstOf(names []string, n int) string {
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s, … (%d more)", strings.Join(names[:n], ", "), len(names)-n)
}

func qualifiedOp(c result.OpCaseReport) string { return conformance.QualifiedOp(c.Domain, c.Op) }

// oneLine keeps an error's words on one line (runtime errors carry newlines).
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// errWriter keeps the first write error, so a long report checks it once.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

func (e *errWriter) printf(format string, args ...any) { fmt.Fprintf(e, format, args...) }
