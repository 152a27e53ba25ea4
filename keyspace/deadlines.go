package keyspace

import (
	"math/rand/v2"
	"unsafe"

	"github.com/tidwall/btree"
)

// deadlines is a database's expiry index: every key with a deadline,
// grouped by deadline (Unix ms) in a B-tree ordered by time alone.
//
// Keys given the same TTL in the same millisecond share a deadline: at
// 300,000 SETEX a second, 300 of them. A B-tree of (deadline, key) items
// pays a descent with key comparisons for every insert and delete; here
// a deadline's keys sit in one slot, the tree compares integers only, and
// a burst of writes to the current deadline appends to the slot the last
// write used (hot) without touching the tree. A deadline held by one key
// (a queue whose messages carry their own TTLs) costs one tree item, as
// before; a second key gives the slot a bucket.
//
// Messages leave in deadline order. Among keys of one millisecond the
// order is the bucket's (last added first, mostly), as Redis's own
// expiry has no order among them either.
type deadlines struct {
	tr    *btree.BTreeG[dslot]
	n     int      // keys indexed
	hot   *dbucket // the bucket add used last, at hotAt
	hotAt int64
}

// dslot is one deadline's keys: e alone, or b when there are several.
// The index holds the entries themselves (the table's current entry of
// each key: whoever replaces an entry that has a deadline moves it here
// too), so that a delete compares pointers, never key bytes.
type dslot struct {
	at int64
	e  *Entry
	b  *dbucket
}

// dbucket holds the entries of a deadline held by more than one key.
// Up to bucketScanMax of them it keeps them in a slice, in the order they
// came, which a delete scans for the pointer (1 KiB at most). Beyond, it
// keeps them in an open-addressing set by pointer hash (set), so that
// deleting from a deadline a million keys share (EXPIREAT of a bulk load,
// or a burst of SETEX with one TTL) stays O(1), touching the one slot's
// cache line: 13 to 26 bytes a key as it grows, up to 64 as it empties.
// The set shrinks as its entries leave: under an eighth full it is
// rebuilt a quarter full at most, and at bucketSliceMax entries it turns
// back into a slice. A drained set would otherwise keep long empty runs,
// which one and pick walk, and which make pick favour the entries that
// follow them.
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

func dslotLess(a, b dslot) bool { return a.at < b.at }

func newDeadlines() deadlines {
	return deadlines{tr: btree.NewBTreeGOptions(dslotLess, btree.Options{NoLocks: true})}
}

// add indexes e, stored under its key, at deadline at.
func (d *deadlines) add(at int64, e *Entry) {
	d.n++
	if d.hot != nil && d.hotAt == at {
		d.hot.add(e)
		return
	}
	// The hint makes Set's descent retrace Get's at no cost.
	var hint btree.PathHint
	s, ok := d.tr.GetHint(dslot{at: at}, &hint)
	switch {
	case !ok:
		d.tr.SetHint(dslot{at: at, e: e}, &hint)
		return
	case s.b == nil:
		s.b = &dbucket{ents: make([]*Entry, 0, 4)}
		s.b.add(s.e)
		s.b.add(e)
		s.e = nil
		d.tr.SetHint(s, &hint)
	default:
		s.b.add(e)
	}
	d.hot, d.hotAt = s.b, at
}

// del removes e from deadline at, reporting whether it was there.
func (d *deadlines) del(at int64, e *Entry) bool {
	var hint btree.PathHint
	s, ok := d.tr.GetHint(dslot{at: at}, &hint)
	if !ok {
		return false
	}
	if s.b == nil {
		if s.e != e {
			return false
		}
		d.tr.DeleteHint(s, &hint)
		d.n--
		return true
	}
	if !s.b.del(e) {
		return false
	}
	d.n--
	if s.b.len() == 0 {
		d.tr.DeleteHint(s, &hint)
		if d.hot == s.b {
			d.hot = nil
		}
	}
	return true
}

// min is the earliest deadline and one of its keys.
func (d *deadlines) min() (deadline, bool) {
	s, ok := d.tr.Min()
	if !ok {
		return deadline{}, false
	}
	e := s.one()
	return deadline{s.at, e.Key(), e}, true
}

// random is a key with a deadline picked at random (volatile-random and
// the volatile-lru/lfu samples): a random deadline, then a random key of
// it. Keys sharing a deadline are each less likely than a key alone, as
// keys in a long chain of Redis's dict are for dictGetRandomKey.
func (d *deadlines) random() (deadline, bool) {
	n := d.tr.Len()
	if n == 0 {
		return deadline{}, false
	}
	s, _ := d.tr.GetAt(rand.IntN(n))
	e := s.e
	if s.b != nil {
		e = s.b.pick()
	}
	return deadline{s.at, e.Key(), e}, true
}

// len is the number of keys with a deadline.
func (d *deadlines) len() int { return d.n }

// one is an entry of the slot: the one expired next at its deadline.
func (s dslot) one() *Entry {
	if s.b == nil {
		return s.e
	}
	return s.b.one()
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
			b.resize(4 * bucketScanMax) // 1/4 full
			b.ents = nil
		}
		return
	}
	if (b.n+1)*8 > len(b.set)*5 { // at most 5/8 full: short probes
		b.resize(2 * len(b.set))
	}
	b.insert(e)
}

// setSizeFor is the size of set a bucket of n entries is rebuilt at: a
// power of two at least 4n (a quarter full at most), at least the size a
// slice grows into.
func setSizeFor(n int) int {
	size := 4 * bucketScanMax
	for size < 4*n {
		size *= 2
	}
	return size
}

// resize moves the entries into a set of n slots, a power of two.
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
	mask := len(b.set) - 1
	s := ptrHash(e) & mask
	for b.set[s] != nil {
		s = (s + 1) & mask
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
	mask := len(b.set) - 1
	s := ptrHash(e) & mask
	for b.set[s] != e {
		if b.set[s] == nil {
			return false
		}
		s = (s + 1) & mask
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
	mask := len(b.set) - 1
	for {
		b.set[s] = nil
		j := s
		for {
			j = (j + 1) & mask
			x := b.set[j]
			if x == nil {
				return
			}
			home := ptrHash(x) & mask
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
		b.cur = (b.cur + 1) & (len(b.set) - 1)
	}
	panic("keyspace: empty deadline bucket")
}

// pick is an entry drawn at random.
func (b *dbucket) pick() *Entry {
	if b.set == nil {
		return b.ents[rand.IntN(len(b.ents))]
	}
	for s := rand.IntN(len(b.set)); ; s = (s + 1) & (len(b.set) - 1) {
		if e := b.set[s]; e != nil {
			return e
		}
	}
}
