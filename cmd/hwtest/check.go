package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/hwtest/hwtest/catalog"
	"github.com/hwtest/hwtest/conformance"
	"github.com/hwtest/hwtest/diagnose"
	"github.com/hwtest/hwtest/history"
	"github.com/hwtest/hwtest/matrix"
	"github.com/hwtest/hwtest/onnx"
	"github.com/hwtest/hwtest/result"
	"github.com/hwtest/hwtest/runtime"
	"github.com/hwtest/hwtest/spec"
	"github.com/hwtest/hwtest/zoo"
)

// CheckOptions is what `hwtest check` acts on.
type CheckOptions struct {
	*Globals
	Model     string // catalog id, zoo:NAME or .onnx path
	All       bool   // every catalog model the current matrix has
	Providers []string
	JSON      bool
}

func newCheckCmd(g *Globals, runF func(*CheckOptions) error) *cobra.Command {
	opts := &CheckOptions{Globals: g}
	cmd := &cobra.Command{
		Use:   "check MODEL | --all",
		Short: "Predict which targets can run every operator of a model, before running it: from the EPs' documented tables and from ONNX's conformance cases measured on each target",
		Long: "MODEL is a catalog id, a zoo:NAME or a path to an .onnx file. The model's\n" +
			"operators are read from the file and compared, per hardware.yaml target, with\n" +
			"the execution provider's documented operator table, and with the operator's\n" +
			"measured support on that target: the conformance scoreboard's cases (`hwtest\n" +
			"conformance`; see `hwtest report --ops`). Both predictions are then set against\n" +
			"the model's cells in the current matrix (the history's, else\n" +
			"reports/latest/matrix.json), cell by cell, with how often each matched and the\n" +
			"disagreements; the output states what \"matched\" means. --all does it for\n" +
			"every catalog model the current matrix has cells of: how often each prediction\n" +
			"matched over all of them.",
		Args: cobra.MaximumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			switch {
			case opts.All && len(args) > 0:
				return errors.New("MODEL or --all: choose one")
			case !opts.All && len(args) == 0:
				return errors.New("check needs a MODEL (a catalog id, zoo:NAME or .onnx file), or --all")
			case opts.All && len(opts.Providers) > 0:
				return errors.New("--all sets predictions against the matrix's targets: drop --provider")
			}
			if len(args) > 0 {
				opts.Model = args[0]
			}
			if runF != nil {
				return runF(opts)
			}
			if opts.All {
				return checkAll(opts)
			}
			return checkRun(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.All, "all", false, "every catalog model the current matrix has: predicted vs observed over all their cells")
	cmd.Flags().StringSliceVar(&opts.Providers, "provider", nil, "predict for these EP names instead of hardware.yaml's targets (repeatable)")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	return cmd
}

// checkResult is one target's predictions, next to what the last run saw there.
type checkResult struct {
	Target string `json:"target"`
	diagnose.Prediction
	// Measured is the model's support from the conformance scoreboard; nil with
	// --provider or without a scoreboard.
	Measured *diagnose.Measured `json:"measured,omitempty"`
	Observed string             `json:"observed,omitempty"` // the cell's status in the current matrix; "" when not run
	// ObservedReason is why the observed cell is not a pass, in its own words (a
	// cpu-only cell: "WebNN took none of the 33 nodes: all ran on CPU"); ObservedRun
	// is the run it comes from.
	ObservedReason string `json:"observed_reason,omitempty"`
	ObservedRun    string `json:"observed_run,omitempty"`
	// DocumentedOutcome is the documented table's prediction as an outcome
	// (diagnose.MatchRule); "" when it has none.
	DocumentedOutcome string `json:"documented_outcome,omitempty"`
	// DocumentedMatch and MeasuredMatch say whether each prediction matched the
	// cell; absent when the cell observed nothing (not run, or unavailable).
	DocumentedMatch *bool `json:"documented_match,omitempty"`
	MeasuredMatch   *bool `json:"measured_match,omitempty"`
}

// checkReport is all `hwtest check` says of a model; --json prints it.
type checkReport struct {
	Model     string        `json:"model"`
	Operators int           `json:"operators"` // operator types
	Nodes     int           `json:"nodes"`
	Targets   []checkResult `json:"targets"`
	// Scoreboard says where the measured column comes from, or why it is empty.
	Scoreboard string         `json:"scoreboard"`
	Accuracy   *checkAccuracy `json:"accuracy,omitempty"` // without --provider
}

// checkAccuracy is how often each prediction matched the matrix's observed cells.
type checkAccuracy struct {
	Rule          string   `json:"rule"`
	Cells         int      `json:"cells"`      // the model's cells that observed something
	Documented    int      `json:"documented"` // of those, where the documented table matched
	Measured      int      `json:"measured"`   // where measured support matched
	Disagreements []string `json:"disagreements"`
}

func checkRun(opts *CheckOptions) error {
	model := opts.Model
	data, id, err := checkModelBytes(opts, model)
	if err != nil {
		return err
	}
	s, err := onnx.Inspect(data)
	if err != nil {
		return fmt.Errorf("%s: %w", model, err)
	}
	r := checkReport{Model: model, Operators: len(s.Ops), Nodes: sumOps(s.Ops)}
	if len(opts.Providers) > 0 {
		r.Scoreboard = "not used with --provider: the scoreboard is per target"
		for _, p := range opts.Providers {
			r.Targets = append(r.Targets, checkResult{Prediction: diagnose.Predict(s.Ops, p)})
		}
	} else {
		c, err := opts.loadCatalogs()
		if err != nil {
			return err
		}
		board, about := checkScoreboard(opts.Globals)
		r.Scoreboard = about
		acc := checkAccuracy{Rule: diagnose.MatchRule, Disagreements: []string{}}
		var observed map[string]matrix.Cell
		if id != "" {
			observed = latestCells(opts.Globals)[id]
		}
		r.Targets = predictTargets(s.Ops, c.Targets, board, observed, "", &acc)
		r.Accuracy = &acc
	}
	if opts.JSON {
		return writeJSON(opts.Stdout, r)
	}
	return r.writeText(opts.Stdout)
}

// predictTargets predicts the model (its operator counts) on each hardware.yaml
// target, from the EP it runs nodes on and from the operators' conformance cases on
// the target (board; nil: none), and sets both against the observed statuses,
// adding to acc. who prefixes its disagreements ("" for one model).
func predictTargets(ops map[string]int, targets []catalog.Target, board *conformance.Board, observed map[string]matrix.Cell, who string, acc *checkAccuracy) []checkResult {
	var out []checkResult
	for _, t := range targets {
		ep := spec.TargetOf(t).EP()
		cell := observed[t.ID]
		cr := checkResult{Target: t.ID, Prediction: diagnose.Predict(ops, ep), Observed: string(cell.Status), ObservedReason: cell.Reason, ObservedRun: cell.RunID}
		cr.DocumentedOutcome = cr.Prediction.Documented()
		measuredOutcome := ""
		if board != nil {
			m := diagnose.Measure(ops, *board, t.ID)
			cr.Measured = &m
			measuredOutcome = m.Outcome
		}
		status := result.Status(cr.Observed)
		if diagnose.Observed(status) {
			acc.Cells++
			doc, meas := diagnose.Matches(cr.DocumentedOutcome, status), diagnose.Matches(measuredOutcome, status)
			cr.DocumentedMatch, cr.MeasuredMatch = &doc, &meas
			if doc {
				acc.Documented++
			} else {
				acc.Disagreements = append(acc.Disagreements, fmt.Sprintf("%s%s: documented table predicted %s, observed %s%s", who, t.ID, orNone(cr.DocumentedOutcome), status, observedWhy(cell)))
			}
			if meas {
				acc.Measured++
			} else {
				acc.Disagreements = append(acc.Disagreements, fmt.Sprintf("%s%s: measured support predicted %s, observed %s%s", who, t.ID, orNone(measuredOutcome), status, observedWhy(cell)))
			}
		}
		out = append(out, cr)
	}
	return out
}

// observedWhy is an observed cell's reason and run, for a disagreement's line: " (WebNN took
// none of the 33 nodes: all ran on CPU; run 20261124T043618Z-35f611)".
func observedWhy(c matrix.Cell) string {
	var parts []string
	if c.Reason != "" {
		parts = append(parts, truncateText(strings.Join(strings.Fields(c.Reason), " "), 160))
	}
	if c.RunID != "" {
		parts = append(parts, "run "+c.RunID)
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, "; ") + ")"
}

func truncateText(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func orNone(outcome string) string {
	if outcome == "" {
		return "nothing (no prediction)"
	}
	return outcome
}

// checkScoreboard is the history's conformance scoreboard in the catalog's target
// order, and a line saying where it comes from; nil (with why) when there is none.
func checkScoreboard(g *Globals) (*conformance.Board, string) {
	ctx := context.Background()
	quiet := *g
	quiet.Stderr = io.Discard
	db, err := quiet.openHistory(ctx, history.ReadOnly)
	if err != nil {
		return nil, fmt.Sprintf("no measured support: %v; %v", err, errNoConformance)
	}
	defer db.Close()
	sb, err := readScoreboard(ctx, &quiet, db, nil)
	if err != nil {
		return nil, "no measured support: " + err.Error()
	}
	var runs []string
	for _, t := range sb.Board.Targets {
		run := sb.Runs[t]
		runs = append(runs, fmt.Sprintf("%s: %s (%s)", t, run.RunID, run.Finished.UTC().Format("2006-01-02 15:04 UTC")))
	}
	return &sb.Board, fmt.Sprintf("ONNX's conformance cases within %s; each case's latest answer on each target (latest runs: %s)",
		conformance.ToleranceText, strings.Join(runs, ", "))
}

func (r checkReport) writeText(w io.Writer) error {
	bw := &errWriter{w: w}
	bw.printf("%s: %d operator types, %d nodes\n\n", r.Model, r.Operators, r.Nodes)
	tw := tabwriter.NewWriter(bw, 0, 0, 2, ' ', 0)
	if r.Accuracy == nil {
		for _, t := range r.Targets { // --provider: the documented tables only
			bw.printf("%s\n", t.Prediction)
		}
		return bw.err
	}
	// The documented table's line is the longest: last.
	fmt.Fprintln(tw, "TARGET\tLAST RUN\tMEASURED SUPPORT\tDOCUMENTED TABLE")
	for _, t := range r.Targets {
		measured := "–"
		if t.Measured != nil {
			measured = t.Measured.Verdict
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", t.Target, dash(t.Observed), measured, t.Prediction)
	}
	tw.Flush()

	bw.printf("\nMeasured support: %s.\n", r.Scoreboard)
	for _, t := range r.Targets {
		if t.Measured == nil {
			continue
		}
		var lines []string
		for _, op := range t.Measured.Ops {
			if op.Support == conformance.Supported || op.Support == conformance.Unmeasured {
				continue // the verdict names unmeasured operators
			}
			line := fmt.Sprintf("  %s: %s", op.Op, op.Support)
			if op.Cell != "" {
				line += " (" + op.Cell + ")"
			}
			lines = append(lines, line)
			for _, f := range op.Failing {
				lines = append(lines, "    "+f)
			}
		}
		if len(lines) > 0 {
			bw.printf("%s:\n%s\n", t.Target, strings.Join(lines, "\n"))
		}
	}

	a := r.Accuracy
	bw.printf("\nPredicted vs observed, per cell of the current matrix. Matched means: %s\n", a.Rule)
	if a.Cells == 0 {
		bw.printf("The matrix has no observed cell of %s: nothing to compare (`hwtest run --model ID` runs it).\n", r.Model)
		return bw.err
	}
	tw = tabwriter.NewWriter(bw, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TARGET\tOBSERVED\tDOCUMENTED\tMEASURED")
	for _, t := range r.Targets {
		if t.DocumentedMatch == nil {
			continue
		}
		measured := ""
		if t.Measured != nil {
			measured = t.Measured.Outcome
		}
		fmt.Fprintf(tw, "%s\t%s\t%s %s\t%s %s\n", t.Target, t.Observed, dash(t.DocumentedOutcome), mark(*t.DocumentedMatch), dash(measured), mark(*t.MeasuredMatch))
	}
	tw.Flush()
	bw.printf("\nDocumented tables matched the matrix in %d of %s; measured support in %d of %d.\n", a.Documented, result.Plural(a.Cells, "cell"), a.Measured, a.Cells)
	if len(a.Disagreements) > 0 {
		bw.printf("Disagreements:\n")
		for _, d := range a.Disagreements {
			bw.printf("- %s\n", d)
		}
	}
	return bw.err
}

// checkAllReport is `check --all`: every catalog model with cells in the current
// matrix, predicted and observed.
type checkAllReport struct {
	Scoreboard string        `json:"scoreboard"`
	Accuracy   checkAccuracy `json:"accuracy"`
	Models     []checkReport `json:"models"`
	// NotChecked are models with cells whose file is not here: "id: why".
	NotChecked []string `json:"not_checked"`
}

func checkAll(opts *CheckOptions) error {
	c, err := opts.loadCatalogs()
	if err != nil {
		return err
	}
	observed := latestCells(opts.Globals)
	board, about := checkScoreboard(opts.Globals)
	r := checkAllReport{Scoreboard: about, Accuracy: checkAccuracy{Rule: diagnose.MatchRule, Disagreements: []string{}}, NotChecked: []string{}}
	for _, m := range c.Models {
		if len(observed[m.ID]) == 0 {
			continue
		}
		data, _, err := checkModelBytes(opts, m.ID)
		var s *onnx.Summary
		if err == nil {
			s, err = onnx.Inspect(data)
		}
		if err != nil {
			r.NotChecked = append(r.NotChecked, fmt.Sprintf("%s: %v", m.ID, err))
			continue
		}
		mr := checkReport{Model: m.ID, Operators: len(s.Ops), Nodes: sumOps(s.Ops)}
		mr.Targets = predictTargets(s.Ops, c.Targets, board, observed[m.ID], m.ID+" on ", &r.Accuracy)
		r.Models = append(r.Models, mr)
	}
	if opts.JSON {
		return writeJSON(opts.Stdout, r)
	}
	bw := &errWriter{w: opts.Stdout}
	a := r.Accuracy
	bw.printf("Predicted vs observed, per cell of the current matrix: %s, %s observed. Matched means: %s\n\n",
		result.Plural(len(r.Models), "model"), result.Plural(a.Cells, "cell"), a.Rule)
	bw.printf("Measured support: %s.\n\n", r.Scoreboard)
	tw := tabwriter.NewWriter(bw, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "MODEL\tTARGET\tOBSERVED\tDOCUMENTED\tMEASURED\tMEASURED SUPPORT")
	for _, m := range r.Models {
		for _, t := range m.Targets {
			if t.DocumentedMatch == nil {
				continue
			}
			outcome, verdict := "", "–"
			if t.Measured != nil {
				outcome, verdict = t.Measured.Outcome, t.Measured.Verdict
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s %s\t%s %s\t%s\n", m.Model, t.Target, t.Observed, dash(t.DocumentedOutcome), mark(*t.DocumentedMatch),
				dash(outcome), mark(*t.MeasuredMatch), verdict)
		}
	}
	tw.Flush()
	bw.printf("\nDocumented tables matched the matrix in %d of %s; measured support in %d of %d.\n", a.Documented, result.Plural(a.Cells, "cell"), a.Measured, a.Cells)
	if len(a.Disagreements) > 0 {
		bw.printf("Disagreements:\n")
		for _, d := range a.Disagreements {
			bw.printf("- %s\n", d)
		}
	}
	if len(r.NotChecked) > 0 {
		bw.printf("Not checked (the model's file is not here):\n")
		for _, n := range r.NotChecked {
			bw.printf("- %s\n", n)
		}
	}
	return bw.err
}

func mark(matched bool) string {
	if matched {
		return "✓"
	}
	return "✗"
}

// checkModelBytes reads the model a user named: catalog id, zoo:NAME or a file.
func checkModelBytes(opts *CheckOptions, model string) (data []byte, id string, err error) {
	if name, ok := strings.CutPrefix(model, "zoo:"); ok {
		data, _, err = zoo.Build(name)
		return data, "", err
	}
	if _, statErr := os.Stat(model); statErr == nil {
		data, err = os.ReadFile(model)
		return data, "", err
	}
	c, err := opts.loadCatalogs()
	if err != nil {
		return nil, "", err
	}
	m, ok := c.Model(model)
	if !ok {
		return nil, "", fmt.Errorf("%q is neither a file, a zoo:NAME nor a model in %s", model, relToWD(opts.ModelsFile))
	}
	rm, err := runtime.ResolveIn(opts.Root, spec.ModelOf(m))
	if err != nil {
		return nil, "", err
	}
	data, err = os.ReadFile(rm.Path)
	return data, m.ID, err
}

// latestCells maps each model and target to its latest result (the history's
// current matrix, else reports/latest); empty without either.
func latestCells(g *Globals) map[string]map[string]matrix.Cell {
	out := map[string]map[string]matrix.Cell{}
	if g.resolveRoot() != nil {
		return out
	}
	quiet := *g
	quiet.Stderr = io.Discard
	m, err := currentMatrix(context.Background(), &quiet)
	if err != nil {
		return out
	}
	for _, cell := range m.Cells {
		if out[cell.Model] == nil {
			out[cell.Model] = map[string]matrix.Cell{}
		}
		out[cell.Model][cell.Target] = cell
	}
	return out
}

func sumOps(ops map[string]int) int {
	n := 0
	for _, c := range ops {
		n += c
	}
	return n
}
