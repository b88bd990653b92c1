package templates_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hwtest/hwtest/catalog"
	"github.com/hwtest/hwtest/internal/testenv"
	"github.com/hwtest/hwtest/runtime"
	"github.com/hwtest/hwtest/spec"
	"github.com/hwtest/hwtest/templates"
	"github.com/hwtest/hwtest/zoo"
)

// Every invariant a template names exists in package runtime, so generated suites
// compile; every family and text architecture has a template.
func TestTemplatesNameRealInvariants(t *testing.T) {
	for _, f := range templates.Families {
		names := append([]string(nil), f.Invariants...)
		for _, c := range f.ByOutput {
			names = append(names, c.Invariants...)
		}
		for _, invs := range f.ByTask {
			names = append(names, invs...)
		}
		for _, n := range names {
			if _, ok := runtime.Invariants[n]; !ok {
				t.Errorf("%s/%s: runtime has no invariant %q", f.Family, f.Architecture, n)
			}
		}
	}
	for _, family := range catalog.Families {
		archs := []string{""}
		if family == "text" {
			archs = catalog.TextArchitectures
		}
		for _, a := range archs {
			if _, ok := templates.FamilyFor(family, a); !ok {
				t.Errorf("no template for %s %s", family, a)
			}
		}
	}
}

// TestFamilyChecksCatchBrokenModels runs every catalog model that has a zoo model
// through its family template's invariants twice: on the model itself every check
// holds; on its deliberately broken variant (a perturbed weight, a dropped mask, an
// unseeded noise term) at least one check fails as a mismatch. So no family's checks
// are ones that cannot fail.
func TestFamilyChecksCatchBrokenModels(t *testing.T) {
	c, err := catalog.Load("../models.yaml", "../hardware.yaml")
	if err != nil {
		t.Fatal(err)
	}
	_, err = runtime.Init()
	testenv.Need(t, "ONNX Runtime (make setup)", err)
	cpu := runtime.Target{ID: "cpu", Provider: runtime.CPUProvider, Tolerance: runtime.Tolerance{RTol: 1e-5, ATol: 1e-6}}
	families := map[string]bool{}
	for _, m := range c.Models {
		src := m.EffectiveSource()
		if !strings.HasPrefix(src, "zoo:") {
			continue
		}
		name := strings.TrimPrefix(src, "zoo:")
		t.Run(m.ID, func(t *testing.T) {
			tmpl, _ := templates.FamilyFor(m.Family, m.Architecture)
			good, _, err := zoo.Build(name)
			if err != nil {
				t.Fatal(err)
			}
			bad, info, err := zoo.BuildWith(name, zoo.Options{Perturb: true})
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			goodPath, badPath := filepath.Join(dir, "good.onnx"), filepath.Join(dir, "bad.onnx")
			os.WriteFile(goodPath, good, 0o644)
			os.WriteFile(badPath, bad, 0o644)
			rm := spec.ModelOf(m)
			invariants := tmpl.InvariantsFor(m)

			r, done, err := runtime.OpenRun(rm, goodPath, goodPath, cpu)
			if err != nil {
				t.Fatal(err)
			}
			defer done()
			for _, n := range invariants {
				if err := runtime.Invariants[n].Check(r); err != nil {
					t.Errorf("%s holds on the real model? %v", n, err)
				}
			}

			r, done2, err := runtime.OpenRun(rm, goodPath, badPath, cpu)
			if err != nil {
				t.Fatal(err)
			}
			defer done2()
			var caught []string
			for _, n := range invariants {
				if err := runtime.Invariants[n].Check(r); runtime.IsViolation(err) {
					caught = append(caught, n)
				}
			}
			if len(caught) == 0 {
				t.Errorf("no check of %v caught the broken variant (%s)", invariants, info.Perturbation)
			}
			// The agreement check alone would catch any change: a family's own
			// property must catch its broken variant too.
			if len(caught) == 1 && caught[0] == "OutputsAgree" {
				t.Errorf("only OutputsAgree caught %q; the family's own checks %v did not", info.Perturbation, invariants[1:])
			}
			families[m.Family] = true
			t.Logf("%s: %s → caught by %v", name, info.Perturbation, caught)
		})
	}
	for _, f := range catalog.Families {
		if !families[f] {
			t.Errorf("family %s has no broken-model test", f)
		}
	}
}

// Generated specs are titled with literal strings; results record the runtime
// Invariant's Name. They must be the same words, for every invariant.
func TestTitlesAreInvariantNames(t *testing.T) {
	for id, inv := range runtime.Invariants {
		if got := templates.Titles[id]; got != inv.Name {
			t.Errorf("templates.Titles[%q] = %q; runtime.%s.Name is %q", id, got, id, inv.Name)
		}
	}
	for id := range templates.Titles {
		if _, ok := runtime.Invariants[id]; !ok {
			t.Errorf("templates.Titles has %q, which runtime.Invariants does not", id)
		}
	}
}

// The generator must not link ONNX Runtime (cgo) or a browser driver: it runs on
// machines without them, and `go generate` builds it.
func TestGeneratorLinksNoRuntime(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "../templates", "../generator", "../spec").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, heavy := range []string{"github.com/yalue/onnxruntime_go", "github.com/chromedp/chromedp", "github.com/hwtest/hwtest/runtime"} {
		if slices.Contains(strings.Fields(string(out)), heavy) {
			t.Errorf("templates, generator or spec depend on %s", heavy)
		}
	}
}

// A model that declares expected outputs is checked against them on every target,
// whatever its family; one that does not is not.
func TestExpectedOutputsAddTheirCheck(t *testing.T) {
	for _, f := range templates.Families {
		m := catalog.Model{Family: f.Family, Architecture: f.Architecture}
		if slices.Contains(f.InvariantsFor(m), "MatchesExpectedOutputs") {
			t.Errorf("%s/%s without expected outputs checks them", f.Family, f.Architecture)
		}
		m.Expected = map[string]catalog.Expected{"logits": {File: "logits.npy"}}
		if !slices.Contains(f.InvariantsFor(m), "MatchesExpectedOutputs") {
			t.Errorf("%s/%s with expected outputs does not check them", f.Family, f.Architecture)
		}
	}
	if _, ok := runtime.Invariants["MatchesExpectedOutputs"]; !ok || templates.Titles["MatchesExpectedOutputs"] != runtime.MatchesExpectedOutputs.Name {
		t.Error("MatchesExpectedOutputs has no runtime invariant or title")
	}
}
