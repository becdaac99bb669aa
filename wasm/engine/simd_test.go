package engine

import (
	"encoding/binary"
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
		qi, _, _ := roundQuery16(unit32(f64s(u)))
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
