package aof

import (
	"context"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/zredis/zredis/keyspace"
)

// testKeyspace holds every type, with more than 64 elements where batching
// matters, binary data, integers, infinities and deadlines.
func testKeyspace() (*keyspace.Keyspace, int64) {
	ks := keyspace.New(16, keyspace.SystemClock{})
	deadline := time.Now().Add(time.Hour).UnixMilli()
	lim := keyspace.HashLimits{MaxEntries: 128, MaxValue: 64}
	ks.Exec(func() {
		db0, db9 := ks.DB(0), ks.DB(9)
		db0.Put([]byte("str"), keyspace.NewString([]byte("v\x00\r\n"), 0))
		db0.Put([]byte("ttl"), keyspace.NewString([]byte("12345"), deadline))
		l := keyspace.NewList()
		for i := 0; i < 150; i++ {
			l.Push(false, []byte(fmt.Sprintf("e%d", i)))
		}
		db0.Put([]byte("list"), keyspace.NewObject(l, 0))
		ints := keyspace.NewSet()
		for i := 0; i < 70; i++ {
			ints.Add([]byte(fmt.Sprint(i*3)), 512)
		}
		db9.Put([]byte("intset"), keyspace.NewObject(ints, deadline))
		strs := keyspace.NewSet()
		strs.Add([]byte("a"), 512)
		strs.Add([]byte("b\x00"), 512)
		db9.Put([]byte("set"), keyspace.NewObject(strs, 0))
		z := keyspace.NewZSet()
		for i := 0; i < 130; i++ {
			z.Set([]byte(fmt.Sprintf("m%d", i)), float64(i)/3, false)
		}
		z.Set([]byte("inf"), math.Inf(1), false)
		z.Set([]byte("-inf"), math.Inf(-1), false)
		db9.Put([]byte("zset"), keyspace.NewObject(z, 0))
		h := keyspace.NewHash()
		for i := 0; i < 100; i++ {
			h.Set([]byte(fmt.Sprintf("f%d", i)), []byte(fmt.Sprintf("v%d", i)), lim)
		}
		db0.Put([]byte("hash"), keyspace.NewObject(h, 0))
	})
	return ks, deadline
}

// TestWriteCommandsLoadsInRedis writes a keyspace snapshot as a commands
// base, lets redis-server load it, and reads every value back.
func TestWriteCommandsLoadsInRedis(t *testing.T) {
	needRedis(t, "redis-check-aof")
	ks, deadline := testKeyspace()
	var snap *keyspace.Snapshot
	ks.Exec(func() { snap = ks.Snapshot() })
	defer snap.Release()
	root := t.TempDir()
	w, err := OpenWriter(filepath.Join(root, DefaultDirName), DefaultFileName, nil, WriterOptions{Policy: Always,
		WriteBase: func(out io.Writer) error { return WriteCommands(out, snap, 16) }})
	require.NoError(t, err)
	require.NoError(t, w.Close())
	for _, c := range parseSimple(t, readFile(t, filepath.Join(root, DefaultDirName, BaseName(DefaultFileName, 1, false)))) {
		require.LessOrEqual(t, len(c), 2+2*rewriteItemsPerCmd, c[0]) // AOF_REWRITE_ITEMS_PER_CMD
	}

	srv := startRedis(t, root, "--appendonly", "yes")
	ctx := context.Background()
	c0 := redis.NewClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", srv.port)})
	defer c0.Close()
	c9 := redis.NewClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", srv.port), DB: 9})
	defer c9.Close()

	require.Equal(t, "v\x00\r\n", c0.Get(ctx, "str").Val())
	require.Equal(t, "12345", c0.Get(ctx, "ttl").Val())
	at, err := c0.Do(ctx, "PEXPIRETIME", "ttl").Int64()
	require.NoError(t, err)
	require.Equal(t, deadline, at)
	list := c0.LRange(ctx, "list", 0, -1).Val()
	require.Len(t, list, 150)
	require.Equal(t, "e149", list[149])
	require.Len(t, c0.HGetAll(ctx, "hash").Val(), 100)
	require.Equal(t, "v42", c0.HGet(ctx, "hash", "f42").Val())
	require.Equal(t, int64(70), c9.SCard(ctx, "intset").Val())
	require.Equal(t, "intset", c9.ObjectEncoding(ctx, "intset").Val())
	members := c9.SMembers(ctx, "set").Val()
	sort.Strings(members)
	require.Equal(t, []string{"a", "b\x00"}, members)
	zs := c9.ZRangeWithScores(ctx, "zset", 0, -1).Val()
	require.Len(t, zs, 132)
	require.Equal(t, redis.Z{Score: math.Inf(-1), Member: "-inf"}, zs[0])
	require.Equal(t, redis.Z{Score: float64(100) / 3, Member: "m100"}, zs[101])
	require.Equal(t, redis.Z{Score: math.Inf(1), Member: "inf"}, zs[131])
	require.Equal(t, int64(4), c0.DBSize(ctx).Val())
	require.Equal(t, int64(3), c9.DBSize(ctx).Val())
}
