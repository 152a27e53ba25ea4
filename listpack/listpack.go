// Package listpack reads and writes Redis's listpack (listpack.c): a
// packed list of strings and integers in one byte array,
//
//	<total bytes u32 LE> <count u16 LE, 65535 = unknown> element... 0xFF
//
// Each element is an encoding byte (with the length or the integer), the
// data, and the element's size again in a reversed variable-length form
// ("backlen") so that the list can be walked from the end. The RDB
// format stores hashes, sets, sorted sets and stream nodes as listpacks;
// the stream type keeps its nodes in memory as listpacks too, so that
// nodes split exactly where Redis's do.
package listpack

import (
	"encoding/binary"
	"errors"
	"strconv"

	"github.com/zredis/zredis/redisconv"
)

const (
	HeaderSize   = 6
	EOF          = 0xFF
	CountUnknown = 65535
)

// ErrCorrupt is the error of a listpack that fails the integrity check.
var ErrCorrupt = errors.New("listpack integrity check failed")

// Entry is one decoded element: a string (Str, a view into the listpack)
// or an integer (IsInt, Int).
type Entry struct {
	Str   []byte
	Int   int64
	IsInt bool
}

// AppendTo appends the element's string form to dst.
func (e Entry) AppendTo(dst []byte) []byte {
	if e.IsInt {
		return strconv.AppendInt(dst, e.Int, 10)
	}
	return append(dst, e.Str...)
}

// Bytes is the element's string form: a view for a string, a new slice
// for an integer.
func (e Entry) Bytes() []byte {
	if e.IsInt {
		return strconv.AppendInt(nil, e.Int, 10)
	}
	return e.Str
}

// Equal reports whether the element's string form is s.
func (e Entry) Equal(s []byte) bool {
	if e.IsInt {
		v, ok := redisconv.ParseInt(s)
		return ok && v == e.Int
	}
	return string(e.Str) == string(s)
}

// IntValue is the element as an integer, as lpGetIntegerIfValid reads
// it: an integer element, or a string that is one.
func (e Entry) IntValue() (int64, bool) {
	if e.IsInt {
		return e.Int, true
	}
	return redisconv.ParseInt(e.Str)
}

// BacklenSize is the size of the backlen of an element of l bytes.
func BacklenSize(l int) int {
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

// AppendBacklen appends the backlen of an element of l bytes.
func AppendBacklen(dst []byte, l int) []byte {
	switch BacklenSize(l) {
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

// IntEncodedSize is the encoded size (without backlen) of integer v.
func IntEncodedSize(v int64) int {
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

// StrEncodedSize is the encoded size (without backlen) of a string of n
// bytes.
func StrEncodedSize(n int) int {
	switch {
	case n < 64:
		return 1 + n
	case n < 4096:
		return 2 + n
	}
	return 5 + n
}

// EntrySize is the bytes an element takes in a listpack, backlen
// included, as lpAppend would encode it.
func EntrySize(s []byte) int {
	var l int
	if v, ok := redisconv.ParseInt(s); ok {
		l = IntEncodedSize(v)
	} else {
		l = StrEncodedSize(len(s))
	}
	return l + BacklenSize(l)
}

// AppendIntElement appends integer v encoded as an element, backlen
// included.
func AppendIntElement(dst []byte, v int64) []byte {
	start := len(dst)
	u := uint64(v)
	switch IntEncodedSize(v) {
	case 1:
		dst = append(dst, byte(v))
	case 2:
		if v < 0 {
			u = uint64(1<<13 + v)
		}
		dst = append(dst, byte(u>>8)|0xC0, byte(u))
	case 3:
		dst = append(dst, 0xF1, byte(u), byte(u>>8))
	case 4:
		dst = append(dst, 0xF2, byte(u), byte(u>>8), byte(u>>16))
	case 5:
		dst = append(dst, 0xF3, byte(u), byte(u>>8), byte(u>>16), byte(u>>24))
	default:
		dst = append(dst, 0xF4)
		dst = binary.LittleEndian.AppendUint64(dst, u)
	}
	return AppendBacklen(dst, len(dst)-start)
}

// AppendElement appends s encoded as lpAppend does (as an integer when
// it is the canonical form of an int64), backlen included.
func AppendElement(dst []byte, s []byte) []byte {
	if v, ok := redisconv.ParseInt(s); ok {
		return AppendIntElement(dst, v)
	}
	start := len(dst)
	n := len(s)
	switch {
	case n < 64:
		dst = append(dst, byte(n)|0x80)
	case n < 4096:
		dst = append(dst, byte(n>>8)|0xE0, byte(n))
	default:
		dst = append(dst, 0xF0)
		dst = binary.LittleEndian.AppendUint32(dst, uint32(n))
	}
	dst = append(dst, s...)
	return AppendBacklen(dst, len(dst)-start)
}

// Builder builds a listpack the way lpAppend does: an element that is
// the canonical form of an int64 is stored as an integer.
type Builder struct {
	B     []byte
	Count int
}

// Reset starts a new listpack in dst's storage.
func (lb *Builder) Reset(dst []byte) {
	lb.B = append(dst[:0], 0, 0, 0, 0, 0, 0)
	lb.Count = 0
}

// AppendInt appends integer v.
func (lb *Builder) AppendInt(v int64) {
	lb.B = AppendIntElement(lb.B, v)
	lb.Count++
}

// Append appends s.
func (lb *Builder) Append(s []byte) {
	lb.B = AppendElement(lb.B, s)
	lb.Count++
}

// Finish writes the terminator and the header and returns the listpack.
func (lb *Builder) Finish() []byte {
	lb.B = append(lb.B, EOF)
	binary.LittleEndian.PutUint32(lb.B, uint32(len(lb.B)))
	c := lb.Count
	if c >= CountUnknown {
		c = CountUnknown
	}
	binary.LittleEndian.PutUint16(lb.B[4:], uint16(c))
	return lb.B
}

// Each validates the whole listpack as Redis's deep integrity check
// does (header size, every entry within bounds with a consistent
// backlen, the terminator last, the count as the header says) and calls
// fn for each element; fn may be nil to only validate and count. It
// returns the number of elements.
func Each(lp []byte, fn func(e Entry) error) (int, error) {
	if len(lp) < HeaderSize+1 || int(binary.LittleEndian.Uint32(lp)) != len(lp) || lp[len(lp)-1] != EOF {
		return 0, ErrCorrupt
	}
	want := int(binary.LittleEndian.Uint16(lp[4:]))
	count := 0
	p := HeaderSize
	end := len(lp) - 1
	for p < end {
		e, size, ok := Decode(lp[p:end])
		if !ok {
			return 0, ErrCorrupt
		}
		bl := BacklenSize(size)
		if p+size+bl > end || DecodeBacklen(lp[p+size:p+size+bl]) != size {
			return 0, ErrCorrupt
		}
		if fn != nil {
			if err := fn(e); err != nil {
				return 0, err
			}
		}
		count++
		p += size + bl
	}
	if p != end || (want != CountUnknown && want != count) {
		return 0, ErrCorrupt
	}
	return count, nil
}

// DecodeBacklen decodes a backlen stored in b (most significant part
// first), or -1 when it is not a well-formed backlen of exactly len(b)
// bytes.
func DecodeBacklen(b []byte) int {
	v := 0
	for i, c := range b {
		if (i == 0) != (c&128 == 0) {
			return -1 // the first byte has no continuation bit, the others do
		}
		v = v<<7 | int(c&127)
	}
	return v
}

// Decode decodes the element at the start of b (which excludes the
// terminator): the element and its encoded size without backlen.
func Decode(b []byte) (Entry, int, bool) {
	c := b[0]
	need := func(n int) bool { return len(b) >= n }
	switch {
	case c&0x80 == 0:
		return Entry{Int: int64(c & 0x7f), IsInt: true}, 1, true
	case c&0xC0 == 0x80:
		n := int(c & 0x3f)
		if !need(1 + n) {
			return Entry{}, 0, false
		}
		return Entry{Str: b[1 : 1+n : 1+n]}, 1 + n, true
	case c&0xE0 == 0xC0:
		if !need(2) {
			return Entry{}, 0, false
		}
		u := uint64(c&0x1f)<<8 | uint64(b[1])
		return Entry{Int: signExtend(u, 13), IsInt: true}, 2, true
	case c&0xF0 == 0xE0:
		if !need(2) {
			return Entry{}, 0, false
		}
		n := int(c&0xf)<<8 | int(b[1])
		if !need(2 + n) {
			return Entry{}, 0, false
		}
		return Entry{Str: b[2 : 2+n : 2+n]}, 2 + n, true
	}
	switch c {
	case 0xF0:
		if !need(5) {
			return Entry{}, 0, false
		}
		n := uint64(binary.LittleEndian.Uint32(b[1:]))
		if uint64(len(b)-5) < n {
			return Entry{}, 0, false
		}
		return Entry{Str: b[5 : 5+n : 5+n]}, 5 + int(n), true
	case 0xF1, 0xF2, 0xF3, 0xF4:
		w := [...]int{2, 3, 4, 8}[c-0xF1]
		if !need(1 + w) {
			return Entry{}, 0, false
		}
		var u uint64
		for i := w; i >= 1; i-- {
			u = u<<8 | uint64(b[i])
		}
		return Entry{Int: signExtend(u, uint(w*8)), IsInt: true}, 1 + w, true
	}
	return Entry{}, 0, false
}

// signExtend interprets the low bits of u as a two's complement number.
func signExtend(u uint64, bits uint) int64 {
	shift := 64 - bits
	return int64(u<<shift) >> shift
}

// ---- a listpack edited in memory ---------------------------------------------
//
// The functions below work on a whole, valid listpack (header and
// terminator) built by this package or checked by Each; positions are
// byte offsets of elements.

// New returns an empty listpack.
func New() []byte {
	lp := make([]byte, HeaderSize+1, 64)
	binary.LittleEndian.PutUint32(lp, HeaderSize+1)
	lp[HeaderSize] = EOF
	return lp
}

// Bytes is the listpack's total size, as its header records it.
func Bytes(lp []byte) int { return int(binary.LittleEndian.Uint32(lp)) }

// First is the position of the first element, or -1 for an empty list.
func First(lp []byte) int {
	if lp[HeaderSize] == EOF {
		return -1
	}
	return HeaderSize
}

// Last is the position of the last element, or -1 for an empty list.
func Last(lp []byte) int { return Prev(lp, len(lp)-1) }

// At decodes the element at p and returns it and the position of the
// next element (-1 after the last).
func At(lp []byte, p int) (Entry, int) {
	e, size, _ := Decode(lp[p : len(lp)-1])
	next := p + size + BacklenSize(size)
	if lp[next] == EOF {
		next = -1
	}
	return e, next
}

// Next is the position of the element after the one at p, or -1. It
// reads only the element's encoding, not its value.
func Next(lp []byte, p int) int {
	n := encodedSize(lp[p:])
	next := p + n + BacklenSize(n)
	if lp[next] == EOF {
		return -1
	}
	return next
}

// encodedSize is the size, without backlen, of the element b starts
// with (in a valid listpack).
func encodedSize(b []byte) int {
	c := b[0]
	switch {
	case c&0x80 == 0:
		return 1
	case c&0xC0 == 0x80:
		return 1 + int(c&0x3f)
	case c&0xE0 == 0xC0:
		return 2
	case c&0xF0 == 0xE0:
		return 2 + (int(c&0xf)<<8 | int(b[1]))
	}
	switch c {
	case 0xF0:
		return 5 + int(binary.LittleEndian.Uint32(b[1:]))
	case 0xF1:
		return 3
	case 0xF2:
		return 4
	case 0xF3:
		return 5
	}
	return 9 // 0xF4
}

// IntAt is the element at p read as an integer (IntValue), with a fast
// path for the small non-negative integers stream nodes are made of.
func IntAt(lp []byte, p int) (int64, bool) {
	if c := lp[p]; c&0x80 == 0 {
		return int64(c), true
	}
	e, _ := At(lp, p)
	return e.IntValue()
}

// Prev is the position of the element before the one at p (p may be
// the terminator's position), or -1.
func Prev(lp []byte, p int) int {
	if p <= HeaderSize {
		return -1
	}
	q := p - 1
	v, shift := 0, 0
	for {
		c := lp[q]
		v |= int(c&127) << shift
		if c&128 == 0 {
			break
		}
		shift += 7
		q--
	}
	return p - BacklenSize(v) - v
}

// Append appends s as lpAppend does and returns the listpack.
func Append(lp []byte, s []byte) []byte {
	n := len(lp) - 1
	lp = AppendElement(lp[:n], s)
	return finishAppend(lp)
}

// AppendInt appends integer v and returns the listpack.
func AppendInt(lp []byte, v int64) []byte {
	n := len(lp) - 1
	lp = AppendIntElement(lp[:n], v)
	return finishAppend(lp)
}

func finishAppend(lp []byte) []byte {
	lp = append(lp, EOF)
	binary.LittleEndian.PutUint32(lp, uint32(len(lp)))
	if c := binary.LittleEndian.Uint16(lp[4:]); c != CountUnknown {
		binary.LittleEndian.PutUint16(lp[4:], c+1)
	}
	return lp
}

// ReplaceInt replaces the element at p with integer v, as
// lpReplaceInteger does, and returns the listpack (a new array when the
// size changed; the caller must not keep views into the old one).
func ReplaceInt(lp []byte, p int, v int64) []byte {
	_, size, _ := Decode(lp[p : len(lp)-1])
	old := size + BacklenSize(size)
	var buf [16]byte
	enc := AppendIntElement(buf[:0], v)
	if len(enc) == old {
		copy(lp[p:], enc)
		return lp
	}
	out := make([]byte, 0, len(lp)-old+len(enc))
	out = append(out, lp[:p]...)
	out = append(out, enc...)
	out = append(out, lp[p+old:]...)
	binary.LittleEndian.PutUint32(out, uint32(len(out)))
	return out
}
