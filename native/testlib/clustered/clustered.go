// Package clustered makes libraries of vectors in clusters for the tests of the cluster index.
// It imports only graphs, so that the engine's own tests may use it.
package clustered

import (
	"math/rand/v2"

	"github.com/caskg/caskg/graphs"
)

// Vectors returns n vectors of dim numbers around k centroids drawn from rng (normal numbers):
// vector i is centroid i mod k with every number moved by spread times a normal draw. It returns
// the centroids too, and the clusters section that says so (the centroids quantized, skill i in
// cluster i mod k). It draws the centroids first, then the vectors in order.
func Vectors(rng *rand.Rand, n, k, dim int, spread float32) (vecs, centroids [][]float32, cl *graphs.Clusters) {
	centroids = make([][]float32, k)
	for c := range centroids {
		centroids[c] = make([]float32, dim)
		for j := range centroids[c] {
			centroids[c][j] = float32(rng.NormFloat64())
		}
	}
	cl = &graphs.Clusters{Centroids: make([]int8, k*dim), Assign: make([]uint16, n)}
	for c := range k {
		graphs.Quantize(centroids[c], cl.Centroids[c*dim:(c+1)*dim])
	}
	vecs = make([][]float32, n)
	for i := range vecs {
		vecs[i] = make([]float32, dim)
		for j := range vecs[i] {
			vecs[i][j] = centroids[i%k][j] + spread*float32(rng.NormFloat64())
		}
		cl.Assign[i] = uint16(i % k)
	}
	return vecs, centroids, cl
}
