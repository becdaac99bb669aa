package eval

import (
	"errors"
	"fmt"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/wasm/engine"
)

// ArtifactScores is one artifact scored on a task set: what caskg eval prints with --json.
type ArtifactScores struct {
	Artifact string                 `json:"artifact"`
	Tasks    string                 `json:"tasks"`
	Mode     string                 `json:"mode"` // "graph" or "no-graph"
	Summary  Summary                `json:"summary"`
	Unknown  int                    `json:"unknown_gold"` // gold names not in the artifact
	Edges    map[string]*EdgeScores `json:"edges,omitempty"`
}

// ScoreArtifact answers every task with req, its query set to the task's, and averages the
// metrics at the cutoffs ks (ascending). A K of 0 asks for the largest cutoff. Artifact, Tasks
// and Edges (ScoreGraphEdges) are the caller's to fill.
func ScoreArtifact(eng *engine.Engine, tasks []Task, req engine.Request, ks []int) (*ArtifactScores, error) {
	if len(ks) == 0 {
		return nil, errors.New("eval: no cutoffs")
	}
	g := eng.Graph()
	known := make(map[string]bool, g.NumSkills())
	for i := range g.NumSkills() {
		known[g.Name(i)] = true
	}
	if req.K == 0 {
		req.K = ks[len(ks)-1]
	}
	rep := &ArtifactScores{Mode: "graph"}
	if req.NoGraph {
		rep.Mode = "no-graph"
	}
	var all []Scores
	for _, t := range tasks {
		for _, name := range t.Gold {
			if !known[name] {
				rep.Unknown++
			}
		}
		req.Query = t.Query
		resp, err := eng.Query(req)
		if err != nil {
			return nil, fmt.Errorf("task %s (line %d): %w", t.ID, t.Line, err)
		}
		names := make([]string, len(resp.Results))
		for i, r := range resp.Results {
			names[i] = r.Name
		}
		all = append(all, Score(names, t.Gold, ks))
	}
	rep.Summary = Summarize(all, ks)
	return rep, nil
}

// ScoreGraphEdges scores the published edges of g against gold, in all ("all") and by state (the
// state's name). Gold edges with an endpoint not in g are left out.
func ScoreGraphEdges(g *graphs.Graph, gold []GoldEdge) map[string]*EdgeScores {
	known := make(map[string]bool, g.NumSkills())
	for i := range g.NumSkills() {
		known[g.Name(i)] = true
	}
	byState := map[string][][2]string{}
	var all [][2]string
	for u := range g.NumSkills() {
		lo, hi := g.Out(u)
		for e := lo; e < hi; e++ {
			pair := [2]string{g.Name(u), g.Name(g.Target(e))}
			all = append(all, pair)
			st := g.State(e).String()
			byState[st] = append(byState[st], pair)
		}
	}
	out := map[string]*EdgeScores{}
	s := scoreEdges(all, gold, known)
	out["all"] = &s
	for st, pairs := range byState {
		s := scoreEdges(pairs, gold, known)
		out[st] = &s
	}
	return out
}
