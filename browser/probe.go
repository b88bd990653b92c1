package browser

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/chromedp/chromedp"
)

// AdapterInfo is navigator.gpu.requestAdapter()'s adapter.
type AdapterInfo struct {
	Vendor            string   `json:"vendor"`
	Architecture      string   `json:"architecture"`
	Device            string   `json:"device"`
	Description       string   `json:"description"`
	IsFallbackAdapter bool     `json:"isFallbackAdapter"` // SwiftShader (CPU) says true
	Features          []string `json:"features"`
}

// probe runs hw.NAME() in a fresh tab on the harness page.
func (b *Browser) probe(name string, out any) error {
	srv, err := getServer()
	if err != nil {
		return err
	}
	dist := b.cfg.DistDir()
	ctx, cancel, err := b.tab()
	if err != nil {
		return err
	}
	defer cancel()
	nctx, ncancel := context.WithTimeout(ctx, b.cfg.Timeout)
	// The page loads a bundle it does not use: any file will do.
	err = chromedp.Do(nctx, chromedp.Navigate(srv.pageURL(dist, DefaultBundle)))
	ncancel()
	if err != nil {
		return fmt.Errorf("loading the probe page in %s: %w", b.Exec, err)
	}
	return callPage(ctx, b.cfg.Timeout, name, "", out)
}

// Adapter describes the browser's WebGPU adapter, or says why there is none.
func (b *Browser) Adapter() (AdapterInfo, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.adapter == nil && b.adErr == nil {
		var a AdapterInfo
		if err := b.probe("adapter", &a); err != nil {
			b.adErr = err
		} else {
			b.adapter = &a
		}
	}
	if b.adErr != nil {
		return AdapterInfo{}, b.adErr
	}
	return *b.adapter, nil
}

// WebNNContexts tries navigator.ml.createContext({deviceType}) for "cpu",
// "gpu" and "npu": "" where it worked, else the browser's error.
func (b *Browser) WebNNContexts() map[string]string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.contexts == nil {
		out := map[string]string{}
		if err := b.probe("webnn", &out); err != nil {
			for _, d := range []string{"cpu", "gpu", "npu"} {
				out[d] = err.Error()
			}
		}
		b.contexts = out
	}
	res := make(map[string]string, len(b.contexts))
	for k, v := range b.contexts {
		res[k] = v
	}
	return res
}

type availKey struct {
	cfg              Config
	provider, bundle string
}

var (
	availMu sync.Mutex
	avail   = map[availKey]error{}
)

// Available says why provider with bundle ("" = DefaultBundle) cannot run
// here, or "" when it can: the onnxruntime-web bundle, the browser
// executable, the browser starting, a WebGPU adapter (webgpu), a WebNN CPU
// context (webnn). The answer is cached for the process (CloseAll clears it).
// It starts the shared browser it needs.
func Available(cfg Config, provider, bundle string) (reason string) {
	if err := Check(cfg, provider, bundle); err != nil {
		return err.Error()
	}
	return ""
}

// Check is [Available] as an error: nil when the target can run, else an
// *UnavailableError (errors.Is it with ErrNotInstalled, ErrNoWebGPU,
// ErrNoWebNN to tell why).
func Check(cfg Config, provider, bundle string) error {
	cfg = cfg.withDefaults()
	if bundle == "" {
		bundle = DefaultBundle
	}
	key := availKey{cfg, provider, bundle}
	availMu.Lock()
	defer availMu.Unlock()
	if err, ok := avail[key]; ok {
		return err
	}
	err := check(cfg, provider, bundle)
	avail[key] = err
	return err
}

func check(cfg Config, provider, bundle string) error {
	switch provider {
	case "wasm", "webgpu", "webnn":
	default:
		return unavailable(provider, nil, nil, "unknown browser provider %q (want wasm, webgpu or webnn)", provider)
	}
	if p := filepath.Join(cfg.DistDir(), bundle); !isFile(p) {
		return unavailable(provider, ErrNotInstalled, nil, "onnxruntime-web dist missing: no %s (%s)", p, setupHint)
	}
	exe := cfg.Chromium
	if provider == "webnn" {
		exe = cfg.WebNNChromium
	}
	if !isFile(exe) {
		return unavailable(provider, ErrNotInstalled, nil, "chromium not found at %s (%s)", exe, setupHint)
	}
	b, err := Shared(cfg, provider == "webnn")
	if err != nil {
		var u *UnavailableError
		if errors.As(err, &u) {
			return err
		}
		return unavailable(provider, nil, err, "%s", err)
	}
	switch provider {
	case "webgpu":
		if _, err := b.Adapter(); err != nil {
			return unavailable(provider, ErrNoWebGPU, err, "WebGPU in %s (%s): %v", b.Version, b.Exec, err)
		}
	case "webnn":
		if e := b.WebNNContexts()["cpu"]; e != "" {
			return unavailable(provider, ErrNoWebNN, nil, "WebNN in %s (%s): navigator.ml.createContext({deviceType:'cpu'}) failed: %s", b.Version, b.Exec, e)
		}
	}
	return nil
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}
