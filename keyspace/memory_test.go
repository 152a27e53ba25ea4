package keyspace

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// recount is the dataset's cost recomputed from scratch, to check the
// incremental count against.
func recount(ks *Keyspace) int64 {
	var n int64
	for _, db := range ks.dbs {
		for _, t := range db.shards {
			if t == nil {
				continue
			}
			t.all(func(e *Entry) bool {
				n += allocUnits(e.cost()) + db.keyCost
				return true
			})
		}
		n += int64(db.expires.len()) * deadlineCost
	}
	return n
}

func allocUnits(c int64) int64 { return (c + memUnit - 1) / memUnit * memUnit }

func heapAlloc() int64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// TestUsedMemoryFollowsHeap: the count estimates what the Go heap keeps
// for the dataset, within 25%, for strings of several sizes (with and
// without deadlines) and for each collection type.
func TestUsedMemoryFollowsHeap(t *testing.T) {
	type load struct {
		name  string
		keys  int
		fill  func(db *DB, i int)
		slots bool // cluster mode's slot index on
	}
	hl := HashLimits{MaxEntries: 128, MaxValue: 64}
	loads := []load{
		{name: "string-8", keys: 200000, fill: func(db *DB, i int) {
			db.SetString(fmt.Appendf(nil, "key:%08d", i), []byte("12345678"), false, 0)
		}},
		{name: "string-8-slot-index", keys: 200000, slots: true, fill: func(db *DB, i int) {
			db.SetString(fmt.Appendf(nil, "key:%08d", i), []byte("12345678"), false, 0)
		}},
		{name: "string-100-ttl", keys: 100000, fill: func(db *DB, i int) {
			db.SetString(fmt.Appendf(nil, "key:%08d", i), []byte(strings.Repeat("v", 100)), false, epoch+int64(i)+1e9)
		}},
		{name: "string-1000", keys: 50000, fill: func(db *DB, i int) {
			db.SetString(fmt.Appendf(nil, "key:%08d", i), []byte(strings.Repeat("v", 1000)), false, 0)
		}},
		{name: "string-100000", keys: 500, fill: func(db *DB, i int) {
			db.SetString(fmt.Appendf(nil, "key:%08d", i), []byte(strings.Repeat("v", 100000)), false, 0)
		}},
		{name: "hash-small", keys: 20000, fill: func(db *DB, i int) {
			h := NewHash()
			for f := 0; f < 10; f++ {
				h.Set(fmt.Appendf(nil, "field%d", f), []byte("value-value"), hl)
			}
			db.Put(fmt.Appendf(nil, "key:%08d", i), NewObject(h, 0))
		}},
		{name: "hash-big", keys: 20, fill: func(db *DB, i int) {
			h := NewHash()
			for f := 0; f < 5000; f++ {
				h.Set(fmt.Appendf(nil, "field%d", f), []byte("value-value"), hl)
			}
			db.Put(fmt.Appendf(nil, "key:%08d", i), NewObject(h, 0))
		}},
		{name: "list", keys: 200, fill: func(db *DB, i int) {
			l := NewList()
			for f := 0; f < 2000; f++ {
				l.Push(false, fmt.Appendf(nil, "element-%d", f))
			}
			db.Put(fmt.Appendf(nil, "key:%08d", i), NewObject(l, 0))
		}},
		{name: "set", keys: 50, fill: func(db *DB, i int) {
			s := NewSet()
			for f := 0; f < 5000; f++ {
				s.Add(fmt.Appendf(nil, "member-%d", f), 512)
			}
			db.Put(fmt.Appendf(nil, "key:%08d", i), NewObject(s, 0))
		}},
		{name: "zset", keys: 50, fill: func(db *DB, i int) {
			z := NewZSet()
			for f := 0; f < 5000; f++ {
				z.Set(fmt.Appendf(nil, "member-%d", f), float64(f), false)
			}
			db.Put(fmt.Appendf(nil, "key:%08d", i), NewObject(z, 0))
		}},
	}
	for _, l := range loads {
		t.Run(l.name, func(t *testing.T) {
			e := newEnv(t)
			if l.slots {
				e.ks.Exec(e.ks.EnableSlotIndex)
			}
			before := heapAlloc()
			for i := 0; i < l.keys; i++ {
				e.do(func(db *DB) { l.fill(db, i) })
			}
			heap := heapAlloc() - before
			var used int64
			e.ks.Exec(func() { used = e.ks.DatasetMemory() })
			t.Logf("%s: heap %d, counted %d (%.2f)", l.name, heap, used, float64(used)/float64(heap))
			assert.InDelta(t, 1, float64(used)/float64(heap), 0.25)
			runtime.KeepAlive(e.ks)
		})
	}
}

// TestUsedMemoryBalances: the incremental count equals a recount after
// every kind of change, and comes back to 0 when the keys are gone.
func TestUsedMemoryBalances(t *testing.T) {
	e := newEnv(t)
	check := func(what string) {
		t.Helper()
		e.ks.Exec(func() {
			assert.Equal(t, recount(e.ks), e.ks.DatasetMemory(), what)
		})
	}
	for i := 0; i < 100; i++ {
		e.set(fmt.Sprintf("k%d", i), strings.Repeat("x", i*10), 0)
	}
	check("set")
	for i := 0; i < 100; i += 3 {
		e.set(fmt.Sprintf("k%d", i), strings.Repeat("y", 1000-i), epoch+1e6)
	}
	check("overwrite")
	e.do(func(db *DB) {
		en := db.LookupWrite([]byte("k5"))
		en.SetStr(append(en.Str(), strings.Repeat("z", 5000)...))
	})
	e.ks.EndCommand(true)
	check("append")
	e.do(func(db *DB) { db.Put([]byte("h"), NewObject(NewHash(), 0)) })
	for i := 0; i < 300; i++ {
		e.do(func(db *DB) {
			db.LookupWrite([]byte("h")).Obj().(*Hash).Set(fmt.Appendf(nil, "f%d", i), []byte("v"), testLimits)
		})
		e.ks.EndCommand(true)
	}
	check("hset")
	// A hash made in its entry (AddHash), filled in the same command:
	// packed in the tail, packed beyond it, and converted at once.
	lim := testLimits
	for i, pairs := range [][]string{
		{"f1", "v1", "f2", "v2"},
		{"f", strings.Repeat("v", 60), "g", strings.Repeat("w", 60), "h", strings.Repeat("x", 60)},
		{"f", strings.Repeat("v", 65)},
	} {
		args := make([][]byte, len(pairs))
		for j, a := range pairs {
			args[j] = []byte(a)
		}
		key := fmt.Sprintf("added%d", i)
		e.do(func(db *DB) {
			h := db.AddHash([]byte(key), lim, args)
			h.Convert(lim, args...)
			for j := 0; j < len(args); j += 2 {
				h.Set(args[j], args[j+1], lim)
			}
		})
		e.ks.EndCommand(true)
		e.do(func(db *DB) {
			h := db.LookupNoTouch([]byte(key)).Obj().(*Hash)
			require.Equal(t, len(args)/2, h.Len(), key)
			for j := 0; j < len(args); j += 2 {
				v, ok := h.Get(args[j])
				require.True(t, ok, key)
				require.Equal(t, string(args[j+1]), string(v), key)
			}
		})
	}
	check("hash added in its entry")
	// A snapshot makes LookupWrite copy the entry.
	var s *Snapshot
	e.ks.Exec(func() { s = e.ks.Snapshot() })
	e.do(func(db *DB) {
		db.LookupWrite([]byte("h")).Obj().(*Hash).Set([]byte("new"), []byte("v"), testLimits)
		db.SetExpire([]byte("k7"), epoch+5000)
	})
	e.ks.EndCommand(true)
	s.Release()
	check("copy on write")
	e.do(func(db *DB) {
		en := db.Take([]byte("k9"))
		db.Put([]byte("renamed"), en)
		db.Delete([]byte("k10"))
	})
	check("rename, delete")
	e.ks.Exec(func() { e.ks.SwapDB(0, 1) })
	check("swapdb")
	e.clock.Advance(2 * time.Hour)
	e.ks.Exec(func() { e.ks.ExpireDue(1000) })
	check("expired")
	e.ks.Exec(func() { e.ks.FlushAll() })
	e.ks.Exec(func() { assert.Zero(t, e.ks.DatasetMemory()) })
}

// evictEnv fills database 0 and 1 with n keys each of about 1 kB.
func evictEnv(t *testing.T, n int, ttl func(i int) int64) *env {
	e := newEnv(t)
	val := []byte(strings.Repeat("v", 1000))
	for d := 0; d < 2; d++ {
		for i := 0; i < n; i++ {
			e.ks.Exec(func() {
				e.ks.BeginCommand(false)
				e.ks.DB(d).SetString(fmt.Appendf(nil, "k%d", i), val, false, ttl(i))
			})
		}
	}
	return e
}

func TestEvictPolicies(t *testing.T) {
	for _, p := range policyNames {
		t.Run(p, func(t *testing.T) {
			pol, ok := ParsePolicy(p)
			require.True(t, ok)
			// Even keys persistent, odd ones with deadlines (later for
			// larger i).
			e := evictEnv(t, 1000, func(i int) int64 {
				if i%2 == 0 {
					return 0
				}
				return epoch + 1e6 + int64(i)*1000
			})
			e.ks.SetLFU(pol.lfu(), 10, 1)
			var used int64
			e.ks.Exec(func() { used = e.ks.UsedMemory() })
			lim := EvictLimits{MaxMemory: used * 3 / 4, Policy: pol, Samples: 5, TimeLimit: -1}
			var evicted []Evicted
			var res EvictResult
			e.ks.Exec(func() {
				res = e.ks.Evict(lim, func(ev Evicted) { evicted = append(evicted, ev) })
				used = e.ks.UsedMemory()
			})
			if pol == NoEviction {
				assert.Equal(t, EvictFail, res)
				assert.Empty(t, evicted)
				return
			}
			require.Equal(t, EvictOK, res)
			assert.LessOrEqual(t, used, lim.MaxMemory)
			assert.NotEmpty(t, evicted)
			for _, ev := range evicted {
				e.ks.Exec(func() { assert.Nil(t, e.ks.DB(ev.DB).Peek([]byte(ev.Key))) })
				if !pol.allKeys() {
					assert.NotZero(t, ev.Entry.ExpireAt(), "volatile policies evict only keys with a deadline")
				}
			}
			if pol == VolatileTTL {
				// The nearest deadlines went first: every evicted key's
				// deadline is before every surviving one's.
				var maxEvicted int64
				for _, ev := range evicted {
					maxEvicted = max(maxEvicted, ev.Entry.ExpireAt())
				}
				e.ks.Exec(func() {
					for d := 0; d < 2; d++ {
						if m, ok := e.ks.DB(d).expires.min(); ok {
							assert.Greater(t, m.at, maxEvicted)
						}
					}
				})
			}
			check := e.ks.UsedMemory
			e.ks.Exec(func() { assert.Equal(t, recount(e.ks), check()) })
		})
	}
}

// TestEvictVolatileRunsOut: a volatile policy with no key left to evict
// fails, leaving the persistent keys.
func TestEvictVolatileRunsOut(t *testing.T) {
	e := evictEnv(t, 100, func(i int) int64 {
		if i < 10 {
			return epoch + 1e6
		}
		return 0
	})
	lim := EvictLimits{MaxMemory: 1, Policy: VolatileLRU, Samples: 5, TimeLimit: -1}
	var res EvictResult
	e.ks.Exec(func() { res = e.ks.Evict(lim, nil) })
	assert.Equal(t, EvictFail, res)
	e.ks.Exec(func() {
		assert.Equal(t, 90, e.ks.DB(0).Len())
		assert.Equal(t, 90, e.ks.DB(1).Len())
	})
}

// TestEvictLRUKeepsHotKeys: keys read recently survive an LRU eviction of
// half the dataset; under LFU, keys read often do.
func TestEvictLRUKeepsHotKeys(t *testing.T) {
	for _, pol := range []Policy{AllKeysLRU, AllKeysLFU, VolatileLRU, VolatileLFU} {
		t.Run(pol.String(), func(t *testing.T) {
			e := evictEnv(t, 2000, func(int) int64 { return epoch + 1e9 })
			e.ks.SetLFU(pol.lfu(), 10, 1)
			e.clock.Advance(10 * time.Second)
			for r := 0; r < 20; r++ {
				for i := 0; i < 100; i++ {
					e.get(fmt.Sprintf("k%d", i))
				}
			}
			var used int64
			e.ks.Exec(func() { used = e.ks.UsedMemory() })
			lim := EvictLimits{MaxMemory: used / 2, Policy: pol, Samples: 5, TimeLimit: -1}
			e.ks.Exec(func() { require.Equal(t, EvictOK, e.ks.Evict(lim, nil)) })
			kept := 0
			e.ks.Exec(func() {
				for i := 0; i < 100; i++ {
					if e.ks.DB(0).Peek(fmt.Appendf(nil, "k%d", i)) != nil {
						kept++
					}
				}
			})
			assert.GreaterOrEqual(t, kept, 90)
		})
	}
}

// TestEvictTimeLimit: with tenacity 0 a call evicts 16 keys and reports
// that eviction is still running.
func TestEvictTimeLimit(t *testing.T) {
	e := evictEnv(t, 1000, func(int) int64 { return 0 })
	lim := EvictLimits{MaxMemory: 1, Policy: AllKeysRandom, Samples: 5, TimeLimit: EvictionTimeLimit(0)}
	var res EvictResult
	n := 0
	e.ks.Exec(func() { res = e.ks.Evict(lim, func(Evicted) { n++ }) })
	assert.Equal(t, EvictRunning, res)
	assert.Equal(t, 16, n)
	assert.False(t, e.ks.EvictStats().ExceededSince.IsZero())
	assert.Equal(t, 500*time.Microsecond, EvictionTimeLimit(10))
	assert.Equal(t, time.Duration(-1), EvictionTimeLimit(100))
}

func TestPoolInsertKeepsOrder(t *testing.T) {
	ks := New(1, NewManualClock(epoch))
	for i, s := range []uint64{5, 3, 9, 1, 7, 2, 8, 6, 4, 10, 11, 12, 13, 14, 15, 16, 17, 0, 18} {
		ks.poolInsert(0, fmt.Sprint(i), s)
	}
	var scores []uint64
	for _, p := range ks.evict.pool {
		require.True(t, p.set)
		scores = append(scores, p.score)
	}
	assert.IsIncreasing(t, scores)
	assert.Equal(t, uint64(18), scores[evpoolSize-1])
}
