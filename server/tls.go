package server

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"time"

	"github.com/zredis/zredis/tlsconfig"
)

// TLS (Redis tls.c) with Go's crypto/tls: for clients on tls-port, and
// for the link to a master with tls-replication yes (replication.Link).
//
// A client connection on the TLS port is handshaken on a goroutine of its
// own, then bridged to the event loops through a socket pair: the loops
// serve the inner end as they serve any client, and two pumps move the
// bytes between it and the TLS connection, each ending when its side
// closes. The client keeps its real address (CLIENT LIST, protected
// mode). A replica of this server on the TLS port is such a client: its
// payload and stream go through the bridge, the loop's OnDrained pacing
// them by what the pump took.
//
// The link to a master is a tls.Conn the link's goroutine reads and
// writes itself, as it does a TCP connection.

// tlsHandshakeTimeout bounds a client's handshake, so that a connection
// that never completes one does not hold a goroutine.
const tlsHandshakeTimeout = 10 * time.Second

// reconfigureTLS rebuilds the TLS configurations after CONFIG SET of a
// tls-* directive, when TLS is in use (a TLS port, tls-replication or
// tls-cluster yes), as Redis's applyTlsCfg: new handshakes use them, the
// next link to a master and the cluster bus's next links among them.
// Under the keyspace lock.
func (s *Server) reconfigureTLS() error {
	if s.cfg.Int("tls-port") == 0 && !s.tlsWanted() {
		return nil
	}
	server, client, err := tlsconfig.Build(s.cfg)
	if err != nil {
		s.log.Warningf("%v", err)
		return errors.New("Unable to update TLS configuration. Check server logs.")
	}
	s.tlsConf.Store(server)
	s.tlsClientConf.Store(client)
	return nil
}

// tlsWanted reports whether zredis makes TLS connections of its own:
// the link to a master (tls-replication) or the cluster bus
// (tls-cluster).
func (s *Server) tlsWanted() bool {
	return s.cfg.Bool("tls-replication") || s.cfg.Bool("tls-cluster")
}

// bridgedConn is the inner end of a TLS client's socket pair, named by
// the client's real addresses. closeTLS closes the TLS connection itself:
// the server calls it when it closes the client, so that a pump blocked
// writing to a client that stopped reading ends too.
type bridgedConn struct {
	*net.UnixConn
	remote, local net.Addr
	closeTLS      func()
}

func (c bridgedConn) RemoteAddr() net.Addr { return c.remote }
func (c bridgedConn) LocalAddr() net.Addr  { return c.local }

// acceptTLS handshakes a connection accepted on the TLS port, then hands
// the inner end of its bridge to accept and pumps the bytes until either
// side closes. The goroutine is the server's (tlsConns), ended by the
// client or by the server closing the connection, and its handshake by
// the shutdown (tlsStop).
func (s *Server) acceptTLS(raw net.Conn) {
	setKeepAlive(raw, s.cfg.Int("tcp-keepalive"))
	s.tlsConns.Add(1)
	go func() {
		defer s.tlsConns.Done()
		tc := tls.Server(raw, s.tlsConf.Load())
		ctx, cancel := context.WithTimeout(s.tlsStop, tlsHandshakeTimeout)
		err := tc.HandshakeContext(ctx)
		cancel()
		if err != nil {
			s.log.Warningf("Error accepting a client connection: %v (addr=%s laddr=%s)", err, raw.RemoteAddr(), raw.LocalAddr())
			raw.Close()
			return
		}
		fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
		if err != nil {
			s.log.Warningf("Accepting a TLS client: socketpair: %v", err)
			tc.Close()
			return
		}
		inner, err1 := unixConn(fds[0])
		outer, err2 := unixConn(fds[1])
		if err1 != nil || err2 != nil {
			s.log.Warningf("Accepting a TLS client: %v", errors.Join(err1, err2))
			for _, c := range []*net.UnixConn{inner, outer} {
				if c != nil {
					c.Close()
				}
			}
			tc.Close()
			return
		}
		s.accept(bridgedConn{UnixConn: inner, remote: raw.RemoteAddr(), local: raw.LocalAddr(), closeTLS: func() { raw.Close() }})
		clientDone := make(chan struct{})
		go func() {
			defer close(clientDone)
			io.Copy(outer, tc) // requests, until the client closes
			outer.CloseWrite()
		}()
		io.Copy(tc, outer) // replies, until the server closes the client
		tc.Close()
		<-clientDone
		outer.Close()
	}()
}

// unixConn makes a net.Conn of one end of a socket pair (the descriptor
// is the connection's).
func unixConn(fd int) (*net.UnixConn, error) {
	f := os.NewFile(uintptr(fd), "tls-bridge")
	defer f.Close() // FileConn made its own descriptor
	c, err := net.FileConn(f)
	if err != nil {
		return nil, err
	}
	return c.(*net.UnixConn), nil
}

// setKeepAlive applies tcp-keepalive to a TCP connection as Redis's
// anetKeepAlive does: probes after the interval idle, then every third of
// it, three of them; 0 turns keepalive off.
func setKeepAlive(nc net.Conn, ka int64) {
	tc, ok := nc.(*net.TCPConn)
	if !ok {
		return
	}
	tc.SetKeepAliveConfig(net.KeepAliveConfig{
		Enable:   ka > 0,
		Idle:     time.Duration(ka) * time.Second,
		Interval: time.Duration(max(ka/3, 1)) * time.Second,
		Count:    3,
	})
}
