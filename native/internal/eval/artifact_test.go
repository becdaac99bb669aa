package eval_test

import (
	"strings"
	"testing"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/native/internal/eval"
	"github.com/caskg/caskg/native/testlib"
	"github.com/caskg/caskg/wasm/engine"
	"github.com/google/go-cmp/cmp"
)

// sampleEngine is an engine over the default artifact of the sample library.
func sampleEngine(t *testing.T) *engine.Engine {
	t.Helper()
	g := testlib.Decode(t, testlib.Sample(t))
	return engine.New(g)
}

func TestScoreArtifact(t *testing.T) {
	eng := sampleEngine(t)
	tasks, err := eval.ReadTasks("../../../graphs/sample-tasks.jsonl", true)
	if err != nil {
		t.Fatal(err)
	}
	unknown := append(tasks[:1:1], eval.Task{ID: "u", Query: tasks[0].Query, Gold: []string{"no-such-skill", tasks[0].Gold[0]}})
	tests := []struct {
		name      string
		tasks     []eval.Task
		req       engine.Request
		ks        []int
		mode      string
		unknown   int
		sameAsK10 bool
	}{
		{"graph", tasks, engine.Request{}, []int{5, 10}, "graph", 0, true},
		{"explicit k", tasks, engine.Request{K: 10}, []int{5, 10}, "graph", 0, true},
		{"no graph", tasks, engine.Request{NoGraph: true}, []int{5, 10}, "no-graph", 0, false},
		{"unknown gold", unknown, engine.Request{}, []int{5, 10}, "graph", 1, false},
	}
	var graph *eval.ArtifactScores
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := eval.ScoreArtifact(eng, tc.tasks, tc.req, tc.ks)
			if err != nil {
				t.Fatal(err)
			}
			if got.Mode != tc.mode || got.Unknown != tc.unknown || got.Summary.Tasks != len(tc.tasks) {
				t.Errorf("mode %q, %d unknown gold, %d tasks; want %q, %d, %d", got.Mode, got.Unknown, got.Summary.Tasks,
					tc.mode, tc.unknown, len(tc.tasks))
			}
			switch {
			case graph == nil:
				graph = got
			case tc.sameAsK10 && !cmp.Equal(got.Summary, graph.Summary):
				t.Errorf("K 0 and K 10 disagree: %+v vs %+v", got.Summary, graph.Summary)
			case tc.mode == "no-graph" && got.Summary.Complete[10] >= graph.Summary.Complete[10]:
				t.Errorf("COMP@10: the seeds alone %v match the graph %v", got.Summary.Complete[10], graph.Summary.Complete[10])
			}
		})
	}
	if _, err := eval.ScoreArtifact(eng, tasks, engine.Request{}, nil); err == nil || err.Error() != "eval: no cutoffs" {
		t.Errorf("no cutoffs: error %v", err)
	}
}

func TestScoreGraphEdges(t *testing.T) {
	g := sampleEngine(t).Graph()
	gold := testlib.SampleGold()
	known := len(gold)
	gold = append(gold, eval.GoldEdge{Source: "no-such-skill", Target: "pick-up-object"})
	got := eval.ScoreGraphEdges(g, gold)
	all := got["all"]
	if all == nil || all.Published != g.NumEdges() || all.Gold != known {
		t.Fatalf("all: %+v; want %d published and %d gold edges (the unknown one left out)", all, g.NumEdges(), known)
	}
	var states []string
	for _, s := range graphs.States() {
		states = append(states, s.String())
	}
	var published, hits int
	for st, s := range got {
		if st == "all" {
			continue
		}
		if !strings.Contains(strings.Join(states, " "), st) {
			t.Errorf("state %q is not an edge state", st)
		}
		published += s.Published
		hits += s.Hits
	}
	if published != all.Published || hits != all.Hits {
		t.Errorf("the states sum to %d edges and %d hits, all has %d and %d", published, hits, all.Published, all.Hits)
	}
}
