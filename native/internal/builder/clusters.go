package builder

import (
	"math"
	"runtime"
	"sync"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/wasm/engine"
)

// Vector clusters let the engine find a large library's semantic seeds without comparing the
// query with every skill (engine, semantic.go): spherical k-means over the quantized skill
// vectors, 3√N clusters, deterministic (seeded by evenly spaced skills, sums in skill order).
//
// At 100,000 skills (SkillsBench task texts), the exact top 50 of the semantic list is found
// among the members of the nearest clusters holding 2,000 skills 96.0% of the time with √N
// clusters, 98.3% with 2√N and 99.3% with 3√N (its top 5: 94.9%, 98.4%, 99.3%); finer clusters
// cost the query more centroids to compare and the build more time. Training longer (20
// rounds, or 40 sample skills a cluster) changed no recall.
const (
	clusterScale  = 3  // clusters per √N
	clusterIters  = 6  // k-means rounds over the sample
	clusterSample = 16 // sample skills per cluster that train the centroids; every skill is then assigned to the nearest trained one
)

// clusterVectors returns the vector clusters of v, nil below engine.LargeLibrary skills (the
// engine scans every vector there) or without vectors.
func clusterVectors(v *graphs.Vectors) *graphs.Clusters {
	if v == nil || len(v.Scale) < engine.LargeLibrary {
		return nil
	}
	n, dim := len(v.Scale), v.Dim
	unit := make([]float32, n*dim)
	var ids []int // the skills with a vector
	for i := range n {
		if unitRow(v.Data[i*dim:(i+1)*dim], unit[i*dim:(i+1)*dim]) {
			ids = append(ids, i)
		}
	}
	c := &graphs.Clusters{Assign: make([]uint16, n)}
	for i := range c.Assign {
		c.Assign[i] = graphs.NoCluster
	}
	k := min(int(clusterScale*math.Sqrt(float64(len(ids)))+0.5), graphs.NoCluster-1)
	if k < 1 {
		return nil
	}
	cent := make([]float32, k*dim)
	for j := range k {
		i := ids[j*len(ids)/k]
		copy(cent[j*dim:], unit[i*dim:(i+1)*dim])
	}
	var sample []int
	step := max(1, len(ids)/(k*clusterSample))
	for s := 0; s < len(ids); s += step {
		sample = append(sample, ids[s])
	}
	near := make([]int, len(sample))
	for range clusterIters {
		nearestCentroids(unit, cent, dim, sample, near)
		sums := make([]float64, k*dim)
		for s, i := range sample {
			for j, x := range unit[i*dim : (i+1)*dim] {
				sums[near[s]*dim+j] += float64(x)
			}
		}
		for j := range k {
			var ss float64
			for _, x := range sums[j*dim : (j+1)*dim] {
				ss += float64(x * x)
			}
			if ss == 0 {
				continue // an empty cluster keeps its centroid
			}
			inv := 1 / math.Sqrt(ss)
			for d, x := range sums[j*dim : (j+1)*dim] {
				cent[j*dim+d] = float32(x * inv)
			}
		}
	}
	// The centroids as stored (quantized), and every skill assigned to the nearest of those: the
	// engine compares queries with the stored ones.
	c.Centroids = make([]int8, k*dim)
	for j := range k {
		graphs.Quantize(cent[j*dim:(j+1)*dim], c.Centroids[j*dim:(j+1)*dim])
		unitRow(c.Centroids[j*dim:(j+1)*dim], cent[j*dim:(j+1)*dim])
	}
	near = make([]int, len(ids))
	nearestCentroids(unit, cent, dim, ids, near)
	for s, i := range ids {
		c.Assign[i] = uint16(near[s])
	}
	return c
}

// unitRow writes row at unit length into out and reports whether it is non-zero.
func unitRow(row []int8, out []float32) bool {
	var ss float64
	for _, x := range row {
		ss += float64(int(x) * int(x))
	}
	if ss == 0 {
		clear(out)
		return false
	}
	inv := 1 / math.Sqrt(ss)
	for j, x := range row {
		out[j] = float32(float64(x) * inv)
	}
	return true
}

// nearestCentroids sets near[s] to the centroid (of cent, rows of dim) with the highest dot
// product with skill ids[s]'s row of unit, the lowest index on ties. Each answer depends on its
// skill alone, so the goroutines splitting the work do not change it.
func nearestCentroids(unit, cent []float32, dim int, ids, near []int) {
	k := len(cent) / dim
	workers := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for s := w; s < len(ids); s += workers {
				x := unit[ids[s]*dim : (ids[s]+1)*dim]
				best, bestDot := 0, float32(math.Inf(-1))
				for j := range k {
					// Four sums for the processor's pipelines; each product rounded on its own (no
					// fused multiply-add), so that every CPU finds the same sums.
					c := cent[j*dim : (j+1)*dim : (j+1)*dim]
					var d0, d1, d2, d3 float32
					t := 0
					for ; t+4 <= len(x); t += 4 {
						a, b := x[t:t+4:t+4], c[t:t+4:t+4]
						d0 += float32(a[0] * b[0])
						d1 += float32(a[1] * b[1])
						d2 += float32(a[2] * b[2])
						d3 += float32(a[3] * b[3])
					}
					for ; t < len(x); t++ {
						d0 += float32(x[t] * c[t])
					}
					d := (d0 + d1) + (d2 + d3)
					if d > bestDot {
						best, bestDot = j, d
					}
				}
				near[s] = best
			}
		})
	}
	wg.Wait()
}
