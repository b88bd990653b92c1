package main

import (
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
)

// Flag parsing of every verb, in cli/cli's TestNewCmd style: the verb's runF hook
// receives the options the arguments parsed into, and nothing runs.

// parseVerb executes verb under a root with the global flags; the verb's runF
// stores its options.
func parseVerb(g *Globals, verb *cobra.Command, args string) error {
	root := &cobra.Command{Use: "hwtest", SilenceUsage: true, SilenceErrors: true}
	addGlobalFlags(root, g)
	root.AddCommand(verb)
	root.SetArgs(strings.Fields(args))
	root.SetOut(io.Discard)
	root.SetErr(io.Discard)
	return root.Execute()
}

// flagCase is one command line: the options it must parse into, or an error
// containing wantErr.
type flagCase[O any] struct {
	name    string
	args    string
	want    O
	wantErr string
}

// testVerb runs the cases through a verb built by newCmd. The options must carry
// the command's *Globals (TestNewCmdGlobals checks what they hold); the rest is
// compared with the case's.
func testVerb[O any](t *testing.T, cases []flagCase[O], newCmd func(g *Globals, runF func(*O) error) *cobra.Command) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := &Globals{}
			var got *O
			err := parseVerb(g, newCmd(g, func(o *O) error { got = o; return nil }), tc.args)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("%q: error %v, want one containing %q", tc.args, err, tc.wantErr)
				}
				if got != nil {
					t.Errorf("%q: runF ran despite the error", tc.args)
				}
				return
			}
			if err != nil {
				t.Fatalf("%q: %v", tc.args, err)
			}
			if got == nil {
				t.Fatalf("%q: runF was not called", tc.args)
			}
			globals := reflect.ValueOf(got).Elem().FieldByName("Globals")
			if globals.Interface() != g {
				t.Errorf("%q: the options do not carry the globals", tc.args)
			}
			globals.Set(reflect.Zero(globals.Type()))
			if !reflect.DeepEqual(*got, tc.want) {
				t.Errorf("%q:\n got %+v\nwant %+v", tc.args, *got, tc.want)
			}
		})
	}
}

func TestNewCmdRun(t *testing.T) {
	testVerb(t, []flagCase[RunOptions]{
		{name: "defaults", args: "run", want: RunOptions{Timeout: 10 * time.Minute}},
		{name: "filters", args: "run --model a --model b,c --target cpu --timeout 90s --reports /r --no-generate",
			want: RunOptions{ModelIDs: []string{"a", "b", "c"}, TargetIDs: []string{"cpu"}, Timeout: 90 * time.Second, ReportsDir: "/r", NoGenerate: true}},
		{name: "zero timeout", args: "run --timeout 0s", wantErr: "--timeout 0s: want a positive duration"},
		{name: "negative timeout", args: "run --timeout -1m", wantErr: "--timeout -1m0s: want a positive duration"},
		{name: "bad timeout", args: "run --timeout banana", wantErr: `invalid argument "banana"`},
		{name: "argument", args: "run vad", wantErr: `unknown command "vad"`},
		{name: "unknown flag", args: "run --modle a", wantErr: "unknown flag: --modle"},
	}, newRunCmd)
}

func TestNewCmdGenerate(t *testing.T) {
	testVerb(t, []flagCase[GenerateOptions]{
		{name: "defaults", args: "generate", want: GenerateOptions{}},
		{name: "dry run", args: "generate --dry-run", want: GenerateOptions{DryRun: true}},
		{name: "argument", args: "generate x", wantErr: `unknown command "x"`},
		{name: "unknown flag", args: "generate --dryrun", wantErr: "unknown flag: --dryrun"},
	}, newGenerateCmd)
}

func TestNewCmdVerify(t *testing.T) {
	testVerb(t, []flagCase[VerifyOptions]{
		{name: "defaults", args: "verify", want: VerifyOptions{}},
		{name: "quiet", args: "verify -q", want: VerifyOptions{Quiet: true}},
		{name: "bad bool", args: "verify --quiet=maybe", wantErr: `invalid argument "maybe"`},
	}, newVerifyCmd)
}

func TestNewCmdFetch(t *testing.T) {
	testVerb(t, []flagCase[FetchOptions]{
		{name: "defaults", args: "fetch", want: FetchOptions{}},
		{name: "hf", args: "fetch --hf", want: FetchOptions{HF: true}},
		{name: "argument", args: "fetch vad", wantErr: `unknown command "vad"`},
	}, newFetchCmd)
}

func TestNewCmdModels(t *testing.T) {
	testVerb(t, []flagCase[ModelsOptions]{
		{name: "defaults", args: "models", want: ModelsOptions{}},
		{name: "unknown flag", args: "models --json", wantErr: "unknown flag: --json"},
	}, newModelsCmd)
}

func TestNewCmdDetect(t *testing.T) {
	testVerb(t, []flagCase[DetectOptions]{
		{name: "defaults", args: "detect", want: DetectOptions{}},
		{name: "json", args: "detect --json", want: DetectOptions{JSON: true}},
		{name: "argument", args: "detect cpu", wantErr: `unknown command "cpu"`},
	}, newDetectCmd)
}

func TestNewCmdCheck(t *testing.T) {
	testVerb(t, []flagCase[CheckOptions]{
		{name: "catalog id", args: "check silero-vad-v5", want: CheckOptions{Model: "silero-vad-v5"}},
		{name: "providers", args: "check zoo:tiny-bert --provider CUDAExecutionProvider --provider WebGPU --json",
			want: CheckOptions{Model: "zoo:tiny-bert", Providers: []string{"CUDAExecutionProvider", "WebGPU"}, JSON: true}},
		{name: "no model", args: "check", wantErr: "check needs a MODEL (a catalog id, zoo:NAME or .onnx file), or --all"},
		{name: "two models", args: "check a b", wantErr: "accepts at most 1 arg(s), received 2"},
		{name: "all", args: "check --all --json", want: CheckOptions{All: true, JSON: true}},
		{name: "all and a model", args: "check --all vad", wantErr: "MODEL or --all: choose one"},
		{name: "all and providers", args: "check --all --provider coreml", wantErr: "--all sets predictions against the matrix's targets: drop --provider"},
	}, newCheckCmd)
}

func TestNewCmdExplain(t *testing.T) {
	testVerb(t, []flagCase[ExplainOptions]{
		{name: "catalog id", args: "explain silero-vad-v5 webgpu-native", want: ExplainOptions{Model: "silero-vad-v5", Target: "webgpu-native"}},
		{name: "zoo as json", args: "explain zoo:tiny-opt cpu --json", want: ExplainOptions{Model: "zoo:tiny-opt", Target: "cpu", JSON: true}},
		{name: "no target", args: "explain opt-125m", wantErr: "accepts 2 arg(s), received 1"},
	}, newExplainCmd)
}

func TestNewCmdReport(t *testing.T) {
	testVerb(t, []flagCase[ReportOptions]{
		{name: "defaults", args: "report", want: ReportOptions{}},
		{name: "errors as json", args: "report --matrix m.json --errors --json", want: ReportOptions{Matrix: "m.json", Errors: true, JSON: true}},
		{name: "one run", args: "report --run 20261123T100000Z-abcdef --errors", want: ReportOptions{RunID: "20261123T100000Z-abcdef", Errors: true}},
		{name: "run and matrix", args: "report --run x --matrix m.json", wantErr: "--matrix and --run: choose one"},
		{name: "argument", args: "report m.json", wantErr: `unknown command "m.json"`},
		{name: "summary", args: "report --summary", want: ReportOptions{Summary: true}},
		{name: "summary as json", args: "report --summary --json --run r1", want: ReportOptions{Summary: true, JSON: true, RunID: "r1"}},
		{name: "html", args: "report --html", want: ReportOptions{HTML: true}},
		{name: "html to a file", args: "report --html --out r.html --matrix m.json", want: ReportOptions{HTML: true, Out: "r.html", Matrix: "m.json"}},
		{name: "html to stdout", args: "report --html --out -", want: ReportOptions{HTML: true, Out: "-"}},
		{name: "out without html", args: "report --out r.html", wantErr: "--out is where --html writes: add --html"},
		{name: "html and json", args: "report --html --json", wantErr: "--html and --json: choose one"},
		{name: "html and summary", args: "report --html --summary", wantErr: "--summary and --html: choose one"},
		{name: "errors and html", args: "report --errors --html", wantErr: "--errors, --summary and --html: choose one"},
		{name: "errors and summary", args: "report --errors --summary", wantErr: "--errors, --summary and --html: choose one"},
		{name: "ops", args: "report --ops --json --target cpu --target webgpu,wasm", want: ReportOptions{Ops: true, JSON: true, Targets: []string{"cpu", "webgpu", "wasm"}}},
		{name: "ops in the page", args: "report --ops --html", want: ReportOptions{Ops: true, HTML: true}},
		{name: "ops and errors", args: "report --ops --errors", wantErr: "--ops, --errors and --summary: choose one"},
		{name: "ops and summary", args: "report --ops --summary", wantErr: "--ops, --errors and --summary: choose one"},
		{name: "ops of a run", args: "report --ops --run r1", wantErr: "--ops reads each target's latest conformance run from the history: drop --matrix and --run"},
		{name: "ops of a matrix", args: "report --ops --matrix m.json", wantErr: "drop --matrix and --run"},
		{name: "target without ops", args: "report --target cpu", wantErr: "--target picks the scoreboard's targets: add --ops"},
	}, newReportCmd)
}

func TestNewCmdHistory(t *testing.T) {
	testVerb(t, []flagCase[HistoryOptions]{
		{name: "runs", args: "history", want: HistoryOptions{}},
		{name: "cell", args: "history vad --target cpu --json", want: HistoryOptions{Model: "vad", Target: "cpu", JSON: true}},
		{name: "target without model", args: "history --target cpu", wantErr: "--target needs a MODEL"},
		{name: "two models", args: "history a b", wantErr: "accepts at most 1 arg"},
	}, newHistoryCmd)
}

func TestNewCmdDiff(t *testing.T) {
	def := DiffOptions{Alpha: 0.05, MinEffect: 0.05, MinRuns: 3, Window: 10}
	two := def
	two.Old, two.New, two.JSON = "a", "b", true
	strict := def
	strict.Alpha, strict.MinEffect, strict.MinRuns = 0.01, 0.1, 5
	testVerb(t, []flagCase[DiffOptions]{
		{name: "defaults", args: "diff", want: def},
		{name: "two runs", args: "diff a b --json", want: two},
		{name: "stricter", args: "diff --alpha 0.01 --min-effect 0.1 --min-runs 5", want: strict},
		{name: "bad alpha", args: "diff --alpha 5", wantErr: "--alpha 5: want a significance level"},
		{name: "one run a side", args: "diff --min-runs 1", wantErr: "--min-runs 1"},
		{name: "three runs", args: "diff a b c", wantErr: "accepts at most 2 arg"},
	}, newDiffCmd)
}

func TestNewCmdQuery(t *testing.T) {
	testVerb(t, []flagCase[QueryOptions]{
		{name: "table", args: "query SELECT", want: QueryOptions{SQL: "SELECT"}},
		{name: "csv", args: "query --csv SELECT", want: QueryOptions{SQL: "SELECT", CSV: true}},
		{name: "both formats", args: "query --csv --json SELECT", wantErr: "--json and --csv: choose one"},
		{name: "no sql", args: "query", wantErr: "accepts 1 arg"},
	}, newQueryCmd)
}

func TestNewCmdImport(t *testing.T) {
	testVerb(t, []flagCase[ImportOptions]{
		{name: "files", args: "import a.json b.json", want: ImportOptions{Files: []string{"a.json", "b.json"}}},
		{name: "none", args: "import", wantErr: "requires at least 1 arg"},
	}, newImportCmd)
}

func TestNewCmdRecommend(t *testing.T) {
	testVerb(t, []flagCase[RecommendOptions]{
		{name: "model", args: "recommend silero-vad-v5", want: RecommendOptions{Model: "silero-vad-v5"}},
		{name: "budgets", args: "recommend vad --max-p50 0.5 --max-p99 2 --max-memory 1.5GiB --precision fp16 --json",
			want: RecommendOptions{Model: "vad", MaxP50: 0.5, MaxP99: 2, MaxMemory: 3 << 29, Precision: "fp16", JSON: true}},
		{name: "memory in MB", args: "recommend vad --max-memory 800MB", want: RecommendOptions{Model: "vad", MaxMemory: 800e6}},
		{name: "memory in MiB by default", args: "recommend vad --max-memory 256", want: RecommendOptions{Model: "vad", MaxMemory: 256 << 20}},
		{name: "family", args: "recommend --family audio", want: RecommendOptions{Family: "audio"}},
		{name: "neither", args: "recommend", wantErr: "name a MODEL or a --family"},
		{name: "both", args: "recommend vad --family audio", wantErr: "name a MODEL or a --family"},
		{name: "unknown family", args: "recommend --family speech", wantErr: `--family "speech": want one of text`},
		{name: "bad memory", args: "recommend vad --max-memory lots", wantErr: "want a size above 0 such as 512MiB"},
		{name: "negative p50", args: "recommend vad --max-p50 -1", wantErr: "--max-p50 and --max-p99 are milliseconds above 0"},
		{name: "bad precision", args: "recommend vad --precision fp64", wantErr: `--precision "fp64": want one of fp32, fp16, int8`},
		{name: "two models", args: "recommend a b", wantErr: "accepts at most 1 arg"},
	}, newRecommendCmd)
}

func TestNewCmdZoo(t *testing.T) {
	zooList := func(g *Globals, runF func(*ZooListOptions) error) *cobra.Command {
		return newZooCmd(g, runF, nil)
	}
	testVerb(t, []flagCase[ZooListOptions]{
		{name: "list", args: "zoo list", want: ZooListOptions{}},
		{name: "list argument", args: "zoo list x", wantErr: `unknown command "x"`},
	}, zooList)
	zooBuild := func(g *Globals, runF func(*ZooBuildOptions) error) *cobra.Command {
		return newZooCmd(g, nil, runF)
	}
	testVerb(t, []flagCase[ZooBuildOptions]{
		{name: "build all", args: "zoo build", want: ZooBuildOptions{Names: []string{}}},
		{name: "build some", args: "zoo build tiny-bert tiny-clap --dir /d --broken",
			want: ZooBuildOptions{Names: []string{"tiny-bert", "tiny-clap"}, Dir: "/d", Broken: true}},
		{name: "unknown flag", args: "zoo build --perturb", wantErr: "unknown flag: --perturb"},
	}, zooBuild)
}

// The global flags reach every verb's options, under names that say they are files.
func TestNewCmdGlobals(t *testing.T) {
	g := &Globals{}
	var got *RunOptions
	err := parseVerb(g, newRunCmd(g, func(o *RunOptions) error { got = o; return nil }),
		"run --root /repo --models /c/m.yaml --hardware /c/h.yaml --db /d/h.duckdb --model vad")
	if err != nil {
		t.Fatal(err)
	}
	if got.Root != "/repo" || got.ModelsFile != "/c/m.yaml" || got.HardwareFile != "/c/h.yaml" || got.DB != "/d/h.duckdb" || !reflect.DeepEqual(got.ModelIDs, []string{"vad"}) {
		t.Errorf("got %+v %+v", *got.Globals, *got)
	}
}

// The history is --db, else $HWTEST_DB, else ROOT/.hwtest/history.duckdb.
func TestHistoryPath(t *testing.T) {
	root := t.TempDir()
	write(t, root+"/go.mod", "module x\n")
	for _, tc := range []struct{ flag, env, want string }{
		{"/f/h.duckdb", "/e/h.duckdb", "/f/h.duckdb"},
		{"", "/e/h.duckdb", "/e/h.duckdb"},
		{"", "", root + "/.hwtest/history.duckdb"},
	} {
		t.Setenv("HWTEST_DB", tc.env)
		g := &Globals{Root: root, DB: tc.flag}
		if err := g.resolveRoot(); err != nil {
			t.Fatal(err)
		}
		if g.DB != tc.want {
			t.Errorf("--db %q, HWTEST_DB %q: history %q, want %q", tc.flag, tc.env, g.DB, tc.want)
		}
	}
}
