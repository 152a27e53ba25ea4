package keyspace

import (
	"hash/maphash"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strings"
	"unsafe"
)

// table is one shard's index of its entries by key: an open-addressing
// hash table of entry pointers, the key being the entry's own (Entry.Key).
// A slot costs 9 bytes (a pointer and a control byte) where a Go map
// keyed by string costs 25 and a string header per key; the table grows
// by half rather than doubling, so that its load stays between 0.58 and
// 0.875 instead of falling to 0.44 after a growth; and a lookup hashes the
// key once for the shard and the slot.
//
// The layout is a Swiss table's: groups of eight slots with eight control
// bytes, compared eight at a time. A control byte is empty (0), deleted
// (1: a tombstone, which lets a lookup probe on), or 0x80 | 7 bits of the
// key's hash. A lookup probes groups from the one the hash selects until
// it finds the key or a group with an empty slot, which no key probing
// beyond it could have passed when it was inserted.
//
// Two kinds of snapshot read tables. A frozen snapshot (SnapshotDB, for
// KEYS) pins the table: a pinned table is never written, writers replace
// it with a copy first. A streaming snapshot (Snapshot: BGSAVE,
// AOF rewrite) attaches an undo log instead: writers change the table in
// place after recording, once per key, the entry the key had when the
// snapshot was taken; the snapshot reads the table through its log,
// pinning it only while it does. A write during a BGSAVE thus costs one
// entry's worth of memory, not a copy of its shard (unless it hits the one
// shard being read at that moment).
type table struct {
	groups []group
	n      int // entries
	dead   int // tombstones
	pins   int32
	logs   []*undoLog // streaming snapshots reading this table
}

type group struct {
	ctrl uint64 // control bytes, slot j in byte j
	ents [groupSlots]*Entry
}

const (
	groupSlots = 8
	ctrlEmpty  = 0
	ctrlDead   = 1
	bytesLow   = 0x0101010101010101
	bytesHigh  = 0x8080808080808080
)

// undoLog holds, for one streaming snapshot and one table, the entry each
// key changed since the snapshot had at that time (nil: it did not exist).
type undoLog struct {
	pre map[string]*Entry
}

// keyHash is the hash of a key: its low shardBits pick the shard, the
// rest its place in the shard's table and in SCAN's order.
func keyHash(key string) uint64 { return maphash.String(shardSeed, key) }

// ctrlTag is the control byte of a key with hash h.
func ctrlTag(h uint64) uint64 { return 0x80 | h>>57 }

// home is the group a key with hash h is probed from: the hash's middle
// bits mapped onto n groups by multiplication (no power of two needed).
func home(h uint64, n int) int {
	return int((h >> shardBits & 0xffffffff) * uint64(n) >> 32)
}

// matches has the high bit set in each byte of w equal to tag (and, rarely,
// in a byte above one: each candidate is checked against its entry).
func matches(w, tag uint64) uint64 {
	x := w ^ (bytesLow * tag)
	return (x - bytesLow) &^ x & bytesHigh
}

// hasEmpty reports whether a group's control word has an empty slot.
func hasEmpty(w uint64) bool { return (w-bytesLow)&^w&bytesHigh != 0 }

// get returns the entry of key (whose hash is h), or nil.
func (t *table) get(key string, h uint64) *Entry {
	n := len(t.groups)
	if n == 0 {
		return nil
	}
	tag := ctrlTag(h)
	for i := home(h, n); ; {
		g := &t.groups[i]
		for m := matches(g.ctrl, tag); m != 0; m &= m - 1 {
			if e := g.ents[bits.TrailingZeros64(m)>>3]; e != nil && e.Key() == key {
				return e
			}
		}
		if hasEmpty(g.ctrl) {
			return nil
		}
		if i++; i == n {
			i = 0
		}
	}
}

// slot finds key's slot: group and index, or -1.
func (t *table) slot(key string, h uint64) (*group, int) {
	n := len(t.groups)
	if n == 0 {
		return nil, -1
	}
	tag := ctrlTag(h)
	for i := home(h, n); ; {
		g := &t.groups[i]
		for m := matches(g.ctrl, tag); m != 0; m &= m - 1 {
			j := bits.TrailingZeros64(m) >> 3
			if e := g.ents[j]; e != nil && e.Key() == key {
				return g, j
			}
		}
		if hasEmpty(g.ctrl) {
			return nil, -1
		}
		if i++; i == n {
			i = 0
		}
	}
}

// put stores e under its key, replacing the entry there, recording
// first the key's entry in the undo logs that have not got it yet. It
// returns the entry replaced, or nil.
func (t *table) put(e *Entry, h uint64) *Entry {
	if len(t.logs) > 0 {
		t.record(e.Key(), h)
	}
	if g, j := t.slot(e.Key(), h); g != nil {
		old := g.ents[j]
		g.ents[j] = e
		return old
	}
	t.insert(e, h)
	return nil
}

// insertNew is put for a key the table does not hold.
func (t *table) insertNew(e *Entry, h uint64) {
	if len(t.logs) > 0 {
		t.record(e.Key(), h)
	}
	t.insert(e, h)
}

// insert adds e, whose key the table does not hold.
func (t *table) insert(e *Entry, h uint64) {
	if (t.n+t.dead+1)*8 > len(t.groups)*groupSlots*7 {
		t.rehash(t.n + 1)
	}
	n := len(t.groups)
	for i := home(h, n); ; {
		g := &t.groups[i]
		if free := ^g.ctrl & bytesHigh; free != 0 {
			j := bits.TrailingZeros64(free) >> 3
			if byte(g.ctrl>>(j*8)) == ctrlDead {
				t.dead--
			}
			g.ctrl = g.ctrl&^(0xff<<(j*8)) | ctrlTag(h)<<(j*8)
			g.ents[j] = e
			t.n++
			return
		}
		if i++; i == n {
			i = 0
		}
	}
}

// del removes key, recording its entry first, and returns it (nil when
// absent).
func (t *table) del(key string, h uint64) *Entry {
	if len(t.logs) > 0 {
		t.record(key, h)
	}
	g, j := t.slot(key, h)
	if g == nil {
		return nil
	}
	e := g.ents[j]
	g.ents[j] = nil
	c := uint64(ctrlDead)
	if hasEmpty(g.ctrl) {
		c = ctrlEmpty // no probe went past this group
	} else {
		t.dead++
	}
	g.ctrl = g.ctrl&^(0xff<<(j*8)) | c<<(j*8)
	t.n--
	return e
}

// rehash rebuilds the table for at least want entries: half as many
// groups again when the live entries call for it, else as many (clearing
// tombstones).
func (t *table) rehash(want int) {
	n := len(t.groups)
	if want*8 > n*groupSlots*7/2 || n == 0 {
		n += n/2 + 1
	}
	t.resize(n)
}

// resize moves the entries into a table of at least n groups: as many
// as fill the allocation, which Go rounds up to a size class (a table
// of 26 groups, 1872 bytes, is allocated 2048: 28 groups).
//
// Moving an entry hashes its key, which lives in the entry: one cache
// miss per entry in a keyspace larger than the caches, 17% of the
// server's time when SETs of new keys loaded 2M strings. So the entries
// of the group resizeAhead groups on are fetched while this one's move,
// as Prefetch does for a batch's keys.
func (t *table) resize(n int) {
	old := t.groups
	t.groups = slices.Grow([]group(nil), n)
	t.groups = t.groups[:cap(t.groups)]
	t.n, t.dead = 0, 0
	for gi := range old {
		if ahead := gi + resizeAhead; ahead < len(old) {
			for _, e := range old[ahead].ents {
				if e != nil {
					// The header's end, the tail's size and length
					// bytes and a short key's start.
					prefetchSpan(unsafe.Pointer(e), headerSize+2+16)
				}
			}
		}
		for _, e := range old[gi].ents {
			if e != nil {
				t.insert(e, keyHash(e.Key()))
			}
		}
	}
}

// resizeAhead is how many groups ahead resize fetches entries: about a
// dozen in flight, as many misses as a core keeps outstanding.
const resizeAhead = 2

// reserve sizes an empty table for about n entries.
func (t *table) reserve(n int) {
	if t.n == 0 && n > 0 {
		t.resize((n*8/7 + groupSlots) / groupSlots)
	}
}

// clone copies the table, without its pins and undo logs.
func (t *table) clone() *table {
	return &table{groups: append([]group(nil), t.groups...), n: t.n, dead: t.dead}
}

// len is the number of entries.
func (t *table) len() int { return t.n }

// all calls fn for each entry until it returns false. fn must not change
// the table.
func (t *table) all(fn func(e *Entry) bool) {
	for gi := range t.groups {
		for _, e := range t.groups[gi].ents {
			if e != nil && !fn(e) {
				return
			}
		}
	}
}

// nth returns the key and entry of the n-th entry in the table's order
// (n < len).
func (t *table) nth(n int) (string, *Entry) {
	for gi := range t.groups {
		for _, e := range t.groups[gi].ents {
			if e != nil {
				if n == 0 {
					return e.Key(), e
				}
				n--
			}
		}
	}
	panic("keyspace: table.nth past the end")
}

// sample returns the first entry from a random slot on (the table must
// not be empty).
func (t *table) sample() *Entry {
	n := len(t.groups) * groupSlots
	for s := rand.IntN(n); ; {
		if e := t.groups[s/groupSlots].ents[s%groupSlots]; e != nil {
			return e
		}
		if s++; s == n {
			s = 0
		}
	}
}

// record is the cold path of put and del (a streaming snapshot is live).
//
//go:noinline
func (t *table) record(key string, h uint64) {
	for _, l := range t.logs {
		if l.pre == nil {
			l.pre = make(map[string]*Entry)
		}
		if _, ok := l.pre[key]; !ok {
			l.pre[strings.Clone(key)] = t.get(key, h)
		}
	}
}

// bytesKey views a key held as bytes as a string for a lookup, which
// must not keep it.
func bytesKey(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
