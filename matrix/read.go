package matrix

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/onsi/ginkgo/v2/types"
)

// ReadReports reads Ginkgo JSON reports (what `ginkgo --json-report=FILE` writes: a
// list of suite reports) and returns all their suite reports in order.
func ReadReports(paths ...string) ([]types.Report, error) {
	var out []types.Report
	for _, p := range paths {
		rs, err := readReport(p)
		if err != nil {
			return nil, err
		}
		out = append(out, rs...)
	}
	return out, nil
}

func readReport(path string) ([]types.Report, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("ginkgo report %s does not exist (did the suite run with --json-report?)", path)
		}
		return nil, fmt.Errorf("reading ginkgo report: %w", err)
	}
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return nil, fmt.Errorf("ginkgo report %s is empty (the suite process may have died before writing it)", path)
	}
	var rs []types.Report
	if data[0] == '{' { // a single suite report
		var r types.Report
		err = json.Unmarshal(data, &r)
		rs = []types.Report{r}
	} else {
		err = json.Unmarshal(data, &rs)
	}
	if err != nil {
		return nil, fmt.Errorf("ginkgo report %s is not valid: %w", path, err)
	}
	for i, r := range rs {
		if r.SuitePath == "" && r.SuiteDescription == "" && len(r.SpecReports) == 0 {
			return nil, fmt.Errorf("ginkgo report %s: entry %d is not a ginkgo suite report (no suite path, description or specs)", path, i)
		}
	}
	return rs, nil
}
