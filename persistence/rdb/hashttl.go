package rdb

import (
	"encoding/binary"

	"github.com/zredis/zredis/keyspace"
	"github.com/zredis/zredis/listpack"
)

// Hashes with field TTLs, as Redis 7.4 saves and loads them (RDB
// version 12). TTLs are absolute Unix ms of at most 48 bits.
//
//	HASH_LISTPACK_EX (25): the hash's earliest field TTL as 8 bytes
//	    little-endian (0 when it has none; 7.4's loader reads it and
//	    does not use it), then a listpack of triples field, value, TTL,
//	    the TTL an integer element, 0 for a field without one. The
//	    triples are in TTL order, earliest first, the fields without
//	    TTL last: 7.4 keeps its listpackex so (it expires fields from
//	    the head and inserts a field at its place), and its deep
//	    sanitization refuses any other order.
//	HASH_METADATA (24): the earliest field TTL as 8 bytes little-endian,
//	    the number of fields, then per field its TTL as a length (0 for
//	    none, else the TTL minus the earliest one plus 1), the field and
//	    the value.
//
// The forms of 7.4's release candidates have no earliest-TTL header:
// HASH_LISTPACK_EX_PRE_GA (23) is otherwise 25, and HASH_METADATA_PRE_GA
// (22) holds each TTL as an absolute length.
//
// A loaded hash takes the encoding 7.4 gives it: the listpack forms stay
// small unless they hold more than hash-max-listpack-entries fields, the
// table forms start small and grow into a table as HSET would (more
// fields than the limit, or a field or value longer than
// hash-max-listpack-value). Fields already past their TTL are kept, as
// 7.4.1 keeps them at load: the keyspace's field expiry removes them.

// hashType is the RDB type Redis 7.4 writes for h: a hash without field
// TTLs is written as Redis 7.0 writes it.
func hashType(h *keyspace.Hash) byte {
	small := isSmall(h)
	switch {
	case !h.HasFieldTTLs() && small:
		return typeHashListpack
	case !h.HasFieldTTLs():
		return typeHash
	case small:
		return typeHashListpackEx
	}
	return typeHashMetadata
}

// isSmall reports whether h is in a small encoding: a listpack, or the
// listpackex of a hash with field TTLs (OBJECT ENCODING "listpackex" in
// Redis 7.4).
func isSmall(h *keyspace.Hash) bool { return h.Encoding() != "hashtable" }

// HasFieldTTLs reports whether en is a hash with a field TTL, which only
// an RDB of version 12 holds (WriterOptions.FieldTTLs).
func HasFieldTTLs(en *keyspace.Entry) bool {
	if en.Type() != keyspace.TypeHash {
		return false
	}
	h, ok := en.Obj().(*keyspace.Hash)
	return ok && h.HasFieldTTLs()
}

// writeHashTTLs writes a hash with field TTLs as HASH_LISTPACK_EX while
// it is small, else as HASH_METADATA (see hashType).
func (e *encoder) writeHashTTLs(h *keyspace.Hash) {
	minTTL := h.MinFieldTTL()
	e.buf = binary.LittleEndian.AppendUint64(e.buf, uint64(minTTL))
	if isSmall(h) {
		e.lp.Reset(e.node)
		h.RangeTTL(func(f string, at int64) bool {
			v, _ := h.Get(bytesOf(f))
			e.lp.Append(bytesOf(f))
			e.lp.Append(v)
			e.lp.AppendInt(at)
			return true
		})
		h.Range(func(f, v []byte) bool {
			if h.FieldTTL(f) == 0 {
				e.lp.Append(f)
				e.lp.Append(v)
				e.lp.AppendInt(0)
			}
			return true
		})
		e.node = e.lp.Finish()
		e.writeString(e.node)
		return
	}
	e.writeLen(uint64(h.Len()))
	h.Range(func(f, v []byte) bool {
		var ttl uint64
		if at := h.FieldTTL(f); at != 0 {
			ttl = uint64(at-minTTL) + 1
		}
		e.writeLen(ttl)
		e.writeString(f)
		e.writeString(v)
		return true
	})
}

// readHashMetadata reads HASH_METADATA (24) or its release-candidate form
// (22), as 7.4's rdbLoadObject: a duplicate field, or a TTL beyond 48
// bits, is an error.
func (d *decoder) readHashMetadata(t byte) (keyspace.Object, error) {
	var minTTL uint64
	if t == typeHashMetadata {
		b, err := d.src.next(8)
		if err != nil {
			return nil, err
		}
		if minTTL = binary.LittleEndian.Uint64(b); minTTL > fieldTTLNone {
			return nil, corrupt("Hash read invalid minExpire value")
		}
	}
	n, err := d.readNonEmptyCount()
	if err != nil {
		return nil, err
	}
	h, lim := d.newHash(n)
	for ; n > 0; n-- {
		ttl, err := d.readCount()
		if err != nil {
			return nil, err
		}
		at := ttl // absolute in the release candidates' form
		if t == typeHashMetadata && ttl != 0 {
			// Relative to the earliest, plus 1 (0 means none).
			if minTTL > fieldTTLMax || ttl-1 > fieldTTLMax-minTTL {
				return nil, corrupt("invalid expireAt time: %d + %d", minTTL, ttl-1)
			}
			at = minTTL + ttl - 1
		}
		if at > fieldTTLMax {
			return nil, corrupt("invalid expireAt time: %d", at)
		}
		if d.a, err = d.readString(d.a[:0]); err != nil {
			return nil, err
		}
		if d.b, err = d.readString(d.b[:0]); err != nil {
			return nil, err
		}
		if !h.Set(d.a, d.b, lim) {
			return nil, corrupt("Duplicate hash fields detected")
		}
		if at != 0 {
			h.SetFieldTTL(d.a, int64(at))
		}
	}
	return h, nil
}

// readHashListpackEx reads HASH_LISTPACK_EX (25) or its release-candidate
// form (23) with the checks of 7.4's deep sanitization: whole triples, no
// duplicate field, every TTL an integer element within 48 bits, and the
// TTLs in order (ascending, the fields without TTL last).
func (d *decoder) readHashListpackEx(t byte) (keyspace.Object, error) {
	if t == typeHashListpackEx {
		// The earliest TTL: a hint 7.4 does not use when loading.
		if _, err := d.src.next(8); err != nil {
			return nil, err
		}
	}
	blob, err := d.readBlob()
	if err != nil {
		return nil, err
	}
	n, err := listpack.Each(blob, nil)
	if err != nil {
		return nil, err
	}
	if n%3 != 0 {
		return nil, corrupt("Hash listpack integrity check failed.")
	}
	if n == 0 {
		return nil, errEmptyKey
	}
	h := keyspace.NewHash()
	if int64(n/3) > d.opt.HashMaxListpackEntries {
		toTable(h)
	}
	i, last := 0, int64(-1)
	_, err = listpack.Each(blob, func(e listpack.Entry) error {
		i++
		switch i % 3 {
		case 1:
			d.a = e.AppendTo(d.a[:0])
			return nil
		case 2:
			d.b = e.AppendTo(d.b[:0])
			return nil
		}
		at := e.Int
		if !e.IsInt || at < 0 || at > fieldTTLMax {
			return corrupt("Hash listpack integrity check failed.")
		}
		if at != 0 && (last == 0 || at < last) {
			return corrupt("Hash listpack integrity check failed.") // out of TTL order
		}
		last = at
		if !h.Set(d.a, d.b, noLimits) {
			return corrupt("Duplicate hash fields detected")
		}
		if at != 0 {
			h.SetFieldTTL(d.a, at)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return h, nil
}
