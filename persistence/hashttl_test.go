package persistence

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zredis/zredis/keyspace"
)

// A save is of version 10 (Redis 7.0's) until a hash has field TTLs,
// then of version 12 (7.4's), and a new server loading it gets the TTLs
// back, the hash indexed for field expiry. The same holds for the RDB
// preamble of an AOF base, written by the same code.
func TestSaveVersionFollowsFieldTTLs(t *testing.T) {
	dir := t.TempDir()
	f := newFixture(t, dir, "")
	f.set(0, "a", "1")
	save := func() string {
		f.ks.Exec(func() { f.p.BGSave(false) })
		f.p.Wait()
		b, err := os.ReadFile(filepath.Join(dir, "dump.rdb"))
		require.NoError(t, err)
		return string(b[:9])
	}
	assert.Equal(t, "REDIS0010", save())

	at := time.Now().Add(time.Hour).UnixMilli()
	f.ks.Exec(func() {
		h := keyspace.NewHash()
		lim := keyspace.HashLimits{MaxEntries: 128, MaxValue: 64}
		h.Set([]byte("f"), []byte("v"), lim)
		h.Set([]byte("g"), []byte("w"), lim)
		h.SetFieldTTL([]byte("f"), at)
		f.ks.DB(5).Put([]byte("h"), keyspace.NewObject(h, 0))
		f.stats.Dirty++
	})
	assert.Equal(t, "REDIS0012", save())

	g := newFixture(t, dir, "")
	require.NoError(t, g.p.Load())
	g.ks.Exec(func() {
		e := g.ks.DB(5).Peek([]byte("h"))
		require.NotNil(t, e)
		h := e.Obj().(*keyspace.Hash)
		assert.Equal(t, at, h.FieldTTL([]byte("f")))
		assert.Zero(t, h.FieldTTL([]byte("g")))
		assert.Equal(t, 1, g.ks.DB(5).VolatileHashes())
	})

	// Without the TTL, version 10 again.
	f.ks.Exec(func() {
		f.ks.DB(5).Delete([]byte("h"))
		f.stats.Dirty++
	})
	assert.Equal(t, "REDIS0010", save())
}
