package spec

import (
	"testing"

	"github.com/hwtest/hwtest/catalog"
)

// hardware.yaml's expect is per family: a cell reads its own model's family's
// reason, and a family hardware.yaml does not name is expected to run.
func TestExpectFailIsPerFamily(t *testing.T) {
	tg := TargetOf(catalog.Target{ID: "cuda", Expect: map[string]string{"audio": "LSTM state layout unsupported"}})
	if got := tg.ExpectFail("audio"); got != "LSTM state layout unsupported" {
		t.Errorf("audio: %q", got)
	}
	if got := tg.ExpectFail("vision"); got != "" {
		t.Errorf("vision: %q, want it expected to run", got)
	}
}
