package eval

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/caskg/caskg/native/testlib/table"
)

func TestScore(t *testing.T) {
	ks := []int{1, 3}
	tests := []struct {
		name   string
		ranked []string
		gold   []string
		want   Scores
	}{
		{"all found first", []string{"a", "b", "c"}, []string{"a", "b"},
			Scores{Recall: map[int]float64{1: 0.5, 3: 1}, Complete: map[int]bool{1: false, 3: true}, NDCG10: 1}},
		{"none", []string{"x", "y"}, []string{"a"},
			Scores{Recall: map[int]float64{1: 0, 3: 0}, Complete: map[int]bool{1: false, 3: false}, NDCG10: 0}},
		{"second place", []string{"x", "a"}, []string{"a"},
			Scores{Recall: map[int]float64{1: 0, 3: 1}, Complete: map[int]bool{1: false, 3: true}, NDCG10: 1 / math.Log2(3)}},
		{"duplicates count once", []string{"a", "a", "a"}, []string{"a", "b"},
			Scores{Recall: map[int]float64{1: 0.5, 3: 0.5}, Complete: map[int]bool{1: false, 3: false}, NDCG10: 1 / (1 + 1/math.Log2(3))}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Score(tc.ranked, tc.gold, ks)
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateApprox(0, 1e-12)); diff != "" {
				t.Error(diff)
			}
		})
	}
}

func TestSummarize(t *testing.T) {
	ks := []int{10}
	all := []Scores{Score([]string{"a"}, []string{"a"}, ks), Score([]string{"a"}, []string{"a", "b"}, ks)}
	s := Summarize(all, ks)
	if s.Recall[10] != 0.75 || s.Complete[10] != 0.5 || s.Tasks != 2 {
		t.Errorf("got %+v", s)
	}
}

func TestScoreEdges(t *testing.T) {
	gold := []GoldEdge{{Source: "a", Target: "b"}, {Source: "b", Target: "c"}, {Source: "x", Target: "c"}}
	pub := [][2]string{{"a", "b"}, {"b", "a"}, {"c", "b"}, {"a", "b"}}
	got := scoreEdges(pub, gold, map[string]bool{"a": true, "b": true, "c": true})
	want := EdgeScores{Published: 4, Gold: 2, Hits: 1, Precision: 0.25, Recall: 0.5, F1: 2 * 0.25 * 0.5 / 0.75}
	if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-12)); diff != "" {
		t.Error(diff)
	}
}

func TestReadTasksErrors(t *testing.T) {
	// read reads the tasks file that holds in.
	read := func(in string) error {
		p := filepath.Join(t.TempDir(), "tasks.jsonl")
		if err := os.WriteFile(p, []byte(in), 0o644); err != nil {
			return err
		}
		_, err := ReadTasks(p, true)
		return err
	}
	table.Errors(t, "ReadTasks", read, []table.Case[string, string]{
		{"bad json", "{\"id\": \"1\", \"query\": \"x\", \"gold\": [\"a\"]}\n{oops\n", "tasks.jsonl:2: not a JSON task"},
		{"no id", `{"query": "x", "gold": ["a"]}`, "tasks.jsonl:1: field \"id\" missing"},
		{"empty query", `{"id": 1, "query": "  ", "gold": ["a"]}`, "field \"query\" missing or empty"},
		{"no gold", `{"id": 1, "query": "q"}`, "field \"gold\" missing or empty"},
		{"empty file", "\n\n", "no tasks"},
	})
	p := filepath.Join(t.TempDir(), "ok.jsonl")
	os.WriteFile(p, []byte(`{"id": 7, "query": "q", "gold": ["a"], "extra": true}`+"\n"), 0o644)
	tasks, err := ReadTasks(p, true)
	if err != nil || len(tasks) != 1 || tasks[0].ID != "7" || tasks[0].Line != 1 {
		t.Fatalf("ReadTasks = %+v, %v", tasks, err)
	}
}

func TestScoreMain(t *testing.T) {
	tests := []struct {
		name         string
		ranked, gold []string
		main         string
		want         MainScores
	}{
		{"main first, one of two prerequisites", []string{"m", "a", "x"}, []string{"a", "b", "m"}, "m", MainScores{RR: 1, Coverage: 0.5, HasPrereq: true}},
		{"main third", []string{"a", "b", "m"}, []string{"a", "b", "m"}, "m", MainScores{RR: 1.0 / 3, Coverage: 1, HasPrereq: true}},
		{"main outside k: no coverage", []string{"a", "b", "x", "m"}, []string{"a", "m"}, "m", MainScores{RR: 0.25, Coverage: 0, HasPrereq: true}},
		{"main missing", []string{"a"}, []string{"a", "m"}, "m", MainScores{HasPrereq: true}},
		{"main alone", []string{"m"}, []string{"m"}, "m", MainScores{RR: 1}},
	}
	for _, tc := range tests {
		if got := ScoreMain(tc.ranked, tc.gold, tc.main, 3); got != tc.want {
			t.Errorf("%s: got %+v, want %+v", tc.name, got, tc.want)
		}
	}
}
