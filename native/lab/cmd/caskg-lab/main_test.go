package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/caskg/caskg/native/lab/internal/harness"
	"github.com/caskg/caskg/native/testlib/fixture"
)

// sampleGoldEdges are dependencies of the sample library: a gold edge file for the oracle.
const sampleGoldEdges = `{"source":"find-object","target":"pick-up-object","type":"dependency"}
{"source":"go-to-location","target":"pick-up-object"}
{"source":"pick-up-object","target":"heat-object-in-microwave"}
{"source":"pick-up-object","target":"put-two-objects-in-receptacle"}
`

// mustRun runs the caskg-lab command line args in-process and returns what it printed on
// standard output; the test stops unless it exits 0.
func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := run(args, &stdout, &stderr); code != 0 {
		t.Fatalf("caskg-lab %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, stdout.String(), stderr.String())
	}
	return stdout.String()
}

func TestCompareCommand(t *testing.T) {
	base := compareArgs{libs: []string{"graphs/sample"}, tasks: "t.jsonl", oracleSeed: 1, budget: -1, ks: "5,10"}
	tests := []struct {
		name string
		edit func(*compareArgs)
		want string
	}{
		{"defaults left out", func(*compareArgs) {}, "bin/caskg-lab compare graphs/sample --tasks t.jsonl"},
		{"every flag", func(a *compareArgs) {
			a.libs = append(a.libs, "more/tools.json")
			a.gold, a.traces, a.oracleErrors, a.oracleSeed, a.role = "g.jsonl", "r.jsonl", "0.1,0.3", 9, "check"
			a.budget, a.ks, a.title, a.label, a.json, a.out = 50, "1,3", "T", "L", true, "x.json"
		}, "bin/caskg-lab compare graphs/sample more/tools.json --tasks t.jsonl --gold-edges g.jsonl --traces r.jsonl " +
			"--oracle-errors 0.1,0.3 --oracle-seed 9 --role check --budget 50 --ks 1,3 --title T"},
		{"oracle seed only with rates", func(a *compareArgs) { a.oracleSeed = 9 }, "bin/caskg-lab compare graphs/sample --tasks t.jsonl"},
		{"words quoted for the shell", func(a *compareArgs) { a.libs, a.title = []string{"my lib"}, "it's (all)" },
			`bin/caskg-lab compare 'my lib' --tasks t.jsonl --title 'it'\''s (all)'`},
		{"empty word quoted", func(a *compareArgs) { a.tasks = "" }, "bin/caskg-lab compare graphs/sample --tasks ''"},
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

// TestCompareAndReport runs compare on the sample library with gold edges, traces and the
// oracle, as JSON to a file and as Markdown to standard output, and report on the
// result: the flags reach the result, the command that reproduces it is recorded, and what
// the command prints is the harness's rendering.
func TestCompareAndReport(t *testing.T) {
	dir := t.TempDir()
	gold := fixture.WriteFile(t, dir, "gold.jsonl", sampleGoldEdges)
	traces := fixture.WriteFile(t, dir, "traces.jsonl", `{"id":"r1","skills":["go-to-location","find-object","pick-up-object","heat-object-in-microwave"]}`+"\n"+
		`{"id":"r2","skills":["find-object","pick-up-object","put-two-objects-in-receptacle"]}`+"\n")
	res := filepath.Join(dir, "sample.json")
	flags := []string{"compare", fixture.LabSampleLib, "--tasks", fixture.LabSampleTasks, "--gold-edges", gold, "--traces", traces,
		"--oracle-errors", "0,0.3", "--role", "check", "--title", "Sample tasks", "--label", "sample"}
	if out := mustRun(t, append(flags, "--json", "-o", res)...); out != "" {
		t.Errorf("compare -o wrote to stdout: %q", out)
	}
	got, err := harness.ReadResult(res)
	if err != nil {
		t.Fatal(err)
	}
	wantCmd := "bin/caskg-lab compare " + fixture.LabSampleLib + " --tasks " + fixture.LabSampleTasks + " --gold-edges " + gold + " --traces " + traces +
		" --oracle-errors 0,0.3 --role check --title 'Sample tasks'"
	if got.Command != wantCmd {
		t.Errorf("command %q, want %q", got.Command, wantCmd)
	}
	if got.Title != "Sample tasks" || got.Label != "sample" || got.Role != harness.RoleCheck || got.NumTasks != 40 ||
		got.Skills != fixture.SampleCount || got.Tasks != fixture.LabSampleTasks || got.GoldEdges != gold || got.Traces != traces ||
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
		t.Errorf("compare --json is not indented JSON ending in a newline:\n%.200s", raw)
	}

	// Markdown on standard output: the tables, then the build times.
	md := mustRun(t, flags...)
	if !strings.HasPrefix(md, "### Sample tasks\n") || !strings.Contains(md, "```sh\n"+wantCmd+"\n```") ||
		!strings.Contains(md, "| oracle, error 0.3 | all |") || !strings.Contains(md, "\nBuild times (wall clock") {
		t.Errorf("compare Markdown:\n%s", md)
	}

	const before, after = "# title\n\nhand-written\n\n", "\n## next\n<!-- bench:begin -->\nB\n<!-- bench:end -->\n"
	readme := fixture.WriteFile(t, dir, "README.md", before+harness.ReadmeBegin+"\nold\n"+harness.ReadmeEnd+after)
	evalMD := filepath.Join(dir, "evaluation-results.md")
	if out := mustRun(t, "report", res, "-o", evalMD, "--readme", readme); out != "" {
		t.Errorf("report -o wrote to stdout: %q", out)
	}
	var want, sum bytes.Buffer
	harness.WriteEvaluation(&want, []*harness.Result{got})
	harness.WriteReadmeResults(&sum, []*harness.Result{got})
	if doc, _ := os.ReadFile(evalMD); string(doc) != want.String() {
		t.Errorf("evaluation-results.md is not the harness's:\n%s", doc)
	}
	if rm, _ := os.ReadFile(readme); string(rm) != before+harness.ReadmeBegin+"\n"+sum.String()+harness.ReadmeEnd+after {
		t.Errorf("README after report:\n%s", rm)
	}
	// Standard output without -o.
	if out := mustRun(t, "report", res); out != want.String() {
		t.Error("report without -o printed something else than it writes")
	}
}
