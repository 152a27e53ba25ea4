package tests

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A cluster whose bus speaks TLS (tls-cluster yes): two zredis masters
// and a redis-server master, made by redis-cli --tls --cluster create
// over their TLS ports. redis-server accepts only TLS on its bus, so the
// cluster converging shows zredis's links speak it both ways. Nodes are
// known by their TLS ports; a plaintext client is shown the plaintext
// ones, as redis-server shows them; a ClusterClient over TLS writes and
// reads across the slots.
func TestClusterTLSBus(t *testing.T) {
	RequireRedis(t)
	ctx := context.Background()
	dir := tlsFiles(t)
	f := func(name string) string { return filepath.Join(dir, name) }
	type node struct {
		p       *Proc
		tlsPort int
	}
	start := func(redisServer bool) node {
		tp := FreePort(t)
		args := append(clusterNodeArgs(t), "--tls-port", strconv.Itoa(tp), "--tls-cluster", "yes",
			"--tls-cert-file", f("server.crt"), "--tls-key-file", f("server.key"), "--tls-ca-cert-file", f("ca.crt"))
		if redisServer {
			return node{StartRedis(t, args...), tp}
		}
		return node{StartZredis(t, args...), tp}
	}
	za, zb, rc := start(false), start(false), start(true)
	nodes := []node{za, zb, rc}
	tlsAddr := func(n node) string { return "127.0.0.1:" + strconv.Itoa(n.tlsPort) }
	tlsArgs := []string{"--tls", "--cacert", f("ca.crt"), "--cert", f("client.crt"), "--key", f("client.key")}

	out, code := clusterCLI(t, append(tlsArgs, "--cluster", "create", tlsAddr(za), tlsAddr(zb), tlsAddr(rc), "--cluster-yes")...)
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "[OK] All 16384 slots covered.")
	require.Eventually(t, func() bool {
		for _, n := range nodes {
			info := Dial(t, n.p.Addr).Do("CLUSTER", "INFO")
			if !strings.Contains(info, "cluster_state:ok") || !strings.Contains(info, "cluster_known_nodes:3") {
				return false
			}
		}
		return true
	}, 30*time.Second, 100*time.Millisecond, "the TLS cluster does not converge")
	for _, n := range nodes {
		out, code = clusterCLI(t, append(tlsArgs, "--cluster", "check", tlsAddr(n))...)
		require.Equal(t, 0, code, out)
		require.Contains(t, out, "[OK] All nodes agree about slots configuration.", out)
	}

	// CLUSTER NODES: the TLS ports over TLS, the plaintext ports over
	// plaintext, on zredis as on redis-server.
	for _, n := range nodes {
		plain := Dial(t, n.p.Addr).Do("CLUSTER", "NODES")
		for _, m := range nodes {
			assert.Contains(t, plain, m.p.Addr+"@", n.p.Name)
		}
		overTLS, ok := tlsCLI(t, dir, n.tlsPort, true, "CLUSTER", "NODES")
		require.True(t, ok, overTLS)
		for _, m := range nodes {
			assert.Contains(t, overTLS, tlsAddr(m)+"@", n.p.Name)
		}
	}
	// A redirection names the TLS port to a TLS client, the plaintext
	// one to a plaintext client.
	slot, err := redis.NewClient(&redis.Options{Addr: za.p.Addr}).ClusterKeySlot(ctx, "k").Result()
	require.NoError(t, err)
	var owner node
	for _, n := range nodes {
		if r := Dial(t, n.p.Addr).Do("SET", "k", "v"); r == "+OK\r\n" {
			owner = n
		}
	}
	require.NotNil(t, owner.p)
	other := za
	if owner.p == za.p {
		other = zb
	}
	assert.Equal(t, fmt.Sprintf("-MOVED %d %s\r\n", slot, owner.p.Addr), Dial(t, other.p.Addr).Do("GET", "k"))
	viaTLS, _ := tlsCLI(t, dir, other.tlsPort, true, "GET", "k")
	assert.Equal(t, fmt.Sprintf("MOVED %d %s", slot, tlsAddr(owner)), strings.TrimPrefix(viaTLS, "(error) "))

	pool := x509.NewCertPool()
	ca, err := os.ReadFile(f("ca.crt"))
	require.NoError(t, err)
	require.True(t, pool.AppendCertsFromPEM(ca))
	cert, err := tls.LoadX509KeyPair(f("client.crt"), f("client.key"))
	require.NoError(t, err)
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{tlsAddr(za)}, MaxRedirects: 8,
		TLSConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}, ServerName: "localhost"}})
	defer cc.Close()
	const keys = 500
	for i := range keys {
		require.NoError(t, cc.Set(ctx, fmt.Sprintf("key:%d", i), i, 0).Err())
	}
	for i := range keys {
		v, err := cc.Get(ctx, fmt.Sprintf("key:%d", i)).Int()
		require.NoError(t, err)
		require.Equal(t, i, v)
	}
	total := int64(0)
	for _, n := range nodes {
		size, err := redis.NewClient(&redis.Options{Addr: n.p.Addr}).DBSize(ctx).Result()
		require.NoError(t, err)
		assert.Greater(t, size, int64(0), n.p.Name)
		total += size
	}
	assert.EqualValues(t, keys+1, total)
}
