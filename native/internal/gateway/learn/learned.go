package learn

import (
	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/native/internal/builder"
)

// learnedEdge is an edge of the graph whose evidence includes use: its two tools ran together
// in successful traces.
type learnedEdge struct {
	From, To string
	Weight   float32
	State    string // graphs.State: confirmed, uncertain, unvalidated or scaffold
	Type     string // dependency, workflow, alternative or semantic
	Runs     int    // successful traces that used both
}

// coUse counts, per unordered pair of the graph's tools, the successful traces that used both.
// This is exactly when the builder's trace channel scores a pair above 0 (builder's trace:
// co(i, j) > 0 over the successful runs, tools outside the library skipped), so an edge whose
// pair it counts has the runs among its evidence.
func coUse(g *graphs.Graph, traces []builder.Trace) map[[2]int32]int {
	index := make(map[string]int32, g.NumSkills())
	for i := range g.NumSkills() {
		index[g.Name(i)] = int32(i)
	}
	co := map[[2]int32]int{}
	var ids []int32
	for _, t := range traces {
		if t.Failed {
			continue
		}
		ids = ids[:0]
		for _, name := range t.Skills {
			if id, ok := index[name]; ok {
				dup := false
				for _, x := range ids {
					dup = dup || x == id
				}
				if !dup {
					ids = append(ids, id)
				}
			}
		}
		for a, x := range ids {
			for _, y := range ids[a+1:] {
				co[[2]int32{min(x, y), max(x, y)}]++
			}
		}
	}
	return co
}

// learnedEdges calls fn for every edge of g whose pair the successful traces used together.
func learnedEdges(g *graphs.Graph, traces []builder.Trace, fn func(i, e, runs int)) {
	co := coUse(g, traces)
	if len(co) == 0 {
		return
	}
	for i := range g.NumSkills() {
		lo, hi := g.Out(i)
		for e := lo; e < hi; e++ {
			j := g.Target(e)
			if n := co[[2]int32{int32(min(i, j)), int32(max(i, j))}]; n > 0 {
				fn(i, e, n)
			}
		}
	}
}

// countFromUse is the number of edges of g learned from use (learnedEdges).
func countFromUse(g *graphs.Graph, traces []builder.Trace) int {
	n := 0
	learnedEdges(g, traces, func(int, int, int) { n++ })
	return n
}

// learned lists the current graph's edges learned from use, in the graph's order (by source,
// then target); nil before the first graph or when the graph's build state is unknown.
func (l *Loop) learned() []learnedEdge {
	c := l.cur.Load()
	if c == nil || c.state == nil {
		return nil
	}
	var out []learnedEdge
	g := c.graph
	learnedEdges(g, runsOf(c.state), func(i, e, runs int) {
		out = append(out, learnedEdge{From: g.Name(i), To: g.Name(g.Target(e)), Weight: g.Weight(e),
			State: g.State(e).String(), Type: g.Type(e).String(), Runs: runs})
	})
	return out
}
