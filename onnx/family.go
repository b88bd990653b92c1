package onnx

import (
	"fmt"
	"slices"
	"strings"
)

// Guess is the pipeline family a model looks like, from its inputs, outputs and
// operators alone: what `hwtest inspect` shows and `hwtest add` writes (as a guess).
type Guess struct {
	Family       string   `json:"family"`                 // one of the catalog's families; "" when nothing matched
	Architecture string   `json:"architecture,omitempty"` // text only: encoder, decoder or encoder-decoder
	Task         string   `json:"task"`                   // a task name in the catalog's style, e.g. image-classification
	Confidence   string   `json:"confidence"`             // high, medium or low
	Reasons      []string `json:"reasons"`                // the evidence: "4-D float input x [1, 3, 224, 224]", "53 Conv"
}

// Confidence words, strongest first.
const (
	High   = "high"
	Medium = "medium"
	Low    = "low"
)

// GuessFamily reads a model's family off its summary. The rules follow how the
// exporters the families come from name and shape things (Hugging Face's
// input_ids / pixel_values / decoder_input_ids, diffusers' sample + timestep,
// Silero's sr), so a model exported another way may be guessed wrong: the
// reasons say what the guess rests on, for a person to check.
func GuessFamily(s *Summary) Guess {
	m := readModel(s)
	g := m.guess()
	if g.Task == "" {
		g.Task = m.task(g)
	}
	return g
}

// GuessTask names the task of a model of the given family (and text
// architecture), from its outputs: what `hwtest add` writes when no --task is given.
func GuessTask(s *Summary, family, architecture string) string {
	return readModel(s).task(Guess{Family: family, Architecture: architecture})
}

// modelSignals is what the rules read, gathered once.
type modelSignals struct {
	s                   *Summary
	images, tokens      []ValueInfo // image-like float inputs; integer token-id inputs
	audio, waveforms    []ValueInfo // audio-named float inputs; float [N, samples] inputs
	timesteps, docs     []ValueInfo
	sampleRate          *ValueInfo
	latents             []ValueInfo // float 4-D inputs named sample / latent
	decoderIDs, past    []ValueInfo
	contrastive, router []ValueInfo // outputs
	lmLogits, hidden    []ValueInfo
	docScores, audioOut []ValueInfo
	states              [][2]ValueInfo // state input, output pairs
}

func readModel(s *Summary) *modelSignals {
	m := &modelSignals{s: s}
	for _, in := range s.Inputs {
		name := strings.ToLower(in.Name)
		switch {
		case isFloat(in.Type) && isImage(in):
			m.images = append(m.images, in)
		case isFloat(in.Type) && len(in.Dims) == 4 && hasAny(name, "sample", "latent"):
			m.latents = append(m.latents, in)
		case isFloat(in.Type) && hasAny(name, "input_values", "input_features", "audio", "waveform", "wav", "pcm", "speech", "mel", "spectrogram", "fbank"):
			m.audio = append(m.audio, in)
		case isFloat(in.Type) && len(in.Dims) == 2 && in.Dims[1].Value < 0 && !hasAny(name, "state", "mask", "embed"):
			m.waveforms = append(m.waveforms, in)
		case hasAny(name, "timestep") || name == "t" || name == "sigma":
			m.timesteps = append(m.timesteps, in)
		case name == "sr" || name == "sample_rate" || name == "sampling_rate":
			m.sampleRate = &in
		case hasAny(name, "past_key", "past_value", "past.", "cache"):
			m.past = append(m.past, in)
		}
		if isInt(in.Type) && isTokenIDs(name) {
			m.tokens = append(m.tokens, in)
			if hasAny(name, "decoder") {
				m.decoderIDs = append(m.decoderIDs, in)
			}
			if hasAny(name, "doc", "context", "passage") {
				m.docs = append(m.docs, in)
			}
		}
	}
	for _, out := range s.Outputs {
		name := strings.ToLower(out.Name)
		switch {
		case hasAny(name, "router", "gate_logits"):
			m.router = append(m.router, out)
		case hasAny(name, "logits_per_", "similarity") || strings.HasSuffix(name, "_embeds") && !hasAny(name, "text_embeds", "inputs_embeds"):
			m.contrastive = append(m.contrastive, out)
		case hasAny(name, "doc_scores", "retriev"):
			m.docScores = append(m.docScores, out)
		case isFloat(out.Type) && len(out.Dims) == 3 && hasAny(name, "logits"):
			m.lmLogits = append(m.lmLogits, out)
		case hasAny(name, "last_hidden_state", "pooler_output", "hidden_states", "embedding", "sentence_embed"):
			m.hidden = append(m.hidden, out)
		}
		if hasAny(name, "audio") {
			m.audioOut = append(m.audioOut, out)
		}
	}
	m.states = StatePairs(s)
	return m
}

func (m *modelSignals) guess() Guess {
	ops := m.s.Ops
	switch {
	case len(m.timesteps) > 0 && len(m.latents)+len(m.images) > 0:
		return guess("diffusion", High, describe(m.timesteps[0]), describe(append(m.latents, m.images...)[0]), m.opCount("Conv"))
	case len(m.docs) > 0 || len(m.docScores) > 0:
		return guess("rag", High, inputOrOutput(m.docs, m.docScores), m.tokenReason())
	case len(m.router) > 0:
		return guess("mixture-of-experts", High, "output "+m.router[0].Name, m.opCount("TopK"))
	case m.sampleRate != nil:
		return guess("audio", High, "sample-rate input "+m.sampleRate.Name, m.firstInput(m.audio, m.waveforms), m.opCount("LSTM", "GRU"))
	case len(m.audio) > 0 || len(m.audioOut) > 0:
		return guess("audio", High, inputOrOutput(m.audio, m.audioOut), m.opCount("Conv", "LSTM", "GRU"))
	case len(m.states) > 0 && ops["Scan"]+ops["Loop"] > 0:
		return guess("state-space", High, fmt.Sprintf("state input %s, carried on by output %s", m.states[0][0].Name, m.states[0][1].Name), m.opCount("Scan", "Loop"))
	case len(m.images) > 0 && len(m.tokens) > 0:
		switch {
		case len(m.contrastive) > 0:
			return guess("vision-text", High, describe(m.images[0]), describe(m.tokens[0]), "output "+m.contrastive[0].Name)
		case len(m.lmLogits) > 0:
			return guess("multimodal", High, describe(m.images[0]), describe(m.tokens[0]), "language-model "+describeOutput(m.lmLogits[0]))
		}
		return guess("multimodal", Low, describe(m.images[0]), describe(m.tokens[0]), "no similarity or language-model output")
	case len(m.images) > 0:
		return guess("vision", High, describe(m.images[0]), m.opCount("Conv", "MatMul"))
	case len(m.tokens) > 0 && ops["TopK"] > 0:
		return guess("mixture-of-experts", Medium, m.tokenReason(), m.opCount("TopK")+" (a router picks its top-k experts), no router output")
	case len(m.tokens) > 0:
		return m.text()
	case len(m.waveforms) > 0 && m.opCount("Conv", "LSTM", "GRU") != "":
		return guess("audio", Medium, describe(m.waveforms[0])+" (a waveform [N, samples])", m.opCount("Conv", "LSTM", "GRU"))
	case ops["LSTM"]+ops["GRU"] > 0:
		return guess("audio", Low, m.opCount("LSTM", "GRU"), "no token or image input")
	case ops["Scan"]+ops["Loop"] > 0:
		return guess("state-space", Medium, m.opCount("Scan", "Loop"), "no state input and output of the same name")
	}
	var seen []string
	for _, in := range m.s.Inputs {
		seen = append(seen, describe(in))
	}
	return Guess{Confidence: Low, Reasons: append([]string{"no rule matched"}, seen...)}
}

// text tells the three kinds of text model apart.
func (m *modelSignals) text() Guess {
	g := guess("text", High, m.tokenReason())
	switch {
	case len(m.decoderIDs) > 0:
		g.Architecture = "encoder-decoder"
		g.Reasons = append(g.Reasons, "decoder input "+m.decoderIDs[0].Name)
	case len(m.past) > 0:
		g.Architecture = "decoder"
		g.Reasons = append(g.Reasons, "cache input "+m.past[0].Name)
	case len(m.lmLogits) > 0:
		g.Architecture = "decoder"
		g.Reasons = append(g.Reasons, "language-model "+describeOutput(m.lmLogits[0]))
	case len(m.hidden) > 0:
		g.Architecture = "encoder"
		g.Reasons = append(g.Reasons, "hidden-state output "+m.hidden[0].Name)
	default:
		g.Architecture, g.Confidence = "encoder", Medium
		g.Reasons = append(g.Reasons, "no decoder input, cache or language-model logits")
	}
	if n := m.s.Ops["Trilu"]; n > 0 && g.Architecture == "encoder" {
		g.Architecture, g.Confidence = "decoder", Medium
		g.Reasons = append(g.Reasons, m.opCount("Trilu")+" (a causal mask)")
	}
	return g
}

// task names what the model does, in the catalog's words.
func (m *modelSignals) task(g Guess) string {
	first := ValueInfo{}
	if len(m.s.Outputs) > 0 {
		first = m.s.Outputs[0]
	}
	switch g.Family {
	case "text":
		return map[string]string{"encoder": "feature-extraction", "decoder": "text-generation", "encoder-decoder": "text2text-generation"}[g.Architecture]
	case "vision":
		for _, o := range m.s.Outputs {
			if hasAny(strings.ToLower(o.Name), "box") {
				return "object-detection"
			}
		}
		if len(first.Dims) == 4 {
			return "image-segmentation"
		}
		return "image-classification"
	case "vision-text":
		if len(m.images) > 0 && len(m.images[0].Dims) == 5 {
			return "zero-shot-video-classification"
		}
		return "zero-shot-image-classification"
	case "audio":
		switch {
		case len(m.audioOut) > 0 && len(m.tokens) > 0:
			return "zero-shot-audio-classification"
		case len(m.lmLogits) > 0:
			return "automatic-speech-recognition"
		}
		return "audio-classification"
	case "multimodal":
		return "image-text-to-text"
	case "diffusion":
		return "text-to-image"
	case "mixture-of-experts", "state-space":
		return "text-generation"
	case "rag":
		return "question-answering"
	}
	return ""
}

// StatePairs pairs recurrent state inputs with the outputs that carry them on:
// float inputs named like a state, each with the output of the same rank whose
// name holds the input's (state → stateN, state → new_state).
func StatePairs(s *Summary) [][2]ValueInfo {
	var pairs [][2]ValueInfo
	for _, in := range s.Inputs {
		name := strings.ToLower(in.Name)
		if !isFloat(in.Type) || !isStateName(name) {
			continue
		}
		for _, out := range s.Outputs {
			o := strings.ToLower(out.Name)
			if o != name && strings.Contains(o, name) && out.Type == in.Type && len(out.Dims) == len(in.Dims) {
				pairs = append(pairs, [2]ValueInfo{in, out})
				break
			}
		}
	}
	return pairs
}

func guess(family, confidence string, reasons ...string) Guess {
	return Guess{Family: family, Confidence: confidence, Reasons: slices.DeleteFunc(reasons, func(r string) bool { return r == "" })}
}

func (m *modelSignals) tokenReason() string {
	if len(m.tokens) == 0 {
		return ""
	}
	return describe(m.tokens[0]) + " (token ids)"
}

// inputOrOutput describes the first of the inputs, else the first of the outputs.
func inputOrOutput(inputs, outputs []ValueInfo) string {
	switch {
	case len(inputs) > 0:
		return describe(inputs[0])
	case len(outputs) > 0:
		return "output " + outputs[0].Name
	}
	return ""
}

func (m *modelSignals) firstInput(lists ...[]ValueInfo) string {
	for _, l := range lists {
		if len(l) > 0 {
			return describe(l[0])
		}
	}
	return ""
}

// opCount says how many nodes of each of these operators the model has: "53 Conv, 2 MatMul".
func (m *modelSignals) opCount(ops ...string) string {
	var parts []string
	for _, op := range ops {
		if n := m.s.Ops[op]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, op))
		}
	}
	return strings.Join(parts, ", ")
}

// describe writes an input as the reasons show it: "4-D float input x [1, 3, 224, 224]".
func describe(v ValueInfo) string {
	return fmt.Sprintf("%d-D %s input %s %s", len(v.Dims), v.Type, v.Name, v.Shape())
}

func describeOutput(v ValueInfo) string {
	return fmt.Sprintf("output %s %s", v.Name, v.Shape())
}

// Shape writes the dims with their symbolic names, "?" for an anonymous one:
// [batch, 3, height, width].
func (v ValueInfo) Shape() string {
	if v.Unranked {
		return "(rank unknown)"
	}
	parts := make([]string, len(v.Dims))
	for i, d := range v.Dims {
		parts[i] = d.String()
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// isImage: a float [N, 3, H, W] or [N, H, W, 3], a video [N, T, 3, H, W], or a
// 4-D input named like pixels.
func isImage(v ValueInfo) bool {
	d := v.Dims
	name := strings.ToLower(v.Name)
	switch len(d) {
	case 4:
		return d[1].Value == 3 || d[3].Value == 3 || hasAny(name, "pixel", "image", "img")
	case 5:
		return d[2].Value == 3 && hasAny(name, "pixel", "video", "image", "frames")
	}
	return false
}

// isTokenIDs: an integer input of ids (input_ids, decoder_input_ids, doc_ids,
// tokens), not a mask, token type or position.
func isTokenIDs(name string) bool {
	if hasAny(name, "mask", "type", "position", "length") {
		return false
	}
	return hasAny(name, "ids", "token") || name == "input" || name == "x"
}

func isFloat(t DataType) bool {
	return t == Float32 || t == Float16 || t == Float64 || t == BFloat16
}

func isInt(t DataType) bool {
	return t == Int64 || t == Int32 || t == Int16 || t == Int8 || t == Uint8 || t == Uint16 || t == Uint32 || t == Uint64
}

func hasAny(s string, parts ...string) bool {
	for _, p := range parts {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}
