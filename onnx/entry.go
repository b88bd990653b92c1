package onnx

import (
	"strings"
)

// InputPlan is what a catalog entry sets for one input: every dim bound, and the
// values synthesised for it. Exactly one of Value and Range is set.
type InputPlan struct {
	Name    string
	Dims    []int64
	Symbols []string // per dim: its symbolic name, "?" for an anonymous open dim, "" for a fixed one
	Value   []float64
	Range   []float64
	Why     string // how values were chosen, when it is a guess worth checking
}

// Default sizes for dims a model leaves open, the way hwtest's own catalog sets them.
const (
	planBatch      = 1     // one sample: the cheapest run that exercises the graph
	planCandidates = 3     // texts or documents a ranking model orders: more than one
	planImageSide  = 224   // the ImageNet size most vision exports expect
	planChannels   = 3     // RGB
	planSequence   = 8     // tokens, frames: long enough to mix positions, quick
	planSamples    = 16000 // one second of 16 kHz audio
	planChunk      = 512   // a streaming model's chunk: 32 ms at 16 kHz (Silero VAD takes no other)
	planVocab      = 1000  // token ids stay below it (and below the model's vocabulary)
)

// PlanInputs binds every dim of every input, one size per symbolic name across
// inputs (an attention mask follows its token ids), and picks values: token ids in
// [1, vocabulary), masks all ones, a sample rate of 16000, a diffusion timestep of
// 500, floats in [-1, 1]. The family decides what a ranking needs (several
// candidates). A model's own fixed dims are kept.
func PlanInputs(s *Summary, family string) []InputPlan {
	symbols := map[string]int64{}
	samples := int64(planSamples)
	if len(StatePairs(s)) > 0 {
		samples = planChunk // a model that carries state across calls takes audio in chunks
	}
	ranking := family == "vision-text" || family == "rag"
	for _, o := range s.Outputs {
		ranking = ranking || hasAny(strings.ToLower(o.Name), "logits_per_")
	}
	var plans []InputPlan
	for _, in := range s.Inputs {
		p := InputPlan{Name: in.Name}
		name := strings.ToLower(in.Name)
		tokens := isInt(in.Type) && isTokenIDs(name)
		image := isFloat(in.Type) && isImage(in)
		state := isFloat(in.Type) && isStateName(name)
		for axis, d := range in.Dims {
			switch {
			case d.Param != "":
				p.Symbols = append(p.Symbols, d.Param)
			case d.Value < 0:
				p.Symbols = append(p.Symbols, "?")
			default:
				p.Symbols = append(p.Symbols, "")
				p.Dims = append(p.Dims, d.Value)
				continue
			}
			if size, ok := symbols[d.Param]; ok && d.Param != "" {
				p.Dims = append(p.Dims, size)
				continue
			}
			var size int64
			switch {
			case axis == 0 && (tokens || hasAny(name, "mask")) && ranking:
				size = planCandidates
			case axis == 0 || hasAny(strings.ToLower(d.Param), "batch"):
				size = planBatch
			case image:
				size = imageDim(in, axis)
			case state:
				size = planBatch // a state's open dim is its batch; its sizes are fixed
			case isFloat(in.Type) && len(in.Dims) == 2 && axis == 1 && !hasAny(name, "embed"):
				size = samples // a waveform [N, samples]
			default:
				size = planSequence
			}
			if d.Param != "" {
				symbols[d.Param] = size
			}
			p.Dims = append(p.Dims, size)
		}
		switch {
		case tokens:
			p.Range = []float64{1, float64(vocabulary(s))}
		case hasAny(name, "mask"):
			p.Value = []float64{1}
		case isInt(in.Type) && (name == "sr" || hasAny(name, "sample_rate", "sampling_rate")):
			p.Value = []float64{16000}
		case isInt(in.Type) && hasAny(name, "type", "position"):
			p.Value = []float64{0}
		case in.Type == Bool:
			p.Value = []float64{1}
		case hasAny(name, "timestep") || name == "t":
			p.Value = []float64{500}
		case isFloat(in.Type):
			p.Range = []float64{-1, 1}
		default:
			p.Range = []float64{0, 2}
			p.Why = "an integer input hwtest has no rule for: 0 or 1, check it"
		}
		plans = append(plans, p)
	}
	return plans
}

// imageDim sizes an open dim of an image input: a spatial one like the other
// spatial dim when that is fixed, else 224; the channels 3; video frames 8.
func imageDim(in ValueInfo, axis int) int64 {
	d := in.Dims
	spatial := [2]int{2, 3} // [N, C, H, W]
	switch {
	case len(d) == 5:
		spatial = [2]int{3, 4} // [N, T, C, H, W]
	case d[3].Value == 3:
		spatial = [2]int{1, 2} // [N, H, W, C]
	}
	switch axis {
	case spatial[0], spatial[1]:
		other := spatial[0] + spatial[1] - axis
		if v := d[other]; v.Value > 0 && v.Param == "" {
			return v.Value
		}
		return planImageSide
	case 1:
		if len(d) == 5 {
			return planSequence
		}
	}
	return planChannels
}

// vocabulary bounds token ids: the language-model logits' fixed last dim when it is
// smaller than the default bound, else the default.
func vocabulary(s *Summary) int64 {
	for _, o := range s.Outputs {
		if isFloat(o.Type) && len(o.Dims) == 3 && hasAny(strings.ToLower(o.Name), "logits") {
			if v := o.Dims[2]; v.Param == "" && v.Value > 1 && v.Value < planVocab {
				return v.Value
			}
		}
	}
	return planVocab
}

func isStateName(name string) bool {
	return hasAny(name, "state", "hidden", "cache") || name == "h" || name == "c"
}

// OutputPlan names the outputs a catalog entry gives the family's checks.
type OutputPlan struct {
	Primary      string
	Distribution string // a Softmax: rows along DistributionAxis sum to 1
	// DistributionAxis is the Softmax's axis when it is not the last (a
	// [batch, classes, 1, 1] head: 1), written {output: NAME, axis: N}; 0: the last.
	DistributionAxis int64
	Probabilities    string // a Sigmoid: values in [0, 1]
	Ranking          string // similarity or document scores
	Router           string
	RouterTopK       int64
	State            string
	StateInput       string
	Notes            []string // what a person should know about the choices
}

// PlanOutputs picks the primary output (the first) and the outputs the family's
// checks read, from the operators that make them and their names.
func PlanOutputs(s *Summary, family string) OutputPlan {
	var p OutputPlan
	if len(s.Outputs) == 0 {
		return p
	}
	p.Primary = s.Outputs[0].Name
	for _, o := range s.Outputs {
		name := strings.ToLower(o.Name)
		prod := s.Producers[o.Name]
		if axis, ok := s.SoftmaxAxis(prod); ok && prod.Op == "Softmax" {
			last := axis == -1 || axis == int64(len(o.Dims))-1
			if p.Distribution == "" {
				p.Distribution = o.Name
				if !last {
					p.DistributionAxis = axis
				}
			}
		}
		if prod.Op == "Sigmoid" && p.Probabilities == "" {
			p.Probabilities = o.Name
		}
		if p.Ranking == "" && (hasAny(name, "logits_per_", "similarity") || family == "rag" && hasAny(name, "score")) {
			p.Ranking = o.Name
		}
		if p.Router == "" && hasAny(name, "router", "gate_logits") {
			p.Router = o.Name
			p.RouterTopK = 2
			if len(s.TopK) > 0 {
				p.RouterTopK = s.TopK[0]
			} else {
				p.Notes = append(p.Notes, "router_top_k 2: the model's TopK k is not a constant, check it")
			}
		}
	}
	if pairs := StatePairs(s); len(pairs) > 0 {
		p.StateInput, p.State = pairs[0][0].Name, pairs[0][1].Name
	}
	return p
}
