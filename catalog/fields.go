package catalog

import (
	"reflect"
	"strings"
)

// The keys each kind of entry may have come from the yaml tags of its struct: one
// list per entry, so the strict decoder's "unknown field" check and the types agree.
// TestYAMLRoundTrip ties the decoder to them: every field of a fully populated
// catalog, written by yaml.v3 from these tags, decodes back to the same value.
var (
	modelFields     = yamlKeys(Model{})
	inputFields     = yamlKeys(Input{})
	outputFields    = yamlKeys(OutputSpec{})
	toleranceFields = yamlKeys(Tolerance{})
	targetFields    = yamlKeys(Target{})
)

// yamlKeys lists a struct's YAML keys in field order, skipping `yaml:"-"`.
func yamlKeys(v any) []string {
	t := reflect.TypeOf(v)
	var keys []string
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
		if name != "" && name != "-" {
			keys = append(keys, name)
		}
	}
	return keys
}
