package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/hwtest/hwtest/catalog"
	"github.com/hwtest/hwtest/hardware"
	"github.com/hwtest/hwtest/runtime"
)

// DetectOptions is what `hwtest detect` acts on.
type DetectOptions struct {
	*Globals
	JSON bool
}

func newDetectCmd(g *Globals, runF func(*DetectOptions) error) *cobra.Command {
	opts := &DetectOptions{Globals: g}
	cmd := &cobra.Command{
		Use:   "detect",
		Short: "Hardware, drivers, libraries and execution providers on this machine",
		Long: "CPU and its features, NVIDIA GPUs (NVML), AMD GPUs (KFD), Intel GPUs (DRM), Apple\n" +
			"silicon, the runtime libraries of each execution provider, and whether the loaded\n" +
			"ONNX Runtime accepts each target of hardware.yaml. Every probe that finds nothing\n" +
			"says why.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(opts)
			}
			return detectRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the report as JSON")
	return cmd
}

func detectRun(ctx context.Context, opts *DetectOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	var targets []runtime.Target
	if opts.resolveRoot() == nil {
		c, err := catalog.Load(opts.ModelsFile, opts.HardwareFile)
		if err != nil {
			return err
		}
		targets = hardware.Targets(c.Targets)
	}
	defer runtime.Shutdown() // the browser probes started Chromium
	r := hardware.Detect(ctx, targets...)
	if opts.JSON {
		e := json.NewEncoder(opts.Stdout)
		e.SetIndent("", "  ")
		return e.Encode(r)
	}
	_, err := fmt.Fprint(opts.Stdout, r.Table())
	return err
}
