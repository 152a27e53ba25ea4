package keyspace

import (
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// SetActiveExpiry(false) stops ExpireDue (DEBUG SET-ACTIVE-EXPIRE 0): a
// key past its deadline stays, is still seen by EachEntry, and expires
// when a command meets it.
func TestActiveExpiryOff(t *testing.T) {
	e := newEnv(t)
	e.set("a", "v", epoch+100)
	e.set("b", "v", epoch+100)
	e.set("c", "v", 0)
	e.ks.Exec(func() { e.ks.SetActiveExpiry(false) })
	e.clock.Advance(time.Second)
	e.ks.Exec(func() { assert.Zero(t, e.ks.ExpireDue(10)) })
	var keys []string
	e.do(func(db *DB) {
		db.EachEntry(func(key string, _ *Entry) bool {
			keys = append(keys, key)
			return true
		})
	})
	sort.Strings(keys)
	assert.Equal(t, []string{"a", "b", "c"}, keys)
	_, ok := e.get("a")
	assert.False(t, ok)
	assert.Equal(t, []string{"a"}, e.expiredKeys())
	e.ks.Exec(func() {
		e.ks.SetActiveExpiry(true)
		assert.Equal(t, 1, e.ks.ExpireDue(10))
	})
	assert.Equal(t, []string{"a", "b"}, e.expiredKeys())
}

// A frozen snapshot of every database may be read by the lock's holder;
// a write after it leaves what it shows alone.
func TestFrozenSnapshot(t *testing.T) {
	e := newEnv(t)
	e.set("a", "1", 0)
	e.ks.Exec(func() { e.ks.DB(2).SetString([]byte("b"), []byte("2"), false, epoch+5) })
	e.ks.SetSnapshotExtra(func() any { return "extra" })
	e.ks.Exec(func() {
		s := e.ks.FrozenSnapshot()
		defer s.ReleaseLocked()
		assert.Equal(t, "extra", s.Extra)
		e.ks.DB(0).SetString([]byte("a"), []byte("changed"), false, 0)
		got := map[string]string{}
		for db := range e.ks.NumDBs() {
			s.ForEachAll(db, func(key string, en *Entry) bool {
				got[key] = string(en.Str())
				return true
			})
		}
		assert.Equal(t, map[string]string{"a": "1", "b": "2"}, got)
		keys, volatile := s.Counts(2)
		require.Equal(t, 1, keys)
		assert.Equal(t, 1, volatile)
	})
	v, _ := e.get("a")
	assert.Equal(t, "changed", v)
}
