package testenv

import (
	"errors"
	"testing"
)

// fakeT records whether Need failed, skipped or let the test go on.
type fakeT struct {
	testing.TB
	failed, skipped bool
}

func (f *fakeT) Helper()               {}
func (f *fakeT) Fatalf(string, ...any) { f.failed = true }
func (f *fakeT) Skipf(string, ...any)  { f.skipped = true }

func TestNeed(t *testing.T) {
	for _, c := range []struct {
		require    string
		missing    any
		fail, skip bool
	}{
		{"", nil, false, false},
		{"", "", false, false},
		{"1", error(nil), false, false},
		{"", errors.New("no libonnxruntime.so.1"), false, true},
		{"", "chromium not installed", false, true},
		{"1", errors.New("no libonnxruntime.so.1"), true, false},
		{"1", "chromium not installed", true, false},
		{"0", "chromium not installed", false, true},
	} {
		t.Setenv(RequireEnv, c.require)
		f := &fakeT{}
		Need(f, "component", c.missing)
		if f.failed != c.fail || f.skipped != c.skip {
			t.Errorf("HWTEST_REQUIRE=%q missing=%v: failed %v skipped %v, want %v %v", c.require, c.missing, f.failed, f.skipped, c.fail, c.skip)
		}
	}
}
