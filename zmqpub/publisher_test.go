package zmqpub

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/zredis/zredis/internal/testsupport"
)

// memSource is a Source over an in-memory queue.
type memSource struct {
	mu     sync.Mutex
	queue  []Message
	notify chan struct{} // cap 1: the queue may have grown
}

func newMemSource(ms ...Message) *memSource {
	s := &memSource{notify: make(chan struct{}, 1)}
	s.Put(ms...)
	return s
}

func (s *memSource) Put(ms ...Message) {
	s.mu.Lock()
	s.queue = append(s.queue, ms...)
	s.mu.Unlock()
	s.signal()
}

func (s *memSource) signal() {
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

func (s *memSource) Next(stop <-chan struct{}) (Message, bool) {
	for {
		s.mu.Lock()
		if len(s.queue) > 0 {
			m := s.queue[0]
			s.queue = s.queue[1:]
			s.mu.Unlock()
			return m, true
		}
		s.mu.Unlock()
		select {
		case <-s.notify:
		case <-stop:
			return Message{}, false
		}
	}
}

func (s *memSource) Requeue(ms []Message) {
	s.mu.Lock()
	s.queue = append(append([]Message(nil), ms...), s.queue...)
	s.mu.Unlock()
	s.signal()
}

func (s *memSource) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue)
}

// numberedMessage is message i: a 4-byte header, the key "id:<i>" and a value
// of size bytes derived from i.
func numberedMessage(i, size int) Message {
	value := make([]byte, size)
	for j := range value {
		value[j] = byte(i + j%251)
	}
	return Message{Frames: [3][]byte{{1, 0, 0, 0}, fmt.Appendf(nil, "id:%06d", i), value}}
}

func numberedMessages(n, size int) []Message {
	ms := make([]Message, n)
	for i := range ms {
		ms[i] = numberedMessage(i, size)
	}
	return ms
}

// pyLine is how the python listener prints a message: frame count, key,
// value length and the value's sha256.
func pyLine(m Message) string {
	sum := sha256.Sum256(m.Frames[2])
	return fmt.Sprintf("%d %s %d %s", len(m.Frames), m.Frames[1], len(m.Frames[2]), hex.EncodeToString(sum[:]))
}

// waitFor polls cond until it holds, failing the test after a generous
// bound (a hang guard, not a timing assertion).
func waitFor(t *testing.T, cond func() bool, format string, args ...any) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting: "+format, args...)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func newTestPublisher(t *testing.T, cfg PublisherConfig, src Source) *Publisher {
	t.Helper()
	if cfg.Endpoints == nil {
		cfg.Endpoints = []string{"tcp://127.0.0.1:0"}
	}
	if cfg.Logf == nil {
		cfg.Logf = t.Logf
	}
	p, err := NewPublisher(cfg, src)
	require.NoError(t, err)
	t.Cleanup(func() { p.Close() })
	return p
}

const pythonPull = `
import hashlib, sys, time, zmq
endpoint, hwm, heartbeat, stop_after = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
ctx = zmq.Context()
s = ctx.socket(zmq.PULL)
s.setsockopt(zmq.RCVHWM, hwm)
if heartbeat:
    s.setsockopt(zmq.HEARTBEAT_IVL, heartbeat)
s.connect(endpoint)
n = 0
while True:
    if stop_after and n == stop_after:
        time.sleep(3600)
    frames = s.recv_multipart()
    n += 1
    print(len(frames), frames[1].decode(), len(frames[2]), hashlib.sha256(frames[2]).hexdigest(), flush=True)
`

// pyListener is a libzmq PULL socket in a python process; it prints one
// line per message received.
type pyListener struct {
	cmd    *exec.Cmd
	lines  chan string
	done   chan struct{}
	stderr bytes.Buffer
}

// requirePython ends the test (testsupport.Require) when Debian's
// python3-zmq is missing.
func requirePython(t *testing.T) {
	t.Helper()
	testsupport.RequirePython(t, "zmq")
}

// startPyPull starts a python PULL listener connected to endpoint;
// stopAfter > 0 makes it stop reading after that many messages.
func startPyPull(t *testing.T, endpoint string, rcvhwm, heartbeatMs, stopAfter int) *pyListener {
	t.Helper()
	requirePython(t)
	l := &pyListener{lines: make(chan string, 100000), done: make(chan struct{})}
	l.cmd = exec.Command("/usr/bin/python3", "-c", pythonPull, endpoint,
		strconv.Itoa(rcvhwm), strconv.Itoa(heartbeatMs), strconv.Itoa(stopAfter))
	l.cmd.Stderr = &l.stderr
	stdout, err := l.cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, l.cmd.Start())
	go func() {
		defer close(l.done)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			l.lines <- sc.Text()
		}
	}()
	t.Cleanup(l.kill)
	return l
}

// kill stops the process and waits for it; safe to call twice.
func (l *pyListener) kill() {
	l.cmd.Process.Kill()
	<-l.done
	l.cmd.Wait()
}

// collectLines reads lines from the listeners until n were read in all.
func collectLines(t *testing.T, n int, ls ...*pyListener) [][]string {
	t.Helper()
	got := make([][]string, len(ls))
	total := 0
	timeout := time.After(60 * time.Second)
	for total < n {
		progressed := false
		for i, l := range ls {
			select {
			case s := <-l.lines:
				got[i] = append(got[i], s)
				total++
				progressed = true
			default:
			}
		}
		if progressed {
			continue
		}
		select {
		case <-timeout:
			t.Fatalf("received %d of %d messages", total, n)
		case <-time.After(5 * time.Millisecond):
		}
	}
	return got
}

func TestPublisherToLibzmqPull(t *testing.T) {
	ms := numberedMessages(1000, 100)
	ms[500] = numberedMessage(500, 10<<20) // a 10 MB value: long frames, writev path
	src := newMemSource(ms...)
	p := newTestPublisher(t, PublisherConfig{}, src)
	l := startPyPull(t, p.Endpoints()[0], 1000, 0, 0)

	got := collectLines(t, len(ms), l)[0]
	want := make([]string, len(ms))
	for i, m := range ms {
		want[i] = pyLine(m)
	}
	assert.Equal(t, want, got, "one listener receives every message, in order")
	assert.EqualValues(t, len(ms), p.Stats().Sent)
	assert.EqualValues(t, 1, p.Stats().Connects)
	assert.EqualValues(t, 1, p.Stats().Listeners)
}

func TestPublisherRoundRobin(t *testing.T) {
	src := newMemSource()
	p := newTestPublisher(t, PublisherConfig{}, src)
	a := startPyPull(t, p.Endpoints()[0], 1000, 0, 0)
	b := startPyPull(t, p.Endpoints()[0], 1000, 0, 0)
	waitFor(t, func() bool { return p.Stats().Listeners == 2 }, "two listeners")

	ms := numberedMessages(1000, 10)
	src.Put(ms...)
	got := collectLines(t, len(ms), a, b)
	seen := make(map[string]int)
	for _, lines := range got {
		for _, s := range lines {
			seen[s]++
		}
	}
	for _, m := range ms {
		assert.Equal(t, 1, seen[pyLine(m)], "message %s delivered exactly once", m.Frames[1])
	}
	assert.NotEmpty(t, got[0], "first listener got a share")
	assert.NotEmpty(t, got[1], "second listener got a share")
	t.Logf("shares: %d and %d", len(got[0]), len(got[1]))
}

func TestPublisherAnswersLibzmqHeartbeat(t *testing.T) {
	src := newMemSource()
	p := newTestPublisher(t, PublisherConfig{}, src)
	// A heartbeat of 500 ms: libzmq's PONG deadline is the interval, and
	// on a busy machine an answer can take a good part of 100 ms.
	l := startPyPull(t, p.Endpoints()[0], 1000, 500, 0)
	waitFor(t, func() bool { return p.Stats().Listeners == 1 }, "listener connected")

	// libzmq drops a connection that stays silent for a heartbeat
	// interval after its PING; stay idle for many intervals.
	time.Sleep(4 * time.Second)
	m := numberedMessage(7, 10)
	src.Put(m)
	assert.Equal(t, []string{pyLine(m)}, collectLines(t, 1, l)[0])
	assert.EqualValues(t, 1, p.Stats().Connects, "the listener never reconnected")
}

func TestIdleClientDoesNotBlockOthers(t *testing.T) {
	src := newMemSource()
	p := newTestPublisher(t, PublisherConfig{HandshakeTimeout: time.Hour}, src)
	idle, err := net.Dial("tcp", strings.TrimPrefix(p.Endpoints()[0], "tcp://"))
	require.NoError(t, err)
	defer idle.Close()

	l := startPyPull(t, p.Endpoints()[0], 1000, 0, 0)
	ms := numberedMessages(10, 10)
	src.Put(ms...)
	assert.Len(t, collectLines(t, len(ms), l)[0], len(ms))
	assert.EqualValues(t, 1, p.Stats().Listeners, "the idle client is no listener")
}

// A listener killed while its socket buffers and our queue for it are
// full: what was queued goes back to the source and reaches the next
// listener; only what sat in the socket buffers is lost. Whether anything
// is still queued when the reset arrives depends on the machine's timing
// (a writer the kill unblocks may push the queue into freed buffer
// space), so the scenario is tried up to three times for a requeue to be
// seen; the accounting is checked every time.
func TestKilledListenerRequeues(t *testing.T) {
	for attempt := 1; ; attempt++ {
		requeued := killListenerWhileFull(t)
		if requeued > 0 {
			return
		}
		if attempt == 3 {
			t.Fatal("in three runs nothing queued for the dead listener went back to the source")
		}
	}
}

// killListenerWhileFull runs TestKilledListenerRequeues's scenario once
// and returns how many messages were requeued.
func killListenerWhileFull(t *testing.T) int {
	const total = 1000
	src := newMemSource(numberedMessages(total, 64<<10)...)
	p := newTestPublisher(t, PublisherConfig{PeerQueue: 16}, src)
	first := startPyPull(t, p.Endpoints()[0], 1, 0, 100)
	firstLines := collectLines(t, 100, first)[0]

	// The listener stopped reading: wait until its socket buffers are
	// full, then kill it. Full means nothing written for a while and our
	// queue for it full all that time: a writer merely stalled by a busy
	// machine would have drained the queue into free socket buffer once
	// it ran, and after the kill it could still write what was queued
	// (lost, not requeued).
	full := func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return len(p.peers) == 1 && !p.peers[0].hasRoom()
	}
	deadline := time.Now().Add(30 * time.Second)
	for stable := 0; stable < 30; {
		if time.Now().After(deadline) {
			t.Fatalf("the listener's buffers and queue never filled (sent %d)", p.Stats().Sent)
		}
		before := p.Stats().Sent
		time.Sleep(10 * time.Millisecond)
		if p.Stats().Sent == before && full() {
			stable++
		} else {
			stable = 0
		}
	}
	first.kill()
	waitFor(t, func() bool {
		st := p.Stats()
		return st.Listeners == 0 && src.Len() == total-int(st.Sent)
	}, "killed listener removed, its queue handed back")
	sentToFirst := int(p.Stats().Sent)
	requeued := int(p.Stats().Requeued)

	second := startPyPull(t, p.Endpoints()[0], 1000, 0, 0)
	secondLines := collectLines(t, total-sentToFirst, second)[0]
	seen := make(map[string]bool)
	for _, s := range append(firstLines, secondLines...) {
		assert.False(t, seen[s], "duplicate %q", s[:20])
		seen[s] = true
	}
	lost := sentToFirst - len(firstLines)
	t.Logf("sent to the killed listener %d, it printed %d, lost in its buffers %d, requeued %d",
		sentToFirst, len(firstLines), lost, requeued)
	assert.Equal(t, total, len(seen)+lost)
	assert.Zero(t, src.Len())
	return requeued
}

func TestPublisherIPC(t *testing.T) {
	path := filepath.Join(t.TempDir(), "expiry.sock")
	// A socket file left by a process that died.
	stale, err := net.Listen("unix", path)
	require.NoError(t, err)
	stale.(*net.UnixListener).SetUnlinkOnClose(false)
	stale.Close()
	require.FileExists(t, path)

	src := newMemSource(numberedMessages(100, 1000)...)
	p, err := NewPublisher(PublisherConfig{Endpoints: []string{"ipc://" + path}, Logf: t.Logf}, src)
	require.NoError(t, err)
	assert.Equal(t, []string{"ipc://" + path}, p.Endpoints())
	l := startPyPull(t, "ipc://"+path, 1000, 0, 0)
	assert.Len(t, collectLines(t, 100, l)[0], 100)

	require.NoError(t, p.Close())
	assert.NoFileExists(t, path, "Close removes the socket file")
}

func TestNewPublisherErrors(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer busy.Close()
	regular := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(regular, nil, 0o600))
	live := filepath.Join(t.TempDir(), "live.sock")
	liveL, err := net.Listen("unix", live)
	require.NoError(t, err)
	defer liveL.Close()

	tests := []struct {
		name      string
		endpoints []string
	}{
		{"none", nil},
		{"bad scheme", []string{"udp://127.0.0.1:1"}},
		{"port in use after a good one", []string{"tcp://127.0.0.1:0", "tcp://" + busy.Addr().String()}},
		{"ipc path is a regular file", []string{"ipc://" + regular}},
		{"ipc path is a live socket", []string{"ipc://" + live}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := runtime.NumGoroutine()
			_, err := NewPublisher(PublisherConfig{Endpoints: tt.endpoints}, newMemSource())
			require.Error(t, err)
			assert.LessOrEqual(t, runtime.NumGoroutine(), before)
		})
	}
	assert.FileExists(t, regular)
}

func TestEndpointsResolvePort(t *testing.T) {
	p := newTestPublisher(t, PublisherConfig{Endpoints: []string{"tcp://*:0", "tcp://127.0.0.1:0"}}, newMemSource())
	eps := p.Endpoints()
	require.Len(t, eps, 2)
	assert.Regexp(t, `^tcp://\*:[1-9][0-9]*$`, eps[0])
	assert.Regexp(t, `^tcp://127\.0\.0\.1:[1-9][0-9]*$`, eps[1])
}

// goPull is a minimal PULL peer for tests: it handshakes and then only
// reads what it is told to.
func goPull(t *testing.T, endpoint string) (net.Conn, *bufio.Reader) {
	t.Helper()
	network, address, err := SplitEndpoint(endpoint)
	require.NoError(t, err)
	conn, err := net.Dial(network, address)
	require.NoError(t, err)
	br := bufio.NewReader(conn)
	require.NoError(t, Handshake(conn, br, SocketPull, SocketPush))
	return conn, br
}

func TestPublisherAnswersPing(t *testing.T) {
	p := newTestPublisher(t, PublisherConfig{}, newMemSource())
	conn, br := goPull(t, p.Endpoints()[0])
	defer conn.Close()
	_, err := conn.Write(AppendPing(nil, 0, []byte("hello")))
	require.NoError(t, err)
	conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	f, err := ReadFrame(br, 100)
	require.NoError(t, err)
	name, data, err := ParseCommand(f.Body)
	require.NoError(t, err)
	assert.Equal(t, "PONG", name)
	assert.Equal(t, "hello", string(data))
}

func TestPublisherHonoursPingTTL(t *testing.T) {
	p := newTestPublisher(t, PublisherConfig{}, newMemSource())
	conn, br := goPull(t, p.Endpoints()[0])
	defer conn.Close()
	waitFor(t, func() bool { return p.Stats().Listeners == 1 }, "listener joined")
	// TTL 1: drop me if I say nothing for 100ms; then say nothing.
	_, err := conn.Write(AppendPing(nil, 1, nil))
	require.NoError(t, err)
	conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	_, err = io.Copy(io.Discard, br)
	require.NoError(t, err, "the publisher closed the connection")
	waitFor(t, func() bool { return p.Stats().Listeners == 0 }, "listener removed")
}

func TestPublisherDropsMisbehavingListener(t *testing.T) {
	tests := []struct {
		name string
		send []byte
	}{
		{"message frame", AppendMessageFrame(nil, false, []byte("hi"))},
		{"oversized command", AppendCommand(nil, "PING", make([]byte, 4096))},
		{"ERROR", AppendCommand(nil, "ERROR", []byte{3, 'b', 'y', 'e'})},
		{"garbage flags", []byte{0xF0, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newTestPublisher(t, PublisherConfig{}, newMemSource())
			conn, br := goPull(t, p.Endpoints()[0])
			defer conn.Close()
			waitFor(t, func() bool { return p.Stats().Listeners == 1 }, "listener joined")
			_, err := conn.Write(tt.send)
			require.NoError(t, err)
			conn.SetReadDeadline(time.Now().Add(30 * time.Second))
			// A close (EOF, or a reset when our bytes were left unread),
			// not the deadline.
			_, err = io.Copy(io.Discard, br)
			require.NotErrorIs(t, err, os.ErrDeadlineExceeded, "the publisher closed the connection")
			waitFor(t, func() bool { return p.Stats().Listeners == 0 }, "listener removed")
		})
	}
}

func TestCloseRequeuesUndelivered(t *testing.T) {
	const total = 500
	src := newMemSource(numberedMessages(total, 64<<10)...)
	var onSent sync.Map
	p, err := NewPublisher(PublisherConfig{
		Endpoints: []string{"tcp://127.0.0.1:0"},
		PeerQueue: 8,
		Logf:      t.Logf,
		OnSent:    func(m *Message, _ time.Time) { onSent.Store(string(m.Frames[1]), true) },
	}, src)
	require.NoError(t, err)
	conn, _ := goPull(t, p.Endpoints()[0]) // never reads: the queue fills
	defer conn.Close()
	waitFor(t, func() bool { return src.Len() < total-8 }, "dispatch started")
	waitFor(t, func() bool { // writes stalled
		before := p.Stats().Sent
		time.Sleep(50 * time.Millisecond)
		return p.Stats().Sent == before && src.Len() < total
	}, "writes stall")

	require.NoError(t, p.Close())
	st := p.Stats()
	assert.Positive(t, st.Requeued)
	assert.Equal(t, total, int(st.Sent)+src.Len(), "every message is either written or back in the source")
	n := 0
	onSent.Range(func(any, any) bool { n++; return true })
	assert.EqualValues(t, st.Sent, n, "OnSent ran once per written message")
	// The source keeps the order: the unsent tail starts where Sent ended.
	first, ok := src.Next(nil)
	require.True(t, ok)
	assert.Equal(t, fmt.Sprintf("id:%06d", st.Sent), string(first.Frames[1]))
}

func TestNoGoroutineLeak(t *testing.T) {
	baseline := runtime.NumGoroutine()
	src := newMemSource()
	p, err := NewPublisher(PublisherConfig{Endpoints: []string{"tcp://127.0.0.1:0"}, HandshakeTimeout: time.Minute}, src)
	require.NoError(t, err)
	for i := range 1000 {
		if i%10 == 9 {
			// A client that leaves during the handshake.
			c, err := net.Dial("tcp", strings.TrimPrefix(p.Endpoints()[0], "tcp://"))
			require.NoError(t, err)
			c.Write(greeting[:20])
			c.Close()
			continue
		}
		conn, _ := goPull(t, p.Endpoints()[0])
		if i%2 == 0 {
			src.Put(numberedMessage(i, 10))
		}
		conn.Close()
	}
	waitFor(t, func() bool { return p.Stats().Listeners == 0 && p.Stats().Connects == 900 },
		"every listener removed (now %+v)", p.Stats())
	waitFor(t, func() bool { return p.Stats().HandshakeFailures == 100 }, "failed handshakes counted")
	require.NoError(t, p.Close())
	waitFor(t, func() bool { return runtime.NumGoroutine() <= baseline },
		"goroutines back to %d (now %d)", baseline, runtime.NumGoroutine())
	st := p.Stats()
	assert.EqualValues(t, 500, int(st.Sent)+src.Len(), "no message lost or duplicated in the churn")
}

// Connections still handshaking have a bound of MaxListeners of their
// own: one more closes the one that has waited longest, so that idle
// connections (which anyone who reaches the endpoint can open) cannot keep
// a listener out. Past MaxListeners handshaken listeners, a connection is
// closed at once. Both are counted.
func TestPublisherMaxListeners(t *testing.T) {
	p := newTestPublisher(t, PublisherConfig{MaxListeners: 2, HandshakeTimeout: time.Hour}, newMemSource())
	addr := strings.TrimPrefix(p.Endpoints()[0], "tcp://")
	dial := func() net.Conn {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		t.Cleanup(func() { c.Close() })
		return c
	}
	greeted := func(c net.Conn) bool {
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		n, err := c.Read(make([]byte, 1))
		return n == 1 && err == nil
	}
	idle := dial()
	require.True(t, greeted(idle))
	require.True(t, greeted(dial()))
	require.True(t, greeted(dial()), "a third handshake is held")
	idle.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err := io.ReadAll(idle)
	assert.NoError(t, err, "the longest-waiting handshake is closed")
	assert.EqualValues(t, 1, p.Stats().Refused)

	// Listeners, on a publisher of their own (no idle handshakes left).
	p = newTestPublisher(t, PublisherConfig{MaxListeners: 2, HandshakeTimeout: time.Hour}, newMemSource())
	addr = strings.TrimPrefix(p.Endpoints()[0], "tcp://")
	for range 2 {
		c := dial()
		require.NoError(t, Handshake(c, bufio.NewReader(c), SocketPull, SocketPush))
	}
	waitFor(t, func() bool { return p.Stats().Listeners == 2 }, "two listeners")
	extra := dial()
	extra.SetReadDeadline(time.Now().Add(5 * time.Second))
	n, err := extra.Read(make([]byte, 1))
	assert.Zero(t, n, "no greeting past MaxListeners listeners")
	assert.Error(t, err, "the connection is closed")
	assert.EqualValues(t, 1, p.Stats().Refused)
}
