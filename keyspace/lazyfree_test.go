package keyspace

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// bigSet is a hashtable set of n members (free effort n).
func bigSet(n int) *Set {
	s := NewSet()
	for i := 0; i < n; i++ {
		s.Add(fmt.Appendf(nil, "m%d", i), 512)
	}
	return s
}

func (e *env) lazyfreed() int64 {
	var n int64
	e.ks.Exec(func() { n = e.ks.Stats().LazyfreedObjects })
	return n
}

// TestFreeEffort follows lazyfreeGetFreeEffort: elements of a hashtable
// or skiplist, quicklist nodes of a list, rax nodes and groups of a
// stream, 1 for what is one allocation.
func TestFreeEffort(t *testing.T) {
	ks := New(1, NewManualClock(epoch))
	ints := NewSet()
	for i := 0; i < 200; i++ {
		ints.AddInt(int64(i), 512)
	}
	assert.EqualValues(t, 1, ks.freeEffort(ints), "intset")
	assert.EqualValues(t, 100, ks.freeEffort(bigSet(100)), "hashtable set")

	z := NewZSet()
	for i := 0; i < 100; i++ {
		z.Set(fmt.Appendf(nil, "m%d", i), float64(i), false)
	}
	assert.EqualValues(t, 1, ks.freeEffort(z), "listpack zset")
	z.MarkBig()
	assert.EqualValues(t, 100, ks.freeEffort(z), "skiplist zset")

	lim := HashLimits{MaxEntries: 128, MaxValue: 64}
	h := NewHash()
	for i := 0; i < 100; i++ {
		h.Set(fmt.Appendf(nil, "f%d", i), []byte("v"), lim)
	}
	assert.EqualValues(t, 1, ks.freeEffort(h), "listpack hash")
	for i := 100; i < 200; i++ {
		h.Set(fmt.Appendf(nil, "f%d", i), []byte("v"), lim)
	}
	assert.EqualValues(t, 200, ks.freeEffort(h), "hashtable hash")

	// Under list-max-listpack-size -2, 8 kB nodes: 1000-byte elements
	// go eight to a node. Nodes are counted to one past the threshold.
	l := NewList()
	val := []byte(strings.Repeat("x", 1000))
	for i := 0; i < 8*64; i++ {
		l.PushCopy(false, [][]byte{val})
	}
	assert.EqualValues(t, 64, ks.freeEffort(l), "64 nodes")
	l.PushCopy(false, [][]byte{val})
	assert.EqualValues(t, 65, ks.freeEffort(l), "65 nodes")
	for i := 0; i < 1000; i++ {
		l.PushCopy(false, [][]byte{val})
	}
	assert.EqualValues(t, 65, ks.freeEffort(l), "counted to the threshold")
	nodes, _ := l.QuicklistShape(-2)
	assert.Equal(t, 190, nodes)
	// A positive fill is a count of elements per node.
	ks.SetLazyFree(LazyFree{ListFill: 1})
	small := NewList()
	for i := 0; i < 65; i++ {
		small.PushCopy(false, [][]byte{[]byte("a")})
	}
	assert.EqualValues(t, 65, ks.freeEffort(small), "a node per element")

	st := NewStream()
	for i := 1; i <= 10; i++ {
		st.Append(StreamID{Ms: uint64(i)}, [][]byte{[]byte("f"), []byte("v")}, 4096, 1)
	}
	assert.EqualValues(t, st.RaxNodes(), ks.freeEffort(st), "no group")
	require.NotNil(t, st.CreateGroup([]byte("a"), StreamID{}, 0))
	require.NotNil(t, st.CreateGroup([]byte("b"), StreamID{}, 0))
	assert.EqualValues(t, st.RaxNodes()+2, ks.freeEffort(st), "two groups, empty PELs")
}

// TestLazyFreedByMode: a deletion counts when its directive is on (UNLINK
// always) and the value's effort passes 64; a string never does.
func TestLazyFreedByMode(t *testing.T) {
	e := newEnv(t)
	put := func(key string, n int) {
		e.do(func(db *DB) { db.PutObject([]byte(key), bigSet(n)) })
		e.ks.EndCommand(true)
	}
	del := func(key string, m FreeMode) {
		e.do(func(db *DB) { require.True(t, db.DeleteAs([]byte(key), m)) })
		e.ks.EndCommand(true)
	}
	put("a", 64)
	del("a", FreeAsync)
	assert.Zero(t, e.lazyfreed(), "effort 64")
	put("a", 65)
	del("a", FreeAsync)
	assert.EqualValues(t, 1, e.lazyfreed(), "UNLINK")
	e.set("s", strings.Repeat("v", 100000), 0)
	e.do(func(db *DB) { db.DeleteAs([]byte("s"), FreeAsync) })
	assert.EqualValues(t, 1, e.lazyfreed(), "a string is one allocation")

	for _, m := range []FreeMode{FreeServerDel, FreeUserDel, FreeExpire, FreeEviction} {
		put("a", 100)
		del("a", m)
	}
	assert.EqualValues(t, 1, e.lazyfreed(), "directives off")
	e.ks.Exec(func() {
		e.ks.SetLazyFree(LazyFree{ServerDel: true, UserDel: true, Expire: true, Eviction: true, ListFill: -2})
	})
	for _, m := range []FreeMode{FreeServerDel, FreeUserDel, FreeExpire, FreeEviction} {
		put("a", 100)
		del("a", m)
	}
	assert.EqualValues(t, 5, e.lazyfreed(), "directives on")

	// dbOverwrite: a value replaced by Put or SET.
	put("a", 100)
	put("a", 100)
	assert.EqualValues(t, 6, e.lazyfreed(), "Put over a set")
	e.set("a", "v", 0)
	assert.EqualValues(t, 7, e.lazyfreed(), "SET over a set")

	// RENAME: the value moves, nothing is freed.
	put("a", 100)
	e.do(func(db *DB) { db.Put([]byte("b"), db.Take([]byte("a"))) })
	assert.EqualValues(t, 7, e.lazyfreed(), "rename")

	// An expired key, when met or found by the timer.
	e.do(func(db *DB) {
		db.PutObject([]byte("x"), bigSet(100))
		db.SetExpire([]byte("x"), epoch+10)
		db.PutObject([]byte("y"), bigSet(100))
		db.SetExpire([]byte("y"), epoch+10)
	})
	e.ks.EndCommand(true)
	e.clock.Advance(time.Second)
	e.do(func(db *DB) { assert.Nil(t, db.Lookup([]byte("x"))) })
	e.ks.Exec(func() { e.ks.ExpireDue(10) })
	assert.EqualValues(t, 9, e.lazyfreed(), "expired")

	e.ks.Exec(func() { e.ks.FreeObject(bigSet(65), FreeServerDel) })
	assert.EqualValues(t, 10, e.lazyfreed(), "a temporary set")
	e.ks.Exec(func() { e.ks.LazyFreed(5) })
	assert.EqualValues(t, 15, e.lazyfreed())
}

// TestLazyFreedByEviction: every key evicted under lazyfree-lazy-eviction
// is a large set, so each counts.
func TestLazyFreedByEviction(t *testing.T) {
	e := newEnv(t)
	e.ks.Exec(func() { e.ks.SetLazyFree(LazyFree{Eviction: true, ListFill: -2}) })
	for i := 0; i < 20; i++ {
		e.do(func(db *DB) { db.PutObject(fmt.Appendf(nil, "k%d", i), bigSet(100)) })
		e.ks.EndCommand(true)
	}
	var used int64
	e.ks.Exec(func() { used = e.ks.UsedMemory() })
	evicted := 0
	e.ks.Exec(func() {
		e.ks.Evict(EvictLimits{MaxMemory: used / 2, Policy: AllKeysRandom, Samples: 5, TimeLimit: -1},
			func(Evicted) { evicted++ })
	})
	require.NotZero(t, evicted)
	assert.EqualValues(t, evicted, e.lazyfreed())
}

// TestUsedMemoryCountsFilledCollections: a collection stored empty and
// filled by the same command (SADD, RPUSH, ZADD, XADD on a new key) is
// counted as filled once the command ends, as MEMORY USAGE measures it.
func TestUsedMemoryCountsFilledCollections(t *testing.T) {
	e := newEnv(t)
	fills := map[string]func(db *DB, key []byte){
		"set": func(db *DB, key []byte) {
			s := NewSet()
			db.PutObject(key, s)
			for i := 0; i < 20000; i++ {
				s.Add(fmt.Appendf(nil, "member:%d", i), 512)
			}
		},
		"intset": func(db *DB, key []byte) {
			s := NewSet()
			db.PutObject(key, s)
			for i := 0; i < 20000; i++ {
				s.AddInt(int64(i), 1<<20)
			}
		},
		"list": func(db *DB, key []byte) {
			l := NewList()
			db.PutObject(key, l)
			for i := 0; i < 20000; i++ {
				l.PushCopy(false, [][]byte{fmt.Appendf(nil, "element:%d", i)})
			}
		},
		"zset": func(db *DB, key []byte) {
			z := NewZSet()
			z.MarkBig()
			db.PutObject(key, z)
			for i := 0; i < 20000; i++ {
				z.Set(fmt.Appendf(nil, "member:%d", i), float64(i), false)
			}
		},
		"hash": func(db *DB, key []byte) {
			lim := HashLimits{MaxEntries: 128, MaxValue: 64}
			pairs := [][]byte{[]byte("f"), []byte("v")}
			h := db.AddHash(key, lim, pairs)
			for i := 0; i < 20000; i++ {
				h.Set(fmt.Appendf(nil, "field:%d", i), []byte("value"), lim)
			}
		},
		"stream": func(db *DB, key []byte) {
			s := NewStream()
			db.PutObject(key, s)
			for i := 1; i <= 20000; i++ {
				s.Append(StreamID{Ms: uint64(i)}, [][]byte{[]byte("field"), []byte("value")}, 4096, 100)
			}
		},
	}
	for name, fill := range fills {
		var before, after, want int64
		e.ks.Exec(func() { before = e.ks.UsedMemory() })
		e.do(func(db *DB) { fill(db, []byte(name)) })
		e.ks.EndCommand(true)
		e.ks.Exec(func() {
			after = e.ks.UsedMemory()
			want = e.ks.DB(0).Peek([]byte(name)).cost()
			assert.Equal(t, recount(e.ks), e.ks.DatasetMemory(), name)
		})
		assert.Greater(t, want, int64(100000), name)
		assert.InDelta(t, want, after-before, float64(want)/20, name)
	}
}

// TestUsedMemoryDirtyEntryMoved: an entry changed in place, then moved to
// another database before its command ended (MOVE in the same run: the
// entries a served blocked client changed are settled by the next
// command), is counted in its new database.
func TestUsedMemoryDirtyEntryMoved(t *testing.T) {
	e := newEnv(t)
	e.do(func(db *DB) {
		db.SetString([]byte("k"), []byte("v"), false, 0)
	})
	e.ks.EndCommand(true)
	e.ks.Exec(func() {
		e.ks.BeginCommand(false)
		db0, db1 := e.ks.DB(0), e.ks.DB(1)
		en := db0.LookupWrite([]byte("k"))
		en.SetStr([]byte(strings.Repeat("x", 50000)))
		db1.Put([]byte("k"), db0.Take([]byte("k")))
		db1.LookupWrite([]byte("k")).SetStr([]byte(strings.Repeat("y", 100000)))
		e.ks.EndCommand(true)
		assert.Equal(t, recount(e.ks), e.ks.DatasetMemory())
		assert.Zero(t, db0.used, "nothing left in db 0")
		db1.Flush()
		assert.Zero(t, e.ks.DatasetMemory())
	})
}
