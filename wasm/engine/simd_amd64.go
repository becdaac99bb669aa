//go:build amd64 && !purego

package engine

// The AVX2 kernels of nearest16 (simd_amd64.s). Built with the purego tag, or on a CPU without
// AVX2, simdDots and simdApprox stay nil and the scan is the packed words', as in WebAssembly.

func init() {
	if hasAVX2() {
		simdDots, simdApprox = dotsAVX2Rows, approxAVX2Rows
	}
}

// hasAVX2 reports whether the CPU has AVX2 and the operating system saves the YMM registers,
// as golang.org/x/sys/cpu's X86.HasAVX2 does (TestHasAVX2 holds them equal). The engine asks
// CPUID itself: x/sys/cpu is another module and reads /proc/self/auxv through os at init, both
// of which the engine's layer refuses (native/guards).
func hasAVX2() bool {
	maxLeaf, _, _, _ := cpuid(0, 0)
	if maxLeaf < 7 {
		return false
	}
	const osxsave = 1 << 27 // CPUID.1:ECX: the OS manages the extended states, XGETBV works
	if _, _, ecx1, _ := cpuid(1, 0); ecx1&osxsave == 0 {
		return false
	}
	if xcr0, _ := xgetbv(); xcr0&6 != 6 { // the XMM and YMM states
		return false
	}
	const avx2 = 1 << 5 // CPUID.(7,0):EBX
	_, ebx7, _, _ := cpuid(7, 0)
	return ebx7&avx2 != 0
}

// dotsAVX2Rows is simdDots with AVX2: dotsAVX2 for vectors of simdMinDim dimensions or more,
// dotsGo for shorter ones.
func dotsAVX2Rows(rows []int8, dim int, q []int16, out []int32) {
	rows, q = rows[:len(out)*dim], q[:dim] // all the kernel reads, checked once
	if dim < simdMinDim {
		dotsGo(rows, dim, q, out)
		return
	}
	dotsAVX2(rows, dim, q, out)
}

// dotsAVX2 sets out[i] to Σ_j q[j]·rows[i·dim+j] for i < len(out) and j < dim, in int32
// arithmetic that wraps, for dim ≥ 16, len(q) ≥ dim and len(rows) ≥ len(out)·dim
// (simd_amd64.s).
//
//go:noescape
func dotsAVX2(rows []int8, dim int, q []int16, out []int32)

// approxAVX2Rows is simdApprox with AVX2: approxAVX2 for the skills in whole passes of four,
// approxGo for the rest.
func approxAVX2Rows(dots []int32, invNorm []float32, scale float64, approx []float64, hist []int32) {
	invNorm, approx = invNorm[:len(dots)], approx[:len(dots)] // all the kernel reads and writes
	_ = hist[0]                                               // and a top bucket of 0 or more
	n := len(dots) &^ 3
	approxAVX2(dots[:n], invNorm, scale, approx, hist)
	approxGo(dots[n:], invNorm[n:], scale, approx[n:], hist)
}

// approxAVX2 is approxGo for len(dots) a multiple of 4, len(invNorm) and len(approx) at least
// len(dots) and len(hist) at least 1, where every approx[i]·(len(hist)−1) is within int32
// (simd_amd64.s).
//
//go:noescape
func approxAVX2(dots []int32, invNorm []float32, scale float64, approx []float64, hist []int32)

// cpuid returns the registers the CPUID instruction leaves for leaf and subleaf sub.
func cpuid(leaf, sub uint32) (eax, ebx, ecx, edx uint32)

// xgetbv returns the extended control register XCR0.
func xgetbv() (eax, edx uint32)
