package htmlreport

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/hwtest/hwtest/result"
)

// Charts are drawn by gonum/plot into SVG and inlined in the page. Their text uses
// Liberation Sans, the font the page embeds (the SVG names it; the page's
// @font-face supplies it), so gonum's text measurements hold in the browser.

// chartFont is the typeface of every chart's text.
var chartFont = font.Font{Typeface: "Liberation", Variant: "Sans"}

// targetColors give each target its colour, by its index in the matrix's targets,
// in every chart and legend.
var targetColors = []string{
	"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1",
	"#ff9da7", "#9c755f", "#79706e", "#1f77b4", "#17becf", "#bcbd22", "#8c564b",
}

// statusColors match the heatmap's classes (page.css).
var statusColors = map[result.Status]string{
	result.StatusPass:         "#2e9d4f",
	result.StatusPartial:      "#a5d46a",
	result.StatusCPUOnly:      "#8fb8c9", // not green: the target's EP did none of the work
	result.StatusMismatch:     "#f0a202",
	result.StatusError:        "#d64545",
	result.StatusUnavailable:  "#c4c4c4",
	result.StatusExpectedFail: "#8e6cc8",
}

var glyphs = []draw.GlyphDrawer{
	draw.CircleGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{}, draw.PyramidGlyph{},
	draw.RingGlyph{}, draw.BoxGlyph{}, draw.CrossGlyph{}, draw.PlusGlyph{},
}

func hexColor(s string) color.Color {
	var r, g, b uint8
	fmt.Sscanf(s, "#%02x%02x%02x", &r, &g, &b)
	return color.RGBA{r, g, b, 255}
}

func statusColor(s result.Status) color.Color {
	if c, ok := statusColors[s]; ok {
		return hexColor(c)
	}
	return hexColor(statusColors[result.StatusError])
}

// newPlot is a plot with the charts' font everywhere.
func newPlot(title, xLabel string) *plot.Plot {
	p := plot.New()
	for _, s := range []*font.Font{&p.Title.TextStyle.Font, &p.X.Label.TextStyle.Font, &p.Y.Label.TextStyle.Font,
		&p.X.Tick.Label.Font, &p.Y.Tick.Label.Font, &p.Legend.TextStyle.Font} {
		size := s.Size
		*s = chartFont
		s.Size = size
	}
	p.Title.Text = title
	p.X.Label.Text = xLabel
	p.X.Tick.Label.Font.Size = 9
	p.Y.Tick.Label.Font.Size = 9
	p.Title.TextStyle.Font.Size = 11
	p.X.Label.TextStyle.Font.Size = 10
	p.Add(plotter.NewGrid())
	return p
}

// svg draws a plot w × h points as an SVG element (without the XML prologue, which
// an HTML page does not take).
func svg(p *plot.Plot, w, h vg.Length) (string, error) {
	c := vgsvg.New(w, h)
	p.Draw(draw.New(c))
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return "", err
	}
	s := b.String()
	if i := strings.Index(s, "<svg"); i >= 0 {
		s = s[i:]
	}
	return s, nil
}

// logRange sets a log axis to whole decades around the values, so it always has
// labelled ticks.
func logRange(a *plot.Axis, lo, hi float64) {
	if lo <= 0 || hi <= 0 || math.IsInf(lo, 0) {
		lo, hi = 1, 10
	}
	a.Scale = plot.LogScale{}
	a.Tick.Marker = plot.LogTicks{Prec: -1}
	// A value on a decade gets the decade beyond it, so it does not sit on the
	// axis's edge.
	a.Min = math.Pow(10, math.Floor(math.Log10(lo)-1e-9))
	a.Max = math.Pow(10, math.Ceil(math.Log10(hi)+1e-9))
	if a.Max <= a.Min {
		a.Max = a.Min * 10
	}
}

// rowPoint is one target's value in a row of a per-row chart.
type rowPoint struct {
	row    int
	target int // index into the targets, for colour and offset
	x      float64
	// lo and hi end a thin capped whisker (p99, or a group's extremes), p90 a thick
	// one; each is drawn when it lies away from x.
	lo, hi, p90 float64
}

// rowsChart draws models as rows and each target's value as a coloured glyph in its
// row (offset a little per target so that they do not hide each other), with
// optional whiskers: p90 (thick) and a thin capped one (p99, or a group's extremes). logX puts x on
// a log scale; ref draws a vertical line at that x (speedup 1×) when > 0.
func rowsChart(title, xLabel string, rows []string, targets []string, pts []rowPoint, logX bool, ref float64) (string, error) {
	p := newPlot(title, xLabel)
	n := len(rows)
	used := map[int]bool{}
	for _, pt := range pts {
		used[pt.target] = true
	}
	var order []int // targets present, in matrix order
	for i := range targets {
		if used[i] {
			order = append(order, i)
		}
	}
	slot := map[int]float64{}
	for k, ti := range order {
		if len(order) > 1 {
			slot[ti] = -0.3 + 0.6*float64(k)/float64(len(order)-1)
		}
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, ti := range order {
		var xys plotter.XYs
		var w90, w99 errPoints
		for _, pt := range pts {
			if pt.target != ti {
				continue
			}
			// Row 0 at the top: gonum's y grows upwards.
			y := float64(n-1-pt.row) - slot[ti]
			xys = append(xys, plotter.XY{X: pt.x, Y: y})
			lo, hi = math.Min(lo, pt.x), math.Max(hi, pt.x)
			if pt.p90 > pt.x {
				w90.XYs = append(w90.XYs, plotter.XY{X: pt.x, Y: y})
				w90.XErrors = append(w90.XErrors, struct{ Low, High float64 }{0, pt.p90 - pt.x})
			}
			lo99, hi99 := pt.x, pt.x
			if pt.lo > 0 && pt.lo < pt.x {
				lo99 = pt.lo
			}
			if pt.hi > pt.x {
				hi99 = pt.hi
			}
			if lo99 < pt.x || hi99 > pt.x {
				w99.XYs = append(w99.XYs, plotter.XY{X: pt.x, Y: y})
				w99.XErrors = append(w99.XErrors, struct{ Low, High float64 }{pt.x - lo99, hi99 - pt.x})
				lo, hi = math.Min(lo, lo99), math.Max(hi, hi99)
			}
		}
		col := hexColor(targetColors[ti%len(targetColors)])
		if len(w99.XYs) > 0 {
			bars, err := plotter.NewXErrorBars(w99)
			if err != nil {
				return "", err
			}
			bars.LineStyle.Color, bars.LineStyle.Width, bars.CapWidth = col, vg.Points(0.7), vg.Points(4)
			p.Add(bars)
		}
		if len(w90.XYs) > 0 {
			bars, err := plotter.NewXErrorBars(w90)
			if err != nil {
				return "", err
			}
			bars.LineStyle.Color, bars.LineStyle.Width, bars.CapWidth = col, vg.Points(2.2), 0
			p.Add(bars)
		}
		sc, err := plotter.NewScatter(xys)
		if err != nil {
			return "", err
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: col, Radius: vg.Points(3), Shape: glyphs[ti%len(glyphs)]}
		p.Add(sc)
	}
	if ref > 0 {
		lo, hi = math.Min(lo, ref), math.Max(hi, ref)
		line, err := plotter.NewLine(plotter.XYs{{X: ref, Y: -0.5}, {X: ref, Y: float64(n) - 0.5}})
		if err != nil {
			return "", err
		}
		line.LineStyle.Color, line.LineStyle.Dashes = color.Gray{Y: 90}, []vg.Length{vg.Points(4), vg.Points(3)}
		p.Add(line)
	}
	if logX {
		logRange(&p.X, lo, hi)
	} else {
		p.X.Min, p.X.Max = 0, hi*1.05
	}
	names := make([]string, n)
	for i, r := range rows {
		names[n-1-i] = r
	}
	p.NominalY(names...)
	p.Y.Min, p.Y.Max = -0.6, float64(n)-0.4
	height := vg.Points(70 + 13*float64(n)*math.Max(1, float64(len(order))/3))
	return svg(p, vg.Points(640), height)
}

type errPoints struct {
	plotter.XYs
	plotter.XErrors
}

// barsChart is a horizontal stacked bar per row: one segment per status.
func statusChart(title string, rows []string, counts []map[result.Status]int, statuses []result.Status) (string, error) {
	p := newPlot(title, "cells")
	n := len(rows)
	var below *plotter.BarChart
	maxTotal := 0.0
	for _, st := range statuses {
		vals := make(plotter.Values, n)
		for i := range rows {
			vals[n-1-i] = float64(counts[i][st])
		}
		bar, err := plotter.NewBarChart(vals, vg.Points(11))
		if err != nil {
			return "", err
		}
		bar.Horizontal = true
		bar.Color = statusColor(st)
		bar.LineStyle.Width = 0
		if below != nil {
			bar.StackOn(below)
		}
		below = bar
		p.Add(bar)
	}
	for i := range rows {
		t := 0.0
		for _, c := range counts[i] {
			t += float64(c)
		}
		maxTotal = math.Max(maxTotal, t)
	}
	names := make([]string, n)
	for i, r := range rows {
		names[n-1-i] = r
	}
	p.NominalY(names...)
	p.X.Min, p.X.Max = 0, math.Max(1, maxTotal)*1.02
	return svg(p, vg.Points(640), vg.Points(60+16*float64(n)))
}

// trendPoint is a run of a cell.
type trendPoint struct {
	x, y   float64 // run number, p50 (0: not measured)
	status result.Status
}

// trendChart is one cell's p50 over its runs: a line through the measured runs, a
// glyph per run in its status's colour (runs without a p50 sit on the axis), and a
// red triangle and dashed line at each regression, a green one at each improvement.
func trendChart(title string, pts []trendPoint, regressions, improvements []float64) (string, error) {
	p := newPlot(title, "run (oldest → newest)")
	p.Y.Label.Text = "p50 ms"
	p.Y.Label.TextStyle.Font.Size = 9
	var line plotter.XYs
	lo, hi := math.Inf(1), 0.0
	for _, pt := range pts {
		if pt.y > 0 {
			line = append(line, plotter.XY{X: pt.x, Y: pt.y})
			lo, hi = math.Min(lo, pt.y), math.Max(hi, pt.y)
		}
	}
	if hi == 0 {
		lo, hi = 0, 1
	}
	spread := hi - lo
	if spread <= 1e-9*hi {
		spread = math.Max(0.2*hi, 1e-3)
	}
	floor := lo - 0.08*spread
	if len(line) > 1 {
		l, err := plotter.NewLine(line)
		if err != nil {
			return "", err
		}
		l.LineStyle.Color, l.LineStyle.Width = color.Gray{Y: 120}, vg.Points(0.8)
		p.Add(l)
	}
	byStatus := map[result.Status]plotter.XYs{}
	var statuses []result.Status
	for _, pt := range pts {
		y := pt.y
		if y <= 0 {
			y = floor
		}
		if _, ok := byStatus[pt.status]; !ok {
			statuses = append(statuses, pt.status)
		}
		byStatus[pt.status] = append(byStatus[pt.status], plotter.XY{X: pt.x, Y: y})
	}
	for _, st := range statuses {
		sc, err := plotter.NewScatter(byStatus[st])
		if err != nil {
			return "", err
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: statusColor(st), Radius: vg.Points(2.6), Shape: draw.CircleGlyph{}}
		p.Add(sc)
	}
	top := hi + 0.12*spread
	for _, m := range []struct {
		xs  []float64
		col color.Color
		sh  draw.GlyphDrawer
	}{{regressions, hexColor("#d62728"), draw.PyramidGlyph{}}, {improvements, hexColor("#2ca02c"), draw.TriangleGlyph{}}} {
		for _, x := range m.xs {
			l, err := plotter.NewLine(plotter.XYs{{X: x - 0.5, Y: floor}, {X: x - 0.5, Y: top}})
			if err != nil {
				return "", err
			}
			l.LineStyle.Color, l.LineStyle.Width, l.LineStyle.Dashes = m.col, vg.Points(1), []vg.Length{vg.Points(3), vg.Points(2)}
			p.Add(l)
			sc, err := plotter.NewScatter(plotter.XYs{{X: x - 0.5, Y: top}})
			if err != nil {
				return "", err
			}
			sc.GlyphStyle = draw.GlyphStyle{Color: m.col, Radius: vg.Points(4), Shape: m.sh}
			p.Add(sc)
		}
	}
	p.X.Min, p.X.Max = 0.5, float64(len(pts))+0.5
	p.X.Tick.Marker = runTicks{}
	p.Y.Min, p.Y.Max = floor-0.04*spread, top+0.06*spread
	return svg(p, vg.Points(330), vg.Points(190))
}

// runTicks labels run numbers with whole numbers, about eight of them.
type runTicks struct{}

func (runTicks) Ticks(lo, hi float64) []plot.Tick {
	first, last := int(math.Ceil(lo)), int(math.Floor(hi))
	step := max(1, (last-first+1+7)/8)
	var ticks []plot.Tick
	for v := first; v <= last; v += step {
		ticks = append(ticks, plot.Tick{Value: float64(v), Label: fmt.Sprint(v)})
	}
	return ticks
}
