package expiry

import (
	"github.com/zredis/zredis/keyspace"
	"github.com/zredis/zredis/resp"
	"github.com/zredis/zredis/zmqpub"
)

// What is sent for a key: its keyspace type's wire type code, and its
// value's items as zmqpub encodes them. zmqpub knows the frames, not the
// keyspace's types; the keyspace knows values, not messages.

// encodeEntry builds the message of key, of wire type t, holding e's
// value. Under the keyspace lock.
func encodeEntry(db int, t zmqpub.Type, key string, e *keyspace.Entry) [3][]byte {
	if t == zmqpub.TypeStream {
		return zmqpub.EncodeStream(db, []byte(key), streamEntries(e.Obj().(*keyspace.Stream)))
	}
	return zmqpub.Encode(db, t, []byte(key), entryParts(e))
}

// messageType maps a keyspace type to its wire type code.
func messageType(t keyspace.Type) (zmqpub.Type, bool) {
	switch t {
	case keyspace.TypeString:
		return zmqpub.TypeString, true
	case keyspace.TypeHash:
		return zmqpub.TypeHash, true
	case keyspace.TypeList:
		return zmqpub.TypeList, true
	case keyspace.TypeSet:
		return zmqpub.TypeSet, true
	case keyspace.TypeZSet:
		return zmqpub.TypeZSet, true
	case keyspace.TypeStream:
		return zmqpub.TypeStream, true
	}
	return 0, false
}

// entryParts lists a value's items as zmqpub.Encode takes them (a
// stream's are streamEntries'). The slices may alias the entry: Encode
// copies them.
func entryParts(e *keyspace.Entry) [][]byte {
	switch e.Type() {
	case keyspace.TypeString:
		return [][]byte{e.Str()}
	case keyspace.TypeHash:
		h := e.Obj().(*keyspace.Hash)
		parts := make([][]byte, 0, 2*h.Len())
		h.Range(func(f, v []byte) bool {
			parts = append(parts, f, v)
			return true
		})
		return parts
	case keyspace.TypeList:
		l := e.Obj().(*keyspace.List)
		parts := make([][]byte, 0, l.Len())
		l.Each(0, false, func(_ int, v []byte) bool {
			parts = append(parts, v)
			return true
		})
		return parts
	case keyspace.TypeSet:
		s := e.Obj().(*keyspace.Set)
		parts := make([][]byte, 0, s.Len())
		s.Each(func(m keyspace.Member) bool {
			parts = append(parts, m.Bytes(nil))
			return true
		})
		return parts
	case keyspace.TypeZSet:
		z := e.Obj().(*keyspace.ZSet)
		parts := make([][]byte, 0, 2*z.Len())
		z.Ascend(0, func(m string, s float64) bool {
			parts = append(parts, []byte(m), resp.AppendDouble(nil, s))
			return true
		})
		return parts
	}
	return nil
}

// streamEntries lists a stream's live entries in ID order as
// zmqpub.EncodeStream takes them: each ID as "ms-seq", its fields and
// values in the entry's order, integers a node stores as such written as
// XRANGE replies with them. Consumer groups are not sent. Range's views
// last only for its callback, so the bytes are copied into one buffer
// and sliced once the walk is done. Under the keyspace lock.
func streamEntries(s *keyspace.Stream) []zmqpub.StreamEntry {
	var buf []byte
	ends := make([]int, 0, 3*s.Len()) // where each ID, field and value ends in buf
	counts := make([]int, 0, s.Len()) // fields plus values of each entry
	s.Range(keyspace.StreamID{}, keyspace.MaxStreamID, false, func(e *keyspace.StreamEntry) bool {
		buf = e.ID.Append(buf)
		ends = append(ends, len(buf))
		for _, x := range e.FV {
			buf = x.AppendTo(buf)
			ends = append(ends, len(buf))
		}
		counts = append(counts, len(e.FV))
		return true
	})
	entries := make([]zmqpub.StreamEntry, len(counts))
	fields := make([][]byte, len(ends)-len(counts))
	start, next := 0, 0
	item := func() []byte {
		end := ends[next]
		b := buf[start:end:end]
		start, next = end, next+1
		return b
	}
	for i, n := range counts {
		entries[i].ID = item()
		entries[i].Fields, fields = fields[:n:n], fields[n:]
		for j := range entries[i].Fields {
			entries[i].Fields[j] = item()
		}
	}
	return entries
}
