package runtime

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/onsi/ginkgo/v2"
	ort "github.com/yalue/onnxruntime_go"

	"github.com/hwtest/hwtest/browser"
	"github.com/hwtest/hwtest/conformance"
	"github.com/hwtest/hwtest/onnx"
	"github.com/hwtest/hwtest/result"
)

// Op is one operator's ONNX conformance cases, as a generated suite names them.
type Op struct {
	Name, Domain string
	Cases        []string // case folder names: "test_add_bcast"
}

// OpCases runs one operator's cases on one target, each against the outputs the
// ONNX project wrote (not our CPU), and records a result.OpCaseReport per case:
// Open in BeforeAll, Check in an It per case, Close in AfterAll.
type OpCases struct {
	Op     Op
	Target Target

	cases map[string]conformance.Case
	done  map[string]result.OpCaseReport // a browser target's batch, run in Open
}

// NewOpCases prepares an operator's cases on a target; nothing runs until Open.
func NewOpCases(op Op, t Target) *OpCases { return &OpCases{Op: op, Target: t} }

// Open checks that ONNX Runtime loads and the target is here, and finds the cases.
// An unavailable target records every case unavailable with the probe's reason and
// skips them; a missing runtime or missing case data fails them, recorded as errors.
func (c *OpCases) Open() {
	ginkgo.GinkgoHelper()
	if _, err := Init(); err != nil && c.Target.Runner != "browser" {
		c.failAll(err)
	}
	if reason := Unavailable(c.Target); reason != "" {
		for _, name := range c.Op.Cases {
			c.record(c.report(name, result.CaseUnavailable, reason))
		}
		ginkgo.Skip("unavailable: " + reason)
	}
	cases, err := nodeCases()
	if err != nil {
		c.failAll(err)
	}
	c.cases = cases
	if c.Target.Runner == "browser" {
		var batch []conformance.Case
		for _, name := range c.Op.Cases {
			if cs, ok := cases[name]; ok {
				batch = append(batch, cs)
			}
		}
		c.done = map[string]result.OpCaseReport{}
		for _, r := range RunBrowserCases(c.Target, batch) {
			c.done[r.Case] = r
		}
	}
}

// Check runs one case and records it: a pass returns, skipped and unavailable skip
// the spec, and a mismatch, not-supported or error fails it in one line.
func (c *OpCases) Check(name string) {
	ginkgo.GinkgoHelper()
	cs, ok := c.cases[name]
	var r result.OpCaseReport
	switch {
	case c.cases == nil:
		ginkgo.Fail("the operator's cases were not loaded: its BeforeAll did not run or failed")
	case !ok:
		r = c.report(name, result.CaseError, fmt.Sprintf("case %s is not among the installed libonnx-testdata %s cases (the generated suites and the data disagree)", name, conformance.Version))
	case c.done != nil:
		r = c.done[name]
	default:
		r = RunCase(c.Target, cs)
	}
	c.record(r)
	switch r.Status {
	case result.CasePass:
	case result.CaseSkipped, result.CaseUnavailable:
		ginkgo.Skip(r.Status + ": " + r.Error)
	default:
		ginkgo.Fail(CaseLine(r))
	}
}

// Close ends the operator's cases. Native sessions live one case each; a browser
// page stays open for the next operator's batch (runtime.Shutdown closes it).
func (c *OpCases) Close() {}

// CaseLine is a case's result in one line: "test_add on cpu: mismatch: output
// "sum"[3] = 1.5, ONNX expects 1.25 (|err| 0.25 > 0.00125)".
func CaseLine(r result.OpCaseReport) string {
	s := fmt.Sprintf("%s on %s: %s", r.Case, r.Target, r.Status)
	if d := r.Worst; d != nil && r.Status == result.CaseMismatch {
		s += fmt.Sprintf(": output %q[%d] = %g, ONNX expects %g (|err| %.3g > %.3g)", d.Output, d.Index, d.Got, d.Want, d.AbsErr, d.Allowed)
	}
	if r.Error != "" {
		s += ": " + strings.Join(strings.Fields(r.Error), " ")
	}
	return s
}

func (c *OpCases) report(name, status, why string) result.OpCaseReport {
	return result.OpCaseReport{Case: name, Op: c.Op.Name, Domain: c.Op.Domain, Target: c.Target.ID, Status: status, Error: why}
}

func (c *OpCases) record(r result.OpCaseReport) {
	ginkgo.AddReportEntry(result.OpCaseEntryName, r, ginkgo.ReportEntryVisibilityNever)
	logCase(r)
}

// CasesLogEnv names a file each case's result is appended to as a JSON line the
// moment it is known: Ginkgo writes its report only at the end, so a conformance
// process killed for a timeout (a browser that never answers) would otherwise take
// every case it had finished with it. hwtest conformance reads it then.
const CasesLogEnv = "HWTEST_CASES_LOG"

func logCase(r result.OpCaseReport) {
	path := os.Getenv(CasesLogEnv)
	if path == "" {
		return
	}
	line, err := json.Marshal(r)
	if err != nil {
		return
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return // the Ginkgo report still has it, unless the process is killed
	}
	f.Write(append(line, '\n')) // one write of one line: whole with O_APPEND
	f.Close()
}

// failAll records every case as an error of this machine's setup and fails.
func (c *OpCases) failAll(err error) {
	ginkgo.GinkgoHelper()
	for _, name := range c.Op.Cases {
		c.record(c.report(name, result.CaseError, err.Error()))
	}
	ginkgo.Fail(fmt.Sprintf("%s on %s: %v", c.Op.Name, c.Target.ID, err))
}

// nodeCases reads the installed node cases once per process: every operator's
// suite in it shares them.
var nodeCases = sync.OnceValues(func() (map[string]conformance.Case, error) {
	root, _ := Root() // "": DataDir looks where the working directory is
	dir, err := conformance.DataDir(root)
	if err != nil {
		return nil, err
	}
	cases, err := conformance.Load(dir)
	if err != nil {
		return nil, fmt.Errorf("reading ONNX's test cases in %s: %w", dir, err)
	}
	m := make(map[string]conformance.Case, len(cases))
	for _, c := range cases {
		m[c.Name] = c
	}
	return m, nil
})

// RunCase runs one node case on a native target: a session of its model on the
// target alone (strict, as a model cell's first try; the CPU for cpu), its
// input_K.pb as graph input K, and every output compared with output_K.pb at
// conformance.Tolerance. Ms is session creation and the run.
func RunCase(t Target, c conformance.Case) result.OpCaseReport {
	r := result.OpCaseReport{Case: c.Name, Op: c.Op, Domain: c.Domain, Opset: c.Opset, Target: t.ID, Device: devices()[t.ID][0]}
	if reason := Unavailable(t); reason != "" {
		r.Status, r.Error = result.CaseUnavailable, reason
		return r
	}
	if t.Runner == "browser" {
		r.Status, r.Error = result.CaseError, "browser targets run an operator's cases in one batch (OpCases.Open), not one by one"
		return r
	}
	data, status, why := readCase(c)
	if status != "" {
		r.Status, r.Error = status, why
		return r
	}
	start := time.Now()
	got, err := data.run(t)
	r.Ms = ms(time.Since(start))
	if err != nil {
		r.Status, r.Error = runStatus(err), err.Error()
		return r
	}
	r.Worst, r.Error = compareCase(got, data.want)
	r.Status = result.CasePass
	if r.Error != "" || !r.Worst.Within() {
		r.Status = result.CaseMismatch
	}
	r.Worst, r.Error = finiteWorst(r.Worst, r.Error)
	return r
}

// CaseTimeout bounds a case's run, and on a browser target its session creation
// too (onnxruntime_go cannot stop a native session being created), unless
// CaseTimeoutEnv (`hwtest conformance --case-timeout`) says otherwise. Node cases
// are a few tensors of a few elements: the slowest seen took 1.7 s (creation and
// run, WebNN in Chromium), most a few ms. A case past it hung: WebNN in Chromium
// hung on 101 of the 932 (every NLLLoss and most SoftmaxCrossEntropyLoss cases,
// some GatherElements, ScatterElements, ConvTranspose, MaxPool) before the page
// caught its unsettled sessions, and each hang costs this much and a new page, so
// the model cells' minute would cost that target over 1.5 hours.
const CaseTimeout = 5 * time.Second

// CaseTimeoutEnv overrides CaseTimeout (a Go duration: "10s").
const CaseTimeoutEnv = "HWTEST_CASE_TIMEOUT"

func caseTimeout() (time.Duration, error) {
	s := os.Getenv(CaseTimeoutEnv)
	if s == "" {
		return CaseTimeout, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%s=%q: want a positive duration such as 5s", CaseTimeoutEnv, s)
	}
	return d, nil
}

// runStatus: what ONNX Runtime refused or failed is not-supported, in its words;
// hwtest's own conversions and a run past its deadline are errors.
func runStatus(err error) string {
	var te tensorError
	var sm shapeMismatch
	switch {
	case errors.As(err, &sm):
		return result.CaseMismatch
	case errors.As(err, &te) || errors.Is(err, ErrRunTimeout):
		return result.CaseError
	}
	return result.CaseNotSupported
}

// caseData is a case read from its files.
type caseData struct {
	c             conformance.Case
	graph         *onnx.Summary
	inputs, want  []Tensor
	inNames, outs []string
}

// readCase reads the case's graph and data set. A sequence or optional value is
// skipped (hwtest feeds and reads tensors); anything unreadable is an error.
func readCase(c conformance.Case) (caseData, string, string) {
	g, err := onnx.InspectFile(c.Model())
	if err != nil {
		return caseData{}, result.CaseError, err.Error()
	}
	d := caseData{c: c, graph: g}
	for _, vs := range [][]onnx.ValueInfo{g.Inputs, g.Outputs} {
		for _, v := range vs {
			if v.Kind != "" {
				return d, result.CaseSkipped, fmt.Sprintf("%q is a %s: hwtest feeds and reads tensors only", v.Name, v.Kind)
			}
		}
	}
	if len(g.Inputs) != c.Inputs || len(g.Outputs) != c.Outputs {
		return d, result.CaseError, fmt.Sprintf("the graph has %d inputs and %d outputs, the data set %d and %d", len(g.Inputs), len(g.Outputs), c.Inputs, c.Outputs)
	}
	for k, v := range g.Inputs {
		t, err := readTensor(c.Input(k), v)
		if err != nil {
			return d, result.CaseError, err.Error()
		}
		if !fits(t.Shape, v) {
			// libonnx-testdata 1.12's castlike BFLOAT16 cases feed "like" as [1] to
			// a graph that declares [3 4]: no runtime should take it, so it
			// measures none.
			return d, result.CaseSkipped, fmt.Sprintf("the case's data disagrees with its graph: %s has shape %v, the graph declares %q %v", filepath.Base(c.Input(k)), t.Shape, v.Name, v.Dims)
		}
		d.inputs, d.inNames = append(d.inputs, t), append(d.inNames, v.Name)
	}
	for k, v := range g.Outputs {
		t, err := readTensor(c.Output(k), v)
		if err != nil {
			return d, result.CaseError, err.Error()
		}
		d.want, d.outs = append(d.want, t), append(d.outs, v.Name)
	}
	return d, "", ""
}

// fits says whether a shape is one the graph value allows.
func fits(shape []int64, v onnx.ValueInfo) bool {
	if v.Unranked {
		return true
	}
	if len(shape) != len(v.Dims) {
		return false
	}
	for i, d := range v.Dims {
		if d.Param == "" && d.Value >= 0 && d.Value != shape[i] {
			return false
		}
	}
	return true
}

// readTensor reads a data file as the graph value it feeds or checks. Its element
// type is the graph's: libonnx-testdata 1.12 stores bfloat16 data as UINT16.
func readTensor(path string, v onnx.ValueInfo) (Tensor, error) {
	pt, err := onnx.ReadTensorFile(path)
	if err != nil {
		return Tensor{}, err
	}
	if v.Type == onnx.BFloat16 && pt.Type == onnx.Uint16 {
		pt.Type = onnx.BFloat16 // the same two bytes per element
	}
	if v.Type != 0 && pt.Type != v.Type {
		return Tensor{}, fmt.Errorf("%s holds %v, the graph declares %q %v", path, pt.Type, v.Name, v.Type)
	}
	// ONNX's DataType numbers are ONNX Runtime's ONNXTensorElementDataType.
	t := Tensor{Name: v.Name, Type: ort.TensorElementDataType(pt.Type), Shape: pt.Dims, Strings: pt.Strings}
	if pt.Type != onnx.StringType {
		if t.Data, err = pt.Float64s(); err != nil {
			return Tensor{}, fmt.Errorf("%s: %w", path, err)
		}
	}
	return t, nil
}

// run creates the case's session on the target and runs its inputs once. The
// outputs are described by the graph, and allocated ahead in the expected shape
// where onnxruntime_go could not read them back otherwise (scalars, float16).
func (d caseData) run(t Target) ([]Tensor, error) {
	opts, err := newSessionOptions(t, true, false)
	if err != nil {
		return nil, tensorError{err} // a bad HWTEST_THREADS: ours, not the target's
	}
	defer opts.Destroy()
	timeout, err := caseTimeout()
	if err != nil {
		return nil, tensorError{err}
	}
	s, err := ort.NewDynamicAdvancedSession(d.c.Model(), d.inNames, d.outs, opts)
	if err != nil {
		return nil, err
	}
	session := &Session{session: s, timeout: timeout}
	defer session.Close()
	for k, v := range d.graph.Outputs {
		session.outputs = append(session.outputs, ort.InputOutputInfo{
			Name: v.Name, OrtValueType: ort.ONNXTypeTensor, DataType: d.want[k].Type, Dimensions: d.want[k].Shape,
		})
		session.preset = append(session.preset, caseOutputShape(d.want[k], len(d.inputs) == 0))
	}
	got, err := session.Run(d.inputs)
	// A case's inputs are ONNX's own, named by the case: its reason stays ONNX
	// Runtime's words alone, so an operator refused in every case has one reason.
	var fed fedError
	if errors.As(err, &fed) {
		err = fed.err
	}
	if err != nil && strings.Contains(err.Error(), "Shape mismatch attempting to re-use buffer") {
		// An output allocated in the expected shape and ONNX Runtime's differs.
		return nil, shapeMismatch{err}
	}
	if errors.Is(err, ErrRunTimeout) { // the case's limit, not the model cells' variable
		rest := strings.TrimPrefix(strings.Replace(err.Error(), " (HWTEST_RUN_TIMEOUT)", "", 1), ErrRunTimeout.Error())
		err = fmt.Errorf("%w%s (the case limit: %s or hwtest conformance --case-timeout)", ErrRunTimeout, rest, CaseTimeoutEnv)
	}
	return got, err
}

// shapeMismatch is ONNX Runtime writing an output of another shape than ONNX
// expects into the one allocated for it: a wrong output, not a refusal.
type shapeMismatch struct{ error }

// caseOutputShape is the shape an output is allocated with before the run, nil to
// leave it to ONNX Runtime (see newOutput).
func caseOutputShape(want Tensor, noInputs bool) []int64 {
	half := want.Type == ort.TensorElementDataTypeFloat16 || want.Type == ort.TensorElementDataTypeBFloat16
	scalar := len(want.Shape) == 0 && want.Type != ort.TensorElementDataTypeString
	if scalar || half || noInputs {
		return append([]int64{}, want.Shape...)
	}
	return nil
}

// compareCase compares every output as ONNX's backend test runner does
// (onnx/backend/test/runner assert_similar_outputs): same element type and shape,
// strings exactly equal, numbers within conformance.Tolerance with NaN equal to
// NaN. It returns the worst element over all outputs and, when an output cannot
// be compared element by element, why.
func compareCase(got, want []Tensor) (*result.Deviation, string) {
	var worst *result.Deviation
	for k, w := range want {
		g := got[k]
		switch {
		case g.Type != w.Type:
			return nil, fmt.Sprintf("output %q is %v, ONNX expects %v", w.Name, g.Type, w.Type)
		case !slices.Equal(g.Shape, w.Shape):
			return nil, fmt.Sprintf("output %q has shape %v, ONNX expects %v", w.Name, g.Shape, w.Shape)
		case w.Type == ort.TensorElementDataTypeString:
			if i := firstDiff(g.Strings, w.Strings); i >= 0 {
				return nil, fmt.Sprintf("output %q[%d] is %q, ONNX expects %q", w.Name, i, g.Strings[i], w.Strings[i])
			}
			continue
		}
		d, err := Compare(g, w, conformance.Tolerance)
		if err != nil {
			return nil, err.Error()
		}
		if worse(d, worst) {
			worst = d
		}
	}
	return worst, ""
}

func firstDiff(a, b []string) int {
	for i := range b {
		if i >= len(a) || a[i] != b[i] {
			return i
		}
	}
	return -1
}

// finiteWorst keeps a deviation with a NaN or an infinity out of the report
// (JSON has no such numbers, and one would make Ginkgo's whole report
// unwritable) and says it in words instead.
func finiteWorst(d *result.Deviation, why string) (*result.Deviation, string) {
	if d == nil {
		return nil, why
	}
	for _, x := range []float64{d.Got, d.Want, d.AbsErr, d.Allowed} {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			w := fmt.Sprintf("output %q[%d] = %g, ONNX expects %g", d.Output, d.Index, d.Got, d.Want)
			if why != "" {
				w = why + "; " + w
			}
			return nil, w
		}
	}
	return d, why
}

// RunBrowserCases runs cases on a browser target in one batch, in this process's
// page for the target (opened on first use, kept for the next operator's batch,
// closed by Shutdown): a page and an InferenceSession per case would cost a page
// load and a WebAssembly compile each. Inputs, outputs and the comparison are
// RunCase's; Ms is the page's session creation and run. A case the page refused
// is not-supported in onnxruntime-web's words; one that hung or took the page down
// with it is an error, and the page is replaced for the rest.
func RunBrowserCases(t Target, cases []conformance.Case) []result.OpCaseReport {
	reports := make([]result.OpCaseReport, len(cases))
	var batch []browser.Case
	var sent []int // indices into cases of the batch's cases
	var data []caseData
	for i, c := range cases {
		reports[i] = result.OpCaseReport{Case: c.Name, Op: c.Op, Domain: c.Domain, Opset: c.Opset, Target: t.ID}
		r := &reports[i]
		if reason := Unavailable(t); reason != "" {
			r.Status, r.Error = result.CaseUnavailable, reason
			continue
		}
		d, status, why := readCase(c)
		if status != "" {
			r.Status, r.Error = status, why
			continue
		}
		in, err := webTensors(d.inputs)
		if err == nil {
			err = webReadable(d.want)
		}
		if err != nil {
			// A type onnxruntime-web has no tensor for (bfloat16) is the runtime's
			// limit, not hwtest's failure: nothing of the case can reach it.
			r.Status, r.Error = result.CaseNotSupported, err.Error()
			if !strings.Contains(err.Error(), "has no onnxruntime-web equivalent") {
				r.Status = result.CaseError
			}
			continue
		}
		batch = append(batch, browser.Case{Name: c.Name, Model: c.Model(), Inputs: in})
		sent, data = append(sent, i), append(data, d)
	}
	if len(batch) == 0 {
		return reports
	}
	page, err := casePage(t)
	var results []browser.CaseResult
	if err == nil {
		results, err = page.Run(batch)
	}
	if results == nil { // nothing was tried: no page
		for _, i := range sent {
			reports[i].Status, reports[i].Error = result.CaseError, err.Error()
		}
		return reports
	}
	for k, res := range results {
		r := &reports[sent[k]]
		r.Device, r.Ms = page.Device(), res.CreateMs+res.RunMs
		if res.Err != "" {
			r.Status, r.Error = browserCaseStatus(res), res.Err
			continue
		}
		got, why := fromWeb(res.Outputs, data[k].want)
		if why == "" {
			r.Worst, why = compareCase(got, data[k].want)
		}
		r.Status, r.Error = result.CasePass, why
		if why != "" || !r.Worst.Within() {
			r.Status = result.CaseMismatch
		}
		r.Worst, r.Error = finiteWorst(r.Worst, r.Error)
	}
	return reports
}

// browserCaseStatus: onnxruntime-web refusing to create or run the case is
// not-supported; hwtest failing to send it, a hang or a crashed page are errors.
func browserCaseStatus(res browser.CaseResult) string {
	switch {
	case res.Stage == "input",
		strings.Contains(res.Err, "timed out after"),
		strings.Contains(res.Err, "(the page was replaced)"),
		// The browser is gone (no page could be opened) or the harness stopped
		// early: nothing of the case reached onnxruntime-web.
		strings.HasPrefix(res.Err, "opening a new page after a hang or crash"),
		strings.Contains(res.Err, "the page answered before it ran every case"):
		return result.CaseError
	}
	return result.CaseNotSupported
}

// webReadable refuses expected outputs of a type onnxruntime-web cannot return
// (bfloat16): the case would fail in hwtest's reading, not in the runtime.
func webReadable(want []Tensor) error {
	for _, w := range want {
		if _, ok := webTypes[w.Type]; !ok {
			return fmt.Errorf("output %q: element type %v has no onnxruntime-web equivalent here", w.Name, w.Type)
		}
	}
	return nil
}

// fromWeb puts the page's outputs in the order of the expected ones, by name.
func fromWeb(outs []browser.Tensor, want []Tensor) ([]Tensor, string) {
	got := make([]Tensor, len(want))
	for k, w := range want {
		i := slices.IndexFunc(outs, func(o browser.Tensor) bool { return o.Name == w.Name })
		if i < 0 {
			return nil, fmt.Sprintf("the page returned no output %q", w.Name)
		}
		o := outs[i]
		got[k] = Tensor{Name: o.Name, Type: nativeTypes[o.Type], Shape: o.Shape, Data: o.Data, Strings: o.Strings}
	}
	return got, ""
}

// casePages are this process's case pages, one per browser target.
var casePages = struct {
	sync.Mutex
	m map[string]*browser.CasePage
}{m: map[string]*browser.CasePage{}}

func casePage(t Target) (*browser.CasePage, error) {
	casePages.Lock()
	defer casePages.Unlock()
	if p, ok := casePages.m[t.ID]; ok {
		return p, nil
	}
	timeout, err := caseTimeout()
	if err != nil {
		return nil, err
	}
	b, err := browser.Shared(BrowserConfig(), t.Provider == "webnn")
	if err != nil {
		return nil, err
	}
	p, err := b.OpenCasePage(t.Provider, t.Bundle)
	if err != nil {
		return nil, err
	}
	p.Timeout = timeout
	casePages.m[t.ID] = p
	return p, nil
}

// closeCasePages closes the case pages before their browsers go.
func closeCasePages() {
	casePages.Lock()
	defer casePages.Unlock()
	for id, p := range casePages.m {
		p.Close()
		delete(casePages.m, id)
	}
}
