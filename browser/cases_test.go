package browser

import (
	"context"
	"encoding/base64"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/hwtest/hwtest/conformance"
	"github.com/hwtest/hwtest/internal/testenv"
	"github.com/hwtest/hwtest/onnx"
)

// webType is the onnxruntime-web type of each ONNX element type the node
// cases use; bfloat16 has none.
var webType = map[onnx.DataType]string{
	1: "float32", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32", 7: "int64",
	8: "string", 9: "bool", 10: "float16", 11: "float64", 12: "uint32", 13: "uint64",
}

// readTensorProto reads a node case's input_K.pb/output_K.pb: a serialised
// TensorProto whose values are in raw_data, string_data or one of the typed
// fields. elem is the element type the graph declares (bfloat16 data is
// stored as UINT16). The runtime has its own reader (onnx/); this one keeps
// the browser package's test free of it.
func readTensorProto(path string, elem onnx.DataType) (Tensor, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Tensor{}, err
	}
	t := Tensor{Shape: []int64{}}
	typ, ok := webType[elem]
	if !ok {
		return Tensor{}, fmt.Errorf("%s: element type %v has no onnxruntime-web type", path, elem)
	}
	t.Type = typ
	var raw []byte
	var nums []float64 // from the typed fields
	for len(b) > 0 {
		num, wt, n := protowire.ConsumeTag(b)
		if n < 0 {
			return Tensor{}, fmt.Errorf("%s: bad tag", path)
		}
		b = b[n:]
		var v []byte
		var x uint64
		switch wt {
		case protowire.VarintType:
			x, n = protowire.ConsumeVarint(b)
		case protowire.BytesType:
			v, n = protowire.ConsumeBytes(b)
		case protowire.Fixed32Type:
			var u uint32
			u, n = protowire.ConsumeFixed32(b)
			x = uint64(u)
		case protowire.Fixed64Type:
			x, n = protowire.ConsumeFixed64(b)
		default:
			n = protowire.ConsumeFieldValue(num, wt, b)
		}
		if n < 0 {
			return Tensor{}, fmt.Errorf("%s: bad field %d", path, num)
		}
		b = b[n:]
		// A repeated numeric field comes packed (bytes) or one value per tag.
		each := func(f func(x uint64)) {
			if wt != protowire.BytesType {
				f(x)
				return
			}
			for len(v) > 0 {
				var y uint64
				var m int
				switch num {
				case 4: // float_data: fixed32
					var u uint32
					u, m = protowire.ConsumeFixed32(v)
					y = uint64(u)
				case 10: // double_data: fixed64
					y, m = protowire.ConsumeFixed64(v)
				default:
					y, m = protowire.ConsumeVarint(v)
				}
				if m < 0 {
					return
				}
				v = v[m:]
				f(y)
			}
		}
		switch num {
		case 1: // dims
			each(func(y uint64) { t.Shape = append(t.Shape, int64(y)) })
		case 8: // name
			t.Name = string(v)
		case 9: // raw_data
			raw = v
		case 6: // string_data
			t.Strings = append(t.Strings, string(v))
		case 4:
			each(func(y uint64) { nums = append(nums, float64(math.Float32frombits(uint32(y)))) })
		case 10:
			each(func(y uint64) { nums = append(nums, math.Float64frombits(y)) })
		case 5: // int32_data: int32, int16, int8, uint16, uint8, bool, float16 bits
			each(func(y uint64) {
				if elem == onnx.Float16 {
					nums = append(nums, halfValue(uint16(y)))
				} else {
					nums = append(nums, float64(int32(y)))
				}
			})
		case 7: // int64_data
			each(func(y uint64) { nums = append(nums, float64(int64(y))) })
		case 11: // uint64_data: uint32, uint64
			each(func(y uint64) { nums = append(nums, float64(y)) })
		}
	}
	if t.Type == "string" {
		if t.Strings == nil {
			t.Strings = []string{}
		}
		return t, nil
	}
	if raw != nil {
		w, err := decode(wireTensor{Name: t.Name, Type: t.Type, Shape: t.Shape, B64: b64(raw)})
		if err != nil {
			return Tensor{}, fmt.Errorf("%s: %w", path, err)
		}
		return w, nil
	}
	if nums == nil {
		nums = []float64{}
	}
	t.Data = nums
	if int64(len(nums)) != numElements(t.Shape) {
		return Tensor{}, fmt.Errorf("%s: shape %v, %d values", path, t.Shape, len(nums))
	}
	return t, nil
}

// nodeCase is a node test case ready for a CasePage, with what ONNX expects.
type nodeCase struct {
	Case
	Want []Tensor
	Skip string // why it cannot be sent: non-tensor I/O, bfloat16
}

func loadNodeCase(dir string) (nodeCase, error) {
	c := nodeCase{Case: Case{Name: filepath.Base(dir), Model: filepath.Join(dir, "model.onnx")}}
	s, err := onnx.InspectFile(c.Model)
	if err != nil {
		return c, err
	}
	for k, vi := range s.Inputs {
		if _, ok := webType[vi.Type]; !ok {
			c.Skip = fmt.Sprintf("input %s: element type %v", vi.Name, vi.Type)
			return c, nil
		}
		t, err := readTensorProto(filepath.Join(dir, "test_data_set_0", fmt.Sprintf("input_%d.pb", k)), vi.Type)
		if err != nil {
			return c, err
		}
		t.Name = vi.Name
		c.Inputs = append(c.Inputs, t)
	}
	for k, vi := range s.Outputs {
		if _, ok := webType[vi.Type]; !ok {
			c.Skip = fmt.Sprintf("output %s: element type %v", vi.Name, vi.Type)
			return c, nil
		}
		t, err := readTensorProto(filepath.Join(dir, "test_data_set_0", fmt.Sprintf("output_%d.pb", k)), vi.Type)
		if err != nil {
			return c, err
		}
		t.Name = vi.Name
		c.Want = append(c.Want, t)
	}
	return c, nil
}

// nodeCases loads the named node cases (all of them when names is empty).
func nodeCases(t testing.TB, names ...string) []nodeCase {
	t.Helper()
	dir, err := conformance.DataDir("")
	testenv.Need(t, "ONNX's node test cases (make setup)", err)
	if len(names) == 0 {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.IsDir() && strings.HasPrefix(e.Name(), "test_") {
				names = append(names, e.Name())
			}
		}
	}
	out := make([]nodeCase, len(names))
	for i, n := range names {
		c, err := loadNodeCase(filepath.Join(dir, n))
		if err != nil {
			t.Fatalf("case %s: %v", n, err)
		}
		out[i] = c
	}
	return out
}

// mismatch compares got with ONNX's expected outputs at conformance.Tolerance
// and says how they differ ("" when they agree).
func mismatch(got, want []Tensor) string {
	if len(got) != len(want) {
		return fmt.Sprintf("%d outputs, want %d", len(got), len(want))
	}
	tol := conformance.Tolerance
	for k, w := range want {
		g := got[k]
		if g.Type != w.Type {
			return fmt.Sprintf("output %d (%s): type %s, want %s", k, w.Name, g.Type, w.Type)
		}
		if numElements(g.Shape) != numElements(w.Shape) || len(g.Shape) != len(w.Shape) {
			return fmt.Sprintf("output %d (%s): shape %v, want %v", k, w.Name, g.Shape, w.Shape)
		}
		if w.Type == "string" {
			for i := range w.Strings {
				if g.Strings[i] != w.Strings[i] {
					return fmt.Sprintf("output %d (%s)[%d]: %q, want %q", k, w.Name, i, g.Strings[i], w.Strings[i])
				}
			}
			continue
		}
		for i, want := range w.Data {
			got := g.Data[i]
			if got == want || math.IsNaN(want) && math.IsNaN(got) { // Inf == Inf
				continue
			}
			if !(math.Abs(got-want) <= tol.ATol+tol.RTol*math.Abs(want)) {
				return fmt.Sprintf("output %d (%s)[%d]: %g, want %g", k, w.Name, i, got, want)
			}
		}
	}
	return ""
}

func b64(raw []byte) string { return base64.StdEncoding.EncodeToString(raw) }

// conformanceTargets are the four browser targets of hardware.yaml.
var conformanceTargets = []struct{ name, provider, bundle string }{
	{"wasm", "wasm", "ort.min.js"},
	{"webgpu", "webgpu", "ort.min.js"},
	{"webgpu-native", "webgpu", "ort.webgpu.min.js"},
	{"webnn", "webnn", "ort.min.js"},
}

// TestConformanceAllBrowserTargets runs every node case on the four browser
// targets, one page each, and reports time and counts per target. It takes
// minutes: set HWTEST_WEB_CONFORMANCE=1 (or a target name) to run it.
func TestConformanceAllBrowserTargets(t *testing.T) {
	only := os.Getenv("HWTEST_WEB_CONFORMANCE")
	if only == "" {
		t.Skip("set HWTEST_WEB_CONFORMANCE=1 (or a target name) to run all node cases on the browser targets")
	}
	start := time.Now()
	all := nodeCases(t)
	var cases []Case
	var want [][]Tensor
	skipped := 0
	for _, c := range all {
		if c.Skip != "" {
			skipped++
			continue
		}
		cases = append(cases, c.Case)
		want = append(want, c.Want)
	}
	t.Logf("%d cases loaded in %v (%d not sendable: non-tensor I/O or bfloat16)", len(cases), time.Since(start).Round(time.Millisecond), skipped)
	total := time.Now()
	for _, tg := range conformanceTargets {
		if only != "1" && only != tg.name {
			continue
		}
		requireBrowser(t, tg.provider, tg.bundle)
		b, err := Shared(Config{}, tg.provider == "webnn")
		if err != nil {
			t.Fatal(err)
		}
		t0 := time.Now()
		p, err := b.OpenCasePage(tg.provider, tg.bundle)
		if err != nil {
			t.Fatal(err)
		}
		p.Timeout = 30 * time.Second
		if os.Getenv("HWTEST_WEB_CONFORMANCE_V") != "" {
			p.settled = func(i int, r CaseResult) {
				t.Logf("%s %4d %s %.0f s: %s %s", tg.name, i, cases[i].Name, time.Since(t0).Seconds(), r.Stage, firstLine(r.Err))
			}
		}
		res, err := p.Run(cases)
		wall := time.Since(t0)
		if err != nil {
			t.Errorf("%s: %v", tg.name, err)
		}
		_ = p.Close()
		var dump strings.Builder
		var pass, mism, createFail, runFail, other int
		var createMs, runMs, pageMs float64
		errs := map[string]int{}
		for i, r := range res {
			createMs += r.CreateMs
			runMs += r.RunMs
			pageMs += r.PageMs
			switch {
			case r.Err == "":
				if m := mismatch(r.Outputs, want[i]); m != "" {
					mism++
					if os.Getenv("HWTEST_WEB_CONFORMANCE_V") != "" {
						t.Logf("%s %s: mismatch: %s", tg.name, cases[i].Name, m)
					}
				} else {
					pass++
				}
			case r.Stage == "create":
				createFail++
			case r.Stage == "run":
				runFail++
			default:
				other++
			}
			fmt.Fprintf(&dump, "%s\t%s\t%s\t%s\n", cases[i].Name, r.Stage, firstLine(r.Err), mismatch(r.Outputs, want[i]))
			if r.Err != "" {
				errs[r.Stage+": "+firstLine(r.Err)]++
				if os.Getenv("HWTEST_WEB_CONFORMANCE_V") != "" {
					t.Logf("%s %s: %s: %s", tg.name, cases[i].Name, r.Stage, firstLine(r.Err))
				}
			}
		}
		n := float64(len(res))
		t.Logf("%s (%s): %d cases in %.1f s, %d pages: ran %d (pass %d, mismatch %d), create failed %d, run failed %d, other %d; device %s",
			tg.name, tg.bundle, len(res), wall.Seconds(), p.pages,
			pass+mism, pass, mism, createFail, runFail, other, p.Device())
		ms := float64(wall.Microseconds()) / 1000
		t.Logf("  per case: %.2f ms = in page %.2f (create %.2f, run %.2f, feeds+outputs+release %.2f) + outside the page %.2f (CDP, Go, page loads)",
			ms/n, pageMs/n, createMs/n, runMs/n, (pageMs-createMs-runMs)/n, (ms-pageMs)/n)
		if d := os.Getenv("HWTEST_WEB_CONFORMANCE_DUMP"); d != "" {
			if err := os.WriteFile(filepath.Join(d, tg.name+".tsv"), []byte(dump.String()), 0o644); err != nil {
				t.Error(err)
			}
		}
		keys := slices.Sorted(maps.Keys(errs))
		sort.SliceStable(keys, func(i, j int) bool { return errs[keys[i]] > errs[keys[j]] })
		for _, k := range keys[:min(len(keys), 12)] {
			t.Logf("  %3d× %s", errs[k], k)
		}
	}
	t.Logf("all targets: %.1f s", time.Since(total).Seconds())
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// TestCasePage runs a handful of real node cases in one page on wasm and
// webgpu: outputs must match ONNX's, a case the provider refuses must carry
// the page's exact error, and the batch goes on after it.
func TestCasePage(t *testing.T) {
	cs := nodeCases(t, "test_add", "test_bitshift_right_uint16", "test_relu", "test_cast_FLOAT16_to_FLOAT",
		"test_cast_STRING_to_FLOAT", "test_max_uint64", "test_constant", "test_where_example",
		"test_averagepool_2d_ceil", "test_averagepool_2d_default")
	var cases []Case
	for _, c := range cs {
		if c.Skip != "" {
			t.Fatalf("%s: %s", c.Name, c.Skip)
		}
		cases = append(cases, c.Case)
	}
	for _, tc := range []struct {
		provider string
		// refused is what the provider says about test_bitshift_right_uint16.
		refused string
		// wrong are cases whose outputs the provider gets wrong (a finding,
		// pinned so that a change shows); failing, those it fails to run.
		wrong   map[string]bool
		failing map[string]string
		// pages: JSEP's AveragePool ceil_mode error poisons its page, which
		// is replaced, and the next case runs again on the new one.
		pages int
	}{
		{"wasm", "Could not find an implementation for BitShift(11) node with name ''", nil, nil, 1},
		{"webgpu", "IsNodeCompatibleWithProvider", map[string]bool{"test_cast_FLOAT16_to_FLOAT": true},
			map[string]string{"test_averagepool_2d_ceil": "ceil_mode kernel execution (padding/divisor) is not yet implemented in the WebGPU AveragePool kernel"}, 2},
	} {
		t.Run(tc.provider, func(t *testing.T) {
			requireBrowser(t, tc.provider, "")
			b, err := Shared(Config{}, false)
			if err != nil {
				t.Fatal(err)
			}
			p, err := b.OpenCasePage(tc.provider, "")
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			res, err := p.Run(cases)
			if err != nil {
				t.Fatal(err)
			}
			if len(res) != len(cases) {
				t.Fatalf("%d results for %d cases", len(res), len(cases))
			}
			for i, r := range res {
				c := cs[i]
				t.Logf("%s: stage %q err %q create %.1f ms run %.1f ms", c.Name, r.Stage, firstLine(r.Err), r.CreateMs, r.RunMs)
				if c.Name == "test_bitshift_right_uint16" {
					if r.Stage != "create" || !strings.Contains(r.Err, tc.refused) {
						t.Errorf("%s: stage %q err %q, want a create error with %q", c.Name, r.Stage, r.Err, tc.refused)
					}
					continue
				}
				if want, ok := tc.failing[c.Name]; ok {
					if r.Stage != "run" || !strings.Contains(r.Err, want) {
						t.Errorf("%s: stage %q err %q, want a run error with %q", c.Name, r.Stage, r.Err, want)
					}
					continue
				}
				if r.Err != "" {
					t.Errorf("%s: %s: %s", c.Name, r.Stage, r.Err)
					continue
				}
				if r.CreateMs <= 0 || r.RunMs <= 0 {
					t.Errorf("%s: create %v ms, run %v ms: not timed", c.Name, r.CreateMs, r.RunMs)
				}
				m := mismatch(r.Outputs, c.Want)
				if tc.wrong[c.Name] {
					if m == "" {
						t.Errorf("%s: now matches ONNX's outputs on %s (was wrong): update the test", c.Name, tc.provider)
					}
					continue
				}
				if m != "" {
					t.Errorf("%s: %s", c.Name, m)
				}
				for k, o := range r.Outputs {
					if o.Name != c.Want[k].Name {
						t.Errorf("%s: output %d is %q, want %q", c.Name, k, o.Name, c.Want[k].Name)
					}
				}
			}
			if p.pages != tc.pages {
				t.Errorf("%d pages for one batch, want %d", p.pages, tc.pages)
			}
			if d := p.Device(); !strings.Contains(d, b.Version) {
				t.Errorf("device %q does not name the browser %s", d, b.Version)
			}
		})
	}
}

// spinModel is a model whose run never ends in practice: a Loop of 2^62
// iterations (a case that hangs).
func spinModel(t *testing.T) string {
	g := onnx.NewGraph("spin")
	x := g.Input("x", onnx.Float32, 1)
	body := g.Subgraph("body")
	body.Input("iter", onnx.Int64)
	cond := body.Input("cond_in", onnx.Bool)
	v := body.Input("v_in", onnx.Float32, 1)
	body.Node("Identity", []string{cond}, []string{"cond_out"})
	body.Node("Neg", []string{v}, []string{"v_out"})
	body.Output("cond_out", onnx.Bool)
	body.Output("v_out", onnx.Float32, 1)
	g.Node("Loop", []string{g.Int64Scalar(1 << 62), "", x}, []string{"y"}, onnx.GraphAttr("body", body))
	g.Output("y", onnx.Float32, 1)
	path := filepath.Join(t.TempDir(), "spin.onnx")
	if err := os.WriteFile(path, g.Model().Marshal(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// A case that hangs gets "timed out", its page is replaced, and the cases
// after it still run; so does a case under which the page crashes.
func TestCasePageHangAndCrash(t *testing.T) {
	requireBrowser(t, "wasm", "")
	cs := nodeCases(t, "test_add", "test_relu")
	spin := Case{Name: "spin", Model: spinModel(t), Inputs: []Tensor{{Name: "x", Type: "float32", Shape: []int64{1}, Data: []float64{1}}}}
	cases := []Case{cs[0].Case, spin, cs[1].Case}
	b, err := Shared(Config{}, false)
	if err != nil {
		t.Fatal(err)
	}
	p, err := b.OpenCasePage("wasm", "")
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()

	check := func(res []CaseResult, wantErr string) {
		t.Helper()
		if len(res) != 3 {
			t.Fatalf("%d results", len(res))
		}
		for i, r := range res {
			t.Logf("%s: stage %q err %q", cases[i].Name, r.Stage, firstLine(r.Err))
		}
		if m := mismatch(res[0].Outputs, cs[0].Want); res[0].Err != "" || m != "" {
			t.Errorf("test_add before the hang: %q %s", res[0].Err, m)
		}
		if m := mismatch(res[2].Outputs, cs[1].Want); res[2].Err != "" || m != "" {
			t.Errorf("test_relu after the hang: %q %s", res[2].Err, m)
		}
		if res[1].Stage != "run" || !strings.Contains(res[1].Err, wantErr) {
			t.Errorf("spin: stage %q err %q, want a run error with %q", res[1].Stage, res[1].Err, wantErr)
		}
	}

	p.Timeout = 3 * time.Second
	start := time.Now()
	res, err := p.Run(cases)
	if err != nil {
		t.Fatal(err)
	}
	check(res, "timed out after 3s")
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("the batch took %v with a 3 s timeout", d)
	}
	if p.pages != 2 {
		t.Errorf("%d pages, want 2 (the hung one replaced once)", p.pages)
	}

	// The page crashes while spin runs: the crash is spin's error.
	p.Timeout = time.Minute
	p.settled = func(i int, r CaseResult) {
		if i == 0 {
			go func() {
				time.Sleep(500 * time.Millisecond) // spin is running
				ctx, cancel := context.WithTimeout(p.page.ctx, 2*time.Second)
				defer cancel()
				_, _ = chromedp.Call(ctx, page.Crash, cdp.Empty{})
			}()
		}
	}
	start = time.Now()
	res, err = p.Run(cases)
	if err != nil {
		t.Fatal(err)
	}
	check(res, "chromium page crashed")
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("the crash took %v to be noticed", d)
	}
	if p.pages != 3 {
		t.Errorf("%d pages, want 3 (one more for the crash)", p.pages)
	}
}

// The GPU process dies mid-batch (killed): the case that sees its
// WebGPU device lost says so, the page is replaced, and the cases after it run
// on a new device.
func TestCasePageGPUCrash(t *testing.T) {
	requireBrowser(t, "webgpu", "")
	names := []string{"test_add"}
	for range 30 {
		names = append(names, "test_relu", "test_add")
	}
	cs := nodeCases(t, names...)
	var cases []Case
	for _, c := range cs {
		cases = append(cases, c.Case)
	}
	b, err := Shared(Config{}, false)
	if err != nil {
		t.Fatal(err)
	}
	p, err := b.OpenCasePage("webgpu", "")
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	p.settled = func(i int, r CaseResult) {
		if i != 0 {
			return
		}
		killed := 0
		for pid := range descendants(b.PID, chromiumPIDs()) {
			if cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); strings.Contains(string(cmd), "--type=gpu-process") {
				if err := syscall.Kill(pid, syscall.SIGKILL); err == nil {
					killed++
				}
			}
		}
		if killed == 0 {
			t.Error("no GPU process found to kill")
		}
		time.Sleep(time.Second)
	}
	res, err := p.Run(cases)
	if err != nil {
		t.Fatal(err)
	}
	lost := -1
	for i, r := range res {
		if r.Err != "" {
			t.Logf("%d %s: %s: %s", i, cases[i].Name, r.Stage, firstLine(r.Err))
		}
		if strings.Contains(r.Err, "WebGPU device lost") && lost < 0 {
			lost = i
		}
	}
	if lost < 0 {
		t.Fatal("no case saw the WebGPU device lost")
	}
	for i := lost + 1; i < len(res); i++ {
		if m := mismatch(res[i].Outputs, cs[i].Want); res[i].Err != "" || m != "" {
			t.Errorf("%d %s after the loss: %q %s", i, cases[i].Name, res[i].Err, m)
		}
	}
	if p.pages != 2 {
		t.Errorf("%d pages, want 2", p.pages)
	}
}
