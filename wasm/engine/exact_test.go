package engine

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestQueryMatchesExactPPR holds the engine, which propagates by forward push with the error
// bound PushEpsilon leaves (Response.Residual), to the same engine propagating by power
// iteration run to convergence (CheckExactPPR). The real 859-skill library is held to it in
// TestRealQueryMatchesExactPPR.
func TestQueryMatchesExactPPR(t *testing.T) {
	tests := []struct {
		name    string
		e       *Engine
		queries []Request
	}{
		{"kitchen", kitchen(), deterministicQueries},
		{"greek", newTestEngine(t, greekSkills, greekEdges), []Request{{Query: "alpha"}, {Query: "alpha", Seeds: 1, K: MaxK}}},
		{"tea", newRenderEngine(t, teaSkills, teaEdges), []Request{{Query: "boil water", K: 3, Render: true}, {Query: "tea", K: 4}}},
		{"random 2000", randomLibrary(t, 2000, 32), fastRequests()},
		{"random 5000, no vectors", randomLibrary(t, 5000, 0), fastRequests()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, req := range tt.queries {
				CheckExactPPR(t, tt.e, req)
			}
		})
	}
}

// fastRequests are fastQueries at several k and seed counts.
func fastRequests() []Request {
	var out []Request
	for i, q := range fastQueries {
		out = append(out, Request{Query: q, K: 5 + 5*(i%3), Seeds: 3 + i%4})
	}
	return out
}

// CheckExactPPR fails t unless e answers req with forward push as with power iteration run to
// convergence, within push's error bound: the same results, scores and seed ranks, and the same
// Via lists but for edges out of results whose exact relevance is at most the residual, which
// push may not reach (then the next edge in order takes the place). Every edge push lists has
// carried relevance: its source's exact relevance is positive.
func CheckExactPPR(t testing.TB, e *Engine, req Request) {
	t.Helper()
	got, err := e.Query(req)
	if err != nil {
		t.Fatal(err)
	}
	e.SetExactPPR(true)
	want, err := e.Query(req)
	e.SetExactPPR(false)
	if err != nil {
		t.Fatal(err)
	}
	if req.NoGraph || len(want.Results) == 0 {
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%q: (-exact +push):\n%s", req.Query, diff)
		}
		return
	}
	if want.Iterations == 0 || want.Iterations >= exactIterations {
		t.Fatalf("%q: the reference ran %d power iterations", req.Query, want.Iterations)
	}
	strip := func(rs []Result) []Result {
		out := append([]Result(nil), rs...)
		for i := range out {
			out[i].Via = nil
		}
		return out
	}
	if diff := cmp.Diff(strip(want.Results), strip(got.Results)); diff != "" {
		t.Fatalf("%q: forward push (residual %.2e, %d pushes) ranks unlike converged power iteration (-exact +push):\n%s",
			req.Query, got.Residual, got.Pushes, diff)
	}
	pi, err := e.Personalization(req)
	if err != nil {
		t.Fatal(err)
	}
	exact, _ := e.PowerIteration(pi, orDefault(req.Gamma, DefaultGamma), exactTolerance, exactIterations)
	id := map[string]int{}
	for i := range e.g.NumSkills() {
		id[e.g.Name(i)] = i
	}
	for i, r := range got.Results {
		listed := map[Via]bool{}
		for _, v := range r.Via {
			listed[v] = true
			if exact[id[v.From]] <= 0 {
				t.Errorf("%q: %s lists an edge from %s, which no relevance reaches", req.Query, r.Name, v.From)
			}
		}
		for _, v := range want.Results[i].Via {
			if !listed[v] && exact[id[v.From]] > got.Residual {
				t.Errorf("%q: %s leaves out the edge from %s (exact relevance %.3g, above the bound %.3g); exact %v, push %v",
					req.Query, r.Name, v.From, exact[id[v.From]], got.Residual, want.Results[i].Via, r.Via)
			}
		}
	}
	if !cmp.Equal(want.Results, got.Results) {
		t.Logf("%q: Via differs within the bound (residual %.2e)", req.Query, got.Residual)
	}
}
