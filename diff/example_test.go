package diff_test

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/hwtest/hwtest/diff"
	"github.com/hwtest/hwtest/matrix"
)

// ExampleCompare is how `hwtest diff` uses the package: the history hands it two
// runs' matrices (and, where it has them, the runs before each side with the same
// cells as OldRuns and NewRuns); the CLI prints the Markdown, or the JSON with
// --json, and exits 4 when something regressed.
func ExampleCompare() {
	read := func(path string) matrix.Matrix {
		var m matrix.Matrix
		data, err := os.ReadFile(path)
		if err == nil {
			err = json.Unmarshal(data, &m)
		}
		if err != nil {
			panic(err)
		}
		return m
	}
	old := read("testdata/scenarios/base.json")
	new := read("testdata/scenarios/mismatch.json") // the cpu target's tolerance tightened to 1e-9

	report := diff.Compare(old, new, diff.Options{})
	for _, c := range report.Cells {
		if c.Status != nil {
			fmt.Printf("%s/%s: %s → %s, regressed: %v\n", c.Model, c.Target, c.Status.From, c.Status.To, c.Status.Regressed)
		}
	}
	exit := 0
	if report.Regressed() {
		exit = 4
	}
	fmt.Println("exit", exit)
	// Output:
	// silero-vad-v5/cpu: pass → mismatch, regressed: true
	// exit 4
}
