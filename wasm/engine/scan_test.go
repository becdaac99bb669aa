package engine

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/caskg/caskg/graphs"
	"github.com/google/go-cmp/cmp"
)

// TestNearestExact holds the bounded scan (nearest) to offerCosine on every skill: the same list,
// the same cosines bit for bit, for every k. Queries range from the encoder's to vectors aimed
// at one skill and random ones; dimensions leave remainders after the passes of eight, libraries
// leave one or two skills in the last packed word, and 1,000 dimensions round q more coarsely.
func TestNearestExact(t *testing.T) {
	tests := []struct {
		name   string
		n, dim int
	}{
		{"builtin model", 3001, 128},
		{"remainders", 1000, 98},
		{"short", 602, 24},
		{"three", 400, 3},
		{"long", 300, 1000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := randomLibrary(t, tc.n, tc.dim)
			if e.packed == nil {
				t.Fatal("no packed vectors below LargeLibrary skills")
			}
			sc := e.getScratch()
			var queries [][]float32
			for _, q := range fastQueries {
				if v := e.Embed(q); v != nil {
					queries = append(queries, v)
				}
			}
			rng := rand.New(rand.NewPCG(3, uint64(tc.dim)))
			for _, i := range []int{0, 5, tc.n / 2, tc.n - 1} {
				row, _ := e.g.Vector(i)
				v := make([]float64, tc.dim)
				for j, x := range row {
					v[j] = float64(x) + math.Sin(float64(i+j))
				}
				queries = append(queries, unit32(v))
			}
			for range 20 {
				v := make([]float64, tc.dim)
				for j := range v {
					v[j] = rng.NormFloat64() / float64(1+j/8)
				}
				queries = append(queries, unit32(v))
			}
			for qi, q := range queries {
				for _, k := range []int{1, 2, 7, semanticDepth, 200, tc.n + 1} {
					var want []candidate
					for i := range tc.n {
						want = e.offerCosine(want, q, i, k)
					}
					got := e.nearest(sc, nil, q, k)
					if diff := cmp.Diff(want, got, cmp.AllowUnexported(candidate{})); diff != "" {
						t.Fatalf("query %d k %d (-offerCosine +nearest):\n%s", qi, k, diff)
					}
				}
			}
		})
	}
}

// vectorEngine is an engine over one skill per vector, named s0, s1, ….
func vectorEngine(t *testing.T, vecs [][]float32) *Engine {
	t.Helper()
	art := &graphs.Artifact{}
	for i := range vecs {
		art.Skills = append(art.Skills, graphs.Skill{Name: fmt.Sprintf("s%d", i), Description: "a skill"})
	}
	art.Lexicon = lexicon(art.Skills)
	var err error
	if art.Vectors, err = graphs.NewVectors("test", vecs); err != nil {
		t.Fatal(err)
	}
	return artifactEngine(t, art)
}

// TestNearestTightBound holds nearest to offerCosine where the bound is tight: a skill whose
// vector points along q's rounding error e (so q̃ misjudges it by all of ‖e‖) comes after many
// skills whose cosines lie closely around its own, and for some k the k-th best of those lies
// within a tenth of ‖e‖ below it. A bound short of ‖e‖ by a tenth would leave it out.
func TestNearestTightBound(t *testing.T) {
	for _, dim := range []int{128, 24} {
		rng := rand.New(rand.NewPCG(11, uint64(dim)))
		q := make([]float32, dim)
		for j := range q {
			q[j] = float32(rng.NormFloat64())
		}
		q = unit32(f64s(q))
		qi, s, dev := roundQuery(q)
		// The skill: e/‖e‖ plus β times q's part across e (unit length), β enough for a cosine
		// of about 0.05: a bound short of ‖e‖ by a tenth misses it by more than 1e-4.
		var qe float64
		for j := range q {
			qe += float64(q[j]) * (float64(q[j]) - s*float64(qi[j])) / dev
		}
		along := make([]float64, dim)
		var across float64
		for j := range q {
			across += (float64(q[j]) - qe*(float64(q[j])-s*float64(qi[j]))/dev) * float64(q[j])
		}
		beta := max(0.05, 0.05-qe)
		for j := range q {
			ej := (float64(q[j]) - s*float64(qi[j])) / dev
			along[j] = ej + beta*(float64(q[j])-qe*ej)/math.Sqrt(across)
		}
		errDir := unit32(along)
		var cos float64
		for j := range q {
			cos += float64(q[j]) * float64(errDir[j])
		}
		if cos <= 0 {
			t.Fatalf("dim %d: the skill along the rounding error has cosine %v", dim, cos)
		}
		var vecs [][]float32
		for m := range 300 {
			a := cos * (0.9 + 0.2*float64(m)/300)
			u := make([]float64, dim)
			var uq float64
			for j := range u {
				u[j] = rng.NormFloat64()
				uq += u[j] * float64(q[j])
			}
			for j := range u {
				u[j] -= uq * float64(q[j])
			}
			u32 := unit32(u)
			v := make([]float32, dim)
			for j := range v {
				v[j] = float32(a)*q[j] + float32(math.Sqrt(1-a*a))*u32[j]
			}
			vecs = append(vecs, v)
		}
		e := vectorEngine(t, append(vecs, errDir))
		last := len(vecs)
		sc := e.getScratch()
		entered := false
		for k := 1; k <= last+1; k++ {
			var want []candidate
			for i := range last + 1 {
				want = e.offerCosine(want, q, i, k)
			}
			got := e.nearest(sc, nil, q, k)
			if diff := cmp.Diff(want, got, cmp.AllowUnexported(candidate{})); diff != "" {
				t.Fatalf("dim %d k %d (-offerCosine +nearest):\n%s", dim, k, diff)
			}
			entered = entered || slices.ContainsFunc(want, func(c candidate) bool { return c.id == last })
		}
		if !entered {
			t.Fatalf("dim %d: the skill along the rounding error entered no list", dim)
		}
	}
}

// TestNearestLanes holds nearest to offerCosine when the packed sums reach their limit: skills
// at ±127 in every component, in every sign pattern within a packed word, against a constant
// query, for the builtin dimension, a long one and the longest an artifact holds: q̃_j is 64, 8
// and 1, and a sum reaches 1,040,384, 1,016,000 and 1,040,384 of laneMax's 1,048,575.
func TestNearestLanes(t *testing.T) {
	for _, dim := range []int{128, 1000, 8192} {
		var vecs [][]float32
		for _, sign := range []float32{1, 1, 1, -1, -1, -1, 1, -1, 1, -1, 1} {
			v := make([]float32, dim)
			for j := range v {
				v[j] = sign
			}
			vecs = append(vecs, v)
		}
		e := vectorEngine(t, vecs)
		if e.packed == nil {
			t.Fatalf("dim %d: not packed", dim)
		}
		for _, sign := range []float32{1, -1} {
			q := make([]float32, dim)
			for j := range q {
				q[j] = sign / float32(math.Sqrt(float64(dim)))
			}
			var want []candidate
			for i := range vecs {
				want = e.offerCosine(want, q, i, len(vecs))
			}
			if len(want) == 0 {
				t.Fatalf("dim %d: no skill with a positive cosine", dim)
			}
			if diff := cmp.Diff(want, e.nearest(e.getScratch(), nil, q, len(vecs)), cmp.AllowUnexported(candidate{})); diff != "" {
				t.Errorf("dim %d sign %v (-offerCosine +nearest):\n%s", dim, sign, diff)
			}
		}
	}
}

func f64s(v []float32) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}
