package tlsconfig

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// testCert makes a certificate for name, signed by parent (self-signed,
// a CA, when parent is nil).
func testCert(t *testing.T, name string, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: name},
		DNSNames:     []string{name},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
	}
	if parent == nil {
		tmpl.IsCA, tmpl.BasicConstraintsValid, tmpl.KeyUsage = true, true, x509.KeyUsageCertSign
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	require.NoError(t, err)
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	return cert, key
}

// The master's chain is verified against the CAs, whatever host name
// the certificate is for (Redis checks no host name).
func TestVerifyPeerChain(t *testing.T) {
	ca, caKey := testCert(t, "test CA", nil, nil)
	other, otherKey := testCert(t, "other CA", nil, nil)
	leaf, _ := testCert(t, "somewhere.else.example", ca, caKey)
	rogue, _ := testCert(t, "somewhere.else.example", other, otherKey)
	roots := x509.NewCertPool()
	roots.AddCert(ca)

	require.NoError(t, verifyPeerChain(roots, []*x509.Certificate{leaf}))
	require.ErrorContains(t, verifyPeerChain(roots, []*x509.Certificate{rogue}), "tls: failed to verify certificate: x509: certificate signed by unknown authority")
	require.Error(t, verifyPeerChain(roots, nil))
}
