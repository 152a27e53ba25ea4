package keyspace

import (
	"math/bits"
	"unsafe"
)

// PrefetchKeys is how many keys Prefetch has in flight at a time: enough
// to cover the memory's latency with the hashing of the others, few
// enough that the first lines are still cached when their commands run.
const PrefetchKeys = 16

// Prefetch starts loading, for each of keys, the memory that looking it
// up in db will read, without waiting for any of it: first the key's
// group of its shard's table, then, once those are on their way, the
// entry the group's control bytes point to. A lookup in a keyspace
// larger than the caches costs two misses, one for the group and one
// for the entry (with its key); a pipelined batch thus waits for its
// keys' memory once, all at a time, instead of twice per command.
// Redis 7.0 has no such step.
//
// It changes nothing and may be given anything: a key that is not
// there costs one line loaded for nothing. Under the lock, as a lookup.
func (db *DB) Prefetch(keys [][]byte) {
	for len(keys) > 0 {
		n := min(len(keys), PrefetchKeys)
		var groups [PrefetchKeys]*group
		var tags [PrefetchKeys]uint64
		for i, k := range keys[:n] {
			if len(k) >= maxTail {
				// A big entry's key, and perhaps no key at all (a
				// script's body): not worth hashing under the lock.
				continue
			}
			h := keyHash(bytesKey(k))
			t := db.shards[shardOf(h)]
			if t == nil || len(t.groups) == 0 {
				continue
			}
			g := &t.groups[home(h, len(t.groups))]
			prefetchSpan(unsafe.Pointer(g), unsafe.Sizeof(*g))
			groups[i], tags[i] = g, ctrlTag(h)
		}
		for i, g := range groups[:n] {
			if g == nil {
				continue
			}
			// The key is the first slot whose tag matches, most of the
			// time; the entry's key follows its header, the tail's
			// size byte and the key's length byte.
			if m := matches(g.ctrl, tags[i]); m != 0 {
				if e := g.ents[bits.TrailingZeros64(m)>>3]; e != nil {
					prefetchSpan(unsafe.Pointer(e), headerSize+2+uintptr(len(keys[i])))
				}
			}
		}
		keys = keys[n:]
	}
}

// prefetchSpan prefetches the cache lines of size bytes at p.
func prefetchSpan(p unsafe.Pointer, size uintptr) {
	const line = 64
	a := uintptr(p)
	for l := a &^ (line - 1); l < a+size; l += line {
		prefetch(l)
	}
}

// PrefetchFields starts loading, for each of fields, the memory that
// looking it up in the hash stored under key will read: the field's home
// in the table's tags and records, then, once those are on their way,
// the record the first matching tag points to (its field comes first).
// A hash larger than the caches costs a miss for the record of each
// field a command reads or replaces; a pipelined batch of HSETs or
// HGETs on one hash thus waits for them once, all at a time. Only a
// hash in its table form gains: a small one is one listpack.
//
// It changes nothing and may be given anything (a key that is not a
// hash, fields that are not there). Under the lock, as a lookup.
func (db *DB) PrefetchFields(key []byte, fields [][]byte) {
	e := db.peek(key)
	if e == nil || e.typ != TypeHash {
		return
	}
	h, ok := e.Obj().(*Hash)
	if !ok {
		return
	}
	t := h.tab()
	if t == nil || len(t.tags) == 0 {
		return
	}
	for len(fields) > 0 {
		n := min(len(fields), PrefetchKeys)
		var homes [PrefetchKeys]int
		var tags [PrefetchKeys]uint8
		for i, f := range fields[:n] {
			x := fieldHash(f)
			at := int(x >> t.shift)
			prefetch(uintptr(unsafe.Pointer(&t.tags[at])))
			prefetchSpan(unsafe.Pointer(&t.recs[at]), unsafe.Sizeof(t.recs[at]))
			homes[i], tags[i] = at, tagOf(x)
		}
		for i := range fields[:n] {
			for j := homes[i]; j < len(t.tags) && t.tags[j] != 0; j++ {
				if t.tags[j] == tags[i] {
					prefetch(uintptr(unsafe.Pointer(unsafe.StringData(t.recs[j]))))
					break
				}
			}
		}
		fields = fields[n:]
	}
}
