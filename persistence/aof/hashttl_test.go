package aof

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zredis/zredis/internal/testsupport"
	"github.com/zredis/zredis/keyspace"
)

// ttlKeyspace holds hashes with field TTLs: "big", 200 fields of which
// 70 share one deadline, 10 another, 20 have their own and the rest none;
// "small", a listpackex with a field past its TTL, the key itself with a
// deadline; and "plain", without field TTLs.
func ttlKeyspace(at int64) (*keyspace.Keyspace, map[string]map[string]int64) {
	ks := keyspace.New(16, keyspace.SystemClock{})
	lim := keyspace.HashLimits{MaxEntries: 128, MaxValue: 64}
	ttls := map[string]map[string]int64{"big": {}, "small": {}, "plain": {}}
	build := func(key string, n int, ttl func(i int) int64) *keyspace.Hash {
		h := keyspace.NewHash()
		for i := 0; i < n; i++ {
			h.Set([]byte("f"+strconv.Itoa(i)), []byte("v"+strconv.Itoa(i)), lim)
		}
		for i := 0; i < n; i++ {
			ttls[key]["f"+strconv.Itoa(i)] = ttl(i)
			if d := ttl(i); d != 0 {
				h.SetFieldTTL([]byte("f"+strconv.Itoa(i)), d)
			}
		}
		return h
	}
	ks.Exec(func() {
		db := ks.DB(0)
		db.Put([]byte("big"), keyspace.NewObject(build("big", 200, func(i int) int64 {
			switch {
			case i < 70:
				return at
			case i < 80:
				return at + 5000
			case i < 100:
				return at + 10000 + int64(i)
			}
			return 0
		}), 0))
		db.Put([]byte("small"), keyspace.NewObject(build("small", 3, func(i int) int64 {
			return []int64{0, 1000, at}[i] // f1 long past
		}), at+60000))
		db.Put([]byte("plain"), keyspace.NewObject(build("plain", 3, func(int) int64 { return 0 }), 0))
	})
	return ks, ttls
}

// A hash's field TTLs are rewritten after its HMSETs as HPEXPIREAT key
// ms FIELDS n field..., fields sharing a deadline in one command of at
// most 64, earliest first; a hash without them gets none.
func TestWriteCommandsFieldTTLs(t *testing.T) {
	at := time.Now().Add(time.Hour).UnixMilli()
	ks, ttls := ttlKeyspace(at)
	var snap *keyspace.Snapshot
	ks.Exec(func() { snap = ks.Snapshot() })
	defer snap.Release()
	var buf bytes.Buffer
	require.NoError(t, WriteCommands(&buf, snap, 16))

	got := map[string]map[string]int64{"big": {}, "small": {}, "plain": {}}
	hmsetDone := map[string]bool{}
	var groups []string
	for _, c := range parseSimple(t, buf.Bytes()) {
		switch c[0] {
		case "HMSET":
			require.False(t, hmsetDone[c[1]], "HMSET of %s after its HPEXPIREAT", c[1])
			for i := 2; i < len(c); i += 2 {
				got[c[1]][c[i]] = 0
			}
		case "HPEXPIREAT":
			hmsetDone[c[1]] = true
			require.Equal(t, "FIELDS", c[3])
			n, err := strconv.Atoi(c[4])
			require.NoError(t, err)
			require.Len(t, c, 5+n)
			require.LessOrEqual(t, n, rewriteItemsPerCmd)
			d, err := strconv.ParseInt(c[2], 10, 64)
			require.NoError(t, err)
			for _, f := range c[5:] {
				got[c[1]][f] = d
			}
			groups = append(groups, fmt.Sprintf("%s %d %d", c[1], d-at, n))
		case "PEXPIREAT":
			require.Equal(t, "small", c[1])
			require.True(t, hmsetDone["small"], "the key's deadline comes last")
		}
	}
	assert.Equal(t, ttls, got)
	want := []string{"big 0 64", "big 0 6", "big 5000 10"}
	for i := 80; i < 100; i++ {
		want = append(want, fmt.Sprintf("big %d 1", 10000+i))
	}
	want = append(want, fmt.Sprintf("small %d 1", 1000-at), "small 0 1")
	assert.ElementsMatch(t, want, groups)
	var big []string
	for _, g := range groups {
		if g[:3] == "big" {
			big = append(big, g)
		}
	}
	assert.Equal(t, want[:len(big)], big, "earliest first")
}

// TestRedis74LoadsFieldTTLCommands: redis-server 7.4 (its path in
// testsupport.Redis74Env, skipped without it) loads a commands base with
// field TTLs with every TTL in place.
func TestRedis74LoadsFieldTTLCommands(t *testing.T) {
	bin := testsupport.Redis74(t)
	at := time.Now().Add(time.Hour).UnixMilli()
	ks, ttls := ttlKeyspace(at)
	var snap *keyspace.Snapshot
	ks.Exec(func() { snap = ks.Snapshot() })
	defer snap.Release()
	root := t.TempDir()
	w, err := OpenWriter(filepath.Join(root, DefaultDirName), DefaultFileName, nil, WriterOptions{Policy: Always,
		WriteBase: func(out io.Writer) error { return WriteCommands(out, snap, 16) }})
	require.NoError(t, err)
	require.NoError(t, w.Close())

	p := testsupport.Start(t, testsupport.Options{Name: "redis", Bin: bin, Dir: root,
		Args: []string{"--dir", root, "--appendonly", "yes", "--save", ""}})
	c := redis.NewClient(&redis.Options{Addr: p.Addr})
	defer c.Close()
	ctx := context.Background()
	for key, fields := range ttls {
		all, err := c.HGetAll(ctx, key).Result()
		require.NoError(t, err)
		for f, d := range fields {
			if d != 0 && d < at {
				assert.NotContains(t, all, f, "%s: %q is past its TTL", key, f)
				continue
			}
			assert.Equal(t, "v"+f[1:], all[f], "%s: %q", key, f)
			got, err := c.HPExpireTime(ctx, key, f).Result()
			require.NoError(t, err)
			if d == 0 {
				d = -1
			}
			assert.Equal(t, []int64{d}, got, "%s: HPEXPIRETIME of %q", key, f)
		}
	}
	keyAt, err := c.PExpireTime(ctx, "small").Result()
	require.NoError(t, err)
	assert.Equal(t, at+60000, keyAt.Milliseconds())
}
