package cluster

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/zredis/zredis/cluster/bus"
)

// A link is one TCP connection of the bus (clusterLink): outbound, made
// by this node to node, or inbound, accepted, with node set once its
// sender is known. Its reader goroutine reads whole messages and hands
// them to the State under mu; its writer goroutine writes what send
// queued, so that no I/O is done under mu.
type link struct {
	s       *State
	conn    net.Conn
	node    *Node
	inbound bool
	ctime   int64 // Unix ms

	out       chan []byte   // messages waiting for the writer
	done      chan struct{} // closed by close
	closeOnce sync.Once
}

// sendQueueLen bounds the messages waiting on one link: a peer that does
// not read has its link freed, as Redis frees a link past
// cluster-link-sendbuf-limit, rather than holding memory for it.
const sendQueueLen = 1024

// maxMessageLen bounds a message a peer may announce: a PUBLISH carries
// a message of up to proto-max-bulk-len (512 MB). A message's buffer
// grows with what arrives (readMessage), never to what was announced.
const maxMessageLen = bus.HeaderLen + 8 + 2*(512<<20)

// readChunk is how much of a message's announced length is allocated at
// a time beyond what arrived.
const readChunk = 64 << 10

func (s *State) newLink(conn net.Conn, node *Node, inbound bool) *link {
	l := &link{s: s, conn: conn, node: node, inbound: inbound, ctime: nowMs(),
		out: make(chan []byte, sendQueueLen), done: make(chan struct{})}
	s.links[l] = struct{}{}
	s.wg.Add(2)
	go l.readLoop()
	go l.writeLoop()
	return l
}

// send queues msg; a link whose queue is full is freed. Under mu.
func (l *link) send(msg []byte) {
	if t := bus.Type(binary.BigEndian.Uint16(msg[12:])); t.Known() {
		l.s.sent[t]++
	}
	select {
	case <-l.done:
	case l.out <- msg:
	default:
		l.s.linksOverLimit++
		l.s.opt.Logf('#', "Freeing cluster link(%s node %s, used memory: over %d messages) due to exceeding send buffer memory limit.",
			l.direction(), l.nodeName(), sendQueueLen)
		l.s.freeLink(l)
	}
}

func (l *link) direction() string {
	if l.inbound {
		return "from"
	}
	return "to"
}

func (l *link) nodeName() string {
	if l.node == nil {
		return "<unknown>"
	}
	return string(l.node.Name[:])
}

// close closes the socket, which ends both goroutines. Any goroutine.
func (l *link) close() {
	l.closeOnce.Do(func() {
		close(l.done)
		l.conn.Close()
	})
}

func (l *link) writeLoop() {
	defer l.s.wg.Done()
	for {
		select {
		case <-l.done:
			return
		case msg := <-l.out:
			l.conn.SetWriteDeadline(time.Now().Add(time.Duration(l.s.writeTimeout.Load())))
			if _, err := l.conn.Write(msg); err != nil {
				l.close()
				return
			}
		}
	}
}

func (l *link) readLoop() {
	defer l.s.wg.Done()
	var buf []byte
	for {
		var err error
		buf, err = readMessage(l.conn, buf)
		if err != nil {
			if errors.Is(err, bus.ErrBadFrame) {
				l.s.opt.Logf('#', "%s", err)
			}
			break
		}
		msg, err := bus.Parse(buf)
		s := l.s
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			break
		}
		deliver := false
		if err != nil {
			s.opt.Logf('#', "%s", err)
		} else {
			deliver = s.process(l, msg)
		}
		lost := s.lostSlots
		s.lostSlots = nil
		role := s.fo.dirty && s.fo.serving
		s.unlock()
		if len(lost) > 0 {
			s.opt.OnSlotsLost(lost)
		}
		if role {
			// A vote, a manual failover's step or a new master: acted
			// on at once, as Redis's clusterBeforeSleep does.
			s.opt.Exec(func() { s.roleStep(false) })
		}
		if deliver {
			// Off the lock: delivery takes the keyspace's, which the
			// server's commands hold while they call the State.
			s.opt.OnPublish(msg.Channel, msg.Payload, msg.Type == bus.PublishShard)
		}
		if cap(buf) > 1<<20 {
			buf = nil // one large PUBLISH does not stay held
		}
	}
	l.s.mu.Lock()
	l.s.freeLink(l)
	l.s.mu.Unlock()
}

// readMessage reads one whole message into buf (reused), growing it as
// the message's bytes arrive.
func readMessage(r io.Reader, buf []byte) ([]byte, error) {
	buf = append(buf[:0], make([]byte, 8)...)
	if _, err := io.ReadFull(r, buf); err != nil {
		return buf, err
	}
	n, err := bus.FrameLen(buf, maxMessageLen)
	if err != nil {
		return buf, err
	}
	for len(buf) < n {
		m := min(n, len(buf)+readChunk)
		if cap(buf) < m {
			nb := make([]byte, len(buf), max(m, 2*cap(buf)))
			copy(nb, buf)
			buf = nb
		}
		got, err := io.ReadFull(r, buf[len(buf):m])
		buf = buf[:len(buf)+got]
		if err != nil {
			return buf, err
		}
	}
	return buf, nil
}

// freeLink drops l (freeClusterLink): it is closed and no node points to
// it. Under mu.
func (s *State) freeLink(l *link) {
	l.close()
	delete(s.links, l)
	if n := l.node; n != nil {
		if n.link == l {
			n.link = nil
			n.Linked = false
		}
		if n.inLink == l {
			n.inLink = nil
		}
	}
}

// busTLS is the TLS configuration of a bus connection: nil for a
// plaintext bus (tls-cluster no). ok is false when the bus is TLS but
// TLS is not configured: no link is made then, never a plaintext one.
// Redis's bus always asks the connecting node for its certificate
// (TLS_CLIENT_AUTH_YES), whatever tls-auth-clients says of clients.
// Under mu.
func (s *State) busTLS(accepting bool) (conf *tls.Config, ok bool) {
	if !s.opt.TLS {
		return nil, true
	}
	get := s.opt.TLSClient
	if accepting {
		get = s.opt.TLSServer
	}
	if get == nil {
		return nil, false
	}
	if conf = get(); conf == nil {
		return nil, false
	}
	if accepting {
		conf = conf.Clone()
		conf.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return conf, true
}

// handshake completes a TLS connection's handshake within timeout, or
// closes it; Stop cuts it short.
func (s *State) handshake(tc *tls.Conn, timeout time.Duration) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	go func() {
		select {
		case <-s.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	if err := tc.HandshakeContext(ctx); err != nil {
		tc.Close()
		return nil, err
	}
	return tc, nil
}

// acceptLoop takes the bus's inbound connections.
func (s *State) acceptLoop() {
	defer s.wg.Done()
	for {
		conn, err := s.ln.Accept()
		if err != nil {
			select {
			case <-s.stop:
				return
			default:
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			time.Sleep(10 * time.Millisecond)
			continue
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			conn.Close()
			return
		}
		s.opt.Logf('.', "Accepting cluster node connection from %s", conn.RemoteAddr())
		// A TLS link's handshake is its reader's first read.
		conf, ok := s.busTLS(true)
		if !ok {
			s.opt.Logf('#', "Cluster bus connection from %s refused: tls-cluster is on and TLS is not configured", conn.RemoteAddr())
			s.mu.Unlock()
			conn.Close()
			continue
		}
		if conf != nil {
			conn = tls.Server(conn, conf)
		}
		s.newLink(conn, nil, true)
		s.mu.Unlock()
	}
}

// connect dials node's bus for its outbound link, off mu (a TLS bus's
// handshake too, within the node timeout), then sends it a MEET (a node
// met through CLUSTER MEET or gossip) or a PING. tlsConf is nil for a
// plaintext bus.
func (s *State) connect(n *Node, ip string, cport int, timeout time.Duration, tlsConf *tls.Config) {
	defer s.wg.Done()
	d := net.Dialer{Timeout: timeout}
	conn, err := d.Dial("tcp", net.JoinHostPort(ip, strconv.Itoa(cport)))
	if err == nil && tlsConf != nil {
		conn, err = s.handshake(tls.Client(conn, tlsConf), timeout)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n.dialing = false
	if err != nil {
		// Redis counts the attempt as a ping sent, so the node is
		// marked failing if it stays unreachable.
		if n.PingSent == 0 {
			n.PingSent = nowMs()
		}
		s.opt.Logf('.', "Connection with Node %.40s at %s:%d failed: %v", n.Name[:], ip, cport, err)
		return
	}
	if s.closed || s.cfg.Lookup(n.Name) != n || n.link != nil {
		conn.Close()
		return
	}
	l := s.newLink(conn, n, false)
	n.link, n.Linked = l, true
	// Redis sends the ping on connect with ping_sent left as it was, so
	// an old pending ping still counts toward a failure.
	oldPing := n.PingSent
	typ := bus.Ping
	if n.Flags&bus.FlagMeet != 0 {
		typ = bus.Meet
	}
	s.sendPing(l, typ)
	if oldPing != 0 {
		n.PingSent = oldPing
	}
	n.Flags &^= bus.FlagMeet
}
