package tests

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zredis/zredis/internal/testsupport"
)

// TLS on the replication link (tls-replication yes), with certificates of
// a test CA made by openssl. The masters listen on their TLS port only
// (port 0), so that every byte of a sync goes through TLS: zredis as the
// replica of a redis-server 7.0 master, redis-server as the replica of a
// zredis master, and zredis with zredis; the full sync (disk-based and
// diskless), the stream, a partial resync after a killed link, CONFIG
// SET tls-replication and tls-client-* at runtime; a replica whose
// certificate the master refuses, or that refuses the master's: the link
// stays down and is retried, the master goes on serving.

// tlsReplFiles is tlsFiles plus a second CA and a certificate it signed
// ("rogue"), which the first CA does not accept.
func tlsReplFiles(t *testing.T) string {
	t.Helper()
	dir := tlsFiles(t)
	for _, args := range [][]string{
		{"req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "other-ca.key", "-out", "other-ca.crt", "-days", "2", "-subj", "/CN=another CA"},
		{"req", "-newkey", "rsa:2048", "-nodes", "-keyout", "rogue.key", "-out", "rogue.csr", "-subj", "/CN=rogue"},
		{"x509", "-req", "-in", "rogue.csr", "-CA", "other-ca.crt", "-CAkey", "other-ca.key", "-CAcreateserial", "-out", "rogue.crt", "-days", "2"},
	} {
		cmd := exec.Command("openssl", args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "openssl %v: %s", args, out)
	}
	return dir
}

// tlsServerArgs are the TLS files of a server: its certificate and the
// test CA.
func tlsServerArgs(dir string) []string {
	return []string{"--tls-cert-file", filepath.Join(dir, "server.crt"), "--tls-key-file", filepath.Join(dir, "server.key"),
		"--tls-ca-cert-file", filepath.Join(dir, "ca.crt")}
}

// tlsReplicaArgs make a server the replica of the TLS port masterPort,
// over TLS, presenting the client certificate.
func tlsReplicaArgs(dir string, masterPort int) []string {
	return append(tlsServerArgs(dir), "--replicaof", "127.0.0.1", strconv.Itoa(masterPort), "--tls-replication", "yes",
		"--tls-client-cert-file", filepath.Join(dir, "client.crt"), "--tls-client-key-file", filepath.Join(dir, "client.key"))
}

// startTLSOnly starts zredis or redis-server listening on a TLS port
// only (port 0); its Addr is the TLS address. It is ready once it
// answers PING over TLS.
func startTLSOnly(t *testing.T, name, dir string, args ...string) *Proc {
	t.Helper()
	bin := serverBin(t, name)
	port := FreePort(t)
	all := append([]string{"--port", "0", "--bind", "127.0.0.1", "--tls-port", strconv.Itoa(port)}, tlsServerArgs(dir)...)
	if name == "redis" {
		all = append(all, "--save", "", "--appendonly", "no")
	}
	all = append(all, args...)
	p := testsupport.Start(t, testsupport.Options{Name: name, Bin: bin, Args: all, Port: port, ArgsOnly: true, NoWait: true})
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if p.Exited() || time.Now().After(deadline) {
			t.Fatalf("%s did not start on TLS port %d:\n%s", name, port, p.Output())
		}
		if nc, err := tlsDial(dir, p.Addr, "client"); err == nil {
			nc.SetDeadline(time.Now().Add(time.Second))
			nc.Write(Encode("PING"))
			line, _ := bufio.NewReader(nc).ReadString('\n')
			nc.Close()
			if line == "+PONG\r\n" {
				return p
			}
		}
	}
}

// tlsDial connects to addr over TLS, trusting the test CA and presenting
// the certificate named cert ("client", "rogue").
func tlsDial(dir, addr, cert string) (*tls.Conn, error) {
	kp, err := tls.LoadX509KeyPair(filepath.Join(dir, cert+".crt"), filepath.Join(dir, cert+".key"))
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	ca, err := os.ReadFile(filepath.Join(dir, "ca.crt"))
	if err != nil {
		return nil, err
	}
	pool.AppendCertsFromPEM(ca)
	return tls.DialWithDialer(&net.Dialer{Timeout: 2 * time.Second}, "tcp", addr, &tls.Config{Certificates: []tls.Certificate{kp}, RootCAs: pool})
}

// dialTLS is Dial over TLS, with the client certificate.
func dialTLS(t *testing.T, dir, addr string) *Conn {
	t.Helper()
	nc, err := tlsDial(dir, addr, "client")
	require.NoError(t, err)
	t.Cleanup(func() { nc.Close() })
	return &Conn{t: t, nc: nc, rd: bufio.NewReader(nc)}
}

// fillBig writes values large enough that the payload and the stream
// cross many TLS records (4 MB in all).
func fillBig(t *testing.T, c *Conn, prefix string) {
	t.Helper()
	for i := range 16 {
		require.Equal(t, "+OK\r\n", c.Do("SET", fmt.Sprintf("%s:big:%d", prefix, i), strings.Repeat(strconv.Itoa(i%10), 256<<10)))
	}
}

// tlsSyncRounds follows a replica that is syncing from the master (mc,
// rc): once converged the data sets are equal; after live writes too;
// and after the master kills the link, the replica continues with a
// partial resync (sync_partial_ok +1, no new full sync).
func tlsSyncRounds(t *testing.T, mc, rc *Conn) {
	t.Helper()
	replicaConverged(t, mc, rc)
	compareConns(t, mc, rc)

	fillReplData(t, mc, "live")
	fillBig(t, mc, "live")
	time.Sleep(400 * time.Millisecond) // the short TTLs pass: their DELs are in the stream
	replicaConverged(t, mc, rc)
	compareConns(t, mc, rc)

	full, partial := statInt(t, mc, "sync_full"), statInt(t, mc, "sync_partial_ok")
	require.Equal(t, ":1\r\n", mc.Do("CLIENT", "KILL", "TYPE", "replica"))
	fillReplData(t, mc, "relinked") // within the backlog (1 MB)
	time.Sleep(400 * time.Millisecond)
	replicaConverged(t, mc, rc)
	assert.Equal(t, partial+1, statInt(t, mc, "sync_partial_ok"), "a partial resync")
	assert.Equal(t, full, statInt(t, mc, "sync_full"), "no new full sync")
	compareConns(t, mc, rc)
}

var syncModes = []struct {
	name, diskless, target string
}{
	{"disk", "no", "disk"},
	{"diskless", "yes", "replicas sockets"},
}

// zredis replica of a redis-server master reached on its TLS port only.
func TestTLSReplicaOfRedis(t *testing.T) {
	parallelReplication(t)
	dir := tlsReplFiles(t)
	for _, mode := range syncModes {
		t.Run(mode.name, func(t *testing.T) {
			m := startTLSOnly(t, "redis", dir, "--repl-diskless-sync", mode.diskless, "--repl-diskless-sync-delay", "0")
			mc := dialTLS(t, dir, m.Addr)
			fillReplData(t, mc, "before")
			fillBig(t, mc, "before")
			z := StartZredis(t, tlsReplicaArgs(dir, m.Port)...)
			zc := Dial(t, z.Addr)
			tlsSyncRounds(t, mc, zc)
			waitOutput(t, m, "Starting BGSAVE for SYNC with target: "+mode.target)
			assert.Equal(t, "1", infoField(t, mc, "stats", "sync_full"))
			assert.Contains(t, infoField(t, mc, "replication", "slave0"), ",port="+strconv.Itoa(z.Port)+",",
				"without a TLS port of its own, the replica announces its port")
		})
	}
}

// redis-server replica of a zredis master reached on its TLS port only:
// the payload and the stream go through zredis's TLS bridge.
func TestTLSReplicationMaster(t *testing.T) {
	parallelReplication(t)
	dir := tlsReplFiles(t)
	for _, mode := range syncModes {
		t.Run(mode.name, func(t *testing.T) {
			z := startTLSOnly(t, "zredis", dir, "--repl-diskless-sync", mode.diskless, "--repl-diskless-sync-delay", "0")
			zc := dialTLS(t, dir, z.Addr)
			fillReplData(t, zc, "before")
			fillBig(t, zc, "before")
			rTLS := FreePort(t)
			r := StartRedis(t, append(tlsReplicaArgs(dir, z.Port), "--repl-diskless-load", "disabled", "--tls-port", strconv.Itoa(rTLS))...)
			rc := Dial(t, r.Addr)
			tlsSyncRounds(t, zc, rc)
			waitOutput(t, z, "Starting BGSAVE for SYNC with target: "+mode.target)
			assert.Equal(t, "1", infoField(t, zc, "stats", "sync_full"))
			assert.Contains(t, infoField(t, zc, "replication", "slave0"), ",port="+strconv.Itoa(rTLS)+",",
				"a TLS replica with a TLS port announces it")
			assert.Contains(t, zc.Do("CLIENT", "LIST", "TYPE", "replica"), "addr=127.0.0.1:", "the replica's own address")
		})
	}
}

// zredis replica of a zredis master over TLS, turned on at runtime: a
// replica that speaks plain TCP to the TLS port cannot link; CONFIG SET
// tls-replication yes applies to its next connection. Without
// tls-client-cert-file it presents its tls-cert-file.
func TestTLSReplicationZredis(t *testing.T) {
	parallelReplication(t)
	dir := tlsReplFiles(t)
	m := startTLSOnly(t, "zredis", dir, "--repl-diskless-sync-delay", "0")
	mc := dialTLS(t, dir, m.Addr)
	fillReplData(t, mc, "before")
	fillBig(t, mc, "before")
	zTLS := FreePort(t)
	z := StartZredis(t, append(tlsServerArgs(dir), "--replicaof", "127.0.0.1", strconv.Itoa(m.Port), "--tls-port", strconv.Itoa(zTLS))...)
	zc := Dial(t, z.Addr)
	waitFor(t, func() bool { return strings.Count(z.Output(), "Error condition on socket for SYNC: ") >= 2 })
	assert.Equal(t, "down", infoField(t, zc, "replication", "master_link_status"))
	assert.Equal(t, "0", infoField(t, mc, "replication", "connected_slaves"))

	require.Equal(t, "+OK\r\n", zc.Do("CONFIG", "SET", "tls-replication", "yes"))
	tlsSyncRounds(t, mc, zc)
	assert.Contains(t, infoField(t, mc, "replication", "slave0"), ",port="+strconv.Itoa(zTLS)+",",
		"a TLS replica with a TLS port announces it")
	assert.Equal(t, "1", infoField(t, mc, "stats", "sync_full"))

	// Back to plain TCP: the link keeps going until it breaks, then cannot
	// connect again.
	require.Equal(t, "+OK\r\n", zc.Do("CONFIG", "SET", "tls-replication", "no"))
	require.Equal(t, "+OK\r\n", mc.Do("SET", "after", "1"))
	replicaConverged(t, mc, zc)
	errs := strings.Count(z.Output(), "Error condition on socket for SYNC: ")
	require.Equal(t, ":1\r\n", mc.Do("CLIENT", "KILL", "TYPE", "replica"))
	waitFor(t, func() bool { return strings.Count(z.Output(), "Error condition on socket for SYNC: ") > errs })
	assert.Equal(t, "down", infoField(t, zc, "replication", "master_link_status"))
}

// CONFIG SET tls-replication yes, and a start with it, need TLS files as
// Redis's: the same refusals as redis-server.
func TestTLSReplicationConfig(t *testing.T) {
	dir := tlsReplFiles(t)
	f := func(name string) string { return filepath.Join(dir, name) }
	for _, name := range []string{"zredis", "redis"} {
		t.Run(name, func(t *testing.T) {
			p := StartServer(t, name)
			if name == "redis" {
				diffCases.Add(1)
			}
			c := Dial(t, p.Addr)
			refused := "-ERR CONFIG SET failed (possibly related to argument 'tls-replication') - Unable to update TLS configuration. Check server logs.\r\n"
			assert.Equal(t, refused, c.Do("CONFIG", "SET", "tls-replication", "yes"), "no certificate")
			require.Equal(t, "+OK\r\n", c.Do("CONFIG", "SET", "tls-cert-file", f("server.crt"), "tls-key-file", f("server.key")))
			assert.Equal(t, refused, c.Do("CONFIG", "SET", "tls-replication", "yes"), "no CA")
			assert.Equal(t, "*2\r\n$15\r\ntls-replication\r\n$2\r\nno\r\n", c.Do("CONFIG", "GET", "tls-replication"))
			require.Equal(t, "+OK\r\n", c.Do("CONFIG", "SET", "tls-ca-cert-file", f("ca.crt")))
			assert.Equal(t, "+OK\r\n", c.Do("CONFIG", "SET", "tls-replication", "yes"))
			assert.Equal(t, "-ERR CONFIG SET failed (possibly related to argument 'tls-client-cert-file') - Unable to update TLS configuration. Check server logs.\r\n",
				c.Do("CONFIG", "SET", "tls-client-cert-file", f("client.crt"), "tls-client-key-file", f("missing.key")))
			assert.Equal(t, "+OK\r\n", c.Do("CONFIG", "SET", "tls-client-cert-file", f("client.crt"), "tls-client-key-file", f("client.key")))
			assert.Equal(t, "+OK\r\n", c.Do("CONFIG", "SET", "tls-replication", "no"))
		})
	}
	for _, name := range []string{"zredis", "redis"} {
		bin := serverBin(t, name)
		stdout, stderr, code := runToExit(t, bin, "--port", strconv.Itoa(FreePort(t)), "--tls-replication", "yes")
		assert.Equal(t, 1, code, bin)
		assert.Contains(t, stdout+stderr, "Failed to configure TLS. Check logs for more info.", bin)
	}
}

// A replica whose certificate the master's CA does not accept
// (tls-auth-clients yes), or that does not accept the master's: the link
// stays down, retried every second and logged as Redis logs it, while the
// master goes on serving; right certificates set at runtime bring it up.
func TestTLSReplicationRefusedCertificate(t *testing.T) {
	parallelReplication(t)
	dir := tlsReplFiles(t)
	f := func(name string) string { return filepath.Join(dir, name) }
	for _, master := range []string{"zredis", "redis"} {
		t.Run(master, func(t *testing.T) {
			m := startTLSOnly(t, master, dir, "--repl-diskless-sync-delay", "0")
			mc := dialTLS(t, dir, m.Addr)
			fillReplData(t, mc, "before")

			// The master refuses the replica's certificate.
			rogue := StartZredis(t, append(tlsReplicaArgs(dir, m.Port),
				"--tls-client-cert-file", f("rogue.crt"), "--tls-client-key-file", f("rogue.key"))...)
			// The replica refuses the master's certificate.
			doubting := StartZredis(t, append(tlsReplicaArgs(dir, m.Port), "--tls-ca-cert-file", f("other-ca.crt"))...)
			for _, p := range []*Proc{rogue, doubting} {
				waitFor(t, func() bool { return strings.Count(p.Output(), "Error condition on socket for SYNC: ") >= 3 })
				assert.Equal(t, "down", replInfo(t, p, "master_link_status"))
			}
			waitOutput(t, doubting, "Error condition on socket for SYNC: tls: failed to verify certificate: x509: certificate signed by unknown authority")
			assert.Equal(t, "0", infoField(t, mc, "replication", "connected_slaves"))
			assert.Equal(t, "0", infoField(t, mc, "stats", "sync_full"))
			// The master serves on.
			require.Equal(t, "+OK\r\n", mc.Do("SET", "served", "1"))
			assert.Equal(t, "$1\r\n1\r\n", dialTLS(t, dir, m.Addr).Do("GET", "served"))

			// The right files, at runtime: the next connection links.
			rc := Dial(t, rogue.Addr)
			require.Equal(t, "+OK\r\n", rc.Do("CONFIG", "SET", "tls-client-cert-file", f("client.crt"), "tls-client-key-file", f("client.key")))
			dc := Dial(t, doubting.Addr)
			require.Equal(t, "+OK\r\n", dc.Do("CONFIG", "SET", "tls-ca-cert-file", f("ca.crt")))
			replicaConverged(t, mc, rc)
			replicaConverged(t, mc, dc)
			compareConns(t, mc, rc)
			compareConns(t, mc, dc)
		})
	}

	// A redis-server replica refused by a zredis master.
	m := startTLSOnly(t, "zredis", dir)
	mc := dialTLS(t, dir, m.Addr)
	r := StartRedis(t, append(tlsReplicaArgs(dir, m.Port), "--tls-client-cert-file", f("rogue.crt"), "--tls-client-key-file", f("rogue.key"))...)
	waitFor(t, func() bool { return strings.Count(m.Output(), "Error accepting a client connection: ") >= 3 })
	assert.Equal(t, "down", replInfo(t, r, "master_link_status"))
	assert.Equal(t, "0", infoField(t, mc, "replication", "connected_slaves"))
	assert.Equal(t, "+PONG\r\n", mc.Do("PING"))
}
