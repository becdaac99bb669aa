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
func synthResult(label, role string, gold bool) *compareResult {
	f := func(x float64) *float64 { return &x }
	row := func(name, kind string, r10, c10 float64) compareRow {
		return compareRow{Name: name, Kind: kind, MRR: f(0.5), Chars: 1234.4, Summary: eval.Summary{Tasks: 2,
			Recall: map[int]float64{5: r10 / 2, 10: r10}, Complete: map[int]float64{5: c10 / 2, 10: c10}, NDCG10: 0.25}}
	}
	r := &compareResult{Title: label + " title", Label: label, Role: role, Command: "bin/caskg eval --compare lib --tasks t.jsonl",
		NumTasks: 2, Skills: 3, Budget: 500, Ks: []int{5, 10}, Rows: []compareRow{
			row(rowNoGraph, kindBaseline, 0.5, 0.25), row(rowDefault, kindVariant, 0.75, 0.5),
			row(rowPublishAll, kindVariant, 0.5, 0.25), row(rowLexical, kindChannel, 0.25, 0),
			row(rowWhole, kindReference, 1, 1)}}
	r.Rows[1].Published, r.Rows[1].BuildSeconds = 4, 1.234
	r.Rows[2].Published, r.Rows[2].BuildSeconds = 9, 0.5
	r.Rows[4].MRR = nil
	if gold {
		r.GoldEdges = "gold.jsonl"
		r.Rows[1].Edges = map[string]*eval.EdgeScores{
			"all":       {Published: 4, Gold: 2, Hits: 1, Precision: 0.25, Recall: 0.5, F1: 1.0 / 3},
			"confirmed": {Published: 1, Gold: 2, Hits: 1, Precision: 1, Recall: 0.5, F1: 2.0 / 3},
		}
		r.Rows = slices.Insert(r.Rows, 3, row(oracleRow(0.1), kindVariant, 1, 0.75))
		r.Rows[3].Edges = map[string]*eval.EdgeScores{"all": {Published: 2, Gold: 2, Hits: 2, Precision: 1, Recall: 1, F1: 1}}
		r.Rows[3].Published, r.Rows[3].BuildSeconds = 2, 0.25
	}
	return r
}

func TestWriteMarkdown(t *testing.T) {
	var buf bytes.Buffer
	r := synthResult("set", roleCheck, true)
	r.writeMarkdown(&buf)
	out := buf.String()
	for _, want := range []string{
		"### set title\n",
		"2 tasks, 3 skills; a check set (never tuned on); gold edges `gold.jsonl` (2 between skills of the library); frontier: the 500 highest-A candidates probed. Rerun:",
		"```sh\nbin/caskg eval --compare lib --tasks t.jsonl\n```",
		"| build | R@5 | R@10 | COMP@5 | COMP@10 | nDCG@10 | MRR main | prereq. cov. | bundle chars | edges | edge precision | edge recall |",
		"| no graph (seeds alone) | 0.250 | 0.500 | 0.125 | 0.250 | 0.250 | 0.500 | — | 1234 | — | — | — |\n| default | 0.375 | 0.750 | 0.250 | 0.500 | 0.250 | 0.500 | — | 1234 | 4 | 0.250 | 0.500 |",
		"| publish-all | 0.250 | 0.500 | 0.125 | 0.250 | 0.250 | 0.500 | — | 1234 | 9 | — | — |",
		"| oracle, error 0.1 | 0.500 | 1.000 | 0.375 | 0.750 | 0.250 | 0.500 | — | 1234 | 2 | 1.000 | 1.000 |",
		"| whole library | 0.500 | 1.000 | 0.500 | 1.000 | — | — | — | 1234 | — | — | — |",
		"| default | all | 4 | 1 | 0.250 | 0.500 | 0.333 |",
		"|  | confirmed | 1 | 1 | 1.000 | 0.500 | 0.667 |",
		"Per-channel ablation",
		"| lexical seeds (BM25 + fuzzy names) | 0.125 | 0.250 | 0.000 | 0.000 | 0.250 | 0.500 | — | 1234 |\n| no graph (seeds alone) |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("markdown lacks %q:\n%s", want, out)
		}
	}
	// The channels only in the ablation table; build times never in the deterministic tables.
	if strings.Count(out, "lexical seeds") != 1 || strings.Contains(out, "1.23") {
		t.Errorf("a channel row in the main table or a build time in the tables:\n%s", out)
	}
	buf.Reset()
	r.writeTimes(&buf)
	if out := buf.String(); !strings.Contains(out, "| default | 1.23 |\n| publish-all | 0.50 |\n| oracle, error 0.1 | 0.25 |") ||
		strings.Contains(out, "no graph") {
		t.Errorf("build times:\n%s", out)
	}
}

func TestWriteReadmeResults(t *testing.T) {
	var buf bytes.Buffer
	writeReadmeResults(&buf, []*compareResult{synthResult("A", roleTuning, false), synthResult("B", roleCheck, true)})
	out := buf.String()
	for _, want := range []string{
		"| set | role | tasks | no graph | default | default − no graph | default + traces | publish-all | oracle, error 0.1 |",
		"| A | tuning | 2 | 0.250 | 0.500 | +0.250 | — | 0.250 | — |",
		"| B | check | 2 | 0.250 | 0.500 | +0.250 | — | 0.250 | 0.750 |",
		"| set | gold edges | default | default + traces | publish-all | oracle, error 0.1 |",
		"| B | 2 | 0.250 / 0.500 (4) | — | — | 1.000 / 1.000 (2) |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("README results lack %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "| A | 2 |") || strings.Contains(out, "1.23") {
		t.Errorf("an edge row for a set without gold edges, or a build time:\n%s", out)
	}
}

// TestCompareAndReport runs eval --compare on the sample library with gold edges, traces and
// the oracle, and eval --report on its result: every row, metrics in range, the perfect oracle
// confirming only gold edges, the reference complete, a rerun identical but for the build
// times, and a README whose text outside the markers is kept.
func TestCompareAndReport(t *testing.T) {
	dir := t.TempDir()
	gold := filepath.Join(dir, "gold.jsonl")
	if err := os.WriteFile(gold, []byte(sampleGoldEdges), 0o644); err != nil {
		t.Fatal(err)
	}
	traces := filepath.Join(dir, "traces.jsonl")
	if err := os.WriteFile(traces, []byte(`{"id":"r1","skills":["go-to-location","find-object","pick-up-object","heat-object-in-microwave"]}`+"\n"+
		`{"id":"r2","skills":["find-object","pick-up-object","put-two-objects-in-receptacle"]}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res := filepath.Join(dir, "sample.json")
	args := []string{"eval", "--compare", sampleLib, "--tasks", sampleTasks, "--gold-edges", gold, "--traces", traces,
		"--oracle-errors", "0,0.3", "--role", "check", "--title", "Sample tasks", "--label", "sample", "--json", "-o", res}
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
	wantRows := []struct{ name, kind string }{{rowNoGraph, kindBaseline}, {rowDefault, kindVariant}, {rowTraces, kindVariant},
		{rowPublishAll, kindVariant}, {"oracle, error 0", kindVariant}, {"oracle, error 0.3", kindVariant},
		{rowLexical, kindChannel}, {rowVector, kindChannel}, {rowWhole, kindReference}}
	if len(got.Rows) != len(wantRows) || got.NumTasks != 40 || got.Skills != sampleCount || got.Label != "sample" || got.Role != roleCheck {
		t.Fatalf("%d rows, %d tasks, %d skills, label %q, role %q; want %d, 40, %d, sample, check", len(got.Rows), got.NumTasks,
			got.Skills, got.Label, got.Role, len(wantRows), sampleCount)
	}
	wantCmd := "bin/caskg eval --compare " + sampleLib + " --tasks " + sampleTasks + " --gold-edges " + gold + " --traces " + traces +
		" --oracle-errors 0,0.3 --role check --title 'Sample tasks'"
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
		isBuild := row.Kind == kindVariant
		if hasEdges := row.Edges["all"] != nil; hasEdges != isBuild || (hasEdges && row.Edges["all"].Gold != 4) {
			t.Errorf("%s: edge scores %v", row.Name, row.Edges)
		}
		if (row.BuildSeconds > 0) != isBuild || (row.Published > 0) != isBuild {
			t.Errorf("%s: build seconds %v, %d edges", row.Name, row.BuildSeconds, row.Published)
		}
		if row.Kind != kindReference && row.Chars > 12000+2000 {
			t.Errorf("%s: %v bundle characters, above the rendered budget", row.Name, row.Chars)
		}
	}
	if perfect := got.Rows[4].Edges["confirmed"]; perfect == nil || perfect.Hits == 0 || perfect.Precision != 1 || got.Rows[4].Edges["uncertain"] != nil {
		t.Errorf("oracle at error 0: edges by state %v; want confirmed edges, all gold, none uncertain", got.Rows[4].Edges)
	}
	if noisy := got.Rows[5].Edges["uncertain"]; noisy == nil || noisy.Published == 0 {
		t.Errorf("oracle at error 0.3: no uncertain edges (%v)", got.Rows[5].Edges)
	}
	whole := got.Rows[len(got.Rows)-1]
	if whole.Summary.Recall[10] != 1 || whole.Summary.Complete[5] != 1 || whole.Chars < 5*got.Rows[1].Chars {
		t.Errorf("whole library: R@10 %v, COMP@5 %v, %v chars (default: %v)", whole.Summary.Recall[10], whole.Summary.Complete[5],
			whole.Chars, got.Rows[1].Chars)
	}
	if seeds, def := got.Rows[0].Summary, got.Rows[1].Summary; def.Complete[10] <= seeds.Complete[10] {
		t.Errorf("sample: default COMP@10 %v does not beat the seeds alone %v", def.Complete[10], seeds.Complete[10])
	}
	mustRun(t, args...)
	again, _ := os.ReadFile(res)
	if a, b := withoutTimes(t, first), withoutTimes(t, again); !bytes.Equal(a, b) {
		t.Error("a second eval --compare wrote different figures (build times aside)")
	}

	readme := filepath.Join(dir, "README.md")
	const before, after = "# title\n\nhand-written\n\n", "\n## next\n<!-- bench:begin -->\nB\n<!-- bench:end -->\n"
	if err := os.WriteFile(readme, []byte(before+readmeBegin+"\nold\n"+readmeEnd+after), 0o644); err != nil {
		t.Fatal(err)
	}
	evalMD := filepath.Join(dir, "EVALUATION.md")
	mustRun(t, "eval", "--report", res, "-o", evalMD, "--readme", readme)
	md, _ := os.ReadFile(evalMD)
	for _, want := range []string{"# Evaluation\n", "**Check sets** — reported only, never tuned on: they show whether the defaults carry over: sample.",
		"### Sample tasks\n", "```sh\n" + wantCmd + "\n```", "| default | all |", "| oracle, error 0 | all |",
		"| sample | check | 40 |", "Per-channel ablation", "## Build times"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("EVALUATION.md lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(string(md), "Tuning sets") {
		t.Error("EVALUATION.md names tuning sets, but the only set is a check")
	}
	rm, _ := os.ReadFile(readme)
	if !strings.HasPrefix(string(rm), before+readmeBegin+"\nGenerated by `make eval`") || !strings.HasSuffix(string(rm), readmeEnd+after) ||
		!strings.Contains(string(rm), "| sample | check | 40 |") || strings.Contains(string(rm), "\nold\n") ||
		strings.Contains(string(rm), "Build times") {
		t.Errorf("README after eval --report:\n%s", rm)
	}
	// Stdout without -o.
	if out := mustRun(t, "eval", "--report", res).stdout; out != string(md) {
		t.Error("eval --report without -o printed something else than it writes")
	}
}

// withoutTimes is a comparison's JSON with the build times zeroed, the one figure that is not
// deterministic.
func withoutTimes(t *testing.T, data []byte) []byte {
	t.Helper()
	var r compareResult
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	for i := range r.Rows {
		r.Rows[i].BuildSeconds = 0
	}
	out, _ := json.Marshal(r)
	return out
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
	good, _ := json.Marshal(synthResult("A", roleTuning, false))
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
		{"unknown role", []string{"eval", "--report", write("role.json", `{"title":"t","command":"c","role":"dev","ks":[10],"rows":[{"name":"x","kind":"variant"}]}`)},
			1, `role.json: field "role": "dev" is not tuning or check`},
		{"-o without -compare", []string{"eval", "x.skg", "--tasks", sampleTasks, "-o", "y"}, 2, "need -compare or -report"},
		{"oracle without gold edges", []string{"eval", "--compare", sampleLib, "--tasks", sampleTasks, "--oracle-errors", "0.1"}, 2,
			"flag -oracle-errors needs -gold-edges"},
		{"oracle rate above 1", []string{"eval", "--compare", sampleLib, "--tasks", sampleTasks, "--gold-edges", goodPath, "--oracle-errors", "0.1,2"}, 2,
			`flag -oracle-errors: "2" is not an error rate in [0, 1]`},
		{"oracle rate twice", []string{"eval", "--compare", sampleLib, "--tasks", sampleTasks, "--gold-edges", goodPath, "--oracle-errors", "0.1,0.10"}, 2,
			"flag -oracle-errors: 0.1 given twice"},
		{"compare with an unknown role", []string{"eval", "--compare", sampleLib, "--tasks", sampleTasks, "--role", "dev"}, 2,
			`flag -role: "dev" is not tuning or check`},
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
