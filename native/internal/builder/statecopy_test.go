package builder

import (
	"bytes"
	"hash/crc32"
	"math/rand/v2"
	"testing"
)

// TestGather holds gather and checksum to one copy and crc32.Checksum, for sizes around the
// split into workers and for pieces that straddle the workers' bounds.
func TestGather(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tt := range []struct {
		name  string
		sizes []int
	}{
		{"empty", nil},
		{"one small piece", []int{10}},
		{"empty pieces", []int{0, 5, 0}},
		{"below the split", []int{parallelBytes - 1}},
		{"at the split", []int{parallelBytes, 1}},
		{"many pieces", []int{3, parallelBytes / 3, 1, 2 * parallelBytes, 0, 17, parallelBytes + 5, 9}},
		{"large", []int{5*parallelBytes + 3}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var pieces [][]byte
			var want []byte
			for _, n := range tt.sizes {
				p := make([]byte, n)
				for i := range p {
					p[i] = byte(rng.Uint32())
				}
				pieces = append(pieces, p)
				want = append(want, p...)
			}
			got, sum := gather(pieces, 4)
			if !bytes.Equal(got, want) {
				t.Fatalf("gather of %v: bytes differ", tt.sizes)
			}
			if w := crc32.Checksum(want, castagnoli); sum != w || checksum(want) != w {
				t.Errorf("gather of %v: checksum %08x, checksum() %08x, want %08x", tt.sizes, sum, checksum(want), w)
			}
		})
	}
}

// TestCRC32CCombine holds crc32cCombine to the checksum of the joined bytes.
func TestCRC32CCombine(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range [][2]int{{0, 0}, {0, 7}, {7, 0}, {1, 1}, {100, 1000}, {4096, 3}, {12345, 65537}} {
		a, b := make([]byte, n[0]), make([]byte, n[1])
		for i := range a {
			a[i] = byte(rng.Uint32())
		}
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		want := crc32.Checksum(append(append([]byte(nil), a...), b...), castagnoli)
		if got := crc32cCombine(crc32.Checksum(a, castagnoli), crc32.Checksum(b, castagnoli), int64(len(b))); got != want {
			t.Errorf("combine of %d and %d bytes: %08x, want %08x", n[0], n[1], got, want)
		}
	}
}
