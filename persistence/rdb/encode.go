package rdb

import (
	"encoding/binary"
	"math"
	"unsafe"

	"github.com/zredis/zredis/keyspace"
	"github.com/zredis/zredis/listpack"
	"github.com/zredis/zredis/redisconv"
)

// encoder serializes values into buf, in the encodings redis-server 7.0
// writes for the same values (7.4's for a hash with field TTLs), so that
// Redis loads them with the same OBJECT ENCODING.
type encoder struct {
	buf      []byte
	compress bool
	lzf      lzfCompressor
	lp       listpack.Builder
	node     []byte
}

func (e *encoder) writeLen(n uint64) {
	switch {
	case n < 1<<6:
		e.buf = append(e.buf, byte(n))
	case n < 1<<14:
		e.buf = append(e.buf, byte(n>>8)|len14Bit<<6, byte(n))
	case n <= math.MaxUint32:
		e.buf = append(e.buf, len32Bit)
		e.buf = binary.BigEndian.AppendUint32(e.buf, uint32(n))
	default:
		e.buf = append(e.buf, len64Bit)
		e.buf = binary.BigEndian.AppendUint64(e.buf, n)
	}
}

// writeString writes s as rdbSaveRawString does: as an 8, 16 or 32-bit
// integer when s is the canonical form of one (and at most 11 bytes),
// else LZF-compressed when compression is on, s is longer than 20 bytes
// and compressing saves at least 4 bytes, else verbatim.
func (e *encoder) writeString(s []byte) {
	if len(s) <= 11 {
		if v, ok := redisconv.ParseInt(s); ok && v >= math.MinInt32 && v <= math.MaxInt32 {
			e.writeInt(v)
			return
		}
	}
	if e.compress && len(s) > 20 && len(s) <= math.MaxUint32 {
		// Leave room for the header: encoding byte and two lengths.
		mark := len(e.buf)
		e.buf = append(e.buf, make([]byte, 1+5+5)...)
		hdrEnd := len(e.buf)
		out, ok := e.lzf.compress(e.buf, s, len(s)-4)
		if ok {
			clen := len(out) - hdrEnd
			var hdr [11]byte
			h := hdr[:0]
			h = append(h, lenEnc<<6|encLZF)
			h = appendLen(h, uint64(clen))
			h = appendLen(h, uint64(len(s)))
			// Move the compressed bytes right after the real header.
			copy(out[mark:], h)
			copy(out[mark+len(h):], out[hdrEnd:])
			e.buf = out[:mark+len(h)+clen]
			return
		}
		e.buf = e.buf[:mark]
	}
	e.writeLen(uint64(len(s)))
	e.buf = append(e.buf, s...)
}

func appendLen(b []byte, n uint64) []byte {
	e := encoder{buf: b}
	e.writeLen(n)
	return e.buf
}

func (e *encoder) writeInt(v int64) {
	switch {
	case v >= math.MinInt8 && v <= math.MaxInt8:
		e.buf = append(e.buf, lenEnc<<6|encInt8, byte(v))
	case v >= math.MinInt16 && v <= math.MaxInt16:
		e.buf = append(e.buf, lenEnc<<6|encInt16, byte(v), byte(v>>8))
	default:
		e.buf = append(e.buf, lenEnc<<6|encInt32, byte(v), byte(v>>8), byte(v>>16), byte(v>>24))
	}
}

// writeStringFromString is writeString for a string (no copy).
func (e *encoder) writeStringFromString(s string) {
	e.writeString(bytesOf(s))
}

// typeOf is the RDB type Redis 7.0 writes for the entry, or 7.4 for a
// hash with field TTLs (hashType).
func typeOf(en *keyspace.Entry) byte {
	switch o := en.Obj().(type) {
	case *keyspace.List:
		return typeListQuicklist2
	case *keyspace.Set:
		if o.IsIntset() {
			return typeSetIntset
		}
		return typeSet
	case *keyspace.ZSet:
		if o.IsListpack() {
			return typeZSetListpack
		}
		return typeZSet2
	case *keyspace.Hash:
		return hashType(o)
	case *keyspace.Stream:
		return typeStreamListpacks2
	}
	return typeString
}

// writeObject writes the value of en (without its type byte).
func (e *encoder) writeObject(en *keyspace.Entry) {
	switch o := en.Obj().(type) {
	case nil:
		e.writeString(en.Str())
	case *keyspace.List:
		e.writeList(o)
	case *keyspace.Set:
		e.writeSet(o)
	case *keyspace.ZSet:
		e.writeZSet(o)
	case *keyspace.Hash:
		e.writeHash(o)
	case *keyspace.Stream:
		e.writeStream(o)
	}
}

// writeList writes a QUICKLIST_2: nodes filled as Redis fills them with
// list-max-listpack-size -2 (a node takes an element while its listpack
// plus the element plus 8 bytes stays within 8 kB), elements of 1 GB or
// more in plain nodes of their own.
func (e *encoder) writeList(l *keyspace.List) {
	// First pass: count the nodes, since the count comes first.
	nodes := 0
	size := -1 // bytes of the current packed node, -1 when none is open
	l.Each(0, false, func(_ int, v []byte) bool {
		switch {
		case len(v) >= plainNodeSize:
			nodes++
			size = -1
		case size >= 0 && size+len(v)+quicklistNodeOverhead <= quicklistNodeBytes:
			size += listpack.EntrySize(v)
		default:
			nodes++
			size = listpack.HeaderSize + 1 + listpack.EntrySize(v)
		}
		return true
	})
	e.writeLen(uint64(nodes))
	open := false
	size = -1
	flush := func() {
		if open {
			e.writeLen(containerPacked)
			e.node = e.lp.Finish()
			e.writeString(e.node)
			open = false
		}
	}
	l.Each(0, false, func(_ int, v []byte) bool {
		if len(v) >= plainNodeSize {
			flush()
			e.writeLen(containerPlain)
			e.writeString(v)
			size = -1
			return true
		}
		if !open || size+len(v)+quicklistNodeOverhead > quicklistNodeBytes {
			flush()
			e.lp.Reset(e.node)
			open = true
			size = listpack.HeaderSize + 1
		}
		e.lp.Append(v)
		size += listpack.EntrySize(v)
		return true
	})
	flush()
}

func (e *encoder) writeSet(s *keyspace.Set) {
	if s.IsIntset() {
		e.node = intsetAppend(e.node[:0], s.Ints())
		e.writeString(e.node)
		return
	}
	e.writeLen(uint64(s.Len()))
	var tmp []byte
	s.Each(func(m keyspace.Member) bool {
		if m.IsInt {
			tmp = m.Bytes(tmp[:0])
			e.writeString(tmp)
		} else {
			e.writeStringFromString(m.Str)
		}
		return true
	})
}

// writeZSet writes a listpack of member, score pairs in ascending order
// for a small set, else ZSET_2 from the greatest element to the smallest
// as Redis walks its skiplist from the tail (so that loading inserts at
// the head).
func (e *encoder) writeZSet(z *keyspace.ZSet) {
	if z.IsListpack() {
		e.lp.Reset(e.node)
		var score []byte
		z.Ascend(0, func(m string, s float64) bool {
			e.lp.Append(bytesOf(m))
			score = formatScore(score[:0], s)
			e.lp.Append(score)
			return true
		})
		e.node = e.lp.Finish()
		e.writeString(e.node)
		return
	}
	e.writeLen(uint64(z.Len()))
	z.Descend(z.Len()-1, func(m string, s float64) bool {
		e.writeStringFromString(m)
		e.buf = binary.LittleEndian.AppendUint64(e.buf, math.Float64bits(s))
		return true
	})
}

func (e *encoder) writeHash(h *keyspace.Hash) {
	if h.HasFieldTTLs() {
		e.writeHashTTLs(h)
		return
	}
	if isSmall(h) {
		e.lp.Reset(e.node)
		h.Range(func(f, v []byte) bool {
			e.lp.Append(f)
			e.lp.Append(v)
			return true
		})
		e.node = e.lp.Finish()
		e.writeString(e.node)
		return
	}
	e.writeLen(uint64(h.Len()))
	h.Range(func(f, v []byte) bool {
		e.writeString(f)
		e.writeString(v)
		return true
	})
}

// bytesOf views a string's bytes without copying; they must not be
// modified.
func bytesOf(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }
