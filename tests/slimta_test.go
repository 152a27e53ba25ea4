package tests

// End-to-end tests of the client flows a mail queue (python-slimta) sends:
// RedisStorage (one hash per message plus a queue list) and the Lua-free
// storage spread over four databases at an offset. The flows run with
// go-redis against zredis and redis-server, and as raw RESP through the
// differential harness where the reply bytes are deterministic.

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	slimtaPrefix = "slimta:"
	slimtaQueue  = slimtaPrefix + "queue"
	// slimtaDB is the offset o of the four-database storage: ids and the
	// retry queue in o, meta hashes in o+1, bodies in o+2, locks in o+3.
	slimtaDB = 4
)

// slimtaEnvelope is a pickled-envelope stand-in: NUL, 0xFF, CR LF and
// other bytes a text protocol would mangle.
func slimtaEnvelope(id string) string {
	return "\x80\x04\x95" + id + "\x00\xff\r\n\x00sender@example.com\xff\xfe\x00"
}

// slimtaDiffPeer opens a second connection to each server of d.
func slimtaDiffPeer(t *testing.T, d *Diff) *Diff {
	t.Helper()
	return &Diff{t: t, Z: Dial(t, shared.z.Addr), R: Dial(t, shared.r.Addr)}
}

// slimtaDiffBatch sends cmds to both servers as one write each and
// requires identical raw replies, one per command.
func slimtaDiffBatch(t *testing.T, d *Diff, cmds ...[]string) []string {
	t.Helper()
	var raw []byte
	for _, c := range cmds {
		raw = append(raw, Encode(c...)...)
	}
	d.Z.Send(raw)
	d.R.Send(raw)
	out := make([]string, len(cmds))
	for i, c := range cmds {
		z, r := d.Z.Read(), d.R.Read()
		diffCases.Add(1)
		if z != r {
			t.Errorf("%q (in one write):\n zredis: %q\n  redis: %q", c, z, r)
		}
		out[i] = z
	}
	return out
}

// TestSlimtaRedisStorageDiff runs RedisStorage's commands as raw RESP on
// zredis and redis-server and compares every reply byte for byte.
func TestSlimtaRedisStorageDiff(t *testing.T) {
	d := NewDiff(t)
	ids := []string{"4f0c1e6a9b2d4c7e8f1a2b3c4d5e6f70", "a1b2c3d4e5f60718293a4b5c6d7e8f90"}
	for i, id := range ids {
		key := slimtaPrefix + id
		assert.Equal(t, ":1\r\n", d.Do("HSETNX", key, "envelope", slimtaEnvelope(id)))
		// A second HSETNX of an existing id does not overwrite it.
		assert.Equal(t, ":0\r\n", d.Do("HSETNX", key, "envelope", "other"))
		replies := slimtaDiffBatch(t, d,
			[]string{"MULTI"},
			[]string{"HMSET", key, "timestamp", "1700000000.25", "attempts", "0"},
			[]string{"RPUSH", slimtaQueue, slimtaEnvelope(id)},
			[]string{"EXEC"})
		assert.Equal(t, []string{"+OK\r\n", "+QUEUED\r\n", "+QUEUED\r\n"}, replies[:3])
		assert.Equal(t, fmt.Sprintf("*2\r\n+OK\r\n:%d\r\n", i+1), replies[3])
	}
	key := slimtaPrefix + ids[0]
	d.Do("HINCRBY", key, "attempts", "1")
	d.Do("HINCRBY", key, "attempts", "1")
	d.Do("HSET", key, "delivered_indexes", "\x80\x04]\x94(K\x00K\x02e.")
	d.Do("HSET", key, "timestamp", "1700000060.5")
	d.Do("HMGET", key, "timestamp", "attempts", "missing", "delivered_indexes")
	d.Do("HGET", key, "envelope")

	d.DoSorted("KEYS", slimtaPrefix+"*")
	for _, k := range append([]string{slimtaQueue}, slimtaPrefix+ids[0], slimtaPrefix+ids[1]) {
		d.Do("HGET", k, "envelope")
		d.Do("HGET", k, "timestamp")
	}
	assert.Equal(t, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n",
		d.Do("HGET", slimtaQueue, "envelope"))
	d.Do("HMGET", slimtaQueue, "timestamp", "attempts")
	d.Do("HINCRBY", slimtaQueue, "attempts", "1")

	d.Do("LRANGE", slimtaQueue, "0", "-1")
	d.Do("DEL", slimtaPrefix+ids[0])
	d.Do("DEL", slimtaPrefix+ids[0], slimtaPrefix+ids[1], slimtaQueue, slimtaPrefix+"missing")
	d.Do("KEYS", slimtaPrefix+"*")
	d.Do("DBSIZE")
}

// TestSlimtaRedisStorageGoRedis runs RedisStorage's flow with go-redis.
func TestSlimtaRedisStorageGoRedis(t *testing.T) {
	onBoth(t, func(t *testing.T, p *Proc) {
		ctx := context.Background()
		rdb := newGoRedis(t, p.Addr, 2)
		id := "0123456789abcdef0123456789abcdef"
		key := slimtaPrefix + id
		env := slimtaEnvelope(id)

		ok, err := rdb.HSetNX(ctx, key, "envelope", env).Result()
		require.NoError(t, err)
		require.True(t, ok)
		ok, err = rdb.HSetNX(ctx, key, "envelope", "x").Result()
		require.NoError(t, err)
		require.False(t, ok)

		var push *redis.IntCmd
		cmds, err := rdb.TxPipelined(ctx, func(pipe redis.Pipeliner) error {
			pipe.HMSet(ctx, key, "timestamp", "1700000000.25", "attempts", "0")
			push = pipe.RPush(ctx, slimtaQueue, env)
			return nil
		})
		require.NoError(t, err)
		require.Len(t, cmds, 2)
		require.Equal(t, int64(1), push.Val())

		require.Equal(t, int64(1), rdb.HIncrBy(ctx, key, "attempts", 1).Val())
		require.Equal(t, int64(0), rdb.HSet(ctx, key, "timestamp", "1700000099").Val())
		vals, err := rdb.HMGet(ctx, key, "timestamp", "attempts", "envelope", "nope").Result()
		require.NoError(t, err)
		require.Equal(t, []interface{}{"1700000099", "1", env, nil}, vals)

		keys, err := rdb.Keys(ctx, slimtaPrefix+"*").Result()
		require.NoError(t, err)
		require.ElementsMatch(t, []string{key, slimtaQueue}, keys)
		for _, k := range keys {
			v, err := rdb.HGet(ctx, k, "envelope").Result()
			if k == slimtaQueue {
				require.Error(t, err)
				require.Equal(t, "WRONGTYPE Operation against a key holding the wrong kind of value", err.Error())
				continue
			}
			require.NoError(t, err)
			require.Equal(t, env, v)
		}
		require.Equal(t, []string{env}, rdb.LRange(ctx, slimtaQueue, 0, -1).Val())
		require.Equal(t, int64(2), rdb.Del(ctx, key, slimtaQueue, slimtaPrefix+"gone").Val())
		require.Empty(t, rdb.Keys(ctx, slimtaPrefix+"*").Val())
	})
}

// slimtaWaitBlocked waits until INFO reports n blocked clients; when the
// server never does within 20 s, it goes on (the client has had ample
// time to block by then, even on a busy machine).
func slimtaWaitBlocked(t *testing.T, c *Conn, n int) {
	t.Helper()
	want := "blocked_clients:" + strconv.Itoa(n) + "\r\n"
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if strings.Contains(c.Do("INFO", "clients"), want) {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Logf("INFO never reported %q; going on after waiting 20s", want)
}

// TestSlimtaBLPOPOrder: two clients blocked in BLPOP <prefix>queue 0 are
// served one per push, in the order they blocked.
func TestSlimtaBLPOPOrder(t *testing.T) {
	onBoth(t, func(t *testing.T, p *Proc) {
		ctl := Dial(t, p.Addr)
		// BLPOP on a non-empty list answers at once.
		ctl.Do("RPUSH", slimtaPrefix+"probe", "x")
		require.Equal(t, "*2\r\n$12\r\nslimta:probe\r\n$1\r\nx\r\n", ctl.Do("BLPOP", slimtaPrefix+"probe", "0"))

		a, b := Dial(t, p.Addr), Dial(t, p.Addr)
		a.Send(Encode("BLPOP", slimtaQueue, "0"))
		slimtaWaitBlocked(t, ctl, 1)
		b.Send(Encode("BLPOP", slimtaQueue, "0"))
		slimtaWaitBlocked(t, ctl, 2)

		require.Equal(t, ":1\r\n", ctl.Do("RPUSH", slimtaQueue, "first\x00\xff"))
		require.Equal(t, "*2\r\n$12\r\nslimta:queue\r\n$7\r\nfirst\x00\xff\r\n", a.Read())
		if r, err := b.ReadErr(200 * time.Millisecond); err == nil || r != "" {
			t.Fatalf("the first push also woke the second client: %q %v", r, err)
		}
		require.Equal(t, ":0\r\n", ctl.Do("LLEN", slimtaQueue))

		require.Equal(t, ":1\r\n", ctl.Do("RPUSH", slimtaQueue, "second"))
		require.Equal(t, "*2\r\n$12\r\nslimta:queue\r\n$6\r\nsecond\r\n", b.Read())
		require.Equal(t, ":0\r\n", ctl.Do("EXISTS", slimtaQueue))

		// A push of two values with two waiters serves both, in order.
		a.Send(Encode("BLPOP", slimtaQueue, "0"))
		slimtaWaitBlocked(t, ctl, 1)
		b.Send(Encode("BLPOP", slimtaQueue, "0"))
		slimtaWaitBlocked(t, ctl, 2)
		require.Equal(t, ":2\r\n", ctl.Do("RPUSH", slimtaQueue, "m1", "m2"))
		require.Equal(t, "*2\r\n$12\r\nslimta:queue\r\n$2\r\nm1\r\n", a.Read())
		require.Equal(t, "*2\r\n$12\r\nslimta:queue\r\n$2\r\nm2\r\n", b.Read())
		require.Equal(t, ":0\r\n", ctl.Do("EXISTS", slimtaQueue))
	})
}

// slimtaClient is a go-redis client on database db.
func slimtaClient(t *testing.T, addr string, db int) *redis.Client {
	rdb := redis.NewClient(&redis.Options{
		Addr:         addr,
		DB:           db,
		Protocol:     2,
		DialTimeout:  5 * time.Second,
		ReadTimeout:  10 * time.Second,
		WriteTimeout: 10 * time.Second,
		MaxRetries:   -1,
	})
	t.Cleanup(func() { rdb.Close() })
	return rdb
}

// slimtaStore is the four-database storage: ids and the retry queue,
// meta hashes, bodies and locks, each a client on its own database.
type slimtaStore struct {
	ids, meta, body, lock *redis.Client
}

func newSlimtaStore(t *testing.T, addr string) *slimtaStore {
	return &slimtaStore{
		ids:  slimtaClient(t, addr, slimtaDB),
		meta: slimtaClient(t, addr, slimtaDB+1),
		body: slimtaClient(t, addr, slimtaDB+2),
		lock: slimtaClient(t, addr, slimtaDB+3),
	}
}

// newID adds a fresh id to message_ids, retrying while SADD answers 0 as
// the storage does on a uuid collision.
func (s *slimtaStore) newID(t *testing.T, ctx context.Context, candidates ...string) string {
	for _, id := range candidates {
		n, err := s.ids.SAdd(ctx, "message_ids", id).Result()
		require.NoError(t, err)
		if n == 1 {
			return id
		}
	}
	t.Fatal("no candidate id was free")
	return ""
}

// TestSlimtaFourDBStorage runs the Lua-free storage with go-redis.
func TestSlimtaFourDBStorage(t *testing.T) {
	body := make([]byte, 5<<20)
	_, err := rand.Read(body)
	require.NoError(t, err)

	onBoth(t, func(t *testing.T, p *Proc) {
		ctx := context.Background()
		s := newSlimtaStore(t, p.Addr)

		taken := "9f1c7a2e-5b3d-4e8f-a1b2-c3d4e5f60718"
		require.Equal(t, int64(1), s.ids.SAdd(ctx, "message_ids", taken).Val())
		id := s.newID(t, ctx, taken, taken, "1d2e3f40-5a6b-4c7d-8e9f-a0b1c2d3e4f5")
		require.Equal(t, "1d2e3f40-5a6b-4c7d-8e9f-a0b1c2d3e4f5", id)
		require.ElementsMatch(t, []string{taken, id}, s.ids.SMembers(ctx, "message_ids").Val())

		now := float64(time.Now().Unix())
		require.Equal(t, int64(1), s.ids.ZAdd(ctx, "retry_queue", redis.Z{Score: now - 10, Member: id}).Val())
		require.Equal(t, int64(1), s.ids.ZAdd(ctx, "retry_queue", redis.Z{Score: now + 3600, Member: taken}).Val())
		due, err := s.ids.ZRangeByScore(ctx, "retry_queue", &redis.ZRangeBy{
			Min: "-inf", Max: strconv.FormatFloat(now, 'f', -1, 64)}).Result()
		require.NoError(t, err)
		require.Equal(t, []string{id}, due)

		meta := map[string]string{
			"sender":     "a\x00b@example.com",
			"recipients": "[\"x@example.com\",\x00\"y@example.com\"]",
			"timestamp":  strconv.FormatFloat(now, 'f', 3, 64),
			"attempts":   "0",
			"client":     "\x00\xff\x00\r\n",
		}
		for f, v := range meta {
			require.Equal(t, int64(1), s.meta.HSet(ctx, id, f, v).Val(), f)
		}
		require.Equal(t, meta, s.meta.HGetAll(ctx, id).Val())
		require.Equal(t, int64(1), s.meta.HIncrBy(ctx, id, "attempts", 1).Val())

		require.NoError(t, s.body.Set(ctx, id, body, 0).Err())
		got, err := s.body.Get(ctx, id).Bytes()
		require.NoError(t, err)
		require.True(t, bytes.Equal(body, got), "5 MiB body differs after SET/GET")
		require.Equal(t, int64(len(body)), s.body.StrLen(ctx, id).Val())

		// Keys of one database are invisible from the others.
		require.Equal(t, int64(0), s.ids.Exists(ctx, id).Val())
		require.Equal(t, "hash", s.meta.Type(ctx, id).Val())
		require.Equal(t, "string", s.body.Type(ctx, id).Val())
		require.Equal(t, int64(0), s.lock.Exists(ctx, id).Val())

		// Delete: one MULTI spanning the four databases, on a dedicated
		// connection since SELECT inside it moves the connection.
		conn := s.ids.Conn()
		cmds, err := conn.TxPipelined(ctx, func(pipe redis.Pipeliner) error {
			pipe.SRem(ctx, "message_ids", id)
			pipe.ZRem(ctx, "retry_queue", id)
			pipe.Select(ctx, slimtaDB+1)
			pipe.Del(ctx, id)
			pipe.Select(ctx, slimtaDB+2)
			pipe.Del(ctx, id)
			pipe.Select(ctx, slimtaDB+3)
			pipe.Del(ctx, id)
			return nil
		})
		require.NoError(t, err)
		// Back to database o before the connection returns to the pool.
		require.NoError(t, conn.Select(ctx, slimtaDB).Err())
		require.NoError(t, conn.Close())
		want := []interface{}{int64(1), int64(1), "OK", int64(1), "OK", int64(1), "OK", int64(0)}
		for i, c := range cmds {
			switch c := c.(type) {
			case *redis.IntCmd:
				assert.Equal(t, want[i], c.Val(), "reply %d", i)
			case *redis.StatusCmd:
				assert.Equal(t, want[i], c.Val(), "reply %d", i)
			default:
				t.Fatalf("unexpected command type %T", c)
			}
		}
		require.Equal(t, []string{taken}, s.ids.SMembers(ctx, "message_ids").Val())
		require.Equal(t, []string{taken}, s.ids.ZRange(ctx, "retry_queue", 0, -1).Val())
		require.Equal(t, int64(0), s.meta.Exists(ctx, id).Val())
		require.Equal(t, int64(0), s.body.Exists(ctx, id).Val())
		require.Equal(t, int64(0), s.lock.Exists(ctx, id).Val())
	})
}

// slimtaLock takes the lock on id the storage's way: WATCH id, TTL id,
// then MULTI SETEX id 120 locked EXEC. between runs after TTL, before
// EXEC. It returns the TTL seen and the transaction's error.
func slimtaLock(ctx context.Context, rdb *redis.Client, id string, between func()) (time.Duration, error) {
	var ttl time.Duration
	err := rdb.Watch(ctx, func(tx *redis.Tx) error {
		var err error
		ttl, err = tx.TTL(ctx, id).Result()
		if err != nil {
			return err
		}
		if ttl != -2 {
			return errors.New("already locked")
		}
		if between != nil {
			between()
		}
		_, err = tx.TxPipelined(ctx, func(pipe redis.Pipeliner) error {
			pipe.SetEx(ctx, id, "locked", 120*time.Second)
			return nil
		})
		return err
	}, id)
	return ttl, err
}

// TestSlimtaLock: WATCH/TTL/MULTI/SETEX/EXEC locking, and a concurrent
// locker between WATCH and EXEC makes the first EXEC answer null.
func TestSlimtaLock(t *testing.T) {
	onBoth(t, func(t *testing.T, p *Proc) {
		ctx := context.Background()
		first := slimtaClient(t, p.Addr, slimtaDB+3)
		second := slimtaClient(t, p.Addr, slimtaDB+3)

		ttl, err := slimtaLock(ctx, first, "m1", nil)
		require.NoError(t, err)
		require.Equal(t, time.Duration(-2), ttl)
		require.Equal(t, "locked", first.Get(ctx, "m1").Val())
		d := second.TTL(ctx, "m1").Val()
		require.True(t, d > 100*time.Second && d <= 120*time.Second, "TTL %v", d)
		_, err = slimtaLock(ctx, second, "m1", nil)
		require.EqualError(t, err, "already locked")

		// The second locker takes m2 between the first's WATCH and EXEC.
		var inner error
		_, err = slimtaLock(ctx, first, "m2", func() {
			_, inner = slimtaLock(ctx, second, "m2", nil)
		})
		require.NoError(t, inner)
		require.ErrorIs(t, err, redis.TxFailedErr)
		require.Equal(t, "locked", first.Get(ctx, "m2").Val())

		// A write on another database to the same key name does not
		// touch the watched key.
		other := slimtaClient(t, p.Addr, slimtaDB)
		_, err = slimtaLock(ctx, first, "m3", func() {
			require.NoError(t, other.Set(ctx, "m3", "x", 0).Err())
		})
		require.NoError(t, err)
	})
}

// TestSlimtaLockDiff: the lock sequence as raw RESP, with and without a
// concurrent locker, compared with redis-server.
func TestSlimtaLockDiff(t *testing.T) {
	d := NewDiff(t)
	p := slimtaDiffPeer(t, d)
	db := strconv.Itoa(slimtaDB + 3)
	d.Do("SELECT", db)
	p.Do("SELECT", db)

	// Uncontended.
	d.Do("WATCH", "id1")
	assert.Equal(t, ":-2\r\n", d.Do("TTL", "id1"))
	d.Do("MULTI")
	d.Do("SETEX", "id1", "120", "locked")
	assert.Equal(t, "*1\r\n+OK\r\n", d.Do("EXEC"))
	d.Do("TTL", "id1")

	// The peer locks between WATCH and EXEC.
	d.Do("WATCH", "id2")
	d.Do("TTL", "id2")
	p.Do("WATCH", "id2")
	p.Do("TTL", "id2")
	slimtaDiffBatch(t, p, []string{"MULTI"}, []string{"SETEX", "id2", "120", "locked"}, []string{"EXEC"})
	d.Do("MULTI")
	d.Do("SETEX", "id2", "120", "locked")
	assert.Equal(t, nullArray(), d.Do("EXEC"))

	// After EXEC the connection watches nothing: a retry succeeds once
	// the key is gone.
	p.Do("DEL", "id2")
	d.Do("WATCH", "id2")
	d.Do("TTL", "id2")
	slimtaDiffBatch(t, d, []string{"MULTI"}, []string{"SETEX", "id2", "120", "locked"}, []string{"EXEC"})
	d.Do("GET", "id2")
}

// TestSlimtaDeleteDiff: the delete MULTI spanning four databases as raw
// RESP, with every reply compared with redis-server and every key gone.
func TestSlimtaDeleteDiff(t *testing.T) {
	d := NewDiff(t)
	o := func(i int) string { return strconv.Itoa(slimtaDB + i) }
	id := "1d2e3f40-5a6b-4c7d-8e9f-a0b1c2d3e4f5"
	keep := "9f1c7a2e-5b3d-4e8f-a1b2-c3d4e5f60718"

	d.Do("SELECT", o(0))
	d.Do("SADD", "message_ids", id, keep)
	d.Do("ZADD", "retry_queue", "1700000000", id, "1700000100", keep)
	d.Do("ZRANGEBYSCORE", "retry_queue", "-inf", "1700000050")
	d.Do("SELECT", o(1))
	d.Do("HSET", id, "sender", "a\x00b", "attempts", "0")
	d.Do("SELECT", o(2))
	d.Do("SET", id, "body\x00\xff\r\nbody")
	d.Do("SELECT", o(3))
	d.Do("SETEX", id, "120", "locked")
	d.Do("SELECT", o(0))

	d.Do("MULTI")
	d.Do("SREM", "message_ids", id)
	d.Do("ZREM", "retry_queue", id)
	d.Do("SELECT", o(1))
	d.Do("DEL", id)
	d.Do("SELECT", o(2))
	d.Do("DEL", id)
	d.Do("SELECT", o(3))
	d.Do("DEL", id)
	assert.Equal(t, "*8\r\n:1\r\n:1\r\n+OK\r\n:1\r\n+OK\r\n:1\r\n+OK\r\n:1\r\n", d.Do("EXEC"))

	// SELECT inside EXEC leaves the connection on the last database.
	d.Do("EXISTS", id)
	for i := 0; i < 4; i++ {
		d.Do("SELECT", o(i))
		assert.Equal(t, ":0\r\n", d.Do("EXISTS", id), "db %s", o(i))
		d.Do("DBSIZE")
	}
	d.Do("SELECT", o(0))
	d.Do("SMEMBERS", "message_ids")
	d.Do("ZRANGE", "retry_queue", "0", "-1", "WITHSCORES")

	// The same delete again, in one write, on keys already gone.
	slimtaDiffBatch(t, d,
		[]string{"MULTI"},
		[]string{"SREM", "message_ids", id},
		[]string{"ZREM", "retry_queue", id},
		[]string{"SELECT", o(1)}, []string{"DEL", id},
		[]string{"SELECT", o(2)}, []string{"DEL", id},
		[]string{"SELECT", o(3)}, []string{"DEL", id},
		[]string{"EXEC"})
}

// TestSlimtaQueueReconnects replays RedisStorage's queue while the
// Queue restarts its storage connections: consumers wait in BLPOP
// <prefix>queue 0 with go-redis; at each restart the connections that
// were blocked are closed and new ones open while messages are written
// (HSET of the envelope, then RPUSH of the id). Every message written is
// either received by a consumer or still in the queue: none is popped for
// a connection that was closed. redis-server notices a hang-up on its
// event loop, so its writer starts 20 ms after the restart, once the
// server counts the closed connections gone; zredis's at once.
func TestSlimtaQueueReconnects(t *testing.T) {
	onBoth(t, func(t *testing.T, p *Proc) {
		ctx := context.Background()
		gap := time.Duration(0)
		if p.Name == "redis" {
			gap = 20 * time.Millisecond
		}
		ctl := Dial(t, p.Addr)
		writer := slimtaClient(t, p.Addr, 0)
		received := make(chan string, 1<<12)
		const rounds, perRound, consumers = 15, 10, 3
		written := 0
		for round := 0; round < rounds; round++ {
			// The restart: the Queue's connections of the last round are
			// blocked (or about to be); they are closed, new ones open.
			var blocked []*Conn
			for i := 0; i < consumers; i++ {
				c := Dial(t, p.Addr)
				c.Send(Encode("BLPOP", slimtaQueue, "0"))
				blocked = append(blocked, c)
			}
			slimtaWaitBlocked(t, ctl, consumers)
			for _, c := range blocked {
				c.nc.Close()
			}
			time.Sleep(gap)
			if gap > 0 {
				// And no sooner than the server counts them gone,
				// however long a busy machine takes.
				slimtaWaitBlocked(t, ctl, 0)
			}
			live := make([]*redis.Client, consumers)
			done := make(chan struct{})
			for i := range live {
				live[i] = slimtaClient(t, p.Addr, 0)
				go func(rdb *redis.Client) {
					for {
						r, err := rdb.BLPop(ctx, 0, slimtaQueue).Result()
						if err != nil {
							return // closed at the end of the round
						}
						received <- r[1]
						select {
						case <-done:
							return
						default:
						}
					}
				}(live[i])
			}
			for i := 0; i < perRound; i++ {
				id := fmt.Sprintf("%d-%d", round, i)
				require.NoError(t, writer.HSet(ctx, slimtaPrefix+id, "envelope", slimtaEnvelope(id), "attempts", "0").Err())
				require.NoError(t, writer.RPush(ctx, slimtaQueue, id).Err())
				written++
			}
			// Wait until the live consumers took everything, then close
			// them (the next restart).
			deadline := time.Now().Add(30 * time.Second)
			for time.Now().Before(deadline) {
				if n, _ := writer.LLen(ctx, slimtaQueue).Result(); n == 0 && len(received) >= written {
					break
				}
				time.Sleep(5 * time.Millisecond)
			}
			close(done)
			for _, rdb := range live {
				rdb.Close()
			}
			slimtaWaitBlocked(t, ctl, 0)
		}
		seen := map[string]bool{}
		for len(received) > 0 {
			id := <-received
			assert.False(t, seen[id], "message %s received twice", id)
			seen[id] = true
		}
		left, err := writer.LRange(ctx, slimtaQueue, 0, -1).Result()
		require.NoError(t, err)
		for _, id := range left {
			seen[id] = true
		}
		assert.Equal(t, written, len(seen), "messages received or still queued, of %d written", written)
	})
}
