package server

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/zredis/zredis/config"
	"github.com/zredis/zredis/engine"
)

// syncBuffer is a log sink safe for the server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *syncBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *syncBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// testServer runs a Server in this process on a free loopback port.
type testServer struct {
	*Server
	addr string
	log  *syncBuffer
	done chan error
}

func startServer(t *testing.T, directives ...string) *testServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	// Its own directory: with Redis's default save points the server
	// saves dump.rdb there at shutdown.
	lines := append([]string{"port " + strconv.Itoa(port), "bind 127.0.0.1", "dir " + t.TempDir()}, directives...)
	cfg, err := config.Load("", strings.Join(lines, "\n"))
	require.NoError(t, err)
	out := &syncBuffer{}
	s := New(cfg, NewLogger(out, LevelVerbose), nil)
	ts := &testServer{Server: s, addr: fmt.Sprintf("127.0.0.1:%d", port), log: out, done: make(chan error, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { ts.done <- s.Run(ctx) }()
	select {
	case <-s.Ready:
	case err := <-ts.done:
		t.Fatalf("server did not start: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		select {
		case <-ts.done:
		case <-time.After(10 * time.Second):
			t.Error("server did not stop")
		}
	})
	return ts
}

// client is a raw RESP connection.
type client struct {
	t  *testing.T
	nc net.Conn
	rd *bufio.Reader
}

func dial(t *testing.T, addr string) *client {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, 2*time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { nc.Close() })
	return &client{t: t, nc: nc, rd: bufio.NewReader(nc)}
}

func encode(args ...string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	return b.Bytes()
}

func (c *client) send(args ...string) {
	c.t.Helper()
	_, err := c.nc.Write(encode(args...))
	require.NoError(c.t, err)
}

// line reads one line of the reply stream (without CRLF).
func (c *client) line(timeout time.Duration) (string, error) {
	c.nc.SetReadDeadline(time.Now().Add(timeout))
	l, err := c.rd.ReadString('\n')
	return strings.TrimSuffix(l, "\r\n"), err
}

// do sends a command and returns its reply's first line; bulk replies are
// returned as their content.
func (c *client) do(args ...string) string {
	c.t.Helper()
	c.send(args...)
	return c.read()
}

func (c *client) read() string {
	c.t.Helper()
	l, err := c.line(5 * time.Second)
	require.NoError(c.t, err)
	if strings.HasPrefix(l, "$") && l != "$-1" {
		n, _ := strconv.Atoi(l[1:])
		buf := make([]byte, n+2)
		_, err := io.ReadFull(c.rd, buf)
		require.NoError(c.t, err)
		return string(buf[:n])
	}
	return l
}

// closed reports whether the server closed the connection (EOF before
// any byte) within the timeout.
func (c *client) closed(timeout time.Duration) bool {
	c.nc.SetReadDeadline(time.Now().Add(timeout))
	_, err := c.rd.ReadByte()
	return err == io.EOF
}

func TestServerMonitorStreamsInOrder(t *testing.T) {
	s := startServer(t)
	m := dial(t, s.addr)
	require.Equal(t, "+OK", m.do("MONITOR"))
	c := dial(t, s.addr)
	require.Equal(t, "+OK", c.do("SET", "k", "a\"b\n\x01"))
	require.Equal(t, "+OK", c.do("SELECT", "2"))
	require.Equal(t, "+OK", c.do("CONFIG", "SET", "hz", "10"))
	require.Equal(t, "-ERR unknown command 'NOSUCH', with args beginning with: ", c.do("NOSUCH"))
	require.Equal(t, "+OK", c.do("AUTH", "default", "pw"))
	require.Equal(t, "+PONG", c.do("PING"))
	var lines []string
	for len(lines) < 4 {
		l, err := m.line(5 * time.Second)
		require.NoError(t, err)
		lines = append(lines, l)
	}
	prefix := `^\+\d+\.\d{6} \[(\d+) 127\.0\.0\.1:\d+\] `
	assert.Regexp(t, prefix+`"SET" "k" "a\\"b\\n\\x01"$`, lines[0])
	assert.Regexp(t, `\[2 .*"SELECT" "2"$`, lines[1], "the database after the command")
	assert.Regexp(t, prefix+`"AUTH" "\(redacted\)" "\(redacted\)"$`, lines[2], "CONFIG (admin) and unknown commands are not shown")
	assert.Regexp(t, prefix+`"PING"$`, lines[3])

	// The monitor's own command: its reply, then its feed line, as
	// redis-server 7.0 sends them.
	m.send("PING")
	l, err := m.line(5 * time.Second)
	require.NoError(t, err)
	assert.Equal(t, "+PONG", l)
	l, err = m.line(5 * time.Second)
	require.NoError(t, err)
	assert.Regexp(t, `"PING"$`, l)

	// RESET ends the stream, before its own line is fed.
	m.send("RESET")
	l, err = m.line(5 * time.Second)
	require.NoError(t, err)
	assert.Equal(t, "+RESET", l)
	c.do("PING")
	_, err = m.line(300 * time.Millisecond)
	assert.Error(t, err, "no more feed after RESET")
}

func TestServerMonitorForgottenWithConnection(t *testing.T) {
	s := startServer(t)
	m := dial(t, s.addr)
	require.Equal(t, "+OK", m.do("MONITOR"))
	m.nc.Close()
	require.Eventually(t, func() bool {
		n := 0
		s.ks.Exec(func() { n = len(s.clients) })
		return n == 0
	}, 5*time.Second, 10*time.Millisecond, "the monitor's connection outlived its socket")
	c := dial(t, s.addr)
	c.do("PING")
	s.ks.Exec(func() { assert.Empty(t, s.monitors) })
}

// A MONITOR client that reads nothing is disconnected once its pending
// output passes the normal class's hard limit, as Redis 7.0 disconnects
// it (it classifies a monitor as normal).
func TestServerMonitorOverflowCloses(t *testing.T) {
	s := startServer(t)
	m := dial(t, s.addr)
	c := dial(t, s.addr)
	require.Equal(t, "+OK", c.do("CONFIG", "SET", "client-output-buffer-limit", "normal 1mb 0 0"))
	require.Equal(t, "+OK", m.do("MONITOR"))
	big := strings.Repeat("v", 1000)
	require.Eventually(t, func() bool {
		for i := 0; i < 200; i++ {
			c.do("SET", "k", big)
		}
		n := 0
		s.ks.Exec(func() { n = len(s.clients) })
		return n == 1
	}, 20*time.Second, time.Millisecond, "the stalled monitor was not disconnected")
}

func TestMonitorLineFormat(t *testing.T) {
	now := time.Unix(1700000000, 42_000)
	line := appendMonitorLine(nil, now, 3, "127.0.0.1:5000", [][]byte{[]byte("set"), []byte("k"), []byte("\t\r\\\xff ")})
	assert.Equal(t, "+1700000000.000042 [3 127.0.0.1:5000] \"set\" \"k\" \"\\t\\r\\\\\\xff \"\r\n", string(line))
}

func TestServerClientKill(t *testing.T) {
	s := startServer(t)
	a := dial(t, s.addr)
	b := dial(t, s.addr)
	require.Equal(t, "+OK", b.do("CLIENT", "SETNAME", "victim"))
	id := b.do("CLIENT", "ID")
	require.Equal(t, ":1", a.do("CLIENT", "KILL", "ID", strings.TrimPrefix(id, ":")))
	assert.True(t, b.closed(5*time.Second))
	assert.NotContains(t, a.do("CLIENT", "LIST"), "victim", "gone at once")
	require.Equal(t, "+OK", a.do("CLIENT", "KILL", a.nc.LocalAddr().String()), "the old form kills the caller too")
	assert.True(t, a.closed(5*time.Second))
}

func TestServerClientReply(t *testing.T) {
	s := startServer(t)
	c := dial(t, s.addr)
	c.send("CLIENT", "REPLY", "OFF")
	c.send("SET", "a", "1")
	c.send("NOSUCH")
	c.send("CLIENT", "REPLY", "ON")
	assert.Equal(t, "+OK", c.read(), "only ON's reply")
	c.send("CLIENT", "REPLY", "SKIP")
	c.send("GET", "a")
	c.send("ECHO", "x")
	assert.Equal(t, "x", c.read(), "SKIP drops the next reply only")
}

func TestServerPause(t *testing.T) {
	s := startServer(t)
	a := dial(t, s.addr)
	b := dial(t, s.addr)
	require.Equal(t, "+OK", a.do("CLIENT", "PAUSE", "60000", "WRITE"))
	require.Equal(t, "$-1", b.do("GET", "k"), "reads run during a WRITE pause")
	b.send("SET", "k", "v")
	_, err := b.line(200 * time.Millisecond)
	require.Error(t, err, "the write waits")
	require.Equal(t, "+OK", a.do("CLIENT", "UNPAUSE"))
	assert.Equal(t, "+OK", b.read())

	require.Equal(t, "+OK", a.do("CLIENT", "PAUSE", "300"))
	start := time.Now()
	assert.Equal(t, "+PONG", b.do("PING"))
	assert.GreaterOrEqual(t, time.Since(start), 200*time.Millisecond, "ALL holds every command until the end")
	assert.Equal(t, "-ERR unknown command 'NOSUCH', with args beginning with: ", b.do("NOSUCH"))
}

func TestServerPauseHeldClientsSeeShutdown(t *testing.T) {
	s := startServer(t)
	a := dial(t, s.addr)
	b := dial(t, s.addr)
	require.Equal(t, "+OK", a.do("CLIENT", "PAUSE", "60000", "WRITE"))
	b.send("SET", "k", "v")
	time.Sleep(50 * time.Millisecond)
	s.Signal(syncSignal("SIGTERM"))
	select {
	case err := <-s.done:
		require.NoError(t, err)
		s.done <- err
	case <-time.After(5 * time.Second):
		t.Fatal("a paused client held the shutdown")
	}
}

// syncSignal is an os.Signal for tests.
type syncSignal string

func (s syncSignal) String() string { return string(s) }
func (syncSignal) Signal()          {}

func TestServerIdleTimeout(t *testing.T) {
	s := startServer(t, "timeout 1")
	idle := dial(t, s.addr)
	idle.do("PING")
	mon := dial(t, s.addr)
	mon.do("MONITOR")
	assert.True(t, idle.closed(5*time.Second), "an idle client is closed")
	assert.Contains(t, s.log.String(), "Closing idle client")
	mon.send("PING")
	l, err := mon.line(5 * time.Second)
	require.NoError(t, err, "MONITOR clients are exempt")
	assert.Equal(t, "+PONG", l)
	l, err = mon.line(5 * time.Second)
	require.NoError(t, err)
	assert.Contains(t, l, "PING")

	c := dial(t, s.addr)
	require.Equal(t, "+OK", c.do("CONFIG", "SET", "timeout", "0"))
	time.Sleep(2500 * time.Millisecond)
	assert.Equal(t, "+PONG", c.do("PING"), "timeout 0 never closes")
}

func TestServerRequirepassAtRuntime(t *testing.T) {
	s := startServer(t, "requirepass secret")
	c := dial(t, s.addr)
	assert.Equal(t, "-NOAUTH Authentication required.", c.do("PING"))
	admin := dial(t, s.addr)
	require.Equal(t, "+OK", admin.do("AUTH", "secret"))
	require.Equal(t, "+OK", admin.do("CONFIG", "SET", "requirepass", ""))
	assert.Equal(t, "+PONG", c.do("PING"), "no password: everyone is in")
	require.Equal(t, "+OK", admin.do("CONFIG", "SET", "requirepass", "other"))
	assert.Equal(t, "-NOAUTH Authentication required.", dial(t, s.addr).do("PING"))
}

func TestServerStatsAndInfo(t *testing.T) {
	s := startServer(t, "slowlog-log-slower-than 0", "latency-monitor-threshold 1")
	c := dial(t, s.addr)
	c.do("SET", "k", "v")
	c.do("GET", "k")
	info := c.do("INFO", "everything")
	for _, f := range []string{"redis_version:7.0.15", "connected_clients:1", "total_connections_received:1",
		"tcp_port:", "used_memory:", "maxmemory_policy:noeviction", "role:master", "used_cpu_sys:",
		"rdb_changes_since_last_save:1", "cmdstat_set:calls=", "latency_percentiles_usec_get:p50=",
		"db0:keys=1,expires=0,avg_ttl=0", "cluster_enabled:0"} {
		assert.Contains(t, info, f)
	}
	assert.Regexp(t, `total_net_input_bytes:[1-9]\d*\r\n`, info)
	assert.Regexp(t, `total_net_output_bytes:[1-9]\d*\r\n`, info)
	assert.Equal(t, ":3", strings.SplitN(c.do("SLOWLOG", "LEN"), "\r\n", 2)[0])
}

func TestPauseState(t *testing.T) {
	p := pauseState{wake: make(chan struct{})}
	w := engine.Write
	r := engine.ReadOnly
	p.set(1000, 2000, false)
	assert.True(t, p.holds(w, 1500))
	assert.False(t, p.holds(r, 1500))
	assert.False(t, p.holds(w, 2000))
	p.set(1500, 1800, true)
	assert.Equal(t, int64(2000), p.end, "keeps the later end")
	assert.True(t, p.holds(r, 1500), "widens to ALL")
	p.set(3000, 3500, false)
	assert.False(t, p.holds(r, 3200), "an expired pause is replaced")
	wake := p.wake
	p.release()
	select {
	case <-wake:
	default:
		t.Fatal("release wakes the waiters")
	}
	assert.False(t, p.holds(w, 3200))
}

func TestMetricAverages(t *testing.T) {
	var m metric
	t0 := time.Unix(100, 0)
	for i := 0; i <= metricSamples; i++ {
		m.track(t0.Add(time.Duration(i)*100*time.Millisecond), int64(i*50))
	}
	assert.InDelta(t, 500, m.value(), 0.001, "50 per 100 ms")
}

func TestHumanBytes(t *testing.T) {
	assert.Equal(t, "0B", humanBytes(0))
	assert.Equal(t, "1023B", humanBytes(1023))
	assert.Equal(t, "1.00K", humanBytes(1024))
	assert.Equal(t, "1.50M", humanBytes(3<<19))
	assert.Equal(t, "2.00G", humanBytes(2<<30))
}
