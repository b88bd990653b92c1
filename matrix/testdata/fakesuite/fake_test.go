// Package fakesuite_test produces testdata/failures-report.json: one cell for each
// way a generated suite's cell can end, as Ginkgo really reports it. To refresh:
//
//	.hwtest/bin/ginkgo --label-filter='!hw:filtered' --json-report=/tmp/fake.json ./matrix/testdata/fakesuite
//
// then strip captured output and representations (see matrix_test.go).
package fakesuite_test

import (
	"testing"

	"github.com/hwtest/hwtest/result"
	. "github.com/onsi/ginkgo/v2"
)

func TestFake(t *testing.T) { RunSpecs(t, "fake") }

func rec(target, check string, s result.Status, reason string) {
	AddReportEntry(result.ReportEntryName, result.CellReport{Model: "m", Family: "f", Target: target, Check: check, Status: s, Reason: reason}, ReportEntryVisibilityNever)
}

var _ = Describe("m", Label("model:m"), func() {
	cell := func(target string, open func(), measure func(), close func()) {
		Context(target, Ordered, Label("hw:"+target), func() {
			BeforeAll(open)
			if close != nil {
				AfterAll(close)
			}
			It("measures", measure)
			It("inv1", func() { rec(target, "inv1", result.StatusPass, "") })
			It("inv2", func() { rec(target, "inv2", result.StatusPass, "") })
		})
	}
	ok := func(t string) func() { return func() { rec(t, "open", result.StatusPass, "") } }
	meas := func(t string) func() { return func() { rec(t, "measure", result.StatusPass, "") } }
	cell("pass", ok("pass"), meas("pass"), nil)
	cell("unavail", func() { rec("unavail", "open", result.StatusUnavailable, "no dev"); Skip("unavailable: no dev") }, meas("unavail"), nil)
	cell("openerr", func() { rec("openerr", "open", result.StatusError, "boom"); Fail("error: boom") }, meas("openerr"), nil)
	cell("openpanic", func() { var m map[string]int; m["x"] = 1 }, meas("openpanic"), nil)
	cell("measpanic", ok("measpanic"), func() { panic("measure | exploded\nline2") }, nil)
	cell("closefail", ok("closefail"), meas("closefail"), func() { Fail("close failed") })
	cell("xfail", func() { rec("xfail", "open", result.StatusExpectedFail, "declared"); Skip("expected-fail") }, meas("xfail"), nil)
	cell("filtered", ok("filtered"), meas("filtered"), nil)
})
