package runtime

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/hwtest/hwtest/result"
)

// Invariant is one property a family template asserts on every target. Check
// returns nil when it holds, a *Violation when the outputs break it (a mismatch),
// and any other error when the target could not run what it needed (an error).
type Invariant struct {
	Name  string // what the spec says: "agrees with the CPU reference"
	Check func(r *Run) error
	// OutputOnly: the check reads only the target's outputs (a property such as
	// "sums to 1"), so it can be put to the CPU reference's outputs too. One the
	// reference breaks as well does not fit the model as models.yaml describes it:
	// that is the catalog's error, never the target's mismatch.
	OutputOnly bool
}

// NotApplicable is an invariant that does not fit the model's outputs (top-5
// classes of a dense map): the step is skipped, saying why, not failed.
type NotApplicable struct{ Reason string }

func (n *NotApplicable) Error() string { return n.Reason }

func notApplicable(format string, args ...any) error {
	return &NotApplicable{Reason: fmt.Sprintf(format, args...)}
}

// misfit reports whether inv, which broke on the target, breaks on the CPU
// reference's own outputs too.
func misfit(inv Invariant, r *Run) bool {
	if !inv.OutputOnly {
		return false
	}
	ref := *r
	ref.Got = r.Reference.Outputs
	return IsViolation(inv.Check(&ref))
}

// Run is what an invariant checks: the target's session, its outputs on the shared
// inputs, and the CPU reference.
type Run struct {
	Model     Model
	Target    Target
	Session   Backend
	Reference *Reference
	Got       []Tensor  // the target's outputs on Reference.Inputs
	Tolerance Tolerance // the model's when set, else the target's
}

// Violation is an invariant that does not hold: the outputs are wrong.
type Violation struct {
	Msg   string
	Worst *result.Deviation
}

func (v *Violation) Error() string {
	if v.Worst != nil {
		return v.Msg + ": " + v.Worst.String()
	}
	return v.Msg
}

func violation(worst *result.Deviation, format string, args ...any) error {
	return &Violation{Msg: fmt.Sprintf(format, args...), Worst: worst}
}

// IsViolation reports whether err says the outputs were wrong (rather than that the
// run failed).
func IsViolation(err error) bool {
	var v *Violation
	return errors.As(err, &v)
}

// primary returns the output the family's property checks read: outputs.primary
// from the catalog, else the model's first output.
func (r *Run) primary(outs []Tensor) (Tensor, error) {
	if r.Model.Outputs.Primary == "" {
		if len(outs) == 0 {
			return Tensor{}, errors.New("the model has no outputs")
		}
		return outs[0], nil
	}
	t, ok := find(outs, r.Model.Outputs.Primary)
	if !ok {
		return Tensor{}, fmt.Errorf("the model has no output %q (outputs.primary in models.yaml)", r.Model.Outputs.Primary)
	}
	return t, nil
}

// OutputsAgree: every output agrees with the CPU reference within tolerance.
var OutputsAgree = Invariant{
	Name: "agrees with the CPU reference",
	Check: func(r *Run) error {
		worst, err := CompareAll(r.Got, r.Reference.Outputs, r.Tolerance)
		if err != nil {
			return violation(nil, "%v", err)
		}
		if !worst.Within() {
			return violation(worst, "outputs differ from the CPU reference")
		}
		return nil
	},
}

// ProbabilitiesInUnitRange: the output models.yaml names outputs.probabilities (or
// outputs.distribution) holds probabilities, so every value is in [0, 1].
var ProbabilitiesInUnitRange = Invariant{
	Name:       "gives probabilities in [0, 1]",
	OutputOnly: true,
	Check: func(r *Run) error {
		name := r.Model.Outputs.Probabilities
		if name == "" {
			name = r.Model.Outputs.Distribution
		}
		p, err := output(r.Got, name, "probabilities")
		if err != nil {
			return err
		}
		for i, x := range p.Data {
			if !(x >= 0 && x <= 1) {
				return violation(&result.Deviation{Output: p.Name, Index: i, Got: x}, "output %q[%d] = %g is not a probability", p.Name, i, x)
			}
		}
		return nil
	},
}

// output finds a named output; role is the models.yaml key that named it.
func output(outs []Tensor, name, role string) (Tensor, error) {
	if name == "" {
		return Tensor{}, fmt.Errorf("models.yaml names no outputs.%s for this check", role)
	}
	t, ok := find(outs, name)
	if !ok {
		return Tensor{}, fmt.Errorf("the model has no output %q (outputs.%s in models.yaml)", name, role)
	}
	return t, nil
}

// StreamingStateAgrees: for a stateful model, successive chunks with the state
// carried from run to run agree with the CPU doing the same, chunk by chunk, so
// state survives the round trip through the target.
var StreamingStateAgrees = Invariant{
	Name: "carries streaming state across chunks like the CPU",
	Check: func(r *Run) error {
		if r.Model.Outputs.State == "" {
			return errors.New("models.yaml sets no outputs.state for this stateful check")
		}
		chunks, err := RunChunks(r.Session, r.Model, r.Reference.Inputs, len(r.Reference.Chunks))
		if err != nil {
			return err
		}
		for k := range chunks {
			worst, err := CompareAll(chunks[k], r.Reference.Chunks[k], r.Tolerance)
			if err != nil {
				return violation(nil, "chunk %d: %v", k, err)
			}
			if !worst.Within() {
				return violation(worst, "chunk %d of %d differs from the CPU's", k+1, len(chunks))
			}
		}
		return nil
	},
}

// HiddenStateShape: a text encoder's primary output is [batch, sequence, hidden],
// with batch and sequence those of its first input (the token ids).
var HiddenStateShape = Invariant{
	Name: "returns hidden states of shape [batch, sequence, hidden]",
	Check: func(r *Run) error {
		h, err := r.primary(r.Got)
		if err != nil {
			return err
		}
		ids := r.Reference.Inputs[0]
		if len(h.Shape) != 3 || len(ids.Shape) < 2 || h.Shape[0] != ids.Shape[0] || h.Shape[1] != ids.Shape[1] || h.Shape[2] < 1 {
			return violation(nil, "output %q has shape %v; want [%d, %d, hidden] from input %q %v", h.Name, h.Shape, ids.Shape[0], ids.Shape[len(ids.Shape)-1], ids.Name, ids.Shape)
		}
		return nil
	},
}

// PooledCosineThreshold is how close a target's mean-pooled embedding must point to
// the CPU's: cosine 0.999 is about 2.6 degrees.
const PooledCosineThreshold = 0.999

// PooledEmbeddingCosine: the mean-pooled embedding of each batch row points the same
// way as the CPU's (what a retrieval or similarity user consumes).
var PooledEmbeddingCosine = Invariant{
	Name: fmt.Sprintf("pools to embeddings with cosine >= %g to the CPU's", PooledCosineThreshold),
	Check: func(r *Run) error {
		got, err := r.primary(r.Got)
		if err != nil {
			return err
		}
		want, err := r.primary(r.Reference.Outputs)
		if err != nil {
			return err
		}
		if !slices.Equal(got.Shape, want.Shape) || len(got.Shape) != 3 {
			return violation(nil, "output %q has shape %v, the CPU's %v: want [batch, sequence, hidden]", got.Name, got.Shape, want.Shape)
		}
		g, w := meanPool(got), meanPool(want)
		for b := range g {
			if c := cosine(g[b], w[b]); !(c >= PooledCosineThreshold) {
				return violation(nil, "batch row %d: pooled embedding cosine %.6f < %g", b, c, PooledCosineThreshold)
			}
		}
		return nil
	},
}

// meanPool averages [batch, seq, hidden] over the sequence.
func meanPool(t Tensor) [][]float64 {
	b, s, h := int(t.Shape[0]), int(t.Shape[1]), int(t.Shape[2])
	out := make([][]float64, b)
	for i := range out {
		out[i] = make([]float64, h)
		for j := 0; j < s; j++ {
			for k := 0; k < h; k++ {
				out[i][k] += t.Data[(i*s+j)*h+k] / float64(s)
			}
		}
	}
	return out
}

func cosine(a, b []float64) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += a[i] * b[i]
		na += a[i] * a[i]
		nb += b[i] * b[i]
	}
	return dot / math.Sqrt(na*nb)
}
