package config

// Tests in this file compare zredis's behaviour with a real redis-server
// 7.0 binary. They skip when none is installed.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zredis/zredis/internal/testsupport"
)

// redisBinary returns the path and the version of the Redis 7.0 server
// to compare with, or ends the test as testsupport.RequireRedis does.
func redisBinary(t *testing.T) (string, string) {
	t.Helper()
	path := testsupport.RequireRedis(t)
	out, err := exec.Command(path, "--version").Output()
	require.NoError(t, err)
	m := regexp.MustCompile(`v=(\d+\.\d+\.\d+)`).FindStringSubmatch(string(out))
	require.NotNil(t, m, "%s --version: %s", path, out)
	return path, m[1]
}

// respConn is a minimal RESP2 client.
type respConn struct {
	c net.Conn
	r *bufio.Reader
}

type respError string

func (rc *respConn) do(args ...string) (any, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if err := rc.c.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		return nil, err
	}
	if _, err := rc.c.Write(b.Bytes()); err != nil {
		return nil, err
	}
	return rc.read()
}

func (rc *respConn) read() (any, error) {
	line, err := rc.r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	line = strings.TrimSuffix(line, "\r\n")
	if line == "" {
		return nil, errors.New("empty RESP line")
	}
	switch line[0] {
	case '+':
		return line[1:], nil
	case '-':
		return respError(line[1:]), nil
	case ':':
		return strconv.ParseInt(line[1:], 10, 64)
	case '$':
		n, err := strconv.Atoi(line[1:])
		if err != nil || n < 0 {
			return nil, err
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(rc.r, buf); err != nil {
			return nil, err
		}
		return string(buf[:n]), nil
	case '*':
		n, err := strconv.Atoi(line[1:])
		if err != nil {
			return nil, err
		}
		out := make([]any, 0, n)
		for i := 0; i < n; i++ {
			v, err := rc.read()
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	}
	return nil, fmt.Errorf("unexpected RESP line %q", line)
}

// reply renders a reply the way the comparison wants it: "OK" or the
// error text.
func reply(v any, err error) string {
	if err != nil {
		return "transport error: " + err.Error()
	}
	switch x := v.(type) {
	case respError:
		return string(x)
	case string:
		return x
	}
	return fmt.Sprint(v)
}

func (rc *respConn) configMap(t *testing.T, patterns ...string) map[string]string {
	t.Helper()
	v, err := rc.do(append([]string{"CONFIG", "GET"}, patterns...)...)
	require.NoError(t, err)
	arr, ok := v.([]any)
	require.True(t, ok, "CONFIG GET reply %v", v)
	m := map[string]string{}
	for i := 0; i+1 < len(arr); i += 2 {
		m[arr[i].(string)] = arr[i+1].(string)
	}
	return m
}

type liveRedis struct {
	*respConn
	dir  string
	port int
}

// startRedis runs a redis-server on a free loopback port with persistence
// off, in a temporary directory, and stops it when the test ends.
func startRedis(t *testing.T, bin string, args ...string) *liveRedis {
	t.Helper()
	all := append(append([]string{}, args...), "--daemonize", "no", "--logfile", "")
	p := testsupport.Start(t, testsupport.Options{Name: "redis", Bin: bin, Args: all, Dir: t.TempDir()})
	conn, err := net.Dial("tcp", p.Addr)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	return &liveRedis{respConn: &respConn{c: conn, r: bufio.NewReader(conn)}, dir: p.Dir, port: p.Port}
}

// zredisDefaultsLike returns a zredis configuration set up like the server
// startRedis runs (same save, bind, port and dir).
func zredisDefaultsLike(t *testing.T, r *liveRedis) *Config {
	t.Helper()
	c, err := LoadWith(LoadOptions{
		Overrides: fmt.Sprintf("port %d\nbind 127.0.0.1\nsave \"\"\n", r.port),
		env:       testEnv(r.dir),
	})
	require.NoError(t, err)
	return c
}

func TestDefaultsMatchRedis(t *testing.T) {
	bin, _ := redisBinary(t)
	r := startRedis(t, bin)
	want := r.configMap(t, "*")
	got := getMap(New(), "*")
	for name, v := range want {
		g, ok := got[name]
		require.True(t, ok, "zredis lacks directive %q", name)
		switch name {
		case "bind", "dir", "port", "save":
			continue // deliberately different defaults, or set by startRedis
		}
		require.Equal(t, v, g, "default of %s", name)
	}
	for _, d := range Directives() {
		if d.ZRedis {
			require.NotContains(t, want, d.Name)
			continue
		}
		if d.Hidden {
			require.NotContains(t, want, d.Name)
			require.Equal(t, r.configMap(t, d.Name), getMap(New(), d.Name), d.Name)
			continue
		}
		require.Contains(t, want, d.Name)
		if d.Alias != "" {
			require.Contains(t, want, d.Alias)
		}
	}
	require.Equal(t, "3600 1 300 100 60 10000", got["save"])

	// Setting every directive to its current value tells immutable and
	// protected directives apart exactly as Redis does.
	c := zredisDefaultsLike(t, r)
	for _, e := range entries {
		cur := want[e.name]
		if directives[e.index].Hidden || directives[e.index].ZRedis {
			continue
		}
		require.Equal(t, reply(r.do("CONFIG", "SET", e.name, cur)), setErr(c, e.name, cur), e.name)
	}
}

// setCases are CONFIG SET argument lists whose replies must match Redis's.
// They avoid settings that would disturb the test connection (bind, port,
// requirepass, timeout, tiny output buffer limits).
var setCases = [][]string{
	{"foo", "bar"},
	{"maxmemory", "abc"}, {"maxmemory", "-1"}, {"maxmemory", "1.5g"}, {"maxmemory", "10%"},
	{"maxmemory", "0x10"}, {"maxmemory", " 10"}, {"maxmemory", "10 "}, {"maxmemory", "+10"},
	{"maxmemory", "010"}, {"maxmemory", "1k"}, {"maxmemory", "1KB"}, {"maxmemory", ""},
	{"maxmemory", "99999999999999999999"}, {"maxmemory", "1", "foo", "2"},
	{"maxmemory", "10", "maxmemory", "20"}, {"maxmemory", "10", "MAXMEMORY", "20"},
	{"port", "abc"}, {"port", "70000"}, {"port", "-1"}, {"port", "0x10"}, {"port", "010"},
	{"port", "+10"}, {"port", " 10"}, {"port", "99999999999999999999"},
	{"daemonize", "yes"}, {"Daemonize", "yes"}, {"replicaof", "x"}, {"slaveof", "1.2.3.4", "5"},
	{"SLAVEOF", "no one"}, {"appendonly", "maybe"}, {"slave-read-only", "maybe"},
	{"SLAVE-READ-ONLY", "maybe"}, {"maxmemory-policy", "foo"}, {"loglevel", "foo"},
	{"loglevel", "WARNING"}, {"loglevel", "notice"}, {"hz", "-5"}, {"hz", "1000"}, {"hz", "0"},
	{"hz", "1.5"}, {"hz", "10"}, {"a", "b", "c"}, {"maxmemory"},
	{"maxmemory", "5", "port", "abc"}, {"port", "abc", "maxmemory", "5"},
	{"foo", "1", "maxmemory", "abc"}, {"maxmemory", "abc", "foo", "1"},
	{"daemonize", "yes", "foo", "1"}, {"foo", "1", "daemonize", "yes"},
	{"save", "abc"}, {"save", "1 2 3"}, {"save", "1"}, {"save", "10  1"}, {"save", "10 1 "},
	{"save", " 10 1"}, {"save", "10 1\t20 2"}, {"save", "10 1 20 2"}, {"save", "0 1"},
	{"save", "1 -1"}, {"save", ""},
	{"notify-keyspace-events", "Z"}, {"notify-keyspace-events", "KEA"},
	{"notify-keyspace-events", "g$lshzxetd"}, {"notify-keyspace-events", "g$lshzxet"},
	{"notify-keyspace-events", "An"}, {"notify-keyspace-events", "nd"},
	{"notify-keyspace-events", "mK"}, {"notify-keyspace-events", ""},
	{"client-output-buffer-limit", "foo 1 2 3"}, {"client-output-buffer-limit", "normal 1 2"},
	{"client-output-buffer-limit", "master 1 2 3"}, {"client-output-buffer-limit", "pubsub 1mb 2gb 3"},
	{"client-output-buffer-limit", "slave 1 2 -3"}, {"client-output-buffer-limit", "replica 1kb 2 3 pubsub 4 5 6"},
	{"client-output-buffer-limit", "PUBSUB 1 2 x"}, {"client-output-buffer-limit", ""},
	{"client-output-buffer-limit", "normal  0 0 0"},
	{"oom-score-adj-values", "1 2"}, {"oom-score-adj-values", "1 2 a"},
	{"oom-score-adj-values", "1 2 3000"}, {"oom-score-adj-values", " 1 2 3"},
	{"oom-score-adj-values", "0 200 800"}, {"requirepass", "x", "requirepass", "y"},
	{"maxclients", "0"}, {"maxclients", "5000"}, {"timeout", "-1"}, {"enable-debug-command", "yes"},
	{"unixsocket", "/tmp/x"}, {"unixsocketperm", "abc"}, {"list-max-listpack-size", "0"},
	{"list-max-ziplist-size", "-6"}, {"slave-read-only", "yes", "replica-read-only", "no"},
	{"replica-read-only", "yes", "slave-read-only", "no"}, {"masterauth", "foo"}, {"masterauth", ""},
	{"latency-tracking-info-percentiles", "50 101"}, {"latency-tracking-info-percentiles", "a"},
	{"latency-tracking-info-percentiles", ""}, {"latency-tracking-info-percentiles", "1e1 0.0000001"},
	{"latency-tracking-info-percentiles", "1.5 99 99.999"}, {"latency-tracking-info-percentiles", "50 99 99.9"},
	{"maxmemory-clients", "10%"}, {"maxmemory-clients", "101%"}, {"maxmemory-clients", "-5%"},
	{"maxmemory-clients", "0%"}, {"maxmemory-clients", "1mb%"}, {"maxmemory-clients", "99999999999999999999"},
	{"maxmemory-clients", "0"},
	{"shutdown-on-sigint", "save nosave"}, {"shutdown-on-sigint", "now force"},
	{"shutdown-on-sigint", "default save"}, {"shutdown-on-sigint", ""},
	{"shutdown-on-sigint", "NOW force"}, {"shutdown-on-sigint", "now  force"},
	{"shutdown-on-sigterm", "bogus"}, {"dbfilename", "a/b"}, {"dir", "/tmp"},
	{"proc-title-template", "{title}"}, {"proc-title-template", "{port}"},
	{"proc-title-template", "{foo}"}, {"proc-title-template", "{{"}, {"proc-title-template", "{"},
	{"proc-title-template", "x {listen-addr}"}, {"proc-title-template", "{title} {listen-addr} {server-mode}"},
	{"cluster-announce-hostname", "a_b"}, {"cluster-announce-hostname", "a-b.c"},
	{"cluster-announce-hostname", ""}, {"appendfilename", ""}, {"lua-time-limit", "100"},
	{"busy-reply-threshold", "abc"}, {"LUA-TIME-LIMIT", "abc"}, {"hash-max-ziplist-entries", "100"},
	{"stream-node-max-bytes", "99999999999999999999"}, {"socket-mark-id", "1"},
	{"active-defrag-ignore-bytes", "0"}, {"proto-max-bulk-len", "1000"}, {"proto-max-bulk-len", "1gb"},
	{"repl-backlog-size", "0"}, {"repl-backlog-size", "2mb"}, {"rdb-key-save-delay", "5"},
	{"rdb-key-save-delay", "0"}, {"loading-process-events-interval-bytes", "100"},
	{"use-exit-on-panic", "maybe"}, {"slowlog-log-slower-than", "-2"}, {"slowlog-log-slower-than", "-1"},
	{"slowlog-max-len", "-1"}, {"maxmemory-samples", "0"}, {"maxmemory-eviction-tenacity", "101"},
	{"active-expire-effort", "11"}, {"oom-score-adj", "relative"}, {"oom-score-adj", "no"},
	{"repl-diskless-load", "swapdb"}, {"appendfsync", "ALWAYS"}, {"tls-auth-clients", "optional"},
	{"acl-pubsub-default", "allchannels"}, {"sanitize-dump-payload", "clients"},
	{"propagation-error-behavior", "panic-on-replicas"}, {"cluster-preferred-endpoint-type", "x"},
	{"replica-announce-ip", "10.0.0.1"}, {"replica-announce-ip", ""}, {"slave-announce-port", "70000"},
	{"tcp-keepalive", "60"}, {"databases", "4"}, {"io-threads", "2"}, {"syslog-facility", "local1"},
	{"list-compress-depth", "-1"}, {"maxmemory", "2gb", "maxmemory-policy", "allkeys-lru", "maxmemory-samples", "abc"},
	{"maxmemory", "2gb", "maxmemory-policy", "allkeys-lru"},
}

func TestSetRepliesMatchRedis(t *testing.T) {
	bin, _ := redisBinary(t)
	r := startRedis(t, bin)
	c := zredisDefaultsLike(t, r)
	for _, args := range setCases {
		want := reply(r.do(append([]string{"CONFIG", "SET"}, args...)...))
		require.Equal(t, want, setErr(c, args...), "CONFIG SET %q", args)
	}
	want := r.configMap(t, "*")
	got := getMap(c, "*")
	for name, v := range want {
		require.Equal(t, v, got[name], "value of %s after the CONFIG SET sequence", name)
	}
	for _, d := range Directives() {
		if d.Hidden {
			require.Equal(t, r.configMap(t, d.Name), getMap(c, d.Name))
		}
	}
}

func TestGetRepliesMatchRedis(t *testing.T) {
	bin, _ := redisBinary(t)
	r := startRedis(t, bin)
	c := zredisDefaultsLike(t, r)
	for _, patterns := range [][]string{
		{"slaveof"}, {"SLAVEOF"}, {"MaxMemory"}, {"MAX*ory"}, {"maxmemory", "maxmemory", "maxmem*"},
		{"slave-read*", "replica-read*"}, {"*read-only"}, {"slave-read-only", "slave*"},
		{"Slave-Read-Only", "slave-r*"}, {"replica-read-only", "slave-read*"}, {"slaveof", "replicaof"},
		{"MAXMEMORY", "maxmemory"}, {`\maxmemory`}, {"maxmemor[x-z]"}, {`max\*`}, {"nonexistent"},
		{"[ab]ind"}, {"*delay*"}, {"rdb-key-save-delay"}, {"*max*", "*min*"}, {"?z"}, {"h?"},
		{"*[^a-z-]*"}, {"*-*-*-*-*"},
	} {
		got := getMap(c, patterns...)
		for name := range got {
			if directives[mustIndex(name)].ZRedis {
				delete(got, name) // zredis's own directives: Redis has none of them
			}
		}
		require.Equal(t, r.configMap(t, patterns...), got, "CONFIG GET %q", patterns)
	}
}

// runRedisConf starts redis-server with args in dir and returns what it
// printed; the configuration is expected to be rejected.
func runRedisConf(t *testing.T, bin, dir string, args ...string) (stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	require.NoError(t, ctx.Err(), "redis-server accepted %q: %s", args, o.String())
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "redis-server should have refused %q", args)
	require.Equal(t, 1, ee.ExitCode())
	return o.String(), e.String()
}

func TestConfigFileErrorsMatchRedis(t *testing.T) {
	bin, version := redisBinary(t)
	old := Banner
	Banner = "Redis " + version
	defer func() { Banner = old }()

	// Every file starts with "port 0" so that a file Redis unexpectedly
	// accepted would not leave a server listening.
	cases := []struct {
		content string
		args    []string
	}{
		{content: "foo bar\n"},
		{content: "# c\n\nappendonly maybe\n"},
		{content: "port 70000\n"},
		{content: "maxmemory-policy foo\n"},
		{content: "maxmemory 10x\n"},
		{content: "maxmemory -1\n"},
		{content: "maxmemory-clients 101%\n"},
		{content: "include /nonexistent-zredis/x.conf\n"},
		{content: "include nonexistent-zredis.conf\n"},
		{content: "include\n"},
		{content: "include a b\n"},
		{content: "port \"7000\n"},
		{content: "port '7000'x\n"},
		{content: "port 7000 7001\n"},
		{content: "port\n"},
		{content: "save 10\n"},
		{content: "save 0 1\n"},
		{content: "save \"10 1 20\"\n"},
		{content: "replicaof 1.2.3.4\n"},
		{content: "replicaof 1.2.3.4 abc\n"},
		{content: "slaveof 1.2.3.4 70000\n"},
		{content: "foo.bar\n"},
		{content: "sentinel monitor x\n"},
		{content: "logfile /nonexistent-zredis/dir/log\n"},
		{content: "cluster-enabled yes\nreplicaof 1.2.3.4 5\n"},
		{content: "   PORT   0   \n  \tfoo\n"},
		{content: "hz 10\r\nfoo\r\n"},
		{content: "dir /nonexistent-zredis\n"},
		{content: "dir /etc/passwd\n"},
		{content: "list-max-ziplist-entries\n"},
		{content: "lua-replicate-commands yes\nfoo\n"},
		{content: "user a on\nuser a off\n"},
		{content: "notify-keyspace-events Z\n"},
		{content: "notify-keyspace-events a b\n"},
		{content: "client-output-buffer-limit normal 1 2\n"},
		{content: "client-output-buffer-limit \"master 1 2 3\"\n"},
		{content: "oom-score-adj-values 1 2\n"},
		{content: "bind 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17\n"},
		{content: "latency-tracking-info-percentiles 101\n"},
		{content: "shutdown-on-sigint save nosave\n"},
		{content: "unixsocketperm 1000\n"},
		{content: "unixsocketperm 9\n"},
		{content: "dbfilename a/b\n"},
		{content: "appendfilename \"\"\n"},
		{content: "proc-title-template {nope}\n"},
		{content: "requirepass \"a\\x41\" b\n"},
		{content: "databases 0\n"},
		{content: "hz 10\n", args: []string{"--foo", "bar"}},
		{content: "hz 10", args: []string{"--foo", "bar"}},
		{content: "hz 10\n", args: []string{"--port", "a b"}},
		{content: "hz 10\n", args: []string{"--port", "a'b\"c", "x"}},
		{content: "hz 10\n", args: []string{"--maxmemory", "1\t2"}},
		{content: "hz 10\n", args: []string{"--save", "--port", "7", "--zzz"}},
		{content: "hz 10\n", args: []string{"--port", "1", "2", "--appendonly"}},
		{content: "hz 10\n", args: []string{"--save", "10", "--hz", "5"}},
	}
	for _, tc := range cases {
		dir := t.TempDir()
		path := filepath.Join(dir, "bad.conf")
		content := "port 0\n" + tc.content
		require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
		args := append([]string{"bad.conf"}, tc.args...)
		stdout, stderr := runRedisConf(t, bin, dir, args...)

		cl := ParseArgs(args)
		_, err := LoadWith(LoadOptions{File: cl.File, Overrides: cl.Overrides, env: testEnv(dir)})
		require.Error(t, err, "zredis accepted %q %q", content, tc.args)
		var ce *Error
		require.ErrorAs(t, err, &ce)
		if ce.Logged {
			require.Empty(t, stderr, "%q", content)
			require.Contains(t, stdout, " # "+err.Error()+"\n", "%q %q", content, tc.args)
		} else {
			// zredis names the file in the banner; the rest is Redis's text.
			require.Equal(t, stderr, namelessBanner(err.Error())+"\n", "%q %q", content, tc.args)
		}
	}

	// A missing main file is named by its absolute path.
	dir := t.TempDir()
	stdout, _ := runRedisConf(t, bin, dir, "nonexistent.conf")
	_, err := LoadWith(LoadOptions{File: "nonexistent.conf", env: testEnv(dir)})
	require.Error(t, err)
	require.Contains(t, stdout, " # "+err.Error()+"\n")
}

// TestRewriteMatchesRedis rewrites the same file after the same CONFIG SET
// on both servers. Lines Redis rewrites from its ACL state ("user") and
// bind (whose default differs in zredis) are excluded; the generated
// section is compared as a set because Redis appends in hash order.
func TestRewriteMatchesRedis(t *testing.T) {
	bin, _ := redisBinary(t)
	dir := t.TempDir()
	port := testsupport.FreePort(t)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "inc.conf"), []byte("maxmemory-policy allkeys-lru\n"), 0o644))
	content := strings.Replace(rewriteInput, "port 6394", fmt.Sprintf("port %d\nbind 127.0.0.1\nlogfile \"\"", port), 1)
	content = strings.Replace(content, "include inc.conf", "include "+filepath.Join(dir, "inc.conf"), 1)
	redisPath := filepath.Join(dir, "redis.conf")
	zredisPath := filepath.Join(dir, "zredis.conf")
	require.NoError(t, os.WriteFile(redisPath, []byte(content), 0o644))
	require.NoError(t, os.WriteFile(zredisPath, []byte(content), 0o644))

	// The file sets port, bind and the password; the process runs in dir.
	p := testsupport.Start(t, testsupport.Options{Name: "redis", Bin: bin, Args: []string{redisPath}, Dir: dir,
		Port: port, ArgsOnly: true, Password: "p w"})
	conn, err := net.Dial("tcp", p.Addr)
	require.NoError(t, err)
	defer conn.Close()
	rc := &respConn{c: conn, r: bufio.NewReader(conn)}
	require.Equal(t, "OK", reply(rc.do("AUTH", "p w")))
	require.Equal(t, "OK", reply(rc.do(append([]string{"CONFIG", "SET"}, rewriteSets...)...)))
	require.Equal(t, "OK", reply(rc.do("CONFIG", "REWRITE")))

	c, err := LoadWith(LoadOptions{File: zredisPath, env: testEnv(dir)})
	require.NoError(t, err)
	require.NoError(t, c.Set(rewriteSets))
	require.NoError(t, c.Rewrite())

	split := func(path string) (head []string, generated []string) {
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		inGenerated := false
		for _, l := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(l, "user ") || strings.HasPrefix(l, "bind ") {
				continue
			}
			if l == rewriteSignature {
				inGenerated = true
			}
			if inGenerated {
				if l != "" {
					generated = append(generated, l)
				}
			} else {
				head = append(head, l)
			}
		}
		sort.Strings(generated)
		return head, generated
	}
	rh, rg := split(redisPath)
	zh, zg := split(zredisPath)
	require.Equal(t, rh, zh)
	require.Equal(t, rg, zg)
}

// namelessBanner drops the file name zredis adds to the fatal error's
// banner, leaving the block Redis prints.
func namelessBanner(msg string) string {
	return regexp.MustCompile(`(FATAL CONFIG FILE ERROR \(Redis 7\.0\.15), [^)]*\)`).ReplaceAllString(msg, "$1)")
}
