package generator

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/hwtest/hwtest/catalog"
	"github.com/hwtest/hwtest/templates"
)

// Coverage is the grid of every pipeline family × every target in hardware.yaml:
// whether the generator has templates to test that pair, whatever models the
// catalog has today.
type Coverage struct {
	Families []string
	Targets  []string
	Cells    [][]string // [family][target]: "ok", "xfail" (declared incompatible) or "missing"
	Missing  []string   // one line per pair without a template, saying which is absent
}

// CoverageOf computes the grid. The text family counts as covered only when each of
// its architectures has a template.
func CoverageOf(c *catalog.Catalogs) Coverage {
	cov := Coverage{Families: catalog.Families}
	for _, t := range c.Targets {
		cov.Targets = append(cov.Targets, t.ID)
	}
	for _, family := range catalog.Families {
		row := make([]string, len(c.Targets))
		var noFamily []string
		archs := []string{""}
		if family == "text" {
			archs = catalog.TextArchitectures
		}
		for _, a := range archs {
			if _, ok := templates.FamilyFor(family, a); !ok {
				noFamily = append(noFamily, strings.TrimSpace(family+" "+a))
			}
		}
		for i, t := range c.Targets {
			_, hasTarget := templates.TargetFor(t)
			switch {
			case len(noFamily) > 0 || !hasTarget:
				row[i] = "missing"
				why := []string{}
				if len(noFamily) > 0 {
					why = append(why, "no family template for "+strings.Join(noFamily, ", "))
				}
				if !hasTarget {
					why = append(why, fmt.Sprintf("no target template for runner %q", t.Runner))
				}
				cov.Missing = append(cov.Missing, fmt.Sprintf("%s × %s: %s", family, t.ID, strings.Join(why, "; ")))
			case t.Expect[family] != "":
				row[i] = "xfail"
			default:
				row[i] = "ok"
			}
		}
		cov.Cells = append(cov.Cells, row)
	}
	return cov
}

// Print writes the grid as an aligned table followed by the missing pairs.
func (cov Coverage) Print(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', 0)
	fmt.Fprintf(tw, "family\t%s\n", strings.Join(cov.Targets, "\t"))
	for i, f := range cov.Families {
		fmt.Fprintf(tw, "%s\t%s\n", f, strings.Join(cov.Cells[i], "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(cov.Missing) == 0 {
		_, err := fmt.Fprintf(w, "every family × target pair has a template (%d × %d)\n", len(cov.Families), len(cov.Targets))
		return err
	}
	fmt.Fprintf(w, "%d pairs without a template:\n", len(cov.Missing))
	for _, m := range cov.Missing {
		fmt.Fprintf(w, "  %s\n", m)
	}
	return nil
}
