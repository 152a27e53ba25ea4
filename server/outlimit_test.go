package server

import (
	"bufio"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/zredis/zredis/config"
	"github.com/zredis/zredis/engine"
	"github.com/zredis/zredis/resp"
)

func TestReached(t *testing.T) {
	at := func(sec int64) func() time.Time { return func() time.Time { return time.Unix(sec, 0) } }
	type step struct {
		used uint64
		now  int64
		want bool
	}
	cases := []struct {
		name  string
		limit config.BufferLimit
		steps []step
	}{
		{"no limit", config.BufferLimit{}, []step{{1 << 40, 100, false}}},
		{"hard at the limit", config.BufferLimit{Hard: 1000}, []step{{999, 100, false}, {1000, 100, true}}},
		{"soft: the first time is not yet", config.BufferLimit{Soft: 100, SoftSeconds: 2},
			[]step{{100, 100, false}, {150, 101, false}, {150, 102, false}, {150, 103, true}}},
		{"soft: dropping below starts over", config.BufferLimit{Soft: 100, SoftSeconds: 1},
			[]step{{100, 100, false}, {99, 101, false}, {100, 102, false}, {100, 103, false}, {100, 104, true}}},
		{"soft with 0 seconds: the second time past it", config.BufferLimit{Soft: 100},
			[]step{{100, 100, false}, {100, 100, false}, {100, 101, true}}},
		{"hard wins over soft", config.BufferLimit{Hard: 200, Soft: 100, SoftSeconds: 60},
			[]step{{150, 100, false}, {200, 100, true}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var since int64
			for i, s := range tc.steps {
				assert.Equal(t, s.want, reached(&tc.limit, s.used, &since, at(s.now)), "step %d", i)
			}
		})
	}
}

func TestOutputFigures(t *testing.T) {
	cases := []struct {
		total int
		want  engine.OutputFigures
	}{
		{0, engine.OutputFigures{}},
		{100, engine.OutputFigures{Buf: 100}},
		{replyStaticBytes, engine.OutputFigures{Buf: replyStaticBytes}},
		{replyStaticBytes + 1, engine.OutputFigures{Buf: replyStaticBytes, Blocks: 1, Mem: 1}},
		{5 << 20, engine.OutputFigures{Buf: replyStaticBytes, Blocks: 1, Mem: 5<<20 - replyStaticBytes}},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.want, outputFigures(tc.total), "total %d", tc.total)
	}
}

// TestClientPeaks: the input sampled is the query buffer's memory as
// Redis would allocate it (an empty sds before the first read, 20480
// bytes for the 16 KiB buffer, jemalloc's class for a big argument's),
// its largest since the last sample.
func TestClientPeaks(t *testing.T) {
	mk := func(input string, out int64) *conn {
		cl := &engine.Client{Output: func(int) engine.OutputFigures { return engine.OutputFigures{Mem: out} }}
		rd := resp.NewReader(strings.NewReader(input), resp.Limits{})
		if input != "" {
			_, err := rd.ReadBatch(nil)
			require.NoError(t, err)
		}
		return &conn{cl: cl, rd: rd}
	}
	ping := "*1\r\n$4\r\nPING\r\n"
	var p clientPeaks
	// track is one tick of the cron visiting cs.
	track := func(now int64, cs map[int64]*conn) {
		p.rotate(now)
		for _, c := range cs {
			p.sample(c)
		}
	}
	track(100, map[int64]*conn{1: mk("", 500), 2: mk(ping, 20)})
	in, out := p.max()
	assert.Equal(t, [2]int64{20480, 500}, [2]int64{in, out})
	track(101, map[int64]*conn{1: mk("", 1)})
	in, out = p.max()
	assert.Equal(t, [2]int64{20480, 500}, [2]int64{in, out}, "the peaks of the last seconds are kept")
	for sec := int64(102); sec < 100+peakSlots; sec++ {
		track(sec, nil)
	}
	in, out = p.max()
	assert.Equal(t, [2]int64{8, 1}, [2]int64{in, out}, "second 100 left the window")

	// A 300000-byte argument: its allocation counts in the sample after
	// it arrived, though the command took it.
	big := mk("*2\r\n$4\r\nECHO\r\n$300000\r\n"+strings.Repeat("x", 300000)+"\r\n", 0)
	track(200, map[int64]*conn{1: big})
	in, _ = p.max()
	assert.Equal(t, int64(327680), in)
	p = clientPeaks{}
	track(201, map[int64]*conn{1: big})
	in, _ = p.max()
	assert.Equal(t, int64(20480), in, "the next sample sees the 16 KiB buffer alone")
}

// A normal client that pipelines GETs and reads nothing is closed at the
// normal class's hard limit, with Redis's log line, and the client list
// forgets it; the other clients are served all along.
func TestServerNormalHardLimitCloses(t *testing.T) {
	s := startServer(t, "client-output-buffer-limit normal 1mb 0 0")
	c := dial(t, s.addr)
	require.Equal(t, "+OK", c.do("SET", "big", strings.Repeat("v", 64<<10)))
	slow := dial(t, s.addr)
	require.Equal(t, ":2", slow.do("CLIENT", "ID"))
	get := encode("GET", "big")
	var gone bool
	for i := 0; i < 20000 && !gone; i++ {
		slow.nc.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
		if _, err := slow.nc.Write(get); err != nil && !strings.Contains(err.Error(), "timeout") {
			break
		}
		if i%100 == 0 {
			n := 0
			s.ks.Exec(func() { n = len(s.clients) })
			gone = n == 1
		}
	}
	require.Eventually(t, func() bool {
		n := 0
		s.ks.Exec(func() { n = len(s.clients) })
		return n == 1
	}, 10*time.Second, 10*time.Millisecond, "the client that reads nothing is still there")
	assert.Contains(t, s.log.String(), "scheduled to be closed ASAP for overcoming of output buffer limits.")
	assert.Contains(t, s.log.String(), " cmd=get ")
	assert.Equal(t, "+PONG", c.do("PING"))
}

// Without a limit (normal's default) a client that reads nothing is not
// read either while its replies wait: it is not closed, and its output
// shows in CLIENT LIST.
func TestServerNoLimitBackPressure(t *testing.T) {
	s := startServer(t)
	c := dial(t, s.addr)
	require.Equal(t, "+OK", c.do("SET", "big", strings.Repeat("v", 64<<10)))
	// The kernel may buffer most of the 26 MB of replies: a receive
	// buffer autotuned up to tcp_rmem's 32 MB could take them all. A
	// fixed small one leaves the server the replies past its send
	// buffer (4 MB at most).
	slow := dialSmallWindow(t, s.addr)
	id := strings.TrimPrefix(slow.do("CLIENT", "ID"), ":")
	slow.nc.SetWriteDeadline(time.Now().Add(2 * time.Second))
	sent := 0
	var writeErr error
	for ; sent < 400; sent++ {
		if _, writeErr = slow.nc.Write(encode("GET", "big")); writeErr != nil {
			break
		}
	}
	// What waits is what the socket did not take of the last replies:
	// any amount. The GETs arrive in pieces on a busy machine, and a
	// batch of a few left 620 bytes waiting (obl=620 oll=0 omem=0).
	var line string
	if !assert.Eventually(t, func() bool {
		c.send("CLIENT", "LIST", "ID", id)
		line = c.read()
		return strings.Contains(line, " obl=") && !strings.Contains(line, " obl=0 ")
	}, 10*time.Second, 10*time.Millisecond, "CLIENT LIST shows the output waiting") {
		t.Fatalf("last CLIENT LIST: %q; %d GETs sent (%v)", line, sent, writeErr)
	}
	assert.NotContains(t, s.log.String(), "overcoming of output buffer limits")
}

// dialSmallWindow connects with a receive buffer fixed at 64 KiB, which
// the kernel then does not grow: what the client does not read stays in
// the server.
func dialSmallWindow(t *testing.T, addr string) *client {
	t.Helper()
	d := net.Dialer{Timeout: 2 * time.Second, Control: func(_, _ string, rc syscall.RawConn) error {
		var err error
		if cerr := rc.Control(func(fd uintptr) {
			err = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 64<<10)
		}); cerr != nil {
			return cerr
		}
		return err
	}}
	nc, err := d.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { nc.Close() })
	return &client{t: t, nc: nc, rd: bufio.NewReader(nc)}
}
