package catalog

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
)

// labelOperators are the characters Ginkgo's label filter language gives meaning
// to: & | ! for and, or, not; , and () for lists and grouping; / for regular
// expressions; : for key: value labels; {} [] ~ " in set expressions and quoting.
// A label holding one can be declared but never selected by --label-filter.
const labelOperators = `&|!,()/:"{}[]~`

// CheckLabel says whether s can be the value of a label the generated suites carry
// (model:ID, family:NAME, hw:ID, tag:NAME) and `hwtest run` selects them by. The
// catalog checks every such value with it, and the generator checks again with
// the same function, so a value the catalog accepts always generates.
func CheckLabel(s string) error {
	if s == "" {
		return errors.New("an empty string cannot be a Ginkgo label value")
	}
	for _, r := range s {
		switch {
		case strings.ContainsRune(labelOperators, r):
			return fmt.Errorf("%q cannot be a Ginkgo label value: %q is an operator of label filters (--label-filter); use letters, digits, '-', '.' and '_'", s, r)
		case unicode.IsSpace(r) || unicode.IsControl(r):
			return fmt.Errorf("%q cannot be a Ginkgo label value: it holds a space or control character (%U), which Ginkgo trims or a label filter splits on; use letters, digits, '-', '.' and '_'", s, r)
		}
	}
	return nil
}
