package result

import "strings"

// Label prefixes: every generated spec carries model:<id>, family:<family>,
// hw:<target> and tag:<tag> labels. `hwtest run` filters on them and the matrix
// finds a spec's cell by them, so they are spelled here once.
const (
	ModelPrefix  = "model:"
	FamilyPrefix = "family:"
	TargetPrefix = "hw:"
	TagPrefix    = "tag:"
)

// ModelLabel is the label selecting one model's specs: "model:silero-vad-v5".
func ModelLabel(id string) string { return ModelPrefix + id }

// FamilyLabel is the label of a pipeline family's specs: "family:audio".
func FamilyLabel(family string) string { return FamilyPrefix + family }

// TargetLabel is the label of one target's specs: "hw:cuda".
func TargetLabel(id string) string { return TargetPrefix + id }

// TagLabel is the label of a catalog tag: "tag:smoke".
func TagLabel(tag string) string { return TagPrefix + tag }

// LabelValue finds the first label with the prefix and returns what follows it.
func LabelValue(labels []string, prefix string) (string, bool) {
	for _, l := range labels {
		if v, ok := strings.CutPrefix(l, prefix); ok {
			return v, true
		}
	}
	return "", false
}
