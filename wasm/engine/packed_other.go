//go:build !wasm

package engine

// dotsPacked is dotsPackedGo where there is no kernel: nearest16 scans on amd64 with AVX2, and
// the tests hold the packed scan to the exact cosines with this.
func dotsPacked(w, q, out []int64) { dotsPackedGo(w, q, out) }

// pushKernel is whether push runs pushRing: only in WebAssembly, where it is a kernel.
const pushKernel = false

// pushRing is pushRingGo, which the tests hold to push's own loop.
func pushRing(off, to []int32, w, p, r []float64, queue, nodes []int32, mark []uint32, gamma, eps float64, stamp uint32, mask, maxPushes, nq, nn int) (pushes, nodesLen int) {
	return pushRingGo(off, to, w, p, r, queue, nodes, mark, gamma, eps, stamp, mask, maxPushes, nq, nn)
}

// dotCosine is dotCosineGo.
func dotCosine(row []int8, q []float32) float32 { return dotCosineGo(row, q) }
