package builder

import (
	"hash/crc32"
	"runtime"
	"sync"
)

// A build state is tens of megabytes, most of it copied as it was (the library, the runs):
// writing it into a fresh buffer is page faults and copying, and its checksum one pass more.
// Both are split over the cores: each worker copies its share of the bytes and checksums it,
// and the checksums of the shares are joined (crc32cCombine) into the checksum of the whole.

// parallelBytes is the least size worth splitting: below it one worker does it all.
const parallelBytes = 4 << 20

// gather returns the pieces one after another, with room for extra more bytes, and the
// CRC-32C (Castagnoli) of the pieces.
func gather(pieces [][]byte, extra int) ([]byte, uint32) {
	total := 0
	for _, p := range pieces {
		total += len(p)
	}
	out := make([]byte, total, total+extra)
	workers := min(runtime.GOMAXPROCS(0), 4, max(1, total/parallelBytes))
	sums := make([]uint32, workers)
	bound := func(w int) int { return int(int64(total) * int64(w) / int64(workers)) }
	work := func(w int) {
		lo, hi := bound(w), bound(w+1)
		at := 0
		for _, p := range pieces {
			// the part of p that falls in [lo, hi)
			from, to := max(lo, at), min(hi, at+len(p))
			if from < to {
				copy(out[from:to], p[from-at:to-at])
			}
			at += len(p)
			if at >= hi {
				break
			}
		}
		sums[w] = crc32.Checksum(out[lo:hi], castagnoli)
	}
	var wg sync.WaitGroup
	for w := 1; w < workers; w++ {
		wg.Add(1)
		go func() { defer wg.Done(); work(w) }()
	}
	work(0)
	wg.Wait()
	sum := sums[0]
	for w := 1; w < workers; w++ {
		sum = crc32cCombine(sum, sums[w], int64(bound(w+1)-bound(w)))
	}
	return out, sum
}

// checksum is the CRC-32C of data, over the cores for a large one.
func checksum(data []byte) uint32 {
	workers := min(runtime.GOMAXPROCS(0), 4, max(1, len(data)/parallelBytes))
	if workers == 1 {
		return crc32.Checksum(data, castagnoli)
	}
	sums := make([]uint32, workers)
	bound := func(w int) int { return int(int64(len(data)) * int64(w) / int64(workers)) }
	var wg sync.WaitGroup
	for w := 1; w < workers; w++ {
		wg.Add(1)
		go func() { defer wg.Done(); sums[w] = crc32.Checksum(data[bound(w):bound(w+1)], castagnoli) }()
	}
	sums[0] = crc32.Checksum(data[:bound(1)], castagnoli)
	wg.Wait()
	sum := sums[0]
	for w := 1; w < workers; w++ {
		sum = crc32cCombine(sum, sums[w], int64(bound(w+1)-bound(w)))
	}
	return sum
}

// crc32cCombine returns the CRC-32C of a‖b from crcA of a, crcB of b and the length of b: the
// CRC of a, as the state of a register, run through len2 zero bytes, then xored with crcB
// (zlib's crc32_combine, by squaring the operator of one zero bit).
func crc32cCombine(crcA, crcB uint32, len2 int64) uint32 {
	if len2 <= 0 {
		return crcA
	}
	var even, odd [32]uint32
	odd[0] = crc32.Castagnoli // the operator of one zero bit
	row := uint32(1)
	for n := 1; n < 32; n++ {
		odd[n] = row
		row <<= 1
	}
	gf2Square(even[:], odd[:]) // two zero bits
	gf2Square(odd[:], even[:]) // four
	for {
		gf2Square(even[:], odd[:]) // the first is eight bits: one zero byte
		if len2&1 != 0 {
			crcA = gf2Times(even[:], crcA)
		}
		len2 >>= 1
		if len2 == 0 {
			break
		}
		gf2Square(odd[:], even[:])
		if len2&1 != 0 {
			crcA = gf2Times(odd[:], crcA)
		}
		len2 >>= 1
		if len2 == 0 {
			break
		}
	}
	return crcA ^ crcB
}

// gf2Times is the 32×32 bit matrix mat times the vector vec.
func gf2Times(mat []uint32, vec uint32) uint32 {
	var sum uint32
	for i := 0; vec != 0; i, vec = i+1, vec>>1 {
		if vec&1 != 0 {
			sum ^= mat[i]
		}
	}
	return sum
}

// gf2Square sets square to mat times mat.
func gf2Square(square, mat []uint32) {
	for n := range 32 {
		square[n] = gf2Times(mat, mat[n])
	}
}
