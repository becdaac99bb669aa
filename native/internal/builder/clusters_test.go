package builder

import (
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/wasm/engine"
)

// TestClusterVectors holds the vector clusters to what the artifact promises: none below
// engine.LargeLibrary skills; from there on, 3√N of them, every skill with a vector in the
// cluster whose stored centroid is nearest it and a zero vector in none, and the same clusters
// however many goroutines assign the skills.
func TestClusterVectors(t *testing.T) {
	const dim = 16
	rng := rand.New(rand.NewPCG(36, 2))
	vecs := make([][]float32, engine.LargeLibrary)
	for i := range vecs {
		vecs[i] = make([]float32, dim)
		if i%1000 == 7 {
			continue // a zero vector
		}
		for j := range vecs[i] {
			vecs[i][j] = float32(rng.NormFloat64())
		}
	}
	small, err := graphs.NewVectors("test", vecs[:engine.LargeLibrary-1])
	if err != nil {
		t.Fatal(err)
	}
	if c := clusterVectors(small); c != nil {
		t.Errorf("%d skills got %d clusters, want none", engine.LargeLibrary-1, len(c.Centroids)/dim)
	}
	v, err := graphs.NewVectors("test", vecs)
	if err != nil {
		t.Fatal(err)
	}
	c := clusterVectors(v)
	if c == nil {
		t.Fatalf("%d skills got no clusters", len(vecs))
	}
	k := len(c.Centroids) / dim
	if want := 3 * 141; k < want || k > want+3 { // 3·√19,980 ≈ 424
		t.Errorf("%d clusters, want about %d", k, want)
	}
	cent := make([]float32, len(c.Centroids))
	for j := range k {
		unitRow(c.Centroids[j*dim:(j+1)*dim], cent[j*dim:(j+1)*dim])
	}
	row := make([]float32, dim)
	used := map[uint16]bool{}
	for i, a := range c.Assign {
		if !unitRow(v.Data[i*dim:(i+1)*dim], row) {
			if a != graphs.NoCluster {
				t.Errorf("skill %d has a zero vector but is in cluster %d", i, a)
			}
			continue
		}
		used[a] = true
		best, bestDot := -1, float32(-2)
		for j := range k {
			var d float32
			for t, x := range row {
				d += x * cent[j*dim+t]
			}
			if d > bestDot {
				best, bestDot = j, d
			}
		}
		// Summed in another order here: a tie within rounding may go either way.
		var d float32
		for t, x := range row {
			d += x * cent[int(a)*dim+t]
		}
		if int(a) != best && d < bestDot-1e-5 {
			t.Fatalf("skill %d in cluster %d (dot %v), nearest is %d (dot %v)", i, a, d, best, bestDot)
		}
	}
	if len(used) < k/2 {
		t.Errorf("only %d of %d clusters hold skills", len(used), k)
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	again := clusterVectors(v)
	if !slices.Equal(c.Centroids, again.Centroids) || !slices.Equal(c.Assign, again.Assign) {
		t.Error("one goroutine made other clusters than GOMAXPROCS of them")
	}
}
