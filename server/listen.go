package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/zredis/zredis/tlsconfig"
)

// listening is the server's TCP listeners (bind, port) and the goroutines
// that accept on them. CONFIG SET bind or port replaces them, as Redis's
// changeBindAddr and changeListenPort do.
type listening struct {
	mu        sync.Mutex
	listeners []net.Listener // TCP
	tls       []net.Listener // TLS (tls-port)
	unix      net.Listener   // unixsocket, nil without one
	accepting bool           // accept loops run (startAccepting until stop)
	stopped   bool           // stop ran: nothing is bound again
	loops     sync.WaitGroup // the accept loops
}

// errNoListener is Redis's reason to exit when there is nothing to listen
// on (port 0, or bind "").
var errNoListener = errors.New("Configured to not listen anywhere, exiting.")

// The errors of CONFIG SET when the new listeners cannot all be made
// (the old ones are kept): bind's (applyBind), port's and tls-port's
// (updatePort, applyTLSPort), and tls-port's when TLS cannot be
// configured for it (applyTLSPort).
var (
	errBindFailed   = errors.New("Failed to bind to specified addresses.")
	errListenPort   = errors.New("Unable to listen on this port. Check server logs.")
	errTLSConfigure = errors.New("Unable to update TLS configuration. Check server logs.")
)

// errTLSSetup is listenTLS's error when TLS cannot be configured: the
// start-up's text (initServer).
var errTLSSetup = errors.New("Failed to configure TLS. Check logs for more info.")

// listen binds every bind address on the configured port. An address
// with a leading '-' is optional: failing to bind it is not an error
// (as in Redis, for "-::1" on hosts without IPv6). Port 0 or bind ""
// means no TCP listener, and then, with nothing else to listen on, the
// server does not start.
func (s *Server) listen() error {
	tlsLns, err := s.listenTLS()
	if err != nil {
		return err
	}
	lns, err := s.bindAll(s.cfg.Strings("bind"), s.cfg.Int("port"))
	if err != nil {
		closeListeners(tlsLns)
		return err
	}
	unix, err := s.listenUnix()
	if err != nil {
		closeListeners(lns)
		closeListeners(tlsLns)
		return err
	}
	if len(lns) == 0 && len(tlsLns) == 0 && unix == nil {
		return errNoListener
	}
	s.listening.mu.Lock()
	s.listening.listeners, s.listening.tls, s.listening.unix = lns, tlsLns, unix
	s.listening.mu.Unlock()
	return nil
}

// listenTLS configures TLS and binds the TLS port, when tls-port is set.
// Without a TLS port, TLS is configured for tls-replication or
// tls-cluster yes, once (Redis's initServer configures it for any).
func (s *Server) listenTLS() ([]net.Listener, error) {
	port := s.cfg.Int("tls-port")
	if port == 0 && (!s.tlsWanted() || s.tlsClientConf.Load() != nil) {
		return nil, nil
	}
	// Built anew: the files may have changed while TLS was off.
	server, client, err := tlsconfig.Build(s.cfg)
	if err != nil {
		s.log.Warningf("%v", err)
		return nil, errTLSSetup
	}
	s.tlsConf.Store(server)
	s.tlsClientConf.Store(client)
	if port == 0 {
		return nil, nil
	}
	return s.bindAll(s.cfg.Strings("bind"), port)
}

func closeListeners(lns []net.Listener) {
	for _, ln := range lns {
		ln.Close()
	}
}

// listenUnix listens on the unixsocket path, nil without one: a file left
// there is removed first, and unixsocketperm (when not 0) is the socket's
// mode, as Redis's anetUnixServer does. Closing the listener removes the
// file.
func (s *Server) listenUnix() (net.Listener, error) {
	path := s.cfg.String("unixsocket")
	if path == "" {
		return nil, nil
	}
	os.Remove(path)
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("Failed opening Unix socket: %v", err)
	}
	if perm := s.cfg.Int("unixsocketperm"); perm != 0 {
		if err := os.Chmod(path, os.FileMode(perm)); err != nil {
			ln.Close()
			return nil, fmt.Errorf("Failed opening Unix socket: chmod: %v", err)
		}
	}
	return ln, nil
}

// bindAll listens on every address on port; on a failure of a
// mandatory address it closes what it opened and returns the error.
func (s *Server) bindAll(addrs []string, port int64) ([]net.Listener, error) {
	if port == 0 {
		return nil, nil
	}
	var lns []net.Listener
	for _, a := range addrs {
		optional := strings.HasPrefix(a, "-")
		a = strings.TrimPrefix(a, "-")
		switch a {
		case "*":
			a = "0.0.0.0"
		case "::*":
			a = "::"
		}
		var lc net.ListenConfig
		if mark := s.cfg.Int("socket-mark-id"); mark > 0 {
			lc.Control = s.markControl(mark)
		}
		ln, err := lc.Listen(context.Background(), "tcp", net.JoinHostPort(a, strconv.FormatInt(port, 10)))
		if err != nil {
			if optional {
				s.log.Warningf("Warning: Could not create server TCP listening socket %s:%d: %v", a, port, err)
				continue
			}
			for _, l := range lns {
				l.Close()
			}
			return nil, fmt.Errorf("Failed listening on port %d (tcp), aborting: %w", port, err)
		}
		lns = append(lns, ln)
	}
	if len(addrs) > 0 && len(lns) == 0 {
		return nil, fmt.Errorf("Failed listening on port %d (tcp), aborting", port)
	}
	return lns, nil
}

// rebind replaces the listeners with ones on the configured bind and
// port (CONFIG SET bind, port, tls-port: the directive changed): the old
// ones are closed first, so that the new ones may take the same
// addresses, and opened again when the new ones cannot all be bound,
// with the error text Redis gives for that directive. Port 0 closes the
// TCP listeners, as Redis's changeListenPort does. Under the keyspace
// lock.
func (s *Server) rebind(directive string) error {
	l := &s.listening
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped {
		return errors.New("the server is shutting down")
	}
	old, oldTLS := l.listeners, l.tls
	closeListeners(old)
	closeListeners(oldTLS)
	lns, err := s.bindAll(s.cfg.Strings("bind"), s.cfg.Int("port"))
	var tlsLns []net.Listener
	if err == nil {
		if tlsLns, err = s.listenTLS(); err != nil {
			closeListeners(lns)
		}
	}
	if err != nil {
		s.log.Warningf("%v", err)
		// The old addresses were just released: take them again.
		l.listeners, l.tls = relisten(s, old), relisten(s, oldTLS)
		s.acceptOn(l.listeners, s.accept)
		s.acceptOn(l.tls, s.acceptTLS)
		switch {
		case directive == "bind":
			return errBindFailed
		case directive == "tls-port" && errors.Is(err, errTLSSetup):
			return errTLSConfigure
		}
		return errListenPort
	}
	l.listeners, l.tls = lns, tlsLns
	s.acceptOn(lns, s.accept)
	s.acceptOn(tlsLns, s.acceptTLS)
	return nil
}

// relisten binds the addresses of closed listeners again.
func relisten(s *Server, old []net.Listener) []net.Listener {
	var lns []net.Listener
	for _, ln := range old {
		a := ln.Addr().String()
		if ln, err := net.Listen("tcp", a); err == nil {
			lns = append(lns, ln)
		} else {
			s.log.Warningf("Could not listen again on %s: %v", a, err)
		}
	}
	return lns
}

// startAccepting starts an accept loop per listener.
func (l *listening) startAccepting(s *Server) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.accepting = true
	s.acceptOn(l.listeners, s.accept)
	s.acceptOn(l.tls, s.acceptTLS)
	if l.unix != nil {
		s.acceptOn([]net.Listener{l.unix}, s.accept)
	}
}

// acceptOn starts the accept loops of lns, handing each connection to
// handle, once accepting has started. With l.mu held.
func (s *Server) acceptOn(lns []net.Listener, handle func(net.Conn)) {
	l := &s.listening
	if !l.accepting {
		return
	}
	for _, ln := range lns {
		l.loops.Add(1)
		go func() {
			defer l.loops.Done()
			s.acceptLoop(ln, handle)
		}()
	}
}

// stop closes the listeners and waits for the accept loops to end. The
// unix socket's file goes with its listener, as Redis removes it at exit.
func (l *listening) stop(log *Logger) {
	l.mu.Lock()
	l.accepting, l.stopped = false, true
	closeListeners(l.listeners)
	closeListeners(l.tls)
	l.listeners, l.tls = nil, nil
	if l.unix != nil {
		log.Noticef("Removing the unix socket file.")
		l.unix.Close()
		l.unix = nil
	}
	l.mu.Unlock()
	l.loops.Wait()
}

// closeAll closes the listeners of a server that does not start.
func (l *listening) closeAll() {
	l.mu.Lock()
	defer l.mu.Unlock()
	closeListeners(l.listeners)
	closeListeners(l.tls)
	if l.unix != nil {
		l.unix.Close()
	}
}

// Addr is the address of the first listener, for tests.
func (s *Server) Addr() net.Addr {
	s.listening.mu.Lock()
	defer s.listening.mu.Unlock()
	if len(s.listening.listeners) == 0 {
		return nil
	}
	return s.listening.listeners[0].Addr()
}
