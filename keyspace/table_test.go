package keyspace

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The shard table against a map, through inserts, replacements and
// deletions that leave tombstones, growths and same-size rehashes.
func TestTableModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var tb table
	model := map[string]*Entry{}
	keys := make([]string, 5000)
	for i := range keys {
		keys[i] = fmt.Sprintf("k%d", i)
	}
	check := func() {
		require.Equal(t, len(model), tb.len())
		seen := 0
		tb.all(func(e *Entry) bool {
			seen++
			assert.Same(t, model[e.Key()], e)
			return true
		})
		require.Equal(t, len(model), seen)
		for n := range tb.len() {
			k, e := tb.nth(n)
			assert.Same(t, model[k], e)
		}
	}
	for round := range 40000 {
		k := keys[rng.IntN(len(keys))]
		h := keyHash(k)
		switch rng.IntN(3) {
		case 0, 1:
			e, _ := newEntry(k, 1, true)
			old := tb.put(e, h)
			assert.Same(t, model[k], old)
			model[k] = e
		case 2:
			assert.Same(t, model[k], tb.del(k, h))
			delete(model, k)
		}
		assert.Same(t, model[k], tb.get(k, h))
		if round%5000 == 0 {
			check()
		}
	}
	check()
	for k, e := range model {
		assert.Same(t, e, tb.get(k, keyHash(k)))
		assert.Same(t, e, tb.del(k, keyHash(k)))
	}
	assert.Equal(t, 0, tb.len())
	assert.Nil(t, tb.get("k1", keyHash("k1")))
	// The tombstones left are cleared by the next growth check, not
	// accumulated: the table stays its size.
	groups := len(tb.groups)
	for i := range 100000 {
		k := keys[i%len(keys)]
		e, _ := newEntry(k, 0, true)
		tb.insertNew(e, keyHash(k))
		tb.del(k, keyHash(k))
	}
	assert.Equal(t, groups, len(tb.groups))
}

// A compact entry (a string without a deadline) gives way to an
// extended copy when it gets a deadline, is changed through LookupWrite
// or is stored while a snapshot is live, and the counted memory and the
// deadline index follow every step.
func TestCompactEntries(t *testing.T) {
	e := newEnv(t)
	check := func(what string) {
		t.Helper()
		e.ks.Exec(func() {
			assert.Equal(t, recount(e.ks), e.ks.DatasetMemory(), what)
			checkIndex(t, e.ks.DB(0))
		})
	}
	compact := func(key string) bool {
		var c bool
		e.do(func(db *DB) { c = db.Peek([]byte(key)).compact() })
		return c
	}
	e.set("a", "v1", 0)
	e.set("b", "v2", 0)
	e.set("c", "12", 0)
	e.set("d", "v4", epoch+60_000)
	assert.True(t, compact("a"))
	assert.False(t, compact("d"), "a deadline needs the extension")
	check("set")

	e.set("a", "v1-overwritten", 0) // in place: it fits
	assert.True(t, compact("a"))
	e.set("a", strings.Repeat("x", 300), 0)
	assert.False(t, compact("a"), "a value outside the tail")
	e.set("a", "short again", 0)
	assert.True(t, compact("a"), "compact again")
	check("overwrite")

	e.do(func(db *DB) { require.True(t, db.SetExpire([]byte("b"), epoch+30_000)) })
	assert.False(t, compact("b"))
	e.do(func(db *DB) {
		at, ok := db.Deadline([]byte("b"))
		require.True(t, ok)
		assert.Equal(t, epoch+30_000, at)
	})
	check("expire")
	e.do(func(db *DB) { require.True(t, db.Persist([]byte("b"))) })
	check("persist")

	e.do(func(db *DB) { db.LookupWrite([]byte("c")).SetInt(13) })
	e.ks.EndCommand(true)
	assert.False(t, compact("c"), "changed in place")
	v, _ := e.get("c")
	assert.Equal(t, "13", v)
	check("incr")

	e.set("k1", "one", 0)
	e.set("k2", "two", 0)
	var s *Snapshot
	e.ks.Exec(func() { s = e.ks.Snapshot() })
	e.set("k1", "uno", 0)
	assert.False(t, compact("k1"), "made while a snapshot is live")
	e.do(func(db *DB) { db.Put([]byte("k3"), NewString([]byte("three"), 0)) })
	assert.False(t, compact("k3"), "stored while a snapshot is live")
	e.do(func(db *DB) { require.True(t, db.SetExpire([]byte("k2"), epoch+5000)) })
	e.ks.EndCommand(true)
	s.Release()
	check("copy on write")
	e.set("k1", "eins", 0)
	assert.True(t, compact("k1"), "compact again once no snapshot is live")
	e.set("k2", "zwei", 0)
	assert.True(t, compact("k2"), "SET drops the deadline")
	e.set("k4", "vier", epoch+5000)
	e.do(func(db *DB) { db.SetString([]byte("k4"), []byte("quatre"), true, 0) })
	assert.False(t, compact("k4"), "KEEPTTL keeps the deadline")
	check("compact again")

	e.set("r", "to rename", 0)
	e.do(func(db *DB) {
		db.Put([]byte("renamed"), db.Take([]byte("r")))
		db.Put([]byte("fresh"), NewString([]byte("new"), 0))
	})
	assert.True(t, compact("renamed"))
	assert.True(t, compact("fresh"))
	check("rename, put")
	e.clock.Advance(2 * time.Hour)
	e.ks.Exec(func() { e.ks.ExpireDue(1000) })
	check("expired")
	_, ok := e.get("k4")
	assert.False(t, ok)
}

// Keys and values live in the entry's tail when they fit, a hash's
// packed fields too; every copy of an entry keeps its own.
func TestEntryTail(t *testing.T) {
	e := newEnv(t)
	long := string(make([]byte, maxTail+10))
	e.do(func(db *DB) {
		db.SetString([]byte("short"), []byte("value"), false, 0)
		en := db.Peek([]byte("short"))
		assert.Equal(t, "short", en.Key())
		assert.True(t, en.inline())
		assert.True(t, en.compact())
		assert.Equal(t, int64(48), en.size(), "24 + size byte + length byte + 5 + 5, rounded to the size class")

		// The benchmark's shape: a 10-byte key and a 10-byte value in
		// 48 bytes; with a deadline, 64.
		db.SetString([]byte("key:123456"), []byte("v000123456"), false, 0)
		assert.Equal(t, int64(48), db.Peek([]byte("key:123456")).size())
		db.SetString([]byte("key:123457"), []byte("v000123457"), false, epoch+60_000)
		assert.Equal(t, int64(64), db.Peek([]byte("key:123457")).size())

		// A key too long for a small entry makes a big one, its value
		// in an array of its own.
		db.SetString([]byte(long), []byte("v"), false, 0)
		en = db.Peek([]byte(long))
		assert.Equal(t, byte(bigTail), *en.tailByte())
		assert.False(t, en.inline())
		assert.Equal(t, long, en.Key())
		assert.Equal(t, "v", string(en.Str()))

		// Keys around the uvarint's one-byte limit and the small
		// entries' limit.
		for _, n := range []int{0, 1, 127, 128, maxTail - 3, maxTail - 2, maxTail - 1, maxTail, 5000, 70000} {
			k := strings.Repeat("k", n)
			for _, v := range []string{"", "x", strings.Repeat("v", 100)} {
				for _, ext := range []bool{false, true} {
					en, inTail := newEntry(k, len(v), ext)
					if !ext && !inTail {
						continue // a compact entry holds its value inline
					}
					en.typ = TypeString
					en.setStrCopy([]byte(v))
					if ext {
						en.setExpireAt(12345)
						en.setGen(7)
					}
					assert.Equal(t, k, en.Key(), "key of %d bytes", n)
					assert.Equal(t, v, string(en.Str()), "key of %d bytes", n)
					assert.Equal(t, keyRoomFor(n), en.keyRoom(), "key of %d bytes", n)
					assert.Equal(t, !ext, en.compact(), "key of %d bytes", n)
					assert.LessOrEqual(t, int(headerSize)+en.tailSize(), int(en.size()))
					extRoom := 0
					if ext {
						extRoom = extSize
					}
					assert.LessOrEqual(t, int(en.roomAt())+len(en.room()), en.tailSize()-extRoom, "the room ends before the extension")
					c := en.clone(false)
					assert.Equal(t, k, c.Key())
					assert.Equal(t, v, string(c.Str()))
					assert.False(t, c.compact(), "a clone is extended")
					if ext {
						assert.Equal(t, int64(12345), c.ExpireAt())
						assert.Equal(t, uint32(7), c.gen())
					} else {
						assert.Equal(t, int64(0), c.ExpireAt())
						assert.Equal(t, uint32(compactGen), c.gen())
					}
				}
			}
		}

		h := NewHash()
		lim := HashLimits{MaxEntries: 128, MaxValue: 64}
		h.Set([]byte("f1"), []byte("v1"), lim)
		h.Set([]byte("f2"), []byte("v2"), lim)
		hen := db.PutObject([]byte("h"), h)
		assert.True(t, hen.valueInTail())
		got, ok := hen.Obj().(*Hash).Get([]byte("f2"))
		assert.True(t, ok)
		assert.Equal(t, "v2", string(got))

		// RENAME: the copy under the new key has the fields in its own
		// tail; the old entry is untouched.
		moved := db.Put([]byte("h2"), db.Take([]byte("h")))
		assert.NotSame(t, hen, moved)
		assert.True(t, moved.valueInTail())
		got, _ = moved.Obj().(*Hash).Get([]byte("f1"))
		assert.Equal(t, "v1", string(got))

		// Outgrowing the tail moves the fields to an array of their own.
		w := db.LookupWrite([]byte("h2"))
		for i := range 40 {
			w.Obj().(*Hash).Set(fmt.Appendf(nil, "field%d", i), []byte("0123456789"), lim)
		}
		assert.False(t, w.valueInTail())
		assert.Equal(t, 42, w.Obj().Len())
		c := w.clone(false)
		assert.Equal(t, 42, c.Obj().Len())
		c.Obj().(*Hash).Set([]byte("f1"), []byte("changed"), lim)
		got, _ = w.Obj().(*Hash).Get([]byte("f1"))
		assert.Equal(t, "v1", string(got), "a clone's change stays in the clone")
	})
}

// A streaming snapshot reads collections (Obj) while the keyspace
// deletes and replaces their entries under the lock: what the snapshot
// reads of an entry is never what the keyspace writes (run with -race).
func TestSnapshotReadsObjWhileDeleting(t *testing.T) {
	e := newEnv(t)
	const n = 5000
	e.do(func(db *DB) {
		for i := range n {
			l := NewList()
			l.PushCopy(false, [][]byte{[]byte("x")})
			db.PutObject(fmt.Appendf(nil, "l%d", i), l)
			h := NewHash()
			h.Set([]byte("f"), []byte("v"), HashLimits{MaxEntries: 128, MaxValue: 64})
			db.PutObject(fmt.Appendf(nil, "h%d", i), h)
		}
	})
	var snap *Snapshot
	e.ks.Exec(func() { snap = e.ks.Snapshot() })
	done := make(chan int)
	go func() {
		elems := 0
		snap.ForEach(0, func(_ string, en *Entry) bool {
			elems += en.Obj().Len()
			return true
		})
		done <- elems
	}()
	for i := range n {
		e.do(func(db *DB) {
			db.Delete(fmt.Appendf(nil, "l%d", i))
			db.Put(fmt.Appendf(nil, "h2-%d", i), db.Take(fmt.Appendf(nil, "h%d", i)))
		})
	}
	assert.Equal(t, 2*n, <-done)
	snap.Release()
}

// checkIndex asserts that the deadline index holds exactly the table's
// entries with a deadline, each at its deadline.
func checkIndex(t *testing.T, db *DB) {
	t.Helper()
	n := 0
	for _, tb := range db.shards {
		if tb == nil {
			continue
		}
		tb.all(func(e *Entry) bool {
			if e.ExpireAt() != 0 {
				n++
				require.True(t, db.expires.del(e.ExpireAt(), e), "key %q not indexed as itself at %d", e.Key(), e.ExpireAt())
				db.expires.add(e.ExpireAt(), e)
			}
			return true
		})
	}
	require.Equal(t, n, db.expires.len())
}

// Every way an entry is replaced in its table (overwrites that do and do
// not reuse it, copies for a live snapshot, RENAME, expiry) keeps the
// deadline index pointing at the table's entry.
func TestDeadlineIndexFollowsEntries(t *testing.T) {
	e := newEnv(t)
	rng := rand.New(rand.NewPCG(3, 4))
	key := func() []byte { return fmt.Appendf(nil, "key%d", rng.IntN(200)) }
	var snap *Snapshot
	for step := range 20000 {
		if step%500 == 0 {
			e.ks.Exec(func() {
				if snap != nil {
					snap.Release()
					snap = nil
				} else {
					snap = e.ks.Snapshot()
				}
			})
		}
		e.do(func(db *DB) {
			now := db.ks.now
			switch rng.IntN(8) {
			case 0:
				db.SetString(key(), []byte("v"), false, now+int64(rng.IntN(3000)))
			case 1:
				db.SetString(key(), make([]byte, rng.IntN(300)), rng.IntN(2) == 0, 0)
			case 2:
				db.SetExpire(key(), now+int64(rng.IntN(3000)))
			case 3:
				db.Persist(key())
			case 4:
				if en := db.LookupWrite(key()); en != nil && en.Type() == TypeString {
					en.SetInt(int64(rng.IntN(1000)))
				}
			case 5:
				if en := db.Take(key()); en != nil {
					db.Put(key(), en)
				}
			case 6:
				db.Delete(key())
			case 7:
				db.ExpireDue(10)
			}
			if step%1000 == 0 {
				checkIndex(t, db)
			}
		})
		e.clock.Advance(time.Millisecond)
	}
	if snap != nil {
		snap.Release()
	}
	e.do(func(db *DB) { checkIndex(t, db) })
}
