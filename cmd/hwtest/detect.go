package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/hwtest/hwtest/catalog"
	"github.com/hwtest/hwtest/hardware"
	"github.com/hwtest/hwtest/runtime"
)

func newDetectCmd(g *Globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "detect",
		Short: "Hardware, drivers, libraries and execution providers on this machine",
		Long: "CPU and its features, NVIDIA GPUs (NVML), AMD GPUs (KFD), Intel GPUs (DRM), Apple\n" +
			"silicon, the runtime libraries of each execution provider, and whether the loaded\n" +
			"ONNX Runtime accepts each target of hardware.yaml. Every probe that finds nothing\n" +
			"says why.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var targets []runtime.Target
			if g.resolveRoot() == nil {
				c, err := catalog.Load(g.Models, g.Hardware)
				if err != nil {
					return err
				}
				targets = hardware.Targets(c.Targets)
			}
			defer runtime.Shutdown() // the browser probes started Chromium
			r := hardware.Detect(cmd.Context(), targets...)
			if asJSON {
				e := json.NewEncoder(g.Stdout)
				e.SetIndent("", "  ")
				return e.Encode(r)
			}
			_, err := fmt.Fprint(g.Stdout, r.Table())
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	return cmd
}
