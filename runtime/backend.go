package runtime

import (
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
	wire := make([]browser.Tensor, len(inputs))
	for i, in := range inputs {
		typ, ok := webTypes[in.Type]
		if !ok {
			return nil, 0, fmt.Errorf("input %q: element type %v has no onnxruntime-web equivalent here", in.Name, in.Type)
		}
		wire[i] = browser.Tensor{Name: in.Name, Type: typ, Shape: in.Shape, Data: in.Data}
	}
	outs, took, err := bs.s.Run(wire)
	if err != nil {
		return nil, took, err
	}
	result := make([]Tensor, len(outs))
	for i, o := range outs {
		result[i] = Tensor{Name: o.Name, Type: nativeTypes[o.Type], Shape: o.Shape, Data: o.Data}
	}
	return result, took, nil
}

func (bs *browserSession) Bind(inputs []Tensor) (TimedRun, error) {
	return browserTimed{bs: bs, inputs: inputs}, nil
}

func (bs *browserSession) Close() error { return bs.s.Close() }

// createTime is InferenceSession.create in the page: the load time, without
// Chromium's launch, the tab and the page, which Open also waits for.
func (bs *browserSession) createTime() time.Duration { return bs.s.CreateTime }

// memory is Chromium's side of the memory: the model lives there.
func (bs *browserSession) memory() int64 { return bs.b.Memory() }

// browserTimed times session.run inside the page (performance.now), so the
// Chrome DevTools round trip is not counted as inference.
type browserTimed struct {
	bs     *browserSession
	inputs []Tensor
}

func (t browserTimed) Run() (time.Duration, error) {
	_, took, err := t.bs.run(t.inputs)
	return took, err
}

func (browserTimed) Close() {}

var webTypes = map[ort.TensorElementDataType]string{
	ort.TensorElementDataTypeFloat: "float32", ort.TensorElementDataTypeDouble: "float64",
	ort.TensorElementDataTypeInt64: "int64", ort.TensorElementDataTypeInt32: "int32",
	ort.TensorElementDataTypeInt8: "int8", ort.TensorElementDataTypeUint8: "uint8",
	ort.TensorElementDataTypeBool: "bool",
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
func Shutdown() { browser.CloseAll() }
