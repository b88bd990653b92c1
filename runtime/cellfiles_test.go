package runtime

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"

	"github.com/hwtest/hwtest/catalog"
	"github.com/hwtest/hwtest/result"
	"github.com/hwtest/hwtest/spec"
	"github.com/hwtest/hwtest/templates"
	"github.com/hwtest/hwtest/tensorfile/tensorfiletest"
)

// A catalog of one's own models with real inputs and known answers, run end to
// end as a generated suite runs it (catalog → spec → the family template's
// invariants → cells), on the CPU and, where Chromium is here, on wasm.
const ownModels = `models:
  - id: own-cnn
    family: vision
    task: image-classification
    source: file:cnn.onnx
    inputs: {x: {file: x.npy}}
    outputs: {primary: prob, distribution: {output: prob, axis: 1}}
    expected: {prob: {file: prob.npy}}
  - id: own-cnn-no-axis
    family: vision
    task: image-classification
    source: file:cnn.onnx
    inputs: {x: {file: x.npy}}
    outputs: {primary: prob, distribution: prob}
  - id: own-cnn-wrong-answer
    family: vision
    task: image-classification
    source: file:cnn.onnx
    inputs: {x: {file: x.npy}}
    outputs: {primary: prob}
    expected: {prob: {file: wrong.npy}}
  - id: own-detector
    family: vision
    task: object-detection
    source: file:detector.onnx
    inputs:
      image: {file: scene.png, mean: [0.485, 0.456, 0.406], std: [0.229, 0.224, 0.225]}
`

// recordingT stands in for *testing.T in RunSpecs: specs are meant to fail here,
// and the test reads what each recorded instead.
type recordingT struct{ failed bool }

func (r *recordingT) Fail() { r.failed = true }

// RunSpecs may run once a process: this is the runtime package's only test that
// calls it (the overhead benchmark is the other, and runs only under -bench).
func TestOwnModelsEndToEnd(t *testing.T) {
	requireORT(t)
	dir := t.TempDir()
	write := func(name string, data []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("cnn.onnx", classifierModel())
	write("detector.onnx", denseMapModel())
	write("models.yaml", []byte(ownModels))
	tensorfiletest.NPY(t, filepath.Join(dir, "x.npy"), "<f4", []int64{2, 4, 1, 1}, flat(xRows))
	_, prob := classify(float32Rows(xRows))
	tensorfiletest.NPY(t, filepath.Join(dir, "prob.npy"), "<f4", []int64{2, 10, 1, 1}, flat(prob))
	wrong := flat(prob)
	wrong[12] += 0.002
	tensorfiletest.NPY(t, filepath.Join(dir, "wrong.npy"), "<f4", []int64{2, 10, 1, 1}, wrong)
	pngFile(t, filepath.Join(dir, "scene.png"))

	cats, err := catalog.Load(filepath.Join(dir, "models.yaml"), "../hardware.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var targets []Target
	for _, tg := range cats.Targets {
		if tg.ID == "cpu" || tg.ID == "wasm" {
			target := spec.TargetOf(tg)
			if why := Unavailable(target); why != "" {
				t.Logf("%s is not here (%s): the cells run without it", tg.ID, why)
				continue
			}
			targets = append(targets, target)
		}
	}
	type step struct {
		report result.CellReport
		state  types.SpecState
		msg    string
	}
	steps := map[string]step{} // model/target/check
	ginkgo.Describe("own models", func() {
		for _, cm := range cats.Models {
			tmpl, ok := templates.FamilyFor(cm.Family, cm.Architecture)
			if !ok {
				t.Fatalf("no template for %s", cm.Family)
			}
			m := spec.ModelOf(cm)
			for _, tg := range targets {
				ginkgo.Context(m.ID+"/"+tg.ID, ginkgo.Ordered, func() {
					cell := NewCell(m, tg)
					ginkgo.BeforeAll(cell.Open)
					ginkgo.AfterAll(cell.Close)
					for _, name := range tmpl.InvariantsFor(cm) {
						inv := Invariants[name]
						ginkgo.It(inv.Name, func() { cell.Check(inv) })
					}
				})
			}
		}
	})
	ginkgo.ReportAfterEach(func(sr ginkgo.SpecReport) {
		for _, e := range sr.ReportEntries {
			if e.Name != result.ReportEntryName {
				continue
			}
			r, ok := e.GetRawValue().(result.CellReport)
			if !ok {
				continue
			}
			steps[r.Model+"/"+r.Target+"/"+r.Check] = step{report: r, state: sr.State, msg: sr.Failure.Message}
		}
	})
	suite, reporter := ginkgo.GinkgoConfiguration()
	reporter.Succinct = true
	ginkgo.RunSpecs(&recordingT{}, "own models", suite, reporter)

	for _, tg := range targets {
		at := func(model, check string) step {
			t.Helper()
			s, ok := steps[model+"/"+tg.ID+"/"+check]
			if !ok {
				t.Fatalf("%s on %s: no %q step recorded", model, tg.ID, check)
			}
			return s
		}
		// The CNN with its axis and right answers passes every check, the
		// expected outputs among them.
		for _, check := range []string{result.CheckOpen, OutputsAgree.Name, TopKAgrees.Name, DistributionSumsToOne.Name, MatchesExpectedOutputs.Name} {
			if s := at("own-cnn", check); s.report.Status != result.StatusPass || s.state != types.SpecStatePassed && check != result.CheckOpen {
				t.Errorf("own-cnn on %s, %s: %s %s (%s)", tg.ID, check, s.report.Status, s.state, s.report.Reason)
			}
		}
		// Without the axis, "sums to 1" fails on the CPU's own outputs too: the
		// check does not fit, which is what the result says.
		s := at("own-cnn-no-axis", DistributionSumsToOne.Name)
		if s.report.Status != result.StatusError || s.report.Cause != result.CauseCheckMisfit || !strings.Contains(s.report.Reason, "does not fit the model") {
			t.Errorf("own-cnn-no-axis on %s: %s %s: %s", tg.ID, s.report.Status, s.report.Cause, s.report.Reason)
		}
		// A wrong known answer is a mismatch naming its file and the worst element.
		s = at("own-cnn-wrong-answer", MatchesExpectedOutputs.Name)
		if s.report.Status != result.StatusMismatch || !strings.Contains(s.report.Reason, "expected output from wrong.npy") || s.report.Worst == nil || s.report.Worst.Index != 12 {
			t.Errorf("own-cnn-wrong-answer on %s: %s: %s (worst %+v)", tg.ID, s.report.Status, s.report.Reason, s.report.Worst)
		}
		// Top-5 classes of a dense map: skipped, saying why, in the report and in
		// what ginkgo prints; the cell still passes on elementwise agreement.
		s = at("own-detector", TopKAgrees.Name)
		if s.state != types.SpecStateSkipped || !strings.Contains(s.msg, "not applicable: output \"map\" has shape [1 1 32 32], a dense map") ||
			s.report.Status != result.StatusPass || !strings.Contains(s.report.Skipped, "dense map") {
			t.Errorf("own-detector on %s, top-5: %s %s %q skipped %q", tg.ID, s.state, s.report.Status, s.msg, s.report.Skipped)
		}
		if s := at("own-detector", OutputsAgree.Name); s.report.Status != result.StatusPass {
			t.Errorf("own-detector on %s agrees: %s %s", tg.ID, s.report.Status, s.report.Reason)
		}
	}
}
