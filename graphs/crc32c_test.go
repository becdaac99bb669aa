package graphs

import (
	"hash/crc32"
	"math/rand/v2"
	"testing"
)

func TestCRC32CMatchesHashCRC32(t *testing.T) {
	tab := crc32.MakeTable(crc32.Castagnoli)
	r := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, 4099)
	for i := range buf {
		buf[i] = byte(r.Uint32())
	}
	for _, n := range []int{0, 1, 7, 8, 9, 15, 16, 17, 63, 64, 1000, 4099} {
		for _, off := range []int{0, 1, 3} {
			if off+n > len(buf) {
				continue
			}
			b := buf[off : off+n]
			if got, want := crc32c(b), crc32.Checksum(b, tab); got != want {
				t.Errorf("crc32c of %d bytes at %d = %08x, want %08x", n, off, got, want)
			}
		}
	}
	// The check value of the CRC-32C catalogue entry.
	if got := crc32c([]byte("123456789")); got != 0xe3069283 {
		t.Errorf("crc32c(\"123456789\") = %08x, want e3069283", got)
	}
}

func FuzzCRC32C(f *testing.F) {
	f.Add([]byte("123456789"))
	tab := crc32.MakeTable(crc32.Castagnoli)
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := crc32c(b), crc32.Checksum(b, tab); got != want {
			t.Fatalf("crc32c = %08x, want %08x", got, want)
		}
	})
}
