package config

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// libzmq's test keys (tests/testutil_security.hpp).
const (
	curveServerSecret = "JTKVSB%%)wK0E.X)V>+}o?pNmC{O&4W4b!Ni{Lh6"
	curveClientPublic = "Yne@$w-vo<fVvi]a<NY6T1ed:M$fCG*[IaLV{hID"
	curveServerPublic = "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7"
)

func TestCurveSecretKeyNeverShown(t *testing.T) {
	c := New()
	assert.Equal(t, map[string]string{"expiry-zmq-curve-secret-key": ""}, getMap(c, "expiry-zmq-curve-secret-key"))
	assert.True(t, c.IsNull("expiry-zmq-curve-secret-key"))

	c, err := loadString(t, "expiry-zmq-curve-secret-key \""+curveServerSecret+"\"\n")
	require.NoError(t, err)
	assert.Equal(t, curveServerSecret, c.String("expiry-zmq-curve-secret-key"), "the server reads it")
	assert.Equal(t, map[string]string{"expiry-zmq-curve-secret-key": "(redacted)"}, getMap(c, "expiry-zmq-curve-secret-key"))
	assert.Equal(t, "(redacted)", getMap(c, "*")["expiry-zmq-curve-secret-key"])
	assert.Equal(t, "(redacted)", getMap(c, "expiry-zmq-curve-*")["expiry-zmq-curve-secret-key"])
	d, ok := Lookup("expiry-zmq-curve-secret-key")
	require.True(t, ok)
	assert.True(t, d.Sensitive && d.Secret && d.Immutable && d.ZRedis)

	// Immutable: CONFIG SET answers as Redis does for such directives.
	assert.Equal(t, "ERR CONFIG SET failed (possibly related to argument 'expiry-zmq-curve-secret-key') - can't set immutable config",
		setErr(c, "expiry-zmq-curve-secret-key", curveServerPublic))
}

func TestCurveSecretKeyBadValueRefusesStart(t *testing.T) {
	for _, tt := range []struct{ value, reason string }{
		{"tooshort", "a CURVE key is 40 Z85 characters, not 8"},
		{"JTKVSB%%)wK0E.X)V>+}o?pNmC{O&4W4b!Ni{Lh\"", "a CURVE key is 40 Z85 characters: the character at offset 39 is not in the Z85 alphabet"},
	} {
		_, err := loadString(t, "expiry-zmq-curve-secret-key '"+tt.value+"'\n")
		require.Error(t, err)
		var cerr *Error
		require.ErrorAs(t, err, &cerr)
		assert.Equal(t, tt.reason, cerr.Reason)
		assert.Equal(t, "expiry-zmq-curve-secret-key (redacted)", cerr.Text)
		assert.NotContains(t, err.Error(), tt.value[:8], "the line is not echoed")
	}
	// A line that does not split (unbalanced quotes) is not echoed either.
	_, err := loadString(t, "expiry-zmq-curve-secret-key \""+curveServerSecret+"\n")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Unbalanced quotes")
	assert.NotContains(t, err.Error(), curveServerSecret[:12])
	// On the command line too.
	_, err = loadString(t, "", "--expiry-zmq-curve-secret-key", "JTKVSB%%)wK0E.X)")
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "JTKVSB")
}

func TestCurveAllowedKeys(t *testing.T) {
	other := "0000000000000000000000000000000000000000"
	c, err := loadString(t, "expiry-zmq-curve-allowed-keys "+curveClientPublic+"\nexpiry-zmq-curve-allowed-keys \""+curveServerPublic+" "+other+"\"\n")
	require.NoError(t, err)
	assert.Equal(t, []string{curveClientPublic, curveServerPublic, other}, c.Strings("expiry-zmq-curve-allowed-keys"), "lines accumulate")

	_, err = loadString(t, "expiry-zmq-curve-allowed-keys "+curveClientPublic+" nokey\n")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "a CURVE key is 40 Z85 characters, not 5")

	// CONFIG SET replaces the list; a bad key keeps the old one.
	assert.Equal(t, "OK", setErr(c, "expiry-zmq-curve-allowed-keys", other))
	assert.Equal(t, []string{other}, c.Strings("expiry-zmq-curve-allowed-keys"))
	assert.Equal(t, "ERR CONFIG SET failed (possibly related to argument 'expiry-zmq-curve-allowed-keys') - a CURVE key is 40 Z85 characters, not 3",
		setErr(c, "expiry-zmq-curve-allowed-keys", curveClientPublic+" bad"))
	assert.Equal(t, []string{other}, c.Strings("expiry-zmq-curve-allowed-keys"))
	assert.Equal(t, "OK", setErr(c, "expiry-zmq-curve-allowed-keys", ""))
	assert.Empty(t, c.Strings("expiry-zmq-curve-allowed-keys"))
}

func TestCurveRewriteRoundTrip(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "redis.conf")
	require.NoError(t, os.WriteFile(path, []byte("expiry-zmq-curve-secret-key \""+curveServerSecret+"\"\nexpiry-zmq-curve-allowed-keys "+curveClientPublic+"\n"), 0o644))
	c, err := LoadWith(LoadOptions{File: path, env: testEnv(dir)})
	require.NoError(t, err)
	require.NoError(t, c.Set([]string{"expiry-zmq-curve-allowed-keys", curveClientPublic + " " + curveServerPublic}))
	require.NoError(t, c.Rewrite())
	c2, err := LoadWith(LoadOptions{File: path, env: testEnv(dir)})
	require.NoError(t, err)
	assert.Equal(t, curveServerSecret, c2.String("expiry-zmq-curve-secret-key"))
	assert.Equal(t, []string{curveClientPublic, curveServerPublic}, c2.Strings("expiry-zmq-curve-allowed-keys"))
}

// CONFIG REWRITE keeps a config file's mode when it is more private than
// Redis's 0644: the file may hold the secret key.
func TestRewriteKeepsPrivateMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "z.conf")
	require.NoError(t, os.WriteFile(path, []byte("expiry-zmq-curve-secret-key \""+curveServerSecret+"\"\n"), 0o600))
	require.NoError(t, os.Chmod(path, 0o600))
	c, err := Load(path, "")
	require.NoError(t, err)
	require.NoError(t, c.Rewrite())
	st, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Contains(t, string(data), curveServerSecret, "the key is written back")
}
