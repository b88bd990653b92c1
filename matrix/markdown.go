package matrix

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/hwtest/hwtest/result"
)

// notRun is what the overview shows for a cell that did not run.
const notRun = "—"

// maxReason bounds a reason in the Markdown tables; matrix.json has it whole.
const maxReason = 600

// Markdown renders the matrix for people: provenance, a summary, an overview table
// (models × targets) and a details table per model. The same matrix always renders
// to the same bytes.
func (m Matrix) Markdown() []byte {
	var b bytes.Buffer
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }

	p("# hwtest matrix\n\n")
	generated := "unknown"
	if !m.Generated.IsZero() {
		generated = m.Generated.UTC().Format("2006-01-02 15:04:05 UTC")
	}
	env := m.Environment
	p("- Generated: %s\n", generated)
	p("- Host CPU: %s\n", orUnknown(env.HostCPU, false))
	if len(env.Devices) > 0 {
		p("- Devices: %s\n", orUnknown(env.Devices, false))
	}
	p("- ONNX Runtime: %s\n", orUnknown(env.ORTVersion, false))
	p("- ONNX Runtime library: %s\n", orUnknown(env.ORTLibrary, true))
	p("- ONNX Runtime library sha256: %s\n", orUnknown(env.ORTLibrarySHA256, true))
	if len(env.CodeCommit) > 0 {
		p("- Code commit: %s\n", orUnknown(env.CodeCommit, true))
	}
	if len(env.Catalog) > 0 {
		p("- Catalogs: %s\n", orUnknown(env.Catalog, false))
	}
	if len(env.CatalogCommit) > 0 {
		p("- Catalog commit: %s\n", orUnknown(env.CatalogCommit, true))
	}
	runs := m.runs()
	if len(runs) > 0 {
		p("- Cells from %d runs (the latest result of each cell): %s\n", len(runs), strings.Join(runs, ", "))
	}
	p("\n**Summary:** %s\n", m.SummaryLine())

	byKey := map[key]Cell{}
	for _, c := range m.Cells {
		byKey[key{c.Model, c.Target}] = c
	}
	ran := func(names []string, has func(string) bool) (in, out []string) {
		for _, n := range names {
			if has(n) {
				in = append(in, n)
			} else {
				out = append(out, n)
			}
		}
		return in, out
	}
	models, idleModels := ran(m.Models, func(n string) bool {
		return slices.ContainsFunc(m.Cells, func(c Cell) bool { return c.Model == n })
	})
	targets, idleTargets := ran(m.Targets, func(n string) bool {
		return slices.ContainsFunc(m.Cells, func(c Cell) bool { return c.Target == n })
	})

	if len(models) > 0 {
		p("\n## Overview\n\n")
		p("Each cell: status · p50 latency · peak RSS. %s: not run. Peak RSS is the suite process's for native targets (ONNX Runtime runs in it) and the proportional set size of Chromium's processes after the runs for browser targets. In each model's table, model peak is what the target's session added at the highest: the peak less the suite process's resident size just before the session was created (native targets; Chromium keeps no peak to subtract from).\n\n", notRun)
		row := []string{"model"}
		row = append(row, targets...)
		tableRow(&b, row)
		tableRule(&b, len(row))
		for _, model := range models {
			row = []string{model + fixtureMark(m.fixture(model))}
			for _, target := range targets {
				c, ok := byKey[key{model, target}]
				if !ok {
					row = append(row, notRun)
					continue
				}
				row = append(row, overviewText(c))
			}
			tableRow(&b, row)
		}
	}
	if len(idleTargets) > 0 {
		p("\nNot run on any model: %s.\n", strings.Join(idleTargets, ", "))
	}
	if len(idleModels) > 0 {
		p("\nModels not run: %s.\n", strings.Join(idleModels, ", "))
	}

	for _, model := range models {
		p("\n## %s", model)
		if fam := m.family(model); fam != "" {
			p(" (%s)", fam)
		}
		p("\n\n")
		if sz := m.size(model); sz != nil {
			p("File that ran: %s parameters, %s of weights (tier %s); estimated memory %s (weights twice, plus ONNX Runtime's own 32 MiB; activations not counted).\n\n", result.HumanCount(sz.Params), result.HumanBytes(sz.WeightBytes), sz.Tier, result.HumanBytes(sz.EstimateBytes))
		}
		if fx := m.fixture(model); fx != "" {
			p("> **⚠ fixture: %s.** A stand-in model ran here instead of %s: its outputs test the pipeline, but its latency and memory say nothing about the real model.\n\n", fx, model)
		}
		header := []string{"target", "status", "load ms", "first run ms", "p50 ms", "p90 ms", "p99 ms", "throughput/s", "peak RSS MiB", "model peak MiB", "reason"}
		if len(runs) > 0 {
			header = append(header, "run")
		}
		tableRow(&b, header)
		tableRule(&b, len(header))
		for _, target := range targets {
			c, ok := byKey[key{model, target}]
			if !ok {
				continue
			}
			row := []string{target, statusText(c)}
			if mt := c.Metrics; mt != nil {
				row = append(row, num(mt.LoadMS), num(mt.FirstRunMS), p50Text(mt), num(mt.P90MS), num(mt.P99MS), num(mt.ThroughputPerS), mib(mt.PeakRSSBytes), mib(mt.ModelPeakBytes))
			} else {
				row = append(row, "", "", "", "", "", "", "", "")
			}
			row = append(row, reasonText(c))
			if len(runs) > 0 {
				row = append(row, c.RunID+" ("+c.RunTime.UTC().Format("2006-01-02 15:04")+")")
			}
			tableRow(&b, row)
		}
		// Each traced mismatch gets a line under the table: the node it starts at.
		for _, target := range targets {
			if c, ok := byKey[key{model, target}]; ok && c.Explain != "" {
				p("\n- %s on %s, traced by `hwtest explain %s %s`: %s\n", model, target, model, target, escape(truncate(c.Explain, maxReason)))
			}
		}
	}

	if len(m.Problems) > 0 {
		p("\n## Problems\n\n")
		for _, pr := range m.Problems {
			p("- %s\n", escape(truncate(pr, maxReason)))
		}
	}
	return b.Bytes()
}

// runs lists the runs a gathered matrix's cells came from, newest first, each with
// its cell count: "20261123T163309Z-601f50 (2026-11-23 16:41 UTC, 14 cells)". Empty
// for one run's own matrix, whose cells carry no run.
func (m Matrix) runs() []string {
	count := map[string]int{}
	at := map[string]time.Time{}
	var ids []string
	for _, c := range m.Cells {
		if c.RunID == "" {
			continue
		}
		if count[c.RunID] == 0 {
			ids = append(ids, c.RunID)
		}
		count[c.RunID]++
		at[c.RunID] = c.RunTime
	}
	slices.SortFunc(ids, func(a, b string) int {
		if c := at[b].Compare(at[a]); c != 0 {
			return c
		}
		return strings.Compare(b, a)
	})
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = fmt.Sprintf("%s (%s, %s)", id, at[id].UTC().Format("2006-01-02 15:04 UTC"), result.Plural(count[id], "cell"))
	}
	return out
}

// SummaryLine counts the cells per status, worst first: "1 error · 3 pass (4 cells)".
func (m Matrix) SummaryLine() string {
	var parts []string
	total := 0
	for _, s := range Statuses {
		if n := m.Summary[s]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, s))
			total += n
		}
	}
	// Statuses the matrix does not know, should a newer runtime add one.
	var other []string
	for s, n := range m.Summary {
		if n > 0 && !slices.Contains(Statuses, s) {
			other = append(other, fmt.Sprintf("%d %s", n, s))
			total += n
		}
	}
	slices.Sort(other)
	parts = append(parts, other...)
	if total == 0 {
		return "no cells ran"
	}
	cells := "cells"
	if total == 1 {
		cells = "cell"
	}
	return fmt.Sprintf("%s (%d %s)", strings.Join(parts, " · "), total, cells)
}

// fixture is the stand-in fixture of a model's cells, if any ran one.
func (m Matrix) fixture(model string) string {
	var fx []string
	for _, c := range m.Cells {
		if c.Model == model && c.Fixture != "" && !slices.Contains(fx, c.Fixture) {
			fx = append(fx, c.Fixture)
		}
	}
	slices.Sort(fx)
	return strings.Join(fx, ", ")
}

// size is the model file's size as its cells read it.
func (m Matrix) size(model string) *result.ModelSize {
	for _, c := range m.Cells {
		if c.Model == model && c.Size != nil {
			return c.Size
		}
	}
	return nil
}

func (m Matrix) family(model string) string {
	for _, c := range m.Cells {
		if c.Model == model && c.Family != "" {
			return c.Family
		}
	}
	return ""
}

func fixtureMark(fx string) string {
	if fx == "" {
		return ""
	}
	return " ⚠ fixture: " + fx
}

// statusText is the status, flagged when a pass carries a reason (an unexpected
// pass) and with the fallback it took.
func statusText(c Cell) string {
	s := string(c.Status)
	if c.Status == result.StatusPass && c.Reason != "" {
		s += " ⚠"
	}
	if c.Fallback != "" {
		s += " (fallback " + c.Fallback + ")"
	}
	return s
}

func overviewText(c Cell) string {
	parts := []string{statusText(c)}
	if mt := c.Metrics; mt != nil {
		parts = append(parts, num(mt.P50MS)+" ms")
		if mt.Unstable != "" {
			parts = append(parts, "⚠ unstable")
		}
		if mt.PeakRSSBytes > 0 {
			parts = append(parts, mib(mt.PeakRSSBytes)+" MiB")
		}
	}
	return strings.Join(parts, " · ")
}

// p50Text is the median latency, flagged when the cell's timings were unstable.
func p50Text(mt *result.Metrics) string {
	if mt.Unstable != "" {
		return num(mt.P50MS) + " ⚠ unstable"
	}
	return num(mt.P50MS)
}

// reasonText is why a cell is not a pass, led by the check that said so, and why
// its latency is flagged unstable.
func reasonText(c Cell) string {
	if c.Metrics != nil && c.Metrics.Unstable != "" {
		if r := reasonOf(c); r != "" {
			return r + "; unstable: " + c.Metrics.Unstable
		}
		return "unstable: " + c.Metrics.Unstable
	}
	return reasonOf(c)
}

func reasonOf(c Cell) string {
	if c.Reason == "" {
		return ""
	}
	r := c.Reason
	for _, ch := range c.Checks {
		if ch.Status == c.Status && ch.Reason == c.Reason {
			r = ch.Name + ": " + r
			break
		}
	}
	if c.Worst != nil && !strings.Contains(r, c.Worst.String()) {
		r += " (worst: " + c.Worst.String() + ")"
	}
	if c.FallsBackTo != "" {
		r += " — fallback: " + c.FallsBackTo + " (see that column; not a result for " + c.Target + ")"
	}
	return truncate(r, maxReason)
}

// num prints a measurement with about three significant digits.
func num(v float64) string {
	switch a := math.Abs(v); {
	case v == 0:
		return "0"
	case a < 1:
		return fmt.Sprintf("%.3f", v)
	case a < 10:
		return fmt.Sprintf("%.2f", v)
	case a < 100:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.0f", v)
}

func mib(bytes int64) string {
	if bytes <= 0 {
		return ""
	}
	return fmt.Sprintf("%.0f", float64(bytes)/(1<<20))
}

func orUnknown(vals []string, code bool) string {
	if len(vals) == 0 {
		return "unknown"
	}
	out := slices.Clone(vals)
	for i, v := range out {
		if code {
			out[i] = "`" + strings.ReplaceAll(v, "`", "'") + "`"
		} else {
			out[i] = escape(v)
		}
	}
	return strings.Join(out, "; ")
}

func tableRow(b *bytes.Buffer, cells []string) {
	b.WriteString("|")
	for _, c := range cells {
		b.WriteString(" ")
		b.WriteString(escape(c))
		b.WriteString(" |")
	}
	b.WriteString("\n")
}

func tableRule(b *bytes.Buffer, n int) {
	b.WriteString("|" + strings.Repeat(" --- |", n) + "\n")
}

// escaper makes text safe inside a Markdown table cell: no HTML tags, no column
// breaks, one line.
var escaper = strings.NewReplacer(
	"<", "&lt;",
	">", "&gt;",
	"|", `\|`,
	"\r\n", "<br>",
	"\n", "<br>",
	"\r", "<br>",
)

func escape(s string) string { return escaper.Replace(strings.TrimSpace(s)) }

// truncate keeps the first n runes of s.
func truncate(s string, n int) string {
	s = strings.TrimSpace(s)
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + " … (truncated; see matrix.json)"
	}
	return s
}
