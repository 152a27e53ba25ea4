package tests

import (
	"crypto/tls"
	"crypto/x509"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TLS for clients, against redis-server 7.0 started from the same
// arguments, with certificates of a test CA made by openssl and redis-cli
// --tls as the client.

// tlsFiles makes a CA, a server certificate for 127.0.0.1 and a client
// certificate in a new directory.
func tlsFiles(t *testing.T) string {
	t.Helper()
	openssl := RequireTool(t, "openssl")
	dir := t.TempDir()
	run := func(args ...string) {
		cmd := exec.Command(openssl, args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "openssl %v: %s", args, out)
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "ext.cnf"), []byte("subjectAltName=IP:127.0.0.1,DNS:localhost\n"), 0o644))
	run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.crt", "-days", "2", "-subj", "/CN=zredis test CA")
	run("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=localhost")
	run("x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial", "-out", "server.crt", "-days", "2", "-extfile", "ext.cnf")
	run("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "client.key", "-out", "client.csr", "-subj", "/CN=client")
	run("x509", "-req", "-in", "client.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial", "-out", "client.crt", "-days", "2")
	// The server key encrypted the traditional OpenSSL way, for
	// tls-key-file-pass.
	run("rsa", "-in", "server.key", "-aes256", "-passout", "pass:s3cret", "-out", "server-enc.key", "-traditional")
	return dir
}

// tlsCLI runs redis-cli --tls against port with the CA, and the client
// certificate when withCert; it returns the output and whether it worked.
func tlsCLI(t *testing.T, dir string, port int, withCert bool, args ...string) (string, bool) {
	t.Helper()
	cli := RequireTool(t, "redis-cli")
	all := []string{"-h", "127.0.0.1", "-p", strconv.Itoa(port), "--tls", "--cacert", filepath.Join(dir, "ca.crt")}
	if withCert {
		all = append(all, "--cert", filepath.Join(dir, "client.crt"), "--key", filepath.Join(dir, "client.key"))
	}
	out, err := exec.Command(cli, append(all, args...)...).CombinedOutput()
	return strings.TrimSpace(string(out)), err == nil && !strings.Contains(string(out), "Error")
}

func TestTLSClients(t *testing.T) {
	dir := tlsFiles(t)
	f := func(name string) string { return filepath.Join(dir, name) }
	for _, name := range []string{"zredis", "redis"} {
		t.Run(name, func(t *testing.T) {
			tlsPort := FreePort(t)
			args := []string{"--tls-port", strconv.Itoa(tlsPort), "--tls-cert-file", f("server.crt"),
				"--tls-key-file", f("server-enc.key"), "--tls-key-file-pass", "s3cret", "--tls-ca-cert-file", f("ca.crt")}
			var p *Proc
			if name == "zredis" {
				p = StartZredis(t, args...)
			} else {
				p = StartRedis(t, args...)
				diffCases.Add(1)
			}
			out, ok := tlsCLI(t, dir, tlsPort, true, "PING")
			assert.True(t, ok)
			assert.Equal(t, "PONG", out)
			_, ok = tlsCLI(t, dir, tlsPort, false, "PING")
			assert.False(t, ok, "tls-auth-clients yes: a client without a certificate is refused")

			// A large value through the TLS connection, both ways.
			big := strings.Repeat("0123456789", 12_000) // 120 kB: several TLS records, under one argument's limit
			out, ok = tlsCLI(t, dir, tlsPort, true, "SET", "big", big)
			assert.True(t, ok, out)
			out, _ = tlsCLI(t, dir, tlsPort, true, "STRLEN", "big")
			assert.Equal(t, "120000", out)
			out, _ = tlsCLI(t, dir, tlsPort, true, "GET", "big")
			assert.Equal(t, big, out)
			out, _ = tlsCLI(t, dir, tlsPort, true, "CLIENT", "INFO")
			assert.Contains(t, out, "addr=127.0.0.1:", "the client's own address")

			c := Dial(t, p.Addr)
			assert.Equal(t, "+OK\r\n", c.Do("CONFIG", "SET", "tls-auth-clients", "optional"))
			out, ok = tlsCLI(t, dir, tlsPort, false, "PING")
			assert.True(t, ok, out)
			assert.Equal(t, "-ERR CONFIG SET failed (possibly related to argument 'tls-cert-file') - Unable to update TLS configuration. Check server logs.\r\n",
				c.Do("CONFIG", "SET", "tls-cert-file", f("missing.crt")))
			out, ok = tlsCLI(t, dir, tlsPort, false, "PING")
			assert.True(t, ok, "the old configuration stays: %s", out)
		})
	}

	// Bad files stop the start, with Redis's lines.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--tls-cert-file", f("missing.crt"), "--tls-key-file", f("server.key"), "--tls-ca-cert-file", f("ca.crt")}, "Failed to load certificate: " + f("missing.crt")},
		{[]string{"--tls-cert-file", f("server.crt"), "--tls-key-file", f("server.key")}, "Either tls-ca-cert-file or tls-ca-cert-dir must be specified when tls-cluster, tls-replication or tls-auth-clients are enabled!"},
	} {
		args := append([]string{"--port", "0", "--tls-port", strconv.Itoa(FreePort(t))}, tc.args...)
		for _, name := range []string{"zredis", "redis"} {
			bin := serverBin(t, name)
			stdout, stderr, code := runToExit(t, bin, args...)
			assert.Equal(t, 1, code, "%s %q", bin, args)
			assert.Contains(t, stdout+stderr, tc.want, bin)
			assert.Contains(t, stdout+stderr, "Failed to configure TLS. Check logs for more info.", bin)
		}
	}

	// What Go's TLS cannot apply is refused, not ignored.
	_, stderr, code := runToExit(t, zredisBin, "--port", "0", "--tls-ciphers", "DEFAULT:!MEDIUM")
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "tls-ciphers cannot be applied")
}

// A TLS client that stops reading cannot hold the server: SHUTDOWN ends
// its connection too, and the server exits.
func TestTLSStalledClientShutdown(t *testing.T) {
	dir := tlsFiles(t)
	f := func(name string) string { return filepath.Join(dir, name) }
	tlsPort := FreePort(t)
	p := StartZredis(t, "--tls-port", strconv.Itoa(tlsPort), "--tls-cert-file", f("server.crt"),
		"--tls-key-file", f("server.key"), "--tls-ca-cert-file", f("ca.crt"), "--save", "")
	cert, err := tls.LoadX509KeyPair(f("client.crt"), f("client.key"))
	require.NoError(t, err)
	pool := x509.NewCertPool()
	ca, _ := os.ReadFile(f("ca.crt"))
	pool.AppendCertsFromPEM(ca)
	tc, err := tls.Dial("tcp", "127.0.0.1:"+strconv.Itoa(tlsPort), &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: pool})
	require.NoError(t, err)
	t.Cleanup(func() { tc.Close() })
	big := strings.Repeat("x", 1<<20)
	tc.Write(Encode("SET", "big", big))
	var reqs []byte
	for range 200 {
		reqs = append(reqs, Encode("GET", "big")...)
	}
	go tc.Write(reqs) // and never read the 200 MB of replies

	c := Dial(t, p.Addr)
	time.Sleep(500 * time.Millisecond)
	c.Send(Encode("SHUTDOWN", "NOSAVE"))
	code, exited := p.Wait(15 * time.Second)
	require.True(t, exited, "the server did not exit with a TLS client that stopped reading:\n%s", p.Output())
	assert.Zero(t, code)
}

// With tls-cluster yes, MIGRATE connects over TLS, as redis-server's
// does (server.tls_cluster), with or without cluster mode: from zredis
// and from redis-server to the other's TLS port, the same replies, and
// the key arrives. With tls-cluster no the same MIGRATE goes in
// plaintext to the TLS port and fails on both.
func TestTLSMigrate(t *testing.T) {
	RequireRedis(t)
	dir := tlsFiles(t)
	f := func(name string) string { return filepath.Join(dir, name) }
	start := func(name string, tlsCluster string) (*Proc, int) {
		tp := FreePort(t)
		args := []string{"--tls-port", strconv.Itoa(tp), "--tls-cluster", tlsCluster, "--tls-cert-file", f("server.crt"),
			"--tls-key-file", f("server.key"), "--tls-ca-cert-file", f("ca.crt")}
		if name == "zredis" {
			return StartZredis(t, args...), tp
		}
		return StartRedis(t, args...), tp
	}
	replies := map[string][]string{}
	for _, pair := range [][2]string{{"zredis", "redis"}, {"redis", "zredis"}} {
		for _, tlsCluster := range []string{"yes", "no"} {
			src, _ := start(pair[0], tlsCluster)
			dst, dstTLS := start(pair[1], "no")
			sc := Dial(t, src.Addr)
			got := []string{
				sc.Do("SET", "k", "v"),
				sc.Do("MIGRATE", "127.0.0.1", strconv.Itoa(dstTLS), "k", "0", "5000"),
				Dial(t, dst.Addr).Do("GET", "k"),
			}
			replies[pair[0]+" tls-cluster "+tlsCluster] = got
		}
	}
	assert.Equal(t, []string{"+OK\r\n", "+OK\r\n", "$1\r\nv\r\n"}, replies["zredis tls-cluster yes"])
	assert.Equal(t, replies["redis tls-cluster yes"], replies["zredis tls-cluster yes"])
	assert.Equal(t, "$-1\r\n", replies["zredis tls-cluster no"][2], "no key crosses in plaintext")
	assert.True(t, strings.HasPrefix(replies["zredis tls-cluster no"][1], "-IOERR"), replies["zredis tls-cluster no"][1])
	assert.True(t, strings.HasPrefix(replies["redis tls-cluster no"][1], "-IOERR"), replies["redis tls-cluster no"][1])
}
