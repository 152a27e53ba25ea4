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

// zitem is one member of a sorted set, ordered by (score, member) with
// members compared bytewise, as Redis's skiplist orders them.
type zitem struct {
	score  float64
	member string
}

func zless(a, b zitem) bool {
	if a.score != b.score {
		return a.score < b.score
	}
	return a.member < b.member
}

// ZSet is a sorted set: a B-tree ordered by (score, member) for ranges
// and ranks, plus a member -> score table for point lookups. The table is
// the hash type's (see hashTable): one immutable record per member,
// holding the member and its score's 8 bytes, ordered by the member's
// hash position, which is what lets ZSCAN keep the SCAN guarantee while
// the set grows or shrinks. The tree's member strings are views into the
// records, so a member is allocated once. Ranks are found by binary
// search over the tree's positional access (GetAt), O(log² n), never by
// walking.
type ZSet struct {
	tree *btree.BTreeG[zitem]
	dict *hashTable
	// big records that Redis would have converted the set to a skiplist
	// (OBJECT ENCODING "skiplist"); Redis never converts back on removal.
	big bool
}

func newZTree() *btree.BTreeG[zitem] {
	return btree.NewBTreeGOptions(zless, btree.Options{NoLocks: true, Degree: 64})
}

// NewZSet returns an empty sorted set in the small ("listpack") encoding.
func NewZSet() *ZSet {
	return &ZSet{tree: newZTree(), dict: newHashTable(0)}
}

// ---- member -> score table ---------------------------------------------------

// bytesOf views a string's bytes without copying; the caller must not
// change them.
func bytesOf(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

func scoreOfRec(v []byte) float64 { return math.Float64frombits(binary.LittleEndian.Uint64(v)) }

// lookup returns member's score.
func (z *ZSet) lookup(member []byte) (float64, bool) {
	i := z.dict.find(member, fieldHash(member))
	if i < 0 {
		return 0, false
	}
	_, v := recSplit(z.dict.recs[i])
	return scoreOfRec(v), true
}

// store records member's score and returns the member as a view into its
// record, for the tree to share.
func (z *ZSet) store(member []byte, score float64) string {
	var sb [8]byte
	binary.LittleEndian.PutUint64(sb[:], math.Float64bits(score))
	rec, _ := z.dict.put(member, sb[:])
	f, _ := recSplit(rec)
	return unsafe.String(unsafe.SliceData(f), len(f))
}

// rangeDict calls fn for every member and score, in table order.
func (z *ZSet) rangeDict(fn func(member []byte, score float64)) {
	for i, r := range z.dict.recs {
		if z.dict.tags[i] != 0 {
			f, v := recSplit(r)
			fn(f, scoreOfRec(v))
		}
	}
}

// Type is TypeZSet.
func (z *ZSet) Type() Type { return TypeZSet }

// Len is the number of members.
func (z *ZSet) Len() int { return z.dict.n }

// Clone returns an isolated copy: the tree is copied on write, the map
// copied now.
func (z *ZSet) Clone() Object {
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
	var negZero [][]byte
	z.rangeDict(func(m []byte, s float64) {
		if len(m) > maxValue {
			z.big = true
		}
		if s == 0 && math.Signbit(s) {
			negZero = append(negZero, m)
		}
	})
	if z.big {
		return
	}
	// A listpack stores zero scores as 0 (see Set).
	for _, m := range negZero {
		z.tree.Delete(zitem{math.Copysign(0, -1), string(m)})
		z.tree.Set(zitem{0, z.store(m, 0)})
	}
}

// MarkBig forces the skiplist encoding (a set Redis creates as a
// skiplist from the start).
func (z *ZSet) MarkBig() { z.big = true }

// Score returns the member's score.
func (z *ZSet) Score(member []byte) (float64, bool) {
	return z.lookup(member)
}

// Set gives member the score, adding it when absent. It reports whether
// the member was added. A member whose score compares equal (0 and -0
// included) is left untouched, as Redis does. In the small encoding a
// zero score is stored as 0, never -0: the listpack keeps scores as
// integers when it can.
func (z *ZSet) Set(member []byte, score float64) (added bool) {
	if score == 0 && !z.big {
		score = 0
	}
	old, ok := z.lookup(member)
	if ok {
		if old == score {
			return false
		}
		z.tree.Delete(zitem{old, string(member)})
		z.tree.Set(zitem{score, z.store(member, score)})
		return false
	}
	z.tree.Set(zitem{score, z.store(member, score)})
	return true
}

// Remove deletes member and reports whether it was there.
func (z *ZSet) Remove(member []byte) bool {
	old, ok := z.lookup(member)
	if !ok {
		return false
	}
	z.tree.Delete(zitem{old, string(member)})
	z.dict.del(member)
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
	s, ok := z.lookup(member)
	if !ok {
		return 0, false
	}
	key := zitem{s, string(member)}
	return z.search(func(it zitem) bool { return !zless(it, key) }), true
}

// At returns the member and score at position i (0 <= i < Len).
func (z *ZSet) At(i int) (string, float64) {
	it, _ := z.tree.GetAt(i)
	return it.member, it.score
}

// Scan continues a ZSCAN from cursor. A set in the small encoding is
// returned whole, in score order, with the next cursor 0, as Redis does
// for a listpack. A large one is walked in the order of its members' hash
// positions (see hashTable.scan): a member present for the whole scan is
// returned at least once, however the set changes in between.
func (z *ZSet) Scan(cursor uint64, count int, fn func(member []byte, score float64)) uint64 {
	if !z.big {
		z.tree.Scan(func(it zitem) bool {
			fn(bytesOf(it.member), it.score)
			return true
		})
		return 0
	}
	return z.dict.scan(cursor, count, func(f, v []byte) { fn(f, scoreOfRec(v)) })
}

// Ascend calls fn for the items from position i upwards until fn returns
// false.
func (z *ZSet) Ascend(i int, fn func(member string, score float64) bool) {
	if i < 0 || i >= z.tree.Len() {
		return
	}
	it, _ := z.tree.GetAt(i)
	z.tree.Ascend(it, func(it zitem) bool { return fn(it.member, it.score) })
}

// Descend calls fn for the items from position i downwards until fn
// returns false.
func (z *ZSet) Descend(i int, fn func(member string, score float64) bool) {
	if i < 0 || i >= z.tree.Len() {
		return
	}
	it, _ := z.tree.GetAt(i)
	z.tree.Descend(it, func(it zitem) bool { return fn(it.member, it.score) })
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
		z.dict = newHashTable(0)
	case k < 64 || k < n/4:
		for i := 0; i < k; i++ {
			it, _ := z.tree.DeleteAt(start)
			z.dict.del(bytesOf(it.member))
		}
	default:
		nt := newZTree()
		i := 0
		z.tree.Scan(func(it zitem) bool {
			if i < start || i >= end {
				nt.Load(it)
			} else {
				z.dict.del(bytesOf(it.member))
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
	if ok {
		z.dict.del(bytesOf(it.member))
	}
	return it.member, it.score, ok
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
		return fn(it.member, it.score)
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
		c := min.cmp(it.member)
		if min.Ex {
			return c > 0
		}
		return c >= 0
	})
	end = z.search(func(it zitem) bool {
		c := max.cmp(it.member)
		if max.Ex {
			return c >= 0
		}
		return c > 0
	})
	return start, end
}
