package result

import "time"

// ProgressEnv names the file a suite process appends its cells' progress to, one
// CellEvent as a JSON line each, so `hwtest run` can show cells as they finish
// rather than when the model's process ends. Unset, a suite writes nothing.
const ProgressEnv = "HWTEST_PROGRESS"

// The kinds of CellEvent.
const (
	CellStarted = "start" // the cell's Open began
	CellDone    = "done"  // the cell's Close ended: every step it was to run ran or was skipped
)

// CellEvent is one step of a cell's progress. It is a display's hint, never a
// result: the matrix, read from the Ginkgo report, decides a cell's status.
type CellEvent struct {
	Event  string `json:"event"`
	Model  string `json:"model"`
	Target string `json:"target"`
	// Status is, when done, the status the cell's steps recorded: the first that was
	// not a pass (a cell ends at its first failure), else pass or partial.
	Status Status    `json:"status,omitempty"`
	Reason string    `json:"reason,omitempty"`
	P50MS  float64   `json:"p50_ms,omitempty"`  // the measured median latency, when measured
	WallMS float64   `json:"wall_ms,omitempty"` // from the start of Open to the end of Close
	Time   time.Time `json:"time"`
	// Revised is set by `hwtest run`, not by suites: the cell's status from the
	// model's report differs from the one its suite announced, or the suite never
	// announced it (it crashed, hung or was stopped first).
	Revised bool `json:"revised,omitempty"`
}
