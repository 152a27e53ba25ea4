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

// A large hash's large values are immutable records: a view stays as
// it was after the field changes, even where Overwrite allows shorter
// values to be rewritten in place. Deleting a hash with a few large
// values counts them as freed.
func TestHashLargeValues(t *testing.T) {
	require.GreaterOrEqual(t, bigStringValue, StableValueMin)
	lim := testLimits
	lim.Overwrite = true
	big := bytes.Repeat([]byte("b"), bigStringValue)
	h := NewHash()
	h.Set([]byte("f"), []byte("small"), lim)
	v, _ := h.Get([]byte("f"))
	assert.False(t, h.ValueStable(v), "the small form is edited in place")
	h.Convert(lim, []byte("f"), big)
	h.Set([]byte("f"), big, lim)
	v, _ = h.Get([]byte("f"))
	require.True(t, h.ValueStable(v))
	h.Set([]byte("f"), bytes.Repeat([]byte("c"), bigStringValue), lim)
	h.Delete([]byte("f"))
	assert.Equal(t, big, v)

	e := newEnv(t)
	var n int64
	e.ks.SetFreedHook(func(b int64) { n += b })
	h = NewHash()
	h.Convert(testLimits, []byte("envelope"), big)
	h.Set([]byte("envelope"), big, testLimits)
	h.Set([]byte("attempts"), []byte("0"), testLimits)
	e.do(func(db *DB) { db.Put([]byte("h"), NewObject(h, 0)) })
	e.do(func(db *DB) { db.Delete([]byte("h")) })
	assert.GreaterOrEqual(t, n, int64(bigStringValue))
	assert.Less(t, n, int64(bigStringValue+64))
}
