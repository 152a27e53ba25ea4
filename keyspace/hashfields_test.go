package keyspace

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fieldEnv is env with the field funnel's events recorded.
func fieldEnv(t *testing.T) (*env, *[]ExpiredFields) {
	e := newEnv(t)
	var got []ExpiredFields
	e.ks.AddExpiredFieldsSink(func(ev ExpiredFields) { got = append(got, ev) })
	return e, &got
}

// hset stores fields and values (pairs) in hash key, creating it.
func (e *env) hset(key string, pairs ...string) {
	e.do(func(db *DB) {
		var h *Hash
		if en := db.LookupWrite([]byte(key)); en != nil {
			h = en.Obj().(*Hash)
		} else {
			h = db.AddHash([]byte(key), HashLimits{MaxEntries: 128, MaxValue: 64}, nil)
		}
		for i := 0; i < len(pairs); i += 2 {
			h.Set([]byte(pairs[i]), []byte(pairs[i+1]), HashLimits{MaxEntries: 128, MaxValue: 64})
		}
	})
}

func (e *env) fieldTTL(key, field string, at int64) {
	e.do(func(db *DB) {
		en := db.LookupWrite([]byte(key))
		require.NotNil(e.t, en)
		db.SetFieldTTL(en, []byte(field), at)
	})
}

func pairStrings(ev ExpiredFields) []string {
	var s []string
	for _, p := range ev.Pairs {
		s = append(s, string(p))
	}
	return s
}

// Fields leave through the funnel when their deadline passes, in
// deadline order with the keys, one event per hash and millisecond, with
// their values; the hash goes with its last field.
func TestFieldFunnelOrder(t *testing.T) {
	e, got := fieldEnv(t)
	e.hset("mail", "from", "a", "rcpt1", "r1", "rcpt2", "r2", "lock", "w")
	e.hset("small", "only", "v")
	e.fieldTTL("mail", "rcpt1", epoch+20)
	e.fieldTTL("mail", "lock", epoch+20)
	e.fieldTTL("mail", "rcpt2", epoch+40)
	e.fieldTTL("small", "only", epoch+30)
	e.set("key", "v", epoch+25)
	e.do(func(db *DB) {
		assert.Equal(t, 2, db.VolatileHashes())
		en := db.Lookup([]byte("mail"))
		assert.Equal(t, "listpackex", en.Obj().(*Hash).Encoding(), "a small hash with field deadlines, as 7.4's")
		assert.Equal(t, epoch+20, en.Obj().(*Hash).MinFieldTTL())
		assert.Equal(t, epoch+20, e.ks.NextDeadline(), "a field's deadline wakes the timer")
	})

	e.clock.Advance(50 * time.Millisecond)
	e.ks.Exec(func() { e.ks.ExpireDue(100) })
	require.Len(t, *got, 3)
	assert.Equal(t, "mail", (*got)[0].Key)
	assert.ElementsMatch(t, []string{"lock", "w", "rcpt1", "r1"}, pairStrings((*got)[0]))
	assert.Equal(t, epoch+20, (*got)[0].At)
	assert.Equal(t, []string{"key"}, e.expiredKeys(), "the key due at +25 between them")
	assert.Equal(t, "small", (*got)[1].Key)
	assert.True(t, (*got)[1].HashGone)
	assert.Equal(t, []string{"rcpt2", "r2"}, pairStrings((*got)[2]))
	assert.False(t, (*got)[2].HashGone)
	assert.Equal(t, int64(4), e.ks.Stats().ExpiredSubkeys)
	e.do(func(db *DB) {
		assert.Nil(t, db.Lookup([]byte("small")))
		h := db.Lookup([]byte("mail")).Obj().(*Hash)
		assert.Equal(t, 1, h.Len())
		assert.Equal(t, 0, db.VolatileHashes())
		assert.Zero(t, e.ks.NextDeadline())
	})
}

// A command meeting a hash with fields past their deadline expires them
// first (lazy field expiry); a replica keeps them for its master's HDEL.
func TestFieldLazyExpiry(t *testing.T) {
	e, got := fieldEnv(t)
	e.hset("h", "a", "1", "b", "2")
	e.fieldTTL("h", "a", epoch+10)
	e.clock.Advance(20 * time.Millisecond)
	e.do(func(db *DB) {
		en := db.ExpireFields([]byte("h"), db.Lookup([]byte("h")))
		require.NotNil(t, en)
		_, ok := en.Obj().(*Hash).Get([]byte("a"))
		assert.False(t, ok)
	})
	require.Len(t, *got, 1)

	e.hset("r", "a", "1")
	e.fieldTTL("r", "a", e.clock.NowMs()+10)
	e.clock.Advance(20 * time.Millisecond)
	e.ks.SetReplica(true)
	e.do(func(db *DB) {
		en := db.ExpireFields([]byte("r"), db.Lookup([]byte("r")))
		require.NotNil(t, en, "a replica keeps the field")
		h := en.Obj().(*Hash)
		assert.False(t, h.Live([]byte("a"), e.ks.Now()))
	})
	e.ks.Exec(func() { e.ks.ExpireDue(100) })
	assert.Len(t, *got, 1, "a replica expires no field")
}

// The index follows the hash's entry wherever it goes: a copy made for a
// live snapshot, a rename (Take, Put), a deletion, a flush; HSET clears
// the field's deadline, SetKeepTTL keeps it.
func TestFieldIndexFollowsEntry(t *testing.T) {
	e, got := fieldEnv(t)
	e.hset("h", "a", "1", "b", "2", "c", "3")
	e.fieldTTL("h", "a", epoch+100)
	e.fieldTTL("h", "b", epoch+200)
	var snap *Snapshot
	e.ks.Exec(func() { snap = e.ks.Snapshot() })
	e.fieldTTL("h", "c", epoch+50) // a private copy of the entry, indexed earlier
	e.do(func(db *DB) {
		db.Put([]byte("h2"), db.Take([]byte("h")))
		assert.Equal(t, 1, db.VolatileHashes())
		h := db.Lookup([]byte("h2")).Obj().(*Hash)
		assert.Equal(t, epoch+50, h.MinFieldTTL())
		h.Set([]byte("c"), []byte("x"), HashLimits{MaxEntries: 128, MaxValue: 64})
		h.SetKeepTTL([]byte("b"), []byte("y"), HashLimits{MaxEntries: 128, MaxValue: 64})
		assert.Zero(t, h.FieldTTL([]byte("c")))
		assert.Equal(t, epoch+200, h.FieldTTL([]byte("b")))
	})
	snap.Release()
	e.clock.Advance(150 * time.Millisecond)
	e.ks.Exec(func() { e.ks.ExpireDue(100) })
	require.Len(t, *got, 1, "the stale +50 finds nothing due; a is due at +100")
	assert.Equal(t, "h2", (*got)[0].Key)
	assert.Equal(t, []string{"a", "1"}, pairStrings((*got)[0]))

	e.do(func(db *DB) {
		assert.Equal(t, 1, db.VolatileHashes())
		db.Delete([]byte("h2"))
		assert.Equal(t, 0, db.VolatileHashes())
		assert.Zero(t, e.ks.NextDeadline())
	})
	e.hset("f", "a", "1")
	e.fieldTTL("f", "a", e.clock.NowMs()+10)
	e.do(func(db *DB) { db.Flush(); assert.Equal(t, 0, db.VolatileHashes()) })
}

// A large hash past the small form's limits says hashtable; the timer
// expires a million-field backlog in bounded batches.
func TestFieldFunnelLarge(t *testing.T) {
	e, got := fieldEnv(t)
	var pairs []string
	for i := range 300 {
		pairs = append(pairs, fmt.Sprintf("f%d", i), "v")
	}
	e.hset("big", pairs...)
	e.do(func(db *DB) {
		en := db.LookupWrite([]byte("big"))
		for i := range 300 {
			db.SetFieldTTL(en, []byte(fmt.Sprintf("f%d", i)), epoch+1+int64(i%3))
		}
		assert.Equal(t, "hashtable", en.Obj().(*Hash).Encoding())
	})
	e.clock.Advance(10 * time.Millisecond)
	n := 0
	e.ks.Exec(func() { n = e.ks.ExpireDue(1) })
	assert.Equal(t, 100, n, "one millisecond's fields of a hash in one step")
	e.ks.Exec(func() { n = e.ks.ExpireDue(1000) })
	assert.Equal(t, 200, n)
	assert.Len(t, *got, 3, "one event per millisecond")
	assert.True(t, (*got)[2].HashGone)
}

// A lazy expiry keeps deadline order across keys and fields: a read of
// a key due after a hash's field sends the field first; a read of a
// hash expires all its due fields, one millisecond at a time, after
// what fell due between them.
func TestFieldLazyOrder(t *testing.T) {
	e, got := fieldEnv(t)
	var order []string
	e.ks.AddExpiredSink(func(ev Expired) { order = append(order, "key:"+ev.Key) })
	e.ks.AddExpiredFieldsSink(func(ev ExpiredFields) { order = append(order, "fields:"+ev.Key) })
	e.hset("h", "a", "1", "b", "2", "c", "3")
	e.fieldTTL("h", "a", epoch+100)
	e.fieldTTL("h", "b", epoch+300)
	e.set("k", "v", epoch+150)
	e.hset("g", "x", "1", "y", "2")
	e.fieldTTL("g", "x", epoch+200)
	var many []string
	for i := range 1500 {
		many = append(many, fmt.Sprintf("m%d", i), "v")
	}
	e.hset("big", append(many, "keep", "k")...)
	e.do(func(db *DB) {
		en := db.LookupWrite([]byte("big"))
		for i := range 1500 {
			db.SetFieldTTL(en, []byte(fmt.Sprintf("m%d", i)), epoch+400)
		}
	})
	e.clock.Advance(500 * time.Millisecond)
	e.do(func(db *DB) { assert.Nil(t, db.Lookup([]byte("k"))) })
	assert.Equal(t, []string{"fields:h", "key:k"}, order, "the field due at +100 before the key due at +150")
	e.do(func(db *DB) {
		en := db.ExpireFields([]byte("h"), db.Lookup([]byte("h")))
		assert.Equal(t, 1, en.Obj().(*Hash).Len())
		en = db.ExpireFields([]byte("big"), db.Lookup([]byte("big")))
		assert.Equal(t, 1, en.Obj().(*Hash).Len(), "every due field of the hash, beyond one batch")
	})
	assert.Equal(t, []string{"fields:h", "key:k", "fields:g", "fields:h", "fields:big", "fields:big"}, order)
	assert.Len(t, *got, 5)
}

// HSET clearing a hash's last field deadline takes it out of the index
// (FieldsChanged), so subexpiry and the replicas' check see it at once.
func TestFieldsChangedUnindexes(t *testing.T) {
	e, _ := fieldEnv(t)
	e.hset("h", "a", "1")
	e.fieldTTL("h", "a", epoch+1000)
	e.do(func(db *DB) {
		en := db.LookupWrite([]byte("h"))
		en.Obj().(*Hash).Set([]byte("a"), []byte("2"), HashLimits{MaxEntries: 128, MaxValue: 64})
		assert.Equal(t, 1, db.VolatileHashes(), "stale until told")
		db.FieldsChanged(en)
		assert.Equal(t, 0, db.VolatileHashes())
	})
}
