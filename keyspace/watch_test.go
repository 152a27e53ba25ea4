package keyspace

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestWatchSignals checks, for each path that changes a key, whether a
// Watch on key "k" of database 0 breaks.
func TestWatchSignals(t *testing.T) {
	k := []byte("k")
	tests := []struct {
		name   string
		setup  func(ks *Keyspace, db *DB)
		change func(ks *Keyspace, db *DB)
		broken bool
	}{
		{"set string", nil, func(_ *Keyspace, db *DB) { db.SetString(k, []byte("v"), false, 0) }, true},
		{"overwrite string", withK("v"), func(_ *Keyspace, db *DB) { db.SetString(k, []byte("w"), true, 0) }, true},
		{"put", nil, func(_ *Keyspace, db *DB) { db.Put(k, NewString([]byte("v"), 0)) }, true},
		{"delete", withK("v"), func(_ *Keyspace, db *DB) { db.Delete(k) }, true},
		{"delete missing", nil, func(_ *Keyspace, db *DB) { db.Delete(k) }, false},
		{"take", withK("v"), func(_ *Keyspace, db *DB) { db.Take(k) }, true},
		{"set expire", withK("v"), func(_ *Keyspace, db *DB) { db.SetExpire(k, epoch+1000) }, true},
		{"persist without deadline", withK("v"), func(_ *Keyspace, db *DB) { db.Persist(k) }, false},
		{"lookup write, changed", withK("v"), func(ks *Keyspace, db *DB) {
			db.LookupWrite(k).SetStr([]byte("w"))
			ks.EndCommand(true)
		}, true},
		{"lookup write, unchanged", withK("v"), func(ks *Keyspace, db *DB) {
			db.LookupWrite(k)
			ks.EndCommand(false)
		}, false},
		{"read", withK("v"), func(_ *Keyspace, db *DB) { db.Lookup(k) }, false},
		{"other key", nil, func(_ *Keyspace, db *DB) { db.SetString([]byte("j"), []byte("v"), false, 0) }, false},
		{"other database", nil, func(ks *Keyspace, _ *DB) { ks.DB(1).SetString(k, []byte("v"), false, 0) }, false},
		{"flush with the key", withK("v"), func(_ *Keyspace, db *DB) { db.Flush() }, true},
		{"flush without it", nil, func(_ *Keyspace, db *DB) { db.Flush() }, false},
		{"flush all", withK("v"), func(ks *Keyspace, _ *DB) { ks.FlushAll() }, true},
		{"swap bringing it", func(ks *Keyspace, _ *DB) {
			ks.DB(1).SetString(k, []byte("v"), false, 0)
		}, func(ks *Keyspace, _ *DB) { ks.SwapDB(0, 1) }, true},
		{"swap of others", withK("v"), func(ks *Keyspace, _ *DB) { ks.SwapDB(1, 2) }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			w := e.ks.NewWatch()
			e.do(func(db *DB) {
				if tt.setup != nil {
					tt.setup(e.ks, db)
				}
				w.Add(db, k)
			})
			e.do(func(db *DB) { tt.change(e.ks, db) })
			e.do(func(*DB) { require.Equal(t, tt.broken, w.Broken()) })
			e.do(func(*DB) { w.Clear() })
			require.Zero(t, e.ks.WatchedKeys())
		})
	}
}

// withK is a setup step storing v under "k".
func withK(v string) func(*Keyspace, *DB) {
	return func(_ *Keyspace, db *DB) { db.SetString([]byte("k"), []byte(v), false, 0) }
}

// TestWatchExpiry covers Redis 7.0's expired-at-WATCH rule.
func TestWatchExpiry(t *testing.T) {
	k := []byte("k")
	e := newEnv(t)
	live, stale := e.ks.NewWatch(), e.ks.NewWatch()
	e.set("k", "v", epoch+100)
	e.do(func(db *DB) { live.Add(db, k) })
	e.clock.Advance(200 * time.Millisecond)
	e.do(func(db *DB) {
		stale.Add(db, k)
		require.True(t, live.Broken(), "expired after WATCH, not removed yet")
		require.False(t, stale.Broken(), "expired at WATCH")
	})
	e.do(func(db *DB) { require.Nil(t, db.Lookup(k)) }) // removes it
	e.do(func(*DB) {
		require.True(t, live.Broken())
		require.False(t, stale.Broken(), "removal of a key expired at WATCH is no change")
	})
	e.set("k", "w", 0)
	e.do(func(*DB) { require.True(t, stale.Broken(), "written after") })
	e.do(func(*DB) {
		live.Clear()
		stale.Clear()
	})
	require.Zero(t, e.ks.WatchedKeys())
}

// TestWatchRegistry checks that keys are watched once per Watch and
// that Clear leaves nothing behind.
func TestWatchRegistry(t *testing.T) {
	e := newEnv(t)
	w1, w2 := e.ks.NewWatch(), e.ks.NewWatch()
	e.do(func(db *DB) {
		w1.Add(db, []byte("a"))
		w1.Add(db, []byte("a"))
		w1.Add(e.ks.DB(1), []byte("a"))
		w2.Add(db, []byte("a"))
	})
	require.Equal(t, 3, w1.Len()+w2.Len())
	require.Equal(t, 3, e.ks.WatchedKeys())
	e.set("a", "1", 0)
	e.do(func(*DB) {
		require.True(t, w1.Dirty())
		require.True(t, w2.Dirty())
		w1.Add(e.ks.DB(0), []byte("b")) // dirty: not added
		require.Equal(t, 2, w1.Len())
		w1.Clear()
		require.False(t, w1.Dirty())
		require.Equal(t, 1, e.ks.WatchedKeys())
		w2.Clear()
	})
	require.Zero(t, e.ks.WatchedKeys())
}

// BenchmarkSetUnwatched measures SetString when nothing is watched: the
// signal is one length check.
func BenchmarkSetUnwatched(b *testing.B) {
	ks := New(1, NewManualClock(epoch))
	db := ks.DB(0)
	key, val := []byte("key"), []byte("value")
	ks.Lock()
	defer ks.Unlock()
	b.ReportAllocs()
	for b.Loop() {
		db.SetString(key, val, false, 0)
	}
}
