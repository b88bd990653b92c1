package main

import (
	"fmt"
	"os"
	"path/filepath"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/hwtest/hwtest/result"
	"github.com/hwtest/hwtest/sources"
	"github.com/hwtest/hwtest/zoo"
)

// ZooListOptions is what `hwtest zoo list` acts on.
type ZooListOptions struct {
	*Globals
}

// ZooBuildOptions is what `hwtest zoo build` acts on.
type ZooBuildOptions struct {
	*Globals
	Names  []string // zoo models to build; all when empty
	Dir    string
	Broken bool // the deliberately broken variants
}

func newZooCmd(g *Globals, listF func(*ZooListOptions) error, buildF func(*ZooBuildOptions) error) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "zoo",
		Short: "The tiny random-weight models hwtest builds itself",
		Long: "Hugging Face tests its code on tiny random-weight models of each architecture;\n" +
			"hwtest does the same, built in Go with deterministic weights, so every pipeline\n" +
			"family has real models here. They stand in (as fixture: tiny-random) for exports\n" +
			"that cannot be downloaded.",
	}
	cmd.AddCommand(newZooListCmd(g, listF), newZooBuildCmd(g, buildF))
	return cmd
}

func newZooListCmd(g *Globals, runF func(*ZooListOptions) error) *cobra.Command {
	opts := &ZooListOptions{Globals: g}
	return &cobra.Command{
		Use:   "list",
		Short: "List the zoo models",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if runF != nil {
				return runF(opts)
			}
			return zooList(opts)
		},
	}
}

func zooList(opts *ZooListOptions) error {
	tw := tabwriter.NewWriter(opts.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tFAMILY\tARCHITECTURE\tPARAMS\tDESCRIPTION")
	for _, name := range zoo.Names() {
		_, info, err := zoo.Build(name)
		if err != nil {
			return err
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", name, info.Family, info.Architecture, result.HumanCount(info.Params), info.Description)
	}
	return tw.Flush()
}

func newZooBuildCmd(g *Globals, runF func(*ZooBuildOptions) error) *cobra.Command {
	opts := &ZooBuildOptions{Globals: g}
	cmd := &cobra.Command{
		Use:   "build [NAME...]",
		Short: "Build zoo models into .hwtest/models/zoo (or --dir); all when no name is given",
		RunE: func(_ *cobra.Command, names []string) error {
			opts.Names = names
			if runF != nil {
				return runF(opts)
			}
			return zooBuild(opts)
		},
	}
	cmd.Flags().StringVar(&opts.Dir, "dir", "", "output folder (default ROOT/.hwtest/models/zoo)")
	cmd.Flags().BoolVar(&opts.Broken, "broken", false, "build the deliberately broken variants (NAME.broken.onnx) the family checks must catch")
	return cmd
}

func zooBuild(opts *ZooBuildOptions) error {
	names := opts.Names
	if opts.Dir == "" {
		if err := opts.resolveRoot(); err != nil {
			return err
		}
		opts.Dir = filepath.Join(opts.Root, sources.ModelsDir, "zoo")
	}
	if len(names) == 0 {
		names = zoo.Names()
	}
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return err
	}
	for _, name := range names {
		b, info, err := zoo.BuildWith(name, zoo.Options{Perturb: opts.Broken})
		if err != nil {
			return err
		}
		file := name + ".onnx"
		if opts.Broken {
			file = name + ".broken.onnx"
		}
		path := filepath.Join(opts.Dir, file)
		if err := sources.WriteAtomic(path, b); err != nil {
			return err
		}
		fmt.Fprintf(opts.Stdout, "%s  %s params  %s\n", relToWD(path), result.HumanCount(info.Params), info.Architecture)
	}
	return nil
}
