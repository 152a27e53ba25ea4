package keyspace

import (
	"hash/maphash"
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

// dslot is one deadline's keys: key alone, or b when there are several.
type dslot struct {
	at  int64
	key string
	b   *dbucket
}

// dbucket holds the keys of a deadline held by more than one key, in
// the order they came, each with a hash of it (hs). A delete finds its key
// by the hash and compares one string: comparing the key strings
// themselves would read each one's bytes, a cache miss apiece. The bucket
// keeps the strings it was given, which share the database map's key
// bytes, so the one comparison reads bytes the map lookup has just read.
//
// Up to bucketScanMax keys a delete scans the hashes; beyond, an
// open-addressing table of positions (idx) finds them, so that deleting
// from a deadline a million keys share (EXPIREAT of a bulk load) stays
// O(1) at 6 to 16 bytes a key more: a Go map of the keys would cost 60.
type dbucket struct {
	keys []string
	hs   []uint64
	idx  []int32 // positions in keys by hash, linear probing; -1 is empty
}

// bucketScanMax is the size past which a bucket indexes its hashes: a
// delete scans at most this many (1 KiB).
const bucketScanMax = 128

var bucketSeed = maphash.MakeSeed()

// deadline is one key of the index, as min and scan report it.
type deadline struct {
	at  int64
	key string
}

func dslotLess(a, b dslot) bool { return a.at < b.at }

func newDeadlines() deadlines {
	return deadlines{tr: btree.NewBTreeGOptions(dslotLess, btree.Options{NoLocks: true})}
}

// add indexes key at deadline at. The index keeps its own copy of key.
func (d *deadlines) add(at int64, key []byte) {
	d.addString(at, string(key))
}

// addString is add for a key already held as a string, which the index
// shares.
func (d *deadlines) addString(at int64, key string) {
	d.n++
	if d.hot != nil && d.hotAt == at {
		d.hot.add(key)
		return
	}
	// The hint makes Set's descent retrace Get's at no cost.
	var hint btree.PathHint
	s, ok := d.tr.GetHint(dslot{at: at}, &hint)
	switch {
	case !ok:
		d.tr.SetHint(dslot{at: at, key: key}, &hint)
		return
	case s.b == nil:
		s.b = &dbucket{keys: make([]string, 0, 4), hs: make([]uint64, 0, 4)}
		s.b.add(s.key)
		s.b.add(key)
		s.key = ""
		d.tr.SetHint(s, &hint)
	default:
		s.b.add(key)
	}
	d.hot, d.hotAt = s.b, at
}

// del removes key's entry at deadline at and returns the string the index
// held for it (for the caller to index again under a new deadline rather
// than copy the key), or "" when it was not indexed. key is only compared.
func (d *deadlines) del(at int64, key []byte) string {
	if len(key) == 0 {
		return d.delString(at, "")
	}
	return d.delString(at, unsafe.String(&key[0], len(key)))
}

// delString is del for a key held as a string.
func (d *deadlines) delString(at int64, key string) string {
	var hint btree.PathHint
	s, ok := d.tr.GetHint(dslot{at: at}, &hint)
	if !ok {
		return ""
	}
	if s.b == nil {
		if s.key != key {
			return ""
		}
		d.tr.DeleteHint(s, &hint)
		d.n--
		return s.key
	}
	held, ok := s.b.del(key)
	if !ok {
		return ""
	}
	d.n--
	if s.b.len() == 0 {
		d.tr.DeleteHint(s, &hint)
		if d.hot == s.b {
			d.hot = nil
		}
	}
	return held
}

// min is the earliest deadline and one of its keys.
func (d *deadlines) min() (deadline, bool) {
	s, ok := d.tr.Min()
	if !ok {
		return deadline{}, false
	}
	return deadline{s.at, s.one()}, true
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
	if s.b == nil {
		return deadline{s.at, s.key}, true
	}
	return deadline{s.at, s.b.keys[rand.IntN(len(s.b.keys))]}, true
}

// len is the number of keys with a deadline.
func (d *deadlines) len() int { return d.n }

// one is a key of the slot: the one expired next at its deadline.
func (s dslot) one() string {
	if s.b == nil {
		return s.key
	}
	return s.b.one()
}

func (b *dbucket) len() int { return len(b.keys) }

func (b *dbucket) add(key string) {
	h := maphash.String(bucketSeed, key)
	b.keys = append(b.keys, key)
	b.hs = append(b.hs, h)
	switch {
	case len(b.keys) > len(b.idx)*5/8 && len(b.keys) > bucketScanMax:
		b.reindex()
	case b.idx != nil:
		b.place(int32(len(b.keys) - 1))
	}
}

// reindex rebuilds idx at two to four slots a key; add rebuilds it again
// before it is more than 5/8 full, where linear probing stays short.
func (b *dbucket) reindex() {
	n := 1
	for n < 2*len(b.keys) {
		n <<= 1
	}
	b.idx = make([]int32, n)
	for i := range b.idx {
		b.idx[i] = -1
	}
	for p := range b.keys {
		b.place(int32(p))
	}
}

// place enters position p in idx.
func (b *dbucket) place(p int32) {
	mask := len(b.idx) - 1
	s := int(b.hs[p]) & mask
	for b.idx[s] >= 0 {
		s = (s + 1) & mask
	}
	b.idx[s] = p
}

// slot is the index of idx holding position p.
func (b *dbucket) slot(p int32) int {
	mask := len(b.idx) - 1
	s := int(b.hs[p]) & mask
	for b.idx[s] != p {
		s = (s + 1) & mask
	}
	return s
}

// unslot empties idx[s], moving back the entries after it that their
// probe would no longer reach (deletion without tombstones, for linear
// probing: Knuth's Algorithm R).
func (b *dbucket) unslot(s int) {
	mask := len(b.idx) - 1
	for {
		b.idx[s] = -1
		j := s
		for {
			j = (j + 1) & mask
			p := b.idx[j]
			if p < 0 {
				return
			}
			home := int(b.hs[p]) & mask
			// The entry at j stays unless its home lies cyclically
			// outside (s, j]: then s is on its probe path.
			if (s < j && (home <= s || home > j)) || (s > j && home <= s && home > j) {
				b.idx[s] = p
				s = j
				break
			}
		}
	}
}

// del removes key, returning the string the bucket held for it. The last
// key takes its place.
func (b *dbucket) del(key string) (string, bool) {
	h := maphash.String(bucketSeed, key)
	p := int32(-1)
	if b.idx == nil {
		for i := len(b.hs) - 1; i >= 0; i-- {
			if b.hs[i] == h && b.keys[i] == key {
				p = int32(i)
				break
			}
		}
	} else {
		mask := len(b.idx) - 1
		for s := int(h) & mask; b.idx[s] >= 0; s = (s + 1) & mask {
			if q := b.idx[s]; b.hs[q] == h && b.keys[q] == key {
				p = q
				b.unslot(s)
				break
			}
		}
	}
	if p < 0 {
		return "", false
	}
	held := b.keys[p]
	last := int32(len(b.keys) - 1)
	if p != last {
		if b.idx != nil {
			b.idx[b.slot(last)] = p
		}
		b.keys[p], b.hs[p] = b.keys[last], b.hs[last]
	}
	b.keys[last] = ""
	b.keys, b.hs = b.keys[:last], b.hs[:last]
	return held, true
}

// one is the key expired next: the last added, removed without moving
// any other.
func (b *dbucket) one() string { return b.keys[len(b.keys)-1] }
