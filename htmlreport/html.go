// Package htmlreport renders the history's summaries (package analysis) and the
// current matrix as one self-contained HTML file: every style, script and font is
// inline and the page's Content-Security-Policy forbids loading anything, so opening
// it sends no request anywhere. The font (Liberation Sans, the charts' font) is
// given to the page by a script as bytes (the FontFace API), not as a data: URL,
// which Chromium would count as a request. Charts are drawn by gonum.org/v1/plot as SVG; the
// heatmap is an HTML table with a small script that shows a cell's details.
package htmlreport

import (
	"bytes"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"maps"
	"math"
	"slices"
	"strings"

	"codeberg.org/go-fonts/liberation/liberationsansregular"

	"github.com/hwtest/hwtest/analysis"
	"github.com/hwtest/hwtest/diagnose"
	"github.com/hwtest/hwtest/matrix"
	"github.com/hwtest/hwtest/result"
)

//go:embed page.tmpl
var pageTemplate string

//go:embed page.css
var pageCSS string

//go:embed page.js
var pageJS string

var tmpl = template.Must(template.New("page").Funcs(template.FuncMap{
	"ms": result.FormatMS, "mib": result.FormatMiB, "times": result.FormatTimes, "perSecond": result.FormatPerSecond, "pct": pct,
	"inc":    func(i int) int { return i + 1 },
	"plural": result.Plural,
	"count": func(m map[result.Status]int, s string) string {
		if n := m[result.Status(s)]; n > 0 {
			return fmt.Sprint(n)
		}
		return ""
	},
}).Parse(pageTemplate))

// MaxTrendCharts bounds the trend charts drawn: cells with a regression first, then
// other changes, then the rest. Every cell's trend is in the table below them.
const MaxTrendCharts = 48

// Input is what a report shows.
type Input struct {
	Title   string        // default "hwtest report"
	Current matrix.Matrix // the matrix the report describes
	Report  analysis.Report
	// Scoreboard is the conformance scoreboard; nil: the history has none (the
	// section says how to fill it).
	Scoreboard *Scoreboard
}

// Render writes the page. It renders everything in memory first, so w receives a
// whole page or nothing.
func Render(w io.Writer, in Input) error {
	p, err := build(in)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	if err := tmpl.Execute(&b, p); err != nil {
		return err
	}
	_, err = w.Write(b.Bytes())
	return err
}

// figure is a chart with its caption.
type figure struct {
	ID, Caption string
	SVG         template.HTML
}

type legendItem struct{ Class, Label string }

type page struct {
	Title, Lead, SummaryLine string
	CSS                      template.CSS
	Font                     template.JS // the base64 of Liberation Sans, as a JS string
	Script                   template.JS
	Cells                    template.JS // JSON of the heatmap's cells
	R                        analysis.Report

	Statuses      []legendItem
	TargetLegend  []legendItem
	CompatChart   figure
	Heat          heatmap
	Latency       []figure
	Throughput    []figure
	Memory        []figure
	SpeedupTarget *figure
	SpeedupFamily *figure
	SpeedupModel  []figure
	Trends        []figure
	TrendsDrawn   int
	MaxTrends     int
	TrendRows     []trendRow
	Changes       []changeRow
	Failures      []failureGroup
	SeverityLine  string
	Detection     []result.Detected
	Ops           *opsSection
}

type heatmap struct {
	Targets []string
	Rows    []heatRow
}

type heatRow struct {
	Model, Family, Fixture string
	Cells                  []heatCell
}

type heatCell struct {
	Class, Text string
	Index       int // into the cells JSON; -1: not run
}

type trendRow struct {
	Model, Target, Statuses, P50, Range, Changes, Chart string
	Runs, Regressions                                   int
}

type changeRow struct {
	Model, Target, RunID, Kind, Verdict, Text, Chart string
	Regressed                                        bool
}

type failureGroup struct {
	diagnose.Group
	Reasons []string
}

func build(in Input) (*page, error) {
	r := in.Report
	m := in.Current
	title := in.Title
	if title == "" {
		title = "hwtest report"
	}
	p := &page{
		Title:       title,
		SummaryLine: matrix.Matrix{Summary: r.Compatibility.Summary}.SummaryLine(),
		R:           r,
		CSS:         template.CSS(css(m.Targets)),
		Font:        template.JS(`"` + base64.StdEncoding.EncodeToString(liberationsansregular.TTF) + `"`),
		Script:      template.JS(pageJS),
		Detection:   r.Environment.Detection,
		MaxTrends:   MaxTrendCharts,
		Ops:         opsOf(in.Scoreboard),
	}
	p.Lead = fmt.Sprintf("%d models × %d targets: %s. Trends over %s.",
		len(modelsWithCells(m)), len(m.Targets), p.SummaryLine, result.Plural(r.Runs.Count, "run"))
	for _, st := range matrix.Statuses {
		p.Statuses = append(p.Statuses, legendItem{"s-" + string(st), string(st)})
	}
	for i, t := range m.Targets {
		p.TargetLegend = append(p.TargetLegend, legendItem{fmt.Sprintf("t%d", i%len(targetColors)), t})
	}
	var err error
	if p.CompatChart, err = compatFigure(r, m.Targets); err != nil {
		return nil, err
	}
	chartIDs := trendChartIDs(r.Trends)
	var cellsJSON []byte
	if p.Heat, cellsJSON, err = heat(m, r, chartIDs); err != nil {
		return nil, err
	}
	p.Cells = template.JS(cellsJSON)
	if err := perModelFigures(p, m, r); err != nil {
		return nil, err
	}
	if err := speedupFigures(p, m, r); err != nil {
		return nil, err
	}
	if err := trendFigures(p, r, chartIDs); err != nil {
		return nil, err
	}
	var sev []string
	for _, s := range diagnose.Severities {
		if n := r.Failures.BySeverity[s]; n > 0 {
			sev = append(sev, fmt.Sprintf("%d %s", n, s))
		}
	}
	p.SeverityLine = fmt.Sprintf("%s: %s.", result.Plural(r.Failures.Total, "finding"), strings.Join(sev, ", "))
	for _, g := range r.Failures.Groups {
		fg := failureGroup{Group: g}
		seen := map[string]bool{}
		for _, f := range g.Findings {
			who := f.Target
			if f.Model != "" {
				who = f.Model + " on " + f.Target
			}
			reason := strings.Join(strings.Fields(f.Reason), " ")
			if seen[reason] {
				continue
			}
			seen[reason] = true
			if len(fg.Reasons) == 5 {
				fg.Reasons = append(fg.Reasons, fmt.Sprintf("… and more (%d occurrences in all)", g.Count))
				break
			}
			fg.Reasons = append(fg.Reasons, who+": "+truncate(reason, 400))
		}
		p.Failures = append(p.Failures, fg)
	}
	return p, nil
}

// css is the page's style: the target and status colours as classes, and page.css.
func css(targets []string) string {
	var b strings.Builder
	for i := range targetColors {
		fmt.Fprintf(&b, ".t%d{background:%s}\n", i, targetColors[i])
	}
	for _, st := range matrix.Statuses {
		fmt.Fprintf(&b, ".s-%s{background:%s}\n", st, statusColors[st])
	}
	for _, c := range supportColors {
		fmt.Fprintf(&b, ".o-%s{background:%s}\n", c.Support, c.Color)
	}
	b.WriteString(pageCSS)
	return b.String()
}

func modelsWithCells(m matrix.Matrix) []string {
	var out []string
	seen := map[string]bool{}
	for _, c := range m.Cells {
		if !seen[c.Model] {
			seen[c.Model] = true
			out = append(out, c.Model)
		}
	}
	return out
}

func compatFigure(r analysis.Report, targets []string) (figure, error) {
	var rows []string
	var counts []map[result.Status]int
	for _, s := range r.Compatibility.ByTarget {
		rows = append(rows, s.Name)
		counts = append(counts, s.Counts)
	}
	if len(rows) == 0 {
		return figure{}, nil
	}
	svg, err := statusChart("Cells per status on each target", rows, counts, matrix.Statuses)
	return figure{ID: "chart-compat", Caption: "Statuses per target (current matrix).", SVG: template.HTML(svg)}, err
}

// cellJSON is a heatmap cell's details; strings are indices into the page's string
// table (reasons and provenance repeat across cells).
type cellJSON struct {
	Model    int     `json:"m"`
	Target   int     `json:"t"`
	Status   int     `json:"s"`
	Reason   int     `json:"r,omitempty"`
	Explain  int     `json:"ex,omitempty"` // where a mismatch was traced: "first divergence: node …"
	Cause    int     `json:"c,omitempty"`
	Fixture  int     `json:"fx,omitempty"`
	Fallback int     `json:"fb,omitempty"`
	Load     float64 `json:"load,omitempty"`
	P50      float64 `json:"p50,omitempty"`
	P90      float64 `json:"p90,omitempty"`
	P99      float64 `json:"p99,omitempty"`
	Thr      float64 `json:"thr,omitempty"`
	RSS      int64   `json:"rss,omitempty"`
	Scope    int     `json:"scope,omitempty"`
	MP       int64   `json:"mp,omitempty"`  // model-attributable peak
	MPScope  int     `json:"mps,omitempty"` // what it counts, or why it is absent
	Place    int     `json:"pl,omitempty"`
	Run      int     `json:"run,omitempty"`
	At       string  `json:"at,omitempty"`
	Prov     []int   `json:"pv,omitempty"` // provenance: indices of ORT, library sha, EP, options, host CPU, device, driver, model sha, code, catalog
	Runs     int     `json:"n,omitempty"`  // runs of the cell in the history
	Changes  []int   `json:"ch,omitempty"`
	Chart    string  `json:"tr,omitempty"` // the id of its trend chart, when drawn
}

// strtab interns strings; index 0 is "".
type strtab struct {
	list  []string
	index map[string]int
}

func (s *strtab) id(v string) int {
	if v == "" {
		return 0
	}
	if i, ok := s.index[v]; ok {
		return i
	}
	s.list = append(s.list, v)
	s.index[v] = len(s.list) - 1
	return len(s.list) - 1
}

func heat(m matrix.Matrix, r analysis.Report, chartIDs map[string]string) (heatmap, []byte, error) {
	h := heatmap{Targets: m.Targets}
	strs := &strtab{list: []string{""}, index: map[string]int{"": 0}}
	trends := map[string]analysis.Trend{}
	for _, t := range r.Trends {
		trends[t.Model+"\x00"+t.Target] = t
	}
	byKey := map[string]matrix.Cell{}
	for _, c := range m.Cells {
		byKey[c.Model+"\x00"+c.Target] = c
	}
	var cells []cellJSON
	for _, model := range modelsWithCells(m) {
		row := heatRow{Model: model}
		for _, target := range m.Targets {
			c, ok := byKey[model+"\x00"+target]
			if !ok {
				row.Cells = append(row.Cells, heatCell{Class: "none", Index: -1})
				continue
			}
			if row.Family == "" {
				row.Family = c.Family
			}
			if c.Fixture != "" {
				row.Fixture = c.Fixture
			}
			j := cellJSON{Model: strs.id(c.Model), Target: strs.id(c.Target), Status: strs.id(string(c.Status)),
				Reason: strs.id(truncate(c.Reason, 1500)), Explain: strs.id(c.Explain), Cause: strs.id(string(c.Cause)), Fixture: strs.id(c.Fixture),
				Run: strs.id(c.RunID)}
			fb := c.Fallback
			if c.FallsBackTo != "" {
				fb = c.FallsBackTo + " (that column's results are not this target's)"
			}
			j.Fallback = strs.id(fb)
			if !c.RunTime.IsZero() {
				j.At = c.RunTime.UTC().Format("2006-01-02 15:04 UTC")
			}
			text := shortStatus(c.Status)
			if mt := c.Metrics; mt != nil {
				j.Load, j.P50, j.P90, j.P99, j.Thr, j.RSS = round(mt.LoadMS), round(mt.P50MS), round(mt.P90MS), round(mt.P99MS), round(mt.ThroughputPerS), mt.PeakRSSBytes
				j.Scope = strs.id(mt.PeakRSSScope)
				j.MP, j.MPScope = mt.ModelPeakBytes, strs.id(mt.ModelPeakScope)
				if c.Status.Agreed() {
					text = result.FormatMS(mt.P50MS)
				}
			}
			if pv := c.Provenance; pv != nil {
				if c.Placement != nil {
					j.Place = strs.id(placementText(*c.Placement))
				}
				var opts []string
				for _, k := range slices.Sorted(maps.Keys(pv.Options)) {
					opts = append(opts, k+"="+pv.Options[k])
				}
				j.Prov = []int{strs.id(pv.ORTVersion), strs.id(pv.ORTLibSHA256), strs.id(pv.Provider), strs.id(strings.Join(opts, ", ")),
					strs.id(pv.HostCPU), strs.id(pv.Device), strs.id(pv.Driver), strs.id(pv.ModelSHA256), strs.id(pv.CodeCommit), strs.id(pv.CatalogCommit)}
			}
			if t, ok := trends[model+"\x00"+target]; ok {
				j.Runs = len(t.Points)
				for _, ch := range t.Changes {
					j.Changes = append(j.Changes, strs.id(ch.Verdict()+" from run "+ch.RunID+": "+ch.Describe()))
				}
				j.Chart = chartIDs[model+"\x00"+target]
			}
			class := "s-" + string(c.Status)
			if c.Fixture != "" {
				class += " fx"
			}
			if c.Status == result.StatusPass && c.Reason != "" {
				class += " flag" // an unexpected pass
			}
			row.Cells = append(row.Cells, heatCell{Class: class, Text: text, Index: len(cells)})
			cells = append(cells, j)
		}
		h.Rows = append(h.Rows, row)
	}
	data, err := json.Marshal(struct {
		S     []string   `json:"s"`
		Cells []cellJSON `json:"cells"`
	}{strs.list, cells})
	return h, data, err
}

// placementText is where a cell's nodes ran, per execution provider, the most
// first: "WebGpu 175 of 226 nodes (77%), CPU 51 (23%)". It names every provider
// rather than picking the target's: browser cells record onnxruntime-web's EP
// names ("webgpu") in their provenance and ONNX Runtime's ("WebGpuExecutionProvider")
// in their placement.
func placementText(p result.Placement) string {
	names := slices.Collect(maps.Keys(p.ByProvider))
	slices.SortFunc(names, func(a, b string) int {
		if d := p.ByProvider[b].Nodes - p.ByProvider[a].Nodes; d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	var parts []string
	for i, name := range names {
		sh := p.ByProvider[name]
		short := strings.TrimSuffix(name, "ExecutionProvider")
		if short == "Js" {
			short = "WebGPU (JSEP)"
		}
		var text string
		switch {
		case sh.Partitions > 0:
			text = fmt.Sprintf("%s %d compiled partition(s) (the nodes inside are not logged)", short, sh.Partitions)
		case i == 0:
			text = fmt.Sprintf("%s %d of %d nodes (%s)", short, sh.Nodes, p.Nodes, pct(sh.Nodes, p.Nodes))
		default:
			text = fmt.Sprintf("%s %d (%s)", short, sh.Nodes, pct(sh.Nodes, p.Nodes))
		}
		if p.TimeUS > 0 {
			text += fmt.Sprintf(", %s of kernel time", pct(int(sh.TimeUS), int(p.TimeUS)))
		}
		parts = append(parts, text)
	}
	return strings.Join(parts, "; ")
}

// round keeps four significant digits: the page shows three.
func round(v float64) float64 {
	if v == 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0
	}
	scale := math.Pow(10, 3-math.Floor(math.Log10(math.Abs(v))))
	return math.Round(v*scale) / scale
}

func shortStatus(s result.Status) string {
	switch s {
	case result.StatusUnavailable:
		return "–"
	case result.StatusError:
		return "err"
	case result.StatusMismatch:
		return "≠"
	case result.StatusExpectedFail:
		return "xf"
	}
	return string(s)
}

// perModelFigures draws, per family, latency (p50 with p90/p99 whiskers),
// throughput and peak memory of each model on each target.
func perModelFigures(p *page, m matrix.Matrix, r analysis.Report) error {
	targetIndex := map[string]int{}
	for i, t := range m.Targets {
		targetIndex[t] = i
	}
	families := map[string][]matrix.Cell{}
	var order []string
	for _, c := range m.Cells {
		if !analysis.Timed(c) {
			continue
		}
		if _, ok := families[c.Family]; !ok {
			order = append(order, c.Family)
		}
		families[c.Family] = append(families[c.Family], c)
	}
	for fi, f := range order {
		cells := families[f]
		var rows []string
		rowOf := map[string]int{}
		for _, c := range cells {
			if _, ok := rowOf[c.Model]; !ok {
				rowOf[c.Model] = len(rows)
				rows = append(rows, c.Model+fixtureMark(c.Fixture))
			}
		}
		var lat, thr, mem []rowPoint
		for _, c := range cells {
			row, ti, mt := rowOf[c.Model], targetIndex[c.Target], c.Metrics
			lat = append(lat, rowPoint{row: row, target: ti, x: mt.P50MS, p90: mt.P90MS, hi: mt.P99MS})
			if mt.ThroughputPerS > 0 {
				thr = append(thr, rowPoint{row: row, target: ti, x: mt.ThroughputPerS})
			}
			if mt.PeakRSSBytes > 0 {
				mem = append(mem, rowPoint{row: row, target: ti, x: float64(mt.PeakRSSBytes) / (1 << 20)})
			}
		}
		name := result.NameOr(f)
		for _, c := range []struct {
			list    *[]figure
			id      string
			title   string
			xLabel  string
			caption string
			pts     []rowPoint
			logX    bool
		}{
			{&p.Latency, "latency", "Latency: " + name, "p50 ms (log scale); whiskers: p90 (thick), p99 (thin)",
				"Latency of each " + name + " model on each target: p50, with p90 and p99 whiskers.", lat, true},
			{&p.Throughput, "throughput", "Throughput: " + name, "inferences per second (log scale)",
				"Throughput of each " + name + " model on each target (batch / mean latency).", thr, true},
			{&p.Memory, "memory", "Peak memory: " + name, "peak RSS MiB",
				"Peak resident memory of each " + name + " model on each target (native targets: the suite process; browser targets: Chromium's processes).", mem, false},
		} {
			if len(c.pts) == 0 {
				continue
			}
			svg, err := rowsChart(c.title, c.xLabel, rows, m.Targets, c.pts, c.logX, 0)
			if err != nil {
				return err
			}
			*c.list = append(*c.list, figure{ID: fmt.Sprintf("chart-%s-%d", c.id, fi), Caption: c.caption, SVG: template.HTML(svg)})
		}
	}
	return nil
}

func speedupFigures(p *page, m matrix.Matrix, r analysis.Report) error {
	sp := r.Speedup
	if len(sp.ByTarget) == 0 {
		return nil
	}
	targetIndex := map[string]int{}
	for i, t := range m.Targets {
		targetIndex[t] = i
	}
	xLabel := fmt.Sprintf("speedup over %s (log scale; right of the dashed line: faster than %s)", sp.Baseline, sp.Baseline)
	var rows []string
	var pts []rowPoint
	for i, s := range sp.ByTarget {
		rows = append(rows, s.Target)
		pts = append(pts, rowPoint{row: i, target: targetIndex[s.Target], x: s.GeoMean, lo: s.Min.Speedup, hi: s.Max.Speedup})
	}
	svg, err := rowsChart("Speedup over "+sp.Baseline+" per target", xLabel, rows, m.Targets, pts, true, 1)
	if err != nil {
		return err
	}
	p.SpeedupTarget = &figure{ID: "chart-speedup-target", Caption: "Geometric mean of each target's speedups over " + sp.Baseline + ", the whisker spanning its slowest to its fastest model.", SVG: template.HTML(svg)}

	rows, pts = nil, nil
	for i, s := range sp.ByFamily {
		rows = append(rows, result.NameOr(s.Family)+" · "+s.Target)
		pts = append(pts, rowPoint{row: i, target: targetIndex[s.Target], x: s.GeoMean, lo: s.Min.Speedup, hi: s.Max.Speedup})
	}
	if svg, err = rowsChart("Speedup over "+sp.Baseline+" per family and target", xLabel, rows, m.Targets, pts, true, 1); err != nil {
		return err
	}
	p.SpeedupFamily = &figure{ID: "chart-speedup-family", Caption: "Geometric mean of the speedups of each family on each target.", SVG: template.HTML(svg)}

	var families []string
	byFamily := map[string][]analysis.SpeedupCell{}
	for _, s := range sp.ByModel {
		if _, ok := byFamily[s.Family]; !ok {
			families = append(families, s.Family)
		}
		byFamily[s.Family] = append(byFamily[s.Family], s)
	}
	for fi, f := range families {
		rows, pts = nil, nil
		rowOf := map[string]int{}
		for _, s := range byFamily[f] {
			if _, ok := rowOf[s.Model]; !ok {
				rowOf[s.Model] = len(rows)
				rows = append(rows, s.Model+fixtureMark(s.Fixture))
			}
			pts = append(pts, rowPoint{row: rowOf[s.Model], target: targetIndex[s.Target], x: s.Speedup})
		}
		if svg, err = rowsChart("Speedup over "+sp.Baseline+": "+result.NameOr(f), xLabel, rows, m.Targets, pts, true, 1); err != nil {
			return err
		}
		p.SpeedupModel = append(p.SpeedupModel, figure{ID: fmt.Sprintf("chart-speedup-model-%d", fi),
			Caption: "Speedup over " + sp.Baseline + " of each " + result.NameOr(f) + " model on each target: " + sp.Baseline + " p50 / the target's p50.", SVG: template.HTML(svg)})
	}
	return nil
}

func trendKey(t analysis.Trend) string { return t.Model + "\x00" + t.Target }

// trendChartIDs picks the trends that get a chart: regressions first, then other
// changes, then cells measured in more than one run, up to MaxTrendCharts.
func trendChartIDs(trends []analysis.Trend) map[string]string {
	var picked []analysis.Trend
	for _, pass := range []func(analysis.Trend) bool{
		func(t analysis.Trend) bool { return t.Regressions() > 0 },
		func(t analysis.Trend) bool { return t.Regressions() == 0 && len(t.Changes) > 0 },
		func(t analysis.Trend) bool { return len(t.Changes) == 0 && measuredPoints(t) > 1 },
	} {
		for _, t := range trends {
			if len(picked) < MaxTrendCharts && pass(t) {
				picked = append(picked, t)
			}
		}
	}
	ids := map[string]string{}
	for i, t := range picked {
		ids[trendKey(t)] = fmt.Sprintf("trend-%d", i)
	}
	return ids
}

func measuredPoints(t analysis.Trend) int {
	n := 0
	for _, p := range t.Points {
		if p.P50MS > 0 {
			n++
		}
	}
	return n
}

func trendFigures(p *page, r analysis.Report, ids map[string]string) error {
	type drawn struct {
		id string
		t  analysis.Trend
	}
	var charts []drawn
	for _, t := range r.Trends {
		if id, ok := ids[trendKey(t)]; ok {
			charts = append(charts, drawn{id, t})
		}
	}
	slices.SortFunc(charts, func(a, b drawn) int { return cmpID(a.id, b.id) })
	for _, d := range charts {
		t := d.t
		var pts []trendPoint
		for i, pt := range t.Points {
			pts = append(pts, trendPoint{x: float64(i + 1), y: pt.P50MS, status: pt.Status})
		}
		var reg, imp []float64
		for _, c := range t.Changes {
			if c.Kind != analysis.ChangeLatency && c.Kind != analysis.ChangeStatus {
				continue
			}
			if c.Regressed {
				reg = append(reg, float64(c.At+1))
			} else {
				imp = append(imp, float64(c.At+1))
			}
		}
		svg, err := trendChart(t.Model+" on "+t.Target, pts, reg, imp)
		if err != nil {
			return err
		}
		caption := fmt.Sprintf("%s on %s: p50 in each of its %d runs, coloured by status.", t.Model, t.Target, len(t.Points))
		if n := t.Regressions(); n > 0 {
			caption += fmt.Sprintf(" %s marked in red.", result.Plural(n, "regression"))
		}
		p.Trends = append(p.Trends, figure{ID: d.id, Caption: caption, SVG: template.HTML(svg)})
	}
	p.TrendsDrawn = len(charts)
	for _, t := range r.Trends {
		for _, c := range t.Changes {
			p.Changes = append(p.Changes, changeRow{Model: t.Model, Target: t.Target, RunID: c.RunID, Kind: c.Kind,
				Verdict: c.Verdict(), Text: c.Describe(), Chart: ids[trendKey(t)], Regressed: c.Regressed})
		}
		if measuredPoints(t) == 0 && len(t.Changes) == 0 {
			continue // never measured, never changed: its status per run is in the heatmap's history count
		}
		row := trendRow{Model: t.Model, Target: t.Target, Runs: len(t.Points), Statuses: statusRuns(t), Regressions: t.Regressions(),
			Chart: ids[trendKey(t)]}
		var p50s []float64
		for _, pt := range t.Points {
			if pt.P50MS > 0 {
				p50s = append(p50s, pt.P50MS)
			}
		}
		if len(p50s) > 0 {
			row.P50 = result.FormatMS(p50s[len(p50s)-1])
			row.Range = result.FormatMS(slices.Min(p50s)) + " – " + result.FormatMS(slices.Max(p50s))
		}
		var ch []string
		for _, c := range t.Changes {
			ch = append(ch, c.Verdict()+" "+c.Kind)
		}
		row.Changes = strings.Join(ch, ", ")
		p.TrendRows = append(p.TrendRows, row)
	}
	return nil
}

func cmpID(a, b string) int {
	var x, y int
	fmt.Sscanf(a, "trend-%d", &x)
	fmt.Sscanf(b, "trend-%d", &y)
	return x - y
}

// statusRuns compresses a trend's statuses: "pass ×10, mismatch, pass ×3".
func statusRuns(t analysis.Trend) string {
	var parts []string
	for i := 0; i < len(t.Points); {
		j := i
		for j < len(t.Points) && t.Points[j].Status == t.Points[i].Status {
			j++
		}
		s := string(t.Points[i].Status)
		if j-i > 1 {
			s += fmt.Sprintf(" ×%d", j-i)
		}
		parts = append(parts, s)
		i = j
	}
	return strings.Join(parts, ", ")
}

func pct(n, of int) string {
	if of == 0 {
		return ""
	}
	return fmt.Sprintf("%.0f%%", 100*float64(n)/float64(of))
}

func fixtureMark(fx string) string {
	if fx == "" {
		return ""
	}
	return " ◆"
}

func truncate(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
