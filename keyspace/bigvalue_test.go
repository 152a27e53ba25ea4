package keyspace

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// SetStringOwned stores the caller's bytes themselves.
func TestSetStringOwned(t *testing.T) {
	e := newEnv(t)
	val := bytes.Repeat([]byte("v"), 100)
	e.do(func(db *DB) { db.SetString([]byte("k"), []byte("old"), false, 0) })
	e.do(func(db *DB) { db.SetStringOwned([]byte("k"), val, false, 0) })
	e.do(func(db *DB) {
		got := db.Lookup([]byte("k")).Str()
		assert.Same(t, &val[0], &got[0])
	})
	e.do(func(db *DB) { db.SetStringOwned([]byte("new"), val[:50:50], false, epoch+10) })
	v, ok := e.get("new")
	require.True(t, ok)
	assert.Equal(t, string(val[:50]), v)
}

// A pinned value (output refers to it) never changes: a write lookup
// changes a copy, and SET does not overwrite it in place.
func TestPinnedStringDoesNotChange(t *testing.T) {
	e := newEnv(t)
	e.set("k", "0123456789", 0)
	var out []byte
	e.do(func(db *DB) {
		en := db.Lookup([]byte("k"))
		require.True(t, db.PinStr(en))
		out = en.Str()
	})
	e.do(func(db *DB) { copy(db.LookupWrite([]byte("k")).Str(), "XX") })
	assert.Equal(t, "0123456789", string(out))
	v, _ := e.get("k")
	assert.Equal(t, "XX23456789", v)

	// The copy is not pinned: the next change is in place.
	e.do(func(db *DB) {
		a := db.LookupWrite([]byte("k")).Str()
		b := db.LookupWrite([]byte("k")).Str()
		assert.Same(t, &a[0], &b[0])
	})

	e.do(func(db *DB) {
		en := db.Lookup([]byte("k"))
		require.True(t, db.PinStr(en))
		out = en.Str()
		db.SetString([]byte("k"), []byte("abcdefghij"), false, 0) // same length: would fit in place
	})
	assert.Equal(t, "XX23456789", string(out))
	v, _ = e.get("k")
	assert.Equal(t, "abcdefghij", v)
}

// Large string values that leave the keyspace are counted for the
// server's release of freed memory; small ones and renamed ones are not.
func TestFreedBigBytes(t *testing.T) {
	e := newEnv(t)
	big := string(bytes.Repeat([]byte("x"), bigStringValue))
	e.set("a", big, 0)
	e.set("b", big, 0)
	e.set("c", big, epoch+10)
	e.set("small", "x", 0)
	var n int64
	e.ks.SetFreedHook(func(b int64) { n += b })
	e.do(func(db *DB) {
		db.Delete([]byte("a"))
		db.Delete([]byte("small"))
		db.SetString([]byte("b"), []byte("short"), false, 0)
		db.Put([]byte("d"), db.Take([]byte("b")))
	})
	assert.Equal(t, int64(2*bigStringValue), n)
	e.clock.Set(epoch + 20)
	e.ks.ExpireDue(10)
	assert.Equal(t, int64(3*bigStringValue), n)
}
