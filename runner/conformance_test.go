package runner

import (
	"os"
	"testing"

	"github.com/hwtest/hwtest/conformance"
	"github.com/hwtest/hwtest/result"
)

// A process that died after two cases leaves the others `error` with what happened,
// so a crash never shrinks the scoreboard silently.
func TestCasesAProcessNeverReportedAreErrors(t *testing.T) {
	want := []conformance.Case{{Name: "test_a", Op: "A"}, {Name: "test_b", Op: "B", Domain: "d", Opset: 3}, {Name: "test_c", Op: "A"}}
	got := completeCases([]result.OpCaseReport{
		{Case: "test_c", Op: "A", Target: "webgpu", Status: result.CasePass},
		{Case: "test_a", Op: "A", Target: "webgpu", Status: result.CaseMismatch},
	}, want, "webgpu", "the webgpu conformance process crashed (segmentation fault) before this case ran")
	if len(got) != 3 {
		t.Fatalf("%d cases, want 3: %+v", len(got), got)
	}
	for i, name := range []string{"test_a", "test_b", "test_c"} {
		if got[i].Case != name {
			t.Errorf("case %d is %s, want %s (by name)", i, got[i].Case, name)
		}
	}
	b := got[1]
	if b.Status != result.CaseError || b.Op != "B" || b.Domain != "d" || b.Opset != 3 || b.Target != "webgpu" || b.Error != "the webgpu conformance process crashed (segmentation fault) before this case ran" {
		t.Errorf("the unreported case: %+v", b)
	}
	if got[0].Status != result.CaseMismatch || got[2].Status != result.CasePass {
		t.Errorf("reported cases changed: %+v", got)
	}
}

func TestOpFilterNamesEachOperatorOnce(t *testing.T) {
	got := opFilter([]conformance.Case{{Op: "Add"}, {Op: "Add"}, {Op: "Adam", Domain: "ai.onnx.preview.training"}})
	if got != "op:Add || op:Adam" {
		t.Errorf("filter %q", got)
	}
}

// A process killed mid-line leaves a partial last line: the whole lines count.
func TestLoggedCasesKeepWholeLines(t *testing.T) {
	path := t.TempDir() + "/cases.jsonl"
	data := `{"case":"test_a","op":"A","target":"webnn","status":"pass"}
{"case":"test_b","op":"B","target":"webnn","status":"mismatch"}
{"case":"test_c","op":"C","tar`
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	got := loggedCases(path)
	if len(got) != 2 || got[0].Case != "test_a" || got[1].Status != result.CaseMismatch {
		t.Errorf("logged cases %+v", got)
	}
}
