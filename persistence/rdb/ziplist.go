package rdb

import (
	"encoding/binary"
	"errors"

	"github.com/zredis/zredis/listpack"
)

// Ziplist, the packed encoding of Redis before 7.0 (ziplist.c), read
// from older RDB files only:
//
//	<zlbytes u32 LE> <zltail u32 LE> <zllen u16 LE> entry... 0xFF
//
// Each entry is the previous entry's size (1 byte, or 0xFE and a u32 LE),
// an encoding (string lengths big-endian, integers little-endian), and
// the data.

var errZiplist = errors.New("ziplist integrity check failed")

const zlHeaderSize = 10

// zlEach validates the whole ziplist as Redis's deep integrity check
// does and calls fn (may be nil) for each element; it returns the count.
func zlEach(zl []byte, fn func(e listpack.Entry) error) (int, error) {
	if len(zl) < zlHeaderSize+1 || int(binary.LittleEndian.Uint32(zl)) != len(zl) || zl[len(zl)-1] != 0xFF {
		return 0, errZiplist
	}
	tail := int(binary.LittleEndian.Uint32(zl[4:]))
	want := int(binary.LittleEndian.Uint16(zl[8:]))
	if tail > len(zl)-1 {
		return 0, errZiplist
	}
	end := len(zl) - 1
	p, prevSize, last, count := zlHeaderSize, 0, zlHeaderSize, 0
	for p < end {
		e, size, ok := zlDecode(zl[p:end], prevSize)
		if !ok {
			return 0, errZiplist
		}
		if fn != nil {
			if err := fn(e); err != nil {
				return 0, err
			}
		}
		count++
		last = p
		prevSize = size
		p += size
	}
	if p != end || (want != 65535 && want != count) || (count > 0 && tail != last) || (count == 0 && tail != zlHeaderSize) {
		return 0, errZiplist
	}
	return count, nil
}

// zlDecode decodes the entry at the start of b, whose prevlen field must
// say prev; it returns the element and the entry's whole size.
func zlDecode(b []byte, prev int) (listpack.Entry, int, bool) {
	var e listpack.Entry
	p := 0
	if len(b) < 1 {
		return e, 0, false
	}
	switch {
	case b[0] < 0xFE:
		if int(b[0]) != prev {
			return e, 0, false
		}
		p = 1
	case b[0] == 0xFE:
		if len(b) < 5 || int64(binary.LittleEndian.Uint32(b[1:])) != int64(prev) {
			return e, 0, false
		}
		p = 5
	default:
		return e, 0, false
	}
	if len(b) < p+1 {
		return e, 0, false
	}
	c := b[p]
	strLen := -1
	switch c >> 6 {
	case 0:
		strLen, p = int(c&0x3f), p+1
	case 1:
		if len(b) < p+2 {
			return e, 0, false
		}
		strLen, p = int(c&0x3f)<<8|int(b[p+1]), p+2
	case 2:
		if len(b) < p+5 { // the low 6 bits are ignored, as Redis does
			return e, 0, false
		}
		n := uint64(binary.BigEndian.Uint32(b[p+1:]))
		if n > uint64(len(b)) {
			return e, 0, false
		}
		strLen, p = int(n), p+5
	}
	if strLen >= 0 {
		if len(b)-p < strLen {
			return e, 0, false
		}
		return listpack.Entry{Str: b[p : p+strLen : p+strLen]}, p + strLen, true
	}
	p++
	w := 0
	switch c {
	case 0xC0:
		w = 2
	case 0xD0:
		w = 4
	case 0xE0:
		w = 8
	case 0xF0:
		w = 3
	case 0xFE:
		w = 1
	default:
		if c >= 0xF1 && c <= 0xFD {
			return listpack.Entry{Int: int64(c&0x0f) - 1, IsInt: true}, p, true
		}
		return e, 0, false
	}
	if len(b) < p+w {
		return e, 0, false
	}
	var u uint64
	for i := w - 1; i >= 0; i-- {
		u = u<<8 | uint64(b[p+i])
	}
	return listpack.Entry{Int: signExtend(u, uint(w*8)), IsInt: true}, p + w, true
}

// signExtend interprets the low bits of u as a two's complement number.
func signExtend(u uint64, bits uint) int64 {
	shift := 64 - bits
	return int64(u<<shift) >> shift
}
