package analysis

import (
	"bytes"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/hwtest/hwtest/diagnose"
	"github.com/hwtest/hwtest/matrix"
	"github.com/hwtest/hwtest/result"
)

// maxRows bounds the per-model and per-change lists in the terminal; the JSON and
// the HTML report hold them all.
const maxRows = 40

// Text renders the report for a terminal: every summary as aligned tables.
func (r Report) Text() []byte {
	var b bytes.Buffer
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	table := func(header string, rows [][]string) {
		w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(w, header)
		for _, row := range rows {
			fmt.Fprintln(w, strings.Join(row, "\t"))
		}
		w.Flush()
	}

	p("# Summary\n\n")
	p("%s of the current matrix (the latest result of each cell), %s in the history", result.Plural(r.Runs.Cells, "cell"), result.Plural(r.Runs.Count, "run"))
	if r.Runs.Count > 0 {
		p(" (%s to %s)", stamp(r.Runs.First), stamp(r.Runs.Last))
	}
	p(".\nLatency, speedup and memory count the cells that ran and agreed with the CPU reference (pass, partial, cpu-only).\n")

	c := r.Compatibility
	p("\n## Compatibility: %s\n\n", matrix.Matrix{Summary: c.Summary}.SummaryLine())
	statusTable := func(first string, counts []StatusCount) {
		var rows [][]string
		for _, s := range counts {
			row := []string{result.NameOr(s.Name), fmt.Sprint(s.Cells)}
			for _, st := range matrix.Statuses {
				row = append(row, countOrDash(s.Counts[st]))
			}
			rows = append(rows, row)
		}
		header := first + "\tcells"
		for _, st := range matrix.Statuses {
			header += "\t" + string(st)
		}
		table(header, rows)
	}
	statusTable("target", c.ByTarget)
	p("\n")
	statusTable("family", c.ByFamily)

	perf := r.Performance
	p("\n## Performance: p50 latency, ms\n\n")
	if len(perf.ByTarget) == 0 {
		p("No cell ran and agreed with the reference.\n")
	} else {
		var rows [][]string
		for _, s := range perf.ByTarget {
			rows = append(rows, []string{s.Target, fmt.Sprint(s.Cells), result.FormatMS(s.MeanP50MS), result.FormatMS(s.Min.P50MS) + " " + s.Min.Model, result.FormatMS(s.Max.P50MS) + " " + s.Max.Model})
		}
		table("target\tcells\tmean\tmin\tmax", rows)
		p("\nPer family:\n\n")
		rows = nil
		for _, s := range perf.ByFamily {
			rows = append(rows, []string{result.NameOr(s.Family), s.Target, fmt.Sprint(s.Cells), result.FormatMS(s.MeanP50MS), result.FormatMS(s.Min.P50MS) + " " + s.Min.Model, result.FormatMS(s.Max.P50MS) + " " + s.Max.Model})
		}
		table("family\ttarget\tcells\tmean\tmin\tmax", rows)
		for _, list := range []struct {
			name  string
			cells []CellRef
		}{{"Fastest", perf.Fastest}, {"Slowest", perf.Slowest}} {
			p("\n%s cells:\n\n", list.name)
			rows = nil
			for i, c := range list.cells {
				rows = append(rows, []string{fmt.Sprint(i + 1), c.Model + fixtureMark(c.Fixture), c.Target, result.FormatMS(c.P50MS), result.FormatMS(c.P99MS), result.FormatPerSecond(c.ThroughputPerS)})
			}
			table("#\tmodel\ttarget\tp50\tp99\tthroughput/s", rows)
		}
	}

	sp := r.Speedup
	p("\n## Speedup over %s: %s p50 / the target's p50 (above 1: faster than %s)\n\n", sp.Baseline, sp.Baseline, sp.Baseline)
	if len(sp.ByTarget) == 0 {
		p("No model ran and agreed with the reference on %s and on another target.\n", sp.Baseline)
	} else {
		var rows [][]string
		for _, s := range sp.ByTarget {
			rows = append(rows, []string{s.Target, fmt.Sprint(s.Cells), result.FormatTimes(s.GeoMean), result.FormatTimes(s.Min.Speedup) + " " + s.Min.Model, result.FormatTimes(s.Max.Speedup) + " " + s.Max.Model})
		}
		table("target\tmodels\tgeomean\tmin\tmax", rows)
		p("\nPer family:\n\n")
		rows = nil
		for _, s := range sp.ByFamily {
			rows = append(rows, []string{result.NameOr(s.Family), s.Target, fmt.Sprint(s.Cells), result.FormatTimes(s.GeoMean), result.FormatTimes(s.Min.Speedup) + " " + s.Min.Model, result.FormatTimes(s.Max.Speedup) + " " + s.Max.Model})
		}
		table("family\ttarget\tmodels\tgeomean\tmin\tmax", rows)
		p("\nPer model:\n\n")
		rows = nil
		for _, s := range sp.ByModel[:min(maxRows, len(sp.ByModel))] {
			rows = append(rows, []string{s.Model + fixtureMark(s.Fixture), s.Target, result.FormatTimes(s.Speedup), result.FormatMS(s.BaselineP50MS), result.FormatMS(s.P50MS)})
		}
		table("model\ttarget\tspeedup\t"+sp.Baseline+" p50\tp50", rows)
		more(&b, len(sp.ByModel))
	}

	mem := r.Memory
	p("\n## Memory: peak RSS, MiB\n\n")
	if len(mem.ByTarget) == 0 {
		p("No cell ran and agreed with the reference.\n")
	} else {
		var rows [][]string
		for _, s := range mem.ByTarget {
			rows = append(rows, []string{s.Target, fmt.Sprint(s.Cells), result.FormatMiB(s.MeanBytes), result.FormatMiB(s.Min.PeakRSSBytes) + " " + s.Min.Model, result.FormatMiB(s.Max.PeakRSSBytes) + " " + s.Max.Model, modelPeakText(s), s.Scope})
		}
		table("target\tcells\tmean\tmin\tmax\tmodel peak, mean\twhat it counts", rows)
		p("\nHeaviest models on each target:\n\n")
		rows = nil
		for _, h := range mem.Heaviest {
			var names []string
			for _, c := range h.Cells {
				name := fmt.Sprintf("%s %s", c.Model, result.FormatMiB(c.PeakRSSBytes))
				if c.ModelPeakBytes > 0 {
					name += fmt.Sprintf(" (model %s)", result.FormatMiB(c.ModelPeakBytes))
				}
				names = append(names, name)
			}
			rows = append(rows, []string{h.Target, strings.Join(names, ", ")})
		}
		table("target\tmodels (MiB)", rows)
		p("\nModel peak: the process peak less the suite process's resident size just before the target's session was created, what the session added at its highest (weights, ONNX Runtime's copies of them, activations); -: not measured (browser targets: Chromium's PSS has no peak and no reading before the session to subtract).\n")
	}

	p("\n## Trends\n\n")
	var changed, regressed int
	var rows [][]string
	for _, t := range r.Trends {
		if len(t.Changes) == 0 {
			continue
		}
		changed++
		for _, ch := range t.Changes {
			if ch.Regressed {
				regressed++
			}
			verdict := ch.Verdict()
			if ch.Regressed {
				verdict = strings.ToUpper(verdict) // what the reader looks for
			}
			rows = append(rows, []string{t.Model, t.Target, ch.RunID, verdict, ch.Kind, ch.Describe()})
		}
	}
	p("%s over %s: %s changed, %s regressed (decided by package diff: statuses and placement run to run; p50 and peak RSS: the runs before each run against the runs from it on, U test).\n",
		result.Plural(len(r.Trends), "cell"), result.Plural(r.Runs.Count, "run"), result.Plural(changed, "cell"), result.Plural(regressed, "change"))
	if len(rows) > 0 {
		p("\n")
		table("model\ttarget\tfrom run\tverdict\tkind\tchange", rows[:min(maxRows, len(rows))])
		more(&b, len(rows))
	}

	f := r.Failures
	p("\n## Failures\n\n")
	if f.Total == 0 {
		p("None: every cell passed.\n")
	} else {
		var parts []string
		for _, s := range diagnose.Severities {
			if n := f.BySeverity[s]; n > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", n, s))
			}
		}
		p("%s: %s.\n", result.Plural(f.Total, "finding"), strings.Join(parts, ", "))
		for _, g := range f.Groups {
			p("\n- %s, %s: %s (%d; targets %s)\n  fix: %s\n", g.Severity, g.Kind, g.Summary, g.Count, strings.Join(g.Targets, ", "), g.Recommendation)
		}
	}

	e := r.Environment
	p("\n## Environment\n\n")
	rows = [][]string{
		{"host", result.NameOr(e.Host)},
		{"host CPU", list(e.HostCPU)},
		{"ONNX Runtime", list(e.ORTVersion)},
		{"library sha256", list(e.ORTLibrarySHA256)},
		{"code commit", list(e.CodeCommit)},
		{"catalog commit", list(e.CatalogCommit)},
	}
	if len(e.Catalog) > 0 { // runs from before it was recorded do not say
		rows = append(rows, []string{"catalogs", list(e.Catalog)})
	}
	for _, d := range e.Devices {
		rows = append(rows, []string{"device", d})
	}
	table("what\tvalue", rows)
	if len(e.Detection) > 0 {
		p("\nDetection (run %s, %s):\n\n", e.DetectedBy, e.DetectedAt.UTC().Format("2006-01-02 15:04 UTC"))
		rows = nil
		for _, d := range e.Detection {
			state, what := "no", d.Reason
			if d.Available {
				state, what = "yes", d.Name
			}
			rows = append(rows, []string{d.Target, state, oneLine(what, 160)})
		}
		table("target\tavailable\tdevice, or why not", rows)
	}
	return b.Bytes()
}

func more(b *bytes.Buffer, n int) {
	if n > maxRows {
		fmt.Fprintf(b, "… and %d more (hwtest report --summary --json, or --html, has them all)\n", n-maxRows)
	}
}

// Verdict is "regressed", "fixed" (a status back to pass) or "improved".
func (c Change) Verdict() string {
	switch {
	case c.Regressed:
		return "regressed"
	case c.Kind == ChangeStatus && c.To == string(result.StatusPass):
		return "fixed"
	}
	return "improved"
}

// Describe says what moved: the statuses, the placements, or the medians of the
// runs before and after with diff's test.
func (c Change) Describe() string {
	switch c.Kind {
	case ChangeLatency:
		return fmt.Sprintf("p50 %s → %s ms (%+.0f%%; U test p = %s, %d runs before, %d after)", result.FormatMS(c.Old), result.FormatMS(c.New), 100*c.Change, pval(c.P), c.RunsOld, c.RunsNew)
	case ChangeMemory:
		return fmt.Sprintf("peak RSS %s → %s MiB (%+.0f%%; U test p = %s, %d runs before, %d after)", result.FormatMiB(int64(c.Old)), result.FormatMiB(int64(c.New)), 100*c.Change, pval(c.P), c.RunsOld, c.RunsNew)
	}
	return c.From + " → " + c.To
}

func pval(p *float64) string {
	if p == nil {
		return "—"
	}
	return fmt.Sprintf("%.2g", *p)
}

func stamp(r RunRef) string {
	return r.ID + " " + r.Time.UTC().Format("2006-01-02 15:04")
}

func fixtureMark(fx string) string {
	if fx == "" {
		return ""
	}
	return " (fixture: " + fx + ")"
}

func countOrDash(n int) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprint(n)
}

func list(vals []string) string {
	if len(vals) == 0 {
		return "unknown"
	}
	return strings.Join(vals, "; ")
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// modelPeakText is a target's mean model-attributable peak, with how many of its
// cells have one when not all do; "-" when none does (browser targets: the scope
// column says why).
func modelPeakText(s MemoryStat) string {
	switch {
	case s.ModelPeakCells == 0:
		return "-"
	case s.ModelPeakCells < s.Cells:
		return fmt.Sprintf("%s (%d cells)", result.FormatMiB(s.MeanModelPeakBytes), s.ModelPeakCells)
	}
	return result.FormatMiB(s.MeanModelPeakBytes)
}
