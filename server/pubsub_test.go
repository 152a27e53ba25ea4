package server

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readFrame reads one pub/sub frame (an array of bulk strings and
// integers) and returns its elements.
func (c *client) readFrame() []string {
	c.t.Helper()
	head := c.read()
	require.True(c.t, strings.HasPrefix(head, "*"), "not a frame: %q", head)
	n, err := strconv.Atoi(head[1:])
	require.NoError(c.t, err)
	out := make([]string, n)
	for i := range out {
		out[i] = c.read()
	}
	return out
}

func TestServerPubSubDeliversInOrder(t *testing.T) {
	for _, threads := range []string{"1", "2"} {
		t.Run("io-threads "+threads, func(t *testing.T) {
			s := startServer(t, "io-threads "+threads)
			sub, pub := dial(t, s.addr), dial(t, s.addr)
			require.Equal(t, []string{"subscribe", "ch", ":1"}, sub.readFrameAfter("SUBSCRIBE", "ch"))
			require.Equal(t, []string{"psubscribe", "c*", ":2"}, sub.readFrameAfter("PSUBSCRIBE", "c*"))
			const n = 2000
			var batch []byte
			for i := 0; i < n; i++ {
				batch = append(batch, encode("PUBLISH", "ch", strconv.Itoa(i))...)
			}
			_, err := pub.nc.Write(batch)
			require.NoError(t, err)
			for i := 0; i < n; i++ {
				require.Equal(t, ":2", pub.read())
			}
			for i := 0; i < n; i++ {
				require.Equal(t, []string{"message", "ch", strconv.Itoa(i)}, sub.readFrame())
				require.Equal(t, []string{"pmessage", "c*", "ch", strconv.Itoa(i)}, sub.readFrame())
			}
			// The subscriber's own replies follow the messages sent before.
			require.Equal(t, ":2", pub.do("PUBLISH", "ch", "last"))
			sub.send("PING")
			assert.Equal(t, []string{"message", "ch", "last"}, sub.readFrame())
			assert.Equal(t, []string{"pmessage", "c*", "ch", "last"}, sub.readFrame())
			assert.Equal(t, []string{"pong", ""}, sub.readFrame())
		})
	}
}

// readFrameAfter sends a command and reads its one-frame reply.
func (c *client) readFrameAfter(args ...string) []string {
	c.t.Helper()
	c.send(args...)
	f := c.readFrame()
	return f
}

// numsub is PUBSUB NUMSUB ch's count, read on c.
func numsub(t *testing.T, c *client, ch string) string {
	c.send("PUBSUB", "NUMSUB", ch)
	f := c.readFrame()
	require.Len(t, f, 2)
	return f[1]
}

// A subscriber that reads nothing is closed once its pending output
// passes the hard limit; the publisher is answered all along, and the
// subscription is gone with the connection.
func TestServerPubSubHardLimitCloses(t *testing.T) {
	s := startServer(t)
	sub, pub := dial(t, s.addr), dial(t, s.addr)
	require.Equal(t, "+OK", pub.do("CONFIG", "SET", "client-output-buffer-limit", "pubsub 256kb 0 0"))
	sub.readFrameAfter("SUBSCRIBE", "slow")
	msg := strings.Repeat("m", 64<<10)
	gone := false
	for i := 0; i < 4000 && !gone; i++ {
		r := pub.do("PUBLISH", "slow", msg)
		require.Contains(t, []string{":1", ":0"}, r)
		gone = r == ":0"
	}
	require.True(t, gone, "the subscriber was never disconnected")
	assert.Equal(t, ":0", numsub(t, pub, "slow"))
	assert.Contains(t, s.log.String(), "scheduled to be closed ASAP for overcoming of output buffer limits.")
	require.Eventually(t, func() bool {
		n := 0
		s.ks.Exec(func() { n = len(s.clients) })
		return n == 1
	}, 5*time.Second, 10*time.Millisecond)
	s.ks.Exec(func() {
		assert.Zero(t, s.stats.PubSubChannels)
	})
}

func TestServerPubSubDisconnectLeavesNoTrace(t *testing.T) {
	s := startServer(t)
	sub, c := dial(t, s.addr), dial(t, s.addr)
	sub.readFrameAfter("SUBSCRIBE", "a")
	sub.readFrameAfter("PSUBSCRIBE", "p*")
	sub.nc.Close()
	require.Eventually(t, func() bool {
		return numsub(t, c, "a") == ":0" && c.do("PUBSUB", "NUMPAT") == ":0"
	}, 5*time.Second, 10*time.Millisecond)
	assert.Equal(t, ":0", c.do("PUBLISH", "a", "x"))
}

// The expiry timer's deletions are notified as "expired" (class x).
func TestServerNotifyExpired(t *testing.T) {
	s := startServer(t)
	sub, c := dial(t, s.addr), dial(t, s.addr)
	require.Equal(t, "+OK", c.do("CONFIG", "SET", "notify-keyspace-events", "Ex"))
	sub.readFrameAfter("PSUBSCRIBE", "__key*")
	require.Equal(t, "+OK", c.do("SELECT", "2"))
	require.Equal(t, "+OK", c.do("SET", "k", "v", "PX", "1"))
	assert.Equal(t, []string{"pmessage", "__key*", "__keyevent@2__:expired", "k"}, sub.readFrame())
}
