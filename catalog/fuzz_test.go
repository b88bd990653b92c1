package catalog

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// errorLine is the shape of every line of Parse's error: a newline inside a value
// must never start a line of its own.
var errorLine = regexp.MustCompile(`^(models|hardware)\.yaml(:[1-9][0-9]*(:[1-9][0-9]*)?)?: \S`)

func FuzzParse(f *testing.F) {
	dirs, err := filepath.Glob("testdata/*")
	if err != nil {
		f.Fatal(err)
	}
	for _, dir := range dirs {
		models, errM := os.ReadFile(filepath.Join(dir, "models.yaml"))
		hardware, errH := os.ReadFile(filepath.Join(dir, "hardware.yaml"))
		if errM != nil || errH != nil {
			f.Fatal(errM, errH)
		}
		f.Add(models, hardware)
	}
	f.Fuzz(func(t *testing.T, models, hardware []byte) {
		start := time.Now()
		c, err := Parse("models.yaml", models, "hardware.yaml", hardware)
		if took := time.Since(start); took > 5*time.Second {
			t.Fatalf("Parse took %v on %d+%d bytes", took, len(models), len(hardware))
		}
		if err == nil {
			if c == nil {
				t.Fatal("Parse returned neither catalogs nor an error")
			}
			if _, ok := c.Target(ReferenceTarget); !ok {
				t.Fatalf("catalogs without the %q target were accepted", ReferenceTarget)
			}
			// Every value that becomes a label must generate: see CheckLabel.
			var labels []string
			for _, m := range c.Models {
				if idProblem("id", m.ID) != "" {
					t.Fatalf("model with bad id %q was accepted", m.ID)
				}
				labels = append(append(labels, m.ID, m.Family), m.Tags...)
			}
			for _, tg := range c.Targets {
				labels = append(labels, tg.ID)
			}
			for _, l := range labels {
				if err := CheckLabel(l); err != nil {
					t.Fatalf("accepted a catalog with a label the generator refuses: %v", err)
				}
			}
			return
		}
		if c != nil {
			t.Fatal("Parse returned catalogs with an error")
		}
		for _, line := range strings.Split(err.Error(), "\n") {
			if !errorLine.MatchString(line) {
				t.Fatalf("error line %q is not FILE:LINE:COL: message", line)
			}
		}
		_, again := Parse("models.yaml", models, "hardware.yaml", hardware)
		if again == nil || again.Error() != err.Error() {
			t.Fatalf("Parse is not deterministic:\n%v\nthen\n%v", err, again)
		}
	})
}
