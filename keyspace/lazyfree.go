package keyspace

import "github.com/zredis/zredis/listpack"

// Lazy freeing, as Redis 7.0's lazyfree.c counts it. Redis hands a
// deleted value to a background thread when the lazyfree directive that
// governs the deletion is on and the value is made of enough allocations
// (freeObjAsync); a flushed database always goes there with FLUSHALL or
// FLUSHDB ASYNC (emptyDbAsync). INFO's lazyfreed_objects counts what
// that thread freed. Here every value is the garbage collector's to free
// whatever the directives say, so nothing is pending; but the counter
// says what Redis's would, since clients and tests read it to learn
// whether a deletion went to the background.

// LazyfreeThreshold is LAZYFREE_THRESHOLD: a value whose free effort is
// at most this is freed at once, as freeing it in another thread would
// only be slower; so are a script cache, a function set or a tracking
// table no larger.
const LazyfreeThreshold = 64

// FreeMode names the kind of deletion, and so the lazyfree directive that
// decides whether Redis frees the value in the background.
type FreeMode uint8

const (
	// FreeServerDel: a value a command deletes or overwrites as a side
	// effect (dbDelete, dbOverwrite: a STORE's destination, SET over
	// another type, RESTORE REPLACE), under lazyfree-lazy-server-del.
	FreeServerDel FreeMode = iota
	// FreeUserDel: DEL and GETDEL, under lazyfree-lazy-user-del.
	FreeUserDel
	// FreeExpire: an expired key, or one given a deadline already past,
	// under lazyfree-lazy-expire.
	FreeExpire
	// FreeEviction: an evicted key, under lazyfree-lazy-eviction.
	FreeEviction
	// FreeAsync: UNLINK, always in the background.
	FreeAsync
	freeModes
)

// LazyFree is what decides whether Redis would free a value in the
// background: the lazyfree-lazy-* directives, and list-max-listpack-size,
// which shapes the quicklist whose nodes a list's free effort counts.
type LazyFree struct {
	ServerDel, UserDel, Expire, Eviction bool
	ListFill                             int64
}

// lazyState is LazyFree as the keyspace consults it.
type lazyState struct {
	on       [freeModes]bool
	listFill int64
}

// defaultLazyFree is Redis's defaults: every directive off, 8 kB nodes.
var defaultLazyFree = LazyFree{ListFill: -2}

// SetLazyFree applies the lazyfree directives. Under the lock, or before
// serving.
func (ks *Keyspace) SetLazyFree(lf LazyFree) {
	ks.lazy = lazyState{listFill: lf.ListFill}
	ks.lazy.on[FreeServerDel] = lf.ServerDel
	ks.lazy.on[FreeUserDel] = lf.UserDel
	ks.lazy.on[FreeExpire] = lf.Expire
	ks.lazy.on[FreeEviction] = lf.Eviction
	ks.lazy.on[FreeAsync] = true
}

// LazyFreed adds n to lazyfreed_objects: what Redis frees in the
// background besides single values (the keys of a database flushed
// asynchronously, a large script cache or function set, the tracking
// table). Under the lock.
func (ks *Keyspace) LazyFreed(n int64) { ks.stats.LazyfreedObjects += n }

// freed counts e, which a deletion of kind m removed from the keyspace,
// when Redis would have freed it in the background.
func (ks *Keyspace) freed(e *Entry, m FreeMode) {
	if !ks.lazy.on[m] || e.typ == TypeString {
		return
	}
	if ks.freeEffort(e.Obj()) > LazyfreeThreshold {
		ks.stats.LazyfreedObjects++
	}
}

// FreeObject counts o, a value that was never a key and that a command
// drops (SUNION's and SDIFF's result set, freed with freeObjAsync under
// lazyfree-lazy-server-del), when Redis would free it in the background.
// Under the lock.
func (ks *Keyspace) FreeObject(o Object, m FreeMode) {
	if ks.lazy.on[m] && ks.freeEffort(o) > LazyfreeThreshold {
		ks.stats.LazyfreedObjects++
	}
}

// freeEffort is lazyfreeGetFreeEffort: proportional to the allocations
// freeing o takes in Redis, 1 for a value of one allocation (a string, an
// intset, a listpack). It counts only as far as the threshold needs: a
// list's quicklist nodes are counted to one past it.
func (ks *Keyspace) freeEffort(o Object) int64 {
	switch v := o.(type) {
	case *List:
		// ql->len: a quicklist node holds many elements, so a list of
		// at most the threshold's elements has at most as many nodes.
		if v.Len() <= LazyfreeThreshold {
			return int64(v.Len())
		}
		n, _ := v.quicklistShape(ks.lazy.listFill, LazyfreeThreshold+1)
		return int64(n)
	case *Set:
		if v.IsIntset() {
			return 1
		}
		return int64(v.Len())
	case *ZSet:
		if v.IsListpack() {
			return 1
		}
		return int64(v.Len())
	case *Hash:
		if v.tab() == nil {
			return 1
		}
		return int64(v.tab().n)
	case *Stream:
		// Every node of the rax is an allocation; so is each group and,
		// estimated from the first group's, each entry of its PEL. The
		// rax has a node per key and a root at least: past the
		// threshold's keys, that is known without building it.
		effort := int64(v.NodeCount()) + 1
		if effort <= LazyfreeThreshold {
			effort = int64(v.RaxNodes())
		}
		groups := 0
		var firstPEL int
		v.Groups(func(g *StreamGroup) bool {
			if groups == 0 {
				firstPEL = g.pel.Len()
			}
			groups++
			return true
		})
		return effort + int64(groups)*(1+int64(firstPEL))
	}
	return 1
}

// QuicklistShape is the quicklist Redis 7.0 builds by pushing the list's
// elements at its tail in order (RPUSH) under list-max-listpack-size fill:
// its number of nodes and the bytes of their listpacks (DEBUG OBJECT's
// ql_nodes and ql_uncompressed_size, and a list's free effort).
func (l *List) QuicklistShape(fill int64) (nodes int, bytes int64) {
	return l.quicklistShape(fill, 0)
}

// quicklistShape is QuicklistShape, stopping once it has counted
// maxNodes nodes (0: no limit), so that a caller asking only whether a
// list has more than a few nodes does not walk all of it.
func (l *List) quicklistShape(fill int64, maxNodes int) (nodes int, bytes int64) {
	const (
		safetyLimit      = 8192 // SIZE_SAFETY_LIMIT
		estimateOverhead = 8    // SIZE_ESTIMATE_OVERHEAD
		emptyListpack    = 7    // header and end byte
	)
	levels := [...]int64{4096, 8192, 16384, 32768, 65536} // optimization_level
	var nodeSz, nodeCount int64
	allowInsert := func(sz int64) bool {
		newSz := nodeSz + sz + estimateOverhead
		if fill < 0 && -fill-1 < int64(len(levels)) {
			if newSz <= levels[-fill-1] {
				return true
			}
		}
		return newSz <= safetyLimit && nodeCount < fill
	}
	l.Each(0, false, func(_ int, v []byte) bool {
		if nodes == 0 || !allowInsert(int64(len(v))) {
			if maxNodes > 0 && nodes == maxNodes {
				return false
			}
			bytes += nodeSz
			nodes++
			nodeSz, nodeCount = emptyListpack, 0
		}
		nodeSz += int64(listpack.EntrySize(v))
		nodeCount++
		return true
	})
	return nodes, bytes + nodeSz
}
