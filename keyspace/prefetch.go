package keyspace

import (
	"hash/maphash"
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

// PrefetchElements starts loading, for each of elems, the memory that
// looking it up in the collection stored under key will read: a field
// of a hash, a member of a set or of a sorted set. A collection larger
// than the caches costs a miss or two for each element a command reads
// or replaces; a pipelined batch of HSETs, SADDs or ZADDs on one key
// (make bench's, a mail queue's message hashes) thus waits for them
// once, all at a time. Only the table forms gain: a small hash is one
// listpack, a small set of integers one array.
//
// It changes nothing and may be given anything (a key of another type,
// elements that are not there). Under the lock, as a lookup.
func (db *DB) PrefetchElements(key []byte, elems [][]byte) {
	e := db.peek(key)
	if e == nil {
		return
	}
	switch o := e.Obj().(type) {
	case *Hash:
		prefetchFields(o, elems)
	case *Set:
		if o.ht != nil {
			o.ht.prefetch(elems)
		}
	case *ZSet:
		// A sorted set's ordered index is not loaded: its path
		// depends on the score.
		o.dict.prefetch(elems)
	}
}

// prefetchFields loads the fields of a hash in its table form.
func prefetchFields(h *Hash, fields [][]byte) {
	if t := h.tab(); t != nil {
		t.prefetch(fields)
	}
}

// prefetch loads the members' records, from both arrays during a growth.
func (t *recTable) prefetch(elems [][]byte) {
	t.cur.prefetch(elems)
	if t.resizing() {
		t.old.prefetch(elems)
	}
}

// prefetch loads, for each element, its home slot, then, once those are
// on their way, the record the first matching tag points to, where its
// element comes first.
func (a *slotArray) prefetch(elems [][]byte) {
	tags, recs, shift := a.tags, a.recs, a.shift
	if len(tags) == 0 {
		return
	}
	for len(elems) > 0 {
		n := min(len(elems), PrefetchKeys)
		var homes [PrefetchKeys]int
		var want [PrefetchKeys]uint32
		for i, e := range elems[:n] {
			x := fieldHash(e)
			at := int(x >> shift)
			prefetch(uintptr(unsafe.Pointer(&tags[at])))
			prefetchSpan(unsafe.Pointer(&recs[at]), unsafe.Sizeof(recs[at]))
			homes[i], want[i] = at, tagOf(x)
		}
		for i := range elems[:n] {
			for j := homes[i]; j < len(tags) && tags[j] != 0; j++ {
				if tags[j] == want[i] {
					prefetch(uintptr(unsafe.Pointer(recs[j])))
					break
				}
			}
		}
		elems = elems[n:]
	}
}

// prefetch loads, for each member, its home slot in its bucket's table
// (the directory and the buckets' headers are few, and cached), then,
// once those are on their way, what the first slot of a matching tag
// refers to, within the first few slots of the probe: a record in the
// arena, or a long member's string header, whose bytes a third pass
// loads.
func (h *hashSet) prefetch(members [][]byte) {
	for len(members) > 0 {
		n := min(len(members), PrefetchKeys)
		var hvs [PrefetchKeys]uint64
		for i, m := range members[:n] {
			hv := maphash.Bytes(setSeed, m)
			b := h.bucketOf(hv)
			prefetch(uintptr(unsafe.Pointer(&b.slots[hv&uint64(len(b.slots)-1)])))
			hvs[i] = hv
		}
		var bigs [PrefetchKeys]*string
		nb := 0
		for _, hv := range hvs[:n] {
			b := h.bucketOf(hv)
			mask := uint64(len(b.slots) - 1)
			tag := memberTag(hv)
			i := hv & mask
			for range prefetchProbes {
				v := b.slots[i]
				if v == 0 {
					break
				}
				if v&^refMask == tag {
					if ref := v & refMask; ref < bigRef {
						prefetch(uintptr(unsafe.Pointer(&b.arena[ref-1])))
					} else {
						bigs[nb] = &b.big[ref-bigRef]
						prefetch(uintptr(unsafe.Pointer(bigs[nb])))
						nb++
					}
					break
				}
				i = (i + 1) & mask
			}
		}
		for _, p := range bigs[:nb] {
			prefetch(uintptr(unsafe.Pointer(unsafe.StringData(*p))))
		}
		members = members[n:]
	}
}

// prefetchProbes bounds the slots prefetch reads past a member's home:
// a table at most 3/4 full seldom probes further.
const prefetchProbes = 4
