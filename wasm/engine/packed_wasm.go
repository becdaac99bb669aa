package engine

// dotsPacked is dotsPackedGo in WebAssembly (packed_wasm.s), for len(q) even and at least 2
// and len(w) at least len(out)·len(q): what nearest passes.
//
//go:noescape
func dotsPacked(w, q, out []int64)

// pushKernel is whether push runs pushRing: in WebAssembly, the kernel of packed_wasm.s.
const pushKernel = true

// pushRing is pushRingGo in WebAssembly (packed_wasm.s), for a queue of mask+1 entries, a
// power of two above len(r), room for every node and one more in nodes, and off, to and w
// the engine's: what push passes.
//
//go:noescape
func pushRing(off, to []int32, w, p, r []float64, queue, nodes []int32, mark []uint32, gamma, eps float64, stamp uint32, mask, maxPushes, nq, nn int, want []int32, wantOn int) (pushes, nodesLen int)

// cosineKernel is whether offerCosine calls dotCosine: in WebAssembly, the kernel of
// packed_wasm.s.
const cosineKernel = true

// dotCosine is offerCosine's dot product in WebAssembly (packed_wasm.s), for len(q) at least
// len(row): four sums, sum j mod 4 of q[j]·row[j] in index order over the whole passes of four,
// the rest into the first, then (d0 + d1) + (d2 + d3).
//
//go:noescape
func dotCosine(row []int8, q []float32) float32

// sortKernel is whether sortCandidates sorts short lists with insertCandidates: in
// WebAssembly, where a heap sort's every comparison is a branch through the dispatcher.
const sortKernel = true

// insertCandidates is insertCandidatesGo in WebAssembly (packed_wasm.s).
//
//go:noescape
func insertCandidates(cs []candidate)

// addPostings is addPostingsGo in WebAssembly (packed_wasm.s), for documents below len(scores)
// and len(hits) and len(imps) at least len(docs): what recall's read passes.
//
//go:noescape
func addPostings(scores []float64, hits []uint64, docs []int32, imps []float64, bit uint64)

// addPostingsTouched is addPostingsTouchedGo in WebAssembly (packed_wasm.s), as addPostings,
// with room for len(docs) more in touched past nt.
//
//go:noescape
func addPostingsTouched(scores []float64, hits []uint64, docs []int32, imps []float64, touched []int32, bit uint64, nt int) int

// nextAbove is nextAboveGo in WebAssembly (packed_wasm.s).
//
//go:noescape
func nextAbove(scores []float64, d int, lo uint64) int
