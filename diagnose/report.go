package diagnose

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Group is the findings of one severity and kind that share a recommendation.
type Group struct {
	Severity       Severity  `json:"severity"`
	Kind           Kind      `json:"kind"`
	Summary        string    `json:"summary"`
	Recommendation string    `json:"recommendation"`
	Targets        []string  `json:"targets"`
	Models         []string  `json:"models,omitempty"`
	Count          int       `json:"count"`
	Findings       []Finding `json:"findings"`
}

// Summary counts findings per severity.
type Summary struct {
	Total      int              `json:"total"`
	BySeverity map[Severity]int `json:"by_severity"`
	ByKind     map[Kind]int     `json:"by_kind"`
}

type jsonReport struct {
	Summary Summary `json:"summary"`
	Groups  []Group `json:"groups"`
}

// Groups orders findings by severity (critical first), then kind, then target, and
// merges those with the same summary and recommendation.
func Groups(findings []Finding) []Group {
	type key struct {
		sev          Severity
		kind         Kind
		summary, rec string
	}
	idx := map[key]int{}
	var groups []Group
	for _, f := range findings {
		k := key{f.Severity, f.Kind, f.Summary, f.Recommendation}
		i, ok := idx[k]
		if !ok {
			i = len(groups)
			idx[k] = i
			groups = append(groups, Group{Severity: f.Severity, Kind: f.Kind, Summary: f.Summary, Recommendation: f.Recommendation})
		}
		g := &groups[i]
		g.Count++
		g.Findings = append(g.Findings, f)
		if f.Target != "" && !contains(g.Targets, f.Target) {
			g.Targets = append(g.Targets, f.Target)
		}
		if f.Model != "" && !contains(g.Models, f.Model) {
			g.Models = append(g.Models, f.Model)
		}
	}
	for i := range groups {
		sort.Strings(groups[i].Targets)
		sort.Strings(groups[i].Models)
	}
	sort.SliceStable(groups, func(i, j int) bool {
		a, b := groups[i], groups[j]
		if a.Severity.rank() != b.Severity.rank() {
			return a.Severity.rank() < b.Severity.rank()
		}
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		return strings.Join(a.Targets, ",") < strings.Join(b.Targets, ",")
	})
	return groups
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// Report renders findings as Markdown (for humans and PR comments) and JSON (for
// tools), grouped by severity then kind. Each group shows its recommendation once
// and every distinct exact reason under it.
func Report(findings []Finding) (markdown []byte, jsonOut []byte) {
	groups := Groups(findings)
	sum := Summary{Total: len(findings), BySeverity: map[Severity]int{}, ByKind: map[Kind]int{}}
	for _, f := range findings {
		sum.BySeverity[f.Severity]++
		sum.ByKind[f.Kind]++
	}

	var md bytes.Buffer
	md.WriteString("# hwtest findings\n\n")
	if len(findings) == 0 {
		md.WriteString("No findings: every cell passed or was expected.\n")
	} else {
		var parts []string
		for _, s := range Severities {
			if n := sum.BySeverity[s]; n > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", n, s))
			}
		}
		fmt.Fprintf(&md, "%s: %s.\n", plural(len(findings), "finding"), strings.Join(parts, ", "))
	}
	current := Severity("")
	for _, g := range groups {
		if g.Severity != current {
			current = g.Severity
			fmt.Fprintf(&md, "\n## %s\n", strings.ToUpper(string(current[:1]))+string(current[1:]))
		}
		fmt.Fprintf(&md, "\n### %s: %s\n\n", g.Kind, g.Summary)
		if len(g.Targets) > 0 {
			fmt.Fprintf(&md, "- targets: %s\n", strings.Join(g.Targets, ", "))
		}
		if len(g.Models) > 0 {
			fmt.Fprintf(&md, "- models: %s\n", strings.Join(g.Models, ", "))
		}
		fmt.Fprintf(&md, "- occurrences: %d\n", g.Count)
		fmt.Fprintf(&md, "- **fix:** %s\n", g.Recommendation)
		seen := map[string]bool{}
		for _, f := range g.Findings {
			if seen[f.Reason] {
				continue
			}
			seen[f.Reason] = true
			who := f.Target
			if f.Model != "" {
				who = f.Model + " on " + f.Target
			}
			if who != "" {
				who += ": "
			}
			fmt.Fprintf(&md, "- %s`%s`\n", who, oneLine(f.Reason))
		}
	}
	out, err := json.MarshalIndent(jsonReport{Summary: sum, Groups: groups}, "", "  ")
	if err != nil {
		panic(err) // plain data: cannot fail
	}
	return md.Bytes(), append(out, '\n')
}

// oneLine keeps a reason on one Markdown line, backticks escaped.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return strings.ReplaceAll(s, "`", "'")
}

// plural writes "1 finding", "2 findings".
func plural(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
