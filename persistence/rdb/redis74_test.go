package rdb

import (
	"bytes"
	"context"
	"os"
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

// startRedis74 starts the redis-server 7.4 of testsupport.Redis74 in dir, loading
// dir/dump.rdb when there is one, or skips the test. It deep-sanitizes
// what it loads and restores (sanitize-dump-payload yes), which checks
// the order of a listpackex's TTLs.
func startRedis74(t *testing.T, dir string) *redis.Client {
	t.Helper()
	bin := testsupport.Redis74(t)
	argv := []string{"--dir", dir, "--dbfilename", "dump.rdb", "--save", "", "--appendonly", "no",
		"--logfile", filepath.Join(dir, "redis.log"), "--enable-debug-command", "yes", "--sanitize-dump-payload", "yes"}
	p := testsupport.Start(t, testsupport.Options{Name: "redis", Bin: bin, Args: argv, Dir: dir})
	c := redis.NewClient(&redis.Options{Addr: p.Addr, MaxRetries: -1})
	t.Cleanup(func() { _ = c.Close() })
	info, err := c.Info(context.Background(), "server").Result()
	require.NoError(t, err)
	require.Contains(t, info, "redis_version:7.4.", "%s is not Redis 7.4", bin)
	return c
}

// checkRedis74Hash compares a hash in Redis 7.4 with the fields it
// should hold: their values and TTLs, fields past their TTL gone.
func checkRedis74Hash(t *testing.T, c *redis.Client, key string, want []fieldTTL) {
	t.Helper()
	ctx := context.Background()
	now := time.Now().UnixMilli()
	live := map[string]string{}
	for _, fv := range want {
		if fv.at == 0 || fv.at > now {
			live[fv.f] = fv.v
		}
	}
	got, err := c.HGetAll(ctx, key).Result()
	require.NoError(t, err)
	assert.Equal(t, live, got, key)
	for _, fv := range want {
		if _, ok := live[fv.f]; !ok {
			continue
		}
		at, err := c.HPExpireTime(ctx, key, fv.f).Result()
		require.NoError(t, err)
		wantAt := fv.at
		if wantAt == 0 {
			wantAt = -1
		}
		assert.Equal(t, []int64{wantAt}, at, "%s: HPEXPIRETIME of %q", key, fv.f)
	}
}

// TestRedis74LoadsOurFieldTTLs: redis-server 7.4 loads a file we wrote
// with hashes with field TTLs, with every value and TTL and the encoding
// we had; RESTOREs our payloads; saves a file and dumps payloads that we
// load back the same; and dumps, for a hash whose fields all have
// distinct TTLs, the very bytes we dump.
func TestRedis74LoadsOurFieldTTLs(t *testing.T) {
	dir := t.TempDir()
	hashes := ttlHashes()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, WriterOptions{Compress: true, Checksum: true, FieldTTLs: true})
	require.NoError(t, err)
	require.NoError(t, w.SelectDB(0, len(hashes), 0))
	for _, name := range sortedKeys(hashes) {
		require.NoError(t, w.WriteEntry(name, keyspace.NewObject(ttlHash(hashes[name]), 0)))
	}
	require.NoError(t, w.Close())
	require.NoError(t, os.WriteFile(filepath.Join(dir, "dump.rdb"), buf.Bytes(), 0o644))

	c := startRedis74(t, dir)
	ctx := context.Background()
	n, err := c.DBSize(ctx).Result()
	require.NoError(t, err)
	require.Equal(t, int64(len(hashes)), n)
	for name, want := range hashes {
		checkRedis74Hash(t, c, name, want)
		if name != "small past" { // its expired fields may go meanwhile
			enc, err := c.ObjectEncoding(ctx, name).Result()
			require.NoError(t, err)
			want := wantEncoding(name)
			if want == "listpack" {
				want = "listpackex" // 7.4's name for a small hash with field TTLs
			}
			assert.Equal(t, want, enc, name)
		}
		// Our payload, restored under another name.
		p := Dump(keyspace.NewObject(ttlHash(want), 0))
		require.NoError(t, c.Restore(ctx, "r:"+name, 0, string(p)).Err(), name)
		checkRedis74Hash(t, c, "r:"+name, want)
		// 7.4's payload of what it loaded, restored here.
		theirs, err := c.Dump(ctx, name).Result()
		require.NoError(t, err)
		e, err := Restore([]byte(theirs), DefaultLoadOptions())
		require.NoError(t, err, name)
		if name != "small past" {
			checkTTLHash(t, name, want, e.Obj().(*keyspace.Hash))
			assert.Equal(t, wantEncoding(name), encodingOf(e), name)
		}
	}

	// Built by commands in 7.4, a hash whose fields have distinct TTLs
	// dumps to our bytes. (7.4's header, the earliest TTL, which its
	// loader does not use, can lag by seconds after a HPEXPIREAT: it
	// updates it only for a change of more than 8 s. Ours is exact.)
	at := time.Now().Add(time.Hour).UnixMilli()
	fields := []fieldTTL{{"a", "1", at + 30*60000}, {"b", "bee", at + 10*60000}, {"12", "-7", at + 20*60000}}
	for _, fv := range fields {
		require.NoError(t, c.HSet(ctx, "cmd", fv.f, fv.v).Err())
	}
	for _, fv := range fields {
		require.NoError(t, c.HPExpireAt(ctx, "cmd", time.UnixMilli(fv.at), fv.f).Err())
	}
	theirs, err := c.Dump(ctx, "cmd").Result()
	require.NoError(t, err)
	assert.Equal(t, Dump(keyspace.NewObject(ttlHash(fields), 0)), []byte(theirs))
	// And one that a command made a table.
	big := make([]fieldTTL, 0, 600)
	for i := 0; i < 600; i++ {
		fv := fieldTTL{f: "f" + strconv.Itoa(i), v: "v"}
		if i%2 == 0 {
			fv.at = at + int64(i)
		}
		big = append(big, fv)
		require.NoError(t, c.HSet(ctx, "cmdbig", fv.f, fv.v).Err())
		if fv.at != 0 {
			require.NoError(t, c.HPExpireAt(ctx, "cmdbig", time.UnixMilli(fv.at), fv.f).Err())
		}
	}
	theirs, err = c.Dump(ctx, "cmdbig").Result()
	require.NoError(t, err)
	require.Equal(t, byte(typeHashMetadata), theirs[0])
	e, err := Restore([]byte(theirs), DefaultLoadOptions())
	require.NoError(t, err)
	checkTTLHash(t, "cmdbig", big, e.Obj().(*keyspace.Hash))

	// 7.4's own file: every hash back with its TTLs.
	require.NoError(t, c.Save(ctx).Err())
	info, got := loadAll(t, filepath.Join(dir, "dump.rdb"), DefaultLoadOptions())
	assert.Equal(t, 12, info.Version)
	for name, want := range hashes {
		if name == "small past" {
			continue
		}
		checkTTLHash(t, name, want, got[0][name].Obj().(*keyspace.Hash))
		assert.Equal(t, wantEncoding(name), encodingOf(got[0][name]), name)
		checkTTLHash(t, name, want, got[0]["r:"+name].Obj().(*keyspace.Hash))
	}
	checkTTLHash(t, "cmd", fields, got[0]["cmd"].Obj().(*keyspace.Hash))
	checkTTLHash(t, "cmdbig", big, got[0]["cmdbig"].Obj().(*keyspace.Hash))
}

// TestRedis74Types: the other types 7.2 introduced, as 7.4 writes them:
// a small set of strings (SET_LISTPACK) and a stream with a consumer
// (STREAM_LISTPACKS_3), by DUMP and in a saved file.
func TestRedis74Types(t *testing.T) {
	dir := t.TempDir()
	c := startRedis74(t, dir)
	ctx := context.Background()
	require.NoError(t, c.SAdd(ctx, "set", "a", "b", "7").Err())
	require.NoError(t, c.XAdd(ctx, &redis.XAddArgs{Stream: "stream", ID: "5-1", Values: []string{"f", "v"}}).Err())
	require.NoError(t, c.XGroupCreate(ctx, "stream", "g", "0").Err())
	require.NoError(t, c.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: "alice", Streams: []string{"stream", ">"}}).Err())

	p, err := c.Dump(ctx, "set").Result()
	require.NoError(t, err)
	require.Equal(t, byte(typeSetListpack), p[0])
	e, err := Restore([]byte(p), DefaultLoadOptions())
	require.NoError(t, err)
	assert.Equal(t, "hashtable", e.Encoding())
	assert.Equal(t, 3, e.Obj().Len())

	p, err = c.Dump(ctx, "stream").Result()
	require.NoError(t, err)
	require.Equal(t, byte(typeStreamListpacks3), p[0])
	e, err = Restore([]byte(p), DefaultLoadOptions())
	require.NoError(t, err)
	s := e.Obj().(*keyspace.Stream)
	assert.Equal(t, uint64(1), s.Length())
	pending := 0
	s.Groups(func(g *keyspace.StreamGroup) bool {
		g.Consumers(func(c *keyspace.StreamConsumer) bool {
			assert.Equal(t, "alice", c.Name)
			pending += c.PendingCount()
			return true
		})
		return true
	})
	assert.Equal(t, 1, pending)

	require.NoError(t, c.Save(ctx).Err())
	_, got := loadAll(t, filepath.Join(dir, "dump.rdb"), DefaultLoadOptions())
	assert.Equal(t, 3, got[0]["set"].Obj().Len())
	assert.Equal(t, uint64(1), got[0]["stream"].Obj().(*keyspace.Stream).Length())
}

// TestRedis74RefusesCorrupt: what we refuse as a malformed hash with
// field TTLs, 7.4 refuses too, but for two payloads it lets through
// where we are stricter: a table form whose earliest-TTL header is
// beyond the "none" mark while no field has a TTL (7.4 only logs it in
// RESTORE, and refuses it in a file), and a relative TTL that wraps
// around 2^64 (7.4 computes it unsigned and keeps what it gets).
func TestRedis74RefusesCorrupt(t *testing.T) {
	c := startRedis74(t, t.TempDir())
	lenient := map[string]bool{"meta min invalid": true, "meta ttl wraps": true}
	for name, p := range corruptTTLPayloads() {
		err := c.Restore(context.Background(), "k:"+name, 0, string(p)).Err()
		if lenient[name] {
			assert.NoError(t, err, name)
			continue
		}
		assert.Error(t, err, name)
	}
}
