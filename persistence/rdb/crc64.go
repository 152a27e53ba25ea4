package rdb

import "hash/crc64"

// Redis's CRC-64 (crc64.c): the Jones polynomial 0xad93d23594c935a9,
// reflected input and output, initial value 0 and no final XOR. The
// standard library's table-driven update computes the reflected CRC with
// an inversion before and after, which the complements below undo.
const jonesReflected = 0x95ac9329ac4bc9b5

var jonesTable = crc64.MakeTable(jonesReflected)

// crc64Update continues Redis's CRC-64 of some bytes with p.
func crc64Update(crc uint64, p []byte) uint64 {
	return ^crc64.Update(^crc, jonesTable, p)
}

// CRC64 is Redis's CRC-64 of p (crc64(0, p, len) in Redis): the
// checksum that ends RDB files and DUMP payloads.
func CRC64(p []byte) uint64 { return crc64Update(0, p) }
