package main

import (
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zredis/zredis/config"
	"github.com/zredis/zredis/server"
)

// oomScore follows Redis's setOOMScoreAdj: the first adjustment saves the
// score the process had; relative adds to it, absolute replaces it, both
// clamped to [-1000, 1000]; no restores it; a replica uses the second value.
func TestOOMScore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "oom_score_adj")
	require.NoError(t, os.WriteFile(path, []byte("100\n"), 0o644))
	read := func() string {
		raw, err := os.ReadFile(path)
		require.NoError(t, err)
		return string(raw)
	}
	cfg := config.New()
	o := &oomScore{cfg: cfg, path: path}
	o.watch(server.NewLogger(os.Stderr, server.LevelWarning))
	assert.Equal(t, "100\n", read(), "oom-score-adj no: untouched")

	require.NoError(t, cfg.Set([]string{"oom-score-adj", "relative", "oom-score-adj-values", "50 200 800"}))
	assert.Equal(t, "150\n", read())
	require.NoError(t, cfg.Set([]string{"oom-score-adj-values", "950 200 800"}))
	assert.Equal(t, "1000\n", read(), "clamped")
	require.NoError(t, cfg.Set([]string{"oom-score-adj", "absolute", "oom-score-adj-values", "-30 200 800"}))
	assert.Equal(t, "-30\n", read())
	require.NoError(t, cfg.Set([]string{"oom-score-adj", "no"}))
	assert.Equal(t, "100\n", read(), "the saved score is back")

	cfg, err := config.Load("", "replicaof 127.0.0.1 6380\noom-score-adj absolute\n")
	require.NoError(t, err)
	o = &oomScore{cfg: cfg, path: path}
	require.NoError(t, o.apply())
	assert.Equal(t, "200\n", read(), "a replica's value")

	o = &oomScore{cfg: cfg, path: filepath.Join(t.TempDir(), "missing", "x")}
	assert.ErrorContains(t, o.apply(), "Unable to read oom_score_adj: No such file or directory")
}

// With syslog-enabled, each logged line reaches the syslog socket with
// the facility and severity Redis uses, the ident and the pid; a socket
// that appears later is connected at the next line.
func TestSyslog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log")
	cfg, err := config.Load("", "syslog-enabled yes\nsyslog-ident zr\nsyslog-facility local3\n")
	require.NoError(t, err)
	log := server.NewLogger(io.Discard, server.LevelVerbose)
	s := newSyslogger(path, cfg)
	log.SetSyslog(s.log)
	defer s.close()
	log.Warningf("lost: no socket yet")

	sock, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	require.NoError(t, err)
	defer sock.Close()
	read := func() string {
		buf := make([]byte, 1024)
		sock.SetReadDeadline(time.Now().Add(5 * time.Second))
		n, err := sock.Read(buf)
		require.NoError(t, err)
		return string(buf[:n])
	}
	log.Warningf("disk %s", "full")
	assert.Regexp(t, `^<156>\w{3} [ \d]\d \d\d:\d\d:\d\d zr\[`+strconv.Itoa(os.Getpid())+`\]: disk full$`, read())
	log.Verbosef("v")
	assert.Regexp(t, `^<158>.* zr\[\d+\]: v$`, read(), "local3 (19) << 3 | LOG_INFO")
	log.Logf(server.LevelDebug, "below the level")
	log.Noticef("n")
	assert.Regexp(t, `^<157>.*: n$`, read())
}

// openFiles raises the limit when it can, lowers maxclients when it
// cannot (trying 16 fewer descriptors at a time), and gives up when not
// even the reserved descriptors fit, as adjustOpenFilesLimit.
func TestOpenFilesAdjust(t *testing.T) {
	var logBuf strings.Builder
	log := server.NewLogger(&logBuf, server.LevelNotice)
	fake := func(cur, hard uint64) *openFiles {
		return &openFiles{cfg: config.New(), log: log,
			getrlimit: func(r *syscall.Rlimit) error { r.Cur, r.Max = cur, hard; return nil },
			setrlimit: func(r *syscall.Rlimit) error {
				if r.Max > hard {
					return syscall.EPERM
				}
				cur = r.Cur
				return nil
			},
		}
	}
	got, err := fake(20000, 20000).adjust(10000)
	require.NoError(t, err)
	assert.Equal(t, uint64(10000), got, "fits already")

	got, err = fake(1024, 65536).adjust(10000)
	require.NoError(t, err)
	assert.Equal(t, uint64(10000), got)
	assert.Contains(t, logBuf.String(), "Increased maximum number of open files to 10032 (it was originally set to 1024).")

	got, err = fake(1000, 1000).adjust(10000)
	require.NoError(t, err)
	assert.Equal(t, uint64(1000-32), got)
	assert.Contains(t, logBuf.String(), "maxclients has been reduced to 968 to compensate for low ulimit.")

	_, err = fake(20, 20).adjust(10000)
	assert.EqualError(t, err, "Your current 'ulimit -n' of 20 is not enough for the server to start. Please increase your open file limit to at least 10032. Exiting.")
}

// The modes of redis-server's command line that zredis does not serve are
// refused, each with its reason; --sentinel counts anywhere, as in
// Redis's checkForSentinelMode, and so does a name holding "sentinel".
func TestUnservedModes(t *testing.T) {
	for _, tc := range []struct {
		exe  string
		args []string
		want string
	}{
		{"zredis-server", nil, ""},
		{"zredis-server", []string{"/etc/redis/redis.conf", "--port", "6380"}, ""},
		{"zredis-server", []string{"--sentinel"}, "Sentinel mode (--sentinel)"},
		{"zredis-server", []string{"/etc/redis/sentinel.conf", "--sentinel"}, "Sentinel mode (--sentinel)"},
		{"/usr/local/bin/redis-sentinel", []string{"/etc/redis/sentinel.conf"}, "started as redis-sentinel"},
		{"zredis-server", []string{"--test-memory", "4096"}, "--test-memory"},
		{"zredis-server", []string{"--check-system"}, "--check-system"},
		{"zredis-server", []string{"--masterauth", "--check-system"}, ""},
	} {
		got := unservedMode(tc.exe, tc.args)
		if tc.want == "" {
			assert.Empty(t, got, "%s %v", tc.exe, tc.args)
		} else {
			assert.Contains(t, got, tc.want, "%s %v", tc.exe, tc.args)
		}
	}
}

// --help names every directive of zredis's own, with its meaning and
// default, and the modes it refuses.
func TestUsageListsOwnDirectives(t *testing.T) {
	var b strings.Builder
	usage(&b)
	help := b.String()
	for _, d := range config.Directives() {
		if d.ZRedis {
			assert.Contains(t, help, "--"+d.Name+" ")
			assert.NotEmpty(t, d.Help, d.Name)
		}
	}
	assert.Contains(t, help, "--expiry-zmq-hwm-bytes BYTES\n")
	assert.Contains(t, help, "[default: 256mb]")
	assert.Contains(t, help, "--sentinel")
	for _, line := range strings.Split(help, "\n") {
		if strings.HasPrefix(line, "             ") {
			assert.LessOrEqual(t, len(line), 78, "a wrapped line: %q", line)
		}
	}
}
