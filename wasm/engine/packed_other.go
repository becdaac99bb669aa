//go:build !wasm

package engine

// dotsPacked is dotsPackedGo where there is no kernel: nearest16 scans on amd64 with AVX2, and
// the tests hold the packed scan to the exact cosines with this.
func dotsPacked(w, q, out []int64) { dotsPackedGo(w, q, out) }
