package harness

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caskg/caskg/native/internal/builder"
	"github.com/caskg/caskg/native/internal/eval"
	"github.com/caskg/caskg/native/testlib"
	"github.com/caskg/caskg/native/testlib/fixture"
	"github.com/caskg/caskg/wasm/engine"
	"github.com/google/go-cmp/cmp"
)

// sampleTraces are two successful runs over the sample library.
var sampleTraces = []builder.Trace{
	{ID: "r1", Skills: []string{"go-to-location", "find-object", "pick-up-object", "heat-object-in-microwave"}},
	{ID: "r2", Skills: []string{"find-object", "pick-up-object", "put-two-objects-in-receptacle"}},
}

func readSampleTasks(t *testing.T) []eval.Task {
	t.Helper()
	tasks, err := eval.ReadTasks(fixture.LabSampleTasks, true)
	if err != nil {
		t.Fatal(err)
	}
	return tasks
}

// sampleSpec compares the sample library with gold edges, traces and the oracle at error
// rates 0 and 0.3.
func sampleSpec(t *testing.T) Spec {
	return Spec{Libraries: []string{fixture.LabSampleLib}, Tasks: readSampleTasks(t), Ks: []int{5, 10}, Options: builder.DefaultOptions(),
		Traces: sampleTraces, Gold: testlib.SampleGold(), OracleErrors: []float64{0, 0.3}, OracleSeed: 1,
		Title: "Sample tasks", Label: "sample", Role: RoleCheck, Command: "bin/caskg-lab compare sample",
		TasksFile: fixture.LabSampleTasks, GoldFile: "gold.jsonl", TracesFile: "traces.jsonl"}
}

// TestCompare compares the sample library: every row, metrics in range, the perfect oracle
// confirming only gold edges, the reference complete, and a rerun identical but for the build
// times.
func TestCompare(t *testing.T) {
	spec := sampleSpec(t)
	got, err := Compare(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	wantRows := []struct{ name, kind string }{{rowNoGraph, kindBaseline}, {RowDefault, KindVariant}, {RowTraces, KindVariant},
		{rowPublishAll, KindVariant}, {"oracle, error 0", KindVariant}, {"oracle, error 0.3", KindVariant},
		{rowLexical, kindChannel}, {rowVector, kindChannel}, {rowWhole, kindReference}}
	if len(got.Rows) != len(wantRows) || got.NumTasks != 40 || got.Skills != fixture.SampleCount || got.Label != "sample" || got.Role != RoleCheck ||
		got.OracleSeed != 1 || got.Budget != builder.DefaultOptions().Budget || got.GoldEdges != "gold.jsonl" || got.Traces != "traces.jsonl" {
		t.Fatalf("%d rows, %d tasks, %d skills, label %q, role %q, oracle seed %d, budget %d, files %q %q; want %d, 40, %d, sample, check, 1, %d, gold.jsonl traces.jsonl",
			len(got.Rows), got.NumTasks, got.Skills, got.Label, got.Role, got.OracleSeed, got.Budget, got.GoldEdges, got.Traces,
			len(wantRows), fixture.SampleCount, builder.DefaultOptions().Budget)
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
		isBuild := row.Kind == KindVariant
		if hasEdges := row.Edges["all"] != nil; hasEdges != isBuild || (hasEdges && row.Edges["all"].Gold != 4) {
			t.Errorf("%s: edge scores %v", row.Name, row.Edges)
		}
		if (row.BuildSeconds > 0) != isBuild || (row.Published > 0) != isBuild {
			t.Errorf("%s: build seconds %v, %d edges", row.Name, row.BuildSeconds, row.Published)
		}
		if row.Kind != kindReference && row.Chars > engine.DefaultTotalBudget+2000 {
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
	again, err := Compare(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(withoutTimes(t, got), withoutTimes(t, again)); diff != "" {
		t.Errorf("a second comparison gave different figures (build times aside):\n%s", diff)
	}
}

// withoutTimes is a result's JSON with the build times zeroed, the one figure that is not
// deterministic.
func withoutTimes(t *testing.T, r *Result) string {
	t.Helper()
	c := *r
	c.Rows = append([]Row(nil), r.Rows...)
	for i := range c.Rows {
		c.Rows[i].BuildSeconds = 0
	}
	out, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// TestCompareDefaults compares without gold edges, traces or a title: the fixed rows only, the
// title naming the library and the tasks, the label the title, no oracle seed recorded.
func TestCompareDefaults(t *testing.T) {
	spec := Spec{Libraries: []string{fixture.LabSampleLib}, Tasks: readSampleTasks(t), Ks: []int{3}, Options: builder.DefaultOptions(),
		OracleSeed: 7, TasksFile: fixture.LabSampleTasks}
	got, err := Compare(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, row := range got.Rows {
		names = append(names, row.Name)
		if row.Edges != nil {
			t.Errorf("%s: edge scores without gold edges", row.Name)
		}
		if _, ok := row.Summary.Recall[3]; !ok || len(row.Summary.Recall) != 1 {
			t.Errorf("%s: recall at %v, want at 3 only", row.Name, row.Summary.Recall)
		}
	}
	want := []string{rowNoGraph, RowDefault, rowPublishAll, rowLexical, rowVector, rowWhole}
	if !cmp.Equal(names, want) {
		t.Errorf("rows %q, want %q", names, want)
	}
	if title := fixture.LabSampleLib + " on " + fixture.LabSampleTasks; got.Title != title || got.Label != title || got.OracleSeed != 0 || got.Role != "" {
		t.Errorf("title %q, label %q, oracle seed %d, role %q; want %q twice, 0 and none", got.Title, got.Label, got.OracleSeed,
			got.Role, title)
	}
}

func TestCompareErrors(t *testing.T) {
	empty := t.TempDir()
	tasks := readSampleTasks(t)
	base := Spec{Libraries: []string{fixture.LabSampleLib}, Tasks: tasks, Ks: []int{5, 10}, Options: builder.DefaultOptions()}
	tests := []struct {
		name string
		edit func(*Spec)
		err  string
	}{
		{"no cutoffs", func(s *Spec) { s.Ks = nil }, "harness: cutoffs [] are not ascending and positive"},
		{"cutoffs descending", func(s *Spec) { s.Ks = []int{10, 5} }, "harness: cutoffs [10 5] are not ascending"},
		{"cutoff 0", func(s *Spec) { s.Ks = []int{0, 5} }, "harness: cutoffs [0 5] are not ascending and positive"},
		{"oracle without gold edges", func(s *Spec) { s.OracleErrors = []float64{0.1} }, "harness: oracle error rates need gold edges"},
		{"unknown role", func(s *Spec) { s.Role = "dev" }, `harness: role "dev" is not tuning or check`},
		{"empty library", func(s *Spec) { s.Libraries = []string{empty} }, "ingest: empty library"},
		{"missing library", func(s *Spec) { s.Libraries = []string{filepath.Join(empty, "nope")} }, "nope"},
		{"task the engine refuses", func(s *Spec) { s.Tasks = []eval.Task{{ID: "t1", Query: "", Gold: []string{"x"}, Line: 3}} },
			"default: task t1 (line 3): engine: empty query"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := base
			tc.edit(&s)
			if _, err := Compare(context.Background(), s); err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("error %v, want one containing %q", err, tc.err)
			}
		})
	}
}
