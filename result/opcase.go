package result

// OpCaseReport is one of ONNX's own conformance cases (libonnx-testdata's node cases)
// on one target, compared with the outputs the ONNX project wrote, not with our CPU.
// The generated conformance suites add one per case as a Ginkgo report entry named
// OpCaseEntryName; `hwtest conformance` stores them in the history as the operator ×
// target scoreboard.
type OpCaseReport struct {
	Case   string `json:"case"`             // the case's folder name: "test_add_bcast"
	Op     string `json:"op"`               // the operator the case tests: "Add"
	Domain string `json:"domain,omitempty"` // "" is ai.onnx
	Opset  int64  `json:"opset"`            // the case model's opset for that domain
	Target string `json:"target"`
	Status string `json:"status"` // one of the Case* constants
	// Worst is the element furthest outside ONNX's tolerance (mismatch), or the
	// closest call among the outputs (pass).
	Worst *Deviation `json:"worst,omitempty"`
	// Error is the runtime's exact error (not-supported, error), or why the case was
	// skipped or the target is unavailable.
	Error  string  `json:"error,omitempty"`
	Device string  `json:"device,omitempty"` // what a browser target ran on
	Ms     float64 `json:"ms,omitempty"`     // session creation and one run, wall time
}

// Conformance case statuses. A case the runtime refuses (no kernel, an unsupported
// type, a failed session) is not-supported with the runtime's words; error is
// hwtest's own failure or a crash; skipped is a case hwtest cannot feed (sequence or
// optional inputs), said why.
const (
	CasePass         = "pass"
	CaseMismatch     = "mismatch"
	CaseNotSupported = "not-supported"
	CaseError        = "error"
	CaseSkipped      = "skipped"
	CaseUnavailable  = "unavailable"
)

// CaseStatuses lists them in the order reports show them.
var CaseStatuses = []string{CasePass, CaseMismatch, CaseNotSupported, CaseError, CaseSkipped, CaseUnavailable}

// OpCaseEntryName names the Ginkgo report entry holding an OpCaseReport.
const OpCaseEntryName = "hwtest-op-case"

// OpPrefix labels conformance specs by operator: --label-filter=op:Add.
const OpPrefix = "op:"

// OpLabel is the label of an operator's conformance specs.
func OpLabel(op string) string { return OpPrefix + op }
