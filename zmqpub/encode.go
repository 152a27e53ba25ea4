package zmqpub

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Sizes fixed by the wire format.
const (
	headerLen = 4 // frame 1: uint16 db, uint16 type
	lenPrefix = 4 // every length and count: uint32
	// MaxDB is the largest database number frame 1 can carry.
	MaxDB = math.MaxUint16
)

// Encode builds the three frames of the expiry message for one key.
//
// parts holds the value: for TypeString exactly one element, the value;
// for TypeHash field, value, field, value...; for TypeHashFields the same,
// the expired fields and their values only; for TypeList and TypeSet the
// members; for TypeZSet member, score, member, score... in score order,
// each score as the text Redis replies with. The frames are freshly
// allocated, one allocation each with frame 3 sized exactly up front, and
// share no memory with key or parts: the caller may reuse those as soon as
// Encode returns (the server encodes under the keyspace lock and hands the
// frames to another goroutine).
//
// Encode panics on input no caller may pass: db outside 0..MaxDB, a type
// outside the protocol or TypeStream (EncodeStream encodes streams), a
// string without exactly one part, an odd number of parts for a hash, a
// hash's expired fields or a sorted set, or a length or count beyond
// uint32.
// Redis's own limits (512 MB strings, 2^32-1 elements) keep real values
// inside these.
func Encode(db int, t Type, key []byte, parts [][]byte) [3][]byte {
	checkDB("Encode", db)
	checkParts(t, parts)

	valueLen := lenPrefix // a string's length, or the count of items
	if t == TypeString {
		valueLen += len(parts[0])
	} else {
		for _, p := range parts {
			valueLen += lenPrefix + len(p)
		}
	}
	header, keyFrame, value := allocFrames(db, t, key, valueLen)
	if t == TypeString {
		putItem(value, 0, parts[0])
	} else {
		binary.NativeEndian.PutUint32(value, uint32(len(parts)))
		off := lenPrefix
		for _, p := range parts {
			off = putItem(value, off, p)
		}
	}
	return [3][]byte{header, keyFrame, value}
}

// EncodeStream builds the three frames of the expiry message for a stream
// key (type TypeStream). Frame 3 is the uint32 count of entries, then for
// each entry: its ID as a length-prefixed item, the uint32 count of its
// fields and values (always even), and each field and each value as a
// length-prefixed item. entries are sent in the order given, the
// stream's ID order.
//
// As with Encode, the frames are one allocation, frame 3 sized exactly up
// front, and share no memory with key or entries. EncodeStream panics on
// db outside 0..MaxDB, an entry with an odd number of fields and values,
// or a length or count beyond uint32.
func EncodeStream(db int, key []byte, entries []StreamEntry) [3][]byte {
	checkDB("EncodeStream", db)
	checkCount("EncodeStream", "entries", len(entries))
	valueLen := lenPrefix // the count of entries
	for _, e := range entries {
		if len(e.Fields)%2 != 0 {
			panic(fmt.Sprintf("zmqpub.EncodeStream: entry %s has %d fields and values, not pairs", e.ID, len(e.Fields)))
		}
		checkCount("EncodeStream", "fields and values", len(e.Fields))
		valueLen += lenPrefix + len(e.ID) + lenPrefix
		for _, f := range e.Fields {
			valueLen += lenPrefix + len(f)
		}
	}
	header, keyFrame, value := allocFrames(db, TypeStream, key, valueLen)
	binary.NativeEndian.PutUint32(value, uint32(len(entries)))
	off := lenPrefix
	for _, e := range entries {
		off = putItem(value, off, e.ID)
		binary.NativeEndian.PutUint32(value[off:], uint32(len(e.Fields)))
		off += lenPrefix
		for _, f := range e.Fields {
			off = putItem(value, off, f)
		}
	}
	return [3][]byte{header, keyFrame, value}
}

// allocFrames allocates the three frames in one buffer, each capped at its
// end, writes the header and the key frame, and returns frame 3 of
// valueLen bytes for the caller to fill.
func allocFrames(db int, t Type, key []byte, valueLen int) (header, keyFrame, value []byte) {
	keyEnd := headerLen + lenPrefix + len(key)
	buf := make([]byte, keyEnd+valueLen)
	header = buf[:headerLen:headerLen]
	keyFrame = buf[headerLen:keyEnd:keyEnd]
	value = buf[keyEnd:]
	binary.NativeEndian.PutUint16(header[0:], uint16(db))
	binary.NativeEndian.PutUint16(header[2:], uint16(t))
	putItem(keyFrame, 0, key)
	return header, keyFrame, value
}

func checkDB(fn string, db int) {
	if db < 0 || db > MaxDB {
		panic(fmt.Sprintf("zmqpub.%s: database %d outside 0..%d", fn, db, MaxDB))
	}
}

func checkCount(fn, what string, n int) {
	if uint64(n) > math.MaxUint32 {
		panic(fmt.Sprintf("zmqpub.%s: %d %s do not fit a uint32 count", fn, n, what))
	}
}

// checkParts panics when parts does not have the shape type t requires or
// more elements than a uint32 counts. putItem checks each length.
func checkParts(t Type, parts [][]byte) {
	switch t {
	case TypeString:
		if len(parts) != 1 {
			panic(fmt.Sprintf("zmqpub.Encode: a string takes exactly one part, got %d", len(parts)))
		}
	case TypeHash, TypeHashFields, TypeZSet:
		if len(parts)%2 != 0 {
			panic(fmt.Sprintf("zmqpub.Encode: a %s takes pairs of parts, got %d", t, len(parts)))
		}
	case TypeList, TypeSet:
	case TypeStream:
		panic("zmqpub.Encode: a stream is encoded by EncodeStream")
	default:
		panic(fmt.Sprintf("zmqpub.Encode: unknown %s", t))
	}
	checkCount("Encode", "parts", len(parts))
}

// putItem writes b's uint32 length and bytes at dst[off:] and returns the
// offset just past them. dst has room: Encode sized it.
func putItem(dst []byte, off int, b []byte) int {
	if uint64(len(b)) > math.MaxUint32 {
		panic(fmt.Sprintf("zmqpub: %d bytes do not fit a uint32 length", len(b)))
	}
	binary.NativeEndian.PutUint32(dst[off:], uint32(len(b)))
	return off + lenPrefix + copy(dst[off+lenPrefix:], b)
}
