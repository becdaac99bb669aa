package graphs

// The header's checksum is CRC-32C (Castagnoli). Native builds take it from hash/crc32, which
// uses the CPU's CRC32 instruction; the WebAssembly module, which has no such instruction, uses
// crc32c below, which is the same slicing-by-8 algorithm as hash/crc32's portable path in a
// fraction of its code (no hash.Hash, no lazily built tables behind sync.Once).

// crc32cTable is slicing-by-8 tables for the reflected Castagnoli polynomial 0x82f63b78.
var crc32cTable = func() *[8][256]uint32 {
	t := new([8][256]uint32)
	for i := range 256 {
		c := uint32(i)
		for range 8 {
			if c&1 == 1 {
				c = c>>1 ^ 0x82f63b78
			} else {
				c >>= 1
			}
		}
		t[0][i] = c
	}
	for i := range 256 {
		c := t[0][i]
		for k := 1; k < 8; k++ {
			c = t[0][c&0xff] ^ c>>8
			t[k][i] = c
		}
	}
	return t
}()

// crc32c is the CRC-32C of b, as crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)) gives it.
func crc32c(b []byte) uint32 {
	t := crc32cTable
	crc := ^uint32(0)
	for len(b) >= 8 {
		crc ^= uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
		crc = t[0][b[7]] ^ t[1][b[6]] ^ t[2][b[5]] ^ t[3][b[4]] ^
			t[4][crc>>24] ^ t[5][crc>>16&0xff] ^ t[6][crc>>8&0xff] ^ t[7][crc&0xff]
		b = b[8:]
	}
	for _, c := range b {
		crc = t[0][byte(crc)^c] ^ crc>>8
	}
	return ^crc
}
