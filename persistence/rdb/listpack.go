package rdb

import (
	"encoding/binary"
	"errors"
	"strconv"

	"github.com/zredis/zredis/redisconv"
)

// Listpack, Redis's packed list of strings and integers (listpack.c):
//
//	<total bytes u32 LE> <count u16 LE, 65535 = unknown> entry... 0xFF
//
// Each entry is an encoding byte (with the length or the integer), the
// data, and the entry's size again in a reversed variable-length form
// ("backlen") so that the list can be walked from the end.

const (
	lpHeaderSize   = 6
	lpEOF          = 0xFF
	lpCountUnknown = 65535
)

var errListpack = errors.New("listpack integrity check failed")

// lpEntry is one decoded element: a string (str, a view into the
// listpack) or an integer (isInt, ival).
type lpEntry struct {
	str   []byte
	ival  int64
	isInt bool
}

// appendTo appends the element's string form to dst.
func (e lpEntry) appendTo(dst []byte) []byte {
	if e.isInt {
		return strconv.AppendInt(dst, e.ival, 10)
	}
	return append(dst, e.str...)
}

// lpBacklenSize is the size of the backlen of an entry of l bytes.
func lpBacklenSize(l int) int {
	switch {
	case l <= 127:
		return 1
	case l < 16383:
		return 2
	case l < 2097151:
		return 3
	case l < 268435455:
		return 4
	}
	return 5
}

func lpAppendBacklen(dst []byte, l int) []byte {
	switch lpBacklenSize(l) {
	case 1:
		return append(dst, byte(l))
	case 2:
		return append(dst, byte(l>>7), byte(l&127)|128)
	case 3:
		return append(dst, byte(l>>14), byte((l>>7)&127)|128, byte(l&127)|128)
	case 4:
		return append(dst, byte(l>>21), byte((l>>14)&127)|128, byte((l>>7)&127)|128, byte(l&127)|128)
	}
	return append(dst, byte(l>>28), byte((l>>21)&127)|128, byte((l>>14)&127)|128, byte((l>>7)&127)|128, byte(l&127)|128)
}

// lpIntEncodedSize is the encoded size (without backlen) of integer v.
func lpIntEncodedSize(v int64) int {
	switch {
	case v >= 0 && v <= 127:
		return 1
	case v >= -4096 && v <= 4095:
		return 2
	case v >= -32768 && v <= 32767:
		return 3
	case v >= -8388608 && v <= 8388607:
		return 4
	case v >= -2147483648 && v <= 2147483647:
		return 5
	}
	return 9
}

// lpEntrySize is the bytes an element takes in a listpack, backlen
// included, as lpAppend would encode it.
func lpEntrySize(s []byte) int {
	var l int
	if v, ok := redisconv.ParseInt(s); ok {
		l = lpIntEncodedSize(v)
	} else {
		l = lpStrEncodedSize(len(s))
	}
	return l + lpBacklenSize(l)
}

func lpStrEncodedSize(n int) int {
	switch {
	case n < 64:
		return 1 + n
	case n < 4096:
		return 2 + n
	}
	return 5 + n
}

// lpBuilder builds a listpack the way lpAppend does: an element that is
// the canonical form of an int64 is stored as an integer.
type lpBuilder struct {
	b     []byte
	count int
}

func (lb *lpBuilder) reset(dst []byte) {
	lb.b = append(dst[:0], 0, 0, 0, 0, 0, 0)
	lb.count = 0
}

func (lb *lpBuilder) appendInt(v int64) {
	start := len(lb.b)
	u := uint64(v)
	switch lpIntEncodedSize(v) {
	case 1:
		lb.b = append(lb.b, byte(v))
	case 2:
		if v < 0 {
			u = uint64(1<<13 + v)
		}
		lb.b = append(lb.b, byte(u>>8)|0xC0, byte(u))
	case 3:
		lb.b = append(lb.b, 0xF1, byte(u), byte(u>>8))
	case 4:
		lb.b = append(lb.b, 0xF2, byte(u), byte(u>>8), byte(u>>16))
	case 5:
		lb.b = append(lb.b, 0xF3, byte(u), byte(u>>8), byte(u>>16), byte(u>>24))
	default:
		lb.b = append(lb.b, 0xF4)
		lb.b = binary.LittleEndian.AppendUint64(lb.b, u)
	}
	lb.b = lpAppendBacklen(lb.b, len(lb.b)-start)
	lb.count++
}

func (lb *lpBuilder) append(s []byte) {
	if v, ok := redisconv.ParseInt(s); ok {
		lb.appendInt(v)
		return
	}
	start := len(lb.b)
	n := len(s)
	switch {
	case n < 64:
		lb.b = append(lb.b, byte(n)|0x80)
	case n < 4096:
		lb.b = append(lb.b, byte(n>>8)|0xE0, byte(n))
	default:
		lb.b = append(lb.b, 0xF0)
		lb.b = binary.LittleEndian.AppendUint32(lb.b, uint32(n))
	}
	lb.b = append(lb.b, s...)
	lb.b = lpAppendBacklen(lb.b, len(lb.b)-start)
	lb.count++
}

// finish writes the terminator and the header and returns the listpack.
func (lb *lpBuilder) finish() []byte {
	lb.b = append(lb.b, lpEOF)
	binary.LittleEndian.PutUint32(lb.b, uint32(len(lb.b)))
	c := lb.count
	if c >= lpCountUnknown {
		c = lpCountUnknown
	}
	binary.LittleEndian.PutUint16(lb.b[4:], uint16(c))
	return lb.b
}

// lpEach validates the whole listpack as Redis's deep integrity check
// does (header size, every entry within bounds with a consistent
// backlen, the terminator last, the count as the header says) and calls
// fn for each element; fn may be nil to only validate and count. It
// returns the number of elements.
func lpEach(lp []byte, fn func(e lpEntry) error) (int, error) {
	if len(lp) < lpHeaderSize+1 || int(binary.LittleEndian.Uint32(lp)) != len(lp) || lp[len(lp)-1] != lpEOF {
		return 0, errListpack
	}
	want := int(binary.LittleEndian.Uint16(lp[4:]))
	count := 0
	p := lpHeaderSize
	end := len(lp) - 1
	for p < end {
		e, size, ok := lpDecode(lp[p:end])
		if !ok {
			return 0, errListpack
		}
		bl := lpBacklenSize(size)
		if p+size+bl > end || lpDecodeBacklen(lp[p+size:p+size+bl]) != size {
			return 0, errListpack
		}
		if fn != nil {
			if err := fn(e); err != nil {
				return 0, err
			}
		}
		count++
		p += size + bl
	}
	if p != end || (want != lpCountUnknown && want != count) {
		return 0, errListpack
	}
	return count, nil
}

// lpDecodeBacklen decodes a backlen stored in b (most significant part
// first), or -1 when it is not a well-formed backlen of exactly len(b)
// bytes.
func lpDecodeBacklen(b []byte) int {
	v := 0
	for i, c := range b {
		if (i == 0) != (c&128 == 0) {
			return -1 // the first byte has no continuation bit, the others do
		}
		v = v<<7 | int(c&127)
	}
	return v
}

// lpDecode decodes the entry at the start of b (which excludes the
// terminator): the element and its encoded size without backlen.
func lpDecode(b []byte) (lpEntry, int, bool) {
	c := b[0]
	need := func(n int) bool { return len(b) >= n }
	switch {
	case c&0x80 == 0:
		return lpEntry{ival: int64(c & 0x7f), isInt: true}, 1, true
	case c&0xC0 == 0x80:
		n := int(c & 0x3f)
		if !need(1 + n) {
			return lpEntry{}, 0, false
		}
		return lpEntry{str: b[1 : 1+n : 1+n]}, 1 + n, true
	case c&0xE0 == 0xC0:
		if !need(2) {
			return lpEntry{}, 0, false
		}
		u := uint64(c&0x1f)<<8 | uint64(b[1])
		return lpEntry{ival: signExtend(u, 13), isInt: true}, 2, true
	case c&0xF0 == 0xE0:
		if !need(2) {
			return lpEntry{}, 0, false
		}
		n := int(c&0xf)<<8 | int(b[1])
		if !need(2 + n) {
			return lpEntry{}, 0, false
		}
		return lpEntry{str: b[2 : 2+n : 2+n]}, 2 + n, true
	}
	switch c {
	case 0xF0:
		if !need(5) {
			return lpEntry{}, 0, false
		}
		n := uint64(binary.LittleEndian.Uint32(b[1:]))
		if uint64(len(b)-5) < n {
			return lpEntry{}, 0, false
		}
		return lpEntry{str: b[5 : 5+n : 5+n]}, 5 + int(n), true
	case 0xF1, 0xF2, 0xF3, 0xF4:
		w := [...]int{2, 3, 4, 8}[c-0xF1]
		if !need(1 + w) {
			return lpEntry{}, 0, false
		}
		var u uint64
		for i := w; i >= 1; i-- {
			u = u<<8 | uint64(b[i])
		}
		return lpEntry{ival: signExtend(u, uint(w*8)), isInt: true}, 1 + w, true
	}
	return lpEntry{}, 0, false
}

// signExtend interprets the low bits of u as a two's complement number.
func signExtend(u uint64, bits uint) int64 {
	shift := 64 - bits
	return int64(u<<shift) >> shift
}
