package keyspace

import (
	"hash/maphash"
	"unsafe"

	"github.com/tidwall/btree"
)

// deadlines is a database's expiry index: every key with a deadline,
// ordered by (deadline, key hash, key). Keys given the same TTL in the
// same millisecond share a deadline; ordering ties by a hash stored in
// the item keeps the B-tree's comparisons on integers instead of chasing
// key strings through memory. Messages still leave in deadline order;
// among equal deadlines the order is the hash's, which is fixed.
type deadlines struct {
	tr *btree.BTreeG[deadline]
}

type deadline struct {
	at  int64
	h   uint64
	key string
}

var deadlineSeed = maphash.MakeSeed()

func deadlineLess(a, b deadline) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	if a.h != b.h {
		return a.h < b.h
	}
	return a.key < b.key
}

func newDeadlines() deadlines {
	return deadlines{tr: btree.NewBTreeGOptions(deadlineLess, btree.Options{NoLocks: true})}
}

// add indexes key at deadline at. The index keeps its own copy of key.
func (d deadlines) add(at int64, key []byte) {
	d.tr.Set(deadline{at, maphash.Bytes(deadlineSeed, key), string(key)})
}

// addString is add for a key already held as a string.
func (d deadlines) addString(at int64, key string) {
	d.tr.Set(deadline{at, maphash.String(deadlineSeed, key), key})
}

// del removes key's entry at deadline at. The key is only compared, never
// kept, so it is viewed in place rather than copied.
func (d deadlines) del(at int64, key []byte) {
	if len(key) == 0 {
		d.tr.Delete(deadline{at: at, h: maphash.String(deadlineSeed, "")})
		return
	}
	k := unsafe.String(&key[0], len(key))
	d.tr.Delete(deadline{at, maphash.String(deadlineSeed, k), k})
}

// delString is del for a key held as a string.
func (d deadlines) delString(at int64, key string) {
	d.tr.Delete(deadline{at, maphash.String(deadlineSeed, key), key})
}

// min is the earliest deadline and its key.
func (d deadlines) min() (deadline, bool) { return d.tr.Min() }

// len is the number of keys with a deadline.
func (d deadlines) len() int { return d.tr.Len() }

// scan calls fn in deadline order until it returns false.
func (d deadlines) scan(fn func(deadline) bool) { d.tr.Scan(fn) }
