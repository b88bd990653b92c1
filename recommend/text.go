package recommend

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// JSON is the recommendation as indented JSON (`hwtest recommend --json`).
func (r Recommendation) JSON() ([]byte, error) { return indented(r) }

// JSON is the family's recommendation as indented JSON.
func (f FamilyRecommendation) JSON() ([]byte, error) { return indented(f) }

func indented(v any) ([]byte, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// Markdown renders the recommendation for people.
func (r Recommendation) Markdown() []byte {
	var b strings.Builder
	if r.Kind == Prediction {
		r.predictionMarkdown(&b)
		return []byte(b.String())
	}
	fmt.Fprintf(&b, "# hwtest recommend: %s%s\n\n", r.Model, paren(r.Family))
	b.WriteString("Measured. Each target's figures are the medians of the runs that back it: its stored results " +
		"with the latest result's key (model sha256, ONNX Runtime version and library, device, driver, host CPU) " +
		"that passed and measured. ")
	if r.Baseline != "" {
		fmt.Fprintf(&b, "Speedup = %s's p50 / the target's p50 (above 1: faster than %s).", r.Baseline, r.Baseline)
	}
	b.WriteString("\n")
	if s := r.Budget.String(); s != "" {
		fmt.Fprintf(&b, "\nAsked: %s.\n", s)
	}

	b.WriteString("\n## Targets that pass, fastest first\n\n")
	if len(r.Ranked) == 0 {
		b.WriteString("None.\n")
	} else {
		b.WriteString("| # | target | runner | p50 ms | p99 ms | speedup over " + orUnknown(r.Baseline) + " | peak memory | runs | p50 across runs |\n")
		b.WriteString("| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
		for i, c := range r.Ranked {
			fmt.Fprintf(&b, "| %d | %s | %s | %.4g | %.4g | %s | %s | %d | %s |\n", i+1, c.Target+fixture(c), c.Runner,
				c.P50MS, c.P99MS, speedupCell(c, r.Baseline), mib(float64(c.PeakMemoryBytes)), c.Runs, spread(c))
		}
	}
	if len(r.Partial) > 0 {
		b.WriteString("\n## Partial or cpu-only: ran and agreed, some nodes (partial) or all of them (cpu-only: the target's EP took none) on the CPU\n\n")
		b.WriteString("| target | status | runner | p50 ms | p99 ms | speedup over " + orUnknown(r.Baseline) + " | peak memory | runs | on the CPU |\n")
		b.WriteString("| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
		for _, c := range r.Partial {
			fmt.Fprintf(&b, "| %s | %s | %s | %.4g | %.4g | %s | %s | %d | %s |\n", c.Target+fixture(c), c.Status, c.Runner,
				c.P50MS, c.P99MS, speedupCell(c, r.Baseline), mib(float64(c.PeakMemoryBytes)), c.Runs, cell(cpuShare(c)))
		}
	}

	var notRun []string
	var rows []Exclusion
	for _, x := range r.Excluded {
		if x.Why == WhyNotRun {
			notRun = append(notRun, x.Target)
		} else {
			rows = append(rows, x)
		}
	}
	b.WriteString("\n## Excluded\n\n")
	if len(rows) > 0 {
		b.WriteString("| target | why | reason |\n| --- | --- | --- |\n")
		for _, x := range rows {
			fmt.Fprintf(&b, "| %s | %s | %s |\n", x.Target, x.Why, cell(x.Reason))
		}
	}
	if len(notRun) > 0 {
		if len(rows) > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "Not run (no result in the history): %s.\n", strings.Join(notRun, ", "))
	}
	if len(rows)+len(notRun) == 0 {
		b.WriteString("None.\n")
	}

	b.WriteString("\n## Guidance\n\n")
	writeScenarios(&b, r.Scenarios)
	notes(&b, r)
	return []byte(b.String())
}

func (r Recommendation) predictionMarkdown(b *strings.Builder) {
	fmt.Fprintf(b, "# hwtest recommend: %s%s: PREDICTION\n\n", r.Model, paren(r.Family))
	b.WriteString("**" + r.Basis + "**\n")
	if s := r.Budget.String(); s != "" {
		fmt.Fprintf(b, "\nAsked: %s.\n", s)
	}
	b.WriteString("\n## Predicted per target, likeliest first\n\n")
	fmt.Fprintf(b, "| target | runner | prediction | family's median speedup over %s | family's median peak memory | evidence (the family's results) | operators (hwtest check) |\n", orUnknown(r.Baseline))
	b.WriteString("| --- | --- | --- | --- | --- | --- | --- |\n")
	for _, p := range r.Predicted {
		speed, mem := "", ""
		if p.FamilySpeedupModels > 0 {
			speed = fmt.Sprintf("%s (%s)", fmtX(p.FamilySpeedup), modelsText(p.FamilySpeedupModels))
		}
		if p.FamilyPeakMemoryBytes > 0 {
			mem = mib(float64(p.FamilyPeakMemoryBytes))
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s |\n", p.Target, p.Runner, p.Verdict, speed, mem, cell(p.Evidence), cell(p.Operators))
	}
	b.WriteString("\n## Guidance (predicted)\n\n")
	writeScenarios(b, r.Scenarios)
}

// Markdown renders the family's recommendation for people.
func (f FamilyRecommendation) Markdown() []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "# hwtest recommend --family %s\n\n", f.Family)
	var predicted []string
	for _, m := range f.Models {
		if m.Kind == Prediction {
			predicted = append(predicted, m.Model)
		}
	}
	fmt.Fprintf(&b, "Measured models: %s.", listOrNone(f.Measured))
	if len(predicted) > 0 {
		fmt.Fprintf(&b, " Never run, so PREDICTED below: %s.", strings.Join(predicted, ", "))
	}
	b.WriteString(" Per target: the models that passed, and the median of their speedups over " + orUnknown(f.Baseline) +
		" (each model's p50 medians over the runs that back it).\n")
	var fixtures []string
	for _, m := range f.Models {
		for _, c := range slices.Concat(m.Ranked, m.Partial) {
			if c.Fixture != "" && !slices.Contains(fixtures, m.Model) {
				fixtures = append(fixtures, m.Model)
			}
		}
	}
	if len(fixtures) > 0 {
		fmt.Fprintf(&b, "\nNote: %s ran a fixture (a tiny stand-in) in place of the real model: their figures are the fixture's.\n", strings.Join(fixtures, ", "))
	}
	if s := f.Budget.String(); s != "" {
		fmt.Fprintf(&b, "\nAsked: %s.\n", s)
	}
	b.WriteString("\n## Targets, highest median speedup first\n\n")
	if len(f.Targets) == 0 {
		b.WriteString("None.\n")
	} else {
		fmt.Fprintf(&b, "| target | runner | passed | partial | out | median speedup over %s (range; models) | median peak memory |\n", orUnknown(f.Baseline))
		b.WriteString("| --- | --- | --- | --- | --- | --- | --- |\n")
		for _, t := range f.Targets {
			speed := ""
			if t.SpeedupModels > 0 {
				speed = fmt.Sprintf("%s (%s–%s; %s)", fmtX(t.SpeedupMedian), fmtX(t.SpeedupMin), fmtX(t.SpeedupMax), modelsText(t.SpeedupModels))
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", t.Target, t.Runner, cell(strings.Join(t.Passed, ", ")),
				cell(partialText(t)), cell(outText(t.Out)), speed, mib(float64(t.PeakMemoryMedianBytes)))
		}
	}
	if len(f.Excluded) > 0 {
		b.WriteString("\n## Excluded: no measured model passed\n\n| target | why |\n| --- | --- |\n")
		for _, x := range f.Excluded {
			fmt.Fprintf(&b, "| %s | %s |\n", x.Target, cell(outText(x.Out)))
		}
	}
	b.WriteString("\n## Guidance (among the targets that passed for at least half of the measured models that ran there)\n\n")
	writeScenarios(&b, f.Scenarios)
	b.WriteString("\n## Per model\n\n")
	for _, m := range f.Models {
		fmt.Fprintf(&b, "- %s\n", modelLine(m))
	}
	return []byte(b.String())
}

// modelLine is one model's answer in a line.
func modelLine(r Recommendation) string {
	if r.Kind == Prediction {
		by := map[string][]string{}
		for _, p := range r.Predicted {
			by[p.Verdict] = append(by[p.Verdict], p.Target)
		}
		var parts []string
		for _, v := range verdictRank {
			if len(by[v]) > 0 {
				parts = append(parts, v+": "+strings.Join(by[v], ", "))
			}
		}
		return fmt.Sprintf("**%s**: PREDICTION (never run): %s", r.Model, strings.Join(parts, "; "))
	}
	var parts []string
	for _, c := range r.Ranked {
		s := fmt.Sprintf("%s %s", c.Target+fixture(c), ms(c.P50MS))
		if c.Target != r.Baseline && c.SpeedupOverCPU > 0 {
			s += " (" + speedupText(c.SpeedupOverCPU, r.Baseline) + ")"
		}
		parts = append(parts, s)
	}
	line := fmt.Sprintf("**%s**: ", r.Model)
	if len(parts) == 0 {
		line += "no target passed"
	} else {
		line += "passed, fastest first: " + strings.Join(parts, ", ")
	}
	for _, c := range r.Partial {
		line += fmt.Sprintf("; %s: %s %s", c.Status, c.Target, ms(c.P50MS))
	}
	var out []string
	for _, x := range r.Excluded {
		if x.Why != WhyNotRun {
			out = append(out, x.Target+" ("+x.Why+")")
		}
	}
	if len(out) > 0 {
		line += "; out: " + strings.Join(out, ", ")
	}
	return line
}

func writeScenarios(b *strings.Builder, ss []Scenario) {
	for _, s := range ss {
		if s.Target == "" {
			fmt.Fprintf(b, "- **%s**: %s\n", s.Name, s.Text)
		} else {
			fmt.Fprintf(b, "- **%s**: %s: %s\n", s.Name, s.Target, s.Text)
		}
	}
}

// notes explain what the figures are where it matters.
func notes(b *strings.Builder, r Recommendation) {
	var out []string
	browser, native := false, false
	fixtures := map[string][]string{} // fixture → targets that ran it
	for _, list := range [][]Choice{r.Ranked, r.Partial} {
		for _, c := range list {
			if c.Runner == "browser" {
				browser = true
			} else {
				native = true
			}
			if c.Fixture != "" {
				fixtures[c.Fixture] = append(fixtures[c.Fixture], c.Target)
			}
			if c.SpeedupNote != "" {
				out = append(out, fmt.Sprintf("%s: no speedup: %s.", c.Target, c.SpeedupNote))
			}
			if c.Note != "" {
				out = append(out, fmt.Sprintf("%s passed, flagged: %s", c.Target, c.Note))
			}
		}
	}
	for _, f := range sortedKeys(fixtures) {
		out = append(out, fmt.Sprintf("%s ran the fixture %s in place of the real model: the figures are the fixture's.", strings.Join(fixtures[f], ", "), f))
	}
	if browser && native {
		out = append(out, "Memory is the suite process's peak RSS for native targets and the PSS of Chromium's processes (the whole browser) for browser targets.")
	}
	if len(out) == 0 {
		return
	}
	b.WriteString("\n")
	for _, n := range out {
		fmt.Fprintf(b, "Note: %s\n", n)
	}
}

// String is the budget as the flags that set it.
func (b Budget) String() string {
	var out []string
	if b.MaxP50MS > 0 {
		out = append(out, "--max-p50 "+ms(b.MaxP50MS))
	}
	if b.MaxP99MS > 0 {
		out = append(out, "--max-p99 "+ms(b.MaxP99MS))
	}
	if b.MaxMemoryBytes > 0 {
		out = append(out, "--max-memory "+mib(float64(b.MaxMemoryBytes)))
	}
	if b.Precision != "" {
		out = append(out, "--precision "+b.Precision)
	}
	return strings.Join(out, ", ")
}

func speedupCell(c Choice, base string) string {
	switch {
	case c.Target == base:
		return "baseline"
	case c.SpeedupOverCPU == 0:
		return "—"
	case c.SpeedupOverCPU >= 1:
		return fmtX(c.SpeedupOverCPU) + " (faster)"
	}
	return fmt.Sprintf("%s (%s slower)", fmtX(c.SpeedupOverCPU), fmtX(1/c.SpeedupOverCPU))
}

func spread(c Choice) string {
	if c.Runs < 2 {
		return fmt.Sprintf("one run (CoV within it %.0f%%)", 100*c.SampleCoV)
	}
	return fmt.Sprintf("%.4g–%.4g (CoV %.1f%%)", c.P50MinMS, c.P50MaxMS, 100*c.P50CoV)
}

// partialText lists a target's partial models, marking those that ran wholly on
// the CPU.
func partialText(t FamilyTarget) string {
	names := make([]string, len(t.Partial))
	for i, m := range t.Partial {
		names[i] = m
		if slices.Contains(t.CPUOnlyModels, m) {
			names[i] += " (cpu-only)"
		}
	}
	return strings.Join(names, ", ")
}

func cpuShare(c Choice) string {
	s := fmt.Sprintf("%.0f%% of nodes", c.CPUNodesPct)
	if c.CPUTimePct > 0 {
		s += fmt.Sprintf(", %.0f%% of kernel time", c.CPUTimePct)
	}
	if c.Placement != "" {
		s += " (" + c.Placement + ")"
	}
	return s
}

func fixture(c Choice) string {
	if c.Fixture == "" {
		return ""
	}
	return " (fixture " + c.Fixture + ")"
}

func outText(out map[string][]string) string {
	var parts []string
	for _, why := range sortedKeys(out) {
		parts = append(parts, why+": "+strings.Join(out[why], ", "))
	}
	return strings.Join(parts, "; ")
}

// cell makes text fit a Markdown table cell: its first line, pipes escaped, cut
// short (the JSON keeps it whole).
func cell(s string) string {
	s, _, cut := strings.Cut(strings.TrimSpace(s), "\n")
	if r := []rune(s); len(r) > 200 {
		s, cut = string(r[:200]), true
	}
	if cut {
		s += " …"
	}
	return strings.ReplaceAll(s, "|", `\|`)
}

func paren(s string) string {
	if s == "" {
		return ""
	}
	return " (" + s + ")"
}

func listOrNone(xs []string) string {
	if len(xs) == 0 {
		return "none"
	}
	return strings.Join(xs, ", ")
}

// fmtX writes a ratio with two significant digits, never in exponent form.
func fmtX(s float64) string {
	switch {
	case s >= 10:
		return fmt.Sprintf("%.0f×", s)
	case s >= 1:
		return fmt.Sprintf("%.1f×", s)
	}
	return fmt.Sprintf("%.2g×", s)
}
