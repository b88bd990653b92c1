package runtime

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// ExpectedOutputsCheck names the check of the declared expected outputs.
const ExpectedOutputsCheck = "matches the expected outputs"

// MatchesExpectedOutputs: every output models.yaml gives an expected answer for
// (expected: {OUTPUT: {file: F}}) agrees with it, on every target, the CPU
// included, within the expected output's tolerance, else the model's, else the
// target's. Known answers only make sense for known inputs: every input must come
// from a file or fixed values.
var MatchesExpectedOutputs = Invariant{
	Name: ExpectedOutputsCheck,
	Check: func(r *Run) error {
		if len(r.Model.Expected) == 0 {
			return errors.New("models.yaml gives no expected outputs for this model")
		}
		if r.Reference.Fixture != "" {
			return notApplicable("a %s fixture ran in place of the real model, whose outputs the expected files hold", r.Reference.Fixture)
		}
		var random []string
		for _, in := range r.Reference.Inputs {
			if ov := r.Model.Inputs[in.Name]; ov.File == "" && ov.Value == nil {
				random = append(random, in.Name)
			}
		}
		if len(random) > 0 {
			return fmt.Errorf("expected outputs need known inputs, and hwtest synthesises %s at random: give each a file: (or value:) in models.yaml's inputs", quoted(random))
		}
		names := make([]string, 0, len(r.Model.Expected))
		for name := range r.Model.Expected {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			e := r.Model.Expected[name]
			got, ok := find(r.Got, name)
			if !ok {
				return fmt.Errorf("models.yaml expects output %q, which the model does not have (its outputs: %s)", name, outputNames(r.Got))
			}
			want, _, err := readExpected(r.Model, name, e, got)
			if err != nil {
				return err
			}
			tol := r.Tolerance
			if e.Tolerance != nil {
				tol = *e.Tolerance
			}
			worst, err := Compare(got, want, tol)
			if err != nil {
				return err
			}
			if !worst.Within() {
				return violation(worst, "output %q differs from the expected output from %s", name, e.File)
			}
		}
		return nil
	},
}

func quoted(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}

func outputNames(ts []Tensor) string {
	names := make([]string, len(ts))
	for i, t := range ts {
		names[i] = t.Name
	}
	return strings.Join(names, ", ")
}
