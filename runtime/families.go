package runtime

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/hwtest/hwtest/result"
)

// rows views a tensor as rows along its last axis: [n, last].
func rows(t Tensor) (n, width int) {
	if len(t.Shape) == 0 {
		return 1, 1
	}
	width = int(t.Shape[len(t.Shape)-1])
	if width == 0 {
		return 0, 0
	}
	return len(t.Data) / width, width
}

func argmax(xs []float64) int {
	best := 0
	for i, x := range xs {
		if x > xs[best] {
			best = i
		}
	}
	return best
}

// sameShape guards property checks that read got and the reference side by side.
func sameShape(got, want Tensor) error {
	if !slices.Equal(got.Shape, want.Shape) {
		return violation(nil, "output %q has shape %v, the CPU reference has %v", got.Name, got.Shape, want.Shape)
	}
	return nil
}

// ArgmaxAgrees: at every position the target predicts the CPU's token (greedy
// decoding takes the same path). A different argmax is accepted only where the CPU's
// own scores for both tokens tie within tolerance.
var ArgmaxAgrees = Invariant{
	Name: "predicts the CPU's token at every position",
	Check: func(r *Run) error {
		got, err := r.primary(r.Got)
		if err != nil {
			return err
		}
		want, _ := r.primary(r.Reference.Outputs)
		if err := sameShape(got, want); err != nil {
			return err
		}
		n, w := rows(want)
		for i := 0; i < n; i++ {
			g, c := argmax(got.Data[i*w:(i+1)*w]), argmax(want.Data[i*w:(i+1)*w])
			wg, wc := want.Data[i*w+g], want.Data[i*w+c]
			if g != c && wc-wg > r.Tolerance.Allowed(wc) {
				return violation(&result.Deviation{Output: got.Name, Index: i*w + g, Got: got.Data[i*w+g], Want: wg, AbsErr: wc - wg, Allowed: r.Tolerance.Allowed(wc)},
					"position %d: the target predicts token %d, the CPU token %d", i, g, c)
			}
		}
		return nil
	},
}

// TopKAgrees: each row's top 5 classes are the CPU's (ties within tolerance aside).
var TopKAgrees = Invariant{
	Name: "ranks the same top-5 classes as the CPU",
	Check: func(r *Run) error {
		got, err := r.primary(r.Got)
		if err != nil {
			return err
		}
		want, _ := r.primary(r.Reference.Outputs)
		return topKAgree(got, want, 5, r.Tolerance)
	},
}

// RouterTopKAgrees: every token is routed to the CPU's top-k experts.
var RouterTopKAgrees = Invariant{
	Name: "routes every token to the CPU's top-k experts",
	Check: func(r *Run) error {
		if r.Model.Outputs.RouterTopK < 1 {
			return errors.New("models.yaml sets no outputs.router_top_k")
		}
		got, err := output(r.Got, r.Model.Outputs.Router, "router")
		if err != nil {
			return err
		}
		want, _ := output(r.Reference.Outputs, r.Model.Outputs.Router, "router")
		return topKAgree(got, want, r.Model.Outputs.RouterTopK, r.Tolerance)
	},
}

// topKAgree checks each row's k largest entries are the reference's. An index
// counts as in the top k when its reference score is within tolerance of the
// reference's k-th largest, so near-ties may swap.
func topKAgree(got, want Tensor, k int, tol Tolerance) error {
	if err := sameShape(got, want); err != nil {
		return err
	}
	n, w := rows(want)
	k = min(k, w)
	for i := 0; i < n; i++ {
		g, c := got.Data[i*w:(i+1)*w], want.Data[i*w:(i+1)*w]
		kth := c[topK(c, k)[k-1]]
		for _, idx := range topK(g, k) {
			if kth-c[idx] > tol.Allowed(kth) {
				return violation(&result.Deviation{Output: got.Name, Index: i*w + idx, Got: g[idx], Want: c[idx], AbsErr: kth - c[idx], Allowed: tol.Allowed(kth)},
					"row %d: index %d is in the target's top %d, not in the CPU's (%v)", i, idx, k, topK(c, k))
			}
		}
	}
	return nil
}

// topK returns the indices of the k largest values, largest first.
func topK(xs []float64, k int) []int {
	idx := make([]int, len(xs))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return xs[idx[a]] > xs[idx[b]] })
	return idx[:k]
}

// DistributionSumsToOne: a softmax head's rows are distributions.
var DistributionSumsToOne = Invariant{
	Name: "gives distributions that sum to 1",
	Check: func(r *Run) error {
		p, err := output(r.Got, r.Model.Outputs.Distribution, "distribution")
		if err != nil {
			return err
		}
		n, w := rows(p)
		// Rounding grows with the row: allow the target's atol per element.
		allowed := 1e-5 + r.Tolerance.ATol*float64(w)
		for i := 0; i < n; i++ {
			var sum float64
			for _, x := range p.Data[i*w : (i+1)*w] {
				sum += x
			}
			if math.Abs(sum-1) > allowed || math.IsNaN(sum) {
				return violation(&result.Deviation{Output: p.Name, Index: i * w, Got: sum, Want: 1, AbsErr: math.Abs(sum - 1), Allowed: allowed}, "row %d of %q sums to %.6g", i, p.Name, sum)
			}
		}
		return nil
	},
}

// RankingAgrees: ordering each row by the target's scores orders it by the CPU's too
// (image-text similarity, retrieved documents). Neighbours may swap only where the
// CPU's scores tie within tolerance.
var RankingAgrees = Invariant{
	Name: "ranks candidates in the CPU's order",
	Check: func(r *Run) error {
		got, err := output(r.Got, r.Model.Outputs.Ranking, "ranking")
		if err != nil {
			return err
		}
		want, _ := output(r.Reference.Outputs, r.Model.Outputs.Ranking, "ranking")
		if err := sameShape(got, want); err != nil {
			return err
		}
		n, w := rows(want)
		for i := 0; i < n; i++ {
			g, c := got.Data[i*w:(i+1)*w], want.Data[i*w:(i+1)*w]
			order := topK(g, w)
			for j := 0; j+1 < len(order); j++ {
				hi, lo := c[order[j]], c[order[j+1]]
				if lo-hi > r.Tolerance.Allowed(hi) {
					return violation(&result.Deviation{Output: got.Name, Index: i*w + order[j+1], Got: g[order[j+1]], Want: lo, AbsErr: lo - hi, Allowed: r.Tolerance.Allowed(hi)},
						"row %d: the target ranks candidate %d above %d, the CPU the other way round", i, order[j], order[j+1])
				}
			}
		}
		return nil
	},
}

// tokenInput is the input a causality check edits: input_ids, else the first
// integer input of rank 2 ([batch, sequence]).
func tokenInput(inputs []Tensor) (int, error) {
	for i, in := range inputs {
		if in.Name == "input_ids" {
			return i, nil
		}
	}
	for i, in := range inputs {
		if !isFloat(in.Type) && len(in.Shape) == 2 {
			return i, nil
		}
	}
	return 0, errors.New("the model has no [batch, sequence] token input to edit")
}

// clone copies tensors so a check can edit inputs without touching the reference.
func clone(ts []Tensor) []Tensor {
	out := make([]Tensor, len(ts))
	for i, t := range ts {
		out[i] = Tensor{Name: t.Name, Type: t.Type, Shape: slices.Clone(t.Shape), Data: slices.Clone(t.Data)}
	}
	return out
}

// Causality: changing the last token leaves every earlier position's logits as they
// were, on the target itself (a decoder must not look ahead).
var Causality = Invariant{
	Name: "is causal: a later token does not change earlier logits",
	Check: func(r *Run) error {
		inputs := clone(r.Reference.Inputs)
		ti, err := tokenInput(inputs)
		if err != nil {
			return err
		}
		tok := inputs[ti]
		b, s := int(tok.Shape[0]), int(tok.Shape[1])
		if s < 2 {
			return fmt.Errorf("input %q has sequence length %d; causality needs at least 2", tok.Name, s)
		}
		for i := 0; i < b; i++ {
			last := &tok.Data[i*s+s-1]
			if *last == 1 {
				*last = 2
			} else {
				*last = 1
			}
		}
		out, err := r.Session.Run(inputs)
		if err != nil {
			return err
		}
		before, err := r.primary(r.Got)
		if err != nil {
			return err
		}
		after, _ := r.primary(out)
		if err := sameShape(after, before); err != nil {
			return err
		}
		if len(before.Shape) != 3 {
			return fmt.Errorf("output %q has shape %v; want [batch, sequence, vocab]", before.Name, before.Shape)
		}
		seq, w := int(before.Shape[1]), int(before.Shape[2])
		for i := 0; i < b; i++ {
			for p := 0; p < seq-1; p++ { // every position but the edited last one
				for v := 0; v < w; v++ {
					at := (i*seq+p)*w + v
					if d := math.Abs(after.Data[at] - before.Data[at]); d > r.Tolerance.Allowed(before.Data[at]) {
						return violation(&result.Deviation{Output: before.Name, Index: at, Got: after.Data[at], Want: before.Data[at], AbsErr: d, Allowed: r.Tolerance.Allowed(before.Data[at])},
							"changing the last token changed position %d's logits", p)
					}
				}
			}
		}
		return nil
	},
}

// SameInputsSameOutputs: running the same inputs again gives the same outputs (a
// denoising step with a fixed seed is reproducible).
var SameInputsSameOutputs = Invariant{
	Name: "gives the same output for the same inputs and seed",
	Check: func(r *Run) error {
		again, err := r.Session.Run(r.Reference.Inputs)
		if err != nil {
			return err
		}
		worst, err := CompareAll(again, r.Got, r.Tolerance)
		if err != nil {
			return violation(nil, "%v", err)
		}
		if !worst.Within() {
			return violation(worst, "a second run on the same inputs differs from the first")
		}
		return nil
	},
}

// ChunkedScanEqualsWhole: a state-space model run over the sequence in two chunks,
// the state carried from the first to the second, gives the whole-sequence run's
// outputs and final state.
var ChunkedScanEqualsWhole = Invariant{
	Name: "scans in chunks with carried state like the whole sequence",
	Check: func(r *Run) error {
		m := r.Model.Outputs
		if m.State == "" || m.StateIn == "" {
			return errors.New("models.yaml sets no outputs.state and outputs.state_input")
		}
		whole := r.Got
		seq := -1
		for _, in := range r.Reference.Inputs {
			if in.Name != m.StateIn && len(in.Shape) >= 2 {
				seq = int(in.Shape[1])
				break
			}
		}
		if seq < 2 {
			return errors.New("no sequence input of length ≥ 2 to split")
		}
		cut := seq / 2
		first, second := clone(r.Reference.Inputs), clone(r.Reference.Inputs)
		for i, in := range r.Reference.Inputs {
			if in.Name == m.StateIn || len(in.Shape) < 2 || int(in.Shape[1]) != seq {
				continue
			}
			first[i] = sliceAxis1(in, 0, cut)
			second[i] = sliceAxis1(in, cut, seq)
		}
		out1, err := r.Session.Run(first)
		if err != nil {
			return fmt.Errorf("first chunk: %w", err)
		}
		state, err := output(out1, m.State, "state")
		if err != nil {
			return err
		}
		for i := range second {
			if second[i].Name == m.StateIn {
				second[i] = Tensor{Name: m.StateIn, Type: second[i].Type, Shape: state.Shape, Data: state.Data}
			}
		}
		out2, err := r.Session.Run(second)
		if err != nil {
			return fmt.Errorf("second chunk: %w", err)
		}
		for _, w := range whole {
			var joined Tensor
			if w.Name == m.State {
				joined, _ = find(out2, w.Name)
			} else {
				a, _ := find(out1, w.Name)
				b, _ := find(out2, w.Name)
				joined = concatAxis1(a, b)
			}
			d, err := Compare(joined, w, r.Tolerance)
			if err != nil {
				return violation(nil, "chunked: %v", err)
			}
			if !d.Within() {
				return violation(d, "two chunks with carried state differ from the whole sequence")
			}
		}
		return nil
	},
}

// sliceAxis1 takes positions [from, to) of axis 1.
func sliceAxis1(t Tensor, from, to int) Tensor {
	outer, n := int(t.Shape[0]), int(t.Shape[1])
	inner := len(t.Data) / (outer * n)
	out := Tensor{Name: t.Name, Type: t.Type, Shape: slices.Clone(t.Shape)}
	out.Shape[1] = int64(to - from)
	for o := 0; o < outer; o++ {
		out.Data = append(out.Data, t.Data[(o*n+from)*inner:(o*n+to)*inner]...)
	}
	return out
}

// concatAxis1 joins two tensors along axis 1.
func concatAxis1(a, b Tensor) Tensor {
	if len(a.Shape) < 2 || len(b.Shape) < 2 {
		return a
	}
	outer := int(a.Shape[0])
	ia := len(a.Data) / outer
	ib := len(b.Data) / outer
	out := Tensor{Name: a.Name, Type: a.Type, Shape: slices.Clone(a.Shape)}
	out.Shape[1] += b.Shape[1]
	for o := 0; o < outer; o++ {
		out.Data = append(out.Data, a.Data[o*ia:(o+1)*ia]...)
		out.Data = append(out.Data, b.Data[o*ib:(o+1)*ib]...)
	}
	return out
}

// PaddingIgnored: an encoder's attention mask hides padding. With the last position
// masked out, changing its token leaves every other position's hidden state as it
// was; a target that drops or mis-broadcasts the mask breaks this.
var PaddingIgnored = Invariant{
	Name: "ignores masked padding tokens",
	Check: func(r *Run) error {
		inputs := clone(r.Reference.Inputs)
		ti, err := tokenInput(inputs)
		if err != nil {
			return err
		}
		mi := slices.IndexFunc(inputs, func(t Tensor) bool { return t.Name == "attention_mask" })
		if mi < 0 {
			return errors.New("the model has no attention_mask input")
		}
		tok, mask := inputs[ti], inputs[mi]
		b, s := int(tok.Shape[0]), int(tok.Shape[1])
		if s < 2 || !slices.Equal(mask.Shape, tok.Shape) {
			return fmt.Errorf("input %q %v and attention_mask %v: want the same [batch, sequence ≥ 2]", tok.Name, tok.Shape, mask.Shape)
		}
		for i := 0; i < b; i++ {
			mask.Data[i*s+s-1] = 0
		}
		first, err := r.Session.Run(inputs)
		if err != nil {
			return err
		}
		for i := 0; i < b; i++ {
			last := &tok.Data[i*s+s-1]
			if *last == 1 {
				*last = 2
			} else {
				*last = 1
			}
		}
		second, err := r.Session.Run(inputs)
		if err != nil {
			return err
		}
		h1, err := r.primary(first)
		if err != nil {
			return err
		}
		h2, _ := r.primary(second)
		// Indexing below assumes the token input's batch and sequence; a primary
		// output of another length (a decoder's) would read past its end.
		if len(h1.Shape) != 3 || h1.Shape[0] != int64(b) || h1.Shape[1] != int64(s) || !slices.Equal(h1.Shape, h2.Shape) {
			return violation(nil, "output %q has shape %v; want [%d, %d, hidden] like input %q", h1.Name, h1.Shape, b, s, tok.Name)
		}
		w := int(h1.Shape[2])
		for i := 0; i < b; i++ {
			for p := 0; p < s-1; p++ {
				for k := 0; k < w; k++ {
					at := (i*s+p)*w + k
					if d := math.Abs(h2.Data[at] - h1.Data[at]); d > r.Tolerance.Allowed(h1.Data[at]) {
						return violation(&result.Deviation{Output: h1.Name, Index: at, Got: h2.Data[at], Want: h1.Data[at], AbsErr: d, Allowed: r.Tolerance.Allowed(h1.Data[at])},
							"changing a masked padding token changed position %d's hidden state", p)
					}
				}
			}
		}
		return nil
	},
}
