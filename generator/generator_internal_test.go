package generator

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hwtest/hwtest/catalog"
)

// Target ids become exported Go variables of package targets; ids that spell the
// same name must still get distinct ones, or the package would not compile.
func TestTargetVars(t *testing.T) {
	var targets []catalog.Target
	for _, id := range []string{"cpu", "webgpu-native", "a-b", "a.b", "a_b2", "0x"} {
		targets = append(targets, catalog.Target{ID: id})
	}
	want := map[string]string{
		"cpu": "Cpu", "webgpu-native": "WebgpuNative",
		"a-b": "AB", "a.b": "AB2", "a_b2": "AB22", "0x": "Target0x",
	}
	if diff := cmp.Diff(want, targetVars(targets)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
