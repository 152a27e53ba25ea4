package rdb

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zredis/zredis/internal/testsupport"
	"github.com/zredis/zredis/keyspace"
)

// Streams against redis-server 7.0: its files and DUMP payloads load
// here with every field XINFO STREAM FULL shows, and ours load there
// the same.

// resp2Client is a RESP2 client of r on database db (flat XINFO
// replies), closed when the test ends.
func resp2Client(t *testing.T, r *realRedis, db int) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: r.proc.Addr, Protocol: 2, DB: db, MaxRetries: -1})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// pairsOf reads a RESP2 field/value array.
func pairsOf(t *testing.T, v any) map[string]any {
	t.Helper()
	a, ok := v.([]any)
	require.True(t, ok, "%T", v)
	m := map[string]any{}
	for i := 0; i+1 < len(a); i += 2 {
		m[a[i].(string)] = a[i+1]
	}
	return m
}

// redisStreamState reads a stream of redis-server with XINFO STREAM
// key FULL COUNT 0 (every entry, every pending entry).
func redisStreamState(t *testing.T, c *redis.Client, key string) streamState {
	t.Helper()
	raw, err := c.Do(context.Background(), "XINFO", "STREAM", key, "FULL", "COUNT", 0).Result()
	require.NoError(t, err, key)
	m := pairsOf(t, raw)
	st := streamState{
		Length: m["length"].(int64), RaxKeys: m["radix-tree-keys"].(int64), RaxNodes: m["radix-tree-nodes"].(int64),
		LastID: m["last-generated-id"].(string), MaxDeletedID: m["max-deleted-entry-id"].(string),
		EntriesAdded: m["entries-added"].(int64), FirstID: m["recorded-first-entry-id"].(string),
		Entries: [][]string{}, Groups: []groupState{},
	}
	for _, e := range m["entries"].([]any) {
		ea := e.([]any)
		row := []string{ea[0].(string)}
		for _, x := range ea[1].([]any) {
			row = append(row, x.(string))
		}
		st.Entries = append(st.Entries, row)
	}
	for _, g := range m["groups"].([]any) {
		gm := pairsOf(t, g)
		gs := groupState{Name: gm["name"].(string), LastID: gm["last-delivered-id"].(string), EntriesRead: -1, Lag: "nil",
			PEL: []pendingState{}, Consumers: []consumerState{}}
		if n, ok := gm["entries-read"].(int64); ok {
			gs.EntriesRead = n
		}
		if n, ok := gm["lag"].(int64); ok {
			gs.Lag = strconv.FormatInt(n, 10)
		}
		for _, p := range gm["pending"].([]any) {
			pa := p.([]any)
			gs.PEL = append(gs.PEL, pendingState{pa[0].(string), pa[1].(string), pa[2].(int64), pa[3].(int64)})
		}
		for _, cv := range gm["consumers"].([]any) {
			cm := pairsOf(t, cv)
			cs := consumerState{Name: cm["name"].(string), Seen: cm["seen-time"].(int64), Pending: []string{}}
			for _, p := range cm["pending"].([]any) {
				cs.Pending = append(cs.Pending, p.([]any)[0].(string))
			}
			gs.Consumers = append(gs.Consumers, cs)
		}
		st.Groups = append(st.Groups, gs)
	}
	return st
}

// redisStreamKeys are the keys redisStreamCommands makes, per database.
var redisStreamKeys = map[int][]string{
	0: {"s:plain", "s:nodes", "s:trim", "s:big", "s:bin", "s:groups", "s:empty", "s:mkstream", "s:maxlen0", "s:setid", "s:ttl"},
	3: {"s:db3"},
}

// redisStreamCommands make streams of every shape through the stream
// commands: several nodes, tombstones and emptied nodes, trimming, big
// and compressible values, binary and integer fields, groups with
// pending entries over consumers, claimed and redelivered entries,
// consumers without pending entries, unknown read counters, empty
// streams with groups, XSETID's counters, a deadline.
func redisStreamCommands(deadline int64) map[int][][]any {
	var c [][]any
	add := func(args ...any) { c = append(c, args) }
	add("XADD", "s:plain", "1-1", "name", "alice", "age", "30")
	add("XADD", "s:plain", "1-2", "name", "bob", "age", "-31")
	add("XADD", "s:plain", "2-0", "other", "9223372036854775807")
	add("XADD", "s:plain", "2-*", "name", "carol", "age", "x\x00y")

	id := func(ms, seq int) string { return fmt.Sprintf("%d-%d", ms, seq) }
	for i := 1; i <= 350; i++ {
		if i%4 == 0 {
			add("XADD", "s:nodes", id(1000+i, i), "f", i, "extra", "e")
		} else {
			add("XADD", "s:nodes", id(1000+i, i), "f", i, "g", strings.Repeat("v", i%50))
		}
	}
	for i := 1; i <= 100; i++ {
		add("XDEL", "s:nodes", id(1000+i, i))
	}
	add("XDEL", "s:nodes", id(1101, 101), id(1150, 150), id(1151, 151), id(1350, 350))

	for i := 1; i <= 300; i++ {
		add("XADD", "s:trim", id(3000, i), "n", i)
	}
	add("XTRIM", "s:trim", "MAXLEN", 150)
	add("XTRIM", "s:trim", "MINID", "~", id(3000, 220))

	for i := 0; i < 12; i++ {
		add("XADD", "s:big", id(5000, i), "blob", strings.Repeat("0123456789", 150+i*20))
	}
	add("XADD", "s:bin", "1-0", "\x00\xff", "\r\n", "12345", "-1", "3.14", "", "-0", "007")

	for i := 1; i <= 30; i++ {
		add("XADD", "s:groups", id(100, i), "k", i)
	}
	add("XGROUP", "CREATE", "s:groups", "g1", "0")
	add("XREADGROUP", "GROUP", "g1", "alice", "COUNT", 10, "STREAMS", "s:groups", ">")
	add("XREADGROUP", "GROUP", "g1", "bob", "COUNT", 5, "STREAMS", "s:groups", ">")
	add("XACK", "s:groups", "g1", id(100, 3))
	add("XCLAIM", "s:groups", "g1", "bob", 0, id(100, 4), "RETRYCOUNT", 3)
	add("XGROUP", "CREATECONSUMER", "s:groups", "g1", "carol")
	add("XGROUP", "CREATE", "s:groups", "123", "$")
	add("XREADGROUP", "GROUP", "123", "456", "COUNT", 1, "STREAMS", "s:groups", ">")
	add("XGROUP", "CREATE", "s:groups", "unknown", id(100, 7))
	add("XREADGROUP", "GROUP", "unknown", "dave", "COUNT", 2, "STREAMS", "s:groups", ">")
	add("XDEL", "s:groups", id(100, 5), id(100, 1))
	add("XGROUP", "CREATE", "s:groups", "late", id(100, 20), "ENTRIESREAD", 20)
	add("XGROUP", "SETID", "s:groups", "late", id(100, 25))
	add("XREADGROUP", "GROUP", "g1", "alice", "COUNT", 2, "STREAMS", "s:groups", "0")

	add("XADD", "s:empty", "5-5", "a", "b")
	add("XGROUP", "CREATE", "s:empty", "g", "0")
	add("XREADGROUP", "GROUP", "g", "c", "COUNT", 1, "STREAMS", "s:empty", ">")
	add("XDEL", "s:empty", "5-5")
	add("XGROUP", "CREATECONSUMER", "s:empty", "g", "idle")
	add("XGROUP", "CREATE", "s:mkstream", "g", "$", "MKSTREAM")
	add("XADD", "s:maxlen0", "MAXLEN", 0, "9-9", "x", "y")
	add("XADD", "s:setid", "1-1", "a", "b")
	add("XSETID", "s:setid", "99-99", "ENTRIESADDED", 50, "MAXDELETEDID", "5-0")
	add("XADD", "s:ttl", "1-1", "a", "b")
	add("PEXPIREAT", "s:ttl", deadline)
	return map[int][][]any{0: c, 3: {{"XADD", "s:db3", "7-7", "in", "db3"}}}
}

func fillRedisStreams(t *testing.T, r *realRedis, deadline int64) map[int]*redis.Client {
	t.Helper()
	ctx := context.Background()
	clients := map[int]*redis.Client{}
	for db, cmds := range redisStreamCommands(deadline) {
		c := resp2Client(t, r, db)
		clients[db] = c
		for _, args := range cmds {
			err := c.Do(ctx, args...).Err()
			if !errors.Is(err, redis.Nil) {
				require.NoError(t, err, "%v", args)
			}
			time.Sleep(time.Millisecond) // distinct delivery and seen times
		}
	}
	return clients
}

// streamDumpConfigs are the configurations the stream interchange runs
// under: defaults, no compression, small nodes.
var streamConfigs = []struct {
	name     string
	args     []string
	compress bool
}{
	{"defaults", nil, true},
	{"no compression", []string{"--rdbcompression", "no", "--rdbchecksum", "no"}, false},
	{"small nodes", []string{"--stream-node-max-entries", "7", "--stream-node-max-bytes", "300"}, true},
}

// TestStreamsWithRedis: streams redis-server wrote load here as it holds
// them; written back by us, redis-server loads what it had; DUMP
// payloads go both ways with the same bytes; a file of Redis 6.2's
// stream type loads here as redis-server 7.0 loads it.
func TestStreamsWithRedis(t *testing.T) {
	redisPath(t)
	ctx := context.Background()
	for _, cfg := range streamConfigs {
		t.Run(cfg.name, func(t *testing.T) {
			dirA := t.TempDir()
			a := startRedis(t, dirA, cfg.args...)
			deadline := time.Now().Add(time.Hour).UnixMilli()
			clientsA := fillRedisStreams(t, a, deadline)
			require.NoError(t, clientsA[0].Save(ctx).Err())

			// Redis's file, loaded here.
			_, got := loadAll(t, filepath.Join(dirA, "dump.rdb"), DefaultLoadOptions())
			want := map[int]map[string]streamState{}
			for db, keys := range redisStreamKeys {
				want[db] = map[string]streamState{}
				require.Len(t, got[db], len(keys))
				for _, k := range keys {
					want[db][k] = redisStreamState(t, clientsA[db], k)
					e := got[db][k]
					require.NotNil(t, e, k)
					require.Equal(t, keyspace.TypeStream, e.Type(), k)
					assert.Equal(t, want[db][k], stateOf(e.Obj().(*keyspace.Stream)), "stream %q", k)
				}
			}
			assert.Equal(t, deadline, got[0]["s:ttl"].ExpireAt())
			assert.Greater(t, want[0]["s:nodes"].RaxKeys, int64(2))
			assert.Greater(t, want[0]["s:big"].RaxKeys, int64(2))

			// DUMP payloads: Redis's restore here, ours are Redis's bytes
			// (DUMP compresses as rdbcompression says, ours always do) and
			// restore there.
			for _, k := range redisStreamKeys[0] {
				payload, err := clientsA[0].Dump(ctx, k).Result()
				require.NoError(t, err)
				e, err := Restore([]byte(payload), DefaultLoadOptions())
				require.NoError(t, err, k)
				assert.Equal(t, want[0][k], stateOf(e.Obj().(*keyspace.Stream)), "restored %q", k)
				ours := Dump(got[0][k])
				if cfg.compress {
					assert.Equal(t, []byte(payload), ours, "DUMP payload of %q", k)
				}
				require.NoError(t, clientsA[0].Restore(ctx, k+":ours", 0, string(ours)).Err(), k)
				assert.Equal(t, want[0][k], redisStreamState(t, clientsA[0], k+":ours"), "RESTORE of our payload of %q", k)
			}

			// Our file of what we loaded, loaded by Redis.
			dirB := t.TempDir()
			writeLoaded(t, filepath.Join(dirB, "ours.rdb"), got, WriterOptions{Compress: cfg.compress, Checksum: true})
			checkWithRedisCheckRDB(t, filepath.Join(dirB, "ours.rdb"))
			b := startRedis(t, dirB, append([]string{"--dbfilename", "ours.rdb"}, cfg.args...)...)
			for db, keys := range redisStreamKeys {
				cb := resp2Client(t, b, db)
				n, err := cb.DBSize(ctx).Result()
				require.NoError(t, err)
				assert.Equal(t, int64(len(keys)), n)
				for _, k := range keys {
					assert.Equal(t, want[db][k], redisStreamState(t, cb, k), "Redis loading our %q", k)
				}
				if db == 0 {
					at, err := cb.PExpireTime(ctx, "s:ttl").Result()
					require.NoError(t, err)
					assert.Equal(t, deadline, at.Milliseconds())
				}
			}

			// The streams as Redis 6.2 wrote them (type 15, RDB 9): what
			// Redis 7.0 derives on load (entries-added, first ID, read
			// counters), we derive.
			v1 := map[string]*keyspace.Stream{}
			for _, k := range redisStreamKeys[0] {
				v1[k] = got[0][k].Obj().(*keyspace.Stream)
			}
			dirC := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(dirC, "v1.rdb"), streamsV1File(v1), 0o644))
			_, gotV1 := loadAll(t, filepath.Join(dirC, "v1.rdb"), DefaultLoadOptions())
			c := startRedis(t, dirC, append([]string{"--dbfilename", "v1.rdb"}, cfg.args...)...)
			cc := resp2Client(t, c, 0)
			for _, k := range redisStreamKeys[0] {
				assert.Equal(t, redisStreamState(t, cc, k), stateOf(gotV1[0][k].Obj().(*keyspace.Stream)), "type 15 %q", k)
			}
		})
	}
}

// TestRedisLoadsOurStreams writes streams built with the keyspace API;
// redis-server loads the file and RESTOREs the payloads with every field
// as we hold it.
func TestRedisLoadsOurStreams(t *testing.T) {
	redisPath(t)
	ctx := context.Background()
	streams := testStreams()
	dir := t.TempDir()
	got := map[int]map[string]*keyspace.Entry{0: {}}
	for k, s := range streams {
		got[0][k] = keyspace.NewObject(s, 0)
	}
	writeLoaded(t, filepath.Join(dir, "ours.rdb"), got, WriterOptions{Compress: true, Checksum: true})
	checkWithRedisCheckRDB(t, filepath.Join(dir, "ours.rdb"))
	r := startRedis(t, dir, "--dbfilename", "ours.rdb")
	c := resp2Client(t, r, 0)
	for k, s := range streams {
		assert.Equal(t, stateOf(s), redisStreamState(t, c, k), "Redis loading our %q", k)
		require.NoError(t, c.Restore(ctx, k+":restored", 0, string(Dump(got[0][k]))).Err())
		assert.Equal(t, stateOf(s), redisStreamState(t, c, k+":restored"), "RESTORE of our %q", k)
		// Redis's DUMP of what it loaded is our payload.
		payload, err := c.Dump(ctx, k).Result()
		require.NoError(t, err)
		assert.Equal(t, Dump(got[0][k]), []byte(payload), "DUMP of %q", k)
	}
}

// writeLoaded writes entries (db -> key -> entry) to path, keys sorted.
func writeLoaded(t *testing.T, path string, entries map[int]map[string]*keyspace.Entry, opt WriterOptions) {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, opt)
	require.NoError(t, err)
	for db := 0; db < 16; db++ {
		keys := entries[db]
		if len(keys) == 0 {
			continue
		}
		expires := 0
		for _, e := range keys {
			if e.ExpireAt() != 0 {
				expires++
			}
		}
		require.NoError(t, w.SelectDB(db, len(keys), expires))
		for _, k := range sortedKeys(keys) {
			require.NoError(t, w.WriteEntry(k, keys[k]))
		}
	}
	require.NoError(t, w.Close())
	require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644))
}

// checkWithRedisCheckRDB runs redis-check-rdb on path: the file must be
// accepted.
func checkWithRedisCheckRDB(t *testing.T, path string) {
	t.Helper()
	check := testsupport.RequireTool(t, "redis-check-rdb")
	out, err := exec.Command(check, path).CombinedOutput()
	assert.NoError(t, err, "redis-check-rdb: %s", out)
	assert.Contains(t, string(out), "RDB looks OK")
}
