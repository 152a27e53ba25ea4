package keyspace

import (
	"math"
	"math/rand/v2"
	"slices"
)

// recTable is the member table of a big hash (hashTable) and of a sorted
// set (ZSet.dict): an open-addressing table with linear probing whose
// home slot is the top bits of the member's 64-bit hash (fieldHash), and
// which never wraps around (the slot array has spare slots past the last
// home; an insertion that would run off the end grows the table). A slot
// is a tag (tagOf: 31 bits of the member's hash) and a pointer to the
// member's record, which starts with uvarint(len member) member (a
// hash's field record, a sorted set's zrec); 12 bytes, so 16 to 32 bytes
// a member as the load runs from 3/4 to 3/8 (down to 1/16 after
// deletions, and the old array's slots besides during a resize).
// Deletion shifts records back, so that no cluster ever holds a hole.
//
// Because a record never lies before its home and no cluster crosses an
// empty slot, the records of a range of hash positions lie between the
// range's first home and the first empty slot past its last, which is
// what the SCAN family's cursor relies on (scan).
//
// A table of resizeSyncHomes home slots or more grows and shrinks
// incrementally, as Redis's dict rehashes: the new slot array (cur)
// takes new records at once, and each write moves the next records of
// the old one (old) into it, in slot order (step), so that old's slots
// below moved are empty. Moving everything at once held the keyspace
// for a time in proportion to the table: 265 ms for one HSET as a hash
// grew past 6M fields (SLOWLOG, 2-core VM of docs/performance.md), where
// redis-server's longest request took 10 ms, and 35 ms for one HDEL as
// one shrank from 8M home slots. Only writes move slots (reads may run
// side by side with a snapshot's), and the cron, which finishes the
// resizes that writes left under way in tables no snapshot shares
// (Keyspace.StepResizes); a lookup meanwhile may probe both arrays.
type recTable struct {
	cur slotArray // where records are added
	// old is the slot array cur replaces while a resize is under way
	// (no slots otherwise). Its slots below moved are empty; a record
	// at or above it may have its home below it.
	old   slotArray
	moved int
	n     int // records in cur and old
	// shrinkBelow: no shrink is tried until n drops below this.
	shrinkBelow int
	// copied: another live hash or set (a COPY) holds the same records,
	// so none is rewritten in place (hashTable.set, ZSet.rescore).
	copied bool
}

// slotArray is one array of slots with 2^(64-shift) homes.
type slotArray struct {
	tags  []uint32
	recs  []*byte
	shift uint
}

const (
	minTableBits = 4
	// resizeSyncHomes: a table of fewer home slots is resized at once
	// (tens of microseconds).
	resizeSyncHomes = 1 << 10
	// A write moves up to stepRecords of old's records, looking at up to
	// stepSlots slots: a few hundred nanoseconds. A growth starts at 3/4
	// of 2^b homes, and cur fills to 3/4 of 2^(b+1) only after 3/4 of
	// 2^b more records, so any step of 2 slots or more ends a growth
	// before the next. A larger one holds both arrays for fewer writes
	// (about 2^b/85 at 3/4 load, 2^b/512 for a shrink's 1/16).
	stepRecords = 64
	stepSlots   = 512
	// maxShrinkProbe bounds how far past its home a shrink may place a
	// record.
	maxShrinkProbe = 32
)

// A slot's tag is 0 when the slot is free, else tagOf the record's hash:
// its top 31 bits, and a set top bit. A probe compares 31 bits of hash
// before it reads a record; and a growth, a shrink or a deletion's
// backward shift finds a record's home slot (its hash's top bits) in the
// tag, without reading the record and hashing its field again. With a
// tag of 7 bits, each doubling of a table read and hashed every record
// at once: a sorted set or hash of 1 KiB members growing past 65,536
// held the keyspace for 11-26 ms (SLOWLOG, under ZADD and HSET at
// pipeline 16), against p99 latencies of 3-8 ms. The tag costs 3 bytes a
// slot more.
func tagOf(x uint64) uint32 { return 1<<31 | uint32(x>>33) }

// maxTagBits is the largest table, in bits of home slots, whose homes
// the tags hold; a larger one (2^31 slots: tens of GB) hashes its
// records again (tagHome's callers).
const maxTagBits = 31

// tagHome is the home slot of tag g in a table of 2^b home slots, b at
// most maxTagBits.
func tagHome(g uint32, b uint) int { return int(g&^(1<<31)) >> (maxTagBits - b) }

// tagFrom tells whether the hash behind tag g is at least cursor (a
// SCAN position): known from the tag unless cursor lies among the 2^33
// hashes g stands for, with bits below a home slot's (not a position
// SCAN returns).
func tagFrom(g uint32, cursor uint64) (from, known bool) {
	lo := uint64(g&^(1<<31)) << 33
	switch {
	case lo >= cursor:
		return true, true
	case cursor-lo >= 1<<33:
		return false, true
	}
	return false, false
}

func tableSpare(bits uint) int { return min(1<<bits, 64) }

func makeSlots(b uint) slotArray {
	size := 1<<b + tableSpare(b)
	announce(size)
	return slotArray{tags: make([]uint32, size), recs: make([]*byte, size), shift: 64 - b}
}

// newRecTable returns a table sized for n records.
func newRecTable(n int) *recTable {
	b := uint(minTableBits)
	for (1<<b)*3/4 < n {
		b++
	}
	return &recTable{cur: makeSlots(b), shrinkBelow: math.MaxInt}
}

func (a *slotArray) bits() uint { return 64 - a.shift }

func (a *slotArray) homes() int { return 1 << a.bits() }

// recKey is the member a record starts with, a view of its bytes.
func recKey(r *byte) string { return mstr(r) }

// recHash is the hash of the record's member.
func recHash(r *byte) uint64 { return fieldHash(bytesOf(recKey(r))) }

// home is the home slot of the record r of tag g.
func (a *slotArray) home(g uint32, r *byte) int {
	if b := a.bits(); b <= maxTagBits {
		return tagHome(g, b)
	}
	return int(recHash(r) >> a.shift)
}

// find returns the slot holding member k (of hash x), probing from its
// home or from slot from if that is later (the first of old's slots not
// yet moved), or -1.
func (a *slotArray) find(k []byte, x uint64, from int) int {
	tag := tagOf(x)
	for i := max(int(x>>a.shift), from); i < len(a.tags); i++ {
		switch a.tags[i] {
		case 0:
			return -1
		case tag:
			if recKey(a.recs[i]) == string(k) {
				return i
			}
		}
	}
	return -1
}

// place puts the record r of tag g, home slot home, in the first free
// slot from home; false when that runs off the end, or lies more than
// maxProbe slots past home.
func (a *slotArray) place(g uint32, r *byte, home, maxProbe int) bool {
	for j := home; j < len(a.tags) && j-home <= maxProbe; j++ {
		if a.tags[j] == 0 {
			a.tags[j], a.recs[j] = g, r
			return true
		}
	}
	return false
}

// delAt empties slot i, shifting back the records after it that may
// take its place.
func (a *slotArray) delAt(i int) {
	for j := i + 1; j < len(a.tags) && a.tags[j] != 0; j++ {
		if home := a.home(a.tags[j], a.recs[j]); home <= i {
			a.tags[i], a.recs[i] = a.tags[j], a.recs[j]
			i = j
		}
	}
	a.tags[i], a.recs[i] = 0, nil
}

// clone returns a copy sharing the records (announced to BigTableHook
// as makeSlots does: COPY, or a write during a snapshot, copies a big
// table's arrays at once).
func (a *slotArray) clone() slotArray {
	announce(len(a.tags))
	return slotArray{tags: slices.Clone(a.tags), recs: slices.Clone(a.recs), shift: a.shift}
}

// resizing reports whether a growth or a shrink is under way.
func (t *recTable) resizing() bool { return t.old.tags != nil }

// clone returns a copy sharing the records (and the copied mark).
func (t *recTable) clone() *recTable {
	c := *t
	c.cur = t.cur.clone()
	if t.resizing() {
		c.old = t.old.clone()
	}
	return &c
}

// find returns the slot array and slot holding member k (of hash x), or
// a nil array.
func (t *recTable) find(k []byte, x uint64) (*slotArray, int) {
	if i := t.cur.find(k, x, 0); i >= 0 {
		return &t.cur, i
	}
	if t.resizing() {
		if i := t.old.find(k, x, t.moved); i >= 0 {
			return &t.old, i
		}
	}
	return nil, -1
}

// lookup returns the record of member k, nil when absent.
func (t *recTable) lookup(k []byte) *byte {
	if a, i := t.find(k, fieldHash(k)); a != nil {
		return a.recs[i]
	}
	return nil
}

// step moves the next of old's records into cur (up to stepRecords of
// them, within stepSlots slots), when a resize is under way. Writers
// call it before they look up what they change: it moves records
// between the arrays. The cron calls it too, for tables whose writes
// stopped (Keyspace.StepResizes).
func (t *recTable) step() {
	if !t.resizing() {
		return
	}
	shrink := t.cur.bits() < t.old.bits()
	maxProbe := len(t.cur.tags)
	if shrink {
		maxProbe = maxShrinkProbe
	}
	end := min(t.moved+stepSlots, len(t.old.tags))
	moved := 0
	i := t.moved
	for ; i < end && moved < stepRecords; i++ {
		g := t.old.tags[i]
		if g == 0 {
			continue
		}
		r := t.old.recs[i]
		if !t.cur.place(g, r, t.cur.home(g, r), maxProbe) {
			if shrink {
				// The records are bunched where the smaller array
				// would hold a long cluster (delAt): the shrink is
				// given up, at once.
				t.rebuild(t.old.bits(), len(t.cur.tags)+len(t.old.tags))
				t.shrinkBelow = t.n / 2
				return
			}
			// A cluster ran off cur's end: rebuild both, larger.
			t.rebuild(t.cur.bits()+1, len(t.cur.tags)+len(t.old.tags))
			return
		}
		t.old.tags[i], t.old.recs[i] = 0, nil
		moved++
	}
	t.moved = i
	if t.moved == len(t.old.tags) {
		t.old, t.moved = slotArray{}, 0
	}
}

// add stores the record r of a member (of hash x) known to be absent.
func (t *recTable) add(r *byte, x uint64) {
	if t.n+1 > t.cur.homes()*3/4 {
		t.grow()
	}
	for !t.cur.place(tagOf(x), r, int(x>>t.cur.shift), len(t.cur.tags)) {
		t.rebuild(t.cur.bits()+1, len(t.cur.tags)+len(t.old.tags))
	}
	t.n++
}

// grow doubles the home slots: at once while the table is small,
// incrementally (step) from resizeSyncHomes on. A resize still under way
// (only a rebuild's larger table, or a shrink's smaller one, fills this
// early) is finished first, at once.
func (t *recTable) grow() {
	b := t.cur.bits() + 1
	if t.resizing() || t.cur.homes() < resizeSyncHomes {
		t.rebuild(b, len(t.cur.tags)+len(t.old.tags))
		return
	}
	t.startResize(b)
	t.shrinkBelow = math.MaxInt
}

// startResize makes the current array old and a new one of 2^b home
// slots cur, for writes to move the records into (step).
func (t *recTable) startResize(b uint) {
	t.old, t.moved = t.cur, 0
	t.cur = makeSlots(b)
}

// slotBytes is the size of a slot: its tag and its record pointer.
const slotBytes = 12

// BigTableMin is the size of slot array from which makeSlots and clone
// call BigTableHook before they allocate the array.
const BigTableMin = 4 << 20

// BigTableHook, when set (by the server, before it starts), is told of
// a slot array of BigTableMin bytes or more about to be allocated. An
// allocation that large can take the heap past the collector's goal at
// once; the collection it starts then makes the allocating goroutine,
// the event loop, mark in proportion to what it allocates until it
// ends: 78 ms of assists, one HSET held for 100 ms, as a hash grew past
// 6M fields (GODEBUG=gctrace=1 and SLOWLOG; none with GOGC=off). The
// server's hook gives the heap room for it first (server/gcfloor.go).
var BigTableHook func(bytes int)

// announce tells BigTableHook of an array of slots slots about to be
// allocated, when it is that large.
func announce(slots int) {
	if bytes := slots * slotBytes; bytes >= BigTableMin && BigTableHook != nil {
		BigTableHook(bytes)
	}
}

// rebuild puts every record, of both arrays, in a new array of 2^b home
// slots, or more if a cluster would run off the end.
func (t *recTable) rebuild(b uint, maxProbe int) {
	for !t.tryRebuild(b, maxProbe) {
		b++
	}
}

// tryRebuild puts every record in a new array of 2^b home slots unless
// one would land more than maxProbe slots past its home or off the end;
// it reports whether it did. It reads the tags, not the records (tagOf).
func (t *recTable) tryRebuild(b uint, maxProbe int) bool {
	nt := makeSlots(b)
	ok := true
	t.each(func(a *slotArray, i int) bool {
		ok = nt.place(a.tags[i], a.recs[i], nt.home(a.tags[i], a.recs[i]), maxProbe)
		return ok
	})
	if !ok {
		return false
	}
	t.cur, t.old, t.moved = nt, slotArray{}, 0
	t.shrinkBelow = math.MaxInt
	return true
}

// delAt empties slot i of a, one of t's arrays, and shrinks the table
// below 1/16 load, to 1/4: at once while the table is small,
// incrementally (step) from resizeSyncHomes on. Members deleted in hash
// order (an HSCAN that deletes what it sees) leave the rest bunched in
// part of the hash space, where a smaller table would hold long
// clusters: a shrink that would make one is given up until the size
// halves again, which keeps the cost of failed attempts amortized O(1).
// No shrink starts during a resize.
func (t *recTable) delAt(a *slotArray, i int) {
	a.delAt(i)
	t.n--
	if b := t.cur.bits(); !t.resizing() && b > minTableBits && t.n < (1<<b)/16 && t.n < t.shrinkBelow {
		nb := uint(minTableBits)
		for (1<<nb)/4 < t.n {
			nb++
		}
		if t.cur.homes() >= resizeSyncHomes {
			t.startResize(nb)
		} else if !t.tryRebuild(nb, maxShrinkProbe) {
			t.shrinkBelow = t.n / 2
		}
	}
}

// del removes member k, reporting whether it was there.
func (t *recTable) del(k []byte) bool {
	t.step()
	a, i := t.find(k, fieldHash(k))
	if a == nil {
		return false
	}
	t.delAt(a, i)
	return true
}

// slots is the number of slots of both arrays (what memory estimates
// count).
func (t *recTable) slots() int { return len(t.cur.tags) + len(t.old.tags) }

// each calls fn for each record until it returns false: old's first,
// then cur's. fn may replace the record in its slot (a.recs[i]), and
// nothing else.
func (t *recTable) each(fn func(a *slotArray, i int) bool) {
	for i := t.moved; i < len(t.old.tags); i++ { // none below moved
		if t.old.tags[i] != 0 && !fn(&t.old, i) {
			return
		}
	}
	for i, g := range t.cur.tags {
		if g != 0 && !fn(&t.cur, i) {
			return
		}
	}
}

// random returns a uniformly drawn record; the table must not be empty.
// Uniform by rejection over the slots of both arrays while they are not
// too sparse; a table left sparse by a refused shrink falls back to the
// next record after a random slot.
func (t *recTable) random() *byte {
	live := len(t.old.tags) - t.moved // old's slots not yet moved (none unless resizing)
	total := live + len(t.cur.tags)
	at := func(k int) (uint32, *byte) {
		if k < live {
			return t.old.tags[t.moved+k], t.old.recs[t.moved+k]
		}
		return t.cur.tags[k-live], t.cur.recs[k-live]
	}
	for try := 0; try < 64; try++ {
		if g, r := at(rand.IntN(total)); g != 0 {
			return r
		}
	}
	for k := rand.IntN(total); ; k = (k + 1) % total {
		if g, r := at(k); g != 0 {
			return r
		}
	}
}

// scan visits the records in the order of their members' hash
// positions, from position cursor on, and returns the position to
// continue from (0 when done): that of the first empty slot past count
// records, since no cluster crosses an empty slot, every record whose
// position lies between the cursor and that one has then been seen.
// During a resize each array gives such a position (the old one's walk
// starts no lower than its first slot not yet moved) and the lower one
// bounds the call in both, so that it visits about count records of
// each, however few cur holds yet. A position depends only on the
// member, so a member present for the whole scan is visited at least
// once however the table grows or shrinks between calls, and whichever
// array holds it (the SCAN family's guarantee).
func (t *recTable) scan(cursor uint64, count int, fn func(r *byte)) uint64 {
	if !t.resizing() {
		return t.cur.scan(cursor, count, 0, fn)
	}
	end := lowerEnd(t.cur.scan(cursor, count, 0, nil), t.old.scan(cursor, count, t.moved, nil))
	t.cur.scanRange(cursor, end, 0, fn)
	t.old.scanRange(cursor, end, t.moved, fn)
	return end
}

// lowerEnd is the lower of two positions scan returns, where 0 stands
// for the end of the hash space.
func lowerEnd(a, b uint64) uint64 {
	switch {
	case a == 0:
		return b
	case b == 0:
		return a
	}
	return min(a, b)
}

// scan walks the records from position cursor on, from the cursor's home
// slot or slot from if that is later, calling fn (unless nil) for each,
// and returns the first position of the first empty slot past count of
// them, 0 when none is left (recTable.scan).
func (a *slotArray) scan(cursor uint64, count, from int, fn func(r *byte)) uint64 {
	seen := 0
	for i := max(int(cursor>>a.shift), from); i < len(a.tags); i++ {
		if a.tags[i] == 0 {
			if seen >= count {
				if i >= a.homes() {
					return 0 // past every home slot: nothing is left
				}
				return uint64(i) << a.shift
			}
			continue
		}
		if positionFrom(a.tags[i], a.recs[i], cursor) {
			if fn != nil {
				fn(a.recs[i])
			}
			seen++
		}
	}
	return 0
}

// scanRange visits the records of positions from lo up to hi (0: no
// bound), probing from slot from if that is later than lo's home (old's
// first slot not yet moved). A record of such a position lies in the
// run of full slots that starts at or before its home, or at from, so
// the walk ends at the first empty slot whose first position is hi or
// more.
func (a *slotArray) scanRange(lo, hi uint64, from int, fn func(r *byte)) {
	for i := max(int(lo>>a.shift), from); i < len(a.tags); i++ {
		g := a.tags[i]
		if g == 0 {
			if i >= a.homes() || hi != 0 && uint64(i)<<a.shift >= hi {
				return
			}
			continue
		}
		r := a.recs[i]
		if positionFrom(g, r, lo) && (hi == 0 || !positionFrom(g, r, hi)) {
			fn(r)
		}
	}
}

// positionFrom tells whether the record r of tag g has a hash position
// of at least cursor: from the tag when it tells (tagFrom), else from
// the member's hash.
func positionFrom(g uint32, r *byte, cursor uint64) bool {
	if from, known := tagFrom(g, cursor); known {
		return from
	}
	return recHash(r) >= cursor
}

// memSize is the bytes of the slots, and of the records as recSize
// gives them, sampled over up to samples records (all when samples <=
// 0) and scaled to n.
func (t *recTable) memSize(recSize func(r *byte) int64, samples int) (slots, recs int64) {
	slots = int64(t.slots()) * slotBytes
	if t.n == 0 {
		return slots, 0
	}
	var sum, seen int64
	t.each(func(a *slotArray, i int) bool {
		sum += recSize(a.recs[i])
		seen++
		return samples <= 0 || seen < int64(samples)
	})
	return slots, sum * int64(t.n) / seen
}
