package server

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
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

// tlsConfigure builds the TLS configurations from the tls-* directives,
// as Redis's tlsConfigure checks them: server for the clients of the TLS
// port, client for the connections zredis makes (the link to a master
// with tls-replication yes).
//
// The server configuration has a certificate and its key (the key
// decrypted with tls-key-file-pass), CA certificates (a file or a
// directory, one of them required unless no certificate is to be
// verified), client certificates as tls-auth-clients asks, the protocol
// versions of tls-protocols, and session tickets unless
// tls-session-caching is off.
//
// The client configuration presents tls-client-cert-file and
// tls-client-key-file (the key decrypted with tls-client-key-file-pass)
// when both are set, else the server's certificate, as Redis makes its
// client context only from both files; and it verifies the peer's
// certificate chain against the same CA certificates, without checking
// the host name, as OpenSSL's SSL_VERIFY_PEER without a host to match.
func (s *Server) tlsConfigure() (server, client *tls.Config, err error) {
	cfg := s.cfg
	certFile, keyFile := cfg.String("tls-cert-file"), cfg.String("tls-key-file")
	if certFile == "" || keyFile == "" {
		return nil, nil, errors.New("No tls-cert-file or tls-key-file configured")
	}
	cert, err := loadKeyPair(certFile, keyFile, cfg.String("tls-key-file-pass"))
	if err != nil {
		return nil, nil, err
	}
	caFile, caDir := cfg.String("tls-ca-cert-file"), cfg.String("tls-ca-cert-dir")
	if caFile == "" && caDir == "" && (cfg.String("tls-auth-clients") != "no" || cfg.Bool("tls-replication") || cfg.Bool("tls-cluster")) {
		return nil, nil, errors.New("Either tls-ca-cert-file or tls-ca-cert-dir must be specified when tls-cluster, tls-replication or tls-auth-clients are enabled!")
	}
	pool := x509.NewCertPool()
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil || !pool.AppendCertsFromPEM(pem) {
			return nil, nil, fmt.Errorf("Failed to configure CA certificate(s) file/directory: %s: %v", caFile, errOr(err, "no certificate found"))
		}
	}
	if caDir != "" {
		entries, err := os.ReadDir(caDir)
		if err != nil {
			return nil, nil, fmt.Errorf("Failed to configure CA certificate(s) file/directory: %s: %v", caDir, err)
		}
		for _, e := range entries {
			if pem, err := os.ReadFile(filepath.Join(caDir, e.Name())); err == nil {
				pool.AppendCertsFromPEM(pem)
			}
		}
	}
	minV, maxV, err := tlsVersions(cfg.String("tls-protocols"))
	if err != nil {
		return nil, nil, err
	}
	server = &tls.Config{
		Certificates:           []tls.Certificate{cert},
		ClientCAs:              pool,
		MinVersion:             minV,
		MaxVersion:             maxV,
		SessionTicketsDisabled: !cfg.Bool("tls-session-caching"),
	}
	switch cfg.String("tls-auth-clients") {
	case "yes":
		server.ClientAuth = tls.RequireAndVerifyClientCert
	case "optional":
		server.ClientAuth = tls.VerifyClientCertIfGiven
	default:
		server.ClientAuth = tls.NoClientCert
	}

	clientCert := cert
	if cc, ck := cfg.String("tls-client-cert-file"), cfg.String("tls-client-key-file"); cc != "" && ck != "" {
		if clientCert, err = loadKeyPair(cc, ck, cfg.String("tls-client-key-file-pass")); err != nil {
			return nil, nil, err
		}
	}
	client = &tls.Config{
		// Sent whatever CAs the server names, as OpenSSL sends its
		// certificate (Go's default would send none to a server that
		// names other CAs).
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &clientCert, nil },
		MinVersion:           minV,
		MaxVersion:           maxV,
		// Go's own verification checks the host name, which Redis does
		// not: the chain is verified by VerifyConnection instead.
		InsecureSkipVerify: true,
		VerifyConnection:   func(cs tls.ConnectionState) error { return verifyPeerChain(pool, cs.PeerCertificates) },
	}
	return server, client, nil
}

// loadKeyPair reads a certificate (with its chain) and its private key,
// decrypting the key with pass, with Redis's messages.
func loadKeyPair(certFile, keyFile, pass string) (tls.Certificate, error) {
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("Failed to load certificate: %s: %v", certFile, err)
	}
	keyPEM, err := readKey(keyFile, pass)
	if err != nil {
		return tls.Certificate{}, err
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("Failed to load certificate or private key: %s, %s: %v", certFile, keyFile, err)
	}
	return cert, nil
}

// verifyPeerChain verifies a server's certificate chain (its certificate
// first, then the intermediates it sent) against the CA certificates, for
// a server's use (the certificate's extended key usages, when it has
// any, must allow it), without a host name to match.
func verifyPeerChain(roots *x509.CertPool, chain []*x509.Certificate) error {
	if len(chain) == 0 {
		return errors.New("tls: the server sent no certificate")
	}
	inter := x509.NewCertPool()
	for _, c := range chain[1:] {
		inter.AddCert(c)
	}
	if _, err := chain[0].Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter}); err != nil {
		return fmt.Errorf("tls: failed to verify certificate: %w", err)
	}
	return nil
}

func errOr(err error, text string) error {
	if err != nil {
		return err
	}
	return errors.New(text)
}

// readKey reads a PEM private key, decrypting it with pass when it is
// encrypted the traditional OpenSSL way (Proc-Type: 4,ENCRYPTED). Go
// cannot decrypt an encrypted PKCS#8 key ("ENCRYPTED PRIVATE KEY"): it is
// refused with a message that says so.
func readKey(path, pass string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("Failed to load private key: %s: %v", path, err)
	}
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, fmt.Errorf("Failed to load private key: %s: no PEM data", path)
	}
	switch {
	case block.Type == "ENCRYPTED PRIVATE KEY":
		return nil, fmt.Errorf("Failed to load private key: %s: an encrypted PKCS#8 key cannot be decrypted by zredis; convert it (openssl rsa -aes256, or openssl pkey -traditional) or store it unencrypted", path)
	case x509.IsEncryptedPEMBlock(block):
		// Deprecated in Go for its weak design, but the only reader of
		// OpenSSL's traditional encrypted keys, which Redis accepts.
		if pass == "" {
			return nil, fmt.Errorf("Failed to load private key: %s: the key is encrypted and tls-key-file-pass is not set", path)
		}
		der, err := x509.DecryptPEMBlock(block, []byte(pass))
		if err != nil {
			return nil, fmt.Errorf("Failed to load private key: %s: %v", path, err)
		}
		return pem.EncodeToMemory(&pem.Block{Type: block.Type, Bytes: der}), nil
	}
	return data, nil
}

// tlsVersions maps tls-protocols ("TLSv1.2 TLSv1.3"; empty: those two) to
// Go's version range. The versions must be contiguous: Go has a minimum
// and a maximum, not a set.
func tlsVersions(protocols string) (minV, maxV uint16, err error) {
	names := map[string]uint16{"tlsv1": tls.VersionTLS10, "tlsv1.1": tls.VersionTLS11, "tlsv1.2": tls.VersionTLS12, "tlsv1.3": tls.VersionTLS13}
	fields := strings.Fields(strings.ToLower(protocols))
	if len(fields) == 0 {
		return tls.VersionTLS12, tls.VersionTLS13, nil
	}
	have := map[uint16]bool{}
	for _, f := range fields {
		v, ok := names[f]
		if !ok {
			return 0, 0, fmt.Errorf("Invalid tls-protocols specified. Use a combination of 'TLSv1', 'TLSv1.1', 'TLSv1.2' and 'TLSv1.3'.")
		}
		have[v] = true
		if minV == 0 || v < minV {
			minV = v
		}
		maxV = max(maxV, v)
	}
	for v := minV; v <= maxV; v++ {
		if !have[v] {
			return 0, 0, fmt.Errorf("tls-protocols %q is not a contiguous range of versions, which Go's TLS needs", protocols)
		}
	}
	return minV, maxV, nil
}

// reconfigureTLS rebuilds the TLS configurations after CONFIG SET of a
// tls-* directive, when TLS is in use (a TLS port, or tls-replication
// yes), as Redis's applyTlsCfg: new handshakes use them, the next link to
// a master among them. Under the keyspace lock.
func (s *Server) reconfigureTLS() error {
	if s.cfg.Int("tls-port") == 0 && !s.cfg.Bool("tls-replication") {
		return nil
	}
	server, client, err := s.tlsConfigure()
	if err != nil {
		s.log.Warningf("%v", err)
		return errors.New("Unable to update TLS configuration. Check server logs.")
	}
	s.tlsConf.Store(server)
	s.tlsClientConf.Store(client)
	return nil
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
