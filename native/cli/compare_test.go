package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/caskg/caskg/native/eval"
	"github.com/caskg/caskg/native/internal/testlib"
	"github.com/caskg/caskg/native/lab/harness"
)

func TestCompareCommand(t *testing.T) {
	base := compareArgs{libs: []string{"graphs/sample"}, tasks: "t.jsonl", oracleSeed: 1, budget: -1, ks: "5,10"}
	tests := []struct {
		name string
		edit func(*compareArgs)
		want string
	}{
		{"defaults left out", func(*compareArgs) {}, "bin/caskg eval --compare graphs/sample --tasks t.jsonl"},
		{"every flag", func(a *compareArgs) {
			a.libs = append(a.libs, "more/tools.json")
			a.gold, a.traces, a.oracleErrors, a.oracleSeed, a.role = "g.jsonl", "r.jsonl", "0.1,0.3", 9, "check"
			a.budget, a.ks, a.title, a.label, a.json, a.out = 50, "1,3", "T", "L", true, "x.json"
		}, "bin/caskg eval --compare graphs/sample more/tools.json --tasks t.jsonl --gold-edges g.jsonl --traces r.jsonl " +
			"--oracle-errors 0.1,0.3 --oracle-seed 9 --role check --budget 50 --ks 1,3 --title T"},
		{"oracle seed only with rates", func(a *compareArgs) { a.oracleSeed = 9 }, "bin/caskg eval --compare graphs/sample --tasks t.jsonl"},
		{"words quoted for the shell", func(a *compareArgs) { a.libs, a.title = []string{"my lib"}, "it's (all)" },
			`bin/caskg eval --compare 'my lib' --tasks t.jsonl --title 'it'\''s (all)'`},
		{"empty word quoted", func(a *compareArgs) { a.tasks = "" }, "bin/caskg eval --compare graphs/sample --tasks ''"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := base
			a.libs = append([]string(nil), base.libs...)
			tc.edit(&a)
			if got := a.command(); got != tc.want {
				t.Errorf("command() = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestCompareAndReport runs eval --compare on the sample library with gold edges, traces and
// the oracle, as JSON to a file and as Markdown to standard output, and eval --report on the
// result: the flags reach the result, the command that reproduces it is recorded, and what
// the command prints is the harness's rendering.
func TestCompareAndReport(t *testing.T) {
	dir := t.TempDir()
	gold := testlib.WriteFile(t, dir, "gold.jsonl", sampleGoldEdges)
	traces := testlib.WriteFile(t, dir, "traces.jsonl", `{"id":"r1","skills":["go-to-location","find-object","pick-up-object","heat-object-in-microwave"]}`+"\n"+
		`{"id":"r2","skills":["find-object","pick-up-object","put-two-objects-in-receptacle"]}`+"\n")
	res := filepath.Join(dir, "sample.json")
	flags := []string{"eval", "--compare", sampleLib, "--tasks", sampleTasks, "--gold-edges", gold, "--traces", traces,
		"--oracle-errors", "0,0.3", "--role", "check", "--title", "Sample tasks", "--label", "sample"}
	if r := mustRun(t, append(flags, "--json", "-o", res)...); r.stdout != "" {
		t.Errorf("eval --compare -o wrote to stdout: %q", r.stdout)
	}
	got, err := harness.ReadResult(res)
	if err != nil {
		t.Fatal(err)
	}
	wantCmd := "bin/caskg eval --compare " + sampleLib + " --tasks " + sampleTasks + " --gold-edges " + gold + " --traces " + traces +
		" --oracle-errors 0,0.3 --role check --title 'Sample tasks'"
	if got.Command != wantCmd {
		t.Errorf("command %q, want %q", got.Command, wantCmd)
	}
	if got.Title != "Sample tasks" || got.Label != "sample" || got.Role != harness.RoleCheck || got.NumTasks != 40 ||
		got.Skills != sampleCount || got.Tasks != sampleTasks || got.GoldEdges != gold || got.Traces != traces ||
		!slices.Equal(got.OracleErrors, []float64{0, 0.3}) || got.OracleSeed != 1 || !slices.Equal(got.Ks, []int{5, 10}) {
		t.Errorf("result does not reflect the flags: %+v", got)
	}
	var names []string
	for _, row := range got.Rows {
		names = append(names, row.Name)
	}
	if want := "no graph,default,default + traces,publish-all,oracle, error 0,oracle, error 0.3,lexical seeds,vector seeds,whole library"; strings.Join(names, ",") != want {
		t.Errorf("rows %q, want %q", names, want)
	}
	if raw, _ := os.ReadFile(res); !bytes.HasPrefix(raw, []byte("{\n  \"title\": \"Sample tasks\",\n")) || !bytes.HasSuffix(raw, []byte("}\n")) {
		t.Errorf("eval --compare --json is not indented JSON ending in a newline:\n%.200s", raw)
	}

	// Markdown on standard output: the tables, then the build times.
	md := mustRun(t, flags...).stdout
	if !strings.HasPrefix(md, "### Sample tasks\n") || !strings.Contains(md, "```sh\n"+wantCmd+"\n```") ||
		!strings.Contains(md, "| oracle, error 0.3 | all |") || !strings.Contains(md, "\nBuild times (wall clock") {
		t.Errorf("eval --compare Markdown:\n%s", md)
	}

	const before, after = "# title\n\nhand-written\n\n", "\n## next\n<!-- bench:begin -->\nB\n<!-- bench:end -->\n"
	readme := testlib.WriteFile(t, dir, "README.md", before+harness.ReadmeBegin+"\nold\n"+harness.ReadmeEnd+after)
	evalMD := filepath.Join(dir, "EVALUATION.md")
	if r := mustRun(t, "eval", "--report", res, "-o", evalMD, "--readme", readme); r.stdout != "" {
		t.Errorf("eval --report -o wrote to stdout: %q", r.stdout)
	}
	var want, sum bytes.Buffer
	harness.WriteEvaluation(&want, []*harness.Result{got})
	harness.WriteReadmeResults(&sum, []*harness.Result{got})
	if doc, _ := os.ReadFile(evalMD); string(doc) != want.String() {
		t.Errorf("EVALUATION.md is not the harness's:\n%s", doc)
	}
	if rm, _ := os.ReadFile(readme); string(rm) != before+harness.ReadmeBegin+"\n"+sum.String()+harness.ReadmeEnd+after {
		t.Errorf("README after eval --report:\n%s", rm)
	}
	// Standard output without -o.
	if out := mustRun(t, "eval", "--report", res).stdout; out != want.String() {
		t.Error("eval --report without -o printed something else than it writes")
	}
}

// TestCompareAndOracleErrors checks the bad command lines and files of eval --compare and
// --report and of the oracle prober: the exit status, the message, no artifact written and no
// README changed.
func TestCompareAndOracleErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string { return testlib.WriteFile(t, dir, name, body) }
	good, _ := json.Marshal(&harness.Result{Title: "t", Command: "c", Ks: []int{10},
		Rows: []harness.Row{{Name: harness.RowDefault, Kind: harness.KindVariant, Summary: eval.Summary{Recall: map[int]float64{10: 0.5}}}}})
	goodPath := write("good.json", string(good))
	noMarkers := write("README.md", "# no markers\n")
	gold := write("gold.jsonl", sampleGoldEdges)
	badLine := write("bad.jsonl", sampleGoldEdges+"{\"source\": \"find-object\"\n")
	other := write("other.jsonl", `{"source":"SearchHotel","target":"ReserveHotel"}`+"\n")
	out := filepath.Join(dir, "x.skg")
	build := func(flags ...string) []string {
		return append([]string{"build", sampleLib, "-o", out, "--quiet"}, flags...)
	}
	tests := []struct {
		name string
		args []string
		code int
		err  string
	}{
		{"no files", []string{"eval", "--report"}, 2, "caskg eval: -report needs at least one RESULT.json"},
		{"not a result", []string{"eval", "--report", write("bad.json", "{")}, 1, "caskg eval: " + dir + "/bad.json: not a result of eval --compare --json"},
		{"missing file", []string{"eval", "--report", filepath.Join(dir, "nope.json")}, 1, "nope.json"},
		{"README without markers", []string{"eval", "--report", goodPath, "-o", filepath.Join(dir, "E.md"), "--readme", noMarkers},
			1, "caskg eval: " + noMarkers + ": mdspan: marker <!-- eval:begin --> appears 0 times, want once"},
		{"-o without -compare", []string{"eval", "x.skg", "--tasks", sampleTasks, "-o", "y"}, 2, "need -compare or -report"},
		{"compare without libraries", []string{"eval", "--compare", "--tasks", sampleTasks}, 2, "-compare needs at least one LIBRARY"},
		{"oracle without gold edges", []string{"eval", "--compare", sampleLib, "--tasks", sampleTasks, "--oracle-errors", "0.1"}, 2,
			"flag -oracle-errors needs -gold-edges"},
		{"oracle rate above 1", []string{"eval", "--compare", sampleLib, "--tasks", sampleTasks, "--gold-edges", goodPath, "--oracle-errors", "0.1,2"}, 2,
			`flag -oracle-errors: "2" is not an error rate in [0, 1]`},
		{"oracle rate twice", []string{"eval", "--compare", sampleLib, "--tasks", sampleTasks, "--gold-edges", goodPath, "--oracle-errors", "0.1,0.10"}, 2,
			"flag -oracle-errors: 0.1 given twice"},
		{"compare with an unknown role", []string{"eval", "--compare", sampleLib, "--tasks", sampleTasks, "--role", "dev"}, 2,
			`flag -role: "dev" is not tuning or check`},
		{"compare with bad cutoffs", []string{"eval", "--compare", sampleLib, "--tasks", sampleTasks, "--ks", "0"}, 2,
			`flag -ks: "0" is not a cutoff`},
		{"oracle: no edge file", build("--prober", "oracle"), 2, "the oracle prober (evaluation only) needs -oracle-edges FILE"},
		{"oracle: edges without the oracle", build("--oracle-edges", gold), 2, "flag -oracle-edges needs -prober oracle"},
		{"oracle: error rate without the oracle", build("--prober", "contract", "--oracle-error", "0.1"), 2, "flag -oracle-error needs -prober oracle"},
		{"oracle: error rate above 1", build("--prober", "oracle", "--oracle-edges", gold, "--oracle-error", "1.5"), 2,
			"flag -oracle-error: 1.5 is outside [0, 1]"},
		{"oracle: error rate not a number", build("--prober", "oracle", "--oracle-edges", gold, "--oracle-error", "ten"), 2,
			"-oracle-error"},
		{"oracle: missing file", build("--prober", "oracle", "--oracle-edges", filepath.Join(dir, "nope.jsonl")), 1,
			"flag -oracle-edges: oracle: open " + filepath.Join(dir, "nope.jsonl")},
		{"oracle: bad line", build("--prober", "oracle", "--oracle-edges", badLine), 1,
			"flag -oracle-edges: oracle: " + badLine + ":5: not a JSON edge"},
		{"oracle: another library's edges", build("--prober", "oracle", "--oracle-edges", other), 1,
			"none of the 1 gold edges of " + other + " joins two skills of the library"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, tc.args...)
			if r.code != tc.code || !strings.Contains(r.stderr, tc.err) {
				t.Errorf("exit %d, stderr %q; want %d and %q", r.code, r.stderr, tc.code, tc.err)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("a failed build wrote its artifact (%v)", err)
			}
		})
	}
	if b, _ := os.ReadFile(noMarkers); string(b) != "# no markers\n" {
		t.Errorf("a failed README rewrite changed the file: %q", b)
	}
}
