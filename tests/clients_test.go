package tests

// Real clients against zredis: go-redis v9 (over RESP2 and RESP3) and
// redis-cli. Each scenario runs against zredis and, as a check of the
// scenario's own expectations, against a real redis-server.

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// onBoth runs fn as a subtest against a fresh zredis and a fresh
// redis-server (skipped when redis-server is not installed).
func onBoth(t *testing.T, fn func(t *testing.T, p *Proc)) {
	t.Run("zredis", func(t *testing.T) { fn(t, StartZredis(t)) })
	t.Run("redis", func(t *testing.T) { fn(t, StartRedis(t)) })
}

func TestGoRedis(t *testing.T) {
	for _, proto := range []int{2, 3} {
		t.Run(fmt.Sprintf("RESP%d", proto), func(t *testing.T) {
			onBoth(t, func(t *testing.T, p *Proc) { goRedisScenario(t, p.Addr, proto) })
		})
	}
}

func newGoRedis(t *testing.T, addr string, proto int) *redis.Client {
	rdb := redis.NewClient(&redis.Options{
		Addr:         addr,
		Protocol:     proto,
		DialTimeout:  5 * time.Second,
		ReadTimeout:  10 * time.Second,
		WriteTimeout: 10 * time.Second,
		MaxRetries:   -1, // a failure must show, not be retried away
	})
	t.Cleanup(func() { rdb.Close() })
	return rdb
}

func goRedisScenario(t *testing.T, addr string, proto int) {
	ctx := context.Background()
	rdb := newGoRedis(t, addr, proto)

	require.Equal(t, "PONG", rdb.Ping(ctx).Val())

	t.Run("SetGet", func(t *testing.T) {
		require.NoError(t, rdb.Set(ctx, "s", "hello", 0).Err())
		assert.Equal(t, "hello", rdb.Get(ctx, "s").Val())
		_, err := rdb.Get(ctx, "missing").Result()
		assert.ErrorIs(t, err, redis.Nil)

		bin := "a\x00b\r\n\xff\xfe end"
		require.NoError(t, rdb.Set(ctx, "bin", bin, 0).Err())
		assert.Equal(t, bin, rdb.Get(ctx, "bin").Val())

		ok, err := rdb.SetNX(ctx, "s", "other", 0).Result()
		require.NoError(t, err)
		assert.False(t, ok)
		ok, err = rdb.SetNX(ctx, "nx", "v", time.Minute).Result()
		require.NoError(t, err)
		assert.True(t, ok)
	})

	t.Run("SetExpiration", func(t *testing.T) {
		// Whole seconds go out as SET ... EX, the rest as SET ... PX.
		require.NoError(t, rdb.Set(ctx, "ex", "v", 100*time.Second).Err())
		ttl := rdb.TTL(ctx, "ex").Val()
		assert.True(t, ttl > 0 && ttl <= 100*time.Second, "TTL %v", ttl)

		require.NoError(t, rdb.Set(ctx, "px", "v", 100500*time.Millisecond).Err())
		pttl := rdb.PTTL(ctx, "px").Val()
		assert.True(t, pttl > 0 && pttl <= 100500*time.Millisecond, "PTTL %v", pttl)

		require.NoError(t, rdb.Set(ctx, "ex", "v2", redis.KeepTTL).Err())
		ttl = rdb.TTL(ctx, "ex").Val()
		assert.True(t, ttl > 0 && ttl <= 100*time.Second, "TTL after KEEPTTL %v", ttl)
		assert.Equal(t, "v2", rdb.Get(ctx, "ex").Val())

		require.NoError(t, rdb.SetEx(ctx, "setex", "v", time.Hour).Err())
		ttl = rdb.TTL(ctx, "setex").Val()
		assert.True(t, ttl > 0 && ttl <= time.Hour, "TTL after SETEX %v", ttl)

		err := rdb.Set(ctx, "bad", "v", -time.Second).Err()
		// go-redis sends a negative expiration as no expiration at all.
		assert.NoError(t, err)
		assert.Equal(t, time.Duration(-1), rdb.TTL(ctx, "bad").Val())
	})

	t.Run("Incr", func(t *testing.T) {
		assert.Equal(t, int64(1), rdb.Incr(ctx, "n").Val())
		assert.Equal(t, int64(2), rdb.Incr(ctx, "n").Val())
		require.NoError(t, rdb.Set(ctx, "n", "41", 0).Err())
		assert.Equal(t, int64(42), rdb.Incr(ctx, "n").Val())
		err := rdb.Incr(ctx, "s").Err()
		require.Error(t, err)
		assert.Equal(t, "ERR value is not an integer or out of range", err.Error())
		require.NoError(t, rdb.Set(ctx, "max", strconv.FormatInt(1<<63-1, 10), 0).Err())
		err = rdb.Incr(ctx, "max").Err()
		require.Error(t, err)
		assert.Equal(t, "ERR increment or decrement would overflow", err.Error())
	})

	t.Run("MSetMGet", func(t *testing.T) {
		require.NoError(t, rdb.MSet(ctx, "a", "1", "b", "2").Err())
		assert.Equal(t, []any{"1", "2", nil}, rdb.MGet(ctx, "a", "b", "nope").Val())
		require.NoError(t, rdb.MSet(ctx, map[string]any{"c": "3"}).Err())
		assert.Equal(t, []any{"3"}, rdb.MGet(ctx, "c").Val())
	})

	t.Run("DelExists", func(t *testing.T) {
		require.NoError(t, rdb.MSet(ctx, "d1", "x", "d2", "y").Err())
		assert.Equal(t, int64(3), rdb.Exists(ctx, "d1", "nope", "d2", "d1").Val())
		assert.Equal(t, int64(2), rdb.Del(ctx, "d1", "d2", "nope").Val())
		assert.Equal(t, int64(0), rdb.Exists(ctx, "d1", "d2").Val())
	})

	t.Run("ExpireTTL", func(t *testing.T) {
		require.NoError(t, rdb.Set(ctx, "e", "v", 0).Err())
		assert.Equal(t, time.Duration(-1), rdb.TTL(ctx, "e").Val())
		assert.True(t, rdb.Expire(ctx, "e", 50*time.Second).Val())
		ttl := rdb.TTL(ctx, "e").Val()
		assert.True(t, ttl > 0 && ttl <= 50*time.Second, "TTL %v", ttl)
		assert.False(t, rdb.Expire(ctx, "nope", 50*time.Second).Val())
		assert.Equal(t, time.Duration(-2), rdb.TTL(ctx, "nope").Val())
		// A non-positive TTL deletes the key.
		assert.True(t, rdb.Expire(ctx, "e", -time.Second).Val())
		assert.Equal(t, int64(0), rdb.Exists(ctx, "e").Val())
	})

	t.Run("KeysScan", func(t *testing.T) {
		want := map[string]bool{}
		pipe := rdb.Pipeline()
		for i := 0; i < 300; i++ {
			k := fmt.Sprintf("scan:%d", i)
			want[k] = true
			pipe.Set(ctx, k, i, 0)
		}
		pipe.Set(ctx, "other:1", "x", 0)
		_, err := pipe.Exec(ctx)
		require.NoError(t, err)

		keys, err := rdb.Keys(ctx, "scan:1?").Result()
		require.NoError(t, err)
		sort.Strings(keys)
		var wantKeys []string
		for i := 10; i < 20; i++ {
			wantKeys = append(wantKeys, fmt.Sprintf("scan:%d", i))
		}
		assert.Equal(t, wantKeys, keys)

		got := map[string]bool{}
		iter := rdb.Scan(ctx, 0, "scan:*", 50).Iterator()
		for iter.Next(ctx) {
			got[iter.Val()] = true
		}
		require.NoError(t, iter.Err())
		assert.Equal(t, want, got)
	})

	t.Run("TypeRename", func(t *testing.T) {
		require.NoError(t, rdb.Set(ctx, "r1", "v", 0).Err())
		assert.Equal(t, "string", rdb.Type(ctx, "r1").Val())
		assert.Equal(t, "none", rdb.Type(ctx, "nope").Val())
		require.NoError(t, rdb.Rename(ctx, "r1", "r2").Err())
		assert.Equal(t, "v", rdb.Get(ctx, "r2").Val())
		assert.Equal(t, int64(0), rdb.Exists(ctx, "r1").Val())
		err := rdb.Rename(ctx, "nope", "x").Err()
		require.Error(t, err)
		assert.Equal(t, "ERR no such key", err.Error())
	})

	t.Run("Pipeline", func(t *testing.T) {
		pipe := rdb.Pipeline()
		set := pipe.Set(ctx, "p", "10", 0)
		incr := pipe.Incr(ctx, "p")
		get := pipe.Get(ctx, "p")
		bad := pipe.Incr(ctx, "s") // "s" holds "hello"
		miss := pipe.Get(ctx, "missing")
		ping := pipe.Ping(ctx)
		_, err := pipe.Exec(ctx)
		require.Error(t, err) // the first failed command's error
		assert.Equal(t, "OK", set.Val())
		assert.Equal(t, int64(11), incr.Val())
		assert.Equal(t, "11", get.Val())
		assert.EqualError(t, bad.Err(), "ERR value is not an integer or out of range")
		assert.ErrorIs(t, miss.Err(), redis.Nil)
		assert.Equal(t, "PONG", ping.Val())
	})

	t.Run("TxPipeline", func(t *testing.T) {
		var incr *redis.IntCmd
		_, err := rdb.TxPipelined(ctx, func(pipe redis.Pipeliner) error {
			pipe.Set(ctx, "tx", "1", 0)
			incr = pipe.Incr(ctx, "tx")
			return nil
		})
		require.NoError(t, err)
		assert.Equal(t, int64(2), incr.Val())
	})
}

// ---- redis-cli --------------------------------------------------------------

// requireRedisCLI returns redis-cli (Debian package redis-tools), or
// ends the test as RequireTool does.
func requireRedisCLI(t *testing.T) string {
	t.Helper()
	return RequireTool(t, "redis-cli")
}

// cli runs redis-cli against p with args, stdin as its input, and returns
// its standard output. A non-zero exit fails the test.
func cli(t *testing.T, p *Proc, stdin []byte, args ...string) string {
	t.Helper()
	bin := requireRedisCLI(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	full := append([]string{"-h", "127.0.0.1", "-p", strconv.Itoa(p.Port)}, args...)
	cmd := exec.CommandContext(ctx, bin, full...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	if err := cmd.Run(); err != nil {
		t.Fatalf("redis-cli %q: %v\nstdout: %q\nstderr: %q", args, err, out.String(), errb.String())
	}
	return out.String()
}

func TestRedisCLI(t *testing.T) {
	requireRedisCLI(t)
	onBoth(t, redisCLIScenario)
}

func redisCLIScenario(t *testing.T, p *Proc) {
	t.Run("SetGet", func(t *testing.T) {
		// Without a terminal redis-cli prints replies raw, one per line.
		assert.Equal(t, "OK\n", cli(t, p, nil, "SET", "k", "hello world"))
		assert.Equal(t, "hello world\n", cli(t, p, nil, "GET", "k"))
		assert.Equal(t, "\n", cli(t, p, nil, "GET", "missing"))
		assert.Equal(t, "1\n", cli(t, p, nil, "INCR", "counter"))
	})

	t.Run("BinaryStdin", func(t *testing.T) {
		val := []byte("a\x00b\r\nc\xff\x01\"quoted\"\n")
		assert.Equal(t, "OK\n", cli(t, p, val, "-x", "SET", "bin"))
		c := Dial(t, p.Addr)
		assert.Equal(t, fmt.Sprintf("$%d\r\n%s\r\n", len(val), val), c.Do("GET", "bin"))
		assert.Equal(t, string(val)+"\n", cli(t, p, nil, "--raw", "GET", "bin"))
	})

	t.Run("ScanPattern", func(t *testing.T) {
		c := Dial(t, p.Addr)
		var req bytes.Buffer
		want := map[string]bool{}
		for i := 0; i < 1000; i++ {
			k := fmt.Sprintf("cli:key:%d", i)
			want[k] = true
			req.Write(Encode("SET", k, strconv.Itoa(i)))
		}
		for i := 0; i < 100; i++ {
			req.Write(Encode("SET", fmt.Sprintf("cli:other:%d", i), "x"))
		}
		c.Send(req.Bytes())
		for i := 0; i < 1100; i++ {
			require.Equal(t, "+OK\r\n", c.Read())
		}
		out := cli(t, p, nil, "--scan", "--pattern", "cli:key:*")
		got := map[string]bool{}
		for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
			got[l] = true // SCAN may return a key more than once
		}
		assert.Equal(t, want, got)
	})

	t.Run("Info", func(t *testing.T) {
		out := cli(t, p, nil, "INFO")
		for _, sec := range []string{"Server", "Clients", "Memory", "Persistence", "Stats",
			"Replication", "CPU", "Modules", "Errorstats", "Cluster", "Keyspace"} {
			assert.Contains(t, out, "# "+sec+"\r\n", "INFO has no %s section", sec)
		}
		assert.Contains(t, out, "redis_version:")
	})

	t.Run("CommandDocs", func(t *testing.T) {
		out := cli(t, p, nil, "--raw", "COMMAND", "DOCS", "get")
		require.NotEmpty(t, strings.TrimSpace(out))
		assert.True(t, strings.HasPrefix(out, "get\n"), "COMMAND DOCS get: %q", out)
		assert.Contains(t, out, "\nsummary\n")
	})

	t.Run("Repeat", func(t *testing.T) {
		assert.Equal(t, "PONG\nPONG\nPONG\n", cli(t, p, nil, "-r", "3", "PING"))
	})
}

// TestGoRedisConcurrent drives zredis from many go-redis connections at
// once; every increment must be counted exactly once.
func TestGoRedisConcurrent(t *testing.T) {
	p := StartZredis(t)
	ctx := context.Background()
	rdb := newGoRedis(t, p.Addr, 2)
	const workers, each = 20, 200
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		go func() {
			for i := 0; i < each; i++ {
				if err := rdb.Incr(ctx, "shared").Err(); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for w := 0; w < workers; w++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	assert.Equal(t, strconv.Itoa(workers*each), rdb.Get(ctx, "shared").Val())
}

// redis-cli -3 speaks RESP3 and prints its types (maps, sets, doubles,
// nulls, booleans, verbatim strings) as it does for redis-server.
func TestRedisCLIResp3Diff(t *testing.T) {
	requireRedisCLI(t)
	z, r := StartZredis(t), StartRedis(t)
	for _, p := range []*Proc{z, r} {
		c := Dial(t, p.Addr)
		c.Do("HSET", "h", "a", "1")
		c.Do("SADD", "s", "x")
		c.Do("ZADD", "z", "1.5", "m")
		c.Do("SET", "k", "v")
	}
	for _, args := range [][]string{
		{"HGETALL", "h"}, {"SMEMBERS", "s"}, {"ZSCORE", "z", "m"}, {"ZRANGE", "z", "0", "-1", "WITHSCORES"},
		{"GET", "nokey"}, {"GET", "k"}, {"CONFIG", "GET", "maxmemory"}, {"COMMAND", "INFO", "get"},
		{"EVAL", "return redis.setresp(3) or redis.call('EXISTS', 'k') == 1", "0"},
		{"DEBUG", "PROTOCOL", "true"}, {"CLIENT", "TRACKINGINFO"}, {"XINFO", "HELP"},
	} {
		for _, mode := range [][]string{{"-3"}, {"-3", "--no-raw"}} {
			a := append(append([]string{}, mode...), args...)
			assert.Equal(t, cli(t, r, nil, a...), cli(t, z, nil, a...), "redis-cli %q", a)
		}
	}
}
