package pull

import (
	"bufio"
	"bytes"
	"encoding/binary"
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
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zredis/zredis/internal/testsupport"
	"github.com/zredis/zredis/zmqpub"
	"github.com/zredis/zredis/zmqpub/z85"
)

// queue is a zmqpub.Source over an in-memory slice.
type queue struct {
	mu     sync.Mutex
	ms     []zmqpub.Message
	notify chan struct{}
}

func newQueue(ms ...zmqpub.Message) *queue {
	q := &queue{notify: make(chan struct{}, 1)}
	q.Requeue(ms)
	return q
}

func (q *queue) Put(ms ...zmqpub.Message) {
	q.mu.Lock()
	q.ms = append(q.ms, ms...)
	q.mu.Unlock()
	q.signal()
}

func (q *queue) signal() {
	select {
	case q.notify <- struct{}{}:
	default:
	}
}

func (q *queue) Next(stop <-chan struct{}) (zmqpub.Message, bool) {
	for {
		q.mu.Lock()
		if len(q.ms) > 0 {
			m := q.ms[0]
			q.ms = q.ms[1:]
			q.mu.Unlock()
			return m, true
		}
		q.mu.Unlock()
		select {
		case <-q.notify:
		case <-stop:
			return zmqpub.Message{}, false
		}
	}
}

func (q *queue) Requeue(ms []zmqpub.Message) {
	q.mu.Lock()
	q.ms = append(append([]zmqpub.Message(nil), ms...), q.ms...)
	q.mu.Unlock()
	q.signal()
}

func message(i, size int) zmqpub.Message {
	value := make([]byte, size)
	for j := range value {
		value[j] = byte(i + j%251)
	}
	return zmqpub.Message{Frames: [3][]byte{{1, 0, 0, 0}, fmt.Appendf(nil, "id:%06d", i), value}}
}

func frames(m zmqpub.Message) [][]byte { return m.Frames[:] }

// waitFor polls cond until it holds, failing after a generous bound (a
// hang guard, not a timing assertion).
func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// recv is Recv with a hang guard.
func recv(t *testing.T, s *Socket) [][]byte {
	t.Helper()
	type result struct {
		m   [][]byte
		err error
	}
	ch := make(chan result, 1)
	go func() {
		m, err := s.Recv()
		ch <- result{m, err}
	}()
	select {
	case r := <-ch:
		require.NoError(t, r.err)
		return r.m
	case <-time.After(60 * time.Second):
		s.Close()
		t.Fatal("no message within 60s")
		return nil
	}
}

func publisher(t *testing.T, endpoints []string, src zmqpub.Source) *zmqpub.Publisher {
	t.Helper()
	p, err := zmqpub.NewPublisher(zmqpub.PublisherConfig{Endpoints: endpoints, Logf: t.Logf}, src)
	require.NoError(t, err)
	t.Cleanup(func() { p.Close() })
	return p
}

func dial(t *testing.T, endpoints []string, opt Options) *Socket {
	t.Helper()
	s := Dial(endpoints, opt)
	t.Cleanup(func() { s.Close() })
	return s
}

// freePort returns a loopback tcp endpoint nothing listens on right now.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return "tcp://" + l.Addr().String()
}

func TestPullFromPublisher(t *testing.T) {
	ms := make([]zmqpub.Message, 1000)
	for i := range ms {
		ms[i] = message(i, i%300)
	}
	ms[10] = message(10, 10<<20)
	p := publisher(t, []string{"tcp://127.0.0.1:0"}, newQueue(ms...))
	s := dial(t, p.Endpoints(), Options{})
	for _, m := range ms {
		require.Equal(t, frames(m), recv(t, s))
	}
}

func TestPullConnectsBeforeServerStarts(t *testing.T) {
	ep := freePort(t)
	s := dial(t, []string{ep}, Options{ReconnectIvl: 20 * time.Millisecond})
	time.Sleep(100 * time.Millisecond) // a few failed attempts

	src := newQueue(message(1, 5))
	p := publisher(t, []string{ep}, src)
	assert.Equal(t, frames(message(1, 5)), recv(t, s))

	// The server restarts: the socket reconnects to the new one.
	require.NoError(t, p.Close())
	src2 := newQueue(message(2, 5))
	publisher(t, []string{ep}, src2)
	assert.Equal(t, frames(message(2, 5)), recv(t, s))
}

func TestPullFairQueuesEndpoints(t *testing.T) {
	ipc := "ipc://" + filepath.Join(t.TempDir(), "x.sock")
	pa := publisher(t, []string{"tcp://127.0.0.1:0"}, newQueue(message(1, 3)))
	pb := publisher(t, []string{ipc}, newQueue(message(2, 3)))
	s := dial(t, []string{pa.Endpoints()[0], pb.Endpoints()[0]}, Options{})
	got := map[string]bool{}
	for range 2 {
		got[string(recv(t, s)[1])] = true
	}
	assert.Equal(t, map[string]bool{"id:000001": true, "id:000002": true}, got)
}

func TestCloseUnblocksRecv(t *testing.T) {
	s := Dial([]string{freePort(t)}, Options{})
	errc := make(chan error, 1)
	go func() {
		_, err := s.Recv()
		errc <- err
	}()
	require.NoError(t, s.Close())
	assert.ErrorIs(t, <-errc, ErrClosed)
	_, err := s.Recv()
	assert.ErrorIs(t, err, ErrClosed)
}

// fakePush accepts connections, handshakes as PUSH and hands each
// connection to serve; it counts the connections.
type fakePush struct {
	l       net.Listener
	accepts atomic.Int64
	wg      sync.WaitGroup
}

func startFakePush(t *testing.T, serve func(conn net.Conn, br *bufio.Reader)) *fakePush {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	f := &fakePush{l: l}
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			f.accepts.Add(1)
			f.wg.Add(1)
			go func() {
				defer f.wg.Done()
				defer conn.Close()
				conn.SetDeadline(time.Now().Add(60 * time.Second))
				br := bufio.NewReader(conn)
				if zmqpub.Handshake(conn, br, zmqpub.SocketPush, zmqpub.SocketPull) == nil {
					serve(conn, br)
				}
			}()
		}
	}()
	t.Cleanup(func() { l.Close(); f.wg.Wait() })
	return f
}

func (f *fakePush) endpoint() string { return "tcp://" + f.l.Addr().String() }

func TestHeartbeatDropsSilentServer(t *testing.T) {
	// A server that handshakes, then reads and never answers: with a
	// heartbeat the socket gives up on it and connects again.
	f := startFakePush(t, func(conn net.Conn, br *bufio.Reader) { io.Copy(io.Discard, br) })
	dial(t, []string{f.endpoint()}, Options{Heartbeat: 20 * time.Millisecond, ReconnectIvl: 10 * time.Millisecond})
	waitFor(t, func() bool { return f.accepts.Load() >= 3 }, "reconnections")
}

func TestAnswersServerPing(t *testing.T) {
	pong := make(chan string, 1)
	f := startFakePush(t, func(conn net.Conn, br *bufio.Reader) {
		conn.Write(zmqpub.AppendPing(nil, 0, []byte("ctx-1")))
		fr, err := zmqpub.ReadFrame(br, 100)
		if err != nil {
			pong <- err.Error()
			return
		}
		name, data, _ := zmqpub.ParseCommand(fr.Body)
		pong <- name + " " + string(data)
		io.Copy(io.Discard, br)
	})
	s := dial(t, []string{f.endpoint()}, Options{})
	assert.Equal(t, "PONG ctx-1", <-pong)
	s.Close()
}

func TestRefusesBadFrames(t *testing.T) {
	var frame16 []byte
	for range MaxParts + 1 {
		frame16 = zmqpub.AppendMessageFrame(frame16, true, []byte("x"))
	}
	tests := []struct {
		name string
		send []byte
	}{
		{"frame above MaxFrame", binary.BigEndian.AppendUint64([]byte{0x02}, 1<<40)},
		{"frame above int64", binary.BigEndian.AppendUint64([]byte{0x02}, 1<<63+1)},
		{"too many parts", frame16},
		{"ERROR command", zmqpub.AppendCommand(nil, "ERROR", []byte{2, 'n', 'o'})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			closed := make(chan error, 1)
			f := startFakePush(t, func(conn net.Conn, br *bufio.Reader) {
				conn.Write(tt.send)
				_, err := io.Copy(io.Discard, br)
				closed <- err
			})
			s := dial(t, []string{f.endpoint()}, Options{MaxFrame: 1 << 20, ReconnectIvl: time.Hour})
			err := <-closed
			assert.NotErrorIs(t, err, os.ErrDeadlineExceeded, "the socket closed the connection")
			assert.EqualValues(t, 1, f.accepts.Load())
			s.Close()
		})
	}
}

func TestNoGoroutineLeak(t *testing.T) {
	baseline := runtime.NumGoroutine()
	p := publisher(t, []string{"tcp://127.0.0.1:0"}, newQueue(message(0, 10)))
	for range 50 {
		s := Dial(p.Endpoints(), Options{Heartbeat: 10 * time.Millisecond})
		require.NoError(t, s.Close())
	}
	require.NoError(t, p.Close())
	waitFor(t, func() bool { return runtime.NumGoroutine() <= baseline }, "goroutines back to baseline")
}

const pythonPush = `
import os, sys, zmq
from zmq.utils.monitor import recv_monitor_message
n, size = int(sys.argv[1]), int(sys.argv[2])
ctx = zmq.Context()
s = ctx.socket(zmq.PUSH)
if os.environ.get('CURVE_SECRET'):
    s.curve_server = True
    s.curve_secretkey = os.environ['CURVE_SECRET'].encode()
mon = s.get_monitor_socket(zmq.EVENT_ACCEPTED)
port = s.bind_to_random_port('tcp://127.0.0.1')
print(port, flush=True)
for i in range(n):
    s.send_multipart([b'\x01\x00\x00\x00', b'id:%06d' % i, bytes((i + j % 251) % 256 for j in range(size))])
sys.stdin.readline()
s.send_multipart([b'\x01\x00\x00\x00', b'id:%06d' % n, b''])
accepted = 0
while mon.poll(200):
    if recv_monitor_message(mon)['event'] == zmq.EVENT_ACCEPTED:
        accepted += 1
print('accepted', accepted, flush=True)
sys.stdin.read()
s.close(linger=0)
`

// pyPush is a libzmq PUSH socket in a python process: it sends n messages,
// and one more when told, then reports how many connections it accepted.
type pyPush struct {
	endpoint string
	stdin    io.WriteCloser
	stdout   *bufio.Scanner
}

func startPyPush(t *testing.T, n, size int) *pyPush {
	t.Helper()
	return startPyPushEnv(t, n, size, nil)
}

// startPyPushEnv is startPyPush with environment variables: CURVE_SECRET
// makes the PUSH socket a CURVE server with that secret key.
func startPyPushEnv(t *testing.T, n, size int, env []string) *pyPush {
	t.Helper()
	python := testsupport.RequirePython(t, "zmq")
	cmd := exec.Command(python, "-c", pythonPush, strconv.Itoa(n), strconv.Itoa(size))
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		stdin.Close()
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("python stderr: %s", stderr.String())
		}
	})
	p := &pyPush{stdin: stdin, stdout: bufio.NewScanner(stdout)}
	require.True(t, p.stdout.Scan(), "python printed its port")
	p.endpoint = "tcp://127.0.0.1:" + p.stdout.Text()
	return p
}

func TestPullFromLibzmqPush(t *testing.T) {
	const n = 1000
	py := startPyPush(t, n, 1000)
	// A heartbeat of 500 ms: an answer within 50 ms is not assured on a
	// busy machine.
	s := dial(t, []string{py.endpoint}, Options{Heartbeat: 500 * time.Millisecond})
	for i := range n {
		require.Equal(t, frames(message(i, 1000)), recv(t, s), "message %d", i)
	}

	// Idle for many heartbeat intervals: libzmq answers our PINGs, so
	// the connection stays.
	time.Sleep(4 * time.Second)
	_, err := io.WriteString(py.stdin, "go\n")
	require.NoError(t, err)
	assert.Equal(t, fmt.Sprintf("id:%06d", n), string(recv(t, s)[1]))
	require.True(t, py.stdout.Scan())
	assert.Equal(t, "accepted 1", strings.TrimSpace(py.stdout.Text()), "one connection, never dropped")
}

// libzmq's test keys (tests/testutil_security.hpp).
const (
	testServerPublic = "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7"
	testServerSecret = "JTKVSB%%)wK0E.X)V>+}o?pNmC{O&4W4b!Ni{Lh6"
	testClientPublic = "Yne@$w-vo<fVvi]a<NY6T1ed:M$fCG*[IaLV{hID"
	testClientSecret = "D:)Q[IlAW!ahhC2ac:9*A}h:p?([4%wOTJ%JR%cs"
)

func key(t *testing.T, s string) *[32]byte {
	t.Helper()
	k, err := z85.DecodeKey(s)
	require.NoError(t, err)
	return &k
}

func clientKeys(t *testing.T) *zmqpub.CurveKeys {
	keys := zmqpub.NewCurveKeys(*key(t, testClientSecret))
	return &keys
}

// The CURVE client against libzmq's CURVE server, with heartbeats (sealed
// PINGs that libzmq answers).
func TestPullCurveFromLibzmqPush(t *testing.T) {
	const n = 300
	py := startPyPushEnv(t, n, 1000, []string{"CURVE_SECRET=" + testServerSecret})
	// 500 ms, as TestPullFromLibzmqPush: a loaded machine may answer a
	// PING later than 50 ms.
	s := dial(t, []string{py.endpoint}, Options{Heartbeat: 500 * time.Millisecond, CurveServerKey: key(t, testServerPublic), CurveKeys: clientKeys(t)})
	for i := range n {
		require.Equal(t, frames(message(i, 1000)), recv(t, s), "message %d", i)
	}
	time.Sleep(4 * time.Second)
	_, err := io.WriteString(py.stdin, "go\n")
	require.NoError(t, err)
	assert.Equal(t, fmt.Sprintf("id:%06d", n), string(recv(t, s)[1]))
	require.True(t, py.stdout.Scan())
	assert.Equal(t, "accepted 1", strings.TrimSpace(py.stdout.Text()), "one connection, never dropped")
}

func curvePublisher(t *testing.T, src zmqpub.Source, allowed ...[32]byte) *zmqpub.Publisher {
	t.Helper()
	p, err := zmqpub.NewPublisher(zmqpub.PublisherConfig{
		Endpoints:        []string{"tcp://127.0.0.1:0"},
		CurveSecretKey:   key(t, testServerSecret),
		CurveAllowedKeys: allowed,
		Logf:             t.Logf,
	}, src)
	require.NoError(t, err)
	t.Cleanup(func() { p.Close() })
	return p
}

func TestPullCurveFromPublisher(t *testing.T) {
	ms := make([]zmqpub.Message, 500)
	for i := range ms {
		ms[i] = message(i, i%300)
	}
	ms[10] = message(10, 10<<20)
	p := curvePublisher(t, newQueue(ms...), *key(t, testClientPublic))
	s := dial(t, p.Endpoints(), Options{Heartbeat: 500 * time.Millisecond, CurveServerKey: key(t, testServerPublic), CurveKeys: clientKeys(t)})
	for _, m := range ms {
		require.Equal(t, frames(m), recv(t, s))
	}
	assert.EqualValues(t, 1, p.Stats().Connects)
}

func TestPullCurveRefused(t *testing.T) {
	p := curvePublisher(t, newQueue(message(1, 5))) // no key allowed
	var mu sync.Mutex
	var logs []string
	logf := func(format string, args ...any) {
		mu.Lock()
		logs = append(logs, fmt.Sprintf(format, args...))
		mu.Unlock()
	}
	s := dial(t, p.Endpoints(), Options{ReconnectIvl: 10 * time.Millisecond, CurveServerKey: key(t, testServerPublic), Logf: logf})
	plain := dial(t, p.Endpoints(), Options{ReconnectIvl: 10 * time.Millisecond})
	waitFor(t, func() bool { return p.Stats().CurveRefused >= 4 }, "refusals")
	// The socket logs the refusal once it has read it, after the
	// publisher counted it.
	waitFor(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(logs) > 0
	}, "the refusal logged")
	mu.Lock()
	assert.Contains(t, logs[0], `ERROR "400"`)
	mu.Unlock()
	for _, sock := range []*Socket{s, plain} {
		select {
		case m := <-sock.msgs:
			t.Fatalf("a refused socket received %q", m)
		default:
		}
	}
	assert.EqualValues(t, 0, p.Stats().Connects)
}

// BenchmarkPublisherToPull measures messages moved from a Publisher to a
// pull Socket over loopback TCP, per value size.
func BenchmarkPublisherToPull(b *testing.B) {
	for _, size := range []int{100, 64 << 10, 1 << 20} {
		b.Run(strconv.Itoa(size), func(b *testing.B) {
			m := message(1, size)
			src := newQueue()
			p, err := zmqpub.NewPublisher(zmqpub.PublisherConfig{Endpoints: []string{"tcp://127.0.0.1:0"}}, src)
			require.NoError(b, err)
			defer p.Close()
			s := Dial(p.Endpoints(), Options{})
			defer s.Close()
			b.SetBytes(int64(m.Size()))
			b.ResetTimer()
			go func() {
				for range b.N {
					src.Put(m)
				}
			}()
			for range b.N {
				if _, err := s.Recv(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
