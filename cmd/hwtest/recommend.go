package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hwtest/hwtest/catalog"
	"github.com/hwtest/hwtest/history"
	"github.com/hwtest/hwtest/matrix"
	"github.com/hwtest/hwtest/onnx"
	"github.com/hwtest/hwtest/recommend"
	"github.com/hwtest/hwtest/runtime"
	"github.com/hwtest/hwtest/spec"
)

// RecommendOptions is what `hwtest recommend` acts on.
type RecommendOptions struct {
	*Globals
	Model     string
	Family    string
	MaxP50    float64 // ms
	MaxP99    float64 // ms
	MaxMemory byteSize
	Precision string
	JSON      bool
}

func newRecommendCmd(g *Globals, runF func(*RecommendOptions) error) *cobra.Command {
	opts := &RecommendOptions{Globals: g}
	cmd := &cobra.Command{
		Use:   "recommend MODEL | --family FAMILY",
		Short: "Which target to deploy a model (or a family) on: measured ranking, speedup over cpu, memory, exclusions, a pick per scenario",
		Long: "Reads the history (--db). For MODEL: the targets that passed, fastest (p50) first,\n" +
			"each with its speedup over cpu, peak memory, how many runs back it (stored results\n" +
			"with the same key: model, ONNX Runtime, device, driver, host CPU) and how its p50\n" +
			"varied across them; partial and cpu-only targets apart with their share on the\n" +
			"CPU (a cpu-only target's EP took no node: never ranked as passing); every other\n" +
			"target with why (mismatch, error, unavailable with the probe's reason,\n" +
			"expected-fail, over budget, not run); and a pick for lowest latency, lowest memory,\n" +
			"browser only and CPU only. A model with no result yet is PREDICTED from its\n" +
			"family's results and its operators (as `hwtest check` reads them), and says so.\n" +
			"--family F does the same across the family's models.\n\n" +
			"--max-memory takes a size such as 512MiB, 2GiB or 800MB (a bare number is MiB).",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Model = args[0]
			}
			switch {
			case (opts.Model == "") == (opts.Family == ""):
				return errors.New("name a MODEL or a --family (one of them): hwtest recommend silero-vad-v5")
			case opts.Family != "" && !slices.Contains(catalog.Families, opts.Family):
				return fmt.Errorf("--family %q: want one of %s", opts.Family, strings.Join(catalog.Families, ", "))
			case opts.MaxP50 < 0 || opts.MaxP99 < 0:
				return errors.New("--max-p50 and --max-p99 are milliseconds above 0")
			case opts.Precision != "" && !slices.Contains(catalog.Precisions, opts.Precision):
				return fmt.Errorf("--precision %q: want one of %s", opts.Precision, strings.Join(catalog.Precisions, ", "))
			}
			if runF != nil {
				return runF(opts)
			}
			return recommendRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Family, "family", "", "recommend for every model of this pipeline family")
	cmd.Flags().Float64Var(&opts.MaxP50, "max-p50", 0, "leave out targets whose p50 latency is above this many ms")
	cmd.Flags().Float64Var(&opts.MaxP99, "max-p99", 0, "leave out targets whose p99 latency is above this many ms")
	cmd.Flags().Var(&opts.MaxMemory, "max-memory", "leave out targets whose peak memory is above this size (512MiB, 2GiB; a bare number is MiB)")
	cmd.Flags().StringVar(&opts.Precision, "precision", "", "only targets that run at this precision in hardware.yaml ("+strings.Join(catalog.Precisions, ", ")+")")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	return cmd
}

func recommendRun(ctx context.Context, opts *RecommendOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	c, err := opts.loadCatalogs()
	if err != nil {
		return err
	}
	db, err := opts.openHistory(ctx, history.ReadOnly)
	if errors.Is(err, history.ErrNoHistory) {
		return fmt.Errorf("%w: recommendations are made from measured runs (`hwtest run`)", err)
	}
	if err != nil {
		return err
	}
	defer db.Close()
	models, targets := opts.catalogOrder()
	current, err := db.Current(ctx, models, targets)
	if err != nil {
		return err
	}
	h := recommend.History{Current: current, Runs: map[string][]matrix.Cell{}}
	// loadRuns reads the stored results of the family's measured models: the runs
	// behind their figures.
	loadRuns := func(family string, also ...string) error {
		for _, cell := range current.Cells {
			if (cell.Family == family || slices.Contains(also, cell.Model)) && h.Runs[cell.Model] == nil {
				runs, err := db.History(ctx, cell.Model, "")
				if err != nil {
					return err
				}
				h.Runs[cell.Model] = runs
			}
		}
		return nil
	}
	b := recommend.Budget{MaxP50MS: opts.MaxP50, MaxP99MS: opts.MaxP99, MaxMemoryBytes: int64(opts.MaxMemory), Precision: opts.Precision}

	var out interface {
		JSON() ([]byte, error)
		Markdown() []byte
	}
	if opts.Family != "" {
		if err := loadRuns(opts.Family); err != nil {
			return err
		}
		var ids []string
		ops := map[string]recommend.Operators{}
		for _, m := range c.Models {
			if m.Family != opts.Family {
				continue
			}
			ids = append(ids, m.ID)
			if h.Runs[m.ID] == nil {
				ops[m.ID] = modelOperators(opts.Globals, c, m.ID)
			}
		}
		out = recommend.Family(h, c.Targets, opts.Family, ids, ops, b)
	} else {
		family := ""
		for _, cell := range current.Cells {
			if cell.Model == opts.Model {
				family = cell.Family
				break
			}
		}
		m, inCatalog := c.Model(opts.Model)
		if family == "" && inCatalog {
			family = m.Family
		}
		if err := loadRuns(family, opts.Model); err != nil {
			return err
		}
		switch {
		case h.Runs[opts.Model] != nil:
			out = recommend.Model(h, c.Targets, opts.Model, b)
		case !inCatalog:
			return fmt.Errorf("%q has no result in the history %s and is not in %s", opts.Model, relToWD(db.Path()), relToWD(opts.ModelsFile))
		default:
			out = recommend.Predict(h, c.Targets, opts.Model, family, modelOperators(opts.Globals, c, opts.Model), b)
		}
	}
	var data []byte
	if opts.JSON {
		if data, err = out.JSON(); err != nil {
			return err
		}
	} else {
		data = out.Markdown()
	}
	_, err = opts.Stdout.Write(data)
	return err
}

// modelOperators reads a catalog model's operators as `hwtest check` does: from its
// file, or its fixture's when the real export is not on this machine.
func modelOperators(g *Globals, c *catalog.Catalogs, id string) recommend.Operators {
	m, ok := c.Model(id)
	if !ok {
		return recommend.Operators{Err: "not in " + relToWD(g.ModelsFile)}
	}
	rm, err := runtime.ResolveIn(g.Root, spec.ModelOf(m))
	if err != nil {
		return recommend.Operators{Err: err.Error()}
	}
	data, err := os.ReadFile(rm.Path)
	if err != nil {
		return recommend.Operators{Err: err.Error()}
	}
	s, err := onnx.Inspect(data)
	if err != nil {
		return recommend.Operators{Err: err.Error()}
	}
	return recommend.Operators{Counts: s.Ops, Fixture: rm.Fixture}
}

// byteSize is a flag value in bytes, written with a unit: 512MiB, 2GiB, 800MB, 1.5G;
// a bare number is MiB, the unit `hwtest query` reports memory in.
type byteSize int64

func (s *byteSize) String() string {
	if *s == 0 {
		return ""
	}
	return strconv.FormatFloat(float64(*s)/(1<<20), 'g', -1, 64) + "MiB"
}

func (s *byteSize) Type() string { return "size" }

func (s *byteSize) Set(v string) error {
	units := []struct {
		suffix string
		mult   float64
	}{
		{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
		{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
		{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"T", 1 << 40}, {"B", 1},
	}
	num, mult := strings.TrimSpace(v), float64(1<<20)
	for _, u := range units {
		if n, ok := strings.CutSuffix(num, u.suffix); ok {
			num, mult = strings.TrimSpace(n), u.mult
			break
		}
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || f <= 0 {
		return fmt.Errorf("want a size above 0 such as 512MiB or 2GiB")
	}
	*s = byteSize(f * mult)
	return nil
}
