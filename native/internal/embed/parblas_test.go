package embed

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
	lapackgonum "gonum.org/v1/gonum/lapack/gonum"
)

// TestParallelBLASBits: parallelBLAS gives gonum's bits, for shapes on both sides of the split
// threshold, odd sizes (the kernels' tails), strided vectors and leading dimensions wider than
// the matrix, and through the LAPACK routines the builtin model calls.
func TestParallelBLASBits(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4)) // blocks to split, whatever the machine
	rng := rand.New(rand.NewPCG(1, 2))
	fill := func(n int) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = rng.NormFloat64()
		}
		return v
	}
	var ser gonum.Implementation
	par := parallelBLAS{}
	same := func(t *testing.T, what string, got, want []float64) {
		t.Helper()
		for i := range want {
			if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
				t.Fatalf("%s: element %d is %v, gonum's %v", what, i, got[i], want[i])
			}
		}
	}
	for _, sh := range []struct{ m, n, pad, inc int }{
		{3, 5, 0, 1}, {1000, 131, 0, 1}, {999, 143, 3, 1}, {4099, 17, 1, 3}, {70001, 7, 0, 1}, {257, 1001, 2, 2},
	} {
		lda := sh.n + sh.pad
		a := fill(lda * sh.m)
		for _, tr := range []blas.Transpose{blas.NoTrans, blas.Trans} {
			lx, ly := sh.n, sh.m
			if tr == blas.Trans {
				lx, ly = sh.m, sh.n
			}
			x := fill((lx-1)*sh.inc + 1)
			y0 := fill((ly-1)*sh.inc + 1)
			for _, beta := range []float64{0, 1, 0.3} {
				want, got := slices.Clone(y0), slices.Clone(y0)
				ser.Dgemv(tr, sh.m, sh.n, 1.7, a, lda, x, sh.inc, beta, want, sh.inc)
				par.Dgemv(tr, sh.m, sh.n, 1.7, a, lda, x, sh.inc, beta, got, sh.inc)
				same(t, "Dgemv", got, want)
			}
		}
		x, y := fill((sh.m-1)*sh.inc+1), fill((sh.n-1)*sh.inc+1)
		want, got := slices.Clone(a), slices.Clone(a)
		ser.Dger(sh.m, sh.n, -0.9, x, sh.inc, y, sh.inc, want, lda)
		par.Dger(sh.m, sh.n, -0.9, x, sh.inc, y, sh.inc, got, lda)
		same(t, "Dger", got, want)
	}

	// The QR the fit orthonormalizes with, with and without parallelBLAS installed.
	m, n := 20000, 40
	a := fill(m * n)
	qr := func() []float64 {
		g := slices.Clone(a)
		var impl lapackgonum.Implementation
		tau := make([]float64, n)
		work := make([]float64, 64*n)
		impl.Dgeqrf(m, n, g, n, tau, work, len(work))
		impl.Dorgqr(m, n, n, g, n, tau, work, len(work))
		return g
	}
	want := qr()
	parallelGonum()
	same(t, "QR", qr(), want)
}
