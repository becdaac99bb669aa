//go:build !wasm

package engine

// dotsPacked is dotsPackedGo where there is no kernel: nearest16 scans on amd64 with AVX2, and
// the tests hold the packed scan to the exact cosines with this.
func dotsPacked(w, q, out []int64) { dotsPackedGo(w, q, out) }

// pushKernel is whether push runs pushRing: only in WebAssembly, where it is a kernel.
const pushKernel = false

// pushRing is pushRingGo, which the tests hold to push's own loop.
func pushRing(off, to []int32, w, p, r []float64, queue, nodes []int32, mark []uint32, gamma, eps float64, stamp uint32, mask, maxPushes, nq, nn int, want []int32, wantOn int) (pushes, nodesLen int) {
	return pushRingGo(off, to, w, p, r, queue, nodes, mark, gamma, eps, stamp, mask, maxPushes, nq, nn, want, wantOn)
}

// cosineKernel is whether offerCosine calls dotCosine: only in WebAssembly, where it is a
// kernel; elsewhere its loops are offerCosine's own.
const cosineKernel = false

// dotCosine is q·row in float32 as offerCosine computes it: four sums, sum j mod 4 of
// q[j]·row[j] in index order over the whole passes of four, the rest into the first, then
// (d0 + d1) + (d2 + d3). The tests hold WebAssembly's kernel to it.
func dotCosine(row []int8, q []float32) float32 {
	var d [4]float32
	j := 0
	for ; j+4 <= len(row); j += 4 {
		for l := range d {
			d[l] += q[j+l] * float32(row[j+l])
		}
	}
	for ; j < len(row); j++ {
		d[0] += q[j] * float32(row[j])
	}
	return (d[0] + d[1]) + (d[2] + d[3])
}

// sortKernel is whether sortCandidates sorts short lists with insertCandidates: only in
// WebAssembly, where it is a kernel.
const sortKernel = false

// insertCandidates is insertCandidatesGo.
func insertCandidates(cs []candidate) { insertCandidatesGo(cs) }

// addPostings is addPostingsGo.
func addPostings(scores []float64, hits []uint64, docs []int32, imps []float64, bit uint64) {
	addPostingsGo(scores, hits, docs, imps, bit)
}

// addPostingsTouched is addPostingsTouchedGo.
func addPostingsTouched(scores []float64, hits []uint64, docs []int32, imps []float64, touched []int32, bit uint64, nt int) int {
	return addPostingsTouchedGo(scores, hits, docs, imps, touched, bit, nt)
}

// nextAbove is nextAboveGo.
func nextAbove(scores []float64, d int, lo uint64) int { return nextAboveGo(scores, d, lo) }
