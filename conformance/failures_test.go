package conformance_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hwtest/hwtest/conformance"
	"github.com/hwtest/hwtest/result"
)

func TestCountsText(t *testing.T) {
	for _, tc := range []struct {
		c    conformance.Counts
		want string
	}{
		{conformance.Counts{}, ""},
		{conformance.Counts{Unavailable: 3}, "–"},
		{conformance.Counts{Pass: 3}, "3/3"},
		{conformance.Counts{Pass: 12, Mismatch: 2, NotSupported: 2, Unavailable: 1}, "12/16 ≠2 ✗2"},
		{conformance.Counts{Error: 1, Skipped: 2}, "0/3 !1 ~2"},
	} {
		if got := tc.c.Text(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.c, got, tc.want)
		}
	}
}

// Failures group by status and exact message across targets, the most cases first
// within a status; mismatches are listed one by one; a target only ever unavailable
// is absent (with its reasons), not a failure.
func TestFailuresGroupByExactMessage(t *testing.T) {
	c := func(name, op, target, status, msg string) result.OpCaseReport {
		return result.OpCaseReport{Case: name, Op: op, Target: target, Status: status, Error: msg}
	}
	const nokernel = "Could not find an implementation for BitShift(11)"
	b := conformance.Summarise([]result.OpCaseReport{
		c("test_b1", "BitShift", "wasm", result.CaseNotSupported, nokernel),
		c("test_b2", "BitShift", "wasm", result.CaseNotSupported, nokernel),
		c("test_b1", "BitShift", "cpu", result.CaseNotSupported, nokernel),
		c("test_p", "Abs", "cpu", result.CaseNotSupported, "Abs has no kernel"),
		c("test_s", "Identity", "cpu", result.CaseSkipped, "sequence"),
		c("test_e", "Add", "cpu", result.CaseError, "crash"),
		c("test_m2", "Add", "wasm", result.CaseMismatch, ""),
		c("test_m1", "Add", "wasm", result.CaseMismatch, ""),
		c("test_a", "Add", "cpu", result.CasePass, ""),
		c("test_a", "Add", "cuda", result.CaseUnavailable, "no libcudart"),
		c("test_p", "Abs", "cuda", result.CaseUnavailable, "no libcudart"),
		c("test_u", "Add", "wasm", result.CaseUnavailable, "page crashed"),
	}, []string{"cpu", "cuda", "wasm"})
	var got []string
	for _, g := range b.Failures() {
		got = append(got, strings.Join([]string{g.Status, g.Message, strings.Join(g.Targets, ","), strings.Join(g.Ops, ","), strings.Join(g.Cases, ",")}, "|")+"|"+string(rune('0'+g.Count)))
	}
	want := []string{
		"not-supported|" + nokernel + "|cpu,wasm|BitShift|test_b1,test_b2|3",
		"not-supported|Abs has no kernel|cpu|Abs|test_p|1",
		"error|crash|cpu|Add|test_e|1",
		"skipped|sequence|cpu|Identity|test_s|1",
		"unavailable|page crashed|wasm|Add|test_u|1", // wasm ran others: not absent
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("failures (-want +got):\n%s", d)
	}
	if a := b.Absent(); len(a) != 1 || a[0].Target != "cuda" || a[0].Cases != 2 || len(a[0].Reasons) != 1 || a[0].Reasons[0] != "no libcudart" {
		t.Errorf("absent %+v", a)
	}
	if p := b.Present(); strings.Join(p, ",") != "cpu,wasm" {
		t.Errorf("present %v", p)
	}
	var mm []string
	for _, m := range b.Mismatches() {
		mm = append(mm, m.Target+" "+m.Case)
	}
	if strings.Join(mm, ",") != "wasm test_m1,wasm test_m2" {
		t.Errorf("mismatches %v", mm)
	}
}
