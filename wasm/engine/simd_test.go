package engine

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// dotsKernel is the kernel the dots tests hold to dotsRef: the platform's (simdDots) where it has
// one, else dotsGo.
func dotsKernel() func(rows []int8, dim int, q []int16, out []int32) {
	if simdDots != nil {
		return simdDots
	}
	return dotsGo
}

// dotsRef is Σ_j q[j]·rows[i·dim+j] for the first n rows, summed in int64 and wrapped to int32
// as the kernels' sums wrap: equal to theirs whatever the values.
func dotsRef(rows []int8, dim int, q []int16, n int) []int32 {
	out := make([]int32, n)
	for i := range out {
		var d int64
		for j := range dim {
			d += int64(q[j]) * int64(rows[i*dim+j])
		}
		out[i] = int32(d)
	}
	return out
}

// checkDots runs the kernel on n rows of dim dimensions and compares its sums with dotsRef's.
// The rows and the query sit between bytes and lanes of other values, so that a read past a
// row's or the query's ends changes a sum.
func checkDots(t testing.TB, rows []int8, dim int, q []int16, n int, what string) {
	t.Helper()
	const pad = 40
	rbuf := make([]int8, pad+n*dim+pad)
	qbuf := make([]int16, pad+dim+pad)
	for i := range rbuf {
		rbuf[i] = int8(i*37 + 11)
	}
	for i := range qbuf {
		qbuf[i] = int16(i*4099 + 7)
	}
	r := rbuf[pad : pad+n*dim : pad+n*dim]
	copy(r, rows[:n*dim])
	qq := qbuf[pad : pad+dim : pad+dim]
	copy(qq, q[:dim])
	got := make([]int32, n)
	dotsKernel()(r, dim, qq, got)
	if want := dotsRef(rows, dim, q, n); !slices.Equal(got, want) {
		t.Fatalf("%s, dim %d, %d rows: kernel %v, want %v", what, dim, n, got, want)
	}
}

// dotsCases are the kernel's tests: each fills the rows and the query of one call.
var dotsCases = []struct {
	name string
	fill func(rng *rand.Rand, rows []int8, q []int16)
}{
	{"random", func(rng *rand.Rand, rows []int8, q []int16) {
		for i := range rows {
			rows[i] = int8(rng.Uint32())
		}
		for j := range q {
			q[j] = int16(rng.Uint32())
		}
	}},
	{"extremes", func(rng *rand.Rand, rows []int8, q []int16) {
		for i := range rows {
			rows[i] = []int8{-128, 127, -127, 0}[rng.IntN(4)]
		}
		for j := range q {
			q[j] = []int16{-32768, 32767, -32767, 0}[rng.IntN(4)]
		}
	}},
	{"lowest", func(_ *rand.Rand, rows []int8, q []int16) {
		for i := range rows {
			rows[i] = -128
		}
		for j := range q {
			q[j] = -32768
		}
	}},
	{"roundQuery16's largest lanes", func(_ *rand.Rand, rows []int8, q []int16) {
		for i := range rows {
			rows[i] = 127
		}
		u := make([]float32, len(q))
		for j := range u {
			u[j] = 1
		}
		qi, _, _ := roundQuery16(nil, unit32(f64s(u)))
		copy(q, qi)
	}},
}

// TestSIMDDots holds the kernel (simdDots, else dotsGo) to dotsRef for every dimension from 1 to
// 300 (whole passes of 16, and every remainder a pass leaves), for numbers of rows around the
// kernel's passes of four, and for values at the ends of int8 and int16.
func TestSIMDDots(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 17))
	for _, tc := range dotsCases {
		for dim := 1; dim <= 300; dim++ {
			for _, n := range []int{0, 1, 2, 3, 4, 5, 7, 8, 9, 13} {
				rows, q := make([]int8, n*dim), make([]int16, dim)
				tc.fill(rng, rows, q)
				checkDots(t, rows, dim, q, n, tc.name)
			}
		}
	}
}

// FuzzSIMDDots holds the kernel to dotsRef on any rows and query: the first 2·dim bytes of data
// are the query's lanes (little-endian, zero past the end), the rest the rows, at most 64.
func FuzzSIMDDots(f *testing.F) {
	rng := rand.New(rand.NewPCG(5, 18))
	for _, tc := range dotsCases {
		for _, dim := range []int{1, 15, 16, 17, 31, 128, 300} {
			rows, q := make([]int8, 5*dim), make([]int16, dim)
			tc.fill(rng, rows, q)
			data := make([]byte, 2*dim, 2*dim+len(rows))
			for j, x := range q {
				binary.LittleEndian.PutUint16(data[2*j:], uint16(x))
			}
			for _, x := range rows {
				data = append(data, byte(x))
			}
			f.Add(uint16(dim), data)
		}
	}
	f.Fuzz(func(t *testing.T, dim uint16, data []byte) {
		d := 1 + int(dim)%300
		q := make([]int16, d)
		for j := range q {
			if 2*j+1 < len(data) {
				q[j] = int16(binary.LittleEndian.Uint16(data[2*j:]))
			}
		}
		var rows []int8
		if len(data) > 2*d {
			for _, b := range data[2*d:] {
				rows = append(rows, int8(b))
			}
		}
		checkDots(t, rows, d, q, min(len(rows)/d, 64), "fuzz")
	})
}

// approxKernel is the kernel the approximation tests hold to approxGo: the platform's
// (simdApprox) where it has one, else approxGo itself.
func approxKernel() func(dots []int32, invNorm []float32, scale float64, approx []float64, hist []int32) {
	if simdApprox != nil {
		return simdApprox
	}
	return approxGo
}

// checkApprox runs the kernel on dots and invNorm with a histogram of buckets+1 counts and holds
// it to approxGo: the same approximations bit for bit (a sign of zero included) and the same
// counts. The approximations and the histogram sit between values that a write out of place
// would change.
func checkApprox(t testing.TB, dots []int32, invNorm []float32, scale float64, buckets int, what string) {
	t.Helper()
	n := len(dots)
	want, wantHist := make([]float64, n), make([]int32, buckets+1)
	approxGo(dots, invNorm, scale, want, wantHist)
	const pad = 8
	abuf, hbuf := make([]float64, pad+n+pad), make([]int32, pad+buckets+1+pad)
	for i := range abuf {
		abuf[i] = float64(i) + 0.5
	}
	for i := range hbuf {
		hbuf[i] = int32(1000 + i)
	}
	got, hist := abuf[pad:pad+n:pad+n], hbuf[pad:pad+buckets+1:pad+buckets+1]
	clear(hist)
	approxKernel()(dots, invNorm, scale, got, hist)
	for i := range got {
		if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
			t.Fatalf("%s, %d skills, %d buckets: approximation %d is %v (%#x), want %v (%#x)",
				what, n, buckets, i, got[i], math.Float64bits(got[i]), want[i], math.Float64bits(want[i]))
		}
	}
	for b := range hist {
		if hist[b] != wantHist[b] {
			t.Fatalf("%s, %d skills, %d buckets: bucket %d counts %d, want %d", what, n, buckets, b, hist[b], wantHist[b])
		}
	}
	for i := range pad {
		if abuf[i] != float64(i)+0.5 || abuf[pad+n+i] != float64(pad+n+i)+0.5 ||
			hbuf[i] != int32(1000+i) || hbuf[pad+buckets+1+i] != int32(1000+pad+buckets+1+i) {
			t.Fatalf("%s, %d skills, %d buckets: a write outside the approximations or the histogram", what, n, buckets)
		}
	}
}

// approxCases are the approximation kernel's tests: each fills the dot products and the inverse
// norms of one call and returns the scale.
var approxCases = []struct {
	name string
	fill func(rng *rand.Rand, dots []int32, invNorm []float32) float64
}{
	// nearest16's: cosines around 0 (half of them in the first bucket), a few near 1.
	{"cosines", func(rng *rand.Rand, dots []int32, invNorm []float32) float64 {
		const scale = 1.0 / (1 << 22)
		for i := range dots {
			invNorm[i] = float32(1 / (280 + 40*rng.Float64()))
			a := rng.NormFloat64() * 0.1
			if rng.IntN(20) == 0 {
				a = 0.9 + 0.2*rng.Float64()
			}
			dots[i] = int32(a / scale / float64(invNorm[i]))
		}
		return scale
	}},
	// Approximations of whole multiples of 1/4096 and next to them: the buckets' edges, at and
	// past both ends, from below and from above zero.
	{"edges", func(rng *rand.Rand, dots []int32, invNorm []float32) float64 {
		for i := range dots {
			dots[i] = int32(rng.IntN(4096+20)-10) + []int32{0, 1, -1}[rng.IntN(3)]<<20
			invNorm[i] = 1
			if rng.IntN(3) == 0 {
				invNorm[i] = math.Nextafter32(1, float32(rng.IntN(3)))
			}
		}
		return 1.0 / 4096
	}},
	// Skills without a vector (inverse norm 0), among them negative dot products (−0).
	{"no vector", func(rng *rand.Rand, dots []int32, invNorm []float32) float64 {
		for i := range dots {
			dots[i] = int32(rng.Uint32())
			if rng.IntN(2) == 0 {
				invNorm[i] = float32(rng.Float64())
			}
		}
		return 1.0 / (1 << 31)
	}},
	// The ends of int32.
	{"extremes", func(rng *rand.Rand, dots []int32, invNorm []float32) float64 {
		for i := range dots {
			dots[i] = []int32{math.MinInt32, math.MaxInt32, math.MinInt32 + 1, 0}[rng.IntN(4)]
			invNorm[i] = []float32{1, 0.5, 1.0 / 3, 0}[rng.IntN(4)]
		}
		return 1.0 / (1 << 31)
	}},
}

// TestSIMDApprox holds the approximation kernel (simdApprox, else approxGo) to approxGo for
// numbers of skills around the kernel's passes of four and a library's worth, and for nearest16's
// histogram as well as for coarser ones (one bucket, 1,000 buckets of an inexact width).
func TestSIMDApprox(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 19))
	for _, tc := range approxCases {
		for _, n := range []int{0, 1, 2, 3, 4, 5, 7, 8, 9, 13, 1000} {
			for _, buckets := range []int{simdBuckets, 0, 1, 1000} {
				dots, invNorm := make([]int32, n), make([]float32, n)
				scale := tc.fill(rng, dots, invNorm)
				checkApprox(t, dots, invNorm, scale, buckets, tc.name)
			}
		}
	}
}

// FuzzSIMDApprox holds the approximation kernel to approxGo on any dot products and inverse norms
// in [0, 1): every six bytes of data are a skill's dot product (int32, little-endian) and its
// inverse norm (uint16/65536), at most 64 skills; the scale is 2^−(31+shift%20), so that every
// approximation times the buckets stays within int32 as approxAVX2 needs.
func FuzzSIMDApprox(f *testing.F) {
	rng := rand.New(rand.NewPCG(7, 20))
	for _, n := range []int{1, 4, 7, 13} {
		data := make([]byte, 6*n)
		for i := range data {
			data[i] = byte(rng.Uint32())
		}
		f.Add(data, uint8(0), uint16(simdBuckets))
		f.Add(data, uint8(9), uint16(1000))
	}
	f.Fuzz(func(t *testing.T, data []byte, shift uint8, buckets uint16) {
		n := min(len(data)/6, 64)
		dots, invNorm := make([]int32, n), make([]float32, n)
		for i := range n {
			dots[i] = int32(binary.LittleEndian.Uint32(data[6*i:]))
			invNorm[i] = float32(binary.LittleEndian.Uint16(data[6*i+4:])) / 65536
		}
		checkApprox(t, dots, invNorm, math.Ldexp(1, -31-int(shift%20)), int(buckets), "fuzz")
	})
}
