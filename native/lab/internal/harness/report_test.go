package harness

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/caskg/caskg/native/internal/eval"
	"github.com/caskg/caskg/native/testlib/fixture"
	"github.com/google/go-cmp/cmp"
)

// synthResult is a comparison with made-up numbers for the table tests.
func synthResult(label, role string, gold bool) *Result {
	f := func(x float64) *float64 { return &x }
	row := func(name, kind string, r10, c10 float64) Row {
		return Row{Name: name, Kind: kind, MRR: f(0.5), Chars: 1234.4, Summary: eval.Summary{Tasks: 2,
			Recall: map[int]float64{5: r10 / 2, 10: r10}, Complete: map[int]float64{5: c10 / 2, 10: c10}, NDCG10: 0.25}}
	}
	r := &Result{Title: label + " title", Label: label, Role: role, Command: "bin/caskg-lab compare lib --tasks t.jsonl",
		NumTasks: 2, Skills: 3, Budget: 500, Ks: []int{5, 10}, Rows: []Row{
			row(rowNoGraph, kindBaseline, 0.5, 0.25), row(RowDefault, KindVariant, 0.75, 0.5),
			row(rowPublishAll, KindVariant, 0.5, 0.25), row(rowLexical, kindChannel, 0.25, 0),
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
		r.Rows = slices.Insert(r.Rows, 3, row(oracleRow(0.1), KindVariant, 1, 0.75))
		r.Rows[3].Edges = map[string]*eval.EdgeScores{"all": {Published: 2, Gold: 2, Hits: 2, Precision: 1, Recall: 1, F1: 1}}
		r.Rows[3].Published, r.Rows[3].BuildSeconds = 2, 0.25
	}
	return r
}

// TestWriters checks the Markdown of a comparison, its build times, the README results and
// docs/evaluation-results.md. Build times (1.23) never stand in the deterministic tables: they change from
// run to run.
func TestWriters(t *testing.T) {
	r := synthResult("set", RoleCheck, true)
	ab := []*Result{synthResult("A", RoleTuning, false), synthResult("B", RoleCheck, true)}
	evaluation := func(results ...*Result) func(io.Writer) {
		return func(w io.Writer) { WriteEvaluation(w, results) }
	}
	tests := []struct {
		name      string
		write     func(io.Writer)
		want, not []string
		once      []string // exactly once in the text
		timesFrom string   // when set, no build time before it
	}{
		{
			name:  "markdown",
			write: func(w io.Writer) { r.WriteMarkdown(w) },
			want: []string{
				"### set title\n",
				"2 tasks, 3 skills; a check set (never tuned on); gold edges `gold.jsonl` (2 between skills of the library); frontier: the 500 highest-A candidates probed. Rerun:",
				"```sh\nbin/caskg-lab compare lib --tasks t.jsonl\n```",
				"| build | R@5 | R@10 | COMP@5 | COMP@10 | nDCG@10 | MRR main | prereq. cov. | bundle chars | edges | edge precision | edge recall |",
				"| no graph (seeds alone) | 0.250 | 0.500 | 0.125 | 0.250 | 0.250 | 0.500 | — | 1234 | — | — | — |\n| default | 0.375 | 0.750 | 0.250 | 0.500 | 0.250 | 0.500 | — | 1234 | 4 | 0.250 | 0.500 |",
				"| publish-all | 0.250 | 0.500 | 0.125 | 0.250 | 0.250 | 0.500 | — | 1234 | 9 | — | — |",
				"| oracle, error 0.1 | 0.500 | 1.000 | 0.375 | 0.750 | 0.250 | 0.500 | — | 1234 | 2 | 1.000 | 1.000 |",
				"| whole library | 0.500 | 1.000 | 0.500 | 1.000 | — | — | — | 1234 | — | — | — |",
				"| default | all | 4 | 1 | 0.250 | 0.500 | 0.333 |",
				"|  | confirmed | 1 | 1 | 1.000 | 0.500 | 0.667 |",
				"Per-channel ablation",
				"| lexical seeds (BM25 + fuzzy names) | 0.125 | 0.250 | 0.000 | 0.000 | 0.250 | 0.500 | — | 1234 |\n| no graph (seeds alone) |",
			},
			not:  []string{"1.23"},
			once: []string{"lexical seeds"}, // the channels only in the ablation table
		},
		{
			name:  "build times",
			write: func(w io.Writer) { r.WriteTimes(w) },
			want:  []string{"| default | 1.23 |\n| publish-all | 0.50 |\n| oracle, error 0.1 | 0.25 |"},
			not:   []string{"no graph"},
		},
		{
			name:  "README results",
			write: func(w io.Writer) { WriteReadmeResults(w, ab) },
			want: []string{
				"| set | role | tasks | no graph | default | default − no graph | default + traces | publish-all | oracle, error 0.1 |",
				"| A | tuning | 2 | 0.250 | 0.500 | +0.250 | — | 0.250 | — |",
				"| B | check | 2 | 0.250 | 0.500 | +0.250 | — | 0.250 | 0.750 |",
			},
			not: []string{"| set | gold edges |", "1.23"}, // one table: the edges stay in docs/evaluation-results.md
		},
		{
			name:  "evaluation-results.md, tuning and check",
			write: evaluation(ab...),
			want: []string{"# Evaluation\n", "**Tuning sets** — the defaults (build and retrieval) were chosen looking at their figures: A.\n",
				"**Check sets** — reported only, never tuned on: they show whether the defaults carry over: B.\n",
				"## Summary\n\nCOMP@10 (share of tasks with every gold skill in the top 10):\n\n| set | role |",
				"| A | tuning | 2 | 0.250 | 0.500 | +0.250 |", "\n## Dev sets\n\n### A title\n", "\n### B title\n",
				"## Build times\n", "| set | default | default + traces | publish-all | oracle, error 0.1 |",
				"| A | 1.23 | — | 0.50 | — |\n| B | 1.23 | — | 0.50 | 0.25 |"},
			not:       []string{"**Not classified**"},
			timesFrom: "## Build times",
		},
		{
			name:      "evaluation-results.md, check only",
			write:     evaluation(synthResult("B", RoleCheck, false)),
			want:      []string{"**Check sets**", "| B | check | 2 |"},
			not:       []string{"**Tuning sets**", "**Not classified**", "Published edges against the gold edges"},
			timesFrom: "## Build times",
		},
		{
			name:      "evaluation-results.md, not classified",
			write:     evaluation(synthResult("C", "", false)),
			want:      []string{"**Not classified**: C.\n", "| C | — | 2 |"},
			not:       []string{"**Tuning sets**", "**Check sets**"},
			timesFrom: "## Build times",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			tt.write(&buf)
			out := buf.String()
			fixture.Contains(t, tt.name, out, tt.want, tt.not)
			for _, s := range tt.once {
				if n := strings.Count(out, s); n != 1 {
					t.Errorf("%q %d times, want once:\n%s", s, n, out)
				}
			}
			if tt.timesFrom != "" {
				if i := strings.Index(out, tt.timesFrom); i < 0 || strings.Contains(out[:i], "1.23") {
					t.Errorf("no %q, or a build time before it:\n%s", tt.timesFrom, out)
				}
			}
		})
	}
}

func TestReadResult(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string { return fixture.WriteFile(t, dir, name, body) }
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
		{"not JSON", write("bad.json", "{"), nil, "bad.json: not a result of caskg-lab compare --json"},
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
			if fixture.WantErr(t, err, "", tc.err) {
				return
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("read back (-want +got):\n%s", diff)
			}
		})
	}
}

// TestUpdateReadme rewrites the results span as caskg-lab report --readme does: the text outside
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
