package tests

import (
	"errors"
	"net"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Differential tests of the Pub/Sub commands: replies (errors and
// subscribed-mode rules included), messages, PUBSUB introspection, and
// the output limit that disconnects a subscriber that does not read.

// psPair is a zredis and a redis-server started for one test, so that
// PUBSUB CHANNELS and NUMPAT see only the test's own subscribers.
type psPair struct {
	t    *testing.T
	z, r *Proc
}

func newPSPair(t *testing.T) *psPair {
	r := StartRedis(t) // skips when redis-server is not installed
	return &psPair{t: t, z: StartZredis(t), r: r}
}

// psConns is one connection to each server of a pair.
type psConns struct {
	t    *testing.T
	z, r *Conn
}

func (p *psPair) dial() *psConns {
	return &psConns{t: p.t, z: Dial(p.t, p.z.Addr), r: Dial(p.t, p.r.Addr)}
}

// do sends a command to both servers, reads n replies from each and
// requires them identical.
func (c *psConns) do(n int, args ...string) {
	c.t.Helper()
	c.z.Send(Encode(args...))
	c.r.Send(Encode(args...))
	c.read(n, args)
}

// read reads n replies from each server and requires them identical.
func (c *psConns) read(n int, what any) {
	c.t.Helper()
	for i := 0; i < n; i++ {
		z, r := c.z.Read(), c.r.Read()
		diffCases.Add(1)
		if z != r {
			c.t.Errorf("%q, reply %d:\n zredis: %q\n  redis: %q", what, i+1, z, r)
		}
	}
}

// readSorted reads n replies from each server and requires the same
// replies in any order (messages through several patterns: Redis walks
// its patterns in hash order).
func (c *psConns) readSorted(n int, what any) {
	c.t.Helper()
	var z, r []string
	for i := 0; i < n; i++ {
		z, r = append(z, c.z.Read()), append(r, c.r.Read())
	}
	sort.Strings(z)
	sort.Strings(r)
	diffCases.Add(1)
	if strings.Join(z, "") != strings.Join(r, "") {
		c.t.Errorf("%q (unordered):\n zredis: %q\n  redis: %q", what, z, r)
	}
}

// doSorted is do for one array reply whose order is unspecified.
func (c *psConns) doSorted(args ...string) {
	c.t.Helper()
	z, r := c.z.Do(args...), c.r.Do(args...)
	diffCases.Add(1)
	if sortedElems(z) != sortedElems(r) {
		c.t.Errorf("%q (unordered):\n zredis: %q\n  redis: %q", args, z, r)
	}
}

func TestPubSubRepliesDiff(t *testing.T) {
	p := newPSPair(t)
	c := p.dial()
	// Arity and subcommand errors, and the commands that answer when
	// nothing is subscribed.
	for _, args := range [][]string{
		{"SUBSCRIBE"}, {"PSUBSCRIBE"}, {"SSUBSCRIBE"}, {"PUBLISH", "a"}, {"PUBLISH", "a", "b", "c"},
		{"SPUBLISH", "a"}, {"PUBSUB"}, {"PUBSUB", "NUMPAT", "x"}, {"PUBSUB", "HELP", "x"},
		{"PUBSUB", "FOO"}, {"PUBSUB", "CHANNELS", "a", "b"}, {"PUBSUB", "SHARDCHANNELS", "a", "b"},
		{"PUBSUB", "help"}, {"PUBSUB", "NUMPAT"}, {"PUBSUB", "NUMSUB"}, {"PUBSUB", "NUMSUB", "a", "b"},
		{"PUBSUB", "SHARDNUMSUB", "a"}, {"PUBSUB", "CHANNELS"}, {"PUBSUB", "SHARDCHANNELS", "*"},
		{"UNSUBSCRIBE"}, {"PUNSUBSCRIBE"}, {"SUNSUBSCRIBE"}, {"UNSUBSCRIBE", "a", "b"},
		{"PUBLISH", "a", "b"}, {"SPUBLISH", "a", "b"},
	} {
		c.do(1, args...)
	}
	if t.Failed() {
		return
	}

	// A subscribed RESP2 connection runs only the pub/sub commands, PING,
	// QUIT and RESET.
	c.do(3, "SUBSCRIBE", "a", "b", "a")
	c.do(2, "PSUBSCRIBE", "x*", "y?")
	c.do(1, "PING")
	c.do(1, "PING", "hello")
	c.do(1, "PING", "a", "b")
	c.do(1, "GET", "k")
	c.do(1, "CLIENT", "LIST")
	c.do(1, "PUBLISH", "a", "m")
	c.do(1, "SUBSCRIBE")
	c.do(1, "NOSUCHCOMMAND")
	c.do(2, "SSUBSCRIBE", "s1", "s2")
	c.do(2, "UNSUBSCRIBE", "a", "c")
	c.do(1, "PUNSUBSCRIBE", "y?")
	c.do(1, "PUNSUBSCRIBE")
	c.do(1, "UNSUBSCRIBE", "b")
	c.do(1, "GET", "k") // shard channels still hold the connection in Pub/Sub mode
	c.do(1, "SUNSUBSCRIBE", "s1")
	c.do(1, "SUNSUBSCRIBE")
	c.do(1, "GET", "k")
	c.do(1, "PSUBSCRIBE", "p")
	c.do(1, "UNSUBSCRIBE") // nothing to leave, but a pattern still counts
	c.do(1, "RESET")
	c.do(1, "PING")
	c.do(1, "PUBSUB", "NUMPAT")

	// Inside MULTI: SUBSCRIBE runs at EXEC, SSUBSCRIBE is refused.
	c.do(1, "MULTI")
	c.do(1, "SUBSCRIBE", "m")
	c.do(1, "SSUBSCRIBE", "m")
	c.do(1, "EXEC")
	c.do(1, "PING")
	c.do(1, "MULTI")
	c.do(1, "QUIT")
}

// CLIENT REPLY OFF and SKIP silence replies, but not what is pushed:
// the confirmations of (P)SUBSCRIBE and UNSUBSCRIBE, and the messages
// (pubsub.tcl's keyspace notification tests read them so).
func TestPubSubUnderClientReplyOff(t *testing.T) {
	p := newPSPair(t)
	off, skip, pub := p.dial(), p.dial(), p.dial()
	off.do(0, "CLIENT", "REPLY", "OFF")
	off.do(1, "PSUBSCRIBE", "ch*")
	off.do(1, "SUBSCRIBE", "chan")
	skip.do(0, "CLIENT", "REPLY", "SKIP")
	skip.do(1, "SUBSCRIBE", "chan")
	pub.do(1, "PUBLISH", "chan", "hi")
	off.readSorted(2, "message and pmessage")
	skip.read(1, "message")
	off.do(1, "UNSUBSCRIBE", "chan")
	off.do(1, "PUNSUBSCRIBE")
	// Inside EXEC, the confirmation alone goes out.
	tx := p.dial()
	tx.do(0, "CLIENT", "REPLY", "OFF")
	tx.do(0, "MULTI")
	tx.do(0, "SUBSCRIBE", "ch")
	tx.do(0, "PING")
	tx.do(1, "EXEC")
}

func TestPubSubMessagesDiff(t *testing.T) {
	p := newPSPair(t)
	sub1, sub2, pub := p.dial(), p.dial(), p.dial()
	sub1.do(2, "SUBSCRIBE", "news", "sport")
	sub1.do(2, "PSUBSCRIBE", "n*", "*s")
	sub2.do(1, "SUBSCRIBE", "news")
	sub2.do(1, "SSUBSCRIBE", "news")

	pub.do(1, "PUBLISH", "news", "hello") // sub1: news, n*, *s; sub2: news
	sub1.read(1, "message on news")
	sub1.readSorted(2, "pmessages on news")
	sub2.read(1, "message on news")
	pub.do(1, "PUBLISH", "nope", "x") // sub1 through n*
	sub1.read(1, "pmessage on nope")
	pub.do(1, "PUBLISH", "other", "x")
	pub.do(1, "SPUBLISH", "news", "sharded")
	sub2.read(1, "smessage")
	pub.do(1, "PUBLISH", "news", "")
	pub.do(1, "PUBLISH", "news", "bin\x00\xff\r\n")
	sub1.read(1, "empty message")
	sub1.readSorted(2, "empty pmessages")
	sub1.read(1, "binary message")
	sub1.readSorted(2, "binary pmessages")
	sub2.read(2, "binary messages")

	pub.doSorted("PUBSUB", "CHANNELS")
	pub.doSorted("PUBSUB", "CHANNELS", "n*")
	pub.doSorted("PUBSUB", "SHARDCHANNELS")
	pub.do(1, "PUBSUB", "NUMSUB", "news", "sport", "none")
	pub.do(1, "PUBSUB", "SHARDNUMSUB", "news", "none")
	pub.do(1, "PUBSUB", "NUMPAT")

	// RESET leaves the subscriptions: nobody receives any more.
	sub2.do(1, "RESET")
	pub.do(1, "PUBSUB", "NUMSUB", "news")
	pub.do(1, "SPUBLISH", "news", "x")

	// A client that disconnects leaves no trace.
	sub1.z.nc.Close()
	sub1.r.nc.Close()
	for _, c := range []*Conn{pub.z, pub.r} {
		waitFor(t, func() bool {
			return c.Do("PUBSUB", "NUMSUB", "news", "sport") == "*4\r\n$4\r\nnews\r\n:0\r\n$5\r\nsport\r\n:0\r\n" &&
				c.Do("PUBSUB", "NUMPAT") == ":0\r\n"
		})
	}
	pub.do(1, "PUBLISH", "news", "x")
	pub.do(1, "PUBSUB", "CHANNELS")
}

// waitFor polls cond until it holds, failing the test after 30 s (a
// replica's sync or a process's start on a busy machine).
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in 30 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestPubSubClientListAndInfo checks the P flag, sub= and psub= in
// CLIENT LIST, CLIENT LIST TYPE pubsub and the pubsub_* fields of INFO.
func TestPubSubClientListAndInfo(t *testing.T) {
	onBoth(t, func(t *testing.T, p *Proc) {
		sub, c := Dial(t, p.Addr), Dial(t, p.Addr)
		sub.Send(Encode("SUBSCRIBE", "a", "b"))
		sub.Read()
		sub.Read()
		sub.Do("PSUBSCRIBE", "p*")
		list := c.Do("CLIENT", "LIST", "TYPE", "pubsub")
		assert.Contains(t, list, " flags=P ")
		assert.Contains(t, list, " sub=2 psub=1 ssub=0 ")
		assert.NotContains(t, c.Do("CLIENT", "LIST", "TYPE", "normal"), " flags=P ")
		info := c.Do("INFO", "stats")
		assert.Contains(t, info, "pubsub_channels:2\r\n")
		assert.Contains(t, info, "pubsub_patterns:1\r\n")
		sub.Do("RESET")
		assert.Equal(t, "$0\r\n\r\n", c.Do("CLIENT", "LIST", "TYPE", "pubsub"))
		info = c.Do("INFO", "stats")
		assert.Contains(t, info, "pubsub_channels:0\r\n")
		assert.Contains(t, info, "pubsub_patterns:0\r\n")
	})
}

// TestPubSubSlowSubscriber: a subscriber that never reads is closed once
// its pending output passes the hard limit, while the publisher keeps
// getting its replies.
func TestPubSubSlowSubscriber(t *testing.T) {
	onBoth(t, func(t *testing.T, p *Proc) {
		c := Dial(t, p.Addr)
		require.Equal(t, "+OK\r\n", c.Do("CONFIG", "SET", "client-output-buffer-limit", "pubsub 256kb 0 0"))
		sub := Dial(t, p.Addr)
		require.Equal(t, "*3\r\n$9\r\nsubscribe\r\n$4\r\nslow\r\n:1\r\n", sub.Do("SUBSCRIBE", "slow"))

		msg := strings.Repeat("x", 64<<10)
		gone := false
		// Kernel buffers on both ends absorb some megabytes before the
		// server's own buffer grows; 200 MB is far past them.
		for i := 0; i < 3200 && !gone; i++ {
			r := c.Do("PUBLISH", "slow", msg)
			require.Contains(t, []string{":1\r\n", ":0\r\n"}, r)
			gone = r == ":0\r\n"
		}
		require.True(t, gone, "the subscriber was never disconnected")
		assert.Equal(t, "*2\r\n$4\r\nslow\r\n:0\r\n", c.Do("PUBSUB", "NUMSUB", "slow"))
		assert.Equal(t, "+PONG\r\n", c.Do("PING"))
		// The subscriber reads what was sent before the close, then EOF.
		var err error
		for err == nil {
			_, err = sub.ReadErr(10 * time.Second)
		}
		var ne net.Error
		if assert.Error(t, err) && errors.As(err, &ne) {
			assert.False(t, ne.Timeout(), "the connection was not closed")
		}
	})
}

// TestPubSubSoftLimit: past the soft limit for longer than soft-seconds,
// the subscriber is closed.
func TestPubSubSoftLimit(t *testing.T) {
	onBoth(t, func(t *testing.T, p *Proc) {
		c := Dial(t, p.Addr)
		require.Equal(t, "+OK\r\n", c.Do("CONFIG", "SET", "client-output-buffer-limit", "pubsub 0 128kb 1"))
		sub := Dial(t, p.Addr)
		sub.Do("SUBSCRIBE", "slow")
		msg := strings.Repeat("x", 16<<10)
		gone := false
		for deadline := time.Now().Add(30 * time.Second); !gone && time.Now().Before(deadline); {
			r := c.Do("PUBLISH", "slow", msg)
			require.Contains(t, []string{":1\r\n", ":0\r\n"}, r)
			gone = r == ":0\r\n"
			time.Sleep(5 * time.Millisecond)
		}
		require.True(t, gone, "the subscriber was never disconnected")
	})
}
