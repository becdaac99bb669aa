package harness

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/caskg/caskg/native/eval"
	"github.com/google/go-cmp/cmp"
)

// synthResult is a comparison with made-up numbers for the table tests.
func synthResult(label, role string, gold bool) *Result {
	f := func(x float64) *float64 { return &x }
	row := func(name, kind string, r10, c10 float64) Row {
		return Row{Name: name, Kind: kind, MRR: f(0.5), Chars: 1234.4, Summary: eval.Summary{Tasks: 2,
			Recall: map[int]float64{5: r10 / 2, 10: r10}, Complete: map[int]float64{5: c10 / 2, 10: c10}, NDCG10: 0.25}}
	}
	r := &Result{Title: label + " title", Label: label, Role: role, Command: "bin/caskg eval --compare lib --tasks t.jsonl",
		NumTasks: 2, Skills: 3, Budget: 500, Ks: []int{5, 10}, Rows: []Row{
			row(RowNoGraph, KindBaseline, 0.5, 0.25), row(RowDefault, KindVariant, 0.75, 0.5),
			row(RowPublishAll, KindVariant, 0.5, 0.25), row(RowLexical, KindChannel, 0.25, 0),
			row(RowWhole, KindReference, 1, 1)}}
	r.Rows[1].Published, r.Rows[1].BuildSeconds = 4, 1.234
	r.Rows[2].Published, r.Rows[2].BuildSeconds = 9, 0.5
	r.Rows[4].MRR = nil
	if gold {
		r.GoldEdges = "gold.jsonl"
		r.Rows[1].Edges = map[string]*eval.EdgeScores{
			"all":       {Published: 4, Gold: 2, Hits: 1, Precision: 0.25, Recall: 0.5, F1: 1.0 / 3},
			"confirmed": {Published: 1, Gold: 2, Hits: 1, Precision: 1, Recall: 0.5, F1: 2.0 / 3},
		}
		r.Rows = slices.Insert(r.Rows, 3, row(OracleRow(0.1), KindVariant, 1, 0.75))
		r.Rows[3].Edges = map[string]*eval.EdgeScores{"all": {Published: 2, Gold: 2, Hits: 2, Precision: 1, Recall: 1, F1: 1}}
		r.Rows[3].Published, r.Rows[3].BuildSeconds = 2, 0.25
	}
	return r
}

func TestWriteMarkdown(t *testing.T) {
	var buf bytes.Buffer
	r := synthResult("set", RoleCheck, true)
	r.WriteMarkdown(&buf)
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
	r.WriteTimes(&buf)
	if out := buf.String(); !strings.Contains(out, "| default | 1.23 |\n| publish-all | 0.50 |\n| oracle, error 0.1 | 0.25 |") ||
		strings.Contains(out, "no graph") {
		t.Errorf("build times:\n%s", out)
	}
}

func TestWriteReadmeResults(t *testing.T) {
	var buf bytes.Buffer
	WriteReadmeResults(&buf, []*Result{synthResult("A", RoleTuning, false), synthResult("B", RoleCheck, true)})
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

func TestWriteEvaluation(t *testing.T) {
	for _, tc := range []struct {
		name    string
		results []*Result
		want    []string
		not     []string
	}{
		{"tuning and check", []*Result{synthResult("A", RoleTuning, false), synthResult("B", RoleCheck, true)},
			[]string{"# Evaluation\n", "**Tuning sets** — the defaults (build and retrieval) were chosen looking at their figures: A.\n",
				"**Check sets** — reported only, never tuned on: they show whether the defaults carry over: B.\n",
				"## Summary\n\nCOMP@10 (share of tasks with every gold skill in the top 10):\n\n| set | role |",
				"| A | tuning | 2 | 0.250 | 0.500 | +0.250 |", "\n## Dev sets\n\n### A title\n", "\n### B title\n",
				"## Build times\n", "| set | default | default + traces | publish-all | oracle, error 0.1 |",
				"| A | 1.23 | — | 0.50 | — |\n| B | 1.23 | — | 0.50 | 0.25 |"},
			[]string{"**Not classified**"}},
		{"check only", []*Result{synthResult("B", RoleCheck, false)}, []string{"**Check sets**", "| B | check | 2 |"},
			[]string{"**Tuning sets**", "**Not classified**", "Published edges against the gold edges"}},
		{"not classified", []*Result{synthResult("C", "", false)}, []string{"**Not classified**: C.\n", "| C | — | 2 |"},
			[]string{"**Tuning sets**", "**Check sets**"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			WriteEvaluation(&buf, tc.results)
			out := buf.String()
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("EVALUATION.md lacks %q:\n%s", w, out)
				}
			}
			for _, w := range tc.not {
				if strings.Contains(out, w) {
					t.Errorf("EVALUATION.md has %q:\n%s", w, out)
				}
			}
			// Build times only in their section, after every deterministic table.
			if i := strings.Index(out, "## Build times"); strings.Contains(out[:i], "1.23") {
				t.Errorf("a build time before the build times section:\n%s", out)
			}
		})
	}
}

func TestReadResult(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := synthResult("A", RoleTuning, true)
	data, _ := json.Marshal(good)
	noLabel := synthResult("", RoleCheck, false)
	noLabelData, _ := json.Marshal(noLabel)
	tests := []struct {
		name, file string
		want       *Result
		err        string
	}{
		{"round trip", write("good.json", string(data)), good, ""},
		{"label defaults to the title", write("nolabel.json", string(noLabelData)), func() *Result { r := *noLabel; r.Label = r.Title; return &r }(), ""},
		{"not JSON", write("bad.json", "{"), nil, "bad.json: not a result of eval --compare --json"},
		{"not a comparison", write("other.json", `{"x": 1}`), nil, `other.json: field "title" or "command" missing`},
		{"no rows", write("rows.json", `{"title":"t","command":"c","ks":[10]}`), nil, `rows.json: field "rows" missing or empty`},
		{"no cutoffs", write("ks.json", `{"title":"t","command":"c","rows":[{"name":"x","kind":"variant"}]}`), nil, `ks.json: field "ks" missing or empty`},
		{"unknown kind", write("kind.json", `{"title":"t","command":"c","ks":[10],"rows":[{"name":"x","kind":"?"}]}`), nil,
			`kind.json: rows[0]: field "name" empty or "kind" "?" unknown`},
		{"missing R@k", write("recall.json", `{"title":"t","command":"c","ks":[10],"rows":[{"name":"x","kind":"variant"}]}`), nil,
			"recall.json: rows[0] (x): no R@10"},
		{"unknown role", write("role.json", `{"title":"t","command":"c","role":"dev","ks":[10],"rows":[{"name":"x","kind":"variant"}]}`), nil,
			`role.json: field "role": "dev" is not tuning or check`},
		{"missing file", filepath.Join(dir, "nope.json"), nil, "nope.json: no such file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReadResult(tc.file)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("read back (-want +got):\n%s", diff)
			}
		})
	}
}

// TestUpdateReadme rewrites the results span as eval --report --readme does: the text outside
// the markers kept, a second rewrite a no-op, a README without markers left alone.
func TestUpdateReadme(t *testing.T) {
	dir := t.TempDir()
	results := []*Result{synthResult("A", RoleTuning, false)}
	var sum bytes.Buffer
	WriteReadmeResults(&sum, results)
	const before, after = "# title\n\nhand-written\n\n", "\n## next\n<!-- bench:begin -->\nB\n<!-- bench:end -->\n"
	tests := []struct {
		name, in, want, err string
	}{
		{"rewrites the span", before + ReadmeBegin + "\nold\n" + ReadmeEnd + after, before + ReadmeBegin + "\n" + sum.String() + ReadmeEnd + after, ""},
		{"already up to date", before + ReadmeBegin + "\n" + sum.String() + ReadmeEnd + after, before + ReadmeBegin + "\n" + sum.String() + ReadmeEnd + after, ""},
		{"no markers", "# no markers\n", "# no markers\n", "README.md: mdspan: marker <!-- eval:begin --> appears 0 times, want once"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, "README.md")
			if err := os.WriteFile(path, []byte(tc.in), 0o644); err != nil {
				t.Fatal(err)
			}
			err := UpdateReadme(path, results)
			if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Errorf("error %v, want %q", err, tc.err)
			}
			if got, _ := os.ReadFile(path); string(got) != tc.want {
				t.Errorf("README:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
	if !strings.HasPrefix(sum.String(), "Generated by `make eval`") || strings.Contains(sum.String(), "Build times") {
		t.Errorf("README results:\n%s", sum.String())
	}
}
