package tests

import (
	"net"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Output buffer limits (client-output-buffer-limit), against zredis and a
// real redis-server started from the same configuration.

// obufLogLine is the end of Redis's log line for a client closed for its
// output limits: "scheduled to be closed ASAP" when the check ran as
// output was added, "closed" when it ran in the periodic check.
const obufLogLine = `(scheduled to be )?closed (ASAP )?for overcoming of output buffer limits\.`

// smallRcvDial connects with a small receive buffer, so that what the
// client does not read piles up in the server rather than in the
// client's kernel.
func smallRcvDial(t *testing.T, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{Timeout: 2 * time.Second, Control: func(_, _ string, rc syscall.RawConn) error {
		var err error
		rc.Control(func(fd uintptr) {
			err = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096)
		})
		return err
	}}
	nc, err := d.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { nc.Close() })
	return nc
}

// clientFields parses the CLIENT LIST line of client id from c, nil when
// the client is not listed.
func clientFields(t *testing.T, c *Conn, id string) map[string]string {
	t.Helper()
	reply := c.Do("CLIENT", "LIST", "ID", id)
	_, body, _ := strings.Cut(reply, "\r\n")
	body = strings.TrimSpace(body)
	if body == "" {
		return nil
	}
	f := map[string]string{}
	for _, kv := range strings.Fields(body) {
		k, v, _ := strings.Cut(kv, "=")
		f[k] = v
	}
	return f
}

func fieldInt64(t *testing.T, f map[string]string, name string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(f[name], 10, 64)
	require.NoError(t, err, "field %s in %v", name, f)
	return n
}

// clientID asks nc (whose replies are read here) for its client id.
func clientID(t *testing.T, nc net.Conn) string {
	t.Helper()
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	_, err := nc.Write(Encode("CLIENT", "ID"))
	require.NoError(t, err)
	buf := make([]byte, 64)
	n, err := nc.Read(buf)
	require.NoError(t, err)
	nc.SetDeadline(time.Time{})
	return strings.TrimSuffix(strings.TrimPrefix(string(buf[:n]), ":"), "\r\n")
}

// flood writes GETs of key to nc, n at a time every pause, until the
// server closes the connection or stop is closed; it never reads.
func flood(nc net.Conn, key string, n int, pause time.Duration, stop <-chan struct{}) {
	batch := []byte(strings.Repeat(string(Encode("GET", key)), n))
	for {
		select {
		case <-stop:
			return
		default:
		}
		nc.SetWriteDeadline(time.Now().Add(200 * time.Millisecond))
		if _, err := nc.Write(batch); err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				continue
			}
			return
		}
		if pause > 0 {
			time.Sleep(pause)
		}
	}
}

// waitGone waits until client id leaves CLIENT LIST, reporting whether it
// did within the timeout; meanwhile it calls sample.
func waitGone(t *testing.T, c *Conn, id string, timeout time.Duration, sample func()) bool {
	t.Helper()
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); {
		if sample != nil {
			sample()
		}
		if clientFields(t, c, id) == nil {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

// rssSampler samples the resident set of pid every few milliseconds
// until stopped, and returns the peak.
func rssSampler(t *testing.T, pid int) (stop func() int64) {
	done, peak := make(chan struct{}), make(chan int64)
	go func() {
		var p int64
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				peak <- p
				return
			case <-tick.C:
				p = max(p, rssBytes(t, pid))
			}
		}
	}()
	return func() int64 { close(done); return <-peak }
}

// TestOutputLimitNormalHard: a client that pipelines GETs of a 100 KB
// value and never reads is closed once its output passes the normal
// class's hard limit, with Redis's log line; five such clients in turn
// leave zredis's memory flat, though each asks for hundreds of MB.
func TestOutputLimitNormalHard(t *testing.T) {
	args := []string{"--client-output-buffer-limit", "normal 4mb 0 0"}
	onBothConfigured(t, args, func(t *testing.T, p *Proc) {
		c := Dial(t, p.Addr)
		require.Contains(t, c.Do("CONFIG", "GET", "client-output-buffer-limit"), "normal 4194304 0 0 slave")
		require.Equal(t, "+OK\r\n", c.Do("SET", "big", strings.Repeat("v", 100<<10)))
		var rss0 int64
		stopRSS := func() int64 { return 0 }
		if p.Name == "zredis" {
			rss0 = rssBytes(t, p.Pid())
			stopRSS = rssSampler(t, p.Pid())
		}
		for range 5 {
			nc := smallRcvDial(t, p.Addr)
			id := clientID(t, nc)
			stop := make(chan struct{})
			var wg sync.WaitGroup
			wg.Add(1)
			go func() { defer wg.Done(); flood(nc, "big", 100, 0, stop) }()
			gone := waitGone(t, c, id, 60*time.Second, nil)
			close(stop)
			wg.Wait()
			require.True(t, gone, "the client that never reads was not closed")
			waitLog(t, p, `Client id=`+id+` addr=\S+ .*cmd=get .*`+obufLogLine)
		}
		assert.Equal(t, "+PONG\r\n", c.Do("PING"), "the others are served")
		if peak := stopRSS(); p.Name == "zredis" {
			// The limit is 4 MB; the reply buffers' growth and the
			// garbage collector's slack come on top. Without the limit
			// the server would hold every reply the clients asked for.
			t.Logf("zredis RSS %d MB before the floods, peak %d MB", rss0>>20, peak>>20)
			assert.Less(t, peak-rss0, int64(96<<20), "RSS grew with what the clients did not read")
		}
	})
}

// TestOutputLimitSoft: past the soft limit, a client is closed only once
// it has stayed there for more than soft-seconds.
func TestOutputLimitSoft(t *testing.T) {
	onBoth(t, func(t *testing.T, p *Proc) {
		c := Dial(t, p.Addr)
		require.Equal(t, "+OK\r\n", c.Do("CONFIG", "SET", "client-output-buffer-limit", "normal 0 1mb 3"))
		require.Equal(t, "+OK\r\n", c.Do("SET", "big", strings.Repeat("v", 100<<10)))
		nc := smallRcvDial(t, p.Addr)
		id := clientID(t, nc)
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { defer wg.Done(); flood(nc, "big", 4, 20*time.Millisecond, stop) }()
		defer func() { close(stop); wg.Wait() }()

		// Past the soft limit, it is not closed at once.
		var f map[string]string
		require.Eventually(t, func() bool {
			f = clientFields(t, c, id)
			return f == nil || fieldInt64(t, f, "omem") > 1<<20
		}, 30*time.Second, 5*time.Millisecond)
		require.NotNil(t, f, "closed before its output passed the soft limit")
		require.True(t, waitGone(t, c, id, 60*time.Second, nil), "the client was not closed after soft-seconds past the soft limit")
		waitLog(t, p, `Client id=`+id+` .*`+obufLogLine)
	})
}

// TestOutputLimitSoftQuiet: a client left past the soft limit is closed
// once soft-seconds have passed even if it sends nothing more (Redis's
// clientsCron checks the limits too).
func TestOutputLimitSoftQuiet(t *testing.T) {
	args := []string{"--client-output-buffer-limit", "normal 0 1mb 1"}
	onBothConfigured(t, args, func(t *testing.T, p *Proc) {
		c := Dial(t, p.Addr)
		require.Equal(t, "+OK\r\n", c.Do("SET", "big", strings.Repeat("v", 100<<10)))
		nc := smallRcvDial(t, p.Addr)
		id := clientID(t, nc)
		_, err := nc.Write([]byte(strings.Repeat(string(Encode("GET", "big")), 100)))
		require.NoError(t, err)
		require.True(t, waitGone(t, c, id, 30*time.Second, nil), "the quiet client past the soft limit was not closed")
		waitLog(t, p, `Client id=`+id+` .*`+obufLogLine)
	})
}

// TestOutputLimitPubSubFlood: a subscriber that never reads while PUBLISH
// floods its channel is closed at the pubsub class's hard limit, and
// zredis's memory stays flat.
func TestOutputLimitPubSubFlood(t *testing.T) {
	args := []string{"--client-output-buffer-limit", "pubsub 2mb 1mb 60"}
	onBothConfigured(t, args, func(t *testing.T, p *Proc) {
		c := Dial(t, p.Addr)
		sub := smallRcvDial(t, p.Addr)
		id := clientID(t, sub)
		_, err := sub.Write(Encode("SUBSCRIBE", "flood"))
		require.NoError(t, err)
		require.Eventually(t, func() bool { return c.Do("PUBSUB", "NUMSUB", "flood") == "*2\r\n$5\r\nflood\r\n:1\r\n" },
			20*time.Second, 5*time.Millisecond)
		var rss0, peak int64
		if p.Name == "zredis" {
			rss0 = rssBytes(t, p.Pid())
		}
		msg := strings.Repeat("m", 64<<10)
		gone := false
		for i := 0; i < 4000 && !gone; i++ {
			r := c.Do("PUBLISH", "flood", msg)
			require.Contains(t, []string{":1\r\n", ":0\r\n"}, r)
			gone = r == ":0\r\n"
			if p.Name == "zredis" && i%50 == 0 {
				peak = max(peak, rssBytes(t, p.Pid()))
			}
		}
		require.True(t, gone, "the subscriber was never disconnected")
		require.True(t, waitGone(t, c, id, 30*time.Second, nil))
		waitLog(t, p, `Client id=`+id+` .*flags=P .*sub=1 .*`+obufLogLine)
		if p.Name == "zredis" {
			t.Logf("zredis RSS %d MB before the flood, peak %d MB", rss0>>20, peak>>20)
			assert.Less(t, peak-rss0, int64(96<<20))
		}
	})
}

// TestOutputLimitMonitorIsNormal: a MONITOR client falls under the normal
// class, as Redis 7.0 classifies it, not the replica one.
func TestOutputLimitMonitorIsNormal(t *testing.T) {
	args := []string{"--client-output-buffer-limit", "normal 1mb 0 0 replica 0 0 0"}
	onBothConfigured(t, args, func(t *testing.T, p *Proc) {
		c := Dial(t, p.Addr)
		m := smallRcvDial(t, p.Addr)
		id := clientID(t, m)
		_, err := m.Write(Encode("MONITOR"))
		require.NoError(t, err)
		big := strings.Repeat("v", 100<<10)
		gone := false
		for i := 0; i < 2000 && !gone; i++ {
			require.Equal(t, "+OK\r\n", c.Do("SET", "k", big))
			if i%20 == 19 {
				gone = clientFields(t, c, id) == nil
			}
		}
		require.True(t, gone || waitGone(t, c, id, 30*time.Second, nil), "the monitor was not closed")
		waitLog(t, p, `Client id=`+id+` .*flags=O .*`+obufLogLine)
	})
}

// TestOutputFiguresInClientList: a client with replies waiting shows them
// in CLIENT LIST (obl, oll, omem, tot-mem) and in INFO's
// client_recent_max_output_buffer; an idle client shows none.
func TestOutputFiguresInClientList(t *testing.T) {
	onBoth(t, func(t *testing.T, p *Proc) {
		c := Dial(t, p.Addr)
		require.Equal(t, "+OK\r\n", c.Do("SET", "big", strings.Repeat("v", 100<<10)))
		idle := Dial(t, p.Addr)
		idleID := strings.TrimSuffix(strings.TrimPrefix(idle.Do("CLIENT", "ID"), ":"), "\r\n")
		f := clientFields(t, c, idleID)
		require.NotNil(t, f)
		for _, k := range []string{"obl", "oll", "omem", "argv-mem"} {
			assert.Equal(t, "0", f[k], k)
		}
		assert.Equal(t, "r", f["events"])

		nc := smallRcvDial(t, p.Addr)
		id := clientID(t, nc)
		_, err := nc.Write([]byte(strings.Repeat(string(Encode("GET", "big")), 200)))
		require.NoError(t, err)
		require.Eventually(t, func() bool {
			f = clientFields(t, c, id)
			return f != nil && fieldInt64(t, f, "omem") > 0
		}, 10*time.Second, 10*time.Millisecond, "omem of a client with pending output")
		assert.Positive(t, fieldInt64(t, f, "oll"))
		assert.Eventually(t, func() bool { return clientFields(t, c, id)["events"] == "rw" },
			10*time.Second, 10*time.Millisecond, "a write handler waits for the socket")
		assert.LessOrEqual(t, fieldInt64(t, f, "obl"), int64(16384), "obl is within the static reply buffer")
		assert.Greater(t, fieldInt64(t, f, "tot-mem"), fieldInt64(t, f, "omem"))
		require.Eventually(t, func() bool {
			m := regexp.MustCompile(`client_recent_max_output_buffer:(\d+)`).FindStringSubmatch(c.Do("INFO", "clients"))
			n, _ := strconv.ParseInt(m[1], 10, 64)
			return n > 0
		}, 10*time.Second, 50*time.Millisecond, "INFO client_recent_max_output_buffer")
	})
}

// TestOutputLimitConfigSet: malformed limits get Redis's error and change
// nothing; valid ones are shown as Redis shows them.
func TestOutputLimitConfigSet(t *testing.T) {
	d := NewDiff(t)
	t.Cleanup(func() {
		d.DoBoth("CONFIG", "SET", "client-output-buffer-limit", "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60")
	})
	get := func() {
		d.Do("CONFIG", "GET", "client-output-buffer-limit")
	}
	get()
	for _, v := range []string{
		"normal 1mb 0", "foo 1mb 0 0", "master 1mb 0 0", "normal abc 0 0", "normal 1mb 1mb -1",
		"normal 1mb 0 x", "normal -1 0 0", "normal 1mb 0 0 pubsub 1 2", "normal 1mb 2mb 3 bogus 1 2 3",
		"normal 18446744073709551616 0 0", "normal 1mb 0 99999999999",
	} {
		d.Do("CONFIG", "SET", "client-output-buffer-limit", v)
		get()
	}
	for _, v := range []string{"", "NORMAL 1k 2k 3", "replica 1g 1g 60 pubsub 0 0 0", "slave 0 0 0 normal 0 0 0"} {
		d.Do("CONFIG", "SET", "client-output-buffer-limit", v)
		get()
	}
}
