package diagnose

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/hwtest/hwtest/onnx"
	"github.com/hwtest/hwtest/zoo"
)

func zooOps(t *testing.T, name string) map[string]int {
	t.Helper()
	b, _, err := zoo.Build(name)
	if err != nil {
		t.Fatal(err)
	}
	s, err := onnx.Inspect(b)
	if err != nil {
		t.Fatal(err)
	}
	return s.Ops
}

// Every zoo model on every EP: the prediction partitions the model's op types, the
// verdict agrees with the partition, and the whole matrix is logged.
func TestPredictZooModels(t *testing.T) {
	providers := append(Providers(), "CPUExecutionProvider", "CUDAExecutionProvider", "MIGraphXExecutionProvider")
	var matrix strings.Builder
	for _, name := range zoo.Names() {
		ops := zooOps(t, name)
		for _, ep := range providers {
			p := Predict(ops, ep)
			if len(p.Supported)+len(p.Unsupported) != len(ops) && p.Coverage != CoverageUnknown {
				t.Errorf("%s on %s: %d supported + %d unsupported != %d op types", name, ep, len(p.Supported), len(p.Unsupported), len(ops))
			}
			switch {
			case p.Coverage == CoverageUnknown:
				if p.Verdict != "unknown: no op table for EP" {
					t.Errorf("%s on %s: %q", name, ep, p.Verdict)
				}
			case len(p.Unsupported) == 0:
				if p.Verdict != "should run" {
					t.Errorf("%s on %s: %q", name, ep, p.Verdict)
				}
			default:
				if !strings.HasPrefix(p.Verdict, fmt.Sprintf("partial: %d operator", len(p.Unsupported))) || !strings.HasSuffix(p.Verdict, "back to CPU") {
					t.Errorf("%s on %s: %q", name, ep, p.Verdict)
				}
				fallback := 0
				for _, op := range p.Unsupported {
					fallback += ops[op]
				}
				if fallback != p.FallbackNodes {
					t.Errorf("%s on %s: fallback nodes %d, want %d", name, ep, p.FallbackNodes, fallback)
				}
			}
			fmt.Fprintf(&matrix, "%-16s %s\n", name, p)
		}
	}
	t.Logf("\n%s", matrix.String())
}

func TestPredictKnownCases(t *testing.T) {
	bert := zooOps(t, "tiny-bert")
	for _, c := range []struct {
		model, ep   string
		verdict     string
		unsupported []string
	}{
		// CoreML's ML Program table lists GatherND but not Gather (embedding lookups).
		{"tiny-bert", "coreml", "partial: 1 operator falls back to CPU", []string{"Gather"}},
		{"tiny-bert", "CoreMLExecutionProvider", "partial: 1 operator falls back to CPU", []string{"Gather"}},
		{"tiny-bert", "DmlExecutionProvider", "should run", nil},
		{"tiny-bert", "directml", "should run", nil},
		// TensorRT 8.5's matrix marks LayerNormalization N.
		{"tiny-bert", "tensorrt", "partial: 1 operator falls back to CPU", []string{"LayerNormalization"}},
		// The selective scan is a Scan loop: only TensorRT documents Scan.
		{"tiny-mamba", "webnn", "partial: 1 operator falls back to CPU", []string{"Scan"}},
		{"tiny-mamba", "tensorrt", "should run", nil},
		{"tiny-bert", "cpu", "should run", nil},
		{"tiny-bert", "wasm", "should run", nil},
		{"tiny-bert", "cuda", "unknown: no op table for EP", nil},
		{"tiny-bert", "MIGraphXExecutionProvider", "unknown: no op table for EP", nil},
		{"tiny-bert", "SomeNewExecutionProvider", "unknown: no op table for EP", nil},
	} {
		ops := bert
		if c.model != "tiny-bert" {
			ops = zooOps(t, c.model)
		}
		p := Predict(ops, c.ep)
		if p.Verdict != c.verdict {
			t.Errorf("%s on %s: verdict %q, want %q (unsupported %v)", c.model, c.ep, p.Verdict, c.verdict, p.Unsupported)
		}
		if c.unsupported != nil && strings.Join(p.Unsupported, ",") != strings.Join(c.unsupported, ",") {
			t.Errorf("%s on %s: unsupported %v, want %v", c.model, c.ep, p.Unsupported, c.unsupported)
		}
	}
	// Documented constraints travel with the prediction.
	p := Predict(bert, "coreml")
	if p.Conditions["MatMul"] == "" || p.Coverage != CoverageDocumented || !strings.Contains(p.Source, "coreml_supported_mlprogram_ops.md") {
		t.Errorf("%+v", p)
	}
}

func TestPredictDomainsAndConstants(t *testing.T) {
	ops := map[string]int{"Constant": 3, "com.microsoft:SkipLayerNormalization": 2, "com.microsoft:FusedConv": 1, "MatMul": 4}
	p := Predict(ops, "webgpu")
	if p.Verdict != "should run" {
		t.Errorf("webgpu: %+v", p)
	}
	p = Predict(ops, "DmlExecutionProvider")
	if strings.Join(p.Unsupported, ",") != "com.microsoft:FusedConv" || p.FallbackNodes != 1 || p.Nodes != 10 {
		t.Errorf("dml: %+v", p)
	}
}

func TestEveryTableHasASource(t *testing.T) {
	seen := map[string]bool{}
	for _, tb := range opTables {
		if tb.source == "" || len(tb.ops) < 40 || seen[tb.provider] {
			t.Errorf("table %s: source %q, %d ops", tb.provider, tb.source, len(tb.ops))
		}
		seen[tb.provider] = true
		keys := make([]string, 0, len(tb.ops))
		for k := range tb.ops {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if strings.TrimSpace(k) != k || k == "" {
				t.Errorf("table %s: bad op %q", tb.provider, k)
			}
		}
	}
}
