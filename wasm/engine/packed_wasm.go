package engine

// dotsPacked is dotsPackedGo in WebAssembly (packed_wasm.s), for len(q) even and at least 2
// and len(w) at least len(out)·len(q): what nearest passes.
//
//go:noescape
func dotsPacked(w, q, out []int64)
