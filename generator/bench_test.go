package generator_test

import (
	"fmt"
	"testing"

	"github.com/hwtest/hwtest/catalog"
	"github.com/hwtest/hwtest/generator"
)

// catalogOf is n models spread over the nine families, on eleven targets.
func catalogOf(n int) *catalog.Catalogs {
	c := catalogWith()
	for i := 1; i < 11; i++ {
		c.Targets = append(c.Targets, catalog.Target{ID: fmt.Sprintf("t%d", i), Name: "T", Runner: "native", Provider: "CUDAExecutionProvider", Probe: "provider", Precision: "fp32", Fallback: []string{"cpu"}})
	}
	for i := 0; i < n; i++ {
		f := catalog.Families[i%len(catalog.Families)]
		m := catalog.Model{ID: fmt.Sprintf("m%03d", i), Family: f, Task: "t", Source: "zoo:x",
			Inputs: map[string]catalog.Input{"input_ids": {Dims: []int64{1, 8}}}}
		switch f {
		case "text":
			m.Architecture = "decoder"
		case "vision-text", "rag":
			m.Outputs.Ranking = "scores"
		case "mixture-of-experts":
			m.Outputs.Router, m.Outputs.RouterTopK = "router", 2
		case "state-space":
			m.Outputs.State, m.Outputs.StateIn = "s", "s0"
		}
		c.Models = append(c.Models, m)
	}
	return c
}

// BenchmarkGenerate: generation must stay linear in the catalog; compare ns/op of
// the 300-model run with 10× the 30-model one (make bench).
func BenchmarkGenerate(b *testing.B) {
	for _, n := range []int{30, 300} {
		c := catalogOf(n)
		b.Run(fmt.Sprintf("models=%d", n), func(b *testing.B) {
			for b.Loop() {
				if _, err := generator.Generate(c); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
