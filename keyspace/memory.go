package keyspace

import (
	"math/bits"
	"unsafe"
)

// Memory accounting: what the dataset holds, counted incrementally so
// that reading it (before every command, when maxmemory is set) costs a
// few additions and never a walk of the heap (runtime.ReadMemStats stops
// the world).
//
// Each live entry carries its estimated cost (entryExt.mem: the Entry
// itself and its value's allocations, as Go lays them out; a compact
// entry's is its size, which nothing changes in place); each
// database keeps the sum of its entries' costs plus their key strings.
// The costs of the map slots and of the deadline index are per key and
// are added when the total is read. An entry changed in place (obtained
// from LookupWrite), and a collection stored by Put, which its command
// may go on filling, are re-measured when the command ends (settle): a
// string exactly, a collection by the same sampling MEMORY USAGE uses,
// so that a change to a large collection costs O(samples), not O(n).
//
// The costs were checked against the Go heap (TestUsedMemoryFollowsHeap):
// they estimate what the garbage collector keeps live for the dataset.

// Per-key costs outside the entry: a slot of a shard's table (entry
// pointer and control byte, at the table's mean load of about 0.73), in
// cluster mode one of the slot index too (the same, and the slot tables'
// headers: 15 bytes a key among 1M, BenchmarkSlotIndexHeapPerKey), and
// the deadline index's share (deadlines.go): a 16-byte slot in blocks
// full (deadlines in increasing order) to two-thirds full (in random
// order) for a deadline of its own, 15 bytes on average in a bucket for
// a deadline keys share.
const (
	tableSlotCost  = 12
	slotIndexCost  = 15
	deadlineCost   = 20
	collectionCost = 16 // the collection's own header (a *Hash, *Set...)
	memUnit        = 8  // entryExt.mem counts 8-byte units: 32 GB per entry
)

// headerSize is what newEntry's size classes are computed from: a change
// of Entry's size fails to compile here.
var _ [24 - headerSize]struct{}
var _ [headerSize - 24]struct{}

// Entry flags.
const (
	flagLive  uint8 = 1 << iota // stored in a live table, counted in its DB
	flagDirty                   // queued for re-measuring (Keyspace.dirty)
)

// dirtyEntry is an entry handed out by LookupWrite in the running
// command, to be re-measured when it ends.
type dirtyEntry struct {
	db *DB
	e  *Entry
}

// allocSize rounds an allocation of n bytes up as Go's allocator does,
// roughly: size classes below 32 kB, pages above.
func allocSize(n int) int64 {
	switch {
	case n <= 0:
		return 0
	case n <= 8:
		return 8
	case n <= 32:
		return int64((n + 7) &^ 7)
	case n <= 128:
		return int64((n + 15) &^ 15)
	case n <= 32<<10:
		step := 1 << (bits.Len(uint(n-1)) - 3)
		return int64((n + step - 1) &^ (step - 1))
	}
	return int64((n + 8191) &^ 8191)
}

// memSizer is implemented by the collection values: an estimate of the
// bytes they hold, in O(samples).
type memSizer interface {
	memSize(samples int) int64
}

// sizeSamples is how many elements a re-measure samples, as MEMORY
// USAGE's default.
const sizeSamples = 5

// cost estimates the bytes e holds: the entry and its value.
func (e *Entry) cost() int64 {
	n := e.size()
	if e.typ == TypeString {
		if e.inline() {
			return n
		}
		return n + allocSize(int(e.vcap))
	}
	if e.typ == TypeHash && !e.boxed() {
		if e.valueInTail() {
			return n
		}
		return n + e.hash().memSize(sizeSamples) - collectionCost // the Hash is the entry's own words
	}
	if ms, ok := e.Obj().(memSizer); ok {
		return n + collectionCost + ms.memSize(sizeSamples)
	}
	return n + collectionCost + 64 + int64(e.Obj().Len())*32
}

// size is the entry's own allocation: the header and its tail.
func (e *Entry) size() int64 { return allocSize(int(headerSize) + e.tailSize()) }

// memBytes is the cost counted for e: stored in an extended entry, a
// compact one's size (its cost, which nothing changes in place).
func (e *Entry) memBytes() int64 {
	if x := e.ext(); x != nil {
		return int64(x.mem) * memUnit
	}
	return e.size()
}

// setCost stores c (bytes) in an extended entry's mem, rounded up to the
// unit, saturating, and returns the bytes stored; for a compact entry,
// whose cost c is its size, it returns that.
func (e *Entry) setCost(c int64) int64 {
	x := e.ext()
	if x == nil {
		return e.size()
	}
	u := (c + memUnit - 1) / memUnit
	if u > 1<<32-1 {
		u = 1<<32 - 1
	}
	x.mem = uint32(u)
	return u * memUnit
}

// uncount zeroes an extended entry's counted cost: it has left the
// table that counted it.
func (e *Entry) uncount() {
	if x := e.ext(); x != nil {
		x.mem = 0
	}
}

// addEntry, dropEntry and replaceEntry follow every change of which
// entries db's live tables hold (flagLive), each called once after the
// table's insert, delete or replacement: what is counted and indexed
// besides the tables (the hash field index, the slot index in cluster
// mode) follows from here. h is the key's hash (keyHash).

// addEntry counts e, just stored under key in db's live table.
func (db *DB) addEntry(e *Entry, h uint64) {
	db.used += e.setCost(e.cost())
	e.flags |= flagLive
	if e.typ == TypeHash {
		db.indexFields(e)
	}
	if db.slots != nil {
		db.slots.add(e, h)
	}
}

// dropEntry uncounts e, just removed from db's live table (it may live
// on in a snapshot, or be stored again under another key by Put).
func (db *DB) dropEntry(e *Entry, h uint64) {
	db.used -= e.memBytes()
	e.uncount()
	e.flags &^= flagLive
	if len(db.fields.at) != 0 {
		db.unindexFields(e)
	}
	if db.slots != nil {
		db.slots.del(e.Key(), h)
	}
}

// replaceEntry moves the count of key from old to e, which took its place.
func (db *DB) replaceEntry(old, e *Entry, h uint64) {
	db.used += e.setCost(e.cost()) - old.memBytes()
	old.uncount()
	old.flags &^= flagLive
	e.flags |= flagLive
	if len(db.fields.at) != 0 {
		db.unindexFields(old)
	}
	if e.typ == TypeHash {
		db.indexFields(e)
	}
	if db.slots != nil {
		db.slots.replace(e, h)
	}
}

// remeasure updates the count of a live entry whose value changed.
func (db *DB) remeasure(e *Entry) {
	old := e.memBytes()
	db.used += e.setCost(e.cost()) - old
}

// markDirty queues e (private, live) for re-measuring at EndCommand.
func (db *DB) markDirty(e *Entry) {
	if e.flags&flagDirty != 0 {
		return
	}
	e.flags |= flagDirty
	db.ks.dirty = append(db.ks.dirty, dirtyEntry{db, e})
}

// markStored queues e, which Put just stored in db, for re-measuring
// when the command ends. A collection is most often stored empty and
// filled by the same command (SADD, RPUSH, ZADD, HSET, XADD, GEOADD, a
// served BLMOVE on a new key), after Put measured it: measuring it again
// at the end counts what it holds then, as for an entry changed in place.
// An entry queued already (changed, then taken from another database by
// MOVE before the entries were settled) has its record moved here: its
// count is now db's.
func (db *DB) markStored(e *Entry) {
	if e.flags&flagDirty == 0 {
		db.markDirty(e)
		return
	}
	for i := range db.ks.dirty {
		if db.ks.dirty[i].e == e {
			db.ks.dirty[i].db = db
			return
		}
	}
}

// settle re-measures the entries changed in place since the last call.
func (ks *Keyspace) settle() {
	for i, d := range ks.dirty {
		d.e.flags &^= flagDirty
		if d.e.flags&flagLive != 0 {
			d.db.remeasure(d.e)
			if t := d.e.memberTable(); t != nil && t.resizing() {
				d.db.noteResizing(d.e.Key())
			}
		}
		ks.dirty[i] = dirtyEntry{}
	}
	ks.dirty = ks.dirty[:0]
	if cap(ks.dirty) > 1024 {
		ks.dirty = nil
	}
}

// UsedMemory is the dataset's estimated size in bytes plus the overhead
// set with SetOverhead: what INFO reports as used_memory and maxmemory
// is compared with. Under the lock; it costs O(databases).
func (ks *Keyspace) UsedMemory() int64 {
	if len(ks.dirty) != 0 {
		ks.settle()
	}
	return ks.DatasetMemory() + ks.overhead
}

// DatasetMemory is UsedMemory without the overhead.
func (ks *Keyspace) DatasetMemory() int64 {
	var n int64
	for _, db := range ks.dbs {
		n += db.used + int64(db.keys)*db.keyCost + int64(db.expires.len())*deadlineCost
	}
	return n
}

// SetOverhead sets the bytes UsedMemory adds to the dataset's (the
// server's fixed cost, clients). Under the lock.
func (ks *Keyspace) SetOverhead(n int64) { ks.overhead = n }

// Overhead is the value set by SetOverhead.
func (ks *Keyspace) Overhead() int64 { return ks.overhead }

// ---- collection estimates ----------------------------------------------------

func (h *Hash) memSize(samples int) int64 { return h.MemoryUsage(samples) }

// memSize counts a list's chunks exactly up to a few dozen, beyond that
// by sampling chunks spread over the list: each is its header (48 bytes)
// and its buffer, elements and offsets together.
func (l *List) memSize(samples int) int64 {
	cs := l.cs[l.c0:]
	n := int64(len(l.cs))*8 + 48
	chunk := func(c *listChunk) int64 {
		return 48 + allocSize(cap(c.buf))
	}
	const exact = 32
	if len(cs) <= exact {
		for _, c := range cs {
			n += chunk(c)
		}
		return n
	}
	if samples < 1 {
		samples = 1
	}
	step := len(cs) / samples
	var sum int64
	seen := 0
	for i := 0; i < len(cs) && seen < samples; i += step {
		sum += chunk(cs[i])
		seen++
	}
	return n + sum*int64(len(cs))/int64(seen)
}

// memSize: an intset is its array; a hashtable its directory and, per
// bucket, the bucket, its slot array, its arena of records (holes and
// room included) and its long members. A small table is walked; a large
// one is sampled at evenly spaced directory entries, so that the estimate
// costs O(samples) on every write (it runs after each write to the key).
func (s *Set) memSize(samples int) int64 {
	if s.ht == nil {
		return 32 + allocSize(8*cap(s.ints))
	}
	h := s.ht
	samples = max(samples, 1)
	n := int64(48) + allocSize(len(h.dir)*8)
	// Re-measured after every write, the set would visit 64 buckets per
	// SADD (a third of its CPU at pipeline 16): while the member count
	// stays within 1/32 of the last measure, that measure is scaled.
	if m := h.sized.n; m > 0 && samples <= sizeSamples && max(h.n-m, m-h.n)*32 <= m {
		return n + h.sized.bytes*int64(h.n)/int64(m)
	}
	const exact = 64
	step := 1
	if len(h.dir) > exact {
		step = len(h.dir) / exact
	}
	var members, sum, long, longSum, longSeen int64
	last := (*bucket)(nil)
	for i := 0; i < len(h.dir); i += step {
		b := h.dir[i]
		if b == last {
			continue
		}
		last = b
		members += int64(b.n)
		sum += bucketSize + allocSize(4*len(b.slots)) + allocSize(cap(b.arena)) + allocSize(16*cap(b.big))
		long += int64(len(b.big))
		for _, m := range b.big {
			if longSeen >= int64(samples) {
				break
			}
			longSum += allocSize(len(m))
			longSeen++
		}
	}
	if longSeen > 0 {
		sum += longSum * long / longSeen
	}
	if step > 1 && members > 0 {
		// Scale what the sampled buckets hold to every member.
		sum = sum * int64(h.n) / members
	}
	h.sized.n, h.sized.bytes = h.n, sum
	return n + sum
}

// bucketSize is the allocation of a set's bucket.
var bucketSize = allocSize(int(unsafe.Sizeof(bucket{})))

// memSize: the member table (12 bytes a slot) and the members' records,
// and the B-tree's 16-byte items pointing to them: a node's array is
// allocated whole and a split leaves two half full, which ascending
// scores (a time series) never fill again, so an item costs about twice
// its size (one and a half times with random scores).
func (z *ZSet) memSize(samples int) int64 {
	const itemCost = 2 * int64(unsafe.Sizeof(zitem{}))
	slots, recs := z.dict.memSize(func(r *byte) int64 { return allocSize(zrecSize(r)) }, samples)
	return 64 + slots + recs + itemCost*int64(z.dict.n)
}

// IndexOverhead is what the database's indexes cost beyond its entries
// (MEMORY STATS's overhead.hashtable.main and .expires): the map slots
// (and the slot index's, as Redis 7.0's dictEntry metadata), and the
// deadline index.
func (db *DB) IndexOverhead() (main, expires int64) {
	return int64(db.keys) * db.keyCost, int64(db.expires.len()) * deadlineCost
}

// MemoryUsage is MEMORY USAGE's estimate of the value, the same one that
// used_memory counts (see Entry.cost): elements are sampled, samples of
// them at most, as Redis's objectComputeSize does.
func (l *List) MemoryUsage(samples int) int64 { return l.memSize(samples) }

// MemoryUsage: see List.MemoryUsage.
func (s *Set) MemoryUsage(samples int) int64 { return s.memSize(samples) }

// MemoryUsage: see List.MemoryUsage.
func (z *ZSet) MemoryUsage(samples int) int64 { return z.memSize(samples) }
