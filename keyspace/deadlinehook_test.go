package keyspace

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A deadline hook keeps a key (Keep: without a deadline), rewrites it
// (Rewritten: a new value due later) or lets the funnel remove it, on
// every path that meets a key past its deadline: a read, a write lookup,
// an overwrite and the active expiry.
func TestDeadlineHook(t *testing.T) {
	e := newEnv(t)
	decide := map[string]Deadline{"kept": Keep, "rewritten": Rewritten}
	var asked []string
	e.ks.SetDeadlineHook(func(db *DB, key string, en *Entry) Deadline {
		asked = append(asked, key)
		d := decide[key]
		if d == Rewritten {
			db.OverwriteString([]byte(key), []byte("again"), e.ks.Now()+1000)
		}
		return d
	})
	for _, k := range []string{"kept", "rewritten", "removed"} {
		e.set(k, "v", epoch+10)
	}
	e.clock.Advance(10 * time.Millisecond)

	v, ok := e.get("kept")
	require.True(t, ok, "a kept key stays live")
	assert.Equal(t, "v", v)
	v, ok = e.get("rewritten")
	require.True(t, ok)
	assert.Equal(t, "again", v)
	_, ok = e.get("removed")
	assert.False(t, ok)
	assert.Equal(t, []string{"removed"}, e.expiredKeys(), "only a removed key reaches the sinks")
	e.do(func(db *DB) {
		at, ok := db.Deadline([]byte("kept"))
		assert.True(t, ok)
		assert.Zero(t, at, "kept without a deadline")
		at, _ = db.Deadline([]byte("rewritten"))
		assert.Equal(t, epoch+10+1000, at)
		assert.Equal(t, 2, db.Len())
		assert.Equal(t, 1, db.Volatile())
	})

	// The rewritten key falls due again: the active expiry asks again.
	e.clock.Advance(time.Second)
	decide["rewritten"] = Remove
	e.ks.Exec(func() { e.ks.ExpireDue(100) })
	assert.Equal(t, []string{"removed", "rewritten"}, e.expiredKeys())

	// An overwrite of a key the hook keeps replaces the kept value.
	e.set("kept2", "old", e.clock.NowMs()+10)
	decide["kept2"] = Keep
	e.clock.Advance(10 * time.Millisecond)
	e.do(func(db *DB) {
		db.SetString([]byte("kept2"), []byte("new"), false, 0)
		assert.Equal(t, 2, db.Len())
		assert.Equal(t, "new", string(db.Lookup([]byte("kept2")).Str()))
		assert.Equal(t, 0, db.Volatile())
	})
	assert.Contains(t, asked, "kept2")
}
