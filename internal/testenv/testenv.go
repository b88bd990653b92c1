// Package testenv decides what a test does when a component it needs (ONNX
// Runtime, Chromium, a model that make setup installs) is missing: on a
// developer's machine it skips, saying why; under `make test` (HWTEST_REQUIRE=1,
// which CI runs) it fails, so a broken setup can never pass by skipping.
package testenv

import (
	"fmt"
	"os"
	"testing"
)

// RequireEnv, set to 1, turns every missing component into a failure.
const RequireEnv = "HWTEST_REQUIRE"

// Required reports whether missing components must fail tests.
func Required() bool { return os.Getenv(RequireEnv) == "1" }

// Need stops t when what is missing (a non-nil err, or a non-empty reason) is: it
// fails under HWTEST_REQUIRE=1 and skips otherwise. component names what is
// missing, e.g. "ONNX Runtime" or "chromium (make setup)".
func Need(t testing.TB, component string, missing any) {
	t.Helper()
	reason := ""
	switch m := missing.(type) {
	case nil:
	case error:
		if m != nil {
			reason = m.Error()
		}
	case string:
		reason = m
	default:
		reason = fmt.Sprint(m)
	}
	if reason == "" {
		return
	}
	if Required() {
		t.Fatalf("%s is required (%s=1) but missing: %s", component, RequireEnv, reason)
		return
	}
	t.Skipf("%s missing: %s (set %s=1 to fail instead)", component, reason, RequireEnv)
}
