package keyspace

import (
	"encoding/binary"
	"math"
	"sort"
	"unsafe"

	"github.com/tidwall/btree"
)

// Sorted set limits of Redis's small encoding (zset-max-listpack-entries
// and zset-max-listpack-value defaults). The commands pass the configured
// values to ZSet.Fit and ZSet.Grow.
const (
	ZSetListpackEntries = 128
	ZSetListpackValue   = 64
)

// zitem is one member of a sorted set in the tree: its score and its
// record in the member table (see zrec), where the member is read from.
// Items are ordered by (score, member) with members compared bytewise,
// as Redis's skiplist orders them. The score is kept in the item too so
// that comparisons touch the record only on equal scores; 16 bytes an
// item where a member string header made 24, which shrinks the tree's
// nodes by a third.
type zitem struct {
	score float64
	rec   *byte
}

// zless orders items. An item with a nil record is a search key, never
// stored, that sorts before every member of its score (the empty one
// included) without reading their records.
func zless(a, b zitem) bool {
	if a.score != b.score {
		return a.score < b.score
	}
	if a.rec == nil || b.rec == nil {
		return b.rec != nil
	}
	return zrecMember(a.rec) < zrecMember(b.rec)
}

// ZSet is a sorted set: a B-tree ordered by (score, member) for ranges
// and ranks, plus a member -> record table (recTable) for point lookups.
// Each member has one record holding its score and its bytes (see zrec),
// which the tree's item and the table's slot both point to, so a member
// is allocated once. The table is ordered by the member's hash position,
// which is what lets ZSCAN keep the SCAN guarantee while the set grows or
// shrinks. Ranks are found by binary search over the tree's positional
// access (GetAt), O(log² n), never by walking.
type ZSet struct {
	tree *btree.BTreeG[zitem]
	dict *recTable
	// big records that Redis would have converted the set to a skiplist
	// (OBJECT ENCODING "skiplist"); Redis never converts back on removal.
	big bool
}

func newZTree() *btree.BTreeG[zitem] {
	return btree.NewBTreeGOptions(zless, btree.Options{NoLocks: true, Degree: 64})
}

// NewZSet returns an empty sorted set in the small ("listpack") encoding.
func NewZSet() *ZSet {
	return &ZSet{tree: newZTree(), dict: newRecTable(0)}
}

// bytesOf views a string's bytes without copying; the caller must not
// change them.
func bytesOf(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// ---- member records -----------------------------------------------------------

// A zrec is a member's record: uvarint(len(member)), the member, then
// its score's 8 bytes (IEEE 754, little-endian), in one allocation that
// the tree's item and the table's slot point to. A member's bytes never
// change; a new score is written into the record only while nothing else
// holds it (see rescore), and otherwise gets a new record, which is what
// lets a clone share them.
func zrecMake(member []byte, score float64) *byte {
	n := uvarintLen(uint64(len(member))) + len(member)
	b := make([]byte, n+8)
	binary.PutUvarint(b, uint64(len(member)))
	copy(b[n-len(member):], member)
	binary.LittleEndian.PutUint64(b[n:], math.Float64bits(score))
	return unsafe.SliceData(b)
}

// zrecMember is the member a record holds, a view of its bytes.
func zrecMember(r *byte) string { return mstr(r) }

// mstr is the string a record that starts with its uvarint length
// holds, a view of its bytes.
func mstr(r *byte) string {
	p := unsafe.Pointer(r)
	n, shift := 0, 0
	for {
		c := *(*byte)(p)
		p = unsafe.Add(p, 1)
		n |= int(c&0x7f) << shift
		if c < 0x80 {
			return unsafe.String((*byte)(p), n)
		}
		shift += 7
	}
}

// zrecScoreBytes is the 8 bytes of a record's score. A member shorter
// than 128 bytes has one length byte, read inline. The score may be
// unaligned, hence the byte-wise reads and writes.
func zrecScoreBytes(r *byte) []byte {
	off := 1 + int(*r)
	if *r >= 0x80 {
		m := mstr(r)
		off = uvarintLen(uint64(len(m))) + len(m)
	}
	return unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(r), off)), 8)
}

// zrecScore is the score a record holds.
func zrecScore(r *byte) float64 {
	return math.Float64frombits(binary.LittleEndian.Uint64(zrecScoreBytes(r)))
}

// zrecSetScore writes score into the record r (see rescore).
func zrecSetScore(r *byte, score float64) {
	binary.LittleEndian.PutUint64(zrecScoreBytes(r), math.Float64bits(score))
}

// zrecSize is the record's length, as allocated.
func zrecSize(r *byte) int {
	m := zrecMember(r)
	return uvarintLen(uint64(len(m))) + len(m) + 8
}

// ---- ZSet's use of the table --------------------------------------------------

// lookup returns member's record, nil when absent.
func (z *ZSet) lookup(member []byte) *byte { return z.dict.lookup(member) }

// rescore gives the member in slot i of a, whose record is old, a new score:
// written into old when overwrite allows it (no snapshot is live, see
// HashLimits.Overwrite) and no other live set shares the records
// (recTable.copied), else in a new record. A ZADD that moves a 1 KiB
// member's score then leaves no garbage.
func (z *ZSet) rescore(a *slotArray, i int, old *byte, score float64, overwrite bool) {
	z.tree.Delete(zitem{zrecScore(old), old})
	r := old
	if overwrite && !z.dict.copied {
		zrecSetScore(r, score)
	} else {
		r = zrecMake(bytesOf(zrecMember(old)), score)
		a.recs[i] = r
	}
	z.tree.Set(zitem{score, r})
}

// Type is TypeZSet.
func (z *ZSet) Type() Type { return TypeZSet }

// Len is the number of members.
func (z *ZSet) Len() int { return z.dict.n }

// Clone returns an isolated copy: the tree is copied on write, the
// table's slots copied now, the records shared, and both sets marked
// copied: neither rewrites a record from then on (rescore).
func (z *ZSet) Clone() Object {
	c := z.cloneForSnapshot().(*ZSet)
	z.dict.copied, c.dict.copied = true, true
	return c
}

// cloneForSnapshot is Clone for the copy a write makes while a snapshot
// is live (see Hash.cloneForSnapshot): the records are shared, and
// neither set is marked copied.
func (z *ZSet) cloneForSnapshot() Object {
	return &ZSet{tree: z.tree.Copy(), dict: z.dict.clone(), big: z.big}
}

// Encoding is "listpack" or "skiplist", as OBJECT ENCODING answers.
func (z *ZSet) Encoding() string {
	if z.big {
		return "skiplist"
	}
	return "listpack"
}

// IsListpack reports whether Redis would hold the set in a listpack
// (which changes ZSCAN's reply: everything at once).
func (z *ZSet) IsListpack() bool { return !z.big }

// Grow records the conversion Redis makes when an element is about to be
// added: the set converts to a skiplist when it would exceed maxEntries or
// when the member is longer than maxValue. Call it before adding member.
func (z *ZSet) Grow(memberLen, maxEntries, maxValue int) {
	if !z.big && (z.dict.n+1 > maxEntries || memberLen > maxValue) {
		z.big = true
	}
}

// Fit sets the encoding of a set built as a whole (ZRANGESTORE, ZUNIONSTORE
// and friends): listpack when it is small enough, skiplist otherwise.
func (z *ZSet) Fit(maxEntries, maxValue int) {
	z.big = z.dict.n > maxEntries
	if z.big {
		return
	}
	negZero := false
	z.dict.each(func(a *slotArray, i int) bool {
		r := a.recs[i]
		if len(zrecMember(r)) > maxValue {
			z.big = true
			return false
		}
		if s := zrecScore(r); s == 0 && math.Signbit(s) {
			negZero = true
		}
		return true
	})
	if z.big {
		return
	}
	if !negZero {
		return
	}
	// A listpack stores zero scores as 0 (see Set). A new record leaves
	// its slot in place, so the walk sees every record once.
	z.dict.each(func(a *slotArray, i int) bool {
		if r := a.recs[i]; zrecScore(r) == 0 && math.Signbit(zrecScore(r)) {
			z.rescore(a, i, r, 0, false)
		}
		return true
	})
}

// MarkBig forces the skiplist encoding (a set Redis creates as a
// skiplist from the start).
func (z *ZSet) MarkBig() { z.big = true }

// Score returns the member's score.
func (z *ZSet) Score(member []byte) (float64, bool) {
	r := z.lookup(member)
	if r == nil {
		return 0, false
	}
	return zrecScore(r), true
}

// Set gives member the score, adding it when absent. It reports whether
// the member was added. A member whose score compares equal (0 and -0
// included) is left untouched, as Redis does. In the small encoding a
// zero score is stored as 0, never -0: the listpack keeps scores as
// integers when it can. overwrite: no snapshot is live, and a new score
// may be written into the member's record (rescore).
func (z *ZSet) Set(member []byte, score float64, overwrite bool) (added bool) {
	if score == 0 && !z.big {
		score = 0
	}
	z.dict.step()
	x := fieldHash(member)
	if a, i := z.dict.find(member, x); a != nil {
		if old := a.recs[i]; zrecScore(old) != score {
			z.rescore(a, i, old, score, overwrite)
		}
		return false
	}
	r := zrecMake(member, score)
	z.dict.add(r, x)
	z.tree.Set(zitem{score, r})
	return true
}

// Remove deletes member and reports whether it was there.
func (z *ZSet) Remove(member []byte) bool {
	z.dict.step()
	a, i := z.dict.find(member, fieldHash(member))
	if a == nil {
		return false
	}
	r := a.recs[i]
	z.tree.Delete(zitem{zrecScore(r), r})
	z.dict.delAt(a, i)
	return true
}

// search returns the smallest index whose item satisfies pred (pred is
// false then true along the order), Len when none does.
func (z *ZSet) search(pred func(zitem) bool) int {
	return sort.Search(z.tree.Len(), func(i int) bool {
		it, _ := z.tree.GetAt(i)
		return pred(it)
	})
}

// Rank returns the 0-based position of member in ascending order.
func (z *ZSet) Rank(member []byte) (int, bool) {
	r := z.lookup(member)
	if r == nil {
		return 0, false
	}
	key := zitem{zrecScore(r), r}
	return z.search(func(it zitem) bool { return !zless(it, key) }), true
}

// At returns the member and score at position i (0 <= i < Len).
func (z *ZSet) At(i int) (string, float64) {
	it, _ := z.tree.GetAt(i)
	return zrecMember(it.rec), it.score
}

// Scan continues a ZSCAN from cursor. A set in the small encoding is
// returned whole, in score order, with the next cursor 0, as Redis does
// for a listpack. A large one is walked in the order of its members' hash
// positions (see recTable.scan): a member present for the whole scan is
// returned at least once, however the set changes in between.
func (z *ZSet) Scan(cursor uint64, count int, fn func(member []byte, score float64)) uint64 {
	if !z.big {
		z.tree.Scan(func(it zitem) bool {
			fn(bytesOf(zrecMember(it.rec)), it.score)
			return true
		})
		return 0
	}
	return z.dict.scan(cursor, count, func(r *byte) { fn(bytesOf(zrecMember(r)), zrecScore(r)) })
}

// Ascend calls fn for the items from position i upwards until fn returns
// false.
func (z *ZSet) Ascend(i int, fn func(member string, score float64) bool) {
	if i < 0 || i >= z.tree.Len() {
		return
	}
	it, _ := z.tree.GetAt(i)
	z.tree.Ascend(it, func(it zitem) bool { return fn(zrecMember(it.rec), it.score) })
}

// Descend calls fn for the items from position i downwards until fn
// returns false.
func (z *ZSet) Descend(i int, fn func(member string, score float64) bool) {
	if i < 0 || i >= z.tree.Len() {
		return
	}
	it, _ := z.tree.GetAt(i)
	z.tree.Descend(it, func(it zitem) bool { return fn(zrecMember(it.rec), it.score) })
}

// DeleteRange removes the items at positions [start, end) and returns
// how many it removed. A small range is deleted item by item; a large
// one rebuilds the tree from the items that stay, in O(n).
func (z *ZSet) DeleteRange(start, end int) int {
	n := z.tree.Len()
	start, end = max(start, 0), min(end, n)
	if start >= end {
		return 0
	}
	k := end - start
	switch {
	case k == n:
		z.tree = newZTree()
		z.dict = newRecTable(0)
	case k < 64 || k < n/4:
		for i := 0; i < k; i++ {
			it, _ := z.tree.DeleteAt(start)
			z.dict.del(bytesOf(zrecMember(it.rec)))
		}
	default:
		nt := newZTree()
		i := 0
		z.tree.Scan(func(it zitem) bool {
			if i < start || i >= end {
				nt.Load(it)
			} else {
				z.dict.del(bytesOf(zrecMember(it.rec)))
			}
			i++
			return true
		})
		z.tree = nt
	}
	return k
}

// Pop removes and returns the first item (max=false) or the last.
func (z *ZSet) Pop(max bool) (string, float64, bool) {
	var it zitem
	var ok bool
	if max {
		it, ok = z.tree.PopMax()
	} else {
		it, ok = z.tree.PopMin()
	}
	if !ok {
		return "", 0, false
	}
	z.dict.del(bytesOf(zrecMember(it.rec)))
	return zrecMember(it.rec), it.score, true
}

// ScoreRange is a score interval as ZRANGEBYSCORE takes it: [Min, Max],
// each end excluded when its Ex flag is set.
type ScoreRange struct {
	Min, Max     float64
	MinEx, MaxEx bool
}

// AscendScores calls fn, in ascending order, for the items whose score
// lies in r until fn returns false. It descends the tree once, O(log n),
// where ScoreBounds needs the items' ranks.
func (z *ZSet) AscendScores(r ScoreRange, fn func(member string, score float64) bool) {
	z.tree.Ascend(zitem{score: r.Min}, func(it zitem) bool {
		if r.MinEx && it.score == r.Min {
			return true
		}
		if it.score > r.Max || r.MaxEx && it.score == r.Max {
			return false
		}
		return fn(zrecMember(it.rec), it.score)
	})
}

// ScoreBounds returns the positions [start, end) of the items whose score
// lies in r; start >= end means none.
func (z *ZSet) ScoreBounds(r ScoreRange) (start, end int) {
	start = z.search(func(it zitem) bool {
		if r.MinEx {
			return it.score > r.Min
		}
		return it.score >= r.Min
	})
	end = z.search(func(it zitem) bool {
		if r.MaxEx {
			return it.score >= r.Max
		}
		return it.score > r.Max
	})
	return start, end
}

// LexBound is one end of a lexicographic range: "-" (NegInf), "+"
// (PosInf), or a member, included unless Ex.
type LexBound struct {
	Value          string
	Ex             bool
	NegInf, PosInf bool
}

// cmp compares member with the bound: -1, 0 or 1.
func (b LexBound) cmp(member string) int {
	switch {
	case b.NegInf:
		return 1
	case b.PosInf:
		return -1
	case member < b.Value:
		return -1
	case member > b.Value:
		return 1
	}
	return 0
}

// LexBounds returns the positions [start, end) of the members in
// [min, max]. As in Redis, the result is meaningful when all members have
// the same score.
func (z *ZSet) LexBounds(min, max LexBound) (start, end int) {
	start = z.search(func(it zitem) bool {
		c := min.cmp(zrecMember(it.rec))
		if min.Ex {
			return c > 0
		}
		return c >= 0
	})
	end = z.search(func(it zitem) bool {
		c := max.cmp(zrecMember(it.rec))
		if max.Ex {
			return c >= 0
		}
		return c > 0
	})
	return start, end
}
