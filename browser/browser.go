// Package browser runs ONNX models with onnxruntime-web in headless Chromium,
// for the browser targets: wasm, webgpu and webnn.
//
// One Chromium per executable runs per process, started on first use
// ([Shared]) with a fresh temporary profile, and reused by every [Session];
// each session has its own tab. [CloseAll] stops every browser this process
// started and every process they spawned, and removes their profiles; a
// browser dies with the process that started it, and the profiles of dead
// processes are removed at the next start (see profile.go). A local HTTP server on
// 127.0.0.1 serves the onnxruntime-web dist folder and the model files with
// the COOP/COEP headers that make the page cross-origin isolated (wasm
// threads need it).
//
// A [CasePage] runs many small models (ONNX's conformance cases) in one tab,
// a session per model, with one call into the page per batch.
//
// What it needs comes from scripts/setup-browsers.sh (make setup): Debian's
// chromium at /usr/bin/chromium for wasm and WebGPU (SwiftShader), the
// Chromium of npm @sparticuz/chromium for WebNN, and npm onnxruntime-web's
// dist/ under STATE_DIR/web/.
package browser

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hwtest/hwtest/layout"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/inspector"
	"github.com/chromedp/chromedp"
)

// Config says where the browsers and onnxruntime-web are. The zero value
// uses the defaults.
type Config struct {
	// StateDir is the setup folder (default: .hwtest at the repository
	// root, found from the working directory by go.mod).
	StateDir string
	// Chromium runs wasm and WebGPU (default /usr/bin/chromium).
	Chromium string
	// WebNNChromium runs WebNN (default STATE_DIR/web/sparticuz-chromium/chromium).
	WebNNChromium string
	// Timeout bounds opening a session and one run (default 2 minutes).
	Timeout time.Duration
}

// DefaultChromium is Debian's chromium, which make setup installs.
const DefaultChromium = "/usr/bin/chromium"

// setupHint is what every "missing" reason ends with.
const setupHint = "run `make setup`, or scripts/setup-browsers.sh .hwtest"

func (c Config) withDefaults() Config {
	if c.StateDir == "" {
		c.StateDir = defaultStateDir()
	}
	if c.Chromium == "" {
		c.Chromium = DefaultChromium
	}
	if c.WebNNChromium == "" {
		c.WebNNChromium = filepath.Join(c.StateDir, "web", "sparticuz-chromium", "chromium")
	}
	if c.Timeout <= 0 {
		c.Timeout = 2 * time.Minute
	}
	return c
}

// DistDir is the onnxruntime-web dist folder that setup installs.
func (c Config) DistDir() string {
	return filepath.Join(c.withDefaults().StateDir, "web", "onnxruntime-web")
}

// defaultStateDir is the repository's .hwtest, or .hwtest here outside one.
func defaultStateDir() string {
	root, err := layout.Root()
	if err != nil {
		return layout.StateDir
	}
	return layout.State(root)
}

// chromedpDefaultFeatures is the enable-features value of
// chromedp.DefaultExecAllocatorOptions (v0.22.1). A second enable-features
// flag replaces the first, so ours are merged into this one; a test checks the
// launched command line holds all of them.
var chromedpDefaultFeatures = []string{"NetworkService", "NetworkServiceInProcess"}

// ourFeatures are the features the browser targets need.
var ourFeatures = []string{"WebMachineLearningNeuralNetwork"}

// Flags are the flags added to chromedp.DefaultExecAllocatorOptions, which
// already has headless, no-first-run, disable-background-networking,
// disable-sync and friends; they are repeated here so that the list says
// what this package relies on.
func Flags() map[string]any {
	return map[string]any{
		"headless":                      true,
		"no-sandbox":                    true, // root in containers; Chromium refuses to start without it
		"enable-unsafe-webgpu":          true, // WebGPU on Linux (SwiftShader here)
		"enable-features":               strings.Join(append(append([]string{}, chromedpDefaultFeatures...), ourFeatures...), ","),
		"disable-background-networking": true,
		"disable-component-update":      true,
		"disable-sync":                  true,
		"no-first-run":                  true,
		"disable-quic":                  true,
	}
}

// Browser is one headless Chromium process.
type Browser struct {
	Exec       string        // executable
	Version    string        // Browser.getVersion product, e.g. "HeadlessChrome/156.0.8078.79"
	LaunchTime time.Duration // from exec to the first answer over CDP
	PID        int

	cfg         Config
	userDataDir string
	ctx         context.Context // the first tab; new tabs derive from it
	cancelTab   context.CancelFunc
	cancelAlloc context.CancelFunc

	mu       sync.Mutex
	adapter  *AdapterInfo
	adErr    error
	contexts map[string]string
}

var (
	browsersMu sync.Mutex
	browsers   = map[string]*Browser{} // by executable
)

// Shared returns the process's browser for the wasm/WebGPU targets
// (cfg.Chromium), or for WebNN when webnn is set (cfg.WebNNChromium),
// starting it on first use.
func Shared(cfg Config, webnn bool) (*Browser, error) {
	cfg = cfg.withDefaults()
	exe := cfg.Chromium
	if webnn {
		exe = cfg.WebNNChromium
	}
	browsersMu.Lock()
	defer browsersMu.Unlock()
	if b := browsers[exe]; b != nil {
		return b, nil
	}
	b, err := launch(cfg, exe)
	if err != nil {
		return nil, err
	}
	browsers[exe] = b
	return b, nil
}

func launch(cfg Config, exe string) (*Browser, error) {
	if st, err := os.Stat(exe); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
		return nil, unavailable("", ErrNotInstalled, nil, "chromium not found at %s (%s)", exe, setupHint)
	}
	removeStaleProfiles()
	dir, err := newProfile()
	if err != nil {
		return nil, err
	}
	opts := append([]chromedp.ExecAllocatorOption{}, chromedp.DefaultExecAllocatorOptions[:]...)
	opts = append(opts, chromedp.ExecPath(exe), chromedp.UserDataDir(dir),
		chromedp.ModifyCmdFunc(dieWithParent),
		// TMPDIR: Chromium's singleton socket folder, which a killed browser
		// leaves behind, goes into the profile and leaves with it.
		chromedp.Env("TMPDIR="+dir, profileEnv+"="+dir))
	flags := Flags()
	for _, name := range slices.Sorted(maps.Keys(flags)) {
		opts = append(opts, chromedp.Flag(name, flags[name]))
	}
	start := time.Now()
	actx, acancel := chromedp.NewExecAllocator(context.Background(), opts...)
	tctx, tcancel := chromedp.NewContext(actx)
	b := &Browser{Exec: exe, cfg: cfg, userDataDir: dir, ctx: tctx, cancelTab: tcancel, cancelAlloc: acancel}
	// The first Run starts the browser; it must run on the tab's own context
	// (a timeout on it would stop the browser later), so time it out apart.
	type result struct {
		v   browser.GetVersionResult
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := chromedp.Run(tctx, func(ctx context.Context, t *chromedp.Target) (browser.GetVersionResult, error) {
			return cdp.Call(ctx, chromedp.FromContext(ctx).Browser, browser.GetVersion, cdp.Empty{})
		})
		done <- result{v, err}
	}()
	var v browser.GetVersionResult
	select {
	case r := <-done:
		v, err = r.v, r.err
	case <-time.After(cfg.Timeout):
		err = fmt.Errorf("no answer over CDP in %v", cfg.Timeout)
	}
	if err != nil {
		b.close()
		return nil, fmt.Errorf("starting %s: %w", exe, err)
	}
	b.LaunchTime = time.Since(start)
	b.Version = v.Product
	if p := chromedp.FromContext(tctx).Browser.Process(); p != nil {
		b.PID = p.Pid
	}
	return b, nil
}

// CommandLine is the browser process's argv as the kernel has it.
func (b *Browser) CommandLine() ([]string, error) {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(b.PID) + "/cmdline")
	if err != nil {
		return nil, err
	}
	return strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00"), nil
}

// close stops the browser and every process it started (renderers, GPU and
// network processes, zygotes, crashpad handlers), waits until they are gone,
// then removes the profile folder.
func (b *Browser) close() {
	// The @sparticuz Chromium's children carry no mark of the profile: take
	// them from the process tree while the browser still holds it together.
	tree := snapshot(b.PID)
	b.cancelTab()
	b.cancelAlloc() // kills the browser and waits for it
	waitGone(b.userDataDir, tree, 5*time.Second)
	_ = removeProfile(b.userDataDir)
}

// CloseAll stops every browser this process started, and the HTTP server,
// and removes the profiles that dead processes left (a suite that crashed
// before its AfterSuite). Call it from a suite's AfterSuite or TestMain, and
// once more at the end of a run; Shared starts a new browser afterwards if
// asked.
func CloseAll() {
	browsersMu.Lock()
	bs := browsers
	browsers = map[string]*Browser{}
	browsersMu.Unlock()
	var wg sync.WaitGroup
	for _, b := range bs {
		wg.Go(b.close)
	}
	wg.Wait()
	removeStaleProfiles()
	stopServer()
	availMu.Lock()
	avail = map[availKey]error{}
	availMu.Unlock()
}

// tab opens a new tab on b; cancel closes it. The tab is created on its
// own context (a first Run on a derived context with a timeout would tie the
// tab to that context).
func (b *Browser) tab() (context.Context, context.CancelFunc, error) {
	ctx, cancel := chromedp.NewContext(b.ctx)
	done := make(chan error, 1)
	go func() { done <- chromedp.Do(ctx) }()
	select {
	case err := <-done:
		if err != nil {
			cancel()
			return nil, nil, fmt.Errorf("opening a tab in %s: %w", b.Exec, err)
		}
	case <-time.After(b.cfg.Timeout):
		cancel()
		return nil, nil, fmt.Errorf("opening a tab in %s: no answer in %v", b.Exec, b.cfg.Timeout)
	}
	// A renderer that dies leaves a call on the page waiting for its timeout:
	// evalJS ends it at once when the tab says it crashed.
	crashed := make(chan struct{})
	var once sync.Once
	if err := chromedp.Listen(ctx, func(ev any) {
		if _, ok := ev.(*inspector.EventTargetCrashed); ok {
			once.Do(func() { close(crashed) })
		}
	}); err != nil {
		cancel()
		return nil, nil, fmt.Errorf("opening a tab in %s: %w", b.Exec, err)
	}
	return context.WithValue(ctx, crashedKey{}, crashed), cancel, nil
}

// crashedKey holds, in a tab's context, a channel closed when its page crashes.
type crashedKey struct{}

// evalJS evaluates expr (a promise is awaited) in the tab and decodes the
// result into T, with the config's timeout. A dead renderer or browser gives
// a *CrashError.
func evalJS[T any](ctx context.Context, timeout time.Duration, expr string) (T, error) {
	crashed, _ := ctx.Value(crashedKey{}).(chan struct{})
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if crashed != nil {
		go func() {
			select {
			case <-crashed:
				cancel()
			case <-ctx.Done():
			}
		}()
	}
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err == nil {
		return v, nil
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return v, &CrashError{Browser: true, Err: err}
	}
	select {
	case <-crashed: // a nil channel (no tab context) never is
		return v, &CrashError{Err: err}
	default:
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return v, fmt.Errorf("%w (%v): %v", ErrTimedOut, timeout, err)
	}
	var exc *chromedp.ExceptionError
	if errors.As(err, &exc) && exc.ExceptionDetails != nil {
		d := exc.ExceptionDetails
		if d.Exception != nil && d.Exception.Description != "" {
			return v, errors.New(d.Exception.Description)
		}
	}
	return v, err
}
