// Package tlsconfig makes Go's TLS configurations from the tls-*
// directives, with the checks and messages of Redis 7.0's tlsConfigure
// (tls.c): the server's, for the clients of the TLS port, and the
// client's, for the connections zredis makes (the link to a master with
// tls-replication yes). It reads files and builds values; the
// connections that use them are server/'s and replication/'s.
package tlsconfig

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/zredis/zredis/config"
)

// Build makes the TLS configurations from the tls-* directives,
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
func Build(cfg *config.Config) (server, client *tls.Config, err error) {
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
