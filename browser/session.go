package browser

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/chromedp"
)

// Providers are the onnxruntime-web execution providers this package drives.
var Providers = []string{"wasm", "webgpu", "webnn"}

// DefaultBundle is the onnxruntime-web bundle for wasm, WebGPU (JSEP) and
// WebNN; "ort.webgpu.min.js" has the native WebGPU EP.
const DefaultBundle = "ort.min.js"

// Session is an onnxruntime-web InferenceSession in its own tab. Use it
// from one goroutine at a time; sessions in different tabs run in parallel.
type Session struct {
	Provider, Bundle string
	InputNames       []string
	OutputNames      []string
	CreateTime       time.Duration // in-page InferenceSession.create (wasm compile included for the first session of a tab)
	OpenTime         time.Duration // Open, wall clock: tab, page load, model fetch, create
	ORTVersion       string        // ort.env.versions.web
	CrossOrigin      bool          // the page was cross-origin isolated
	NumThreads       int           // ort.env.wasm.numThreads
	UserAgent        string
	// Timeout bounds each call into the page: one run, or what a Measure
	// call takes beyond its budget (one run that hangs). Open sets it to the
	// config's; a caller may change it between calls.
	Timeout time.Duration

	b      *Browser
	ctx    context.Context
	cancel context.CancelFunc

	mu          sync.Mutex
	log         []string
	initialized chan struct{} // ORT logged "Session successfully initialized"
	placement   *Placement
}

// Placement is the node placement ORT logged (verbose) at session
// creation, for the main graph: nodes inside the subgraphs of control-flow
// nodes (If, Loop, Scan) are not listed there.
type Placement struct {
	Known bool // ORT logged it; false: not known, nothing is guessed
	// Nodes is how many nodes ORT placed on each EP, Memcpy nodes
	// excluded. A partition that an EP compiles (WebNN does) counts as one
	// node: how many model nodes it holds is not logged.
	Nodes map[string]int
	// Partitions is how many of Nodes[EP] are compiled partitions.
	Partitions map[string]int
	// Memcpy is how many MemcpyToHost/MemcpyFromHost nodes ORT inserted.
	Memcpy int
}

func (p Placement) String() string {
	if !p.Known {
		return "node placement not known (onnxruntime-web did not log it)"
	}
	eps := make([]string, 0, len(p.Nodes))
	for ep := range p.Nodes {
		eps = append(eps, ep)
	}
	sort.Strings(eps)
	var parts []string
	for _, ep := range eps {
		s := fmt.Sprintf("%s %d nodes", strings.TrimSuffix(ep, "ExecutionProvider"), p.Nodes[ep])
		if n := p.Partitions[ep]; n > 0 {
			s += fmt.Sprintf(" (%d compiled partitions)", n)
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ") + fmt.Sprintf(", %d memcpy", p.Memcpy)
}

// Open creates an onnxruntime-web session for the model in a new tab.
// provider is "wasm", "webgpu" or "webnn"; bundle is a file of the dist
// folder ("" means DefaultBundle). Errors from the page come back as the
// page gave them.
func (b *Browser) Open(modelPath, provider, bundle string) (*Session, error) {
	start := time.Now()
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
	abs, err := filepath.Abs(modelPath)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(abs); err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	srv, err := getServer()
	if err != nil {
		return nil, err
	}
	ctx, cancel, err := b.tab()
	if err != nil {
		return nil, err
	}
	s := &Session{Provider: provider, Bundle: bundle, b: b, ctx: ctx, cancel: cancel, Timeout: b.cfg.Timeout}
	console := chromedp.Console(ctx) // subscribes now, before the page loads
	s.initialized = make(chan struct{}, 1)
	go func() {
		for m, err := range console {
			if err != nil {
				return
			}
			line := m.String()
			s.mu.Lock()
			s.log = append(s.log, line)
			s.mu.Unlock()
			if strings.Contains(line, "Session successfully initialized") {
				select {
				case s.initialized <- struct{}{}:
				default:
				}
			}
		}
	}()
	nctx, ncancel := context.WithTimeout(ctx, b.cfg.Timeout)
	err = chromedp.Do(nctx, chromedp.Navigate(srv.pageURL(dist, bundle)))
	ncancel()
	if err != nil {
		cancel()
		return nil, fmt.Errorf("loading the page in %s: %w", b.Exec, err)
	}
	var meta struct {
		CreateMs            float64  `json:"createMs"`
		InputNames          []string `json:"inputNames"`
		OutputNames         []string `json:"outputNames"`
		ORTVersion          string   `json:"ortVersion"`
		CrossOriginIsolated bool     `json:"crossOriginIsolated"`
		NumThreads          int      `json:"numThreads"`
		UserAgent           string   `json:"userAgent"`
	}
	args, _ := json.Marshal([]any{srv.model(abs), provider})
	if err := s.call("open", string(args), &meta); err != nil {
		cancel()
		return nil, err
	}
	s.InputNames, s.OutputNames = meta.InputNames, meta.OutputNames
	s.CreateTime = ms(meta.CreateMs)
	s.ORTVersion, s.CrossOrigin, s.NumThreads, s.UserAgent = meta.ORTVersion, meta.CrossOriginIsolated, meta.NumThreads, meta.UserAgent
	s.OpenTime = time.Since(start)
	return s, nil
}

func ms(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }

// call evaluates hw.NAME(ARGS...) in the page and decodes its ok value into
// out, or returns its err verbatim.
func (s *Session) call(name, argsJSON string, out any) error {
	return callPage(s.ctx, s.Timeout, name, argsJSON, out)
}

// Eval evaluates a JavaScript expression in the session's page (a promise is
// awaited) and decodes its value into out. The page's session is hw.session.
// It is for tests and benchmarks that set hwtest's own calls against plain
// onnxruntime-web code in the same page.
func (s *Session) Eval(expr string, out any) error {
	v, err := evalJS[json.RawMessage](s.ctx, s.Timeout, expr)
	if err != nil || out == nil {
		return err
	}
	return json.Unmarshal(v, out)
}

func callPage(ctx context.Context, timeout time.Duration, name, argsJSON string, out any) error {
	if argsJSON == "" {
		argsJSON = "[]"
	}
	expr := fmt.Sprintf("hw.%s(...%s)", name, argsJSON)
	res, err := evalJS[struct {
		OK  json.RawMessage `json:"ok"`
		Err *string         `json:"err"`
	}](ctx, timeout, expr)
	if err != nil {
		return err
	}
	if res.Err != nil {
		return pageError(*res.Err)
	}
	if out != nil {
		return json.Unmarshal(res.OK, out)
	}
	return nil
}

// Placement says where ORT put the model's nodes. ORT logs it only at
// verbose level, which makes session creation much slower (1.2 s → 2 s for
// Silero VAD here), so the timed session is created quietly and Placement
// creates a second, verbose session of the same model in the same page
// once, reads the log and releases it.
func (s *Session) Placement() (Placement, error) {
	if s.placement != nil {
		return *s.placement, nil
	}
	s.mu.Lock()
	from := len(s.log)
	s.mu.Unlock()
	select { // drop a stale signal
	case <-s.initialized:
	default:
	}
	if err := s.call("placement", "", nil); err != nil {
		return Placement{}, err
	}
	// Console events arrive apart from the answer: wait for ORT's last
	// line of session creation (the placement block comes before it).
	select {
	case <-s.initialized:
	case <-time.After(5 * time.Second):
	}
	s.mu.Lock()
	p := parsePlacement(s.log[from:])
	s.mu.Unlock()
	s.placement = &p
	return p, nil
}

// Log is what the page wrote to its console so far (ORT's verbose log of
// session creation included).
func (s *Session) Log() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.log...)
}

var (
	placedOn   = regexp.MustCompile(`VerifyEachNodeIsAssignedToAnEp\]\s+(?:All nodes|Node\(s\)) placed on \[([^\]]+)\]\. Number of nodes: (\d+)`)
	placedNode = regexp.MustCompile(`VerifyEachNodeIsAssignedToAnEp\]\s{3}(\S+) \((.*)\)$`)
)

// parsePlacement reads ORT's verbose "Node placements" block:
//
//	[V:onnxruntime:, session_state.cc:1383 VerifyEachNodeIsAssignedToAnEp]  Node(s) placed on [WebNNExecutionProvider]. Number of nodes: 56
//	[V:onnxruntime:, session_state.cc:1385 VerifyEachNodeIsAssignedToAnEp]   WEBNN_1313_1 (WebNNExecutionProvider_WEBNN_1313_1_0)
//	[V:onnxruntime:, session_state.cc:1385 VerifyEachNodeIsAssignedToAnEp]   MemcpyFromHost (Memcpy)
//
// When every node is on one EP, ORT logs only "All nodes placed on [EP].
// Number of nodes: N", without the list.
func parsePlacement(log []string) Placement {
	p := Placement{Nodes: map[string]int{}, Partitions: map[string]int{}}
	ep := ""
	listed := map[string]bool{}
	for _, line := range log {
		if m := placedOn.FindStringSubmatch(line); m != nil {
			p.Known = true
			ep = m[1]
			if strings.Contains(line, "All nodes") {
				n, _ := strconv.Atoi(m[2])
				p.Nodes[ep] = n
			}
			continue
		}
		if m := placedNode.FindStringSubmatch(line); m != nil && ep != "" {
			if !listed[ep] {
				listed[ep] = true
				p.Nodes[ep] = 0
			}
			switch op, name := m[1], m[2]; {
			case op == "MemcpyToHost" || op == "MemcpyFromHost":
				p.Memcpy++
			case strings.HasPrefix(name, ep+"_"):
				p.Nodes[ep]++
				p.Partitions[ep]++
			default:
				p.Nodes[ep]++
			}
		}
	}
	return p
}

// Run runs the session once and returns every output (in OutputNames order)
// and the in-page time of session.run.
func (s *Session) Run(inputs []Tensor) ([]Tensor, time.Duration, error) {
	args, err := inputArgs(inputs)
	if err != nil {
		return nil, 0, err
	}
	var res struct {
		Ms      float64      `json:"ms"`
		Outputs []wireTensor `json:"outputs"`
	}
	if err := s.call("run", args, &res); err != nil {
		return nil, 0, err
	}
	outs := make([]Tensor, len(res.Outputs))
	for i, w := range res.Outputs {
		t, err := decode(w)
		if err != nil {
			return nil, 0, err
		}
		outs[i] = t
	}
	return outs, ms(res.Ms), nil
}

// Bind sends inputs to the page once, as the feeds of Measure.
func (s *Session) Bind(inputs []Tensor) error {
	args, err := inputArgs(inputs)
	if err != nil {
		return err
	}
	return s.call("bind", args, nil)
}

// inputArgs is the JSON argument list [inputs] of hw.run and hw.bind.
func inputArgs(inputs []Tensor) (string, error) {
	wire := make([]wireTensor, len(inputs))
	for i, t := range inputs {
		w, err := encode(t)
		if err != nil {
			return "", err
		}
		wire[i] = w
	}
	args, err := json.Marshal([]any{wire})
	return string(args), err
}

// Measure runs the bound inputs back to back in the page, each run timed
// there (performance.now around session.run), until maxRuns runs or budget
// has passed (one run at least), and returns their times in order. It is the
// loop a user would write: nothing crosses to Go between runs. The call is
// bounded by budget plus Timeout, so a hung run ends it with ErrTimedOut.
func (s *Session) Measure(maxRuns int, budget time.Duration) ([]time.Duration, error) {
	args, _ := json.Marshal([]any{maxRuns, float64(budget) / float64(time.Millisecond)})
	var msList []float64
	if err := callPage(s.ctx, budget+s.Timeout, "measure", string(args), &msList); err != nil {
		return nil, err
	}
	if len(msList) == 0 {
		return nil, errors.New("the page timed no run")
	}
	out := make([]time.Duration, len(msList))
	for i, v := range msList {
		out[i] = ms(v)
	}
	return out, nil
}

// Close releases the session and closes its tab.
func (s *Session) Close() error {
	if s.cancel == nil {
		return nil
	}
	err := s.call("close", "", nil)
	s.cancel()
	s.cancel = nil
	return err
}
