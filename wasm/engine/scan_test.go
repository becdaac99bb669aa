package engine

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSemanticScanExact holds the exact semantic scan — two skills a pass over float32 copies
// of the vectors — to offerCosine on every skill: the same list, the same cosines bit for bit.
// Queries range from the encoder's (long texts, short ones) to vectors aimed at one skill, with
// dimensions that leave remainders after the passes of sixteen and of four.
func TestSemanticScanExact(t *testing.T) {
	for _, dim := range []int{128, 98, 24} {
		e := randomLibrary(t, 3001, dim)
		if e.vecs32 == nil {
			t.Fatalf("dim %d: no float32 vectors below LargeLibrary skills", dim)
		}
		var queries [][]float32
		for _, q := range fastQueries {
			if v := e.Embed(q); v != nil {
				queries = append(queries, v)
			}
		}
		for _, i := range []int{0, 5, 1234, 3000} {
			row, _ := e.g.Vector(i)
			v := make([]float64, dim)
			for j, x := range row {
				v[j] = float64(x) + math.Sin(float64(i+j))
			}
			queries = append(queries, unit32(v))
		}
		sc := e.getScratch()
		for k, q := range queries {
			if q == nil {
				continue
			}
			var want []candidate
			for i := range e.g.NumSkills() {
				want = e.offerCosine(want, q, i)
			}
			got := e.semanticRanking(sc, q)
			if diff := cmp.Diff(want, got, cmp.AllowUnexported(candidate{})); diff != "" {
				t.Errorf("dim %d query %d (-offerCosine +scan):\n%s", dim, k, diff)
			}
		}
		e.putScratch(sc)
	}
}
