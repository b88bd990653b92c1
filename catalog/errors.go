package catalog

import (
	"fmt"
	"sort"
)

// Error is one problem in a catalog, at the place in the file that causes it.
type Error struct {
	File   string
	Line   int // 0 when the YAML parser gave no line
	Column int // 0 when only the line is known
	Msg    string
}

func (e *Error) Error() string {
	switch {
	case e.Line == 0:
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	case e.Column == 0:
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	default:
		return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Column, e.Msg)
	}
}

// sortErrors orders one file's errors by position; errors at the same place keep
// the order they were found in.
func sortErrors(errs []*Error) {
	sort.SliceStable(errs, func(i, j int) bool {
		if errs[i].Line != errs[j].Line {
			return errs[i].Line < errs[j].Line
		}
		return errs[i].Column < errs[j].Column
	})
}

// didYouMean returns ` (did you mean "x"?)` for the closest of options within an
// edit distance of 2, or "" when none is that close. A candidate that would have to
// be rewritten whole is no suggestion, so "ab" does not suggest "rag".
func didYouMean(got string, options []string) string {
	if got == "" {
		return ""
	}
	best, bestDist := "", 3
	for _, o := range options {
		d := levenshtein(got, o, bestDist)
		if d < bestDist && d < len([]rune(o)) && d < len([]rune(got)) {
			best, bestDist = o, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// levenshtein is the edit distance between a and b over runes, counting a swap of
// two neighbours as one edit ("cdua" is one edit from "cuda", not two), or limit
// when it is at least limit (so long fuzzed strings cost nothing).
func levenshtein(a, b string, limit int) int {
	ra, rb := []rune(a), []rune(b)
	if diff := len(ra) - len(rb); diff >= limit || -diff >= limit {
		return limit
	}
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		rowMin := cur[0]
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
			rowMin = min(rowMin, cur[j])
		}
		if rowMin >= limit {
			return limit
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return min(prev[len(rb)], limit)
}

// quoteList renders options as `"a", "b" or "c"` for messages.
func quoteList(options []string) string {
	s := ""
	for i, o := range options {
		switch {
		case i == 0:
		case i == len(options)-1:
			s += " or "
		default:
			s += ", "
		}
		s += fmt.Sprintf("%q", o)
	}
	return s
}

// DidYouMean is the " (did you mean "x"?)" hint for a word close to one of the
// options, "" when none is; commands use it for ids given on the command line.
func DidYouMean(got string, options []string) string { return didYouMean(got, options) }
