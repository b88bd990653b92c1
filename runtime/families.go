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

// lanes views a tensor along one axis: n lanes of width elements each, the
// element j of lane i at index at(i, j). Along the last axis a lane is a row.
type lanes struct {
	n, width, inner int
}

// lanesOf views t along axis as ONNX counts axes (negative from the end); axis 0
// means the last axis, as models.yaml's string form of an output role does.
func lanesOf(t Tensor, axis int) (lanes, error) {
	rank := len(t.Shape)
	if rank == 0 {
		return lanes{n: 1, width: 1, inner: 1}, nil
	}
	a := axis
	switch {
	case axis == 0:
		a = rank - 1
	case axis < 0:
		a = rank + axis
	}
	if a < 0 || a >= rank {
		return lanes{}, fmt.Errorf("axis %d: output %q has shape %v (rank %d)", axis, t.Name, t.Shape, rank)
	}
	width := int(t.Shape[a])
	inner := int(elements(t.Shape[a+1:]))
	if width == 0 || inner == 0 {
		return lanes{}, nil
	}
	return lanes{n: len(t.Data) / width, width: width, inner: inner}, nil
}

func (l lanes) at(i, j int) int { return ((i/l.inner)*l.width+j)*l.inner + i%l.inner }

// lane copies lane i of data.
func (l lanes) lane(data []float64, i int) []float64 {
	out := make([]float64, l.width)
	for j := range out {
		out[j] = data[l.at(i, j)]
	}
	return out
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
// It reads the primary output as [batch, classes], [batch, classes, 1, 1] or
// [batch, queries, classes]; on anything else (a detector's dense map) top-5 classes
// mean nothing, and the step is skipped saying so.
var TopKAgrees = Invariant{
	Name: "ranks the same top-5 classes as the CPU",
	Check: func(r *Run) error {
		got, err := r.primary(r.Got)
		if err != nil {
			return err
		}
		want, _ := r.primary(r.Reference.Outputs)
		if err := sameShape(got, want); err != nil {
			return err
		}
		l, why := classLanes(r.Model, want)
		if why != "" {
			return notApplicable("%s", why)
		}
		return topKAgree(got, want, l, 5, r.Tolerance)
	},
}

// classLanes views a classifier's output as lanes of class scores, or says why it is
// not one. The class axis is outputs.distribution's axis when that names this
// output, axis 1 when every later dim is 1 ([batch, classes, 1, 1]), else the last.
func classLanes(m Model, t Tensor) (lanes, string) {
	rank := len(t.Shape)
	axis := rank - 1
	switch {
	case m.Outputs.Distribution == t.Name && m.Outputs.DistributionAxis != 0:
		axis = m.Outputs.DistributionAxis
		if axis < 0 {
			axis += rank
		}
	case rank >= 3 && elements(t.Shape[2:]) == 1:
		axis = 1
	}
	dense := fmt.Sprintf("output %q has shape %v, a dense map rather than [batch, classes] (or [batch, classes, 1, 1], or [batch, queries, classes]): top-5 classes mean nothing there; elementwise agreement with the CPU checks it", t.Name, t.Shape)
	switch {
	case rank < 1 || axis < 0 || axis >= rank:
		return lanes{}, dense
	case elements(t.Shape[axis+1:]) != 1:
		return lanes{}, fmt.Sprintf("output %q has shape %v: the class axis %d is not the last one that is more than 1 wide: top-5 classes mean nothing there; elementwise agreement with the CPU checks it", t.Name, t.Shape, axis)
	case axis > 2 || (axis == 2 && rank > 3):
		return lanes{}, dense
	case t.Shape[axis] < 2:
		return lanes{}, fmt.Sprintf("output %q has shape %v: its class axis %d holds one class, so there is no top 5 to compare; elementwise agreement with the CPU checks it", t.Name, t.Shape, axis)
	}
	l, _ := lanesOf(t, axis-rank)
	return l, ""
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
		if err := sameShape(got, want); err != nil {
			return err
		}
		l, err := lanesOf(want, 0)
		if err != nil {
			return err
		}
		return topKAgree(got, want, l, r.Model.Outputs.RouterTopK, r.Tolerance)
	},
}

// topKAgree checks each lane's k largest entries are the reference's. An index
// counts as in the top k when its reference score is within tolerance of the
// reference's k-th largest, so near-ties may swap. got and want have one shape.
func topKAgree(got, want Tensor, l lanes, k int, tol Tolerance) error {
	k = min(k, l.width)
	for i := 0; i < l.n; i++ {
		g, c := l.lane(got.Data, i), l.lane(want.Data, i)
		kth := c[topK(c, k)[k-1]]
		for _, idx := range topK(g, k) {
			if kth-c[idx] > tol.Allowed(kth) {
				return violation(&result.Deviation{Output: got.Name, Index: l.at(i, idx), Got: g[idx], Want: c[idx], AbsErr: kth - c[idx], Allowed: tol.Allowed(kth)},
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

// DistributionSumsToOne: a softmax head's lanes along outputs.distribution's axis
// (the last unless models.yaml gives one) are distributions.
var DistributionSumsToOne = Invariant{
	Name:       "gives distributions that sum to 1",
	OutputOnly: true,
	Check: func(r *Run) error {
		p, err := output(r.Got, r.Model.Outputs.Distribution, "distribution")
		if err != nil {
			return err
		}
		l, err := lanesOf(p, r.Model.Outputs.DistributionAxis)
		if err != nil {
			return fmt.Errorf("outputs.distribution in models.yaml: %w", err)
		}
		// Rounding grows with the lane: allow the target's atol per element.
		allowed := 1e-5 + r.Tolerance.ATol*float64(l.width)
		for i := 0; i < l.n; i++ {
			var sum float64
			for j := 0; j < l.width; j++ {
				sum += p.Data[l.at(i, j)]
			}
			if math.Abs(sum-1) > allowed || math.IsNaN(sum) {
				return violation(&result.Deviation{Output: p.Name, Index: l.at(i, 0), Got: sum, Want: 1, AbsErr: math.Abs(sum - 1), Allowed: allowed},
					"%s of %q %v sums to %.6g", laneName(p, l, i, r.Model.Outputs.DistributionAxis), p.Name, p.Shape, sum)
			}
		}
		return nil
	},
}

// laneName says which lane broke a check: a row along the last axis, else the
// lane along the axis models.yaml gave.
func laneName(t Tensor, l lanes, i, axis int) string {
	if axis == 0 || axis == len(t.Shape)-1 || axis == -1 {
		return fmt.Sprintf("row %d", i)
	}
	return fmt.Sprintf("lane %d along axis %d", i, axis)
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
		l, err := lanesOf(want, r.Model.Outputs.RankingAxis)
		if err != nil {
			return fmt.Errorf("outputs.ranking in models.yaml: %w", err)
		}
		for i := 0; i < l.n; i++ {
			g, c := l.lane(got.Data, i), l.lane(want.Data, i)
			order := topK(g, l.width)
			for j := 0; j+1 < len(order); j++ {
				hi, lo := c[order[j]], c[order[j+1]]
				if lo-hi > r.Tolerance.Allowed(hi) {
					return violation(&result.Deviation{Output: got.Name, Index: l.at(i, order[j+1]), Got: g[order[j+1]], Want: lo, AbsErr: lo - hi, Allowed: r.Tolerance.Allowed(hi)},
						"%s: the target ranks candidate %d above %d, the CPU the other way round", laneName(want, l, i, r.Model.Outputs.RankingAxis), order[j], order[j+1])
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
