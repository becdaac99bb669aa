package embed

import (
	"runtime"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/blas/gonum"
)

// The builtin model's fit spends most of its time in Householder QR and SVD steps on N×l
// matrices (N skills, l ≈ 144), and those are matrix-vector products and rank-one updates
// (Dgemv, Dger), which gonum runs on one core. parallelBLAS runs the large ones on every core,
// and gives the same bits as gonum: each worker calls gonum's own kernel on a block of rows (or,
// for Aᵀx, of columns), and every element is computed by the same operations in the same order
// as in one call. Blocks start at multiples of parBlasAlign, so that the kernels' unrolled row
// groups and vector lanes fall where they fall in one call. TestParallelBLASBits holds the
// bits equal.

// parBlasMin is the least number of matrix elements worth splitting: below it a goroutine's
// start costs more than it saves.
const (
	parBlasMin   = 1 << 16
	parBlasAlign = 64
)

type parallelBLAS struct{ gonum.Implementation }

var useParallelBLAS sync.Once

// parallelGonum installs parallelBLAS as gonum's BLAS for this process. gonum's LAPACK looks its
// BLAS up at every call, through blas64.Implementation; since the results are gonum's bit for
// bit, every other user of gonum in the process sees only the speed.
func parallelGonum() {
	useParallelBLAS.Do(func() {
		if runtime.GOMAXPROCS(0) > 1 {
			blas64.Use(parallelBLAS{})
		}
	})
}

// split calls f on consecutive blocks [lo, hi) of [0, n), one per worker, each block starting at
// a multiple of parBlasAlign.
func split(n int, f func(lo, hi int)) {
	workers := min(runtime.GOMAXPROCS(0), (n+parBlasAlign-1)/parBlasAlign)
	size := ((n+workers-1)/workers + parBlasAlign - 1) / parBlasAlign * parBlasAlign
	var wg sync.WaitGroup
	for lo := 0; lo < n; lo += size {
		hi := min(n, lo+size)
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(lo, hi)
		}()
	}
	wg.Wait()
}

// Dgemv is gonum's, on blocks of the rows of y = αAx + βy, or of the columns of A for
// y = αAᵀx + βy: an element of y is computed by one worker, as in one call.
func (p parallelBLAS) Dgemv(tA blas.Transpose, m, n int, alpha float64, a []float64, lda int, x []float64, incX int, beta float64, y []float64, incY int) {
	g := p.Implementation
	if m*n < parBlasMin || incX <= 0 || incY <= 0 || m == 0 || n == 0 || len(a) < lda*(m-1)+n {
		g.Dgemv(tA, m, n, alpha, a, lda, x, incX, beta, y, incY)
		return
	}
	if tA == blas.NoTrans {
		split(m, func(lo, hi int) {
			g.Dgemv(tA, hi-lo, n, alpha, a[lo*lda:], lda, x, incX, beta, y[lo*incY:], incY)
		})
		return
	}
	split(n, func(lo, hi int) {
		g.Dgemv(tA, m, hi-lo, alpha, a[lo:], lda, x, incX, beta, y[lo*incY:], incY)
	})
}

// Dger is gonum's A += αxyᵀ on blocks of A's rows.
func (p parallelBLAS) Dger(m, n int, alpha float64, x []float64, incX int, y []float64, incY int, a []float64, lda int) {
	g := p.Implementation
	if m*n < parBlasMin || incX <= 0 || incY <= 0 || m == 0 || n == 0 || len(a) < lda*(m-1)+n {
		g.Dger(m, n, alpha, x, incX, y, incY, a, lda)
		return
	}
	split(m, func(lo, hi int) {
		g.Dger(hi-lo, n, alpha, x[lo*incX:], incX, y, incY, a[lo*lda:], lda)
	})
}
