package engine

import (
	"strconv"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/graphs/jsontext"
)

// Learning is what a graph has learned from use, as every door reports it (caskg inspect, the
// health route, MCP graph_info, the playground), so they say the same thing in the same words.
//
// A graph has learned nothing yet (Cold) when its build counted no runs: no traces, no
// feedback, nothing the gateway recorded. Its live edges (confirmed and uncertain) then come
// from the skills' text alone, checked by the offline probes; that is the cold start, and the
// graph adds little where workflows are not written down. A graph with no live edges at all
// adds nothing to the match, whatever its runs.
type Learning struct {
	Runs int    `json:"runs"`       // runs (traces, feedback, gateway sessions) the build counted
	Live int    `json:"live_edges"` // confirmed and uncertain edges
	Cold bool   `json:"cold"`       // Runs is 0: learned nothing from use yet
	Note string `json:"note"`       // a sentence for people: the state and, when cold, how it learns
}

// howItLearns names the three ways a graph learns from use.
const howItLearns = "It learns from runs of agents: serve them through `caskg gateway`, which " +
	"records each session's calls; or `caskg traces import` their logs and run `caskg update`; " +
	"or have them report the skills they used as feedback (MCP report_skill_use, POST /v1/feedback), " +
	"then `caskg update`."

// LearningOf reads g's learning state: the runs from its build parameters ("traces"; an
// artifact whose parameters do not record them counts as having none) and the live edges.
func LearningOf(g *graphs.Graph) Learning {
	var l Learning
	for e := range g.NumEdges() {
		if s := g.State(e); s == graphs.Confirmed || s == graphs.Uncertain {
			l.Live++
		}
	}
	l.Runs = paramRuns(g.Params())
	l.Cold = l.Runs == 0
	edges := strconv.Itoa(l.Live) + " live edges"
	if l.Live == 1 {
		edges = "1 live edge"
	}
	switch {
	case l.Live == 0 && l.Cold:
		l.Note = "This graph has learned nothing yet: no runs, and no live edges, so it adds nothing to the match. " + howItLearns
	case l.Cold:
		l.Note = "This graph has learned nothing from use yet: no runs; its " + edges + " (confirmed, uncertain) come from the skills' text alone. " + howItLearns
	case l.Live == 0:
		l.Note = "This graph counted " + runs(l.Runs) + " but has no live edges, so it adds nothing to the match yet: runs confirm an edge where skills recur together."
	default:
		l.Note = "This graph has learned from " + runs(l.Runs) + "; " + edges + " (confirmed, uncertain)."
	}
	return l
}

// AppendJSON appends l as JSON, byte for byte as encoding/json.Marshal writes it, for the
// hosts that write their JSON by hand to keep encoding/json out of the WebAssembly module.
func (l Learning) AppendJSON(b []byte) []byte {
	b = append(b, `{"runs":`...)
	b = strconv.AppendInt(b, int64(l.Runs), 10)
	b = append(b, `,"live_edges":`...)
	b = strconv.AppendInt(b, int64(l.Live), 10)
	b = append(b, `,"cold":`...)
	b = strconv.AppendBool(b, l.Cold)
	b = append(b, `,"note":`...)
	b = jsontext.AppendString(b, l.Note)
	return append(b, '}')
}

func runs(n int) string {
	if n == 1 {
		return "1 run"
	}
	return strconv.Itoa(n) + " runs"
}

// paramRuns returns the "traces" member of the build parameters p, 0 when p is not a JSON
// object or has no such whole number.
func paramRuns(p []byte) int {
	if len(p) == 0 {
		return 0
	}
	d := jsontext.NewDecoder(p)
	n := 0
	err := d.Object(func(key string) error {
		if key != "traces" {
			return d.Skip()
		}
		v, err := d.Int(strconv.IntSize)
		if err == nil && v > 0 {
			n = int(v)
		}
		return err
	})
	if err != nil {
		return 0
	}
	return n
}
