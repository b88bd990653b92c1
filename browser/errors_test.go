package browser

import (
	"context"
	"errors"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/hwtest/hwtest/internal/testenv"
)

// onnxruntime-web's kernel failures are typed, their text unchanged.
func TestKernelError(t *testing.T) {
	for _, c := range []struct{ msg, ep, op, node string }{
		// qwen2's fixture on the webgpu target, the last full run.
		{`[WebGPU] Kernel "[Mul] /model/layers.0/self_attn/Mul_71" failed. Error: Can't perform binary op on the given tensors`,
			"WebGPU", "Mul", "/model/layers.0/self_attn/Mul_71"},
		{`Non-zero status code returned while running Gather node. Name:'/embed/Gather' Status Message: indices element out of data bounds, idx=9 must be within the inclusive range [-5,4]`,
			"", "Gather", "/embed/Gather"},
	} {
		err := pageError(c.msg)
		var k *KernelError
		if !errors.Is(err, ErrKernelFailed) || !errors.As(err, &k) || k.EP != c.ep || k.Op != c.op || k.Node != c.node || err.Error() != c.msg {
			t.Errorf("%q: %#v", c.msg, err)
		}
	}
	if err := pageError("input 'x' is missing in 'feeds'."); errors.Is(err, ErrKernelFailed) {
		t.Errorf("a plain page error taken for a kernel failure: %v", err)
	}
}

// A crashed page or browser gives a *CrashError at once, not a timeout.
func TestCrashIsTyped(t *testing.T) {
	requireBrowser(t, "wasm", "")
	model := repoFile(sileroV5)
	if !isFile(model) {
		testenv.Need(t, "Silero VAD v5 (make setup)", "no "+model)
	}
	b, err := Shared(Config{}, false)
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.Open(model, "wasm", "")
	if err != nil {
		t.Fatal(err)
	}
	s.Timeout = 30 * time.Second
	ctx, cancel := context.WithTimeout(s.ctx, 2*time.Second)
	_, _ = chromedp.Call(ctx, page.Crash, cdp.Empty{}) // the renderer dies: no answer comes
	cancel()
	start := time.Now()
	_, _, err = s.Run(nil)
	var c *CrashError
	if !errors.Is(err, ErrCrashed) || !errors.As(err, &c) || c.Browser {
		t.Errorf("run on a crashed page: %v (%T)", err, err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the crash took %v to be noticed", d)
	}
	t.Logf("page crash: %v after %v", err, time.Since(start).Round(time.Millisecond))

	s2, err := b.Open(model, "wasm", "") // the browser survived its page
	if err != nil {
		t.Fatalf("a new page after a page crash: %v", err)
	}
	if err := syscall.Kill(b.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	_, _, err = s2.Run(nil)
	var exit *exec.ExitError
	if !errors.As(err, &c) || !c.Browser || !errors.As(err, &exit) {
		t.Errorf("run in a killed browser: %v (%T)", err, err)
	}
	t.Logf("browser crash: %v after %v", err, time.Since(start).Round(time.Millisecond))
	CloseAll()
}
