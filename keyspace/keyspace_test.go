package keyspace

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const epoch = int64(1_700_000_000_000)

// listObj is a minimal collection for tests: a list of strings that
// changes in place.
type listObj struct{ items []string }

func (o *listObj) Type() Type    { return TypeList }
func (o *listObj) Len() int      { return len(o.items) }
func (o *listObj) Clone() Object { return &listObj{items: slices.Clone(o.items)} }

// env is a keyspace on a manual clock with a recording expiry sink.
type env struct {
	t       *testing.T
	clock   *ManualClock
	ks      *Keyspace
	expired []Expired
}

func newEnv(t *testing.T) *env {
	e := &env{t: t, clock: NewManualClock(epoch)}
	e.ks = New(4, e.clock)
	e.ks.AddExpiredSink(func(ev Expired) { e.expired = append(e.expired, ev) })
	return e
}

// do runs fn as one command on database 0: under the lock, at the
// clock's time.
func (e *env) do(fn func(db *DB)) {
	e.ks.Exec(func() {
		e.ks.BeginCommand(false)
		fn(e.ks.DB(0))
	})
}

func (e *env) set(key, val string, expireAt int64) {
	e.do(func(db *DB) { db.SetString([]byte(key), []byte(val), false, expireAt) })
}

func (e *env) get(key string) (string, bool) {
	var v string
	var ok bool
	e.do(func(db *DB) {
		if en := db.Lookup([]byte(key)); en != nil {
			v, ok = string(en.Str()), true
		}
	})
	return v, ok
}

func (e *env) expiredKeys() []string {
	var ks []string
	for _, ev := range e.expired {
		ks = append(ks, ev.Key)
	}
	return ks
}

func TestLazyExpiry(t *testing.T) {
	e := newEnv(t)
	e.set("a", "1", epoch+1000)
	e.set("b", "2", 0)

	v, ok := e.get("a")
	require.True(t, ok)
	require.Equal(t, "1", v)

	e.clock.Advance(999 * time.Millisecond)
	_, ok = e.get("a")
	require.True(t, ok, "still live 1 ms before its deadline")
	require.Empty(t, e.expired)

	e.clock.Advance(time.Millisecond)
	_, ok = e.get("a")
	require.False(t, ok, "gone at its deadline")
	require.Len(t, e.expired, 1)
	ev := e.expired[0]
	assert.Equal(t, 0, ev.DB)
	assert.Equal(t, "a", ev.Key)
	assert.Equal(t, "1", string(ev.Entry.Str()), "the sink sees the value")
	e.do(func(db *DB) {
		assert.Equal(t, 1, db.Len())
		assert.Equal(t, 0, db.Volatile())
	})
	assert.EqualValues(t, 1, e.ks.Stats().ExpiredKeys)
}

// Every read and write path applies lazy expiry, each exactly once.
func TestLazyExpiryOnEveryPath(t *testing.T) {
	paths := map[string]func(db *DB, k []byte) bool{
		"Lookup":        func(db *DB, k []byte) bool { return db.Lookup(k) != nil },
		"LookupNoTouch": func(db *DB, k []byte) bool { return db.LookupNoTouch(k) != nil },
		"LookupWrite":   func(db *DB, k []byte) bool { return db.LookupWrite(k) != nil },
		"Exists":        func(db *DB, k []byte) bool { return db.Exists(k) },
		"Deadline":      func(db *DB, k []byte) bool { _, ok := db.Deadline(k); return ok },
		"TypeOf":        func(db *DB, k []byte) bool { return db.TypeOf(k) != TypeNone },
		"Delete":        func(db *DB, k []byte) bool { return db.Delete(k) },
		"Take":          func(db *DB, k []byte) bool { return db.Take(k) != nil },
		"SetExpire":     func(db *DB, k []byte) bool { return db.SetExpire(k, epoch+99999) },
		"Persist":       func(db *DB, k []byte) bool { return db.Persist(k) },
	}
	for name, fn := range paths {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			e.set("k", "v", epoch+10)
			e.clock.Advance(10 * time.Millisecond)
			var found bool
			e.do(func(db *DB) { found = fn(db, []byte("k")) })
			assert.False(t, found)
			assert.Equal(t, []string{"k"}, e.expiredKeys())
			e.do(func(db *DB) { assert.Equal(t, 0, db.Len()) })
		})
	}
}

func TestReplicaKeepsExpiredKeys(t *testing.T) {
	e := newEnv(t)
	e.set("a", "1", epoch+10)
	e.ks.SetReplica(true)
	e.clock.Advance(time.Second)
	_, ok := e.get("a")
	assert.False(t, ok, "a replica reads an expired key as absent")
	e.ks.Exec(func() { assert.Equal(t, 0, e.ks.ExpireDue(100)) })
	e.do(func(db *DB) {
		assert.Equal(t, 1, db.Len(), "but keeps it for the master's DEL")
		k, ok := db.RandomKey()
		assert.True(t, ok, "RANDOMKEY gives up and returns an expired key")
		assert.Equal(t, "a", k)
	})
	assert.Empty(t, e.expired)

	e.ks.SetReplica(false)
	_, ok = e.get("a")
	assert.False(t, ok)
	assert.Equal(t, []string{"a"}, e.expiredKeys(), "promoted: expires it")
}

func TestActiveExpiryBoundedSlices(t *testing.T) {
	e := newEnv(t)
	for i := 0; i < 25; i++ {
		e.set(fmt.Sprintf("k%02d", i), "v", epoch+int64(100+i))
	}
	e.set("later", "v", epoch+10_000)
	e.ks.Exec(func() {
		assert.Equal(t, epoch+100, e.ks.NextDeadline())
		assert.Equal(t, 0, e.ks.ExpireDue(10), "nothing due yet")
	})
	e.clock.Advance(time.Second)
	var n []int
	e.ks.Exec(func() {
		for {
			got := e.ks.ExpireDue(10)
			n = append(n, got)
			if got < 10 {
				break
			}
		}
	})
	assert.Equal(t, []int{10, 10, 5}, n)
	require.Len(t, e.expired, 25)
	for i, ev := range e.expired {
		assert.Equal(t, fmt.Sprintf("k%02d", i), ev.Key, "deadline order")
	}
	e.ks.Exec(func() { assert.Equal(t, epoch+10_000, e.ks.NextDeadline()) })
}

func TestExpiryAcrossDatabases(t *testing.T) {
	e := newEnv(t)
	e.ks.Exec(func() {
		e.ks.BeginCommand(false)
		e.ks.DB(2).SetString([]byte("x"), []byte("2"), false, epoch+5)
		e.ks.DB(1).SetString([]byte("y"), []byte("1"), false, epoch+6)
	})
	e.clock.Advance(time.Second)
	e.ks.Exec(func() { assert.Equal(t, 2, e.ks.ExpireDue(100)) })
	require.Len(t, e.expired, 2)
	dbs := []int{e.expired[0].DB, e.expired[1].DB}
	slices.Sort(dbs)
	assert.Equal(t, []int{1, 2}, dbs)
}

func TestSetStringTTL(t *testing.T) {
	e := newEnv(t)
	k := []byte("k")
	e.do(func(db *DB) {
		db.SetString(k, []byte("v1"), false, epoch+1000)
		at, ok := db.Deadline(k)
		assert.True(t, ok)
		assert.Equal(t, epoch+1000, at)

		db.SetString(k, []byte("v2"), true, 0) // KEEPTTL
		at, _ = db.Deadline(k)
		assert.Equal(t, epoch+1000, at)
		assert.Equal(t, 1, db.Volatile())

		db.SetString(k, []byte("v3"), false, 0) // plain SET drops it
		at, _ = db.Deadline(k)
		assert.Zero(t, at)
		assert.Equal(t, 0, db.Volatile())

		db.SetString([]byte("new"), []byte("x"), true, 0) // KEEPTTL on a new key
		at, _ = db.Deadline([]byte("new"))
		assert.Zero(t, at)

		// Overwriting a collection with a string.
		db.Put([]byte("l"), NewObject(&listObj{items: []string{"a"}}, epoch+50))
		db.SetString([]byte("l"), []byte("s"), false, 0)
		assert.Equal(t, TypeString, db.TypeOf([]byte("l")))
		assert.Equal(t, 0, db.Volatile())
		assert.Equal(t, 3, db.Len())
	})
}

// The value given to SetString is copied: the caller's buffer is reused.
func TestSetStringCopies(t *testing.T) {
	e := newEnv(t)
	key, val := []byte("key"), []byte("value")
	e.do(func(db *DB) { db.SetString(key, val, false, epoch+100) })
	copy(key, "XXX")
	copy(val, "YYYYY")
	v, ok := e.get("key")
	require.True(t, ok)
	assert.Equal(t, "value", v)
	e.ks.Exec(func() {
		d, _ := e.ks.DB(0).expires.min()
		assert.Equal(t, "key", d.key)
	})
}

func TestSetExpirePersist(t *testing.T) {
	e := newEnv(t)
	e.set("k", "v", 0)
	e.do(func(db *DB) {
		k := []byte("k")
		assert.False(t, db.Persist(k), "no deadline to remove")
		assert.True(t, db.SetExpire(k, epoch+500))
		assert.True(t, db.SetExpire(k, epoch+700))
		assert.Equal(t, 1, db.Volatile())
		assert.Equal(t, epoch+700, db.NextDeadline())
		assert.True(t, db.Persist(k))
		assert.Equal(t, 0, db.Volatile())
		assert.False(t, db.SetExpire([]byte("missing"), epoch))
		assert.False(t, db.Persist([]byte("missing")))
	})
}

func TestDeleteIsNotExpiry(t *testing.T) {
	e := newEnv(t)
	e.set("k", "v", epoch+100)
	e.do(func(db *DB) {
		assert.True(t, db.Delete([]byte("k")))
		assert.False(t, db.Delete([]byte("k")))
		assert.Equal(t, 0, db.Volatile())
	})
	e.clock.Advance(time.Second)
	e.ks.Exec(func() { e.ks.ExpireDue(100) })
	assert.Empty(t, e.expired)
}

func TestTakePutKeepsDeadline(t *testing.T) {
	e := newEnv(t)
	e.set("a", "v", epoch+100)
	e.do(func(db *DB) {
		en := db.Take([]byte("a"))
		require.NotNil(t, en)
		db.Put([]byte("b"), en)
		at, ok := db.Deadline([]byte("b"))
		assert.True(t, ok)
		assert.Equal(t, epoch+100, at)
		assert.Equal(t, 1, db.Len())
		assert.Equal(t, 1, db.Volatile())
		assert.Nil(t, db.Take([]byte("a")))
	})
	e.clock.Advance(time.Second)
	e.ks.Exec(func() { e.ks.ExpireDue(100) })
	assert.Equal(t, []string{"b"}, e.expiredKeys())
}

// Put over a key already past its deadline expires the old value (its
// event carries the old value) instead of overwriting it silently.
func TestPutOverExpiredKey(t *testing.T) {
	e := newEnv(t)
	e.set("k", "old", epoch+10)
	e.clock.Advance(time.Second)
	e.do(func(db *DB) { db.Put([]byte("k"), NewString([]byte("new"), 0)) })
	require.Len(t, e.expired, 1)
	assert.Equal(t, "old", string(e.expired[0].Entry.Str()))
	v, _ := e.get("k")
	assert.Equal(t, "new", v)
	e.do(func(db *DB) { assert.Equal(t, 1, db.Len()) })
}

func TestSwapDB(t *testing.T) {
	e := newEnv(t)
	e.ks.Exec(func() {
		e.ks.BeginCommand(false)
		e.ks.DB(0).SetString([]byte("a"), []byte("0"), false, epoch+100)
		e.ks.DB(1).SetString([]byte("b"), []byte("1"), false, 0)
		e.ks.DB(1).SetString([]byte("c"), []byte("1"), false, 0)
		e.ks.SwapDB(0, 1)
		assert.Equal(t, 2, e.ks.DB(0).Len())
		assert.Equal(t, 1, e.ks.DB(1).Len())
		assert.Nil(t, e.ks.DB(0).Lookup([]byte("a")))
		assert.NotNil(t, e.ks.DB(1).Lookup([]byte("a")))
		assert.Equal(t, 0, e.ks.DB(0).Volatile())
		assert.Equal(t, 1, e.ks.DB(1).Volatile(), "the expiry index moves with the data")
		assert.Equal(t, 0, e.ks.DB(0).ID(), "the numbers stay")
		e.ks.SwapDB(2, 2)
	})
	e.clock.Advance(time.Second)
	e.ks.Exec(func() { assert.Equal(t, 1, e.ks.ExpireDue(100)) })
	require.Len(t, e.expired, 1)
	assert.Equal(t, 1, e.expired[0].DB, "expired in the database it now lives in")
}

func TestFlush(t *testing.T) {
	e := newEnv(t)
	e.ks.Exec(func() {
		e.ks.BeginCommand(false)
		for i := 0; i < 4; i++ {
			e.ks.DB(i).SetString([]byte("k"), []byte("v"), false, epoch+100)
		}
		e.ks.DB(0).Flush()
		assert.Equal(t, 0, e.ks.DB(0).Len())
		assert.Equal(t, 0, e.ks.DB(0).Volatile())
		assert.Equal(t, 1, e.ks.DB(1).Len())
		e.ks.FlushAll()
		for i := 0; i < 4; i++ {
			assert.Equal(t, 0, e.ks.DB(i).Len())
		}
		assert.Zero(t, e.ks.NextDeadline())
	})
	e.clock.Advance(time.Second)
	e.ks.Exec(func() { assert.Equal(t, 0, e.ks.ExpireDue(100)) })
	assert.Empty(t, e.expired, "flushing is not expiring")
}

func TestRandomKey(t *testing.T) {
	e := newEnv(t)
	e.do(func(db *DB) {
		_, ok := db.RandomKey()
		assert.False(t, ok)
	})
	for i := 0; i < 50; i++ {
		e.set(fmt.Sprintf("k%d", i), "v", 0)
	}
	seen := map[string]bool{}
	e.do(func(db *DB) {
		for i := 0; i < 2000; i++ {
			k, ok := db.RandomKey()
			require.True(t, ok)
			seen[k] = true
		}
	})
	assert.Greater(t, len(seen), 40, "draws spread over the keys")
}

// On a master, RANDOMKEY expires the expired keys it draws and finds the
// live one however many expired keys surround it.
func TestRandomKeySkipsExpired(t *testing.T) {
	e := newEnv(t)
	for i := 0; i < 300; i++ {
		e.set(fmt.Sprintf("x%d", i), "v", epoch+1)
	}
	e.set("live", "v", 0)
	e.clock.Advance(time.Second)
	e.do(func(db *DB) {
		k, ok := db.RandomKey()
		assert.True(t, ok)
		assert.Equal(t, "live", k)
	})
	e.do(func(db *DB) { db.Delete([]byte("live")) })
	e.do(func(db *DB) {
		_, ok := db.RandomKey()
		assert.False(t, ok)
		assert.Equal(t, 0, db.Len())
	})
}

func TestStats(t *testing.T) {
	e := newEnv(t)
	e.set("k", "v", 0)
	e.do(func(db *DB) {
		db.Lookup([]byte("k"))
		db.LookupNoTouch([]byte("k"))
		db.Lookup([]byte("nope"))
		db.LookupWrite([]byte("k")) // writes count nothing
		db.Exists([]byte("nope"))
	})
	st := e.ks.Stats()
	assert.EqualValues(t, 2, st.KeyspaceHits)
	assert.EqualValues(t, 1, st.KeyspaceMiss)
}

func TestIdleTime(t *testing.T) {
	e := newEnv(t)
	e.set("k", "v", 0)
	e.clock.Advance(10 * time.Second)
	var en *Entry
	e.do(func(db *DB) { en = db.LookupNoTouch([]byte("k")) })
	assert.EqualValues(t, 10, en.IdleSeconds(e.clock.NowMs()), "LookupNoTouch leaves it")

	e.ks.Exec(func() {
		e.ks.BeginCommand(true) // a no-touch command
		e.ks.DB(0).Lookup([]byte("k"))
	})
	assert.EqualValues(t, 10, en.IdleSeconds(e.clock.NowMs()))

	e.do(func(db *DB) { db.Lookup([]byte("k")) })
	assert.EqualValues(t, 0, en.IdleSeconds(e.clock.NowMs()))
	assert.EqualValues(t, 0, en.IdleSeconds(e.clock.NowMs()-5000), "a clock going back gives 0")
}

func TestLFU(t *testing.T) {
	e := newEnv(t)
	e.ks.SetLFU(true, 10, 1)
	e.set("k", "v", 0)
	var en *Entry
	e.do(func(db *DB) { en = db.LookupNoTouch([]byte("k")) })
	e.ks.Exec(func() { assert.EqualValues(t, 5, e.ks.Freq(en), "LFU_INIT_VAL") })
	e.do(func(db *DB) { db.Lookup([]byte("k")) })
	e.ks.Exec(func() { assert.EqualValues(t, 6, e.ks.Freq(en), "the first hit always counts") })
	for i := 0; i < 1000; i++ {
		e.do(func(db *DB) { db.Lookup([]byte("k")) })
	}
	var f int64
	e.ks.Exec(func() { f = e.ks.Freq(en) })
	assert.Greater(t, f, int64(6))
	assert.Less(t, f, int64(60), "logarithmic")
	e.clock.Advance(3 * time.Minute)
	e.ks.Exec(func() {
		e.ks.BeginCommand(true)
		assert.Equal(t, f-3, e.ks.Freq(en), "one step of decay per minute")
	})
}

func TestStringEncoding(t *testing.T) {
	cases := []struct {
		val, enc string
		ref      int64
	}{
		{"0", "int", SharedRefcount},
		{"9999", "int", SharedRefcount},
		{"10000", "int", 1},
		{"-1", "int", 1},
		{"-0", "embstr", 1},
		{"+1", "embstr", 1},
		{"01", "embstr", 1},
		{" 1", "embstr", 1},
		{"9223372036854775807", "int", 1},
		{"-9223372036854775808", "int", 1},
		{"9223372036854775808", "embstr", 1},
		{"", "embstr", 1},
		{"abc", "embstr", 1},
		{string(make([]byte, 44)), "embstr", 1},
		{string(make([]byte, 45)), "raw", 1},
	}
	for _, c := range cases {
		en := NewString([]byte(c.val), 0)
		assert.Equal(t, c.enc, en.Encoding(), "%q", c.val)
		assert.Equal(t, c.ref, en.Refcount(true), "%q", c.val)
		assert.EqualValues(t, 1, en.Refcount(false), "%q", c.val)
	}
	en := NewString([]byte("12"), 0)
	en.MarkRaw()
	assert.Equal(t, "raw", en.Encoding())
	assert.EqualValues(t, 1, en.Refcount(true))
	en.SetStr([]byte("12"))
	assert.Equal(t, "int", en.Encoding(), "SetStr re-derives")
	en.MarkNoInt()
	assert.Equal(t, "embstr", en.Encoding())

	cp := NewString([]byte("5"), 0).Copy()
	assert.Equal(t, "int", cp.Encoding())
	assert.EqualValues(t, 1, cp.Refcount(true), "a copied integer is not shared")

	assert.Equal(t, "quicklist", NewObject(&listObj{}, 0).Encoding())
}

func TestScanFullIteration(t *testing.T) {
	for _, n := range []int{0, 1, 9, 10, 11, 1000, 5000} {
		for _, count := range []int{1, 10, 97, 100000} {
			e := newEnv(t)
			want := map[string]bool{}
			for i := 0; i < n; i++ {
				k := fmt.Sprintf("key:%d", i)
				want[k] = true
				e.set(k, "v", 0)
			}
			got := map[string]int{}
			var cursor uint64
			calls := 0
			for {
				e.do(func(db *DB) {
					cursor = db.Scan(cursor, count, func(k string, _ *Entry) { got[k]++ })
				})
				calls++
				if cursor == 0 {
					break
				}
				require.Less(t, calls, n+1030, "the scan terminates")
			}
			require.Len(t, got, n, "n=%d count=%d", n, count)
			for k, c := range got {
				require.True(t, want[k])
				require.Equal(t, 1, c, "without writes every key comes once")
			}
			if count >= n {
				assert.Equal(t, 1, calls, "n=%d count=%d: one call when COUNT covers the keys", n, count)
			}
		}
	}
}

// A key present for the whole scan is returned at least once whatever
// happens between the calls.
func TestScanGuaranteeUnderWrites(t *testing.T) {
	e := newEnv(t)
	stable := map[string]bool{}
	for i := 0; i < 3000; i++ {
		k := fmt.Sprintf("stable:%d", i)
		stable[k] = true
		e.set(k, "v", 0)
	}
	got := map[string]bool{}
	var cursor uint64
	step := 0
	for {
		e.do(func(db *DB) {
			cursor = db.Scan(cursor, 20, func(k string, _ *Entry) { got[k] = true })
			// Churn: add and delete other keys, overwrite stable ones.
			for j := 0; j < 30; j++ {
				k := []byte(fmt.Sprintf("churn:%d:%d", step, j))
				db.SetString(k, []byte("x"), false, 0)
				if j%2 == 0 {
					db.Delete([]byte(fmt.Sprintf("churn:%d:%d", step-1, j)))
				}
			}
			db.SetString([]byte(fmt.Sprintf("stable:%d", step%3000)), []byte("w"), false, 0)
		})
		step++
		if cursor == 0 {
			break
		}
	}
	for k := range stable {
		require.True(t, got[k], "missed %s", k)
	}
}

func TestScanArbitraryCursorAndExpired(t *testing.T) {
	e := newEnv(t)
	for i := 0; i < 100; i++ {
		e.set(fmt.Sprintf("k%d", i), "v", epoch+10)
	}
	e.set("live", "v", 0)
	e.clock.Advance(time.Second)
	var keys []string
	var cursor uint64
	for {
		e.do(func(db *DB) {
			cursor = db.Scan(cursor, 1000, func(k string, _ *Entry) { keys = append(keys, k) })
		})
		if cursor == 0 {
			break
		}
	}
	assert.Equal(t, []string{"live"}, keys)
	assert.Len(t, e.expired, 100, "expired keys met are expired")

	e.do(func(db *DB) {
		for _, c := range []uint64{1, 1 << 63, ^uint64(0), 12345678901234567} {
			db.Scan(c, 10, func(string, *Entry) {}) // any value is a position
		}
	})
}

func TestSelectPos(t *testing.T) {
	for n := 1; n < 60; n++ {
		items := make([]scanItem, n)
		for i := range items {
			items[i].pos = uint64((i * 7919) % 13) // many duplicates
		}
		sorted := make([]uint64, n)
		for i, it := range items {
			sorted[i] = it.pos
		}
		slices.Sort(sorted)
		for k := 0; k < n; k++ {
			cp := slices.Clone(items)
			require.Equal(t, sorted[k], selectPos(cp, k), "n=%d k=%d", n, k)
		}
	}
}

// In a small database every key is about equally likely, wherever its
// shard lies among the empty ones.
func TestRandomKeyUniformSmall(t *testing.T) {
	e := newEnv(t)
	keys := []string{"a", "b", "c"}
	for _, k := range keys {
		e.set(k, "v", 0)
	}
	counts := map[string]int{}
	e.do(func(db *DB) {
		for i := 0; i < 3000; i++ {
			k, _ := db.RandomKey()
			counts[k]++
		}
	})
	for _, k := range keys {
		assert.Greater(t, counts[k], 600, "%s drawn %d times of 3000", k, counts[k])
	}
}

// A key met past its deadline before the engine reached it is expired
// after the keys of its database due earlier, so that expiry events stay
// in deadline order; keys due at the same time or later are left to the
// engine, and INFO's sampling (ScanShard) expires nothing.
func TestLazyExpiryKeepsDeadlineOrder(t *testing.T) {
	e := newEnv(t)
	e.set("first", "1", epoch+10)
	e.set("second", "2", epoch+20)
	e.set("third", "3", epoch+30)
	e.set("twin", "3", epoch+30)
	e.set("later", "4", epoch+40)
	e.clock.Advance(35 * time.Millisecond)
	e.do(func(db *DB) {
		for i := 0; i < NumShards(); i++ {
			db.ScanShard(i, func(string, *Entry) {})
		}
	})
	require.Empty(t, e.expired, "ScanShard expires nothing")
	_, ok := e.get("third")
	require.False(t, ok)
	require.Equal(t, []string{"first", "second", "third"}, e.expiredKeys())
	e.do(func(db *DB) { assert.Equal(t, 2, db.Len(), "twin (same deadline) and later stay for the engine") })
}

// Reserve sizes an empty database's shards for a large announced load
// and leaves small or non-empty databases alone.
func TestReserve(t *testing.T) {
	e := newEnv(t)
	e.do(func(db *DB) {
		db.Reserve(10)
		assert.Nil(t, db.shards[0], "small announcements are ignored")
		db.Reserve(numShards * 100)
		assert.NotNil(t, db.shards[0])
		db.SetString([]byte("k"), []byte("v"), false, 0)
		assert.Equal(t, 1, db.Len())
	})
}

// Insert (loading) keeps the key string, counts the key once however
// often the file holds it, and indexes the deadline of the value kept.
func TestInsert(t *testing.T) {
	e := newEnv(t)
	e.ks.Exec(func() {
		e.ks.SetLoading(true)
		db := e.ks.DB(0)
		db.Insert("k", NewString([]byte("first"), epoch+1000))
		db.Insert("k", NewString([]byte("second"), epoch+2000))
		db.Insert("j", NewString([]byte("v"), 0))
		e.ks.SetLoading(false)
		assert.Equal(t, 2, db.Len())
		assert.Equal(t, 1, db.Volatile())
		at, ok := db.Deadline([]byte("k"))
		assert.True(t, ok)
		assert.Equal(t, epoch+2000, at)
	})
	v, _ := e.get("k")
	assert.Equal(t, "second", v)
}

// The latency monitor's expiry events: with a threshold, an expired key
// whose removal and sinks take that long is "expire-del" (lazy expiry
// too), and an ExpireDue pass that long is "expire-cycle"; below the
// threshold, or with none, nothing is reported.
func TestExpiryLatencyEvents(t *testing.T) {
	e := newEnv(t)
	slow := time.Duration(0)
	e.ks.AddExpiredSink(func(Expired) { time.Sleep(slow) })
	type sample struct {
		event string
		ms    int64
	}
	var got []sample
	e.ks.Exec(func() {
		e.ks.SetLatencyMonitor(5, func(event string, ms int64) { got = append(got, sample{event, ms}) })
	})
	e.set("fast", "v", epoch+10)
	e.clock.Advance(20 * time.Millisecond)
	e.ks.Exec(func() { require.Equal(t, 1, e.ks.ExpireDue(100)) })
	assert.Empty(t, got, "below the threshold")

	slow = 6 * time.Millisecond
	e.set("slow", "v", e.clock.NowMs()+10)
	e.clock.Advance(20 * time.Millisecond)
	e.ks.Exec(func() { require.Equal(t, 1, e.ks.ExpireDue(100)) })
	require.Len(t, got, 2)
	assert.Equal(t, "expire-del", got[0].event)
	assert.Equal(t, "expire-cycle", got[1].event, "the pass, after its key")
	for _, s := range got {
		assert.GreaterOrEqual(t, s.ms, int64(5), s.event)
	}

	got = nil
	e.set("lazy", "v", e.clock.NowMs()+10)
	e.clock.Advance(20 * time.Millisecond)
	_, ok := e.get("lazy")
	require.False(t, ok)
	require.Len(t, got, 1)
	assert.Equal(t, "expire-del", got[0].event, "a lazy expiry is timed too")

	got = nil
	e.ks.Exec(func() { e.ks.SetLatencyMonitor(0, func(string, int64) { t.Error("reported with no threshold") }) })
	e.set("off", "v", e.clock.NowMs()+10)
	e.clock.Advance(20 * time.Millisecond)
	e.ks.Exec(func() { require.Equal(t, 1, e.ks.ExpireDue(100)) })
}
