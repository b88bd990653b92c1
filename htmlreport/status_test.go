package htmlreport_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/hwtest/hwtest/internal/histtest"
)

// A cpu-only cell (mamba-130m on webnn in a real run: WebNN took none of the nodes)
// has its own colour in the heatmap and the legend, not partial's green.
func TestCPUOnlyCellHasItsOwnColour(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.duckdb")
	histtest.Import(t, path, filepath.Join(root, "cmd/hwtest/testdata/history/cpu-only.json"))
	page, _, _ := render(t, path)
	html := string(page)
	for _, want := range []string{
		`.s-cpu-only{background:#8fb8c9}`,                  // its colour
		`<span class="sw s-cpu-only"></span>cpu-only</li>`, // the legend
		`<td class="s-cpu-only fx" data-i=`,                // the heatmap's cell (a fixture ran)
	} {
		if !strings.Contains(html, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}
