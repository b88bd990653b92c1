package browser

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Case is one model to run once on a [CasePage], such as one of ONNX's node
// test cases.
type Case struct {
	Name   string   // says which case in messages
	Model  string   // path to the model file
	Inputs []Tensor // named, in the graph's input order
}

// CaseResult is what became of one Case.
type CaseResult struct {
	Outputs []Tensor // named, in the session's output order
	// Err is the page's exact error ("" when the case ran): onnxruntime-web's
	// own text for a session it could not create or a run that failed, or
	// hwtest's for a case that hung ("timed out after …") or whose page
	// crashed. Stage says where it happened: "create"
	// (InferenceSession.create) or "run" (the feeds, session.run, reading
	// the outputs); "input" is hwtest's own failure before the page saw the
	// case (a missing model file, an input type it cannot send).
	//
	// No provider refuses a tensor type of Tensor at the page's boundary
	// (onnxruntime-web 1.30, all 902 tensor-only node cases): refusals come
	// from sessions and kernels, e.g. Max/Min/BitShift on (u)int16 under
	// webgpu and webnn (and 70 cases, float64 ones among them, under the
	// native WebGPU EP) fail create with transformer_memcpy.cc's
	// IsNodeCompatibleWithProvider; the native WebGPU EP refuses float16
	// ("Program Cast requires f16") on an adapter without shader-f16, where
	// JSEP's Cast silently returns zeros.
	Err             string
	Stage           string
	CreateMs, RunMs float64 // in-page InferenceSession.create and session.run
	// PageMs is the case's whole time in the page: decoding the model, create,
	// the feeds, run, reading the outputs, release. What a batch takes beyond
	// the sum of PageMs is the cost of CDP, Go and page loads.
	PageMs float64
}

// CasePage runs many small models in one page, one InferenceSession at a time,
// for conformance cases: a page per model (Browser.Open) costs a tab, a page
// load and a WebAssembly compile each time. Use it from one goroutine at a time.
type CasePage struct {
	Provider, Bundle string
	// Timeout bounds each case's session creation and its run apart: a case
	// with no news from the page for that long is taken as hung, and its page
	// is replaced. OpenCasePage sets the config's timeout.
	Timeout time.Duration

	b      *Browser
	dist   string
	device string
	page   *casePageTab // nil after a hang or a crash, until the next Run needs one
	pages  int          // pages opened: 1 + replacements
	// settled, when set, is told each case's result as soon as it is known
	// (i indexes the slice given to Run); tests use it to act mid-batch.
	settled func(i int, r CaseResult)
}

// casePageTab is one tab of a CasePage, with the events its hwCase binding sent.
type casePageTab struct {
	ctx    context.Context
	cancel context.CancelFunc

	ran int // cases settled in this page

	mu     sync.Mutex
	queue  []string      // payloads not read yet
	notify chan struct{} // has room for one signal: something was queued
}

// maxChunkBytes bounds the JSON of one hw.cases call (models and inputs travel in it).
const maxChunkBytes = 16 << 20

// OpenCasePage opens a page for provider ("wasm", "webgpu", "webnn") and
// bundle ("" means DefaultBundle) that Run runs cases in.
func (b *Browser) OpenCasePage(provider, bundle string) (*CasePage, error) {
	if bundle == "" {
		bundle = DefaultBundle
	}
	switch provider {
	case "wasm", "webgpu", "webnn":
	default:
		return nil, fmt.Errorf("unknown provider %q (want wasm, webgpu or webnn)", provider)
	}
	if strings.ContainsAny(bundle, "/\\") {
		return nil, fmt.Errorf("bundle %q: want a file name of the onnxruntime-web dist folder", bundle)
	}
	dist := b.cfg.DistDir()
	if _, err := os.Stat(filepath.Join(dist, bundle)); err != nil {
		return nil, unavailable(provider, ErrNotInstalled, err, "onnxruntime-web bundle %s missing (%s): %v", filepath.Join(dist, bundle), setupHint, err)
	}
	p := &CasePage{Provider: provider, Bundle: bundle, Timeout: b.cfg.Timeout, b: b, dist: dist}
	p.device = b.deviceOf(provider)
	if err := p.open(); err != nil {
		return nil, err
	}
	return p, nil
}

// deviceOf says what provider really runs on in b, as the matrix's cells say
// it, so that a software adapter is never read as a GPU result.
func (b *Browser) deviceOf(provider string) string {
	switch provider {
	case "webgpu":
		a, err := b.Adapter()
		if err != nil {
			return ""
		}
		d := fmt.Sprintf("WebGPU adapter %s/%s", a.Vendor, a.Architecture)
		if a.IsFallbackAdapter {
			d += " (software fallback adapter, isFallbackAdapter: true: CPU, not a GPU)"
		}
		return d + " in " + b.Version
	case "webnn":
		return "WebNN deviceType cpu (Chromium on Linux runs WebNN on the CPU through XNNPACK) in " + b.Version
	}
	return "WebAssembly (CPU) in " + b.Version
}

// Device is what the cases ran on (the WebGPU adapter, the WebNN context, the
// CPU for wasm) and in which browser; "" when it could not be told.
func (p *CasePage) Device() string { return p.device }

// open loads a fresh page with the hwCase binding.
func (p *CasePage) open() error {
	srv, err := getServer()
	if err != nil {
		return err
	}
	ctx, cancel, err := p.b.tab()
	if err != nil {
		return err
	}
	t := &casePageTab{ctx: ctx, cancel: cancel, notify: make(chan struct{}, 1)}
	if err := chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*runtime.EventBindingCalled); ok && e.Name == "hwCase" {
			t.mu.Lock()
			t.queue = append(t.queue, e.Payload)
			t.mu.Unlock()
			select {
			case t.notify <- struct{}{}:
			default:
			}
		}
	}); err != nil {
		cancel()
		return err
	}
	nctx, ncancel := context.WithTimeout(ctx, p.b.cfg.Timeout)
	defer ncancel()
	// A binding survives navigations: add it first, so the page has it from the start.
	if _, err := chromedp.Call(nctx, runtime.AddBinding, runtime.AddBindingParams{Name: "hwCase"}); err != nil {
		cancel()
		return fmt.Errorf("adding the page's binding in %s: %w", p.b.Exec, err)
	}
	if err := chromedp.Do(nctx, chromedp.Navigate(srv.pageURL(p.dist, p.Bundle))); err != nil {
		cancel()
		return fmt.Errorf("loading the page in %s: %w", p.b.Exec, err)
	}
	p.page = t
	p.pages++
	return nil
}

// drop closes the page (after a hang or a crash); the next case gets a new one.
func (p *CasePage) drop() {
	if p.page != nil {
		p.page.cancel()
		p.page = nil
	}
}

// take returns the payloads queued so far.
func (t *casePageTab) take() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	q := t.queue
	t.queue = nil
	return q
}

type wireCase struct {
	Name   string       `json:"name"`
	Model  []byte       `json:"model"` // base64 in JSON
	Inputs []wireTensor `json:"inputs"`
}

// caseEvent is one hwCase payload: {i, created} when case i's session was
// made, or case i's result.
type caseEvent struct {
	I        int          `json:"i"`
	Created  bool         `json:"created"`
	Stage    string       `json:"stage"`
	Err      *string      `json:"err"`
	CreateMs float64      `json:"createMs"`
	RunMs    float64      `json:"runMs"`
	PageMs   float64      `json:"pageMs"`
	Outputs  []wireTensor `json:"outputs"`
	Lost     string       `json:"lost"` // the WebGPU device was lost
}

// Run runs every case once, in order, in one page: one call into the page
// for all of them (or per 16 MiB of models and inputs), each case's result streamed
// back as soon as it is known. A case that fails gets the page's error and
// the others go on; a case that hangs past Timeout, or under which the page
// (or its WebGPU device) dies, gets that as its error, and the page is
// replaced for the rest. There is one result per case, in the cases' order,
// always; the error says why some cases could not be tried at all (no new
// page could be opened: the browser died), and those cases carry it too.
func (p *CasePage) Run(cases []Case) ([]CaseResult, error) {
	results := make([]CaseResult, len(cases))
	// What the page gets, case by case; a case hwtest cannot send fails here.
	var pending []int // indices of the cases not settled yet, in order
	wire := make([]wireCase, len(cases))
	size := make([]int, len(cases))
	for i, c := range cases {
		w, err := wireCaseOf(c)
		if err != nil {
			results[i] = CaseResult{Err: err.Error(), Stage: "input"}
			continue
		}
		js, _ := json.Marshal(w)
		wire[i], size[i] = w, len(js)
		pending = append(pending, i)
	}
	for len(pending) > 0 {
		if p.page == nil {
			if err := p.open(); err != nil {
				err = fmt.Errorf("opening a new page after a hang or crash: %w", err)
				for _, i := range pending {
					results[i] = CaseResult{Err: err.Error(), Stage: "create"}
				}
				return results, err
			}
		}
		n, bytes := 0, 0
		for n < len(pending) && (n == 0 || bytes+size[pending[n]] <= maxChunkBytes) {
			bytes += size[pending[n]]
			n++
		}
		done := p.runChunk(pending[:n], wire, results)
		pending = pending[done:]
	}
	return results, nil
}

func wireCaseOf(c Case) (wireCase, error) {
	model, err := os.ReadFile(c.Model)
	if err != nil {
		return wireCase{}, fmt.Errorf("model: %w", err)
	}
	w := wireCase{Name: c.Name, Model: model, Inputs: make([]wireTensor, len(c.Inputs))}
	for k, t := range c.Inputs {
		if w.Inputs[k], err = encode(t); err != nil {
			return wireCase{}, err
		}
	}
	return w, nil
}

// jsepStuck is what onnxruntime-web's JSEP (the webgpu EP of ort.min.js,
// 1.30) says for every kernel of every later session in the page once one
// kernel threw outside its try block (AveragePool's ceil_mode check throws
// while its attributes are read, after computeKernel has set
// currentKernelId): the page is poisoned, not the case.
const jsepStuck = "is not allowed to be called recursively"

// runChunk runs the cases idx (indices into wire and results) in the current
// page with one call, and returns how many of them are settled: all of them,
// or fewer when the page was dropped (a case hung, the page or its device
// died: that case is settled with the reason; a case that failed only for
// JSEP's poisoned state is not, and runs again on the next page).
func (p *CasePage) runChunk(idx []int, wire []wireCase, results []CaseResult) int {
	t := p.page
	chunk := make([]wireCase, len(idx))
	for k, i := range idx {
		chunk[k] = wire[i]
	}
	args, _ := json.Marshal([]any{p.Provider, chunk})
	done := make(chan error, 1)
	go func() {
		// No timeout on the call: Timeout bounds each case below, by its events.
		done <- callPage(t.ctx, 365*24*time.Hour, "cases", string(args), nil)
	}()
	timer := time.NewTimer(p.Timeout)
	defer timer.Stop()
	settled, created := 0, false
	settle := func(r CaseResult) {
		results[idx[settled]] = r
		if p.settled != nil {
			p.settled(idx[settled], r)
		}
		settled++
		t.ran++
		created = false
	}
	// read handles the events queued so far; it reports whether the page must go.
	read := func() (drop bool) {
		for _, payload := range t.take() {
			var ev caseEvent
			if err := json.Unmarshal([]byte(payload), &ev); err != nil || ev.I != settled {
				continue // not ours, or out of order: cannot happen with our harness
			}
			if ev.Created {
				created = true
				continue
			}
			r := caseResultOf(ev)
			if t.ran > 0 && strings.Contains(r.Err, jsepStuck) {
				return true
			}
			settle(r)
			if ev.Lost != "" {
				return true
			}
		}
		return false
	}
	stage := func() string {
		if created {
			return "run"
		}
		return "create"
	}
	for {
		select {
		case <-t.notify:
			if read() {
				p.drop()
				<-done
				return settled
			}
			timer.Reset(p.Timeout) // since Go 1.23, Reset drops a stale tick
		case err := <-done:
			// The page's events all came before its answer.
			if read() {
				p.drop()
				return settled
			}
			if settled < len(idx) {
				msg := "the page answered before it ran every case"
				if err != nil {
					msg = err.Error()
					var crash *CrashError
					if errors.As(err, &crash) {
						msg += " (the page was replaced)"
					}
				}
				settle(CaseResult{Err: msg, Stage: stage()})
				p.drop()
			} else if err != nil {
				p.drop()
			}
			return settled
		case <-timer.C:
			settle(CaseResult{
				Err:   fmt.Sprintf("timed out after %v: no answer from the page (the page was replaced)", p.Timeout),
				Stage: stage(),
			})
			p.drop()
			<-done // dropping the tab ends the call
			return settled
		}
	}
}

func caseResultOf(ev caseEvent) CaseResult {
	r := CaseResult{CreateMs: ev.CreateMs, RunMs: ev.RunMs, PageMs: ev.PageMs}
	if ev.Err != nil {
		r.Err, r.Stage = *ev.Err, ev.Stage
	}
	if ev.Lost != "" {
		if r.Err != "" {
			r.Err += "; "
		} else {
			r.Stage = "run"
		}
		r.Err += ev.Lost + " (the page was replaced)"
	}
	if r.Err != "" {
		return r
	}
	r.Outputs = make([]Tensor, len(ev.Outputs))
	for k, w := range ev.Outputs {
		o, err := decode(w)
		if err != nil {
			return CaseResult{Err: err.Error(), Stage: "run", CreateMs: ev.CreateMs, RunMs: ev.RunMs, PageMs: ev.PageMs}
		}
		r.Outputs[k] = o
	}
	return r
}

// Close closes the page.
func (p *CasePage) Close() error {
	p.drop()
	return nil
}
