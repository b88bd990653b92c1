package diff

import (
	"encoding/json"
	"fmt"
	"strings"
)

// JSON is the report as indented JSON (`hwtest diff --json`).
func (r Report) JSON() ([]byte, error) {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

// Rule states how latency and memory were decided, in words, for the report's reader.
func (r Report) Rule() string {
	o := r.Options
	return fmt.Sprintf("Latency (each run's p50) and peak RSS are compared only between cells with the same key "+
		"(model sha256, target, ONNX Runtime version and library sha256, device, driver, host CPU). "+
		"A regression needs ≥ %d runs with that key on each side, a two-sided Mann-Whitney U test on the runs "+
		"with p < %g (confidence %g%%), and a change of the medians of at least %g%% (peak RSS: and at least %s). "+
		"With fewer runs the change is shown, undecided (for latency with the p-value of the blocks of timed runs "+
		"within the two runs, which does not see run-to-run noise).",
		o.MinRuns, o.Alpha, 100*(1-o.Alpha), 100*o.MinEffect, mib(float64(o.MinRSSGrowth)))
}

// Markdown renders the report for people: what regressed first, then a table of
// every cell that changed, then how many did not.
func (r Report) Markdown() []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "# hwtest diff: %s → %s\n\n", side(r.Old), side(r.New))
	var regressed []string
	for _, c := range r.Cells {
		if c.Regressed() {
			regressed = append(regressed, c.Model+"/"+c.Target)
		}
	}
	if len(regressed) > 0 {
		fmt.Fprintf(&b, "**Regressed (%d):** %s\n\n", len(regressed), strings.Join(regressed, ", "))
	} else {
		b.WriteString("**No regression.**\n\n")
	}
	b.WriteString(r.Rule() + "\n\n")

	unchanged := 0
	var rows []Cell
	for _, c := range r.Cells {
		if c.Changed() {
			rows = append(rows, c)
		} else {
			unchanged++
		}
	}
	if len(rows) > 0 {
		b.WriteString("| model | target | status | placement | key and options | latency p50 | peak RSS |\n")
		b.WriteString("| --- | --- | --- | --- | --- | --- | --- |\n")
		for _, c := range rows {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", c.Model, c.Target,
				cellText(statusText(c.Status)), cellText(placementText(c.Placement)),
				cellText(keyText(c)), cellText(measureText(c.Latency, ms)), cellText(measureText(c.Memory, mib)))
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "%d of %d cells in both runs unchanged.\n", unchanged, len(r.Cells))
	if len(r.OnlyOld) > 0 {
		fmt.Fprintf(&b, "\nOnly in the old run: %s.\n", strings.Join(r.OnlyOld, ", "))
	}
	if len(r.OnlyNew) > 0 {
		fmt.Fprintf(&b, "\nOnly in the new run: %s.\n", strings.Join(r.OnlyNew, ", "))
	}
	return []byte(b.String())
}

func side(r Run) string {
	id := r.RunID
	if id == "" {
		id = r.Generated.Format("2006-01-02 15:04:05Z")
	}
	if r.Runs > 1 {
		id += fmt.Sprintf(" (+%d runs)", r.Runs-1)
	}
	return id
}

func statusText(s *StatusChange) string {
	if s == nil {
		return ""
	}
	text := fmt.Sprintf("%s → %s", s.From, s.To)
	if s.NewlyUnavailable {
		text = "newly unavailable (" + text + ")"
	}
	if s.Regressed {
		text = "**" + text + "**"
	}
	if s.Reason != "" {
		text += ": " + firstLine(s.Reason)
	}
	return text
}

func placementText(p *PlacementChange) string {
	if p == nil {
		return ""
	}
	text := fmt.Sprintf("moved: %s → %s", p.From, p.To)
	if p.Regressed {
		text = "**" + text + "**"
	}
	return text
}

func keyText(c Cell) string {
	var parts []string
	if len(c.Key) > 0 {
		parts = append(parts, "key changed: "+changesText(c.Key))
	}
	if len(c.Options) > 0 {
		parts = append(parts, "options: "+changesText(c.Options))
	}
	if c.NotCompared != "" && len(c.Key) == 0 {
		parts = append(parts, c.NotCompared)
	}
	return strings.Join(parts, "; ")
}

func changesText(cs []Change) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = fmt.Sprintf("%s %s→%s", c.Field, short(c.From), short(c.To))
	}
	return strings.Join(parts, ", ")
}

// short keeps hashes readable: the first 8 characters of a long value.
func short(s string) string {
	if len(s) == 64 && !strings.ContainsAny(s, " ") {
		return s[:8] + "…"
	}
	return s
}

func measureText(m *Measure, unit func(float64) string) string {
	if m == nil {
		return ""
	}
	text := fmt.Sprintf("%s → %s (%+.1f%%", unit(m.Old), unit(m.New), 100*m.Change)
	if m.P != nil {
		text += fmt.Sprintf(", p=%.3g", *m.P)
	}
	text += fmt.Sprintf(", %s %d/%d) ", m.Samples, m.N1, m.N2)
	switch m.Verdict {
	case Regressed:
		text += "**regressed**"
	case Improved:
		text += "improved"
	default:
		text += string(m.Verdict)
	}
	return text
}

func ms(v float64) string  { return fmt.Sprintf("%.3g ms", v) }
func mib(v float64) string { return fmt.Sprintf("%.3g MiB", v/(1<<20)) }

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if r := []rune(s); len(r) > 200 {
		s = string(r[:200]) + "…"
	}
	return s
}

// cellText makes text safe inside a Markdown table cell.
func cellText(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}
