package tests

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// The acknowledged mode: with expiry-stream-key, a consumer group
// receives every expired key with its value, acknowledges with XACK, and
// the entries of a consumer that died mid-batch are claimed by another
// with XAUTOCLAIM. The stream is a key like any other: in the AOF across
// a restart, on a replica, and it never expires itself.
func TestExpiryStreamKeyConsumerGroup(t *testing.T) {
	dir := t.TempDir()
	args := []string{"--dir", dir, "--save", "", "--appendonly", "yes", "--expiry-stream-key", "expiries",
		"--expiry-stream-maxlen", "100000", "--expiry-zmq-types", "string", "hash"}
	z := StartZredis(t, args...)
	rep := StartZredis(t, "--replicaof", "127.0.0.1", strconv.Itoa(z.Port))
	ctx := context.Background()
	c := goRedis(t, z.Addr, 0)
	require.NoError(t, c.XGroupCreateMkStream(ctx, "expiries", "archivers", "$").Err())

	const n = 2000
	setExpiring(t, z.Addr, n, time.Second, 100*time.Millisecond)
	require.NoError(t, c.HSet(ctx, "mail:1", "from", "a@example.org", "body", "hi\x00there").Err())
	require.NoError(t, c.PExpire(ctx, "mail:1", 300*time.Millisecond).Err())
	require.NoError(t, c.Expire(ctx, "expiries", time.Second).Err(), "the stream key given a TTL")

	// A consumer reads a batch and dies without acknowledging it.
	require.Eventually(t, func() bool { return c.XLen(ctx, "expiries").Val() >= 50 }, 30*time.Second, time.Millisecond)
	dead, err := c.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "archivers", Consumer: "dead", Streams: []string{"expiries", ">"}, Count: 50, Block: -1}).Result()
	require.NoError(t, err)
	require.Len(t, dead[0].Messages, 50)

	got := map[string]map[string]any{}
	take := func(msgs []redis.XMessage) {
		for _, m := range msgs {
			got[m.Values["key"].(string)] = m.Values
			require.NoError(t, c.XAck(ctx, "expiries", "archivers", m.ID).Err())
		}
	}
	deadline := time.Now().Add(60 * time.Second)
	for len(got) < n+1-50 && time.Now().Before(deadline) {
		res, err := c.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "archivers", Consumer: "alive", Streams: []string{"expiries", ">"}, Count: 100, Block: 2 * time.Second}).Result()
		if err == redis.Nil {
			continue
		}
		require.NoError(t, err)
		take(res[0].Messages)
	}
	// The dead consumer's entries go to the live one.
	time.Sleep(200 * time.Millisecond)
	claimed, _, err := c.XAutoClaim(ctx, &redis.XAutoClaimArgs{Stream: "expiries", Group: "archivers", Consumer: "alive", MinIdle: 100 * time.Millisecond, Start: "0", Count: 100}).Result()
	require.NoError(t, err)
	require.Len(t, claimed, 50)
	take(claimed)

	require.Len(t, got, n+1, "every expired key, once")
	for i := range n {
		v := got["k:"+strconv.Itoa(i)]
		require.NotNil(t, v, "k:%d", i)
		require.Equal(t, `"value-`+strconv.Itoa(i)+`"`, v["value"])
		require.Equal(t, "string", v["type"])
		require.Equal(t, "0", v["db"])
	}
	mail := got["mail:1"]
	require.Equal(t, "hash", mail["type"])
	require.JSONEq(t, `{"from":"a@example.org","body":"hi\u0000there"}`, mail["value"].(string))
	require.Regexp(t, `^[0-9]+-[0-9a-f]{16}$`, mail["id"])
	pending, err := c.XPending(ctx, "expiries", "archivers").Result()
	require.NoError(t, err)
	require.Zero(t, pending.Count)

	require.Equal(t, time.Duration(-1), c.TTL(ctx, "expiries").Val(), "the stream key never expires")
	info := infoExpiry(t, Dial(t, z.Addr))
	require.Equal(t, strconv.Itoa(n+1), info["expiry_stream_appended"])
	// The replica has the same entries; the AOF brings them back.
	rc := goRedis(t, rep.Addr, 0)
	require.Eventually(t, func() bool { return rc.XLen(ctx, "expiries").Val() == int64(n+1) }, 30*time.Second, 10*time.Millisecond)
	z.Stop()
	z2 := StartZredis(t, args...)
	c2 := goRedis(t, z2.Addr, 0)
	require.Equal(t, int64(n+1), c2.XLen(ctx, "expiries").Val())
	groups, err := c2.XInfoGroups(ctx, "expiries").Result()
	require.NoError(t, err)
	require.Zero(t, groups[0].Pending)
}

// expiry-stream-maxlen trims the oldest entries; a key of another type
// under the stream key's name is left alone and counted.
func TestExpiryStreamKeyCapAndWrongType(t *testing.T) {
	z := StartZredis(t, "--expiry-stream-key", "expiries", "--expiry-stream-maxlen", "10")
	ctl := Dial(t, z.Addr)
	setExpiring(t, z.Addr, 50, 50*time.Millisecond, 0)
	waitInfo(t, ctl, "expired_keys", "50", 30*time.Second)
	require.Equal(t, ":10\r\n", ctl.Do("XLEN", "expiries"))

	ctl.Do("DEL", "expiries")
	ctl.Do("SET", "expiries", "not a stream")
	ctl.Do("SET", "k", "v", "PX", "1")
	waitInfo(t, ctl, "expiry_stream_refused", "1", 30*time.Second)
	require.Equal(t, "$12\r\nnot a stream\r\n", ctl.Do("GET", "expiries"))
	require.Contains(t, z.Output(), "expiry-stream-key expiries holds a string, not a stream")
}
