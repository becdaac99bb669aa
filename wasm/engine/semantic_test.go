package engine

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/native/testlib/clustered"
	"github.com/caskg/caskg/native/testlib/table"
	"github.com/google/go-cmp/cmp"
)

// semanticEngine is the kitchen library with 3-dimensional skill vectors on three axes —
// water (x), food (y), tools (z) — and a query encoder that knows a few words of each.
func semanticEngine(t testing.TB) *Engine {
	t.Helper()
	art := testArtifact(kitchenSkills, kitchenEdges)
	skillVecs := [][]float32{
		fillKettle: {1, 0, 0.2}, boilWater: {1, 0.1, 0}, brewTea: {0.8, 0.5, 0},
		microwave: {0.1, 1, 0}, pickUpObject: {0, 0, 1}, graspObject: {0, 0.1, 1},
		sliceBread: {0, 0.7, 0.7}, washDishes: {0.6, 0, 0.4},
	}
	var err error
	if art.Vectors, err = graphs.NewVectors("test-axes", skillVecs); err != nil {
		t.Fatal(err)
	}
	// "beverag" only exists in the encoder: no skill mentions it, so lexical search misses it.
	if art.Encoder, err = graphs.NewQueryEncoder(
		[]string{"beverag", "snack", "gripper", "hot"},
		[]float32{2, 2, 1, 0.5},
		[][]float32{{1, 0.3, 0}, {0, 1, 0.1}, {0, 0, 1}, {0.5, 0.5, 0}},
	); err != nil {
		t.Fatal(err)
	}
	return artifactEngine(t, art)
}

func TestEmbed(t *testing.T) {
	e := semanticEngine(t)
	if e.VectorDim() != 3 || e.VectorModel() != "test-axes" {
		t.Fatalf("dim %d model %q", e.VectorDim(), e.VectorModel())
	}
	tests := []struct {
		name string
		in   string
		want []float64 // direction; nil for no vector
	}{
		{"one term", "a beverage", []float64{1, 0.3, 0}},
		{"weights and counts", "snack gripper gripper", []float64{0, 2 * 1, 2*0.1 + (1+math.Log(2))*1}},
		{"unknown terms only", "zzz qqq", nil},
		{"stop words only", "the and of", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := e.Embed(tc.in)
			if tc.want == nil {
				if got != nil {
					t.Fatalf("Embed(%q) = %v, want nil", tc.in, got)
				}
				return
			}
			var norm float64
			for _, x := range tc.want {
				norm += x * x
			}
			norm = math.Sqrt(norm)
			for j := range tc.want {
				// The encoder's vectors are quantized to 8 bits: allow a step.
				if math.Abs(float64(got[j])-tc.want[j]/norm) > 0.02 {
					t.Fatalf("Embed(%q) = %v, want the direction of %v", tc.in, got, tc.want)
				}
			}
		})
	}
}

func TestSemanticSeeds(t *testing.T) {
	e := semanticEngine(t)
	// No skill says "beverage": lexical search finds nothing, the encoder finds the tea.
	resp, err := e.Query(Request{Query: "some beverage", K: 3, NoGraph: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := names(resp.Results); len(got) == 0 || got[0] != "boil-water" && got[0] != "brew-tea" && got[0] != "fill-kettle" {
		t.Errorf("semantic seeds for a beverage: %v", got)
	}
	if resp, _ := e.Query(Request{Query: "some beverage", K: 3, NoGraph: true, NoSemantic: true}); len(resp.Results) != 0 {
		t.Errorf("lexical seeds alone found %v for a query no skill mentions", names(resp.Results))
	}
	// An exact vector overrides the encoder: point at the tools axis.
	resp, err = e.Query(Request{Query: "some beverage", K: 2, NoGraph: true, Vector: []float32{0, 0, 5}})
	if err != nil {
		t.Fatal(err)
	}
	if got := names(resp.Results); !slices.Equal(got, []string{"grasp-object", "pick_up_object"}) &&
		!slices.Equal(got, []string{"pick_up_object", "grasp-object"}) {
		t.Errorf("exact tools vector gave %v", got)
	}
	// Lexical and semantic evidence add up: "boil" is lexical, "beverage" semantic.
	resp, err = e.Query(Request{Query: "boil a beverage", K: 8, NoGraph: true})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Results[0].Name != "boil-water" {
		t.Errorf("fused seeds %v, want boil-water first", names(resp.Results))
	}
	// A heavier semantic weight never removes the lexical candidates.
	heavy, err := e.Query(Request{Query: "boil a beverage", K: 8, NoGraph: true, SemanticWeight: 50})
	if err != nil || !slices.Contains(names(heavy.Results), "boil-water") {
		t.Errorf("heavy semantic weight: %v, %v", names(heavy.Results), err)
	}
	// With the graph, semantic seeds spread like lexical ones.
	resp, err = e.Query(Request{Query: "some beverage", K: 4})
	if err != nil || len(resp.Results) == 0 || resp.Results[0].SeedRank == 0 {
		t.Errorf("graph mode: %+v, %v", resp.Results, err)
	}
}

func TestVectorValidation(t *testing.T) {
	e := semanticEngine(t)
	nan := float32(math.NaN())
	query := func(req Request) error {
		_, err := e.Query(req)
		return err
	}
	table.Errors(t, "Query", query, []table.Case[Request, string]{
		{"wrong dimension", Request{Query: "tea", Vector: []float32{1, 0}}, "2 dimensions, the artifact's vectors (test-axes) have 3"},
		{"NaN", Request{Query: "tea", Vector: []float32{1, nan, 0}}, "component 1 is NaN"},
		{"infinity", Request{Query: "tea", Vector: []float32{float32(math.Inf(-1)), 0, 0}}, "component 0 is -Inf"},
		{"zero vector", Request{Query: "tea", Vector: []float32{0, 0, 0}}, "zero vector"},
		{"negative weight", Request{Query: "tea", SemanticWeight: -1}, `"semantic_weight"`},
		{"huge weight", Request{Query: "tea", SemanticWeight: MaxSemanticWeight + 1}, `"semantic_weight"`},
		{"NaN weight", Request{Query: "tea", SemanticWeight: math.NaN()}, `"semantic_weight"`},
	})
	// An artifact without vectors refuses a vector and ignores the semantic options otherwise.
	k := kitchen()
	if _, err := k.Query(Request{Query: "tea", Vector: []float32{1}}); err == nil || !strings.Contains(err.Error(), "no skill vectors") {
		t.Errorf("vector without skill vectors: %v", err)
	}
	if k.Embed("tea") != nil || k.VectorDim() != 0 {
		t.Error("an artifact without an encoder embedded a query")
	}
	if _, err := k.Query(Request{Query: "", Vector: []float32{1}}); !errors.Is(err, ErrEmptyQuery) {
		t.Errorf("empty query with a vector: %v", err)
	}
}

// Without vectors, semantic options change nothing.
func TestNoVectorsNoChange(t *testing.T) {
	k := kitchen()
	for _, q := range []string{"boil water for tea", "pick the object", "slice bread"} {
		a, err := k.Query(Request{Query: q})
		if err != nil {
			t.Fatal(err)
		}
		b, err := k.Query(Request{Query: q, NoSemantic: true, SemanticWeight: 3})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(names(a.Results), names(b.Results)) {
			t.Errorf("%q: %v vs %v", q, names(a.Results), names(b.Results))
		}
	}
}

func FuzzQueryVector(f *testing.F) {
	f.Add("some beverage", float32(0), float32(0), float32(1), 0.0, false)
	f.Add("boil", float32(1), float32(0), float32(0), 2.0, true)
	f.Add("tea", float32(0), float32(0), float32(0), -1.0, false)
	f.Add("snack", float32(math.NaN()), float32(1), float32(1), 0.0, false)
	f.Add("", float32(1), float32(1), float32(1), 0.0, false)
	e := semanticEngine(f)
	f.Fuzz(func(t *testing.T, q string, x, y, z float32, w float64, noGraph bool) {
		for _, v := range [][]float32{nil, {x, y, z}} {
			resp, err := e.Query(Request{Query: q, Vector: v, SemanticWeight: w, NoGraph: noGraph})
			if err != nil {
				continue
			}
			seen := map[string]bool{}
			for _, r := range resp.Results {
				if math.IsNaN(r.Score) || math.IsInf(r.Score, 0) || r.Score < 0 || seen[r.Name] {
					t.Fatalf("result %+v (seen %v)", r, seen)
				}
				seen[r.Name] = true
			}
		}
		if v := e.Embed(q); v != nil {
			var ss float64
			for _, c := range v {
				ss += float64(c) * float64(c)
			}
			if math.Abs(ss-1) > 1e-4 {
				t.Fatalf("Embed(%q) has |v|² = %v", q, ss)
			}
		}
	})
}

// TestSemanticFloor: beside a lexical list, a skill the semantic list ranks at
// semanticFloorRank or deeper gets no semantic evidence, so a topic's distant neighbours cannot
// push a lexical match out of the first ten; the vector-only ranking keeps every rank apart.
// Forty station skills match "weather" alike; the query vector is closest to station-00,
// then 01, and so on, so that the lexical head (ties by id) agrees with the semantic list.
func TestSemanticFloor(t *testing.T) {
	const n = 40
	art := &graphs.Artifact{}
	vecs := make([][]float32, n)
	for i := range n {
		art.Skills = append(art.Skills, graphs.Skill{Name: fmt.Sprintf("station-%02d", i), Description: "Reports the weather at a station."})
		vecs[i] = []float32{1, float32(i) * 0.05, 0} // semantic rank i
	}
	art.Lexicon = lexicon(art.Skills)
	var err error
	if art.Vectors, err = graphs.NewVectors("test-stations", vecs); err != nil {
		t.Fatal(err)
	}
	e := artifactEngine(t, art)
	// station-i has semantic rank i (0-based): station-19 is the floor, the 20th entry.
	tests := []struct {
		name      string
		req       Request
		a, b      string
		wantEqual bool // a's score equals b's; otherwise a's is above b's
	}{
		{"above the floor", Request{}, "station-05", "station-10", false},
		{"floor", Request{}, "station-18", "station-19", false},
		{"below the floor", Request{}, "station-19", "station-25", true},
		{"deep", Request{}, "station-30", "station-39", true},
		{"vector only keeps every rank", Request{NoLexical: true}, "station-30", "station-39", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.req
			r.Query, r.K, r.NoGraph, r.Vector = "weather", n, true, []float32{1, 0, 0}
			resp, err := e.Query(r)
			if err != nil {
				t.Fatal(err)
			}
			score := map[string]float64{}
			for _, x := range resp.Results {
				score[x.Name] = x.Score
			}
			a, aok := score[tc.a]
			b, bok := score[tc.b]
			if !aok || !bok {
				t.Fatalf("%s or %s missing from %v", tc.a, tc.b, names(resp.Results))
			}
			if tc.wantEqual && a != b || !tc.wantEqual && a <= b {
				t.Errorf("%s %.6f, %s %.6f; want equal %v", tc.a, a, tc.b, b, tc.wantEqual)
			}
		})
	}
}

// TestClusterProbe holds the large-library path over an artifact's vector clusters to what it
// promises: probe passes on whole clusters, nearest centroid first, until it has the pool; the
// semantic list is the exact one over the skills probed (here every skill near the query, so
// the exact list of the whole library); and the same library without clusters keeps the
// sign-sketch prefilter.
func TestClusterProbe(t *testing.T) {
	// The pool's exact cosines come from nearestAmong where simdDots is set, else from
	// offerCosine on each skill: the lists must be the same.
	kernel := simdDots
	defer func() { simdDots = kernel }()
	for _, dots := range []struct {
		name string
		f    func(rows []int8, dim int, q []int16, out []int32)
	}{{"offerCosine", nil}, {"dotsGo", dotsGo}, {"kernel", kernel}} {
		if dots.f == nil && dots.name == "kernel" {
			continue
		}
		simdDots = dots.f
		t.Run(dots.name, testClusterProbe)
	}
}

func testClusterProbe(t *testing.T) {
	const dim, k = 16, 16
	n := LargeLibrary
	// k centroids, each skill a small perturbation of the centroid of its id mod k.
	vecs, cent, clusters := clustered.Vectors(rand.New(rand.NewPCG(36, 1)), n, k, dim, 0.05)
	art := vectorArtifact(t, vecs)
	plain := artifactEngine(t, art)
	if plain.lists != nil || plain.signs == nil {
		t.Fatal("an artifact without clusters does not take the sign sketch")
	}
	art.Clusters = clusters
	e := artifactEngine(t, art)
	if e.lists == nil || e.signs != nil {
		t.Fatal("an artifact with clusters does not take them")
	}
	sc := e.getScratch()
	defer e.putScratch(sc)
	for c := range k {
		q := unit32(f64s(cent[c]))
		// One cluster holds n/k skills: a pool of one takes it alone, a pool one more than it
		// takes the next nearest too.
		got := slices.Clone(e.lists.probe(sc, q, 1))
		if len(got) != n/k || got[0] != int32(c) || got[1] != int32(c+k) {
			t.Fatalf("centroid %d: probed %d skills from %v, want cluster %d's %d", c, len(got), got[:2], c, n/k)
		}
		if two := e.lists.probe(sc, q, n/k+1); len(two) != 2*n/k {
			t.Fatalf("centroid %d: a pool past one cluster probed %d skills, want %d", c, len(two), 2*n/k)
		}
		if diff := cmp.Diff(e.SemanticNeighbors(q, true), e.SemanticNeighbors(q, false)); diff != "" {
			t.Errorf("centroid %d: list through the clusters differs from the exact one (-exact +clusters):\n%s", c, diff)
		}
	}
}

// TestNearestAmong holds nearestAmong to offerCosine on each of the same skills, cosines and
// all, for random vectors, pools and queries, with the kernel and with dotsGo.
func TestNearestAmong(t *testing.T) {
	kernel := simdDots
	defer func() { simdDots = kernel }()
	rng := rand.New(rand.NewPCG(36, 3))
	const n, dim = 3000, 32
	vecs := make([][]float32, n)
	for i := range vecs {
		vecs[i] = make([]float32, dim)
		if i%97 == 0 {
			continue // zero vectors are skipped
		}
		for j := range vecs[i] {
			vecs[i][j] = float32(rng.NormFloat64())
		}
	}
	for _, dots := range []func(rows []int8, dim int, q []int16, out []int32){dotsGo, kernel} {
		if dots == nil {
			continue
		}
		simdDots = dots
		e := vectorEngine(t, vecs)
		sc := e.getScratch()
		for trial := range 40 {
			q := make([]float64, dim)
			for j := range q {
				q[j] = rng.NormFloat64()
			}
			qv := unit32(q)
			var ids []int32
			for i := range n {
				if rng.IntN(4) == 0 {
					ids = append(ids, int32(i))
				}
			}
			var want []candidate
			for _, i := range ids {
				want = e.offerCosine(want, qv, int(i), semanticDepth)
			}
			got := nearestAmong(e, sc, nil, qv, ids, semanticDepth)
			if diff := cmp.Diff(want, got, cmp.AllowUnexported(candidate{})); diff != "" {
				t.Fatalf("trial %d: nearestAmong differs from offerCosine (-want +got):\n%s", trial, diff)
			}
		}
		e.putScratch(sc)
	}
}
