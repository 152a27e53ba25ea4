package tests

import (
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
	"github.com/zredis/zredis/zmqpub"
	"github.com/zredis/zredis/zmqpub/z85"
)

// End-to-end tests of the expiry stream with CURVE: zredis-server with a
// secret key and an allowed listener key, and real libzmq listeners
// (pyzmq), the Go listener and the pyzmq example.

func curveKeyPair(t *testing.T) zmqpub.CurveKeys {
	t.Helper()
	k, err := zmqpub.GenerateCurveKeys()
	require.NoError(t, err)
	return k
}

// curveKeyPairDashed is a key pair whose public key (or, with secret,
// whose secret key) starts with "-" in Z85, as one key in 85 does: every
// listener must take it as an option's value, not as an option.
func curveKeyPairDashed(t *testing.T, secret bool) zmqpub.CurveKeys {
	t.Helper()
	for {
		k := curveKeyPair(t)
		key := k.Public
		if secret {
			key = k.Secret
		}
		if z85.EncodeKey(key)[0] == '-' {
			return k
		}
	}
}

// curveListener is a libzmq PULL listener with CURVE (testdata/pull_listener.py).
func curveListener(t *testing.T, ep string, server, client zmqpub.CurveKeys) *pyListener {
	return startListener(t, []string{ep}, "--idle", "60",
		"--curve-server-key", z85.EncodeKey(server.Public), "--curve-secret-key", z85.EncodeKey(client.Secret))
}

func setExpiringKeys(t *testing.T, c *Conn, prefix string, n int) {
	t.Helper()
	for i := range n {
		require.Equal(t, "+OK\r\n", c.Do("SET", prefix+strconv.Itoa(i), "v"+strconv.Itoa(i), "PX", "1"))
	}
}

func TestExpiryCurve(t *testing.T) {
	requirePythonZMQ(t)
	server, allowed, unknown := curveKeyPairDashed(t, false), curveKeyPairDashed(t, true), curveKeyPair(t)
	secret := z85.EncodeKey(server.Secret)
	conf := filepath.Join(t.TempDir(), "zredis.conf")
	require.NoError(t, os.WriteFile(conf, []byte("expiry-zmq-curve-secret-key \""+secret+"\"\n"), 0o600))
	ep := zmqEndpoint(t)
	z := StartZredis(t, conf, "--expiry-zmq-endpoints", ep, "--expiry-zmq-curve-allowed-keys", z85.EncodeKey(allowed.Public))
	ctl := Dial(t, z.Addr)

	info := infoExpiry(t, ctl)
	assert.Equal(t, z85.EncodeKey(server.Public), info["expiry_zmq_curve_public_key"])
	assert.Equal(t, "1", info["expiry_zmq_curve_allowed_keys"])

	// A plain listener and one with an unknown key are refused; the
	// allowed one gets every message.
	plain := startListener(t, []string{ep}, "--idle", "60")
	stranger := curveListener(t, ep, server, unknown)
	// A listener is a Python process: on a loaded 2-core machine (the
	// whole suite runs in parallel) its start alone can take seconds.
	deadline := time.Now().Add(30 * time.Second)
	for n, _ := strconv.Atoi(infoExpiry(t, ctl)["expiry_zmq_curve_refused"]); n < 2; n, _ = strconv.Atoi(infoExpiry(t, ctl)["expiry_zmq_curve_refused"]) {
		require.True(t, time.Now().Before(deadline), "the plain and unknown listeners were never refused: %v\n%s", infoExpiry(t, ctl), z.Output())
		time.Sleep(20 * time.Millisecond)
	}
	friend := curveListener(t, ep, server, allowed)
	waitInfo(t, ctl, "expiry_zmq_listeners", "1", 30*time.Second)
	setExpiringKeys(t, ctl, "a:", 100)
	got := friend.recv(t, 100, 30*time.Second)
	seen := map[string]bool{}
	for _, d := range got {
		seen[string(d.Key)] = true
		assert.Equal(t, "v"+strings.TrimPrefix(string(d.Key), "a:"), string(d.Parts[0]))
	}
	assert.Len(t, seen, 100, "every message, once")
	assert.Empty(t, plain.quiet(300*time.Millisecond), "the plain listener gets nothing")
	assert.Empty(t, stranger.quiet(0), "the unknown key gets nothing")
	friend.kill()
	waitInfo(t, ctl, "expiry_zmq_listeners", "0", 30*time.Second)

	// The Go listener, its secret key in a file.
	keyFile := filepath.Join(t.TempDir(), "listener.key")
	require.NoError(t, os.WriteFile(keyFile, []byte("secret-key = "+z85.EncodeKey(allowed.Secret)+"\n"), 0o600))
	goListen := exec.Command(listenBin, "--endpoint", ep, "--count", "5",
		"--curve-server-key", z85.EncodeKey(server.Public), "--curve-secret-key-file", keyFile)
	var goOut strings.Builder
	goListen.Stdout = &goOut
	require.NoError(t, goListen.Start())
	t.Cleanup(func() { goListen.Process.Kill(); goListen.Wait() })
	waitInfo(t, ctl, "expiry_zmq_listeners", "1", 30*time.Second)
	setExpiringKeys(t, ctl, "g:", 5)
	waitExit(t, goListen)
	assert.Equal(t, 5, strings.Count(goOut.String(), `"type":"string","key":"g:`), goOut.String())
	waitInfo(t, ctl, "expiry_zmq_listeners", "0", 30*time.Second)

	// The pyzmq example, its secret key in the environment.
	example := exec.Command(pythonBin, "../examples/curve_listener.py", "--endpoint", ep,
		"--server-key", z85.EncodeKey(server.Public), "--count", "3")
	example.Env = append(os.Environ(), "ZREDIS_CURVE_SECRET_KEY="+z85.EncodeKey(allowed.Secret))
	var exOut strings.Builder
	example.Stdout, example.Stderr = &exOut, &exOut
	require.NoError(t, example.Start())
	t.Cleanup(func() { example.Process.Kill(); example.Wait() })
	waitInfo(t, ctl, "expiry_zmq_listeners", "1", 30*time.Second)
	setExpiringKeys(t, ctl, "p:", 3)
	waitExit(t, example)
	assert.Equal(t, 3, strings.Count(exOut.String(), `"type": "string", "key": "p:`), exOut.String())
	waitInfo(t, ctl, "expiry_zmq_listeners", "0", 30*time.Second)

	// CONFIG SET of the allowed keys applies to new connections: a
	// listener with the stranger's key gets in (libzmq does not retry
	// after a refusal, so the first stranger stays out).
	require.Equal(t, "-ERR CONFIG SET failed (possibly related to argument 'expiry-zmq-curve-allowed-keys') - a CURVE key is 40 Z85 characters, not 7\r\n",
		ctl.Do("CONFIG", "SET", "expiry-zmq-curve-allowed-keys", "too-bad"))
	require.Equal(t, "+OK\r\n", ctl.Do("CONFIG", "SET", "expiry-zmq-curve-allowed-keys", z85.EncodeKey(unknown.Public)))
	newcomer := curveListener(t, ep, server, unknown)
	waitInfo(t, ctl, "expiry_zmq_listeners", "1", 30*time.Second)
	setExpiringKeys(t, ctl, "u:", 10)
	assert.Len(t, newcomer.recv(t, 10, 30*time.Second), 10)
	assert.Empty(t, stranger.quiet(0))
	assert.Empty(t, plain.quiet(200*time.Millisecond), "the plain listener still gets nothing")

	// Revoking a key cuts its holder off at once.
	require.Equal(t, "+OK\r\n", ctl.Do("CONFIG", "SET", "expiry-zmq-curve-allowed-keys", z85.EncodeKey(allowed.Public)))
	waitInfo(t, ctl, "expiry_zmq_listeners", "0", 30*time.Second)
	setExpiringKeys(t, ctl, "r:", 3)
	assert.Empty(t, newcomer.quiet(300*time.Millisecond), "the revoked listener gets nothing more")

	// The secret key appears nowhere.
	assert.Contains(t, ctl.Do("CONFIG", "GET", "expiry-zmq-curve-secret-key"), "(redacted)")
	assert.NotContains(t, ctl.Do("CONFIG", "GET", "*"), secret)
	assert.NotContains(t, ctl.Do("INFO", "everything"), secret)
	assert.True(t, strings.HasPrefix(ctl.Do("CONFIG", "SET", "expiry-zmq-curve-secret-key", z85.EncodeKey(unknown.Secret)), "-ERR CONFIG SET failed (possibly related to argument 'expiry-zmq-curve-secret-key') - can't set immutable config"))
	require.Equal(t, "+OK\r\n", ctl.Do("CONFIG", "REWRITE"))
	log := z.Output()
	assert.Contains(t, log, "with CURVE (server public key "+z85.EncodeKey(server.Public))
	assert.Contains(t, log, "CURVE refused listener")
	assert.NotContains(t, log, secret)
	rewritten, err := os.ReadFile(conf)
	require.NoError(t, err)
	assert.Contains(t, string(rewritten), "expiry-zmq-curve-allowed-keys \""+z85.EncodeKey(allowed.Public)+"\"", "CONFIG REWRITE keeps the keys")
}

// waitExit waits for a listener process started with --count to exit 0.
func waitExit(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatal("the listener did not exit")
	}
}

// A secret key that is not a Z85 CURVE key refuses the start, and the
// log does not show it.
func TestExpiryCurveBadSecretKeyRefusesStart(t *testing.T) {
	p := testsupport.Start(t, testsupport.Options{Name: "zredis", Bin: zredisBin, NoWait: true,
		Args: []string{"--expiry-zmq-endpoints", zmqEndpoint(t), "--expiry-zmq-curve-secret-key", "NotAKeyButASecret"}})
	code, ok := p.Wait(10 * time.Second)
	require.True(t, ok, "the server exited")
	assert.NotEqual(t, 0, code)
	out := p.Output()
	assert.Contains(t, out, "a CURVE key is 40 Z85 characters, not 17")
	assert.Contains(t, out, "expiry-zmq-curve-secret-key (redacted)")
	assert.NotContains(t, out, "NotAKeyButASecret")
}

// Listener keys without a secret key stop the start: CURVE was wanted,
// and the stream would go in clear.
func TestExpiryCurveAllowedKeysWithoutSecretRefusesStart(t *testing.T) {
	keys, err := zmqpub.GenerateCurveKeys()
	require.NoError(t, err)
	p := testsupport.Start(t, testsupport.Options{Name: "zredis", Bin: zredisBin, NoWait: true,
		Args: []string{"--expiry-zmq-endpoints", zmqEndpoint(t), "--expiry-zmq-curve-allowed-keys", z85.EncodeKey(keys.Public)}})
	code, ok := p.Wait(10 * time.Second)
	require.True(t, ok, "the server exited")
	assert.NotEqual(t, 0, code)
	assert.Contains(t, p.Output(), "expiry-zmq-curve-allowed-keys is set but expiry-zmq-curve-secret-key is not")
}
