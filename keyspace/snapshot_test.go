package keyspace

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// contents reads a snapshot of database db into a map: strings as their
// value, lists as their items joined.
func contents(s *Snapshot, db int) map[string]string {
	m := map[string]string{}
	s.ForEach(db, func(k string, e *Entry) bool {
		m[k] = render(e)
		return true
	})
	return m
}

func render(e *Entry) string {
	if e.Type() == TypeString {
		return string(e.Str())
	}
	return fmt.Sprint(e.Obj().(*listObj).items)
}

// live reads database db as commands see it (under the lock).
func live(ks *Keyspace, db int) map[string]string {
	m := map[string]string{}
	ks.Exec(func() {
		d := ks.DB(db)
		for i := 0; i < numShards; i++ {
			d.ScanShard(i, func(k string, e *Entry) { m[k] = render(e) })
		}
	})
	return m
}

func TestSnapshotIsolation(t *testing.T) {
	e := newEnv(t)
	e.do(func(db *DB) {
		for i := 0; i < 200; i++ {
			db.SetString([]byte(fmt.Sprintf("s%d", i)), []byte("old"), false, 0)
		}
		db.Put([]byte("list"), NewObject(&listObj{items: []string{"a"}}, 0))
		db.SetString([]byte("ttl"), []byte("old"), false, epoch+100_000)
	})
	before := live(e.ks, 0)
	var snap *Snapshot
	e.ks.Exec(func() { snap = e.ks.Snapshot() })

	e.do(func(db *DB) {
		db.SetString([]byte("s0"), []byte("new"), false, 0)                // overwrite in place?
		db.SetString([]byte("s1"), []byte("longer new value"), true, 0)    // reuse path
		db.Delete([]byte("s2"))                                            // delete
		db.SetString([]byte("added"), []byte("x"), false, 0)               // add
		db.Put([]byte("s3"), NewObject(&listObj{items: []string{"z"}}, 0)) // type change
		l := db.LookupWrite([]byte("list"))
		l.Obj().(*listObj).items = append(l.Obj().(*listObj).items, "b") // in place
		l.Obj().(*listObj).items[0] = "A"
		db.SetExpire([]byte("ttl"), epoch+5)                   // metadata
		db.Put([]byte("s5"), db.Take([]byte("s4")))            // rename
		s6 := db.LookupWrite([]byte("s6"))                     // string in place
		s6.SetStr(append(s6.Str()[:0], "NEW"...))              //
		db.Persist([]byte("s7"))                               // no-op
		e.ks.DB(1).Put([]byte("moved"), db.Take([]byte("s8"))) // move
	})
	e.clock.Advance(time.Second)
	e.ks.Exec(func() {
		e.ks.ExpireDue(100) // "ttl" expires
		e.ks.DB(0).Flush()  // and everything goes
		e.ks.FlushAll()     //
		e.ks.SwapDB(0, 1)   //
		e.ks.DB(0).SetString([]byte("s9"), []byte("after"), false, 0)
	})

	got := contents(snap, 0)
	assert.Equal(t, before, got, "the snapshot still reads the keyspace of its instant")
	assert.Empty(t, contents(snap, 1))
	snap.Release()
}

// Keys past their deadline at the snapshot's instant are not in it.
func TestSnapshotLeavesOutExpired(t *testing.T) {
	e := newEnv(t)
	e.set("gone", "v", epoch+10)
	e.set("here", "v", epoch+10_000)
	e.clock.Advance(time.Second)
	var snap *Snapshot
	e.ks.Exec(func() {
		e.ks.BeginCommand(false)
		snap = e.ks.Snapshot()
	})
	assert.Equal(t, map[string]string{"here": "v"}, contents(snap, 0))
	assert.Equal(t, e.clock.NowMs(), snap.NowMs())
	snap.Release()
}

func TestSnapshotDBPinsOneDatabase(t *testing.T) {
	e := newEnv(t)
	e.ks.Exec(func() {
		e.ks.BeginCommand(false)
		e.ks.DB(0).SetString([]byte("a"), []byte("0"), false, 0)
		e.ks.DB(2).SetString([]byte("b"), []byte("2"), false, 0)
	})
	var snap *Snapshot
	e.ks.Exec(func() { snap = e.ks.SnapshotDB(2) })
	e.ks.Exec(func() { e.ks.DB(2).SetString([]byte("b"), []byte("new"), false, 0) })
	assert.Equal(t, map[string]string{"b": "2"}, contents(snap, 2))
	assert.Empty(t, contents(snap, 0))
	e.ks.Exec(func() {
		for _, tb := range e.ks.DB(0).shards {
			if tb != nil {
				assert.Zero(t, tb.pins)
			}
		}
	})
	snap.Release()
}

// An entry shared with a live snapshot is copied before its first
// change, once; afterwards, and without snapshots, changes are in place.
func TestCopyOnWriteOfSharedEntries(t *testing.T) {
	e := newEnv(t)
	e.do(func(db *DB) { db.Put([]byte("l"), NewObject(&listObj{items: []string{"a"}}, 0)) })
	var orig *Entry
	e.do(func(db *DB) {
		orig = db.LookupWrite([]byte("l"))
		assert.Same(t, orig, db.LookupWrite([]byte("l")), "no snapshot: in place")
	})

	var snap *Snapshot
	e.ks.Exec(func() { snap = e.ks.Snapshot() })
	e.do(func(db *DB) {
		assert.Same(t, orig, db.Lookup([]byte("l")), "reads do not copy")
		c1 := db.LookupWrite([]byte("l"))
		assert.NotSame(t, orig, c1, "first write under a snapshot copies")
		assert.NotSame(t, orig.Obj(), c1.Obj(), "deeply")
		assert.Same(t, c1, db.LookupWrite([]byte("l")), "once")
	})

	// A deadline change copies the entry, not the value (one longer than
	// an entry holds: a short one comes along in the copy's inl), and
	// the value stays marked shared.
	e.set("s", strings.Repeat("v", maxTail+1), 0)
	var s0 *Entry
	e.do(func(db *DB) { s0 = db.LookupNoTouch([]byte("s")) })
	snap.Release()
	e.ks.Exec(func() { snap = e.ks.Snapshot() })
	e.do(func(db *DB) {
		require.True(t, db.SetExpire([]byte("s"), epoch+1000))
		s1 := db.LookupNoTouch([]byte("s"))
		assert.NotSame(t, s0, s1)
		assert.Zero(t, s0.ExpireAt(), "the snapshot's entry keeps its deadline")
		assert.Same(t, &s0.Str()[0], &s1.Str()[0], "the value is not copied")
		s2 := db.LookupWrite([]byte("s"))
		assert.NotSame(t, &s0.Str()[0], &s2.Str()[0], "until it is written")
	})
	snap.Release()

	e.do(func(db *DB) {
		a := db.LookupWrite([]byte("s"))
		assert.Same(t, a, db.LookupWrite([]byte("s")), "released: in place again")
	})
}

// A taken entry keeps being treated as shared after its move.
func TestTakeUnderSnapshot(t *testing.T) {
	e := newEnv(t)
	e.do(func(db *DB) { db.Put([]byte("l"), NewObject(&listObj{items: []string{"a"}}, 0)) })
	var snap *Snapshot
	e.ks.Exec(func() { snap = e.ks.Snapshot() })
	e.do(func(db *DB) {
		db.Put([]byte("m"), db.Take([]byte("l")))
		en := db.LookupWrite([]byte("m"))
		en.Obj().(*listObj).items[0] = "changed"
	})
	assert.Equal(t, map[string]string{"l": "[a]"}, contents(snap, 0))
	snap.Release()
}

func TestNestedSnapshots(t *testing.T) {
	e := newEnv(t)
	e.set("k", "1", 0)
	var s1, s2 *Snapshot
	e.ks.Exec(func() { s1 = e.ks.Snapshot() })
	e.set("k", "2", 0)
	e.ks.Exec(func() { s2 = e.ks.Snapshot() })
	e.set("k", "3", 0)
	s2.Release()
	e.set("k", "4", 0)
	assert.Equal(t, "1", contents(s1, 0)["k"])
	s1.Release()
	e.ks.Exec(func() {
		assert.Zero(t, e.ks.liveMax)
		assert.Empty(t, e.ks.live)
	})
	v, _ := e.get("k")
	assert.Equal(t, "4", v)
}

// A write under a streaming snapshot changes its shard in place and
// records one entry in the snapshot's undo log: a save costs about the
// data written meanwhile, not a copy of each shard written to.
func TestStreamingSnapshotRecordsOnlyWhatChanges(t *testing.T) {
	e := newEnv(t)
	e.do(func(db *DB) {
		for i := 0; i < 10*numShards; i++ {
			db.SetString([]byte(fmt.Sprint("k", i)), []byte("old"), false, 0)
		}
	})
	var snap *Snapshot
	var before [numShards]*table
	e.ks.Exec(func() {
		snap = e.ks.Snapshot()
		before = e.ks.DB(0).shards
	})
	e.do(func(db *DB) {
		db.SetString([]byte("k1"), []byte("new"), false, 0)
		db.SetString([]byte("k1"), []byte("newer"), false, 0)
		db.Delete([]byte("k2"))
		db.SetString([]byte("fresh"), []byte("x"), false, 0)
	})
	logged := 0
	e.ks.Exec(func() {
		assert.Equal(t, before, e.ks.DB(0).shards, "no shard was copied")
		for _, l := range snap.logs[0] {
			logged += len(l.pre)
		}
	})
	assert.Equal(t, 3, logged, "k1 once, k2, fresh")
	got := contents(snap, 0)
	assert.Len(t, got, 10*numShards)
	assert.Equal(t, "old", got["k1"])
	assert.Equal(t, "old", got["k2"])
	assert.NotContains(t, got, "fresh")
	snap.Release()
	e.ks.Exec(func() {
		for _, tb := range e.ks.DB(0).shards {
			if tb != nil {
				assert.Empty(t, tb.logs, "released: no log left")
			}
		}
	})
}

// Readers iterate snapshots without the lock while writers change every
// kind of thing under it; run with -race. Each snapshot must read exactly
// what the keyspace held at its instant.
func TestSnapshotConcurrentWrites(t *testing.T) {
	e := newEnv(t)
	const keys = 2000
	e.do(func(db *DB) {
		for i := 0; i < keys; i++ {
			k := []byte(fmt.Sprintf("k%d", i))
			if i%3 == 0 {
				db.Put(k, NewObject(&listObj{items: []string{"0"}}, 0))
			} else {
				db.SetString(k, []byte("0"), false, 0)
			}
		}
	})

	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < 3; w++ {
		wg.Add(1)
		go func(seed uint64) {
			defer wg.Done()
			r := rand.New(rand.NewPCG(seed, 1))
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				e.ks.Exec(func() {
					e.ks.BeginCommand(false)
					db := e.ks.DB(0)
					for j := 0; j < 20; j++ {
						k := []byte(fmt.Sprintf("k%d", r.IntN(keys)))
						v := fmt.Sprint(n)
						switch r.IntN(8) {
						case 0:
							db.SetString(k, []byte(v), false, 0)
						case 1:
							db.Delete(k)
						case 2:
							if en := db.LookupWrite(k); en != nil && en.Type() == TypeList {
								o := en.Obj().(*listObj)
								o.items[0] = v
								o.items = append(o.items, v)
							}
						case 3:
							if en := db.LookupWrite(k); en != nil && en.Type() == TypeString {
								en.SetStr(append(en.Str()[:0], v...))
							}
						case 4:
							db.SetExpire(k, epoch+int64(r.IntN(1_000_000)))
						case 5:
							db.Persist(k)
						case 6:
							if en := db.Take(k); en != nil {
								db.Put([]byte(fmt.Sprintf("k%d", r.IntN(keys))), en)
							}
						case 7:
							db.Lookup(k)
						}
					}
				})
			}
		}(uint64(w))
	}

	take := func(frozen bool) (snap *Snapshot, want map[string]string) {
		e.ks.Exec(func() {
			if frozen {
				snap = e.ks.SnapshotDB(0)
			} else {
				snap = e.ks.Snapshot()
			}
			want = map[string]string{}
			d := e.ks.DB(0)
			for _, t := range d.shards {
				if t == nil {
					continue
				}
				t.all(func(en *Entry) bool {
					want[en.Key()] = render(en)
					return true
				})
			}
		})
		return snap, want
	}
	for round := 0; round < 20; round++ {
		// A streaming snapshot, and a frozen one taken while it is
		// read: the two kinds share tables and entries.
		snap, want := take(false)
		time.Sleep(200 * time.Microsecond)
		frozen, wantFrozen := take(true)
		// Read twice, slowly enough for writers to interleave.
		got := contents(snap, 0)
		time.Sleep(time.Millisecond)
		again := contents(snap, 0)
		gotFrozen := contents(frozen, 0)
		snap.Release()
		frozen.Release()
		require.Equal(t, want, got, "round %d", round)
		require.Equal(t, want, again, "round %d", round)
		require.Equal(t, wantFrozen, gotFrozen, "round %d (frozen)", round)
	}
	close(stop)
	wg.Wait()
}

// Taking a snapshot costs O(databases x shards), not O(keys).
func BenchmarkSnapshot(b *testing.B) {
	ks := New(16, NewManualClock(epoch))
	ks.Exec(func() {
		for i := 0; i < 100_000; i++ {
			ks.DB(0).SetString([]byte(fmt.Sprintf("k%d", i)), []byte("v"), false, 0)
		}
	})
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ks.Exec(func() { ks.Snapshot().ReleaseLocked() })
	}
}

func BenchmarkLookup(b *testing.B) {
	ks := New(16, NewManualClock(epoch))
	keys := make([][]byte, 100_000)
	ks.Exec(func() {
		for i := range keys {
			keys[i] = []byte(fmt.Sprintf("k%d", i))
			ks.DB(0).SetString(keys[i], []byte("v"), false, 0)
		}
	})
	db := ks.DB(0)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		db.Lookup(keys[i%len(keys)])
	}
}

func BenchmarkSetString(b *testing.B) {
	ks := New(16, NewManualClock(epoch))
	keys := make([][]byte, 100_000)
	for i := range keys {
		keys[i] = []byte(fmt.Sprintf("k%d", i))
	}
	db := ks.DB(0)
	val := []byte("value")
	b.ResetTimer()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		db.SetString(keys[i%len(keys)], val, false, 0)
	}
}

// A short string lives in its entry (Entry.inl). Overwrites, INCR's
// SetInt and APPEND-style growth keep the value right through the moves
// between the entry and an array of its own, and a snapshot keeps seeing
// the value it was taken with when the live entry is rewritten in place.
func TestInlineStrings(t *testing.T) {
	e := newEnv(t)
	long := strings.Repeat("x", maxTail+1)
	var snap *Snapshot
	e.do(func(db *DB) {
		db.SetString([]byte("k"), []byte("short"), false, 0)
		en := db.Lookup([]byte("k"))
		assert.True(t, en.inline())
		assert.Equal(t, en.size(), en.cost())
		db.SetString([]byte("k"), []byte(long), false, 0)
		en = db.Lookup([]byte("k"))
		assert.False(t, en.inline())
		assert.Equal(t, long, string(en.Str()))
		db.SetString([]byte("k"), []byte("7"), false, 0)
		en = db.LookupWrite([]byte("k"))
		assert.Equal(t, "7", string(en.Str()))
		en.SetInt(-9223372036854775808) // 20 bytes: its own array
		assert.False(t, en.inline())
		assert.Equal(t, "-9223372036854775808", string(en.Str()))
		en.SetInt(42)
		assert.Equal(t, "42", string(en.Str()))
		en.SetStr(append(en.Str(), long...)) // grows out of the entry
		assert.Equal(t, "42"+long, string(en.Str()))
		db.SetString([]byte("s"), []byte("before"), false, 0)
	})
	e.ks.Exec(func() { snap = e.ks.SnapshotDB(0) })
	e.do(func(db *DB) {
		db.SetString([]byte("s"), []byte("after!"), false, 0)
		en := db.LookupWrite([]byte("s"))
		assert.True(t, en.inline(), "the private copy holds its value itself")
		en.SetInt(12345)
	})
	assert.Equal(t, "before", contents(snap, 0)["s"])
	snap.Release()
	e.do(func(db *DB) {
		assert.Equal(t, "12345", string(db.Lookup([]byte("s")).Str()))
		c := db.Lookup([]byte("s")).Copy()
		assert.True(t, c.inline())
		assert.Equal(t, "12345", string(c.Str()))
	})
}

// A metadata change of an entry a snapshot shares (EXPIRE during a
// BGSAVE) copies the entry shallowly: a short value must come along
// into the copy's own inl, not stay in the snapshot's entry.
func TestShallowCopyOwnsInlineValue(t *testing.T) {
	e := newEnv(t)
	var old *Entry
	e.do(func(db *DB) {
		db.SetString([]byte("k"), []byte("abc"), false, 0)
		old = db.Peek([]byte("k"))
	})
	var snap *Snapshot
	e.ks.Exec(func() { snap = e.ks.Snapshot() })
	e.do(func(db *DB) { db.SetExpire([]byte("k"), epoch+100000) })
	snap.Release()
	e.do(func(db *DB) {
		en := db.Peek([]byte("k"))
		assert.NotSame(t, old, en)
		assert.True(t, en.inline())
		assert.Equal(t, en.size(), en.cost())
		db.SetString([]byte("k"), []byte("XYZ"), true, 0)
		assert.Equal(t, "abc", string(old.Str()), "the snapshot's entry is left alone")
		assert.Equal(t, "XYZ", string(db.Peek([]byte("k")).Str()))
	})
}
