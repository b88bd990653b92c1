package htmlreport_test

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/hwtest/hwtest/analysis"
	"github.com/hwtest/hwtest/browser"
	"github.com/hwtest/hwtest/conformance"
	"github.com/hwtest/hwtest/history"
	"github.com/hwtest/hwtest/htmlreport"
	"github.com/hwtest/hwtest/internal/histtest"
	"github.com/hwtest/hwtest/internal/testenv"
	"github.com/hwtest/hwtest/matrix"
	"github.com/hwtest/hwtest/result"
)

const root = ".."

// outDir keeps what a person may want to look at after the tests: the report of
// the recorded history and screenshots (git ignores it).
const outDir = "testdata/out"

func TestMain(m *testing.M) {
	code := m.Run()
	browser.CloseAll()
	os.Exit(code)
}

// recordedPage renders the report of every recorded run, as `hwtest report --html`
// does.
func recordedPage(t *testing.T, edit ...func(*matrix.Matrix)) ([]byte, matrix.Matrix, analysis.Report) {
	t.Helper()
	files, err := histtest.Recorded(root)
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range files {
		files[i] = filepath.Join(root, f)
	}
	path := filepath.Join(t.TempDir(), "history.duckdb")
	histtest.Import(t, path, files...)
	return render(t, path, edit...)
}

func render(t testing.TB, path string, edit ...func(*matrix.Matrix)) ([]byte, matrix.Matrix, analysis.Report) {
	t.Helper()
	models, targets := catalogOrder(t)
	current, runs := histtest.Load(t, path, models, targets)
	for _, e := range edit {
		e(&current)
	}
	r := analysis.Analyze(current, runs, analysis.Options{})
	var b bytes.Buffer
	if err := htmlreport.Render(&b, htmlreport.Input{Current: current, Report: r}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes(), current, r
}

// catalogOrder is the catalog's order of models and targets, as a recorded run of
// every target lists it.
func catalogOrder(t testing.TB) (models, targets []string) {
	files, _ := filepath.Glob(filepath.Join(root, histtest.FullRuns))
	if len(files) == 0 {
		t.Fatal("no recorded full run")
	}
	m, _, err := histtest.Read(files[0])
	if err != nil {
		t.Fatal(err)
	}
	return m.Models, m.Targets
}

// tab is a page in the project's headless Chromium with everything it did
// recorded: every request the browser was about to send and every console error,
// warning, uncaught exception and log entry (a CSP violation is one).
type tab struct {
	ctx      context.Context
	mu       sync.Mutex
	requests []string
	problems []string
}

func openTab(t *testing.T) *tab {
	t.Helper()
	b, err := browser.Shared(browser.Config{}, false)
	testenv.Need(t, "chromium (make setup)", err)
	ctx, cancel, err := b.Tab()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cancel)
	tb := &tab{ctx: ctx}
	err = chromedp.Listen(ctx, func(ev any) {
		tb.mu.Lock()
		defer tb.mu.Unlock()
		switch e := ev.(type) {
		case *network.EventRequestWillBeSent:
			tb.requests = append(tb.requests, e.Request.URL)
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError || e.Type == runtime.ConsoleAPICalledTypeWarning || e.Type == runtime.ConsoleAPICalledTypeAssert {
				var args []string
				for _, a := range e.Args {
					args = append(args, string(a.Value)+a.Description)
				}
				tb.problems = append(tb.problems, fmt.Sprintf("console.%s: %s", e.Type, strings.Join(args, " ")))
			}
		case *runtime.EventExceptionThrown:
			d := e.ExceptionDetails
			msg := d.Text
			if d.Exception != nil {
				msg += " " + d.Exception.Description
			}
			tb.problems = append(tb.problems, "exception: "+msg)
		case *log.EventEntryAdded:
			if e.Entry.Level == log.EntryLevelError || e.Entry.Level == log.EntryLevelWarning {
				tb.problems = append(tb.problems, fmt.Sprintf("log %s (%s): %s %s", e.Entry.Level, e.Entry.Source, e.Entry.Text, e.Entry.URL))
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

// load opens file in the tab and returns how long it took: from the navigation
// until the load event, with every chart and the heatmap laid out (measured again
// after a forced layout, since the load event does not wait for layout).
func (tb *tab) load(t *testing.T, file string) time.Duration {
	t.Helper()
	abs, err := filepath.Abs(file)
	if err != nil {
		t.Fatal(err)
	}
	u := url.URL{Scheme: "file", Path: abs}
	ctx, cancel := context.WithTimeout(tb.ctx, time.Minute)
	defer cancel()
	start := time.Now()
	if err := chromedp.Do(ctx, chromedp.Navigate(u.String())); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`document.body.getBoundingClientRect().height`)); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	tb.mu.Lock()
	defer tb.mu.Unlock()
	// The one request allowed is the page itself.
	var others []string
	for _, r := range tb.requests {
		if r != u.String() {
			others = append(others, truncate(r, 120))
		}
	}
	tb.requests = others
	return took
}

// check fails t on any request but the page's and on any console problem.
func (tb *tab) check(t *testing.T) {
	t.Helper()
	tb.mu.Lock()
	defer tb.mu.Unlock()
	if len(tb.requests) > 0 {
		t.Errorf("the page sent %d requests: %v", len(tb.requests), tb.requests)
	}
	if len(tb.problems) > 0 {
		t.Errorf("console errors and warnings: %v", tb.problems)
	}
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

type chartInfo struct {
	ID    string  `json:"id"`
	SVG   bool    `json:"svg"`
	W     float64 `json:"w"`
	H     float64 `json:"h"`
	Marks int     `json:"marks"`
}

type pageInfo struct {
	Charts    []chartInfo `json:"charts"`
	HeatRows  int         `json:"heatRows"`
	HeatCols  int         `json:"heatCols"`
	HeatCells int         `json:"heatCells"`
	Font      bool        `json:"font"`
	LoadEnd   float64     `json:"loadEnd"`
}

const inspect = `(async () => {
  await document.fonts.ready;
  const charts = [...document.querySelectorAll("figure.chart")].map(f => {
    const s = f.querySelector("svg");
    const r = s ? s.getBoundingClientRect() : {width: 0, height: 0};
    return {id: f.id, svg: !!s, w: r.width, h: r.height, marks: s ? s.querySelectorAll("path, text").length : 0};
  });
  return {
    charts,
    heatRows: document.querySelectorAll("#heat tbody tr").length,
    heatCols: document.querySelectorAll("#heat thead th").length - 1,
    heatCells: document.querySelectorAll("#heat td[data-i]").length,
    font: document.fonts.check("12px 'Liberation Sans'") && [...document.fonts].some(f => f.family.includes("Liberation Sans") && f.status === "loaded"),
    loadEnd: performance.getEntriesByType("navigation")[0].loadEventEnd,
  };
})()`

var figureID = regexp.MustCompile(`<figure class="chart[^"]*" id="([^"]+)"`)

// checkCharts: every chart the HTML holds is in the page as an SVG of non-zero
// size with marks drawn in it.
func checkCharts(t *testing.T, html []byte, info pageInfo) {
	t.Helper()
	var want []string
	for _, m := range figureID.FindAllSubmatch(html, -1) {
		want = append(want, string(m[1]))
	}
	got := map[string]chartInfo{}
	for _, c := range info.Charts {
		got[c.ID] = c
	}
	if len(info.Charts) != len(want) {
		t.Errorf("%d charts in the page, %d in the HTML", len(info.Charts), len(want))
	}
	for _, id := range want {
		c, ok := got[id]
		if !ok || !c.SVG || c.W < 100 || c.H < 50 || c.Marks < 10 {
			t.Errorf("chart %s did not render: %+v", id, c)
		}
	}
}

func inspectPage(t *testing.T, tb *tab) pageInfo {
	t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, time.Minute)
	defer cancel()
	info, err := chromedp.Run(ctx, chromedp.Evaluate[pageInfo](inspect, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	return info
}

func screenshot(t *testing.T, tb *tab, name string, full bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, time.Minute)
	defer cancel()
	var png []byte
	var err error
	if full {
		png, err = chromedp.Run(ctx, chromedp.FullScreenshot(100))
	} else {
		png, err = chromedp.Run(ctx, chromedp.CaptureScreenshot())
	}
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Fatalf("%s is not a PNG", name)
	}
	path := filepath.Join(outDir, name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs(path)
	t.Logf("screenshot: %s (%d KiB)", abs, len(png)>>10)
}

// The report of every recorded run, opened in the project's headless Chromium:
// every chart rendered, the heatmap whole and its details working, not one request
// sent and not one console error. The page and screenshots stay in testdata/out.
// The recorded runs predate `hwtest explain`: the silero-vad-v5 mismatch on
// webgpu-native gets the line a run here traced it to, to see the details show it.
const sileroTrace = "first divergence: node If_0_then_branch__Inline_0__/encoder/0/reparam_conv/Conv (Conv), output If_0_then_branch__Inline_0__/encoder/0/reparam_conv/Conv_output_0, |error| 60.8; its inputs agree"

func TestReportInChromium(t *testing.T) {
	html, current, r := recordedPage(t, func(m *matrix.Matrix) {
		for i, c := range m.Cells {
			if c.Model == "silero-vad-v5" && c.Target == "webgpu-native" {
				m.Cells[i].Explain = sileroTrace
			}
		}
	})
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(outDir, "report.html")
	if err := os.WriteFile(file, html, 0o644); err != nil {
		t.Fatal(err)
	}
	tb := openTab(t)
	if err := chromedp.Do(tb.ctx, chromedp.EmulateViewport(1400, 1000)); err != nil {
		t.Fatal(err)
	}
	took := tb.load(t, file)
	info := inspectPage(t, tb)
	t.Logf("%d KiB loaded in %v (load event at %.0f ms); %d charts", len(html)>>10, took.Round(time.Millisecond), info.LoadEnd, len(info.Charts))

	checkCharts(t, html, info)
	for _, id := range []string{"chart-compat", "chart-latency-0", "chart-throughput-0", "chart-memory-0",
		"chart-speedup-target", "chart-speedup-family", "chart-speedup-model-0", "trend-0"} {
		if !bytes.Contains(html, []byte(`id="`+id+`"`)) {
			t.Errorf("no chart %s", id)
		}
	}
	models := map[string]bool{}
	for _, c := range current.Cells {
		models[c.Model] = true
	}
	if info.HeatRows != len(models) || info.HeatCols != len(current.Targets) || info.HeatCells != len(current.Cells) {
		t.Errorf("heatmap %d rows × %d targets with %d cells, want %d × %d with %d", info.HeatRows, info.HeatCols, info.HeatCells, len(models), len(current.Targets), len(current.Cells))
	}
	if !info.Font {
		t.Error("the embedded Liberation Sans is not in use")
	}

	// A cell's details: the mismatch of silero-vad-v5 on webgpu-native.
	ctx, cancel := context.WithTimeout(tb.ctx, time.Minute)
	defer cancel()
	detail, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(() => {
  const row = [...document.querySelectorAll("#heat tbody tr")].find(r => r.dataset.f.startsWith("silero-vad-v5 "));
  const col = [...document.querySelectorAll("#heat thead th")].findIndex(th => th.textContent === "webgpu-native");
  const td = row.children[col];
  td.scrollIntoView({block: "center"});
  td.click();
  const d = document.getElementById("detail");
  return d.hidden ? "" : d.innerText;
})()`))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"silero-vad-v5 on webgpu-native: mismatch", "outputs differ from the CPU reference", "p50", "p99", "MiB",
		"placement", "WebGpu", "1.30.0", "model sha256", "swiftshader", "history", "traced to", sileroTrace} {
		if !strings.Contains(detail, want) {
			t.Errorf("the details lack %q:\n%s", want, detail)
		}
	}
	screenshot(t, tb, "heatmap.png", false)

	// The filter keeps the matching models only.
	shown, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(() => {
  const f = document.getElementById("filter");
  f.value = "mamba";
  f.dispatchEvent(new Event("input"));
  const n = [...document.querySelectorAll("#heat tbody tr")].filter(r => !r.hidden).length;
  const text = document.getElementById("shown").textContent;
  f.value = "";
  f.dispatchEvent(new Event("input"));
  document.dispatchEvent(new KeyboardEvent("keydown", {key: "Escape"}));
  window.scrollTo(0, 0);
  return n + " " + text;
})()`))
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("1 1 of %d models", len(models)); shown != want {
		t.Errorf("filtering for mamba: %q, want %q", shown, want)
	}
	if len(r.Trends) == 0 {
		t.Error("no trends")
	}
	screenshot(t, tb, "report.png", true)
	tb.check(t)
}

// The page of 300 models × 14 targets × 50 runs loads in under 2 s in that
// Chromium. Its history is histtest.Scale's: copies of the three recorded runs of
// every target with the model ids renamed, so every number is a real measurement
// (copied), none is made up.
func TestScaleReportLoadsInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a history of 210,000 cells")
	}
	tb := openTab(t) // first, so a missing Chromium skips before the work
	dir := t.TempDir()
	path := filepath.Join(dir, "history.duckdb")
	histtest.Scale(t, path, root, 300, 50)
	start := time.Now()
	html, current, _ := render(t, path)
	t.Logf("analysed and rendered in %v", time.Since(start).Round(time.Millisecond))
	file := filepath.Join(dir, "report.html")
	if err := os.WriteFile(file, html, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(tb.ctx, chromedp.EmulateViewport(1400, 1000)); err != nil {
		t.Fatal(err)
	}
	took := tb.load(t, file)
	info := inspectPage(t, tb)
	t.Logf("%.1f MiB page of %d cells loaded in %v (load event at %.0f ms); %d charts",
		float64(len(html))/(1<<20), len(current.Cells), took.Round(time.Millisecond), info.LoadEnd, len(info.Charts))
	if took > 2*time.Second {
		t.Errorf("the page took %v to load, want < 2 s", took)
	}
	if info.HeatRows != 300 || info.HeatCols != 14 || info.HeatCells != 4200 {
		t.Errorf("heatmap %d × %d with %d cells, want 300 × 14 with 4200", info.HeatRows, info.HeatCols, info.HeatCells)
	}
	checkCharts(t, html, info)
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(tb.ctx, time.Minute)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(document.getElementById("heatmap").scrollIntoView(), true)`)); err != nil {
		t.Fatal(err)
	}
	screenshot(t, tb, "scale-heatmap.png", false)
	tb.check(t)
}

// A cell with a model-attributable peak shows it next to the process peak: in the
// memory table (the mean over the target's cells that have one), in the heaviest
// models, and in the cell's details; a browser cell says why it has none.
func TestModelPeakShown(t *testing.T) {
	cell := func(model, target string, peak, modelPeak int64, scope string) matrix.Cell {
		return matrix.Cell{Model: model, Family: "audio", Target: target, Status: result.StatusPass,
			Metrics: &result.Metrics{P50MS: 1, PeakRSSBytes: peak << 20, ModelPeakBytes: modelPeak << 20, ModelPeakScope: scope}}
	}
	m := matrix.Matrix{Models: []string{"vad"}, Targets: []string{"cpu", "wasm"}, Cells: []matrix.Cell{
		cell("vad", "cpu", 300, 209, "peak less the base"), cell("vad", "wasm", 500, 0, "not measured for browser targets"),
	}}
	r := analysis.Analyze(m, []matrix.Matrix{m}, analysis.Options{})
	var b bytes.Buffer
	if err := htmlreport.Render(&b, htmlreport.Input{Current: m, Report: r}); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	for _, want := range []string{"<th>model peak, mean</th>", "<td>209.0</td>", "vad 300.0 <small>(model 209.0)</small>"} {
		if !strings.Contains(html, want) {
			t.Errorf("the page lacks %q", want)
		}
	}

	dir := t.TempDir()
	file := filepath.Join(dir, "report.html")
	if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	tb := openTab(t)
	tb.load(t, file)
	for target, want := range map[string]string{"cpu": "model peak\n209.0 MiB (peak less the base)", "wasm": "model peak\nnot measured for browser targets"} {
		detail, err := chromedp.Run(tb.ctx, chromedp.Evaluate[string](`(() => {
  const col = [...document.querySelectorAll("#heat thead th")].findIndex(th => th.textContent === "`+target+`");
  const td = document.querySelector("#heat tbody tr").children[col];
  td.click();
  const d = document.getElementById("detail");
  const text = d.hidden ? "" : d.innerText;
  document.dispatchEvent(new KeyboardEvent("keydown", {key: "Escape"}));
  return text;
})()`))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(detail, want) {
			t.Errorf("%s: the details lack %q:\n%s", target, want, detail)
		}
	}
	tb.check(t)
}

// The conformance scoreboard renders in Chromium: a row per operator and a column
// per target that tried a case, each cell coloured by what its cases say, the
// target only ever unavailable collapsed to its reason, the mismatches with their
// worst element and the refusals grouped by exact message. The cases are fixtures
// for the page, not results.
func TestScoreboardInChromium(t *testing.T) {
	c := func(name, op, target, status, msg string) result.OpCaseReport {
		return result.OpCaseReport{Case: name, Op: op, Opset: 13, Target: target, Status: status, Error: msg}
	}
	const refused = "Could not find an implementation for BitShift(11) node with name ''"
	dft := c("test_dft", "DFT", "cpu", result.CaseMismatch, "")
	dft.Worst = &result.Deviation{Output: "y", Index: 17, Got: 1.2301, Want: 1.2345, AbsErr: 0.0044, Allowed: 0.0012}
	cases := []result.OpCaseReport{
		c("test_add", "Add", "cpu", result.CasePass, ""), c("test_add", "Add", "wasm", result.CasePass, ""),
		c("test_add_bcast", "Add", "cpu", result.CasePass, ""), c("test_add_bcast", "Add", "wasm", result.CaseMismatch, ""),
		c("test_bitshift_left_uint16", "BitShift", "cpu", result.CaseNotSupported, refused),
		c("test_bitshift_right_uint16", "BitShift", "cpu", result.CaseNotSupported, refused),
		c("test_bitshift_left_uint16", "BitShift", "wasm", result.CaseSkipped, "uint16 inputs"),
		dft, c("test_dft", "DFT", "wasm", result.CasePass, ""),
		c("test_add", "Add", "cuda", result.CaseUnavailable, "libcudart.so.12: cannot open shared object file"),
	}
	board := conformance.Summarise(cases, []string{"cpu", "cuda", "wasm"})
	at := time.Date(2026, 11, 24, 3, 0, 0, 0, time.UTC)
	sb := &htmlreport.Scoreboard{Board: board, Runs: map[string]history.ScoreRun{
		"cpu": {RunID: "c1", Finished: at, Host: "h"}, "wasm": {RunID: "c1", Finished: at, Host: "h"}, "cuda": {RunID: "c1", Finished: at, Host: "h"}}}
	m := matrix.Matrix{Models: []string{"vad"}, Targets: []string{"cpu"}, Cells: []matrix.Cell{
		{Model: "vad", Family: "audio", Target: "cpu", Status: result.StatusPass, Metrics: &result.Metrics{P50MS: 1}}}}
	var b bytes.Buffer
	if err := htmlreport.Render(&b, htmlreport.Input{Current: m, Report: analysis.Analyze(m, []matrix.Matrix{m}, analysis.Options{}), Scoreboard: sb}); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(outDir, "scoreboard.html")
	if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	tb := openTab(t)
	if err := chromedp.Do(tb.ctx, chromedp.EmulateViewport(1400, 1000)); err != nil {
		t.Fatal(err)
	}
	tb.load(t, file)
	ctx, cancel := context.WithTimeout(tb.ctx, time.Minute)
	defer cancel()
	type shown struct {
		Height     float64           `json:"height"`
		Cols       []string          `json:"cols"`
		Rows       []string          `json:"rows"`
		Colours    map[string]string `json:"colours"` // "op target" → computed background
		Texts      map[string]string `json:"texts"`
		Absent     string            `json:"absent"`
		Mismatches string            `json:"mismatches"`
		Failures   []string          `json:"failures"`
	}
	got, err := chromedp.Run(ctx, chromedp.Evaluate[shown](`(() => {
  const sec = document.getElementById("operators");
  sec.scrollIntoView();
  const cols = [...document.querySelectorAll("#ops thead th")].slice(1).map(th => th.innerText);
  const rows = [...document.querySelectorAll("#ops tbody tr")];
  const colours = {}, texts = {};
  for (const r of rows) {
    [...r.querySelectorAll("td")].forEach((td, i) => {
      const k = r.querySelector("th").innerText + " " + cols[i];
      colours[k] = getComputedStyle(td).backgroundColor;
      texts[k] = td.innerText;
    });
  }
  return {
    height: sec.getBoundingClientRect().height,
    cols, rows: rows.map(r => r.querySelector("th").innerText), colours, texts,
    absent: document.querySelector("#operators ul.absent").innerText,
    mismatches: document.getElementById("ops-mismatches").innerText,
    failures: [...document.querySelectorAll("#ops-failures tbody tr")].map(r => r.innerText),
  };
})()`))
	if err != nil {
		t.Fatal(err)
	}
	if got.Height < 200 || strings.Join(got.Cols, " ") != "cpu wasm" || strings.Join(got.Rows, " ") != "Add BitShift DFT" {
		t.Errorf("the scoreboard: height %.0f, columns %v, rows %v", got.Height, got.Cols, got.Rows)
	}
	green, amber, red, grey := "rgb(46, 157, 79)", "rgb(240, 193, 75)", "rgb(214, 69, 69)", "rgb(196, 196, 196)"
	for k, want := range map[string]string{"Add cpu": green, "Add wasm": amber, "BitShift cpu": red, "BitShift wasm": grey, "DFT cpu": red, "DFT wasm": green} {
		if got.Colours[k] != want {
			t.Errorf("%s: background %s, want %s", k, got.Colours[k], want)
		}
	}
	for k, want := range map[string]string{"Add wasm": "1/2 ≠1", "BitShift cpu": "0/2 ✗2", "BitShift wasm": "0/1 ~1"} {
		if got.Texts[k] != want {
			t.Errorf("%s: %q, want %q", k, got.Texts[k], want)
		}
	}
	if !strings.Contains(got.Absent, "cuda: not on the machine of its latest run (c1 on h; 1 case unavailable): libcudart.so.12") {
		t.Errorf("cuda is not collapsed to its reason: %q", got.Absent)
	}
	if !strings.Contains(got.Mismatches, "cpu\ttest_dft\tDFT\toutput y[17]: got 1.2301, want 1.2345, |error| 0.0044 > allowed 0.0012") {
		t.Errorf("mismatches: %q", got.Mismatches)
	}
	if len(got.Failures) != 2 || !strings.HasPrefix(got.Failures[0], "not-supported\t2\tcpu\tBitShift\t"+refused) {
		t.Errorf("failures: %q", got.Failures)
	}
	screenshot(t, tb, "scoreboard.png", false)
	tb.check(t)
}
