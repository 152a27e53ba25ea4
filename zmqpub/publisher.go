package zmqpub

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Source is what the publisher drains; *Outbox implements it.
type Source interface {
	// Next blocks until a message is available (oldest first) or stop is
	// closed (then it returns false).
	Next(stop <-chan struct{}) (Message, bool)
	// Requeue puts messages back at the head, in the given order.
	Requeue(ms []Message)
}

var _ Source = (*Outbox)(nil)

// PublisherConfig configures a Publisher.
type PublisherConfig struct {
	Endpoints        []string      // tcp://host:port (host may be * or an IP), ipc:///path
	HandshakeTimeout time.Duration // per connection; DefaultHandshakeTimeout when 0
	PeerQueue        int           // messages queued per listener (libzmq's per-pipe HWM); DefaultPeerQueue when 0
	// MaxListeners bounds the listeners connected (one more is closed at
	// once), and, on their own, the connections still handshaking (one
	// more closes the one waiting longest). DefaultMaxListeners when 0;
	// SetMaxListeners changes it.
	MaxListeners int
	// CurveSecretKey, when set, makes the socket a CURVE server (as
	// libzmq's curve_server with this curve_secretkey): every listener
	// must handshake with CURVE, knowing the server's public key, and
	// hold a long-term key in CurveAllowedKeys; the stream is then
	// encrypted. Listeners speaking NULL, and keys not allowed, are
	// refused and counted (PublisherStats.CurveRefused).
	CurveSecretKey *[32]byte
	// CurveAllowedKeys are the listeners' long-term public keys;
	// SetCurveAllowedKeys replaces them for the handshakes that follow.
	CurveAllowedKeys [][32]byte
	Logf             func(format string, args ...any)
	// OnSent is called after a message's frames were written to a
	// listener's socket, from that listener's writer goroutine. May be nil.
	OnSent func(m *Message, at time.Time)
}

// Defaults for the zero values of PublisherConfig.
const (
	DefaultHandshakeTimeout = 5 * time.Second
	DefaultPeerQueue        = 64
	DefaultMaxListeners     = 64
)

// PublisherStats counts what the publisher did since it started.
type PublisherStats struct {
	Listeners         int64 // listeners connected now (handshake done)
	Connects          int64 // handshakes completed since start
	Sent              int64 // messages written to a listener's socket
	Requeued          int64 // messages handed back to the source, unwritten
	HandshakeFailures int64 // connections closed before or during the handshake
	Refused           int64 // connections closed for MaxListeners (a listener, or the oldest handshake)
	// CurveRefused counts the handshakes refused by CURVE: a listener
	// without CURVE, with another server key, with a key not allowed.
	CurveRefused int64
}

// Publisher is a 0MQ PUSH socket bound to every configured endpoint. Each
// message taken from the source goes to exactly one handshaken listener,
// round-robin across the listeners whose queue has room (libzmq's PUSH
// load balancing). A message is taken from the source only when some
// listener has room, so with no listener the messages stay in the source.
// Messages queued for a listener that disconnects, and those left at
// Close, are handed back to the source in order.
type Publisher struct {
	cfg       PublisherConfig
	src       Source
	listeners []net.Listener
	endpoints []string

	stop       chan struct{} // closed by Close
	dispatched chan struct{} // closed when the dispatcher has returned
	room       chan struct{} // cap 1: some peer may have gained room, or joined
	wg         sync.WaitGroup
	closeOnce  sync.Once

	mu          sync.Mutex
	closed      bool
	peers       []*peer                // handshaken, in join order
	cursor      int                    // round-robin position in peers
	handshaking map[net.Conn]time.Time // accepted, handshake not done: since when

	connects, sent, requeued, handshakeFailures, refused atomic.Int64
	maxListeners                                         atomic.Int64
	lastRefusalLog                                       time.Time // under mu

	curve         *CurveKeys                            // nil: NULL mechanism
	curveAllowed  atomic.Pointer[map[[32]byte]struct{}] // listeners' long-term keys
	curveRefused  atomic.Int64
	lastCurveLog  time.Time // under mu
	curveUnlogged int64     // refusals not logged since lastCurveLog, under mu
}

// SetCurveAllowedKeys replaces the listeners' keys a CURVE server
// accepts: connections handshaking from now on are checked against them,
// and connected listeners whose key is no longer allowed are disconnected
// (what was queued for them goes to the others), so that revoking a key
// cuts its holder off at once.
func (p *Publisher) SetCurveAllowedKeys(keys [][32]byte) {
	set := make(map[[32]byte]struct{}, len(keys))
	for _, k := range keys {
		set[k] = struct{}{}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.curveAllowed.Store(&set)
	for _, pr := range p.peers {
		if _, ok := set[pr.curveKey]; pr.curve != nil && !ok {
			pr.shutdown()
		}
	}
}

// CurvePublicKey returns the server's CURVE public key, ok false when the
// socket speaks NULL.
func (p *Publisher) CurvePublicKey() (key [32]byte, ok bool) {
	if p.curve == nil {
		return key, false
	}
	return p.curve.Public, true
}

// curveAllows reports whether a listener's long-term key is allowed.
func (p *Publisher) curveAllows(key *[32]byte) bool {
	_, ok := (*p.curveAllowed.Load())[*key]
	return ok
}

// SetMaxListeners changes MaxListeners for the connections that come from
// now on (n > 0).
func (p *Publisher) SetMaxListeners(n int) { p.maxListeners.Store(int64(n)) }

// NewPublisher binds every endpoint and starts the accept loops and the
// dispatcher. If any endpoint fails to bind, whatever was bound is closed
// and the error returned.
func NewPublisher(cfg PublisherConfig, src Source) (*Publisher, error) {
	if len(cfg.Endpoints) == 0 {
		return nil, errors.New("zmqpub: no endpoints")
	}
	if cfg.HandshakeTimeout <= 0 {
		cfg.HandshakeTimeout = DefaultHandshakeTimeout
	}
	if cfg.PeerQueue <= 0 {
		cfg.PeerQueue = DefaultPeerQueue
	}
	if cfg.MaxListeners <= 0 {
		cfg.MaxListeners = DefaultMaxListeners
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	p := &Publisher{
		cfg:         cfg,
		src:         src,
		stop:        make(chan struct{}),
		room:        make(chan struct{}, 1),
		dispatched:  make(chan struct{}),
		handshaking: make(map[net.Conn]time.Time),
	}
	p.maxListeners.Store(int64(cfg.MaxListeners))
	if cfg.CurveSecretKey != nil {
		keys := NewCurveKeys(*cfg.CurveSecretKey)
		p.curve = &keys
	}
	p.SetCurveAllowedKeys(cfg.CurveAllowedKeys)
	for _, ep := range cfg.Endpoints {
		l, bound, err := listen(ep)
		if err != nil {
			p.closeListeners()
			return nil, err
		}
		p.listeners = append(p.listeners, l)
		p.endpoints = append(p.endpoints, bound)
	}
	for _, l := range p.listeners {
		p.wg.Add(1)
		go p.acceptLoop(l)
	}
	p.wg.Add(1)
	go p.dispatch()
	return p, nil
}

// listen binds one endpoint and returns the listener and the endpoint as
// bound (a tcp port 0 resolved, the host kept as configured). A socket
// file left at an ipc path by a process that is gone is removed first; a
// live socket or any other file there is an error.
func listen(endpoint string) (net.Listener, string, error) {
	network, address, err := SplitEndpoint(endpoint)
	if err != nil {
		return nil, "", err
	}
	if network == "unix" {
		if err := removeStaleSocket(address); err != nil {
			return nil, "", fmt.Errorf("endpoint %q: %w", endpoint, err)
		}
	}
	l, err := net.Listen(network, address)
	if err != nil {
		return nil, "", fmt.Errorf("endpoint %q: %w", endpoint, err)
	}
	if network == "unix" {
		return l, endpoint, nil
	}
	_, port, _ := net.SplitHostPort(l.Addr().String())
	host, _, _ := net.SplitHostPort(strings.TrimPrefix(endpoint, "tcp://"))
	return l, "tcp://" + net.JoinHostPort(host, port), nil
}

// removeStaleSocket removes the unix socket at path when nothing listens
// on it any more.
func removeStaleSocket(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if fi.Mode()&os.ModeSocket == 0 {
		return fmt.Errorf("%s exists and is not a socket", path)
	}
	if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
		c.Close()
		return fmt.Errorf("%s: another process listens on it", path)
	}
	return os.Remove(path)
}

// Endpoints returns the endpoints as bound, in configuration order.
func (p *Publisher) Endpoints() []string {
	return append([]string(nil), p.endpoints...)
}

// Stats returns the publisher's counters.
func (p *Publisher) Stats() PublisherStats {
	p.mu.Lock()
	listeners := int64(len(p.peers))
	p.mu.Unlock()
	return PublisherStats{
		Listeners:         listeners,
		Connects:          p.connects.Load(),
		Sent:              p.sent.Load(),
		Requeued:          p.requeued.Load(),
		HandshakeFailures: p.handshakeFailures.Load(),
		Refused:           p.refused.Load(),
		CurveRefused:      p.curveRefused.Load(),
	}
}

// Close stops accepting, closes every connection, hands the messages not
// yet written back to the source and waits for every goroutine. Messages
// queued for a listener are not flushed first: they go back to the source
// (whose spool keeps them across a restart). The dispatcher stops before
// the peers, so that the peers' older messages are requeued last, in
// front of anything it put back.
func (p *Publisher) Close() error {
	p.closeOnce.Do(func() {
		close(p.stop)
		p.closeListeners()
		<-p.dispatched
		p.mu.Lock()
		p.closed = true
		for c := range p.handshaking {
			c.Close()
		}
		peers := append([]*peer(nil), p.peers...)
		p.mu.Unlock()
		for _, pr := range peers {
			pr.shutdown()
		}
	})
	p.wg.Wait()
	return nil
}

// closeListeners closes the listeners; a unix listener removes its socket
// file as it closes.
func (p *Publisher) closeListeners() {
	for _, l := range p.listeners {
		l.Close()
	}
}

// acceptLoop accepts connections on l until Close; each connection's
// handshake runs on its own goroutine so that a client that never speaks
// delays nobody.
func (p *Publisher) acceptLoop(l net.Listener) {
	defer p.wg.Done()
	var backoff time.Duration
	for {
		conn, err := l.Accept()
		if err != nil {
			select {
			case <-p.stop:
				return
			default:
			}
			// Out of file descriptors and the like: wait and retry, as
			// net/http does.
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			p.cfg.Logf("zmqpub: accept on %s: %v; retrying in %v", l.Addr(), err, backoff)
			select {
			case <-p.stop:
				return
			case <-time.After(backoff):
			}
			continue
		}
		backoff = 0
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			conn.Close()
			return
		}
		if int64(len(p.handshaking)) >= p.maxListeners.Load() {
			// Handshakes have a bound of their own, so that connections
			// that never handshake (anyone who can reach the endpoint can
			// open them) cannot keep listeners out: the one waiting
			// longest makes room, while a real listener's handshake takes
			// milliseconds.
			p.dropOldestHandshake()
		}
		if int64(len(p.peers)) >= p.maxListeners.Load() {
			// A bound on what listeners make the server hold: goroutines,
			// buffers, sockets.
			p.refused.Add(1)
			if now := time.Now(); now.Sub(p.lastRefusalLog) >= time.Second {
				p.lastRefusalLog = now
				p.cfg.Logf("zmqpub: connection from %s refused: %d listeners already (expiry-zmq-max-listeners)", conn.RemoteAddr(), p.maxListeners.Load())
			}
			p.mu.Unlock()
			conn.Close()
			continue
		}
		p.handshaking[conn] = time.Now()
		p.wg.Add(1)
		p.mu.Unlock()
		go p.handshake(conn)
	}
}

// dropOldestHandshake closes the connection that has been handshaking
// longest. Under mu.
func (p *Publisher) dropOldestHandshake() {
	var oldest net.Conn
	var since time.Time
	for c, t := range p.handshaking {
		if oldest == nil || t.Before(since) {
			oldest, since = c, t
		}
	}
	if oldest != nil {
		delete(p.handshaking, oldest)
		oldest.Close() // its handshake fails and ends (net.ErrClosed)
		p.refused.Add(1)
	}
}

// handshake runs the ZMTP handshake under the handshake timeout and, on
// success, turns the connection into a peer.
func (p *Publisher) handshake(conn net.Conn) {
	defer p.wg.Done()
	br := bufio.NewReaderSize(conn, 512)
	conn.SetDeadline(time.Now().Add(p.cfg.HandshakeTimeout))
	var curve *CurveSession
	var key [32]byte
	var err error
	if p.curve != nil {
		curve, key, err = CurveServerHandshake(conn, br, p.curve, p.curveAllows, SocketPush, SocketPull)
	} else {
		err = Handshake(conn, br, SocketPush, SocketPull)
	}
	if err == nil {
		err = conn.SetDeadline(time.Time{})
	}

	p.mu.Lock()
	delete(p.handshaking, conn)
	if err == nil && curve != nil && !p.curveAllows(&key) {
		// The key was revoked while the handshake ran.
		err = fmt.Errorf("%w: key revoked during the handshake", ErrRefused)
	}
	if err != nil || p.closed {
		p.mu.Unlock()
		conn.Close()
		if err != nil {
			p.handshakeFailed(conn, err)
		}
		return
	}
	pr := newPeer(p, conn, br, curve)
	pr.curveKey = key
	p.peers = append(p.peers, pr)
	p.wg.Add(2)
	p.mu.Unlock()

	p.connects.Add(1)
	go pr.readLoop()
	go pr.writeLoop()
	p.signalRoom()
}

// handshakeFailed counts and logs a failed handshake. A CURVE server's
// refusals (a listener without CURVE or with a key not allowed, which
// libzmq retries every 100 ms) are logged at most once a second, with the
// count of those not logged.
func (p *Publisher) handshakeFailed(conn net.Conn, err error) {
	p.handshakeFailures.Add(1)
	if errors.Is(err, net.ErrClosed) {
		return // dropped to make room for another handshake
	}
	if p.curve != nil {
		// With CURVE the endpoint may be exposed: every failure (a
		// refusal, a probe, a connection that never handshakes) is
		// logged at most once a second.
		p.curveRefused.Add(1)
		p.mu.Lock()
		now := time.Now()
		if now.Sub(p.lastCurveLog) < time.Second {
			p.curveUnlogged++
			p.mu.Unlock()
			return
		}
		p.lastCurveLog = now
		more := p.curveUnlogged
		p.curveUnlogged = 0
		p.mu.Unlock()
		if more > 0 {
			p.cfg.Logf("zmqpub: CURVE refused listener %s: %v (%d more refusals not logged since the last)", conn.RemoteAddr(), err, more)
		} else {
			p.cfg.Logf("zmqpub: CURVE refused listener %s: %v", conn.RemoteAddr(), err)
		}
		return
	}
	if !isProbe(err) {
		p.cfg.Logf("zmqpub: handshake with %s failed: %v", conn.RemoteAddr(), err)
	}
}

// isProbe reports whether a handshake failed because the client left
// without a word, as port scanners and health checks do; those are
// counted but not logged.
func isProbe(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET)
}

// signalRoom wakes the dispatcher if it waits for a peer with room.
func (p *Publisher) signalRoom() {
	select {
	case p.room <- struct{}{}:
	default:
	}
}

// dispatch moves messages from the source to the peers, one at a time, and
// only while some peer has room.
func (p *Publisher) dispatch() {
	defer p.wg.Done()
	defer close(p.dispatched)
	for {
		for !p.anyRoom() {
			select {
			case <-p.room:
			case <-p.stop:
				return
			}
		}
		m, ok := p.src.Next(p.stop)
		if !ok {
			return
		}
		if !p.deliver(m) {
			// The peers that had room left meanwhile.
			p.src.Requeue([]Message{m})
			p.requeued.Add(1)
		}
	}
}

// anyRoom reports whether some peer's queue has room.
func (p *Publisher) anyRoom() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, pr := range p.peers {
		if pr.hasRoom() {
			return true
		}
	}
	return false
}

// deliver queues m on the next peer with room after the round-robin
// cursor, and reports whether there was one. Only the dispatcher sends on
// a peer's queue, and only under p.mu while the peer is listed, so the
// room seen here cannot vanish before the send.
func (p *Publisher) deliver(m Message) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := len(p.peers)
	for i := range n {
		idx := (p.cursor + i) % n
		pr := p.peers[idx]
		if pr.hasRoom() {
			pr.queuedBytes.Add(int64(m.Size()))
			pr.queue <- m
			p.cursor = (idx + 1) % n
			return true
		}
	}
	return false
}

// removePeer unlists pr; after it returns the dispatcher sends it nothing
// more.
func (p *Publisher) removePeer(pr *peer) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, q := range p.peers {
		if q == pr {
			p.peers = append(p.peers[:i], p.peers[i+1:]...)
			if p.cursor > i {
				p.cursor--
			}
			if p.cursor >= len(p.peers) {
				p.cursor = 0
			}
			return
		}
	}
}

// requeue hands unwritten messages back to the source.
func (p *Publisher) requeue(ms []Message) {
	if len(ms) == 0 {
		return
	}
	p.src.Requeue(ms)
	p.requeued.Add(int64(len(ms)))
}
