package keyspace

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zredis/zredis/keyslot"
)

// checkSlotIndex compares db's slot index with a recount of keyslot over
// every key of its tables: the same keys in each slot, held by the very
// entries the tables hold (an index keeping a replaced entry would keep
// its value alive and name a key the live keyspace changed), no empty
// slot table kept. A database without the index is walked for each slot
// it has keys in. Under the lock.
func checkSlotIndex(t *testing.T, db *DB) {
	t.Helper()
	want := make(map[int]map[string]*Entry)
	db.EachEntry(func(key string, e *Entry) bool {
		s := keyslot.OfString(key)
		if want[s] == nil {
			want[s] = make(map[string]*Entry)
		}
		want[s][key] = e
		return true
	})
	slots := []int{0}
	for s := range want {
		slots = append(slots, s)
	}
	if db.slots != nil {
		slots = slots[:0]
		for s := range keyslot.Slots {
			slots = append(slots, s)
		}
	}
	total := 0
	for _, s := range slots {
		n := db.CountKeysInSlot(s)
		if n != len(want[s]) {
			t.Fatalf("slot %d counts %d keys, holds %d", s, n, len(want[s]))
		}
		total += n
		seen := 0
		db.EachKeyInSlot(s, func(key string, e *Entry) bool {
			if want[s][key] != e {
				t.Fatalf("slot %d: %q indexed with another entry than the table's", s, key)
			}
			seen++
			return true
		})
		if seen != n {
			t.Fatalf("slot %d: walked %d keys, counts %d", s, seen, n)
		}
		if db.slots != nil && db.slots.slots[s].len() == 0 && db.slots.slots[s].groups != nil {
			t.Fatalf("slot %d keeps an empty table", s)
		}
	}
	if db.slots != nil {
		require.Equal(t, db.Len(), total)
	}
}

// slotEnv is env with database 0 indexed by slot and, in each of the
// slots of "{a}" and "{b}", three keys, "{a}1" with a deadline.
func slotEnv(t *testing.T) *env {
	e := newEnv(t)
	e.ks.Exec(e.ks.EnableSlotIndex)
	for _, k := range []string{"{a}1", "{a}2", "{a}3", "{b}1", "{b}2", "{b}3"} {
		at := int64(0)
		if k == "{a}1" {
			at = epoch + 1000
		}
		e.set(k, "v", at)
	}
	return e
}

var slotA, slotB = keyslot.OfString("a"), keyslot.OfString("b")

func TestSlotIndexPaths(t *testing.T) {
	for _, c := range []struct {
		name string
		run  func(e *env)
		a, b int // the keys of the slots of {a} and {b} after
	}{
		{"set new", func(e *env) { e.set("{a}4", "v", 0); e.set("{b}4", "v", 0) }, 4, 4},
		{"overwrite in place and with a new entry", func(e *env) {
			e.set("{a}2", "w", 0)
			e.set("{a}3", string(make([]byte, 300)), 0)
			e.do(func(db *DB) { db.SetStringOwned([]byte("{b}1"), make([]byte, 5000), false, 0) })
		}, 3, 3},
		{"overwrite with another type", func(e *env) {
			e.do(func(db *DB) { db.PutObject([]byte("{a}2"), &listObj{items: []string{"x"}}) })
			e.hset("{b}4", "f", "v")
		}, 3, 4},
		{"del and unlink", func(e *env) {
			e.do(func(db *DB) {
				db.Delete([]byte("{a}2"))
				db.DeleteAs([]byte("{b}2"), FreeUserDel)
				db.Delete([]byte("{b}9")) // absent
			})
		}, 2, 2},
		{"lazy expiry", func(e *env) {
			e.clock.Advance(2 * time.Second)
			_, ok := e.get("{a}1")
			require.False(e.t, ok)
		}, 2, 3},
		{"active expiry", func(e *env) {
			e.clock.Advance(2 * time.Second)
			e.ks.Exec(func() { e.ks.ExpireDue(100) })
		}, 2, 3},
		{"expiry overwritten by set", func(e *env) {
			e.clock.Advance(2 * time.Second)
			e.set("{a}1", "new", 0)
		}, 3, 3},
		{"deadline hook keeps and rewrites", func(e *env) {
			e.ks.SetDeadlineHook(func(db *DB, key string, en *Entry) Deadline {
				if key == "{a}1" {
					return Keep
				}
				return Remove
			})
			e.set("{b}1", "v", epoch+1500)
			e.clock.Advance(2 * time.Second)
			e.ks.Exec(func() { e.ks.ExpireDue(100) })
		}, 3, 2},
		{"last hash field expires", func(e *env) {
			e.hset("{b}h", "f", "v")
			e.fieldTTL("{b}h", "f", epoch+10)
			e.clock.Advance(time.Second)
			e.ks.Exec(func() { e.ks.ExpireDue(100) })
		}, 2, 3},
		{"eviction", func(e *env) {
			e.ks.Exec(func() {
				e.ks.Evict(EvictLimits{MaxMemory: 1, Policy: AllKeysRandom, Samples: 5, TimeLimit: -1}, nil)
			})
		}, 0, 0},
		{"rename and renamenx", func(e *env) {
			e.do(func(db *DB) {
				db.Put([]byte("{b}9"), db.Take([]byte("{a}2")))
				db.Put([]byte("{b}1"), db.Take([]byte("{a}3"))) // onto a key
				if !db.Exists([]byte("{a}9")) {
					db.Put([]byte("{a}9"), db.Take([]byte("{b}2")))
				}
			})
		}, 2, 3},
		{"move out and in", func(e *env) {
			e.do(func(db *DB) {
				e.ks.DB(1).Put([]byte("{a}2"), db.Take([]byte("{a}2")))
				e.ks.DB(1).SetString([]byte("{b}7"), []byte("v"), false, 0)
				db.Put([]byte("{b}7"), e.ks.DB(1).Take([]byte("{b}7")))
				require.False(e.t, e.ks.DB(1).SlotIndexed())
				require.Equal(e.t, 1, e.ks.DB(1).CountKeysInSlot(slotA), "walked, without an index")
			})
		}, 2, 4},
		{"copy", func(e *env) {
			e.do(func(db *DB) {
				db.Put([]byte("{b}5"), db.Lookup([]byte("{a}2")).Copy())
				e.ks.DB(2).Put([]byte("{a}5"), db.Lookup([]byte("{a}2")).Copy())
			})
		}, 3, 4},
		{"swapdb", func(e *env) {
			e.ks.Exec(func() {
				e.ks.DB(1).SetString([]byte("{a}x"), []byte("v"), false, 0)
				e.ks.SwapDB(0, 1)
				require.True(e.t, e.ks.DB(0).SlotIndexed())
				require.False(e.t, e.ks.DB(1).SlotIndexed())
			})
		}, 1, 0},
		{"flushdb", func(e *env) { e.ks.Exec(func() { e.ks.DB(0).Flush() }) }, 0, 0},
		{"flushall, then writes", func(e *env) {
			e.ks.Exec(e.ks.FlushAll)
			e.set("{a}1", "v", 0)
		}, 1, 0},
		{"loading", func(e *env) {
			e.ks.Exec(func() {
				e.ks.SetLoading(true)
				db := e.ks.DB(0)
				db.Insert("{a}7", NewStringFor("{a}7", []byte("v"), 0))
				db.Insert("{a}7", NewStringFor("{a}7", []byte("w"), 0)) // twice in the file
				db.Insert("{b}1", NewStringFor("{b}1", []byte("w"), epoch-5))
				e.ks.SetLoading(false)
			})
		}, 4, 3},
		{"restore", func(e *env) {
			e.do(func(db *DB) {
				db.Put([]byte("{a}2"), NewString([]byte("restored"), 0)) // REPLACE
				db.Put([]byte("{b}8"), NewObject(&listObj{items: []string{"x"}}, epoch+50))
			})
		}, 3, 4},
		{"delete keys in slot", func(e *env) {
			e.ks.Exec(func() { require.Equal(e.t, 3, e.ks.DB(0).DeleteKeysInSlot(slotA, nil)) })
		}, 0, 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := slotEnv(t)
			c.run(e)
			e.ks.Exec(func() {
				db := e.ks.DB(0)
				checkSlotIndex(t, db)
				require.Equal(t, c.a, db.CountKeysInSlot(slotA))
				require.Equal(t, c.b, db.CountKeysInSlot(slotB))
				for i := 1; i < e.ks.NumDBs(); i++ {
					checkSlotIndex(t, e.ks.DB(i)) // walked: the recount against itself
				}
			})
		})
	}
}

// Writes while snapshots read the database copy entries and tables: the
// index follows the live keyspace, not what the snapshots see.
func TestSlotIndexUnderSnapshots(t *testing.T) {
	for _, frozen := range []bool{false, true} {
		t.Run(fmt.Sprint("frozen=", frozen), func(t *testing.T) {
			e := slotEnv(t)
			e.do(func(db *DB) { db.PutObject([]byte("{a}l"), &listObj{items: []string{"x"}}) })
			var snap *Snapshot
			e.ks.Exec(func() {
				if frozen {
					snap = e.ks.FrozenSnapshot()
				} else {
					snap = e.ks.Snapshot()
				}
			})
			e.do(func(db *DB) {
				l := db.LookupWrite([]byte("{a}l")) // a private copy
				l.Obj().(*listObj).items = append(l.Obj().(*listObj).items, "y")
				db.SetExpire([]byte("{a}2"), epoch+9000) // a shallow copy
				db.SetString([]byte("{a}3"), []byte("w"), false, 0)
				db.Delete([]byte("{b}1"))
				db.SetString([]byte("{b}9"), []byte("v"), false, 0)
			})
			e.ks.Exec(func() { checkSlotIndex(t, e.ks.DB(0)) })
			n := 0
			snap.ForEach(0, func(string, *Entry) bool { n++; return true })
			require.Equal(t, 7, n, "the snapshot's view")
			snap.Release()
			e.ks.Exec(func() {
				checkSlotIndex(t, e.ks.DB(0))
				require.Equal(t, 4, e.ks.DB(0).CountKeysInSlot(slotA))
			})
		})
	}
}

func TestKeysInSlot(t *testing.T) {
	e := newEnv(t)
	e.ks.Exec(func() {
		db := e.ks.DB(0)
		for i := range 100 {
			db.SetString(fmt.Appendf(nil, "{t}%d", i), []byte("v"), false, 0)
			db.SetString(fmt.Appendf(nil, "k%d", i), []byte("v"), false, 0)
		}
		e.ks.EnableSlotIndex() // after the keys: it indexes them
		checkSlotIndex(t, db)
		s := keyslot.OfString("t")
		require.Equal(t, 100, db.CountKeysInSlot(s))
		require.Len(t, db.KeysInSlot(s, 10), 10)
		require.Empty(t, db.KeysInSlot(s, 0))
		all := db.KeysInSlot(s, 1000)
		require.Len(t, all, 100)
		slices.Sort(all)
		require.Equal(t, all, slices.Compact(slices.Clone(all)))
		for _, k := range all {
			require.Equal(t, s, keyslot.OfString(k))
		}
		// Resharding's loop: take a batch, remove it (MIGRATE), again.
		for batches := 0; db.CountKeysInSlot(s) > 0; batches++ {
			require.Less(t, batches, 10)
			for _, k := range db.KeysInSlot(s, 10) {
				require.True(t, db.Delete([]byte(k)))
			}
			checkSlotIndex(t, db)
			if tb := &db.slots.slots[s]; len(tb.groups) > 1 {
				require.GreaterOrEqual(t, tb.len()*4, len(tb.groups)*groupSlots, "a quarter full at least: a walk passes few empty places")
			}
		}
		require.Nil(t, db.slots.slots[s].groups, "an emptied slot frees its table")
	})
}

// Reserve (an RDB's RESIZEDB) sizes the slot tables too, and the load
// fills them.
func TestSlotIndexReserve(t *testing.T) {
	e := newEnv(t)
	e.ks.Exec(func() {
		e.ks.EnableSlotIndex()
		e.ks.SetLoading(true)
		db := e.ks.DB(0)
		const n = keyslot.Slots * 10
		db.Reserve(n)
		require.NotNil(t, db.slots.slots[0].groups)
		for i := range n {
			k := fmt.Sprintf("key:%d", i)
			db.Insert(k, NewStringFor(k, []byte("v"), 0))
		}
		e.ks.SetLoading(false)
		checkSlotIndex(t, db)
	})
}

// A random mix of every kind of change, checked against the recount.
func TestSlotIndexRandomized(t *testing.T) {
	e := newEnv(t)
	rng := rand.New(rand.NewPCG(7, 11))
	e.ks.SetDeadlineHook(func(db *DB, key string, en *Entry) Deadline {
		if rng.IntN(8) == 0 {
			return Keep
		}
		return Remove
	})
	e.ks.Exec(e.ks.EnableSlotIndex)
	key := func() []byte {
		if rng.IntN(3) == 0 {
			return fmt.Appendf(nil, "k%d", rng.IntN(60))
		}
		return fmt.Appendf(nil, "{t%d}%d", rng.IntN(6), rng.IntN(20))
	}
	var snaps []*Snapshot
	checked := 0 // keys the checks met
	steps := 20000
	if testing.Short() {
		steps = 3000
	}
	for step := range steps {
		e.clock.Advance(time.Duration(rng.IntN(3)) * time.Millisecond)
		e.do(func(db *DB) {
			other := e.ks.DB(1 + rng.IntN(2))
			switch r := rng.IntN(100); {
			case r < 30:
				at := int64(0)
				if rng.IntN(3) == 0 {
					at = e.ks.Now() + int64(rng.IntN(50))
				}
				db.SetString(key(), make([]byte, rng.IntN(80)), rng.IntN(4) == 0, at)
			case r < 36:
				db.PutObject(key(), &listObj{items: []string{"x"}})
			case r < 40:
				k := key()
				if en := db.LookupWrite(k); en != nil && en.typ == TypeString {
					en.SetStr([]byte("changed"))
				}
			case r < 44:
				db.SetExpire(key(), e.ks.Now()+int64(rng.IntN(30)))
			case r < 56:
				db.Delete(key())
			case r < 62:
				if en := db.Take(key()); en != nil {
					db.Put(key(), en) // RENAME
				}
			case r < 66:
				if en := db.Take(key()); en != nil {
					other.Put(key(), en) // MOVE out
				}
			case r < 70:
				if en := other.Take(key()); en != nil {
					db.Put(key(), en) // MOVE in
				}
			case r < 74:
				if en := db.Lookup(key()); en != nil {
					db.Put(key(), en.Copy())
				}
			case r < 80:
				db.Lookup(key()) // lazy expiry
			case r < 85:
				e.ks.ExpireDue(rng.IntN(10))
			case r < 88:
				if len(snaps) < 3 {
					if rng.IntN(2) == 0 {
						snaps = append(snaps, e.ks.Snapshot())
					} else {
						snaps = append(snaps, e.ks.FrozenSnapshot())
					}
				}
			case r < 92:
				if len(snaps) > 0 {
					snaps[0].ReleaseLocked()
					snaps = snaps[1:]
				}
			case r < 94 && rng.IntN(4) == 0:
				e.ks.Evict(EvictLimits{MaxMemory: e.ks.UsedMemory() * 9 / 10, Policy: AllKeysLRU, Samples: 5, TimeLimit: -1}, nil)
			case r < 95 && rng.IntN(4) == 0:
				db.DeleteKeysInSlot(keyslot.Of(key()), nil)
			case r < 96 && rng.IntN(10) == 0:
				e.ks.SwapDB(0, other.ID())
			case r < 97 && rng.IntN(20) == 0:
				if rng.IntN(2) == 0 {
					db.Flush()
				} else {
					e.ks.FlushAll()
				}
			case r >= 97:
				e.ks.SetLoading(true)
				k := string(key())
				db.Insert(k, NewStringFor(k, []byte("loaded"), 0))
				e.ks.SetLoading(false)
			}
			e.ks.EndCommand(true)
			if step%97 == 0 {
				checkSlotIndex(t, db)
				checked += db.Len()
			}
		})
	}
	e.ks.Exec(func() {
		for _, s := range snaps {
			s.ReleaseLocked()
		}
		checkSlotIndex(t, e.ks.DB(0))
		t.Logf("%d keys checked, %d at the end", checked, e.ks.DB(0).Len())
		require.Greater(t, checked, steps/97*30, "the mix keeps keys")
	})
}
