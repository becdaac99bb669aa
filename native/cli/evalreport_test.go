package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caskg/caskg/native/eval"
)

func TestReplaceSpan(t *testing.T) {
	const b, e = "<!-- eval:begin -->", "<!-- eval:end -->"
	tests := []struct {
		name, doc, body, want, err string
	}{
		{"replaces between the markers", "intro\n" + b + "\nold\ntable\n" + e + "\noutro\n", "new\n",
			"intro\n" + b + "\nnew\n" + e + "\noutro\n", ""},
		{"empty span", "x\n" + b + "\n" + e + "\n", "t", "x\n" + b + "\nt\n" + e + "\n", ""},
		{"other markers untouched", "<!-- bench:begin -->\nB\n<!-- bench:end -->\n" + b + "\nold\n" + e + "\n", "new\n",
			"<!-- bench:begin -->\nB\n<!-- bench:end -->\n" + b + "\nnew\n" + e + "\n", ""},
		{"begin missing", "x\n" + e + "\n", "t", "", "appears 0 times"},
		{"end missing", b + "\nx\n", "t", "", "<!-- eval:end --> appears 0 times"},
		{"begin twice", b + "\n" + b + "\n" + e + "\n", "t", "", "appears 2 times"},
		{"end before begin", e + "\nx\n" + b + "\n", "t", "", "comes before"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := replaceSpan(tc.doc, b, e, tc.body)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got\n%q\nwant\n%q", got, tc.want)
			}
			again, err := replaceSpan(got, b, e, tc.body)
			if err != nil || again != got {
				t.Errorf("a second rewrite with the same body changed the document: %q, %v", again, err)
			}
		})
	}
}

// synthResult is a comparison with made-up numbers for the table tests.
func synthResult(label string, gold bool) *compareResult {
	f := func(x float64) *float64 { return &x }
	row := func(name, kind string, r10, c10 float64) compareRow {
		return compareRow{Name: name, Kind: kind, MRR: f(0.5), Chars: 1234.4, Summary: eval.Summary{Tasks: 2,
			Recall: map[int]float64{5: r10 / 2, 10: r10}, Complete: map[int]float64{5: c10 / 2, 10: c10}, NDCG10: 0.25}}
	}
	r := &compareResult{Title: label + " title", Label: label, Command: "bin/caskg eval --compare lib --tasks t.jsonl",
		NumTasks: 2, Skills: 3, Budget: 500, Ks: []int{5, 10}, Rows: []compareRow{
			row("full", kindVariant, 0.75, 0.5), row("publish-all", kindVariant, 0.5, 0.25),
			row("lexical seeds", kindBaseline, 0.25, 0), row("whole library", kindReference, 1, 1)}}
	r.Rows[3].MRR = nil
	if gold {
		r.GoldEdges = "gold.jsonl"
		r.Rows[0].Edges = map[string]*eval.EdgeScores{
			"all":       {Published: 4, Gold: 2, Hits: 1, Precision: 0.25, Recall: 0.5, F1: 1.0 / 3},
			"confirmed": {Published: 1, Gold: 2, Hits: 1, Precision: 1, Recall: 0.5, F1: 2.0 / 3},
		}
	}
	return r
}

func TestWriteMarkdown(t *testing.T) {
	var buf bytes.Buffer
	synthResult("set", true).writeMarkdown(&buf)
	out := buf.String()
	for _, want := range []string{
		"### set title\n",
		"2 tasks, 3 skills, gold edges `gold.jsonl` (2 between skills of the library); frontier: the 500 highest-A candidates probed. Rerun:",
		"```sh\nbin/caskg eval --compare lib --tasks t.jsonl\n```",
		"| build | R@5 | R@10 | COMP@5 | COMP@10 | nDCG@10 | MRR main | prereq. cov. | bundle chars |",
		"| `full` | 0.375 | 0.750 | 0.250 | 0.500 | 0.250 | 0.500 | — | 1234 |",
		"| lexical seeds (no graph) | 0.125 | 0.250 | 0.000 | 0.000 | 0.250 | 0.500 | — | 1234 |",
		"| whole library | 0.500 | 1.000 | 0.500 | 1.000 | — | — | — | 1234 |",
		"| `full` | all | 4 | 1 | 0.250 | 0.500 | 0.333 |",
		"|  | confirmed | 1 | 1 | 1.000 | 0.500 | 0.667 |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("markdown lacks %q:\n%s", want, out)
		}
	}
}

func TestWriteReadmeResults(t *testing.T) {
	var buf bytes.Buffer
	writeReadmeResults(&buf, []*compareResult{synthResult("A", false), synthResult("B", true)})
	out := buf.String()
	for _, want := range []string{
		"| build | A (2 tasks) | B (2 tasks) |",
		"| `full` | **0.750 / 0.500** | **0.750 / 0.500** |", // the best COMP@10 of a build or baseline is bold
		"| `publish-all` | 0.500 / 0.250 | 0.500 / 0.250 |",
		"| whole library | 1.000 / 1.000 | 1.000 / 1.000 |", // the reference is never bold
		"Published edges against the gold dependency edges, B:",
		"| `full` | 4 | 0.250 | 0.500 | 0.333 | 1.000 (1 edges) |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("README results lack %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "edges, A:") {
		t.Errorf("an edge table for a set without gold edges:\n%s", out)
	}
}

// TestCompareAndReport runs eval --compare on the sample library and eval --report on its
// result: every build and baseline, metrics in range, the reference complete, a byte-identical
// rerun, and a README whose text outside the markers is kept.
func TestCompareAndReport(t *testing.T) {
	dir := t.TempDir()
	gold := filepath.Join(dir, "gold.jsonl")
	if err := os.WriteFile(gold, []byte(`{"source":"find-object","target":"pick-up-object"}`+"\n"+
		`{"source":"pick-up-object","target":"heat-object-in-microwave"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res := filepath.Join(dir, "sample.json")
	args := []string{"eval", "--compare", sampleLib, "--tasks", sampleTasks, "--gold-edges", gold, "--title", "Sample tasks",
		"--label", "sample", "--json", "-o", res}
	if r := mustRun(t, args...); r.stdout != "" {
		t.Errorf("eval --compare -o wrote to stdout: %q", r.stdout)
	}
	first, err := os.ReadFile(res)
	if err != nil {
		t.Fatal(err)
	}
	var got compareResult
	if err := json.Unmarshal(first, &got); err != nil {
		t.Fatal(err)
	}
	wantRows := []struct{ name, kind string }{{"full", kindVariant}, {"no-judge", kindVariant}, {"semantic-only", kindVariant},
		{"publish-all", kindVariant}, {"lexical seeds", kindBaseline}, {"vector seeds", kindBaseline},
		{"lexical + vector seeds", kindBaseline}, {"whole library", kindReference}}
	if len(got.Rows) != len(wantRows) || got.NumTasks != 40 || got.Skills != sampleCount || got.Label != "sample" {
		t.Fatalf("%d rows, %d tasks, %d skills, label %q; want %d, 40, %d, sample", len(got.Rows), got.NumTasks, got.Skills,
			got.Label, len(wantRows), sampleCount)
	}
	wantCmd := "bin/caskg eval --compare " + sampleLib + " --tasks " + sampleTasks + " --gold-edges " + gold + " --title 'Sample tasks'"
	if got.Command != wantCmd {
		t.Errorf("command %q, want %q", got.Command, wantCmd)
	}
	for i, row := range got.Rows {
		if row.Name != wantRows[i].name || row.Kind != wantRows[i].kind {
			t.Errorf("row %d: %s (%s), want %s (%s)", i, row.Name, row.Kind, wantRows[i].name, wantRows[i].kind)
		}
		for _, v := range []float64{row.Summary.Recall[5], row.Summary.Recall[10], row.Summary.Complete[10], row.Summary.NDCG10} {
			if v < 0 || v > 1 {
				t.Errorf("%s: metric %v outside [0, 1]", row.Name, v)
			}
		}
		if row.MRR == nil != (row.Kind == kindReference) || row.Coverage == nil || row.Chars <= 0 {
			t.Errorf("%s: MRR %v, coverage %v, chars %v", row.Name, row.MRR, row.Coverage, row.Chars)
		}
		if hasEdges := row.Edges["all"] != nil; hasEdges != (row.Kind == kindVariant) || (hasEdges && row.Edges["all"].Gold != 2) {
			t.Errorf("%s: edge scores %v", row.Name, row.Edges)
		}
		if row.Kind == kindBaseline && row.Chars > 12000+2000 {
			t.Errorf("%s: %v bundle characters, above the rendered budget", row.Name, row.Chars)
		}
	}
	whole := got.Rows[len(got.Rows)-1]
	if whole.Summary.Recall[10] != 1 || whole.Summary.Complete[5] != 1 || whole.Chars < 5*got.Rows[0].Chars {
		t.Errorf("whole library: R@10 %v, COMP@5 %v, %v chars (full: %v)", whole.Summary.Recall[10], whole.Summary.Complete[5],
			whole.Chars, got.Rows[0].Chars)
	}
	if lex, full := got.Rows[4].Summary, got.Rows[0].Summary; full.Complete[10] <= lex.Complete[10] {
		t.Errorf("sample: full COMP@10 %v does not beat the lexical seeds %v", full.Complete[10], lex.Complete[10])
	}
	mustRun(t, args...)
	if again, _ := os.ReadFile(res); !bytes.Equal(again, first) {
		t.Error("a second eval --compare wrote different bytes")
	}

	readme := filepath.Join(dir, "README.md")
	const before, after = "# title\n\nhand-written\n\n", "\n## next\n<!-- bench:begin -->\nB\n<!-- bench:end -->\n"
	if err := os.WriteFile(readme, []byte(before+readmeBegin+"\nold\n"+readmeEnd+after), 0o644); err != nil {
		t.Fatal(err)
	}
	evalMD := filepath.Join(dir, "EVALUATION.md")
	mustRun(t, "eval", "--report", res, "-o", evalMD, "--readme", readme)
	md, _ := os.ReadFile(evalMD)
	for _, want := range []string{"# Evaluation\n", "### Sample tasks\n", "```sh\n" + wantCmd + "\n```", "| `full` | all |"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("EVALUATION.md lacks %q:\n%s", want, md)
		}
	}
	rm, _ := os.ReadFile(readme)
	if !strings.HasPrefix(string(rm), before+readmeBegin+"\nGenerated by `make eval`") || !strings.HasSuffix(string(rm), readmeEnd+after) ||
		!strings.Contains(string(rm), "| build | sample (40 tasks) |") || strings.Contains(string(rm), "\nold\n") {
		t.Errorf("README after eval --report:\n%s", rm)
	}
	// Stdout without -o.
	if out := mustRun(t, "eval", "--report", res).stdout; out != string(md) {
		t.Error("eval --report without -o printed something else than it writes")
	}
}

func TestReportErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good, _ := json.Marshal(synthResult("A", false))
	goodPath := write("good.json", string(good))
	noMarkers := write("README.md", "# no markers\n")
	tests := []struct {
		name string
		args []string
		code int
		err  string
	}{
		{"no files", []string{"eval", "--report"}, 2, "needs at least one RESULT.json"},
		{"not JSON", []string{"eval", "--report", write("bad.json", "{")}, 1, "bad.json: not a result of eval --compare --json"},
		{"not a comparison", []string{"eval", "--report", write("other.json", `{"x": 1}`)}, 1, `other.json: field "title" or "command" missing`},
		{"unknown kind", []string{"eval", "--report", write("kind.json", `{"title":"t","command":"c","ks":[10],"rows":[{"name":"x","kind":"?"}]}`)},
			1, `kind.json: rows[0]: field "name" empty or "kind" "?" unknown`},
		{"missing file", []string{"eval", "--report", filepath.Join(dir, "nope.json")}, 1, "nope.json"},
		{"README without markers", []string{"eval", "--report", goodPath, "-o", filepath.Join(dir, "E.md"), "--readme", noMarkers},
			1, "README.md: marker <!-- eval:begin --> appears 0 times"},
		{"-o without -compare", []string{"eval", "x.skg", "--tasks", sampleTasks, "-o", "y"}, 2, "need -compare or -report"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, tc.args...)
			if r.code != tc.code || !strings.Contains(r.stderr, tc.err) {
				t.Errorf("exit %d, stderr %q; want %d and %q", r.code, r.stderr, tc.code, tc.err)
			}
		})
	}
	if b, _ := os.ReadFile(noMarkers); string(b) != "# no markers\n" {
		t.Errorf("a failed README rewrite changed the file: %q", b)
	}
}
