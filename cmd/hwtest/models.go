package main

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/hwtest/hwtest/result"
	"github.com/hwtest/hwtest/runtime"
	"github.com/hwtest/hwtest/spec"
)

// ModelsOptions is what `hwtest models` acts on.
type ModelsOptions struct {
	*Globals
}

func newModelsCmd(g *Globals, runF func(*ModelsOptions) error) *cobra.Command {
	opts := &ModelsOptions{Globals: g}
	return &cobra.Command{
		Use:   "models",
		Short: "List the models in models.yaml with the size of the file that runs",
		Long: "For each model: family, task, declared tier, and, read from the file that would\n" +
			"run here (the real export, else its tiny-random fixture): parameters, weight\n" +
			"size, the tier those parameters put it in, and a peak-memory estimate.",
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if runF != nil {
				return runF(opts)
			}
			return modelsRun(opts)
		},
	}
}

func modelsRun(opts *ModelsOptions) error {
	c, err := opts.loadCatalogs()
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(opts.Stdout, 0, 0, 2, ' ', 0)
	// CATALOG TIER is the real model's (models.yaml); the rest describe the file
	// that runs here, which for a fixture is the tiny stand-in.
	fmt.Fprintln(tw, "ID\tFAMILY\tTASK\tCATALOG TIER\tRUNS HERE\tPARAMS\tWEIGHTS\tTIER OF FILE\tEST. MEMORY\tTAGS")
	for _, m := range c.Models {
		family := m.Family
		if m.Architecture != "" {
			family += "/" + m.Architecture
		}
		runs, params, weights, tier, estimate := "not fetched (make setup)", "-", "-", "-", "-"
		if rm, err := runtime.ResolveIn(opts.Root, spec.ModelOf(m)); err == nil {
			runs = "real"
			if rm.Fixture != "" {
				runs = "fixture: " + rm.Fixture
			}
			if sz, err := runtime.SizeOf(rm.Path); err == nil {
				params, weights, tier, estimate = result.HumanCount(sz.Params), result.HumanBytes(sz.WeightBytes), sz.Tier, result.HumanBytes(sz.EstimateBytes)
			} else {
				runs = "unreadable: " + err.Error()
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", m.ID, family, m.Task, dash(m.Tier), runs, params, weights, tier, estimate, dash(strings.Join(m.Tags, ",")))
	}
	return tw.Flush()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
