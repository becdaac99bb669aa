package engine

import (
	stdcmp "cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/caskg/caskg/graphs"
)

// testSkill is one skill of a hand-built test library.
type testSkill struct{ name, desc, body string }

// newTestEngine encodes skills and edges into an artifact the way the builder does (lexicon from
// BuildLexicon), decodes it and prepares an engine over it.
func newTestEngine(tb testing.TB, skills []testSkill, edges []graphs.Edge) *Engine {
	tb.Helper()
	return artifactEngine(tb, testArtifact(skills, edges))
}

// testArtifact is a test library with its edges and its lexicon.
func testArtifact(skills []testSkill, edges []graphs.Edge) *graphs.Artifact {
	art := &graphs.Artifact{Edges: edges}
	for _, s := range skills {
		art.Skills = append(art.Skills, graphs.Skill{Name: s.name, Description: s.desc, Body: s.body})
	}
	art.Lexicon = lexicon(art.Skills)
	return art
}

// lexicon is the lexicon the builder makes for skills, from their names, descriptions and bodies.
func lexicon(skills []graphs.Skill) graphs.Lexicon {
	docs := make([]Doc, len(skills))
	for i, s := range skills {
		docs[i] = Doc{Name: s.Name, Description: s.Description, Body: s.Body}
	}
	return BuildLexicon(docs)
}

// artifactEngine encodes art, decodes it and prepares an engine over it, as a host does with the
// bytes it is given.
func artifactEngine(tb testing.TB, art *graphs.Artifact) *Engine {
	tb.Helper()
	e, err := buildEngine(art)
	if err != nil {
		tb.Fatal(err)
	}
	return e
}

// buildEngine is artifactEngine returning the error, for the libraries built once per test
// binary.
func buildEngine(art *graphs.Artifact) (*Engine, error) {
	g, err := decodeArtifact(art)
	if err != nil {
		return nil, err
	}
	return New(g), nil
}

// decodeArtifact encodes art and decodes the bytes, as a host gets them.
func decodeArtifact(art *graphs.Artifact) (*graphs.Graph, error) {
	b, err := graphs.Encode(art)
	if err != nil {
		return nil, err
	}
	return graphs.Decode(b)
}

// The kitchen library: a dependency chain fill-kettle → boil-water → brew-tea, an alternative
// into boil-water, a decoy that outranks pick_up_object lexically, and an isolated skill.
var kitchenSkills = []testSkill{
	{"fill-kettle", "Fill a kettle from the tap.", ""},
	{"boil-water", "Boil water on the stove until it bubbles.", ""},
	{"brew-tea", "Steep tea leaves in a cup of hot water.", ""},
	{"heat-object-in-microwave", "Warm food in the microwave oven.", ""},
	{"pick_up_object", "Grab an item with the gripper.", ""},
	{"grasp-object", "Pick up an object: pick the object up gently, object by object.", ""},
	{"slice-bread", "Cut bread with a knife.", ""},
	{"wash-dishes", "Clean plates in the sink.", ""},
}

const (
	fillKettle = iota
	boilWater
	brewTea
	microwave
	pickUpObject
	graspObject
	sliceBread
	washDishes
)

var kitchenEdges = []graphs.Edge{
	{Source: fillKettle, Target: boilWater, Weight: 0.9, Assoc: 0.9, State: graphs.Confirmed, Type: graphs.Dependency},
	{Source: boilWater, Target: brewTea, Weight: 0.6, Assoc: 0.7, State: graphs.Uncertain, Type: graphs.Workflow},
	{Source: microwave, Target: boilWater, Weight: 0.2, Assoc: 0.2, State: graphs.Unvalidated, Type: graphs.Alternative},
	{Source: pickUpObject, Target: sliceBread, Weight: 0.5, Assoc: 0.1, State: graphs.Scaffold, Type: graphs.Dependency},
	{Source: graspObject, Target: pickUpObject, Weight: 0.3, Assoc: 0.3, State: graphs.Unvalidated, Type: graphs.Semantic},
}

var kitchen = sync.OnceValue(func() *Engine {
	e, err := buildEngine(testArtifact(kitchenSkills, kitchenEdges))
	if err != nil {
		panic(err)
	}
	return e
})

func names(rs []Result) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Name)
	}
	return out
}

func query(t *testing.T, e *Engine, req Request) []Result {
	t.Helper()
	resp, err := e.Query(req)
	if err != nil {
		t.Fatalf("Query(%+v): %v", req, err)
	}
	return resp.Results
}

// --- PPR exactness ---------------------------------------------------------------------------

// The Greek library: "alpha" is in alpha-main's name and description and in epsilon-lonely's
// body, nowhere else, so the query "alpha" has exactly two seeds in a known order.
var greekSkills = []testSkill{
	{"alpha-main", "Alpha task runner.", ""},
	{"beta-follow", "Follows on from the main step.", ""},
	{"gamma-prereq", "Prepares the inputs.", ""},
	{"delta-similar", "Looks like the main step.", ""},
	{"epsilon-lonely", "Stands on its own.", "Mentions alpha once."},
	{"zeta-alt", "Another way to finish.", ""},
}

var greekEdges = []graphs.Edge{
	// gamma is a prerequisite of alpha (reverse weight 1.0) ...
	{Source: 2, Target: 0, Weight: 0.8, State: graphs.Confirmed, Type: graphs.Dependency},
	// ... and alpha also points back at gamma: row 0 gets two entries towards 2 that add up.
	{Source: 0, Target: 2, Weight: 0.1, State: graphs.Scaffold, Type: graphs.Semantic},
	{Source: 0, Target: 1, Weight: 0.6, State: graphs.Uncertain, Type: graphs.Workflow},
	{Source: 0, Target: 3, Weight: 0.5, State: graphs.Unvalidated, Type: graphs.Semantic},
	{Source: 3, Target: 5, Weight: 0.4, State: graphs.Confirmed, Type: graphs.Alternative},
	{Source: 5, Target: 1, Weight: 0.7, State: graphs.Confirmed, Type: graphs.Dependency},
	// epsilon (4) has no edges: a dangling row that keeps its mass.
}

// transition builds the dense row-normalized propagation matrix independently of New: each
// edge u→v adds w at (u,v) and w·reverse(type) at (v,u); an all-zero row keeps its mass (T[u][u]=1).
func transition(n int, edges []graphs.Edge) [][]float64 {
	reverse := map[graphs.Relation]float64{
		graphs.Dependency: 1.0, graphs.Workflow: 0.5, graphs.Semantic: 0.2, graphs.Alternative: 0.1,
	}
	m := make([][]float64, n)
	for i := range m {
		m[i] = make([]float64, n)
	}
	for _, e := range edges {
		w := float64(e.Weight)
		m[e.Source][e.Target] += w
		m[e.Target][e.Source] += w * reverse[e.Type]
	}
	for u := range m {
		var sum float64
		for _, x := range m[u] {
			sum += x
		}
		if sum == 0 {
			m[u][u] = 1
			continue
		}
		for v := range m[u] {
			m[u][v] /= sum
		}
	}
	return m
}

// stationary solves p = γπ + (1−γ)Tᵀp, i.e. (I − (1−γ)Tᵀ)p = γπ, by Gaussian elimination with
// partial pivoting.
func stationary(t [][]float64, pi []float64, gamma float64) []float64 {
	n := len(pi)
	a := make([][]float64, n)
	for i := range a {
		a[i] = make([]float64, n+1)
		for j := range n {
			a[i][j] = -(1 - gamma) * t[j][i]
		}
		a[i][i] += 1
		a[i][n] = gamma * pi[i]
	}
	for c := range n {
		piv := c
		for r := c + 1; r < n; r++ {
			if math.Abs(a[r][c]) > math.Abs(a[piv][c]) {
				piv = r
			}
		}
		a[c], a[piv] = a[piv], a[c]
		for r := range n {
			if r == c || a[r][c] == 0 {
				continue
			}
			f := a[r][c] / a[c][c]
			for j := c; j <= n; j++ {
				a[r][j] -= f * a[c][j]
			}
		}
	}
	p := make([]float64, n)
	for i := range p {
		p[i] = a[i][n] / a[i][i]
	}
	return p
}

// iterate runs the power iteration p ← γπ + (1−γ)Tᵀp from p = π for iters steps.
func iterate(t [][]float64, pi []float64, gamma float64, iters int) []float64 {
	n := len(pi)
	p := slices.Clone(pi)
	for range iters {
		next := make([]float64, n)
		for v := range n {
			next[v] = gamma * pi[v]
			for u := range n {
				next[v] += (1 - gamma) * t[u][v] * p[u]
			}
		}
		p = next
	}
	return p
}

// inverseRank is the seed distribution π_i ∝ 1/i over ids in seed order.
func inverseRank(n int, ids ...int) []float64 {
	pi := make([]float64, n)
	var sum float64
	for i := range ids {
		sum += 1 / float64(i+1)
	}
	for i, id := range ids {
		pi[id] = 1 / float64(i+1) / sum
	}
	return pi
}

func TestPPRExact(t *testing.T) {
	e := newTestEngine(t, greekSkills, greekEdges)
	n := len(greekSkills)
	T := transition(n, greekEdges)

	// The seeds are the lexical order: alpha-main (name) before epsilon-lonely (body).
	lex := query(t, e, Request{Query: "alpha", NoGraph: true})
	if diff := cmp.Diff([]string{"alpha-main", "epsilon-lonely"}, names(lex)); diff != "" {
		t.Fatalf("lexical seeds for %q (-want +got):\n%s", "alpha", diff)
	}

	tests := []struct {
		name  string
		seeds int
		gamma float64
		pi    []float64
	}{
		// At γ = .2 the engine stops at MaxIterations, ~3e-6 from the fixed point per score:
		// checked against the bound below, not against 1e-6.
		{"two seeds, default gamma", 0, 0, inverseRank(n, 0, 4)},
		{"two seeds, gamma .5", 2, 0.5, inverseRank(n, 0, 4)},
		{"two seeds, gamma .85", 5, 0.85, inverseRank(n, 0, 4)},
		{"one seed", 1, 0.3, inverseRank(n, 0)},
		{"gamma 1 is the seed distribution", 2, 1, inverseRank(n, 0, 4)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := Request{Query: "alpha", K: MaxK, Seeds: tt.seeds, Gamma: tt.gamma}
			pi, err := e.Personalization(req)
			if err != nil {
				t.Fatal(err)
			}
			// The restart mass is ∝ the seeds' fused scores: the same seeds as 1/rank, and
			// alpha-main (a name hit) far above epsilon-lonely (a body hit).
			if (pi[0] > 0) != (tt.pi[0] > 0) || (pi[4] > 0) != (tt.pi[4] > 0) || tt.pi[4] > 0 && pi[0] <= pi[4] {
				t.Fatalf("restart vector %v, want mass on the seeds of %v, the name hit first", pi, tt.pi)
			}
			tt.pi = pi
			gamma := stdcmp.Or(tt.gamma, DefaultGamma)
			got, iters := e.PowerIteration(pi, gamma, Tolerance, MaxIterations)
			resp := struct{ Iterations int }{iters}
			var mass float64
			for _, s := range got {
				mass += s
			}
			if math.Abs(mass-1) > 1e-9 {
				t.Errorf("scores sum to %v, want 1 (PPR conserves mass)", mass)
			}

			// The engine's matrix: its iterates must equal a dense power iteration step for step.
			same := iterate(T, tt.pi, gamma, resp.Iterations)
			for v := range n {
				if math.Abs(got[v]-same[v]) > 1e-12 {
					t.Errorf("%s after %d iterations: score %.15f, dense iteration %.15f",
						greekSkills[v].name, resp.Iterations, got[v], same[v])
				}
			}

			// The fixed point. The engine stops when an iteration changes p by less than Tolerance
			// (L1), which leaves at most (1−γ)/γ·Tolerance to go, or after MaxIterations, which
			// leaves at most (1−γ)^MaxIterations of the starting error ‖π − p*‖₁.
			exact := stationary(T, tt.pi, gamma)
			var errL1, startL1 float64
			for v := range n {
				errL1 += math.Abs(got[v] - exact[v])
				startL1 += math.Abs(tt.pi[v] - exact[v])
			}
			bound := (1 - gamma) / gamma * Tolerance
			if resp.Iterations >= MaxIterations {
				bound = math.Pow(1-gamma, MaxIterations) * startL1
			}
			if errL1 > bound+1e-12 {
				t.Errorf("L1 distance to the exact solution %.3g after %d iterations, bound %.3g",
					errL1, resp.Iterations, bound)
			}
			if bound <= 1e-6 {
				for v := range n {
					if math.Abs(got[v]-exact[v]) > 1e-6 {
						t.Errorf("%s: score %.9f, exact %.9f", greekSkills[v].name, got[v], exact[v])
					}
				}
			}
			if tt.gamma >= 0.5 && resp.Iterations >= MaxIterations {
				t.Errorf("gamma %v took %d iterations; it converges in far fewer", gamma, resp.Iterations)
			}
			// epsilon-lonely has no edges: it keeps exactly its seed mass.
			if math.Abs(got[4]-tt.pi[4]) > 1e-12 {
				t.Errorf("dangling seed epsilon-lonely: score %v, want its seed mass %v", got[4], tt.pi[4])
			}
		})
	}
}

// TestPPRZeroWeightRow: a skill whose only published edges have weight 0 (the format allows
// weights in [0, 1]) has a row of T with no weight; such rows keep their mass, so a skill without usable edges does not leak relevance.
func TestPPRZeroWeightRow(t *testing.T) {
	skills := []testSkill{
		{"alpha-main", "Alpha task runner.", ""},
		{"beta-other", "Unrelated step.", ""},
		{"gamma-lonely", "Mentions alpha too.", ""},
	}
	edges := []graphs.Edge{{Source: 0, Target: 1, Weight: 0, State: graphs.Scaffold, Type: graphs.Workflow}}
	e := newTestEngine(t, skills, edges)
	pi, err := e.Personalization(Request{Query: "alpha"})
	if err != nil {
		t.Fatal(err)
	}
	exact := stationary(transition(len(skills), edges), pi, DefaultGamma)
	p, _ := e.PowerIteration(pi, DefaultGamma, Tolerance, MaxIterations)
	got := map[string]float64{}
	for v, x := range p {
		if x != 0 {
			got[skills[v].name] = x
		}
	}
	want := map[string]float64{"alpha-main": exact[0], "gamma-lonely": exact[2]}
	res := query(t, e, Request{Query: "alpha", K: 3})
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b float64) bool { return math.Abs(a-b) < 1e-6 })); diff != "" {
		t.Errorf("scores (-want +got):\n%s", diff)
	}
	if len(res) > 0 && res[0].Name != "alpha-main" {
		t.Errorf("top result %q, want the first seed alpha-main", res[0].Name)
	}
}

// --- query behaviour -------------------------------------------------------------------------

// bm25Order ranks docs for query with a plain BM25 written from the textbook formula, as an
// independent check of the lexical order.
func bm25Order(docs []testSkill, query string) []string {
	tf := make([]map[string]float64, len(docs))
	dl := make([]float64, len(docs))
	df := map[string]int{}
	for i, d := range docs {
		tf[i] = map[string]float64{}
		for _, f := range []struct {
			text string
			w    float64
		}{{d.name, WeightName}, {d.desc, WeightDescription}, {d.body, WeightBody}} {
			for _, term := range Tokenize(f.text) {
				if tf[i][term] == 0 {
					df[term]++
				}
				tf[i][term] += f.w
				dl[i] += f.w
			}
		}
	}
	var avg float64
	for _, l := range dl {
		avg += l
	}
	avg /= float64(len(docs))
	score := make([]float64, len(docs))
	for _, q := range Tokenize(query) {
		idf := math.Log(1 + (float64(len(docs))-float64(df[q])+0.5)/(float64(df[q])+0.5))
		for i := range docs {
			if f := tf[i][q]; f > 0 {
				score[i] += idf * f * (DefaultK1 + 1) / (f + DefaultK1*(1-DefaultB+DefaultB*dl[i]/avg))
			}
		}
	}
	var ids []int
	for i, s := range score {
		if s > 0 {
			ids = append(ids, i)
		}
	}
	slices.SortStableFunc(ids, func(a, b int) int { return -stdcmp.Compare(score[a], score[b]) })
	var out []string
	for _, i := range ids {
		out = append(out, docs[i].name)
	}
	return out
}

func TestQueryNoGraph(t *testing.T) {
	e := kitchen()
	tests := []struct {
		name  string
		query string
		seeds int
		k     int
	}{
		{"water, two seeds", "hot water for the tea", 2, 8},
		{"object, default seeds", "pick the object", 0, 3},
		{"k cuts the list", "water object tea", 1, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := bm25Order(kitchenSkills, tt.query)
			want = want[:min(stdcmp.Or(tt.k, DefaultK), len(want))]
			res := query(t, e, Request{Query: tt.query, NoGraph: true, Seeds: tt.seeds, K: tt.k})
			if diff := cmp.Diff(want, names(res)); diff != "" {
				t.Errorf("order (-want +got):\n%s", diff)
			}
			for i, r := range res {
				wantRank := 0
				if i < stdcmp.Or(tt.seeds, DefaultSeeds) {
					wantRank = i + 1
				}
				if r.SeedRank != wantRank {
					t.Errorf("%s: SeedRank %d, want %d", r.Name, r.SeedRank, wantRank)
				}
				if r.Via != nil {
					t.Errorf("%s: Via %v without a graph", r.Name, r.Via)
				}
				if i > 0 && r.Score > res[i-1].Score {
					t.Errorf("scores not descending: %v after %v", r.Score, res[i-1].Score)
				}
			}
		})
	}
}

func TestQueryPrerequisite(t *testing.T) {
	e := kitchen()
	const q = "boil"
	for _, term := range Tokenize(kitchenSkills[fillKettle].name + " " + kitchenSkills[fillKettle].desc) {
		if slices.Contains(Tokenize(q), term) {
			t.Fatalf("test setup: fill-kettle shares %q with the query", term)
		}
	}
	if got := names(query(t, e, Request{Query: q, NoGraph: true})); slices.Contains(got, "fill-kettle") {
		t.Fatalf("fill-kettle is a lexical match (%v); the test needs it reached only by the graph", got)
	}

	res := query(t, e, Request{Query: q})
	byName := map[string]Result{}
	for _, r := range res {
		byName[r.Name] = r
	}
	if got := names(res); !slices.Contains(got, "fill-kettle") || got[0] != "boil-water" {
		t.Fatalf("results %v: want boil-water first and its prerequisite fill-kettle included", got)
	}
	if r := byName["boil-water"]; r.SeedRank != 1 {
		t.Errorf("boil-water SeedRank %d, want 1", r.SeedRank)
	}
	wantVia := map[string][]Via{
		"fill-kettle": {{From: "boil-water", State: "confirmed", Weight: float32(0.9), Type: "dependency", Reverse: true}},
		"brew-tea":    {{From: "boil-water", State: "uncertain", Weight: float32(0.6), Type: "workflow"}},
		"heat-object-in-microwave": {{
			From: "boil-water", State: "unvalidated", Weight: float32(0.2), Type: "alternative", Reverse: true}},
	}
	for name, want := range wantVia {
		r := byName[name]
		if r.SeedRank != 0 {
			t.Errorf("%s: SeedRank %d, want 0 (not a seed)", name, r.SeedRank)
		}
		if diff := cmp.Diff(want, r.Via); diff != "" {
			t.Errorf("%s: Via (-want +got):\n%s", name, diff)
		}
	}
	// The prerequisite (reverse dependency, 1.0) pulls harder than the follow-up (forward 0.6)
	// and the alternative (reverse 0.1).
	if !(byName["fill-kettle"].Score > byName["brew-tea"].Score && byName["brew-tea"].Score > byName["heat-object-in-microwave"].Score) {
		t.Errorf("scores fill-kettle %v, brew-tea %v, microwave %v: want descending",
			byName["fill-kettle"].Score, byName["brew-tea"].Score, byName["heat-object-in-microwave"].Score)
	}
}

func TestQueryK(t *testing.T) {
	e := kitchen()
	n := len(kitchenSkills)
	tests := []struct {
		name string
		req  Request
		want []string
	}{
		// One seed; wash-dishes is a lexical hit beyond the seeds: it keeps its seed evidence
		// above the skills the graph reaches through weak edges.
		{"lexical hit beyond the seeds", Request{Query: "boil boil dishes", Seeds: 1}, []string{
			"boil-water", "wash-dishes", "fill-kettle", "brew-tea", "heat-object-in-microwave"}},
		{"k below the reached set", Request{Query: "boil", K: 2}, []string{"boil-water", "fill-kettle"}},
		{"k larger than the library", Request{Query: "boil", K: MaxK}, []string{
			"boil-water", "fill-kettle", "brew-tea", "heat-object-in-microwave"}},
		{"k larger than the library, no graph", Request{Query: "boil", K: MaxK, NoGraph: true}, []string{"boil-water"}},
		{"nothing matches", Request{Query: "zzzz qqqq"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := query(t, e, tt.req)
			if diff := cmp.Diff(tt.want, names(res)); diff != "" {
				t.Errorf("results (-want +got):\n%s", diff)
			}
		})
	}

	t.Run("lexical hit beyond the seeds", func(t *testing.T) {
		res := query(t, e, Request{Query: "boil boil dishes", Seeds: 1})
		got := res[1]
		if got.ID != washDishes || got.SeedRank != 0 || got.Via != nil || !(got.Score > 0 && got.Score < res[0].Score) {
			t.Errorf("second result %+v, want wash-dishes, no seed, no via, scored below the seed", got)
		}
	})

	t.Run("every skill at most once", func(t *testing.T) {
		res := query(t, e, Request{Query: "boil tea object bread dishes kettle microwave", K: MaxK, Seeds: MaxSeeds})
		got := names(res)
		if len(got) != n {
			t.Errorf("%d results, want all %d skills: %v", len(got), n, got)
		}
		slices.Sort(got)
		if len(slices.Compact(got)) != len(res) {
			t.Errorf("duplicate results: %v", got)
		}
	})
}

func TestQueryTypo(t *testing.T) {
	e := kitchen()
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"transposed letters", "micrwave", "heat-object-in-microwave"},
		{"missing letter in a sentence", "heat it in the microwve", "heat-object-in-microwave"},
		{"swapped letters", "kettel", "fill-kettle"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Lexically the corrected word ranks its skill first ...
			res := query(t, e, Request{Query: tt.in, NoGraph: true})
			if len(res) == 0 || res[0].Name != tt.want {
				t.Errorf("NoGraph: results %v, want %s first", names(res), tt.want)
			}
			// ... and with the graph it is the first seed (PPR may rank a neighbour above it).
			res = query(t, e, Request{Query: tt.in})
			i := slices.Index(names(res), tt.want)
			if i < 0 || res[i].SeedRank != 1 {
				t.Errorf("graph: results %v, want %s as seed 1", names(res), tt.want)
			}
		})
	}
}

func TestQueryIdentifier(t *testing.T) {
	e := kitchen()
	// Without the identifier the decoy wins on words, so the identifier is what decides below.
	if res := query(t, e, Request{Query: "use pick up object", NoGraph: true}); len(res) == 0 || res[0].Name != "grasp-object" {
		t.Fatalf("test setup: %q should rank grasp-object first, got %v", "use pick up object", names(res))
	}
	for _, q := range []string{"use pick_up_object", "use PickUpObject", "then run pick-up-object.", "call pick_up_objekt"} {
		t.Run(q, func(t *testing.T) {
			for _, noGraph := range []bool{true, false} {
				res := query(t, e, Request{Query: q, NoGraph: noGraph})
				if len(res) == 0 || res[0].Name != "pick_up_object" {
					t.Errorf("NoGraph=%v: results %v, want pick_up_object first", noGraph, names(res))
				} else if res[0].SeedRank != 1 {
					t.Errorf("NoGraph=%v: pick_up_object SeedRank %d, want 1", noGraph, res[0].SeedRank)
				}
			}
		})
	}
}

// TestQueryIdentifierWinsOutright: a near-identical name that is lexically stronger must not
// beat the skill the query names exactly.
func TestQueryIdentifierWinsOutright(t *testing.T) {
	e := newTestEngine(t, []testSkill{
		{"object-picker-pro", "Pick objects: the object picker picks every object, object by object.", ""},
		{"pick-up-objects", "Pick up many objects: pick object after object after object.", ""},
		{"pick_up_object", "Grab an item with the gripper.", ""},
	}, nil)
	lex := query(t, e, Request{Query: "use pick up object", NoGraph: true})
	if got := names(lex); len(got) == 0 || got[0] == "pick_up_object" {
		t.Fatalf("test setup: words alone should rank another skill first, got %v", got)
	}
	for _, noGraph := range []bool{true, false} {
		res := query(t, e, Request{Query: "use pick_up_object", NoGraph: noGraph})
		if got := names(res); len(got) == 0 || got[0] != "pick_up_object" {
			t.Errorf("NoGraph=%v: results %v, want pick_up_object first", noGraph, got)
		}
	}
}

func TestQueryErrors(t *testing.T) {
	e := kitchen()
	tests := []struct {
		name string
		req  Request
		is   error  // errors.Is target, or nil
		want string // substring of the message
	}{
		{"empty", Request{}, ErrEmptyQuery, ""},
		{"spaces", Request{Query: "   "}, ErrEmptyQuery, ""},
		{"whitespace", Request{Query: "\t\n\u00a0"}, ErrEmptyQuery, ""},
		{"too long", Request{Query: strings.Repeat("tea ", MaxQueryBytes/4) + "x"}, nil, "bytes"},
		{"negative k", Request{Query: "tea", K: -1}, nil, `field "k"`},
		{"k over max", Request{Query: "tea", K: MaxK + 1}, nil, `field "k"`},
		{"negative seeds", Request{Query: "tea", Seeds: -3}, nil, `field "seeds"`},
		{"seeds over max", Request{Query: "tea", Seeds: MaxSeeds + 1}, nil, `field "seeds"`},
		{"negative gamma", Request{Query: "tea", Gamma: -0.1}, nil, `field "gamma"`},
		{"gamma over 1", Request{Query: "tea", Gamma: 1.5}, nil, `field "gamma"`},
		{"gamma NaN", Request{Query: "tea", Gamma: math.NaN()}, nil, `field "gamma"`},
		{"gamma Inf", Request{Query: "tea", Gamma: math.Inf(1)}, nil, `field "gamma"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := e.Query(tt.req)
			switch {
			case err == nil:
				t.Fatalf("Query(%.40q...) = %v, want an error", tt.req.Query, names(resp.Results))
			case tt.is != nil && !errors.Is(err, tt.is):
				t.Errorf("error %v, want %v", err, tt.is)
			case !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "engine: "):
				t.Errorf("error %q, want the prefix \"engine: \" and %q", err, tt.want)
			}
		})
	}

	// The limits themselves are accepted.
	for _, req := range []Request{
		{Query: strings.Repeat("tea ", MaxQueryBytes/4)},
		{Query: "tea", K: MaxK, Seeds: MaxSeeds, Gamma: 1},
		{Query: "tea", K: 1, Seeds: 1, Gamma: math.SmallestNonzeroFloat64},
	} {
		if res, err := e.Query(req); err != nil || len(res.Results) == 0 {
			t.Errorf("Query(k %d, seeds %d, gamma %v, %d bytes) = %v, %v; want results",
				req.K, req.Seeds, req.Gamma, len(req.Query), names(res.Results), err)
		}
	}
}

var deterministicQueries = []Request{
	{Query: "boil water for tea"},
	{Query: "use pick_up_object then slice the bread", K: 5},
	{Query: "micrwave the food", Seeds: 2},
	{Query: "clean dishes and plates", NoGraph: true},
	{Query: "object object object", Gamma: 0.5, K: MaxK},
}

func TestQueryDeterministic(t *testing.T) {
	want := make([]Response, len(deterministicQueries))
	for i, req := range deterministicQueries {
		// A fresh engine over fresh bytes must answer the same.
		resp, err := newTestEngine(t, kitchenSkills, kitchenEdges).Query(req)
		if err != nil {
			t.Fatal(err)
		}
		want[i] = resp
	}
	e := kitchen()
	for range 3 {
		for i, req := range deterministicQueries {
			got, err := e.Query(req)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want[i], got); diff != "" {
				t.Errorf("Query(%q) changed between calls (-first +now):\n%s", req.Query, diff)
			}
		}
	}
}

// TestQueryConcurrent is meant for -race: Engine is documented safe for concurrent use.
func TestQueryConcurrent(t *testing.T) {
	e := kitchen()
	want := make([]Response, len(deterministicQueries))
	for i, req := range deterministicQueries {
		want[i], _ = e.Query(req)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for w := range 8 {
		wg.Go(func() {
			for j := range 25 {
				i := (w + j) % len(deterministicQueries)
				got, err := e.Query(deterministicQueries[i])
				if err != nil {
					errs <- err.Error()
					return
				}
				if diff := cmp.Diff(want[i], got); diff != "" {
					errs <- fmt.Sprintf("goroutine %d, query %q (-want +got):\n%s", w, deterministicQueries[i].Query, diff)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for msg := range errs {
		t.Error(msg)
	}
}

func TestNewEmptyGraph(t *testing.T) {
	e := newTestEngine(t, nil, nil)
	resp, err := e.Query(Request{Query: "anything at all"})
	if err != nil || len(resp.Results) != 0 {
		t.Errorf("query over an empty graph = %v, %v; want no results and no error", resp.Results, err)
	}
}

// TestGraphEvidenceByDirection checks how a seed's edges weigh: a prerequisite comes with the
// seed at its calibrated confidence, while follow-ups share it, so an output many skills can take
// does not carry all of them to the top.
func TestGraphEvidenceByDirection(t *testing.T) {
	skills := []testSkill{
		{"export-report", "Export the quarterly report as a spreadsheet.", ""},
		{"open-session", "Open an authenticated session.", ""},
		{"email-file", "Email a file to a colleague.", ""},
		{"print-file", "Print a file on paper.", ""},
		{"archive-file", "Archive a file in cold storage.", ""},
		{"sign-file", "Sign a file with a key.", ""},
		{"only-follow-up", "Notify the auditors.", ""},
		{"audit-ledger", "Audit the ledger entries.", ""},
	}
	const report, session, email, print, archive, sign, notify, audit = 0, 1, 2, 3, 4, 5, 6, 7
	dep := func(s, t int) graphs.Edge {
		return graphs.Edge{Source: s, Target: t, Weight: 0.8, Assoc: 0.8, State: graphs.Confirmed, Type: graphs.Dependency}
	}
	e := newTestEngine(t, skills, []graphs.Edge{
		dep(session, report), dep(report, email), dep(report, print), dep(report, archive), dep(report, sign),
		dep(audit, notify),
	})
	scores := func(q string) map[string]float64 {
		out := map[string]float64{}
		for _, r := range query(t, e, Request{Query: q, K: len(skills)}) {
			out[r.Name] = r.Score
		}
		return out
	}
	got := scores("quarterly report spreadsheet")
	tests := []struct {
		name string
		got  float64
		want float64
	}{
		{"the seed", got["export-report"], 1},
		{"its prerequisite, at the edge's confidence", got["open-session"], 0.8},
		{"one of four follow-ups, sharing it", got["email-file"], 0.8 / 3.2},
	}
	only := scores("audit ledger entries")
	tests = append(tests, struct {
		name string
		got  float64
		want float64
	}{"a lone follow-up keeps its whole confidence", only["only-follow-up"], 0.8})
	for _, tc := range tests {
		if math.Abs(tc.got-tc.want) > 1e-6 {
			t.Errorf("%s: score %v, want %v", tc.name, tc.got, tc.want)
		}
	}
}
