package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"

	"github.com/hwtest/hwtest/catalog"
	"github.com/hwtest/hwtest/onnx"
	"github.com/hwtest/hwtest/sources"
	"github.com/hwtest/hwtest/templates"
)

// AddOptions is what `hwtest add` acts on.
type AddOptions struct {
	*Globals
	File         string
	ID           string
	Family       string
	Architecture string
	Task         string
}

func newAddCmd(g *Globals, runF func(*AddOptions) error) *cobra.Command {
	opts := &AddOptions{Globals: g}
	cmd := &cobra.Command{
		Use:   "add FILE.onnx",
		Short: "Add a model file to the models catalog, with every input bound and its family guessed",
		Long: "Writes a catalog entry for an ONNX file at the end of the models catalog's list\n" +
			"(--models, default ROOT/models.yaml), leaving the rest of the file, comments\n" +
			"included, as it is. The entry has the file as source (file:PATH, relative to the\n" +
			"catalog's folder), its sha256, dims for every input with each symbolic dim bound\n" +
			"(batch 1, images 224×224, sequences 8, one second of 16 kHz audio or a 512-sample\n" +
			"chunk for a model that carries state), values for token ids, masks and sample\n" +
			"rates, the outputs the family's checks read, and the size tier. Without --family\n" +
			"the family is guessed (see `hwtest inspect`) and a comment says so: check it.\n" +
			"The catalog is checked before it is written, and written whole or not at all.\n\n" +
			"  hwtest add models/my-cnn.onnx\n" +
			"  hwtest add my-encoder.onnx --id my-encoder --family text --architecture encoder\n" +
			"  hwtest --models my.yaml add my-cnn.onnx\n\n" +
			"Then `hwtest generate` writes its suite and `hwtest run --model ID --target cpu`\n" +
			"runs it.",
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			opts.File = args[0]
			if runF != nil {
				return runF(opts)
			}
			return addRun(opts)
		},
	}
	cmd.Flags().StringVar(&opts.ID, "id", "", "model id (default: from the file name)")
	cmd.Flags().StringVar(&opts.Family, "family", "", "pipeline family (default: guessed from the model): "+strings.Join(catalog.Families, ", "))
	cmd.Flags().StringVar(&opts.Architecture, "architecture", "", "text models: "+strings.Join(catalog.TextArchitectures, ", ")+" (default: guessed)")
	cmd.Flags().StringVar(&opts.Task, "task", "", "task, e.g. image-classification (default: guessed from the family and outputs)")
	return cmd
}

func addRun(opts *AddOptions) error {
	if err := opts.resolveRoot(); err != nil {
		return err
	}
	catalogName := relToWD(opts.ModelsFile)
	old, err := os.ReadFile(opts.ModelsFile)
	// A catalog that does not exist yet is started: the first model of one's own
	// should not need a hand-written file.
	fresh := errors.Is(err, fs.ErrNotExist)
	if err != nil && !fresh {
		return fmt.Errorf("read the models catalog: %w", err)
	}
	hardware, err := os.ReadFile(opts.HardwareFile)
	if err != nil {
		return fmt.Errorf("read the hardware catalog: %w", err)
	}
	hardwareName := relToWD(opts.HardwareFile)
	before := &catalog.Catalogs{}
	if !fresh {
		before, err = catalog.Parse(catalogName, old, hardwareName, hardware)
		if err != nil {
			return fmt.Errorf("the catalog is invalid before adding anything; fix it first:\n%w", err)
		}
	}
	model, err := os.ReadFile(opts.File)
	if err != nil {
		return err
	}
	s, err := onnx.Inspect(model)
	if err != nil {
		return fmt.Errorf("%s: %w; nothing was added to %s", opts.File, err, catalogName)
	}
	source, err := fileSource(opts.ModelsFile, opts.File)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(model)
	e := entry{Source: source, SHA256: hex.EncodeToString(sum[:]), Tier: catalog.TierFor(s.Params)}
	if err := e.identify(opts, before, catalogName); err != nil {
		return err
	}
	if err := e.classify(opts, s); err != nil {
		return err
	}
	e.Inputs = onnx.PlanInputs(s, e.Family)
	e.Outputs = onnx.PlanOutputs(s, e.Family)

	var updated []byte
	if fresh {
		updated = newCatalog(e.yaml())
	} else if updated, err = appendEntry(old, e.yaml()); err != nil {
		return fmt.Errorf("%s: %w", catalogName, err)
	}
	after, err := catalog.Parse(catalogName, updated, hardwareName, hardware)
	if err != nil {
		return fmt.Errorf("the entry for %s does not make a valid catalog (nothing was written):\n%w", opts.File, err)
	}
	added, _ := after.Model(e.ID)
	if f, ok := templates.FamilyFor(added.Family, added.Architecture); ok {
		if err := f.Check(added); err != nil {
			return fmt.Errorf("%s: %w; the model's outputs: %s. Nothing was written: pass --family if the guess is wrong", opts.File, err, outputNames(s))
		}
	}
	if err := sources.WriteAtomic(opts.ModelsFile, updated); err != nil {
		return err
	}
	e.report(opts, catalogName, added)
	return nil
}

// entry is the catalog entry `hwtest add` writes.
type entry struct {
	ID, Family, Architecture, Task string
	Source, SHA256, Tier           string
	Guess                          *onnx.Guess // set when the family was guessed
	TaskGuessed                    bool
	Inputs                         []onnx.InputPlan
	Outputs                        onnx.OutputPlan
}

// notIDChars are what a default id replaces with '-': the catalog's ids are
// lowercase words joined by '-' (and its generated file names turn '-' into '_',
// so "a_b" would collide with "a-b").
var notIDChars = regexp.MustCompile(`[^a-z0-9.]+`)

// identify picks the id: --id as given, else the file name made a valid id, with a
// number added when another model has it. The same file twice is refused.
func (e *entry) identify(opts *AddOptions, c *catalog.Catalogs, catalogName string) error {
	for _, m := range c.Models {
		if m.Source == e.Source {
			return fmt.Errorf("%s:%d: model %q already has source %s; nothing was added", catalogName, m.Line, m.ID, e.Source)
		}
	}
	if opts.ID != "" {
		if m, ok := c.Model(opts.ID); ok {
			return fmt.Errorf("%s:%d: model id %q is taken; pass another --id", catalogName, m.Line, opts.ID)
		}
		e.ID = opts.ID
		return nil
	}
	base := strings.TrimSuffix(filepath.Base(opts.File), filepath.Ext(opts.File))
	id := strings.Trim(notIDChars.ReplaceAllString(strings.ToLower(base), "-"), "-._")
	if id == "" {
		id = "model"
	}
	e.ID = id
	for n := 2; ; n++ {
		if _, taken := c.Model(e.ID); !taken {
			return nil
		}
		e.ID = fmt.Sprintf("%s-%d", id, n)
	}
}

// classify sets family, architecture and task from the flags, else the guess.
func (e *entry) classify(opts *AddOptions, s *onnx.Summary) error {
	g := onnx.GuessFamily(s)
	e.Family, e.Architecture, e.Task = opts.Family, opts.Architecture, opts.Task
	if e.Family == "" {
		if g.Family == "" {
			return fmt.Errorf("%s: no family guessed (%s): pass --family (%s)", opts.File, strings.Join(g.Reasons, "; "), strings.Join(catalog.Families, ", "))
		}
		e.Family, e.Guess = g.Family, &g
	}
	if !slices.Contains(catalog.Families, e.Family) {
		return fmt.Errorf("--family %q: want one of %s", e.Family, strings.Join(catalog.Families, ", "))
	}
	if e.Family == "text" && e.Architecture == "" {
		e.Architecture = onnx.GuessFamily(s).Architecture
		if e.Architecture == "" {
			return fmt.Errorf("%s: a text model needs --architecture (%s)", opts.File, strings.Join(catalog.TextArchitectures, ", "))
		}
	}
	switch {
	case e.Family != "text" && opts.Architecture != "":
		return fmt.Errorf("--architecture is for text models; this one is %s", e.Family)
	case e.Family == "text" && !slices.Contains(catalog.TextArchitectures, e.Architecture):
		return fmt.Errorf("--architecture %q: want one of %s", e.Architecture, strings.Join(catalog.TextArchitectures, ", "))
	case e.Family != "text":
		e.Architecture = "" // the guess's, for another family than the one chosen
	}
	if e.Task == "" {
		e.Task, e.TaskGuessed = onnx.GuessTask(s, e.Family, e.Architecture), true
	}
	return nil
}

// yaml writes the entry as a block of the models list, at the indent given later.
func (e *entry) yaml() []string {
	var lines []string
	add := func(format string, args ...any) { lines = append(lines, fmt.Sprintf(format, args...)) }
	add("- id: %s", yamlString(e.ID))
	if e.Guess != nil {
		add("  # family: guessed (%s) — check it", strings.Join(e.Guess.Reasons, "; "))
	}
	add("  family: %s", e.Family)
	if e.Architecture != "" {
		add("  architecture: %s", e.Architecture)
	}
	if e.TaskGuessed {
		add("  # task: guessed from the family and outputs — check it")
	}
	add("  task: %s", yamlString(e.Task))
	add("  source: %s", yamlString(e.Source))
	add("  sha256: %s", e.SHA256)
	if len(e.Inputs) > 0 {
		if bound := symbolText(e.Inputs); bound != "" {
			add("  # open dims bound: %s", bound)
		}
		add("  inputs:")
		for _, in := range e.Inputs {
			var parts []string
			if len(in.Dims) > 0 {
				parts = append(parts, "dims: "+numbers(in.Dims))
			}
			if in.Value != nil {
				parts = append(parts, "value: "+numbers(in.Value))
			} else {
				parts = append(parts, "range: "+numbers(in.Range))
			}
			line := fmt.Sprintf("    %s: {%s}", yamlString(in.Name), strings.Join(parts, ", "))
			if in.Why != "" {
				line += "  # " + in.Why
			}
			lines = append(lines, line)
		}
	}
	o := e.Outputs
	for _, note := range o.Notes {
		add("  # %s", note)
	}
	var outs []string
	for _, kv := range [][2]string{{"primary", o.Primary}, {"distribution", o.Distribution}, {"probabilities", o.Probabilities},
		{"ranking", o.Ranking}, {"router", o.Router}, {"state", o.State}, {"state_input", o.StateInput}} {
		switch {
		case kv[1] == "":
		case kv[0] == "distribution" && o.DistributionAxis != 0:
			outs = append(outs, fmt.Sprintf("distribution: {output: %s, axis: %d}", yamlString(kv[1]), o.DistributionAxis))
		default:
			outs = append(outs, kv[0]+": "+yamlString(kv[1]))
		}
		if kv[0] == "router" && kv[1] != "" {
			outs = append(outs, fmt.Sprintf("router_top_k: %d", o.RouterTopK))
		}
	}
	if len(outs) > 0 {
		add("  outputs: {%s}", strings.Join(outs, ", "))
	}
	add("  tier: %s", e.Tier)
	return lines
}

// symbolText says which size each symbolic dim got: "batch = 1, seq = 8", and
// how many anonymous ones were bound.
func symbolText(plans []onnx.InputPlan) string {
	var parts []string
	seen := map[string]bool{}
	anonymous := 0
	for _, p := range plans {
		for i, sym := range p.Symbols {
			switch {
			case sym == "?":
				anonymous++
			case sym != "" && !seen[sym]:
				seen[sym] = true
				parts = append(parts, fmt.Sprintf("%s = %d", sym, p.Dims[i]))
			}
		}
	}
	if anonymous > 0 {
		parts = append(parts, fmt.Sprintf("%d anonymous (?) dims", anonymous))
	}
	return strings.Join(parts, ", ")
}

func numbers[T int64 | float64](xs []T) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.FormatFloat(float64(x), 'g', -1, 64)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

var plainYAML = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_./@:+-]*$`)

// yamlString writes s as a YAML scalar that reads back as the same string: plain
// when nothing in it means something to YAML, else double-quoted (JSON's quoting
// is valid YAML).
func yamlString(s string) string {
	switch strings.ToLower(s) {
	case "true", "false", "yes", "no", "on", "off", "null", "y", "n", "~":
	default:
		if plainYAML.MatchString(s) && !strings.HasSuffix(s, ":") {
			if _, err := strconv.ParseFloat(s, 64); err != nil {
				return s
			}
		}
	}
	b, _ := json.Marshal(s)
	return string(b)
}

// appendEntry adds lines as the last item of the top-level models: list, indented
// like its items, and returns the whole new text. The rest of the text is kept byte
// for byte: re-marshalling the YAML would lose its comments and layout.
func appendEntry(text []byte, lines []string) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(text, &doc); err != nil {
		return nil, err
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, errors.New("no top-level mapping with a models: list")
	}
	top := doc.Content[0]
	var list *yaml.Node
	next := 0 // the line of the top-level key after models:, 0 when models: is last
	for i := 0; i+1 < len(top.Content); i += 2 {
		if list != nil {
			next = top.Content[i].Line
			break
		}
		if top.Content[i].Value == "models" {
			list = top.Content[i+1]
		}
	}
	switch {
	case list == nil || list.Kind != yaml.SequenceNode:
		return nil, errors.New("no models: list")
	case list.Style&yaml.FlowStyle != 0 || len(list.Content) == 0:
		return nil, fmt.Errorf("line %d: models: is written as a flow list [...]; hwtest add appends to a block list (\"- id: ...\" lines)", list.Line)
	}
	indent := strings.Repeat(" ", max(list.Column-1, 0))
	var block bytes.Buffer
	block.WriteString("\n")
	for _, l := range lines {
		block.WriteString(indent + l + "\n")
	}
	src := splitLines(text)
	at := len(src)
	if next > 0 {
		// Before the next key, and before the comments and blank lines that lead to it.
		at = next - 1
		for at > 0 && (strings.TrimSpace(src[at-1]) == "" || strings.HasPrefix(strings.TrimSpace(src[at-1]), "#")) {
			at--
		}
	}
	var out bytes.Buffer
	for _, l := range src[:at] {
		out.WriteString(l)
	}
	if out.Len() > 0 && !bytes.HasSuffix(out.Bytes(), []byte("\n")) {
		out.WriteString("\n")
	}
	out.Write(block.Bytes())
	if at < len(src) {
		out.WriteString("\n")
	}
	for _, l := range src[at:] {
		out.WriteString(l)
	}
	return out.Bytes(), nil
}

// splitLines splits text into lines, each with its line ending.
func splitLines(text []byte) []string {
	var out []string
	for len(text) > 0 {
		i := bytes.IndexByte(text, '\n')
		if i < 0 {
			out = append(out, string(text))
			break
		}
		out = append(out, string(text[:i+1]))
		text = text[i+1:]
	}
	return out
}

// fileSource is the file: source naming path from the catalog's folder, which file:
// paths are relative to. It may climb out of that folder with "..": the catalog
// allows it, and a model kept beside a catalog elsewhere is common.
func fileSource(catalogPath, path string) (string, error) {
	dir, err := filepath.Abs(filepath.Dir(catalogPath))
	if err != nil {
		return "", err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	rel, err := filepath.Rel(dir, abs)
	if err != nil {
		return "", fmt.Errorf("%s cannot be named relative to the catalog's folder %s: %w", path, dir, err)
	}
	return "file:" + filepath.ToSlash(rel), nil
}

// newCatalog is a models catalog of one entry, for a catalog add starts.
func newCatalog(entry []string) []byte {
	var b strings.Builder
	b.WriteString("# Models hwtest tests, started by hwtest add. The fields are described at the\n")
	b.WriteString("# top of the hwtest repository's models.yaml; file: paths are relative to this\n")
	b.WriteString("# file's folder. Generate and run its suites with\n")
	b.WriteString("#   hwtest --models THIS_FILE generate   and   hwtest --models THIS_FILE run\n\n")
	b.WriteString("models:\n")
	for _, l := range entry {
		b.WriteString("  " + l + "\n")
	}
	return []byte(b.String())
}

func outputNames(s *onnx.Summary) string {
	names := make([]string, len(s.Outputs))
	for i, o := range s.Outputs {
		names[i] = o.Name
	}
	return strings.Join(names, ", ")
}

// report prints what was added and how to run it.
func (e *entry) report(opts *AddOptions, catalogName string, m catalog.Model) {
	w := opts.Stdout
	family := e.Family
	if e.Architecture != "" {
		family += " (" + e.Architecture + ")"
	}
	fmt.Fprintf(w, "added %s to %s:%d: %s, task %s, %d inputs, tier %s\n", e.ID, catalogName, m.Line, family, e.Task, len(e.Inputs), e.Tier)
	if e.Guess != nil {
		fmt.Fprintf(w, "the family is a guess (%s confidence: %s): check it, and the task, in the catalog\n", e.Guess.Confidence, strings.Join(e.Guess.Reasons, "; "))
	}
	models := ""
	if filepath.Clean(opts.ModelsFile) != filepath.Join(opts.Root, "models.yaml") {
		models = " --models " + catalogName
	}
	fmt.Fprintf(w, "next:\n")
	fmt.Fprintf(w, "  hwtest%s generate                        # writes its suite\n", models)
	fmt.Fprintf(w, "  hwtest%s run --model %s --target cpu   # runs it, into the matrix\n", models, e.ID)
	if models == "" {
		fmt.Fprintf(w, "  ginkgo -v --label-filter='model:%s && hw:cpu' ./generated/%s   # by hand\n", e.ID, e.Family)
	}
}
