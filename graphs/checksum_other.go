//go:build !wasm

package graphs

import "hash/crc32"

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// checksum is the artifact's CRC-32C, with the CPU's CRC32 instruction where there is one.
func checksum(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }
