package engine

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/caskg/caskg/graphs"
)

// evidenceLibrary has one seed for "pdf tables spreadsheet" (pdf-reader, with Seeds: 1) and
// around it each kind of evidence: a match beyond the seeds with no edge (sheet-writer), a
// prerequisite only the graph brings (ocr-scan), a match whose weak edge adds less than its own
// match (table-style), and a look-alike linked both ways (chart-maker).
func evidenceLibrary(t *testing.T) *Engine {
	skills := []testSkill{
		{"pdf-reader", "Read pdf tables into rows of a spreadsheet.", ""},
		{"sheet-writer", "Write a spreadsheet.", ""},
		{"ocr-scan", "Recognize characters in a scanned image.", ""},
		{"table-style", "Style tables.", ""},
		{"chart-maker", "Draw charts.", ""},
		{"unrelated", "Water the plants.", ""},
	}
	const reader, writer, ocr, style, chart = 0, 1, 2, 3, 4
	edge := func(s, d int, w float32, st graphs.State, r graphs.Relation) graphs.Edge {
		return graphs.Edge{Source: s, Target: d, Weight: w, Assoc: w, State: st, Type: r}
	}
	return newTestEngine(t, skills, []graphs.Edge{
		edge(ocr, reader, 0.9, graphs.Confirmed, graphs.Dependency),
		edge(reader, style, 0.05, graphs.Uncertain, graphs.Semantic),
		edge(style, reader, 0.05, graphs.Uncertain, graphs.Semantic),
		edge(reader, chart, 0.9, graphs.Confirmed, graphs.Semantic),
		edge(chart, reader, 0.9, graphs.Confirmed, graphs.Semantic),
	})
}

func TestEvidence(t *testing.T) {
	e := evidenceLibrary(t)
	res := query(t, e, Request{Query: "pdf tables spreadsheet", Seeds: 1})
	type evidence struct {
		SeedRank int
		Graph    bool
		Why      string
		From     []string // Via's neighbours, in order
	}
	got := map[string]evidence{}
	for _, r := range res {
		ev := evidence{SeedRank: r.SeedRank, Graph: r.Graph, Why: Why(r)}
		for _, v := range r.Via {
			ev.From = append(ev.From, v.From)
		}
		got[r.Name] = ev
	}
	tests := []struct {
		name string
		want evidence
	}{
		{"pdf-reader", evidence{SeedRank: 1, Why: "seed #1", From: []string{"ocr-scan", "chart-maker", "table-style"}}},
		{"sheet-writer", evidence{Why: "match"}},
		{"ocr-scan", evidence{Graph: true, Why: "via graph", From: []string{"pdf-reader"}}},
		{"table-style", evidence{Why: "match", From: []string{"pdf-reader"}}},
		{"chart-maker", evidence{Graph: true, Why: "via graph", From: []string{"pdf-reader"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, ok := got[tt.name]
			if !ok {
				t.Fatalf("not in the answer %v", names(res))
			}
			if diff := cmp.Diff(tt.want, g); diff != "" {
				t.Errorf("evidence (-want +got):\n%s", diff)
			}
		})
	}
}

// TestEvidenceTellsTheTruth holds the rule a user checks: a result is via graph exactly when
// the graph changed its score, so every other result scores as it does without the graph.
func TestEvidenceTellsTheTruth(t *testing.T) {
	libs := []struct {
		name    string
		e       *Engine
		queries []string
	}{
		{"evidence library", evidenceLibrary(t), []string{"pdf tables spreadsheet", "charts", "scanned tables", "spreadsheet"}},
		{"kitchen", kitchen(), []string{"boil", "boil boil dishes", "hot water for the tea", "pick the object", "bread"}},
	}
	for _, lib := range libs {
		for _, q := range lib.queries {
			for _, seeds := range []int{1, 2, DefaultSeeds} {
				plain := map[string]float64{}
				for _, r := range query(t, lib.e, Request{Query: q, Seeds: seeds, K: MaxK, NoGraph: true}) {
					if r.Graph {
						t.Errorf("%s %q: %s marked graph without the graph", lib.name, q, r.Name)
					}
					plain[r.Name] = r.Score
				}
				for _, r := range query(t, lib.e, Request{Query: q, Seeds: seeds, K: MaxK}) {
					own, matched := plain[r.Name]
					switch {
					case r.Graph && matched && r.Score <= own:
						t.Errorf("%s %q seeds %d: %s via graph, but scores %v, %v without the graph", lib.name, q, seeds, r.Name, r.Score, own)
					case !r.Graph && (!matched || r.Score != own):
						t.Errorf("%s %q seeds %d: %s not via graph, but scores %v, without the graph %v (matched %v)", lib.name, q, seeds, r.Name, r.Score, own, matched)
					}
				}
			}
		}
	}
}
