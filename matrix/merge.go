package matrix

import (
	"slices"
	"time"

	"github.com/onsi/ginkgo/v2/types"
)

// Merger builds a run's matrix model by model: Add takes one model's Ginkgo reports
// and process failures as its process ends and keeps only the cells they make, so
// a run holds no report longer than it takes to merge it (`hwtest run` over 300
// models kept every report, with every cell's raw samples, to the end). Matrix
// then gives what FromReports of all the reports at once gives.
type Merger struct {
	targets   []string
	cells     []Cell
	problems  []string
	generated time.Time
	// Models and targets the reports named beyond the catalog's (FromReports lists
	// them, with cells or not).
	moreModels, moreTargets []string
}

// NewMerger merges cells on the catalog's targets, in its order.
func NewMerger(targets []string) *Merger { return &Merger{targets: targets} }

// Add merges the reports and process failures of one model's suite process and
// returns the cells they made.
func (g *Merger) Add(model string, reports []types.Report, failures []ProcessFailure) []Cell {
	m := FromReports(reports, failures, []string{model}, g.targets)
	g.moreModels = addNew(g.moreModels, m.Models[1:])
	g.moreTargets = addNew(g.moreTargets, m.Targets[len(g.targets):])
	g.cells = append(g.cells, m.Cells...)
	g.problems = append(g.problems, m.Problems...)
	if m.Generated.After(g.generated) {
		g.generated = m.Generated
	}
	return m.Cells
}

// Matrix is the matrix of everything added, models and targets in catalog order
// (every catalog model, run or not).
func (g *Merger) Matrix(models []string) Matrix {
	more := slices.DeleteFunc(slices.Clone(g.moreModels), func(s string) bool { return slices.Contains(models, s) })
	slices.Sort(more)
	targets := slices.Clone(g.moreTargets)
	slices.Sort(targets)
	m := Assemble(g.cells, append(slices.Clone(models), more...), append(slices.Clone(g.targets), targets...))
	m.Generated, m.Problems = g.generated, g.problems
	return m
}

// addNew appends to list the names in names it does not hold yet.
func addNew(list, names []string) []string {
	for _, n := range names {
		if !slices.Contains(list, n) {
			list = append(list, n)
		}
	}
	return list
}
