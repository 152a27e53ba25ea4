// Package pull is a 0MQ PULL socket speaking ZMTP 3.1 over tcp and ipc:
// the listener side of the expiry publisher. It connects to every endpoint
// it is given, reconnects by itself when a connection drops or the server
// is not up yet, and hands whole multipart messages to Recv.
package pull

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"time"

	"github.com/zredis/zredis/zmqpub"
)

// Options tunes a Socket; the zero value of a field picks its default.
type Options struct {
	// HWM bounds the messages received and not yet taken by Recv; while
	// it is reached, the socket stops reading and the server's queue
	// fills. Default 1000.
	HWM int
	// Heartbeat, when positive, sends a PING every Heartbeat and drops a
	// connection on which nothing arrived for 3 intervals (a server
	// answers each PING with a PONG, so a live idle one stays).
	Heartbeat time.Duration
	// ReconnectIvl is the pause before connecting again after a failed
	// attempt or a dropped connection. Default 100ms.
	ReconnectIvl time.Duration
	// MaxFrame bounds every frame; a connection announcing a larger one
	// is dropped before anything is allocated for it. Default 512 MiB.
	MaxFrame int64
	// CurveServerKey, when set, makes every connection a CURVE client
	// (as libzmq's curve_serverkey): the server's long-term public key,
	// which the server proves it holds. CurveKeys is then the listener's
	// own long-term key pair, the public key of which the server must
	// allow; when nil, a key pair is generated for this socket.
	CurveServerKey *[32]byte
	CurveKeys      *zmqpub.CurveKeys
	// Logf, when set, is told why a connection failed its handshake (the
	// server refused the key, speaks another mechanism, ...).
	Logf func(format string, args ...any)
}

// Defaults for the zero values of Options.
const (
	DefaultHWM          = 1000
	DefaultReconnectIvl = 100 * time.Millisecond
	DefaultMaxFrame     = 512 << 20
	// MaxParts bounds the frames of one message, so that a peer cannot
	// grow a message without end from frames that each pass MaxFrame.
	MaxParts = 64
	// handshakeTimeout bounds the greeting and READY exchange.
	handshakeTimeout = 10 * time.Second
	// missedHeartbeats is how many heartbeat intervals of silence drop a
	// connection.
	missedHeartbeats = 3
)

// ErrClosed is returned by Recv after Close.
var ErrClosed = errors.New("pull: socket closed")

// Socket is a PULL socket connected to one or more endpoints.
type Socket struct {
	opt    Options
	msgs   chan [][]byte
	ctx    context.Context // cancelled by Close
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu    sync.Mutex
	conns map[net.Conn]struct{} // open connections, closed by Close
}

// Dial starts connecting to every endpoint (tcp://host:port or
// ipc://path) and returns at once; each endpoint is served by its own
// goroutine that reconnects every ReconnectIvl until Close. An endpoint
// that cannot be parsed (see zmqpub.SplitEndpoint, which a caller can use
// to check endpoints first) never connects.
func Dial(endpoints []string, opt Options) *Socket {
	if opt.HWM <= 0 {
		opt.HWM = DefaultHWM
	}
	if opt.ReconnectIvl <= 0 {
		opt.ReconnectIvl = DefaultReconnectIvl
	}
	if opt.MaxFrame <= 0 {
		opt.MaxFrame = DefaultMaxFrame
	}
	if opt.CurveServerKey != nil && opt.CurveKeys == nil {
		if keys, err := zmqpub.GenerateCurveKeys(); err == nil {
			opt.CurveKeys = &keys
		} else if opt.Logf != nil {
			opt.Logf("no CURVE key pair (every connection will fail): %v", err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Socket{
		opt:    opt,
		msgs:   make(chan [][]byte, opt.HWM),
		ctx:    ctx,
		cancel: cancel,
		conns:  make(map[net.Conn]struct{}),
	}
	for _, ep := range endpoints {
		network, address, err := zmqpub.SplitEndpoint(ep)
		if err != nil {
			continue
		}
		s.wg.Add(1)
		go s.connectLoop(network, address)
	}
	return s
}

// Recv returns the next multipart message, waiting for one; messages from
// several endpoints are interleaved as they arrive. It returns ErrClosed
// once the socket is closed.
func (s *Socket) Recv() ([][]byte, error) {
	select {
	case <-s.ctx.Done():
		return nil, ErrClosed
	default:
	}
	select {
	case m := <-s.msgs:
		return m, nil
	case <-s.ctx.Done():
		return nil, ErrClosed
	}
}

// Close closes every connection, stops reconnecting and waits for the
// socket's goroutines. Messages not yet received are dropped.
func (s *Socket) Close() error {
	s.cancel()
	s.mu.Lock()
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	return nil
}

// connectLoop connects to one endpoint and serves the connection, again
// and again, until Close.
func (s *Socket) connectLoop(network, address string) {
	defer s.wg.Done()
	var dialer net.Dialer
	for {
		conn, err := dialer.DialContext(s.ctx, network, address)
		if err == nil && s.track(conn) {
			s.serve(conn)
			s.untrack(conn)
		}
		select {
		case <-s.ctx.Done():
			return
		case <-time.After(s.opt.ReconnectIvl):
		}
	}
}

// track registers conn for Close; it reports false (and closes conn) when
// the socket is already closed.
func (s *Socket) track(conn net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ctx.Err() != nil {
		conn.Close()
		return false
	}
	s.conns[conn] = struct{}{}
	return true
}

func (s *Socket) untrack(conn net.Conn) {
	s.mu.Lock()
	delete(s.conns, conn)
	s.mu.Unlock()
	conn.Close()
}

// serve handshakes on conn and delivers its messages until the connection
// fails, the peer breaks the protocol or the socket is closed.
func (s *Socket) serve(conn net.Conn) {
	c := &connection{conn: conn, opt: s.opt}
	var r io.Reader = conn
	if s.opt.Heartbeat > 0 {
		r = &livenessReader{conn: conn, timeout: missedHeartbeats * s.opt.Heartbeat}
	}
	br := bufio.NewReaderSize(r, 32<<10)

	conn.SetDeadline(time.Now().Add(handshakeTimeout))
	var err error
	if s.opt.CurveServerKey != nil {
		if s.opt.CurveKeys == nil {
			return // no randomness to make a key pair from
		}
		c.curve, err = zmqpub.CurveClientHandshake(c, br, s.opt.CurveKeys, s.opt.CurveServerKey, zmqpub.SocketPull, zmqpub.SocketPush)
	} else {
		err = zmqpub.Handshake(c, br, zmqpub.SocketPull, zmqpub.SocketPush)
	}
	if err != nil {
		if s.opt.Logf != nil && s.ctx.Err() == nil {
			s.opt.Logf("handshake with %s failed: %v", conn.RemoteAddr(), err)
		}
		return
	}
	conn.SetDeadline(time.Time{})

	if s.opt.Heartbeat > 0 {
		stopPing := make(chan struct{})
		var pinger sync.WaitGroup
		pinger.Add(1)
		go func() {
			defer pinger.Done()
			c.pingLoop(stopPing)
		}()
		// Close the connection before waiting, so that a PING blocked in
		// Write returns.
		defer pinger.Wait()
		defer conn.Close()
		defer close(stopPing)
	}

	var parts [][]byte
	for {
		f, err := zmqpub.ReadFrame(br, s.opt.MaxFrame)
		if err == nil && c.curve != nil {
			f, err = c.curve.Open(f)
		}
		if err != nil {
			return
		}
		if f.Command {
			if !c.handleCommand(f.Body) {
				return
			}
			continue
		}
		parts = append(parts, f.Body)
		if f.More {
			if len(parts) >= MaxParts {
				return
			}
			continue
		}
		select {
		case s.msgs <- parts:
		case <-s.ctx.Done():
			return
		}
		parts = nil
	}
}
