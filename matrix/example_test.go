package matrix_test

import (
	"fmt"

	"github.com/hwtest/hwtest/matrix"
)

func ExampleFromReports() {
	// A suite process that crashed before writing its report still yields a cell
	// per target of its model.
	m := matrix.FromReports(nil, []matrix.ProcessFailure{{Model: "silero-vad-v5", Err: "signal: killed"}},
		[]string{"silero-vad-v5"}, []string{"cpu", "cuda"})
	for _, c := range m.Cells {
		fmt.Println(c.Model, c.Target, c.Status, c.Reason)
	}
	// Output:
	// silero-vad-v5 cpu error suite process failed: signal: killed
	// silero-vad-v5 cuda error suite process failed: signal: killed
}
