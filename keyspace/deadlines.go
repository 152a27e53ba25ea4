package keyspace

import (
	"math/rand/v2"
	"unsafe"

	"github.com/tidwall/btree"
)

// deadlines is a database's expiry index: every key with a deadline,
// grouped by deadline (Unix ms) into slots kept in deadline order.
//
// Keys given the same TTL in the same millisecond share a deadline: at
// 300,000 SETEX a second, 300 of them. An ordered index of (deadline,
// key) items pays a search with key comparisons for every insert and
// delete; here a deadline's keys sit in one slot, the search compares
// integers only, and a burst of writes to the current deadline appends
// to the slot the last write used (hot) without a search. A deadline
// held by one key (a queue whose messages carry their own TTLs) costs
// one 16-byte slot; a second key gives the slot a bucket.
//
// The slots lie in blocks of blockSlots, each a sorted run, the blocks
// linked in deadline order and found by a B-tree of their bounds (dir).
// Deadlines come mostly in increasing order, each later than every one
// before it; a full last block then starts a new block rather than
// splitting, so blocks fill up: 16.4 bytes a key with a deadline of
// its own (125 slots in 2 KiB). (A B-tree of the slots splits its full node in halves, which such
// inserts never fill again: a 24-byte item took 48 bytes.) A block that
// an insert in the middle fills is split in halves; one that deletes
// leave under a quarter full is merged into a neighbour that has the
// room. Expiry takes slots from the front: a block keeps its live slots
// in s[lo:hi], so that neither end's insert or delete moves the others.
// The directory changes only when a block is made or dropped, in
// O(log blocks): a load of millions of deadlines in random order (an
// RDB's keys come in hash order) splits blocks throughout.
//
// Messages leave in deadline order. Among keys of one millisecond the
// order is the bucket's (last added first, mostly), as Redis's own
// expiry has no order among them either.
type deadlines struct {
	dir        *btree.BTreeG[dref] // the blocks by bound
	head, tail *dblock             // the earliest and the latest block
	n          int                 // keys indexed
	hot        *dbucket            // the bucket add used last, at hotAt
	hotAt      int64
}

// blockSlots is a block's size: the slots, the header and the 8-byte
// header Go's allocator puts before an object of pointers over 512
// bytes fill its 2 KiB size class (126 slots took the 2,304-byte
// class); an insert or delete in the middle moves 1 KiB at most, and a
// search takes 7 steps.
const blockSlots = 125

// dblock is a sorted run of slots, live in s[lo:hi]. Its bound routes
// deadlines to it: every slot of a block is at or after its bound and
// before the next block's; the head takes the deadlines before every
// bound, and its bound moves down with them.
type dblock struct {
	bound      int64
	prev, next *dblock
	lo, hi     int32
	s          [blockSlots]dslot
}

var _ [2048 - 8 - unsafe.Sizeof(dblock{})]struct{}

// dref is a block's item in the directory.
type dref struct {
	bound int64
	b     *dblock
}

func drefLess(a, b dref) bool { return a.bound < b.bound }

func (b *dblock) len() int { return int(b.hi - b.lo) }

// search is where deadline at is in b, or would go: the first live slot
// not before it.
func (b *dblock) search(at int64) (int, bool) {
	i, j := int(b.lo), int(b.hi)
	for i < j {
		h := int(uint(i+j) >> 1)
		if b.s[h].at < at {
			i = h + 1
		} else {
			j = h
		}
	}
	return i, i < int(b.hi) && b.s[i].at == at
}

// compact moves the live slots to the front of s.
func (b *dblock) compact() {
	if b.lo == 0 {
		return
	}
	n := int32(copy(b.s[:], b.s[b.lo:b.hi]))
	clear(b.s[n:b.hi])
	b.lo, b.hi = 0, n
}

// dslot is one deadline's keys. p is the entry itself when it is the
// deadline's only key, or the address of the deadline's bucket plus one
// when there are several: a dbucket's and an Entry's addresses are
// 8-aligned, and the address one byte in is still inside the bucket,
// which the collector keeps alive for it. The index holds the entries
// themselves (the table's current entry of each key: whoever replaces
// an entry that has a deadline moves it here too), so that a delete
// compares pointers, never key bytes.
type dslot struct {
	at int64
	p  unsafe.Pointer
}

// bucket is the slot's bucket, nil when it holds one entry.
func (s *dslot) bucket() *dbucket {
	if uintptr(s.p)&1 == 0 {
		return nil
	}
	return (*dbucket)(unsafe.Add(s.p, -1))
}

// entry is the slot's one entry; only when bucket is nil.
func (s *dslot) entry() *Entry { return (*Entry)(s.p) }

func (s *dslot) setBucket(b *dbucket) { s.p = unsafe.Add(unsafe.Pointer(b), 1) }

// dbucket holds the entries of a deadline held by more than one key.
// Up to bucketScanMax of them it keeps them in a slice, in the order they
// came, which a delete scans for the pointer (1 KiB at most). Beyond, it
// keeps them in an open-addressing set by pointer hash (set), so that
// deleting from a deadline a million keys share (EXPIREAT of a bulk load,
// or a burst of SETEX with one TTL) stays O(1), touching the one slot's
// cache line. The set is any size, an entry's home slot its hash scaled
// to it (home); it starts a quarter full and grows by half when over
// three quarters full: 10.7 to 16 bytes a key once it has grown, up to
// 64 as it empties. (Powers of two grown at 5/8 took 12.8 to 25.6: a
// millisecond's 1,300 SETEX held 4,096 slots.) The set shrinks as its
// entries leave: under an eighth full it is rebuilt half full, and at
// bucketSliceMax entries it turns back into a slice. A drained set would
// otherwise keep long empty runs, which one and pick walk, and which
// make pick favour the entries that follow them.
type dbucket struct {
	ents []*Entry // the entries, while not a set
	set  []*Entry // the entries by ptrHash, linear probing; nil slots are empty
	n    int      // entries in set
	cur  int      // where one resumes its walk of set
}

// bucketScanMax is the size past which a bucket indexes its entries.
const bucketScanMax = 128

// bucketSliceMax is the size at which an indexed bucket goes back to a
// slice: half of bucketScanMax, so that a bucket around either size does
// not change shape at every add and delete.
const bucketSliceMax = bucketScanMax / 2

// ptrHash spreads an entry's address (Go's heap objects do not move).
func ptrHash(e *Entry) int {
	return int(uint64(uintptr(unsafe.Pointer(e))) * 0x9e3779b97f4a7c15 >> 32)
}

// deadline is one key of the index, as min and random report it.
type deadline struct {
	at  int64
	key string
	e   *Entry
}

func newDeadlines() deadlines {
	return deadlines{dir: btree.NewBTreeGOptions(drefLess, btree.Options{NoLocks: true})}
}

// find is the block that holds deadline at or would take it, and where
// in it. The index must not be empty.
func (d *deadlines) find(at int64) (b *dblock, i int, ok bool) {
	b = d.tail
	if at < b.bound {
		// A later deadline than every one, the common add, skips this.
		b = d.head
		d.dir.Descend(dref{bound: at}, func(r dref) bool {
			b = r.b
			return false
		})
	}
	i, ok = b.search(at)
	return b, i, ok
}

// add indexes e, stored under its key, at deadline at.
func (d *deadlines) add(at int64, e *Entry) {
	d.n++
	if d.hot != nil && d.hotAt == at {
		d.hot.add(e)
		return
	}
	if d.head == nil {
		b := &dblock{bound: at, hi: 1}
		b.s[0] = dslot{at, unsafe.Pointer(e)}
		d.head, d.tail = b, b
		d.dir.Set(dref{at, b})
		return
	}
	b, i, ok := d.find(at)
	if !ok {
		d.insert(b, i, dslot{at, unsafe.Pointer(e)})
		return
	}
	s := &b.s[i]
	bk := s.bucket()
	if bk == nil {
		bk = &dbucket{ents: make([]*Entry, 0, 4)}
		bk.add(s.entry())
		s.setBucket(bk)
	}
	bk.add(e)
	d.hot, d.hotAt = bk, at
}

// insert puts s before slot i of b.
func (d *deadlines) insert(b *dblock, i int, s dslot) {
	if s.at < b.bound {
		// Before every deadline, into the head: its bound follows, so
		// that a split's upper half is bound after it.
		d.dir.Delete(dref{bound: b.bound})
		b.bound = s.at
		d.dir.Set(dref{b.bound, b})
	}
	if b.len() == blockSlots { // lo 0, hi blockSlots
		if i == blockSlots && b == d.tail {
			// Past every deadline: a block of its own, this one stays full.
			nb := &dblock{hi: 1}
			nb.s[0] = s
			d.link(b, nb)
			return
		}
		const half = blockSlots / 2
		nb := new(dblock)
		nb.hi = int32(copy(nb.s[:], b.s[half:]))
		clear(b.s[half:])
		b.hi = half
		d.link(b, nb)
		if i > half {
			b, i = nb, i-half
		}
	}
	if b.hi < blockSlots {
		copy(b.s[i+1:b.hi+1], b.s[i:b.hi])
		b.s[i] = s
		b.hi++
	} else {
		copy(b.s[b.lo-1:i-1], b.s[b.lo:i])
		b.lo--
		b.s[i-1] = s
	}
}

// link puts nb, holding the slots after b's, after b, bound at its first.
func (d *deadlines) link(b, nb *dblock) {
	nb.bound = nb.s[nb.lo].at
	nb.prev, nb.next = b, b.next
	if b.next != nil {
		b.next.prev = nb
	} else {
		d.tail = nb
	}
	b.next = nb
	d.dir.Set(dref{nb.bound, nb})
}

// unlink drops b from the index.
func (d *deadlines) unlink(b *dblock) {
	if b.prev != nil {
		b.prev.next = b.next
	} else {
		d.head = b.next
	}
	if b.next != nil {
		b.next.prev = b.prev
	} else {
		d.tail = b.prev
	}
	d.dir.Delete(dref{bound: b.bound})
}

// del removes e from deadline at, reporting whether it was there.
func (d *deadlines) del(at int64, e *Entry) bool {
	if d.head == nil {
		return false
	}
	b, i, ok := d.find(at)
	if !ok {
		return false
	}
	s := &b.s[i]
	if bk := s.bucket(); bk != nil {
		if !bk.del(e) {
			return false
		}
		d.n--
		if bk.len() > 0 {
			return true
		}
		if d.hot == bk {
			d.hot = nil
		}
	} else {
		if s.entry() != e {
			return false
		}
		d.n--
	}
	d.remove(b, i)
	return true
}

// remove takes slot i out of b, moving the shorter side.
func (d *deadlines) remove(b *dblock, i int) {
	if i-int(b.lo) < int(b.hi)-1-i {
		copy(b.s[b.lo+1:i+1], b.s[b.lo:i])
		b.s[b.lo] = dslot{}
		b.lo++
	} else {
		copy(b.s[i:b.hi-1], b.s[i+1:b.hi])
		b.hi--
		b.s[b.hi] = dslot{}
	}
	switch {
	case b.len() == 0:
		d.unlink(b)
	case b.len() < blockSlots/4:
		d.merge(b)
	}
}

// merge moves b, under a quarter full, into the block before it when
// that has room, or the next block into b: so blocks stay, on average,
// at least half full, which random's draws count on.
func (d *deadlines) merge(b *dblock) {
	if l := b.prev; l != nil && l.len()+b.len() <= blockSlots {
		l.compact()
		l.hi += int32(copy(l.s[l.hi:], b.s[b.lo:b.hi]))
		d.unlink(b)
		return
	}
	if r := b.next; r != nil && b.len()+r.len() <= blockSlots {
		b.compact()
		b.hi += int32(copy(b.s[b.hi:], r.s[r.lo:r.hi]))
		d.unlink(r)
	}
}

// min is the earliest deadline and one of its keys.
func (d *deadlines) min() (deadline, bool) {
	if d.head == nil {
		return deadline{}, false
	}
	s := &d.head.s[d.head.lo]
	e := s.one()
	return deadline{s.at, e.Key(), e}, true
}

// random is a key with a deadline picked at random (volatile-random and
// the volatile-lru/lfu samples): a random deadline, then a random key of
// it. Keys sharing a deadline are each less likely than a key alone, as
// keys in a long chain of Redis's dict are for dictGetRandomKey. The
// deadline is a block drawn at random and a position in it, drawn again
// when past the block's slots: each slot is equally likely, and blocks
// at least half full on average take two draws or fewer.
func (d *deadlines) random() (deadline, bool) {
	if d.head == nil {
		return deadline{}, false
	}
	var s *dslot
	if d.head == d.tail {
		b := d.head
		s = &b.s[int(b.lo)+rand.IntN(b.len())]
	} else {
		for {
			r, _ := d.dir.GetAt(rand.IntN(d.dir.Len()))
			if j := rand.IntN(blockSlots); j < r.b.len() {
				s = &r.b.s[int(r.b.lo)+j]
				break
			}
		}
	}
	var e *Entry
	if bk := s.bucket(); bk != nil {
		e = bk.pick()
	} else {
		e = s.entry()
	}
	return deadline{s.at, e.Key(), e}, true
}

// len is the number of keys with a deadline.
func (d *deadlines) len() int { return d.n }

// one is an entry of the slot: the one expired next at its deadline.
func (s *dslot) one() *Entry {
	if b := s.bucket(); b != nil {
		return b.one()
	}
	return s.entry()
}

func (b *dbucket) len() int {
	if b.set != nil {
		return b.n
	}
	return len(b.ents)
}

func (b *dbucket) add(e *Entry) {
	if b.set == nil {
		b.ents = append(b.ents, e)
		if len(b.ents) > bucketScanMax {
			b.resize(4 * len(b.ents)) // 1/4 full: room to grow
			b.ents = nil
		}
		return
	}
	if (b.n+1)*4 > len(b.set)*3 { // at most 3/4 full: short probes
		b.resize(len(b.set) * 3 / 2)
	}
	b.insert(e)
}

// setSizeFor is the size of set a bucket of n entries is rebuilt at:
// half full.
func setSizeFor(n int) int { return 2 * n }

// home is where e's probe starts in the set: its hash scaled to the
// set's size.
func (b *dbucket) home(e *Entry) int {
	return int(uint64(ptrHash(e)) * uint64(len(b.set)) >> 32)
}

// next is the slot after s, cyclically.
func (b *dbucket) next(s int) int {
	if s++; s == len(b.set) {
		return 0
	}
	return s
}

// resize moves the entries into a set of n slots.
func (b *dbucket) resize(n int) {
	old := b.set
	if old == nil {
		old = b.ents
	}
	b.set, b.n, b.cur = make([]*Entry, n), 0, 0
	for _, e := range old {
		if e != nil {
			b.insert(e)
		}
	}
}

func (b *dbucket) insert(e *Entry) {
	s := b.home(e)
	for b.set[s] != nil {
		s = b.next(s)
	}
	b.set[s] = e
	b.n++
}

// toSlice moves the entries of the set back into a slice.
func (b *dbucket) toSlice() {
	ents := make([]*Entry, 0, 2*b.n)
	for _, e := range b.set {
		if e != nil {
			ents = append(ents, e)
		}
	}
	b.ents, b.set, b.n, b.cur = ents, nil, 0, 0
}

// del removes e, reporting whether it was there. Out of the slice, the
// last entry takes its place; out of the set, the entries after it that
// their probe would no longer reach move back (closeGap), and then the
// set shrinks if it has become sparse (see dbucket).
//
// The shrinking rebuild comes only after the deletion is complete, and
// happens inside the same dbucket (the slot and d.hot keep pointing at
// it); nothing keeps a position in the set between calls but one's
// cursor, which a rebuild resets. So a caller that deletes the entries
// one or pick gave it, one call at a time (the expiry timer's slices:
// min, then expireKey's delete), is never left with a stale position.
// Code that walks the entries itself (the tests' each) must not delete
// during the walk.
func (b *dbucket) del(e *Entry) bool {
	if b.set == nil {
		for i := len(b.ents) - 1; i >= 0; i-- {
			if b.ents[i] == e {
				last := len(b.ents) - 1
				b.ents[i] = b.ents[last]
				b.ents[last] = nil
				b.ents = b.ents[:last]
				return true
			}
		}
		return false
	}
	s := b.home(e)
	for b.set[s] != e {
		if b.set[s] == nil {
			return false
		}
		s = b.next(s)
	}
	b.n--
	b.closeGap(s)
	switch {
	case b.n <= bucketSliceMax:
		b.toSlice()
	case b.n*8 < len(b.set):
		b.resize(setSizeFor(b.n))
	}
	return true
}

// closeGap empties slot s of the set and moves back the entries after it
// that their probe would no longer reach: deletion without tombstones,
// for linear probing (Knuth's Algorithm R).
func (b *dbucket) closeGap(s int) {
	for {
		b.set[s] = nil
		j := s
		for {
			j = b.next(j)
			x := b.set[j]
			if x == nil {
				return
			}
			home := b.home(x)
			// x stays unless its home lies cyclically outside (s, j]:
			// then s is on its probe path.
			if (s < j && (home <= s || home > j)) || (s > j && home <= s && home > j) {
				b.set[s] = x
				s = j
				break
			}
		}
	}
}

// one is the entry expired next: the last added, or the next one of the
// set from where the last call found one.
func (b *dbucket) one() *Entry {
	if b.set == nil {
		return b.ents[len(b.ents)-1]
	}
	for i := 0; i < len(b.set); i++ {
		if e := b.set[b.cur]; e != nil {
			return e
		}
		b.cur = b.next(b.cur)
	}
	panic("keyspace: empty deadline bucket")
}

// pick is an entry drawn at random.
func (b *dbucket) pick() *Entry {
	if b.set == nil {
		return b.ents[rand.IntN(len(b.ents))]
	}
	for s := rand.IntN(len(b.set)); ; s = b.next(s) {
		if e := b.set[s]; e != nil {
			return e
		}
	}
}
