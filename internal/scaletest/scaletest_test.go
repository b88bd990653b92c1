package scaletest

import (
	"fmt"
	"os"
	"testing"

	"github.com/hwtest/hwtest/catalog"
)

// The copies are the repository's models, all of them in turn, under new ids, and
// a valid catalog; Tag changes the one model it names.
func TestModelsCopiesTheCatalog(t *testing.T) {
	src, err := os.ReadFile("../../models.yaml")
	if err != nil {
		t.Fatal(err)
	}
	hw, err := os.ReadFile("../../hardware.yaml")
	if err != nil {
		t.Fatal(err)
	}
	orig, err := catalog.Parse("models.yaml", src, "hardware.yaml", hw)
	if err != nil {
		t.Fatal(err)
	}
	const n = 45
	out, err := Models(src, n)
	if err != nil {
		t.Fatal(err)
	}
	c, err := catalog.Parse("models.yaml", out, "hardware.yaml", hw)
	if err != nil {
		t.Fatalf("copies do not parse: %v", err)
	}
	if len(c.Models) != n {
		t.Fatalf("%d models, want %d", len(c.Models), n)
	}
	families := map[string]bool{}
	for i, m := range c.Models {
		o := orig.Models[i%len(orig.Models)]
		if want := fmt.Sprintf("%s-c%d", o.ID, i); m.ID != want {
			t.Errorf("model %d: id %q, want %q", i, m.ID, want)
		}
		m.ID = o.ID
		if fmt.Sprint(withoutPositions(m)) != fmt.Sprint(withoutPositions(o)) {
			t.Errorf("model %d differs from %s beyond its id:\n%v\n%v", i, o.ID, m, o)
		}
		families[m.Family] = true
	}
	if len(families) != len(catalog.Families) {
		t.Errorf("%d families, want all %d", len(families), len(catalog.Families))
	}

	only, err := Models(src, 3, "silero-vad-v5")
	if err != nil {
		t.Fatal(err)
	}
	c, err = catalog.Parse("models.yaml", only, "hardware.yaml", hw)
	if err != nil || len(c.Models) != 3 || c.Models[2].ID != "silero-vad-v5-c2" || c.Models[2].Source != orig.Models[0].Source {
		t.Errorf("copies of one model: %v %v", c, err)
	}

	// The first copy of gpt2, wherever models.yaml puts it.
	var gpt2 string
	for i, m := range orig.Models {
		if m.ID == "gpt2" {
			gpt2 = fmt.Sprintf("gpt2-c%d", i)
		}
	}
	tagged, err := Tag(out, gpt2, "edit")
	if err != nil {
		t.Fatal(err)
	}
	c2, err := catalog.Parse("models.yaml", tagged, "hardware.yaml", hw)
	if err != nil {
		t.Fatal(err)
	}
	c, err = catalog.Parse("models.yaml", out, "hardware.yaml", hw)
	if err != nil {
		t.Fatal(err)
	}
	for i := range c2.Models {
		a, b := withoutPositions(c2.Models[i]), withoutPositions(c.Models[i])
		changed := fmt.Sprint(a) != fmt.Sprint(b)
		if want := c.Models[i].ID == gpt2; changed != want {
			t.Errorf("Tag changed %s: %v, want %v", c.Models[i].ID, changed, want)
		}
	}
	if _, err := Tag(out, "nope", "x"); err == nil {
		t.Error("Tag of a missing model: no error")
	}
}

// withoutPositions is m without where its parts are written: a copy's lines are
// not the original's.
func withoutPositions(m catalog.Model) catalog.Model {
	m.Line, m.Column = 0, 0
	inputs := map[string]catalog.Input{}
	for name, in := range m.Inputs {
		in.Line, in.Column = 0, 0
		inputs[name] = in
	}
	m.Inputs = inputs
	m.Outputs.At = nil
	expected := map[string]catalog.Expected{}
	for name, e := range m.Expected {
		e.Line, e.Column = 0, 0
		expected[name] = e
	}
	m.Expected = expected
	return m
}
