package main

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
)

// ModelsOptions is what `hwtest models` acts on.
type ModelsOptions struct {
	*Globals
}

func newModelsCmd(g *Globals, runF func(*ModelsOptions) error) *cobra.Command {
	opts := &ModelsOptions{Globals: g}
	return &cobra.Command{
		Use:   "models",
		Short: "List the models in models.yaml",
		Args:  cobra.NoArgs,
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
	fmt.Fprintln(tw, "ID\tFAMILY\tTASK\tTIER\tSOURCE\tFIXTURE\tTAGS")
	for _, m := range c.Models {
		family := m.Family
		if m.Architecture != "" {
			family += "/" + m.Architecture
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", m.ID, family, m.Task, dash(m.Tier), m.Source, dash(m.Fixture), dash(strings.Join(m.Tags, ",")))
	}
	return tw.Flush()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
