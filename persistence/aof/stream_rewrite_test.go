package aof

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zredis/zredis/keyspace"
	"github.com/zredis/zredis/persistence/rdb"
)

// streamCommands make streams of the shapes a rewrite must rebuild:
// several nodes with tombstones, groups with pending entries, claimed
// and redelivered entries, consumers without pending entries, read
// counters known and unknown, empty streams with and without groups,
// XSETID's counters, a deadline, and a stream in another database.
func streamCommands(deadline int64) []command {
	var c []command
	add := func(args ...string) { c = append(c, command(args)) }
	id := func(ms, seq int) string { return fmt.Sprintf("%d-%d", ms, seq) }
	add("XADD", "s:plain", "1-1", "name", "alice", "age", "30")
	add("XADD", "s:plain", "1-2", "name", "bob", "n", "-31", "bin", "\x00\r\n")
	for i := 1; i <= 250; i++ {
		add("XADD", "s:nodes", id(1000+i, i), "f", fmt.Sprint(i), "g", strings.Repeat("v", i%30))
	}
	for i := 1; i <= 100; i++ {
		add("XDEL", "s:nodes", id(1000+i, i))
	}
	add("XDEL", "s:nodes", id(1150, 150), id(1250, 250))
	for i := 1; i <= 30; i++ {
		add("XADD", "s:groups", id(100, i), "k", fmt.Sprint(i))
	}
	add("XGROUP", "CREATE", "s:groups", "g1", "0")
	add("XREADGROUP", "GROUP", "g1", "alice", "COUNT", "10", "STREAMS", "s:groups", ">")
	add("XREADGROUP", "GROUP", "g1", "bob", "COUNT", "5", "STREAMS", "s:groups", ">")
	add("XACK", "s:groups", "g1", id(100, 3))
	add("XCLAIM", "s:groups", "g1", "bob", "0", id(100, 4), "RETRYCOUNT", "3")
	add("XGROUP", "CREATECONSUMER", "s:groups", "g1", "carol")
	add("XGROUP", "CREATE", "s:groups", "123", "$")
	add("XGROUP", "CREATE", "s:groups", "unknown", id(100, 7))
	add("XREADGROUP", "GROUP", "unknown", "dave", "COUNT", "2", "STREAMS", "s:groups", ">")
	add("XDEL", "s:groups", id(100, 5), id(100, 1))
	add("XREADGROUP", "GROUP", "g1", "alice", "COUNT", "2", "STREAMS", "s:groups", "0")
	add("XADD", "s:empty", "5-5", "a", "b")
	add("XGROUP", "CREATE", "s:empty", "g", "0")
	add("XGROUP", "CREATECONSUMER", "s:empty", "g", "idle")
	add("XDEL", "s:empty", "5-5")
	add("XGROUP", "CREATE", "s:mkstream", "g", "$", "MKSTREAM")
	add("XADD", "s:maxlen0", "MAXLEN", "0", "9-9", "x", "y")
	add("XADD", "s:setid", "1-1", "a", "b")
	add("XSETID", "s:setid", "99-99", "ENTRIESADDED", "50", "MAXDELETEDID", "5-0")
	add("XADD", "s:ttl", "1-1", "a", "b")
	add("PEXPIREAT", "s:ttl", fmt.Sprint(deadline))
	add("SELECT", "4")
	add("XADD", "s:db4", "7-7", "in", "db4")
	return c
}

// byKey groups a command base by database and key, keeping each key's
// commands in order (keys come in hashtable order, which differs).
func byKey(cmds []command) map[string][]command {
	out := map[string][]command{}
	db := "0"
	for _, c := range cmds {
		switch strings.ToUpper(c[0]) {
		case "SELECT":
			db = c[1]
			continue
		case "XGROUP":
			out[db+"/"+c[2]] = append(out[db+"/"+c[2]], c)
			continue
		}
		out[db+"/"+c[1]] = append(out[db+"/"+c[1]], c)
	}
	return out
}

// waitRewrite waits until redis-server has no AOF rewrite running or
// scheduled.
func waitRewrite(t *testing.T, c *redis.Client) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		info, err := c.Info(context.Background(), "persistence").Result()
		require.NoError(t, err)
		if strings.Contains(info, "aof_rewrite_in_progress:0") && strings.Contains(info, "aof_rewrite_scheduled:0") {
			require.Contains(t, info, "aof_last_bgrewrite_status:ok")
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("the AOF rewrite did not finish")
}

// TestRewriteStreamsAsRedis: the commands a rewrite writes for streams
// are, key by key, the commands redis-server's BGREWRITEAOF writes for
// the same streams (which we read from its RDB), and redis-server loads
// them back.
func TestRewriteStreamsAsRedis(t *testing.T) {
	needRedis(t, "redis-cli")
	dir := t.TempDir()
	srv := startRedis(t, dir, "--appendonly", "yes", "--aof-use-rdb-preamble", "no")
	deadline := time.Now().Add(time.Hour).UnixMilli()
	replies := srv.raw(t, encode(streamCommands(deadline)...))
	for _, e := range []string{"-ERR", "-NOGROUP", "-BUSYGROUP", "-WRONGTYPE"} {
		require.NotContains(t, replies, e)
	}
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: srv.proc.Addr})
	defer c.Close()
	require.NoError(t, c.BgRewriteAOF(ctx).Err())
	waitRewrite(t, c)
	require.NoError(t, c.Save(ctx).Err())

	aofDir := filepath.Join(dir, DefaultDirName)
	m, err := ReadManifest(filepath.Join(aofDir, ManifestName(DefaultFileName)))
	require.NoError(t, err)
	require.NotNil(t, m.Base)
	want := byKey(parseSimple(t, readFile(t, filepath.Join(aofDir, m.Base.Name))))

	// The same streams, loaded from Redis's RDB, rewritten by us.
	ks := keyspace.New(16, keyspace.SystemClock{})
	f, err := os.Open(filepath.Join(dir, "dump.rdb"))
	require.NoError(t, err)
	defer f.Close()
	_, err = rdb.Load(f, rdb.DefaultLoadOptions(), func(db int, key string, e *keyspace.Entry) error {
		ks.Exec(func() { ks.DB(db).Put([]byte(key), e) })
		return nil
	})
	require.NoError(t, err)
	var snap *keyspace.Snapshot
	ks.Exec(func() { snap = ks.Snapshot() })
	defer snap.Release()
	var buf bytes.Buffer
	require.NoError(t, WriteCommands(&buf, snap, 16))
	got := byKey(parseSimple(t, buf.Bytes()))

	require.Len(t, got, 9)
	assert.Equal(t, want, got)
	for _, k := range []string{"0/s:empty", "0/s:maxlen0", "0/s:mkstream"} {
		assert.Equal(t, command{"XADD", k[2:], "MAXLEN", "0", "0-1", "x", "y"}, got[k][0], k)
	}
	assert.Equal(t, command{"PEXPIREAT", "s:ttl", fmt.Sprint(deadline)}, got["0/s:ttl"][len(got["0/s:ttl"])-1])
	assert.Contains(t, got["0/s:groups"], command{"XGROUP", "CREATECONSUMER", "s:groups", "g1", "carol"})
	assert.Contains(t, got["0/s:groups"], command{"XGROUP", "CREATE", "s:groups", "unknown", "100-9", "ENTRIESREAD", "-1"})
	claims := 0
	for _, c := range got["0/s:groups"] {
		if c[0] == "XCLAIM" {
			claims++
			require.Len(t, c, 12)
		}
	}
	assert.Equal(t, 16, claims, "g1's 14 pending entries and unknown's 2")
	assert.Equal(t, 250-100-2+1, len(got["0/s:nodes"]), "XADDs of the live entries, then XSETID")

	// redis-server loads our base into what it loads from its own
	// (which is not quite what it had: XCLAIM drops a pending entry whose
	// entry was deleted).
	own := t.TempDir()
	require.NoError(t, os.CopyFS(filepath.Join(own, DefaultDirName), os.DirFS(aofDir)))
	root := t.TempDir()
	w, err := OpenWriter(filepath.Join(root, DefaultDirName), DefaultFileName, nil, WriterOptions{Policy: Always,
		WriteBase: func(out io.Writer) error { return WriteCommands(out, snap, 16) }})
	require.NoError(t, err)
	require.NoError(t, w.Close())
	fromOwn := startRedis(t, own, "--appendonly", "yes")
	fromOurs := startRedis(t, root, "--appendonly", "yes")
	for key := range got {
		db, k, _ := strings.Cut(key, "/")
		ca := redis.NewClient(&redis.Options{Addr: fromOwn.proc.Addr, Protocol: 2, DB: int(db[0] - '0')})
		cb := redis.NewClient(&redis.Options{Addr: fromOurs.proc.Addr, Protocol: 2, DB: int(db[0] - '0')})
		for _, args := range [][]any{{"XRANGE", k, "-", "+"}, {"XINFO", "GROUPS", k}, {"XPENDING", k, "g1", "-", "+", 100}} {
			if args[0] == "XPENDING" && k != "s:groups" {
				continue
			}
			a, err := ca.Do(ctx, args...).Result()
			require.NoError(t, err, "%v", args)
			b, err := cb.Do(ctx, args...).Result()
			require.NoError(t, err, "%v", args)
			if args[0] == "XPENDING" {
				// The idle times differ; IDs, owners and counts do not.
				for _, x := range [][]any{a.([]any), b.([]any)} {
					for _, p := range x {
						p.([]any)[2] = nil
					}
				}
			}
			assert.Equal(t, a, b, "%v", args)
		}
		ca.Close()
		cb.Close()
	}
}

// TestWriteCommandsStream: the exact commands of a small stream and of
// an empty one, in rewriteStreamObject's order.
func TestWriteCommandsStream(t *testing.T) {
	ks := keyspace.New(16, keyspace.SystemClock{})
	ks.Exec(func() {
		s := keyspace.NewStream()
		b := func(ss ...string) [][]byte {
			out := make([][]byte, len(ss))
			for i, x := range ss {
				out[i] = []byte(x)
			}
			return out
		}
		s.Append(keyspace.StreamID{Ms: 1, Seq: 1}, b("f", "v", "n", "12"), 4096, 100)
		s.Append(keyspace.StreamID{Ms: 1, Seq: 2}, b("f", "w", "n", "-7"), 4096, 100)
		s.Append(keyspace.StreamID{Ms: 3, Seq: 0}, b("other", ""), 4096, 100)
		s.Delete(keyspace.StreamID{Ms: 1, Seq: 2})
		s.MaxDeletedID = keyspace.StreamID{Ms: 1, Seq: 2}
		g := s.CreateGroup([]byte("grp"), keyspace.StreamID{Ms: 3}, 3)
		g.CreateConsumer([]byte("zed"), 5)
		alice := g.CreateConsumer([]byte("alice"), 6)
		g.AddPending(keyspace.StreamID{Ms: 1, Seq: 1}, alice, 1700000000000)
		n := g.AddPending(keyspace.StreamID{Ms: 3}, alice, 1700000000001)
		n.DeliveryCount = 4
		s.CreateGroup([]byte("empty"), keyspace.StreamID{}, keyspace.InvalidEntriesRead)
		ks.DB(0).Put([]byte("s"), keyspace.NewObject(s, 0))

		e := keyspace.NewStream()
		e.LastID = keyspace.StreamID{Ms: 5, Seq: 5}
		e.EntriesAdded = 1
		ks.DB(1).Put([]byte("e"), keyspace.NewObject(e, 0))
	})
	var snap *keyspace.Snapshot
	ks.Exec(func() { snap = ks.Snapshot() })
	defer snap.Release()
	var buf bytes.Buffer
	require.NoError(t, WriteCommands(&buf, snap, 16))
	assert.Equal(t, []command{
		{"SELECT", "0"},
		{"XADD", "s", "1-1", "f", "v", "n", "12"},
		{"XADD", "s", "3-0", "other", ""},
		{"XSETID", "s", "3-0", "ENTRIESADDED", "3", "MAXDELETEDID", "1-2"},
		{"XGROUP", "CREATE", "s", "empty", "0-0", "ENTRIESREAD", "-1"},
		{"XGROUP", "CREATE", "s", "grp", "3-0", "ENTRIESREAD", "3"},
		{"XCLAIM", "s", "grp", "alice", "0", "1-1", "TIME", "1700000000000", "RETRYCOUNT", "1", "JUSTID", "FORCE"},
		{"XCLAIM", "s", "grp", "alice", "0", "3-0", "TIME", "1700000000001", "RETRYCOUNT", "4", "JUSTID", "FORCE"},
		{"XGROUP", "CREATECONSUMER", "s", "grp", "zed"},
		{"SELECT", "1"},
		{"XADD", "e", "MAXLEN", "0", "0-1", "x", "y"},
		{"XSETID", "e", "5-5", "ENTRIESADDED", "1", "MAXDELETEDID", "0-0"},
	}, parseSimple(t, buf.Bytes()))
}
