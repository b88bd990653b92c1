package runtime

import (
	"errors"
	"fmt"
	"time"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/hwtest/hwtest/browser"
	"github.com/hwtest/hwtest/layout"
	"github.com/hwtest/hwtest/result"
)

// Backend is what a cell runs inference on: a native ONNX Runtime session, or an
// onnxruntime-web session in headless Chromium. Invariants only see this.
type Backend interface {
	Run(inputs []Tensor) ([]Tensor, error)
	// Bind prepares inputs for repeated timed runs.
	Bind(inputs []Tensor) (TimedRun, error)
	Close() error
}

// TimedRun runs bound inputs and says how long the inference itself took.
type TimedRun interface {
	Run() (time.Duration, error)
	Close()
}

var (
	_ Backend = (*Session)(nil)
	_ Backend = (*browserSession)(nil)
)

// BrowserConfig is where the browser runner finds Chromium and onnxruntime-web: the
// folder `make setup` fills.
func BrowserConfig() browser.Config {
	var cfg browser.Config
	if root, err := Root(); err == nil {
		cfg.StateDir = layout.State(root)
	}
	// One inference in the page is bounded like a native one.
	if d, err := RunTimeout(); err == nil {
		cfg.Timeout = d
	}
	return cfg
}

// browserSession is an onnxruntime-web session behind the Backend interface.
type browserSession struct {
	s *browser.Session
	b *browser.Browser
}

func openBrowserSession(path string, t Target) (*browserSession, error) {
	if _, err := RunTimeout(); err != nil {
		return nil, err
	}
	b, err := browser.Shared(BrowserConfig(), t.Provider == "webnn")
	if err != nil {
		return nil, err
	}
	s, err := b.Open(path, t.Provider, t.Bundle)
	if err != nil {
		return nil, err
	}
	return &browserSession{s: s, b: b}, nil
}

func (bs *browserSession) Run(inputs []Tensor) ([]Tensor, error) {
	out, _, err := bs.run(inputs)
	return out, err
}

func (bs *browserSession) run(inputs []Tensor) ([]Tensor, time.Duration, error) {
	wire, err := webTensors(inputs)
	if err != nil {
		return nil, 0, err
	}
	start := time.Now()
	outs, took, err := bs.s.Run(wire)
	if err != nil {
		return nil, took, withFed(timedOut(err, time.Since(start)), FedText(inputs))
	}
	result := make([]Tensor, len(outs))
	for i, o := range outs {
		result[i] = Tensor{Name: o.Name, Type: nativeTypes[o.Type], Shape: o.Shape, Data: o.Data, Strings: o.Strings}
	}
	return result, took, nil
}

// Bind sends the inputs to the page once; the timed runs happen there, back to back.
func (bs *browserSession) Bind(inputs []Tensor) (TimedRun, error) {
	wire, err := webTensors(inputs)
	if err != nil {
		return nil, err
	}
	if err := bs.s.Bind(wire); err != nil {
		return nil, err
	}
	return &browserTimed{bs: bs, fed: FedText(inputs)}, nil
}

func (bs *browserSession) Close() error { return bs.s.Close() }

// createTime is InferenceSession.create in the page: the load time, without
// Chromium's launch, the tab and the page, which Open also waits for.
func (bs *browserSession) createTime() time.Duration { return bs.s.CreateTime }

// memory is Chromium's side of the memory: the model lives there.
func (bs *browserSession) memory() int64 { return bs.b.Memory() }

// browserTimed hands out runs timed in the page. It asks the page for a batch of
// back-to-back runs (browser.Session.Measure: performance.now around each
// session.run, the loop a user would write) and returns them one per Run, in
// order; an empty buffer asks for the next batch. One call per run instead
// measured the page idling between runs as well: 1.3-1.5x the in-page loop's p50
// on Silero VAD (wasm) here.
type browserTimed struct {
	bs      *browserSession
	samples []time.Duration // timed in the page, not handed out yet
	fed     string          // the bound inputs, for errors (FedText)
}

// Each batch runs for about browserBatch (at least one run, at most
// browserBatchRuns): long enough that the round trip before it is a small share
// of the runs, short enough that the runs left over when Measure stops cost little.
const (
	browserBatch     = 50 * time.Millisecond
	browserBatchRuns = 4096
)

func (t *browserTimed) Run() (time.Duration, error) {
	if len(t.samples) == 0 {
		start := time.Now()
		s, err := t.bs.s.Measure(browserBatchRuns, browserBatch)
		if err != nil {
			return 0, withFed(timedOut(err, time.Since(start)), t.fed)
		}
		t.samples = s
	}
	d := t.samples[0]
	t.samples = t.samples[1:]
	return d, nil
}

func (t *browserTimed) Close() { t.samples = nil }

// timedOut makes a page that did not answer in time (a hung inference) the
// runtime's ErrRunTimeout, as for a native run.
func timedOut(err error, after time.Duration) error {
	if errors.Is(err, browser.ErrTimedOut) {
		return fmt.Errorf("%w after %v (HWTEST_RUN_TIMEOUT): %v", ErrRunTimeout, after.Round(time.Millisecond), err)
	}
	return err
}

func webTensors(inputs []Tensor) ([]browser.Tensor, error) {
	wire := make([]browser.Tensor, len(inputs))
	for i, in := range inputs {
		typ, ok := webTypes[in.Type]
		if !ok {
			return nil, fmt.Errorf("input %q: element type %v has no onnxruntime-web equivalent here", in.Name, in.Type)
		}
		wire[i] = browser.Tensor{Name: in.Name, Type: typ, Shape: in.Shape, Data: in.Data, Strings: in.Strings}
	}
	return wire, nil
}

var webTypes = map[ort.TensorElementDataType]string{
	ort.TensorElementDataTypeFloat: "float32", ort.TensorElementDataTypeDouble: "float64",
	ort.TensorElementDataTypeInt64: "int64", ort.TensorElementDataTypeInt32: "int32",
	ort.TensorElementDataTypeInt8: "int8", ort.TensorElementDataTypeUint8: "uint8",
	ort.TensorElementDataTypeBool: "bool", ort.TensorElementDataTypeFloat16: "float16",
	ort.TensorElementDataTypeUint64: "uint64", ort.TensorElementDataTypeUint32: "uint32",
	ort.TensorElementDataTypeUint16: "uint16", ort.TensorElementDataTypeInt16: "int16",
	ort.TensorElementDataTypeString: "string", // onnxruntime-web has no bfloat16
}

var nativeTypes = func() map[string]ort.TensorElementDataType {
	m := map[string]ort.TensorElementDataType{}
	for k, v := range webTypes {
		m[v] = k
	}
	return m
}()

// browserPlacement reads where onnxruntime-web put the nodes (its verbose log).
// Unknown placement stays nil: nothing is guessed.
func (bs *browserSession) placement() *result.Placement {
	p, err := bs.s.Placement()
	if err != nil || !p.Known {
		return nil
	}
	out := &result.Placement{ByProvider: map[string]result.ProviderShare{}}
	for ep, n := range p.Nodes {
		out.ByProvider[ep] = result.ProviderShare{Nodes: n, Partitions: p.Partitions[ep]}
		out.Nodes += n
	}
	return out
}

// browserDevice says what a browser target really ran on, so a software adapter is
// never read as a GPU result.
func (bs *browserSession) device(t Target) string {
	switch t.Provider {
	case "webgpu":
		a, err := bs.b.Adapter()
		if err != nil {
			return ""
		}
		d := fmt.Sprintf("WebGPU adapter %s/%s", a.Vendor, a.Architecture)
		if a.IsFallbackAdapter {
			d += " (software fallback adapter, isFallbackAdapter: true: CPU, not a GPU)"
		}
		return d + " in " + bs.b.Version
	case "webnn":
		return "WebNN deviceType cpu (Chromium on Linux runs WebNN on the CPU through XNNPACK) in " + bs.b.Version
	}
	return "WebAssembly (CPU) in " + bs.b.Version
}

// Shutdown closes every browser this process started; generated suites call it
// after the suite so no Chromium is left running.
func Shutdown() {
	closeCasePages()
	browser.CloseAll()
}
