package config

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zredis/zredis/redisconv"
)

// testEnv is the real filesystem with the working directory set to cwd.
func testEnv(cwd string) *env {
	e := defaultEnv()
	e.cwd = cwd
	return e
}

func loadString(t *testing.T, content string, args ...string) (*Config, error) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "redis.conf")
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
	cl := ParseArgs(append([]string{path}, args...))
	return LoadWith(LoadOptions{File: cl.File, Overrides: cl.Overrides, env: testEnv(dir)})
}

func getMap(c *Config, patterns ...string) map[string]string {
	m := map[string]string{}
	for _, p := range c.GetMulti(patterns) {
		m[p.Name] = p.Value
	}
	return m
}

func TestTable(t *testing.T) {
	ds := Directives()
	require.Len(t, ds, 196)
	names := map[string]bool{}
	aliases, noEffect, hidden, zr := 0, 0, 0, 0
	for _, d := range ds {
		require.Equal(t, strings.ToLower(d.Name), d.Name)
		require.False(t, names[d.Name], d.Name)
		names[d.Name] = true
		if d.Alias != "" {
			aliases++
			require.False(t, names[d.Alias], d.Alias)
			names[d.Alias] = true
		}
		if d.NoEffect {
			noEffect++
		}
		if d.Hidden {
			hidden++
		}
		if d.ZRedis {
			zr++
		}
		if d.Kind == KindEnum || d.Kind == KindFlags {
			require.NotEmpty(t, d.Enum, d.Name)
		}
		if d.Kind == KindInt || d.Kind == KindMemory || d.Kind == KindOctal {
			require.True(t, d.Max > 0, d.Name)
		}
	}
	require.Equal(t, 19, aliases)
	require.Equal(t, 5, hidden)
	require.Equal(t, 18, zr)
	require.Equal(t, 41, noEffect) // the cluster directives a zredis node honours, replicas and the TLS bus included, and activerehashing are no longer among them
	// CONFIG GET * shows every non-hidden name and alias (192 for Redis 7.0
	// plus zredis's own).
	require.Len(t, New().Get("*"), 192+18)

	d, ok := Lookup("SLAVEOF")
	require.True(t, ok)
	require.Equal(t, "replicaof", d.Name)
	require.True(t, d.Immutable)
	_, ok = Lookup("nope")
	require.False(t, ok)
}

func TestDefaults(t *testing.T) {
	c := New()
	cwd, err := os.Getwd()
	require.NoError(t, err)
	cwd, err = filepath.EvalSymlinks(cwd)
	require.NoError(t, err)
	require.Equal(t, cwd, c.String("dir"))
	require.Equal(t, "127.0.0.1 -::1", c.String("bind"))
	require.Equal(t, []string{"127.0.0.1", "-::1"}, c.Strings("bind"))
	require.Equal(t, int64(6379), c.Int("port"))
	require.Equal(t, int64(16), c.Int("databases"))
	require.Equal(t, "3600 1 300 100 60 10000", c.String("save"))
	require.Equal(t, []SaveParam{{3600, 1}, {300, 100}, {60, 10000}}, c.SaveParams())
	require.Equal(t, int64(100000), c.Int("expiry-zmq-hwm"))
	require.Empty(t, c.Strings("expiry-zmq-endpoints"))
	require.Equal(t, "", c.String("expiry-zmq-endpoints"))
	require.True(t, c.Bool("protected-mode"))
	require.True(t, c.IsNull("requirepass"))
	require.Equal(t, int64(0), c.Int("maxmemory"))
	require.Equal(t, BufferLimit{268435456, 67108864, 60}, c.ClientOutputBufferLimits()[ClientReplica])
	require.Equal(t, [3]int64{0, 200, 800}, c.OOMScoreAdjValues())
	require.Equal(t, []float64{50, 99, 99.9}, c.Percentiles())
	_, _, ok := c.ReplicaOf()
	require.False(t, ok)
	require.Equal(t, "noeviction", c.String("maxmemory-policy"))
	require.Equal(t, int64(7), c.Int("maxmemory-policy"))
	require.Equal(t, int64(10), c.Int("hz"))
	require.Equal(t, "", c.File())
	for _, d := range Directives() {
		if d.Kind == KindDir || d.Name == "bind" {
			continue
		}
		require.Equal(t, d.Default, c.String(d.Name), d.Name)
	}
}

func TestTypedGettersPanicOnUnknown(t *testing.T) {
	c := New()
	require.Panics(t, func() { c.Int("no-such-directive") })
	require.Panics(t, func() { c.Bool("maxmemory") })
	require.Panics(t, func() { c.Int("bind") })
	require.Equal(t, int64(10000), c.Int("MAXCLIENTS"))
}

func TestTypedGettersAllocationFree(t *testing.T) {
	c := New()
	allocs := testing.AllocsPerRun(1000, func() {
		_ = c.Int("maxclients")
		_ = c.Bool("protected-mode")
		_ = c.String("requirepass")
		_ = c.Uint("maxmemory")
	})
	require.Zero(t, allocs)
}

func TestSplitArgs(t *testing.T) {
	cases := []struct {
		in   string
		want []string
		ok   bool
	}{
		{"foo bar", []string{"foo", "bar"}, true},
		{"  foo   bar  ", []string{"foo", "bar"}, true},
		{"\tfoo\tbar", []string{"foo", "bar"}, true},
		{`save ""`, []string{"save", ""}, true},
		{`a "b c" 'd e'`, []string{"a", "b c", "d e"}, true},
		{`"\x41\n\r\t\b\a\"\\\q"`, []string{"A\n\r\t\b\a\"\\q"}, true},
		{`"\x4g"`, []string{"x4g"}, true},
		{`'it\'s' 'a\nb'`, []string{"it's", `a\nb`}, true},
		{`foo"bar baz"`, []string{"foobar baz"}, true},
		{`"unterminated`, nil, false},
		{`'unterminated`, nil, false},
		{`"a"b`, nil, false},
		{`'a'b`, nil, false},
		{"", []string{}, true},
		{"   ", []string{}, true},
		{"a\x00b c", []string{"a"}, true},
	}
	for _, tc := range cases {
		got, ok := SplitArgs(tc.in)
		require.Equal(t, tc.ok, ok, tc.in)
		if tc.ok {
			require.Equal(t, tc.want, got, tc.in)
		}
	}
}

func TestRepr(t *testing.T) {
	require.Equal(t, `"abc"`, Repr("abc"))
	require.Equal(t, `"a\"b\\c\n\r\t\a\b\x01\xff"`, Repr("a\"b\\c\n\r\t\a\b\x01\xff"))
	for _, s := range []string{"", "x y", "\x00\x7f\x80", `'"`} {
		got, ok := SplitArgs(Repr(s))
		require.True(t, ok)
		require.Equal(t, []string{s}, got)
	}
}

func TestMemtoull(t *testing.T) {
	cases := []struct {
		in   string
		want uint64
		ok   bool
	}{
		{"0", 0, true},
		{"", 0, true},
		{"k", 0, true},
		{"5b", 5, true},
		{"5B", 5, true},
		{"1k", 1000, true},
		{"1K", 1000, true},
		{"1kb", 1024, true},
		{"1Kb", 1024, true},
		{"1m", 1000000, true},
		{"1mb", 1048576, true},
		{"1g", 1000000000, true},
		{"1gb", 1073741824, true},
		{"1GB", 1073741824, true},
		{"010", 10, true},
		{"99999999999999999999", math.MaxUint64, true},
		{"18446744073709551615kb", 18446744073709550592, true},
		{"-1", 0, false},
		{"+1", 0, false},
		{" 1", 0, false},
		{"1 ", 0, false},
		{"1.5g", 0, false},
		{"10%", 0, false},
		{"1t", 0, false},
		{"0x10", 0, false},
	}
	for _, tc := range cases {
		got, ok := memtoull(tc.in)
		require.Equal(t, tc.ok, ok, tc.in)
		if ok {
			require.Equal(t, tc.want, got, tc.in)
		}
	}
}

func TestString2ll(t *testing.T) {
	good := map[string]int64{"0": 0, "1": 1, "-1": -1, "9223372036854775807": math.MaxInt64,
		"-9223372036854775808": math.MinInt64}
	for s, want := range good {
		got, ok := redisconv.ParseInt(s)
		require.True(t, ok, s)
		require.Equal(t, want, got, s)
	}
	for _, s := range []string{"", "-", "-0", "01", "+1", " 1", "1 ", "1.0", "0x1", "9223372036854775808", "99999999999999999999"} {
		_, ok := redisconv.ParseInt(s)
		require.False(t, ok, s)
	}
}

func TestGet(t *testing.T) {
	c := New()
	require.Equal(t, []Pair{{"slaveof", ""}}, c.Get("slaveof"))
	require.Equal(t, []Pair{{"SLAVEOF", ""}}, c.Get("SLAVEOF"))
	require.Equal(t, []Pair{{"MaxMemory", "0"}}, c.Get("MaxMemory"))
	require.Equal(t, []Pair{{"maxmemory", "0"}}, c.Get("MAX*ory"))
	require.Empty(t, c.Get("nonexistent"))
	require.Empty(t, c.Get(`\maxmemory`))
	require.Equal(t, map[string]string{"replica-read-only": "yes", "slave-read-only": "yes"}, getMap(c, "*read-only"))
	require.Equal(t, map[string]string{"replicaof": "", "slaveof": ""}, getMap(c, "slaveof", "replicaof"))
	require.Equal(t, map[string]string{"Slave-Read-Only": "yes"}, getMap(c, "Slave-Read-Only", "slave-r*"))
	require.Equal(t, map[string]string{"MAXMEMORY": "0"}, getMap(c, "MAXMEMORY", "maxmemory"))
	require.Len(t, c.GetMulti([]string{"maxmemory", "maxmemory", "maxmem*"}), 5)
	// Hidden directives answer exact names only.
	require.Equal(t, []Pair{{"rdb-key-save-delay", "0"}}, c.Get("rdb-key-save-delay"))
	require.Empty(t, c.Get("rdb-key-save-*"))
	require.Equal(t, []Pair{{"bind", "127.0.0.1 -::1"}}, c.Get("[ab]ind"))
}

func setErr(c *Config, args ...string) string {
	if err := c.Set(args); err != nil {
		return err.Error()
	}
	return "OK"
}

func TestSet(t *testing.T) {
	c := New()
	require.Equal(t, "OK", setErr(c, "maxmemory", "1gb", "hz", "1000", "slave-priority", "7"))
	require.Equal(t, int64(1<<30), c.Int("maxmemory"))
	require.Equal(t, "500", c.String("hz"))
	require.Equal(t, "7", c.String("replica-priority"))
	require.Equal(t, "7", c.String("slave-priority"))

	require.Equal(t, "ERR wrong number of arguments for 'config|set' command", setErr(c, "maxmemory"))
	require.Equal(t, "ERR syntax error", setErr(c, "a", "b", "c"))
	require.Equal(t, "ERR Unknown option or number of arguments for CONFIG SET - 'foo'", setErr(c, "foo", "bar"))
	require.Equal(t, "ERR Unknown option or number of arguments for CONFIG SET - 'foo'", setErr(c, "maxmemory", "abc", "foo", "1"))
	require.Equal(t, "ERR CONFIG SET failed (possibly related to argument 'Daemonize') - can't set immutable config", setErr(c, "Daemonize", "yes", "foo", "1"))
	require.Equal(t, "ERR CONFIG SET failed (possibly related to argument 'MAXMEMORY') - duplicate parameter", setErr(c, "maxmemory", "1", "MAXMEMORY", "2"))
	require.Equal(t, "ERR CONFIG SET failed (possibly related to argument 'slave-read-only') - argument must be 'yes' or 'no'", setErr(c, "SLAVE-READ-ONLY", "maybe"))
	require.Equal(t, "ERR CONFIG SET failed (possibly related to argument 'dir') - can't set protected config", setErr(c, "dir", "/tmp"))
	require.Equal(t, "ERR CONFIG SET failed (possibly related to argument 'maxmemory-clients') - percentage argument must be less or equal to 100", setErr(c, "maxmemory-clients", "101%"))
	require.Equal(t, "ERR CONFIG SET failed (possibly related to argument 'unixsocketperm') - can't set immutable config", setErr(c, "unixsocketperm", "1"))

	// Atomic: the failing second pair leaves the first unchanged.
	require.Equal(t, "ERR CONFIG SET failed (possibly related to argument 'port') - argument couldn't be parsed into an integer", setErr(c, "maxmemory", "5", "port", "abc"))
	require.Equal(t, int64(1<<30), c.Int("maxmemory"))

	// Aliases are separate entries: no duplicate error, last one wins.
	require.Equal(t, "OK", setErr(c, "slave-read-only", "yes", "replica-read-only", "no"))
	require.False(t, c.Bool("replica-read-only"))

	require.Equal(t, "OK", setErr(c, "maxmemory-clients", "10%"))
	require.Equal(t, "10%", c.String("maxmemory-clients"))
	require.Equal(t, int64(-10), c.Int("maxmemory-clients"))

	require.Equal(t, "OK", setErr(c, "save", ""))
	require.Empty(t, c.SaveParams())
	require.Equal(t, "ERR CONFIG SET failed (possibly related to argument 'save') - Invalid save parameters", setErr(c, "save", "10  1"))
	require.Equal(t, "OK", setErr(c, "save", "10 1 20 2"))
	require.Equal(t, "10 1 20 2", c.String("save"))

	require.Equal(t, "OK", setErr(c, "notify-keyspace-events", "KEA"))
	require.Equal(t, "AKE", c.String("notify-keyspace-events"))
	require.Equal(t, int64(NotifyAll|NotifyKeyspace|NotifyKeyevent), c.Int("notify-keyspace-events"))

	require.Equal(t, "OK", setErr(c, "client-output-buffer-limit", "replica 1mb 2gb 3"))
	require.Equal(t, "normal 0 0 0 slave 1048576 2147483648 3 pubsub 33554432 8388608 60", c.String("client-output-buffer-limit"))

	require.Equal(t, "OK", setErr(c, "shutdown-on-sigint", "NOW force"))
	require.Equal(t, "now force", c.String("shutdown-on-sigint"))
	require.Equal(t, int64(ShutdownNow|ShutdownForce), c.Int("shutdown-on-sigint"))

	// The endpoints are bound once, at start.
	require.Equal(t, "ERR CONFIG SET failed (possibly related to argument 'expiry-zmq-endpoints') - can't set immutable config",
		setErr(c, "expiry-zmq-endpoints", "tcp://127.0.0.1:5555 ipc:///tmp/x"))
	require.Equal(t, "OK", setErr(c, "expiry-zmq-hwm", "10", "expiry-zmq-spool-max-bytes", "1mb", "expiry-zmq-types", "hash zset"))
	require.Equal(t, int64(10), c.Int("expiry-zmq-hwm"))
	require.Equal(t, int64(1<<20), c.Int("expiry-zmq-spool-max-bytes"))
	require.Equal(t, "hash zset", c.String("expiry-zmq-types"))
	require.Equal(t, int64(1<<1|1<<4), c.Int("expiry-zmq-types"))
	// Streams are type code 5 (code 6 is reserved for hash field expiry).
	require.Equal(t, "OK", setErr(c, "expiry-zmq-types", "STREAM string hash"))
	require.Equal(t, "string hash stream", c.String("expiry-zmq-types"))
	require.Equal(t, int64(1<<0|1<<1|1<<5), c.Int("expiry-zmq-types"))
	require.Equal(t, "OK", setErr(c, "expiry-zmq-types", "stream"))
	require.Equal(t, int64(1<<5), c.Int("expiry-zmq-types"))
	require.Equal(t, "ERR CONFIG SET failed (possibly related to argument 'expiry-zmq-types') - argument(s) must be one of the following: string, hash, list, set, zset, stream, hash-fields",
		setErr(c, "expiry-zmq-types", "string streams"))
	require.Equal(t, "stream", c.String("expiry-zmq-types"), "a refused value leaves the old one")

	require.Equal(t, "OK", setErr(c, "requirepass", "secret"))
	require.False(t, c.IsNull("requirepass"))
	require.Equal(t, "OK", setErr(c, "requirepass", ""))
	require.True(t, c.IsNull("requirepass"))
}

func TestSetProtectedConfigs(t *testing.T) {
	dir := t.TempDir()
	c, err := LoadWith(LoadOptions{Overrides: "enable-protected-configs local", env: testEnv(dir)})
	require.NoError(t, err)
	require.Equal(t, "ERR CONFIG SET failed (possibly related to argument 'dir') - can't set protected config", c.SetAs(false, []string{"dir", dir}).Error())
	sub := filepath.Join(dir, "sub")
	require.NoError(t, os.Mkdir(sub, 0o755))
	require.NoError(t, c.SetAs(true, []string{"dir", "sub"}))
	require.Equal(t, sub, c.String("dir"))
	err = c.SetAs(true, []string{"dir", "missing"})
	require.EqualError(t, err, "ERR CONFIG SET failed (possibly related to argument 'dir') - No such file or directory")
	require.NoError(t, c.SetAs(true, []string{"dbfilename", "x.rdb"}))
	require.EqualError(t, c.SetAs(true, []string{"dbfilename", "a/b"}),
		"ERR CONFIG SET failed (possibly related to argument 'dbfilename') - dbfilename can't be a path, just a filename")
}

func TestOnChange(t *testing.T) {
	c := New()
	var calls []string
	c.OnChange("maxmemory", func(v string) error {
		calls = append(calls, "maxmemory="+v)
		return nil
	})
	c.OnChange("slave-priority", func(v string) error {
		calls = append(calls, "replica-priority="+v)
		return nil
	})
	c.OnChange("port", func(v string) error {
		calls = append(calls, "port="+v)
		if v == "1" {
			return errors.New("Unable to listen on this port. Check server logs.")
		}
		return nil
	})

	require.NoError(t, c.Set([]string{"maxmemory", "10", "replica-priority", "5"}))
	require.Equal(t, []string{"maxmemory=10", "replica-priority=5"}, calls)

	// Setting the current value does not run hooks.
	calls = nil
	require.NoError(t, c.Set([]string{"maxmemory", "10"}))
	require.Empty(t, calls)

	// A failing hook restores every value and re-runs the hooks that
	// already ran with the old values.
	calls = nil
	err := c.Set([]string{"maxmemory", "20", "port", "1"})
	require.EqualError(t, err, "ERR CONFIG SET failed (possibly related to argument 'port') - Unable to listen on this port. Check server logs.")
	require.Equal(t, []string{"maxmemory=20", "port=1", "maxmemory=10", "port=6379"}, calls)
	require.Equal(t, int64(10), c.Int("maxmemory"))
	require.Equal(t, int64(6379), c.Int("port"))

	// Hooks may read the configuration.
	c.OnChange("timeout", func(v string) error {
		require.Equal(t, v, c.String("timeout"))
		require.Len(t, c.Get("timeout"), 1)
		return nil
	})
	require.NoError(t, c.Set([]string{"timeout", "5"}))
	require.Panics(t, func() { c.OnChange("nope", func(string) error { return nil }) })
}

func TestConcurrentAccess(t *testing.T) {
	c := New()
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				_ = c.Int("maxclients")
				_ = c.Bool("appendonly")
				_ = c.Get("max*")
				_ = c.Strings("bind")
			}
		}()
	}
	for i := 0; i < 200; i++ {
		require.NoError(t, c.Set([]string{"maxclients", fmt.Sprint(100 + i), "appendonly", []string{"yes", "no"}[i%2]}))
	}
	close(stop)
	wg.Wait()
	require.Equal(t, int64(299), c.Int("maxclients"))
}

func TestParseArgs(t *testing.T) {
	cases := []struct {
		args []string
		want CommandLine
	}{
		{nil, CommandLine{}},
		{[]string{"/etc/redis.conf"}, CommandLine{File: "/etc/redis.conf"}},
		{[]string{"/etc/redis.conf", "--port", "7777"}, CommandLine{File: "/etc/redis.conf", Overrides: `port "7777" `}},
		{[]string{"--replicaof", "127.0.0.1", "8888"}, CommandLine{Overrides: `replicaof "127.0.0.1" "8888" `}},
		{[]string{"--save", "", "--port", "1"}, CommandLine{Overrides: "save \"\" \nport \"1\" "}},
		{[]string{"--save", "--port", "1"}, CommandLine{Overrides: "save \"\"\nport \"1\" "}},
		{[]string{"--port", "1", "--save"}, CommandLine{Overrides: "port \"1\" \nsave \"\""}},
		{[]string{"--requirepass", "--foo"}, CommandLine{Overrides: `requirepass "--foo" `}},
		{[]string{"--port 7777", "--maxmemory", "1\t2"}, CommandLine{Overrides: "port 7777 \nmaxmemory \"1\\t2\" "}},
		{[]string{"-"}, CommandLine{Stdin: true}},
		{[]string{"conf", "-"}, CommandLine{File: "conf", Stdin: true}},
		{[]string{"conf", "--port", "1", "-"}, CommandLine{File: "conf", Stdin: true, Overrides: `port "1" `}},
	}
	for _, tc := range cases {
		require.Equal(t, tc.want, ParseArgs(tc.args), "%q", tc.args)
	}
}

func TestAbsPath(t *testing.T) {
	require.Equal(t, "/etc/redis.conf", absPath("/tmp/a", "/etc/redis.conf"))
	require.Equal(t, "/tmp/a/redis.conf", absPath("/tmp/a", "redis.conf"))
	require.Equal(t, "/tmp/redis.conf", absPath("/tmp/a", "../redis.conf"))
	require.Equal(t, "/redis.conf", absPath("/tmp/a", "../../../redis.conf"))
	require.Equal(t, "/tmp/a/./x/../r.conf", absPath("/tmp/a", "./x/../r.conf"))
	require.Equal(t, "/tmp/a/r.conf", absPath("/tmp/a/", " r.conf "))
}

func TestLoadSyntax(t *testing.T) {
	c, err := loadString(t, `# comment
   # indented comment

PORT 7000
  maxmemory   1Gb
maxmemory-clients 5%
requirepass "a\x41b\"c d"
masteruser 'it\'s'
notify-keyspace-events "Ex"
appendonly YES
slave-priority 7
hash-max-ziplist-entries 77
replica-announce-ip ""
oom-score-adj-values "1 2 3"
client-output-buffer-limit replica 1mb 2mb 3 pubsub 1 2 3
latency-tracking-info-percentiles 1.5 99 99.999
shutdown-on-sigint save now
unixsocketperm 0700
slowlog-log-slower-than -1
bind 127.0.0.1
bind 127.0.0.2 ::1
list-max-ziplist-entries 5
lua-replicate-commands yes
rename-command KEYS ""
rename-command FLUSHALL MYFLUSH
user alice on >pw ~* +@all
hz 1000
expiry-zmq-endpoints tcp://a:1
expiry-zmq-endpoints "tcp://b:2" tcp://c:3
maxmemory 2mb
`)
	require.NoError(t, err)
	want := map[string]string{
		"port": "7000", "maxmemory": "2097152", "maxmemory-clients": "5%",
		"requirepass": `aAb"c d`, "masteruser": "it's", "notify-keyspace-events": "xE",
		"appendonly": "yes", "replica-priority": "7", "slave-priority": "7",
		"hash-max-listpack-entries": "77", "replica-announce-ip": "",
		"oom-score-adj-values":              "1 2 3",
		"client-output-buffer-limit":        "normal 0 0 0 slave 1048576 2097152 3 pubsub 1 2 3",
		"latency-tracking-info-percentiles": "1.5 99 99.999",
		"shutdown-on-sigint":                "save now",
		"unixsocketperm":                    "700",
		"slowlog-log-slower-than":           "-1",
		"bind":                              "127.0.0.2 ::1",
		"hz":                                "500",
		"expiry-zmq-endpoints":              "tcp://a:1 tcp://b:2 tcp://c:3",
	}
	for k, v := range want {
		require.Equal(t, v, c.String(k), k)
	}
	require.Equal(t, []Rename{{"KEYS", ""}, {"FLUSHALL", "MYFLUSH"}}, c.RenamedCommands())
	require.Equal(t, [][]string{{"alice", "on", ">pw", "~*", "+@all"}}, c.Users())
	require.Equal(t, []string{"tcp://a:1", "tcp://b:2", "tcp://c:3"}, c.Strings("expiry-zmq-endpoints"))
	require.Equal(t, int64(0o700), c.Int("unixsocketperm"))
}

func TestLoadSaveSemantics(t *testing.T) {
	cases := []struct{ content, want string }{
		{"port 1\n", "3600 1 300 100 60 10000"},
		{"save 10 1\nsave 20 2\n", "10 1 20 2"},
		{"save 20 2\nsave \"\"\n", ""},
		{"save \"\"\nsave 20 2\n", "20 2"},
		{"save 10 1 20 2\nsave 30 3\n", "10 1 20 2 30 3"},
		{"save \"10 1 20 2\"\n", "10 1 20 2"},
		{"save \" 5\" 1\n", "5 1"},
		{"save 5 +1\n", "5 1"},
	}
	for _, tc := range cases {
		c, err := loadString(t, tc.content)
		require.NoError(t, err, tc.content)
		require.Equal(t, tc.want, c.String("save"), tc.content)
	}
	c, err := loadString(t, "save 10 1\n", "--save", "20", "2")
	require.NoError(t, err)
	require.Equal(t, "10 1 20 2", c.String("save"))
	c, err = loadString(t, "save 10 1\n", "--save")
	require.NoError(t, err)
	require.Equal(t, "", c.String("save"))
}

func TestLoadNumbers(t *testing.T) {
	cases := []struct{ line, name, want string }{
		{"maxmemory k", "maxmemory", "0"},
		{"maxmemory 5B", "maxmemory", "5"},
		{"maxmemory 1k", "maxmemory", "1000"},
		{"maxmemory 1KB", "maxmemory", "1024"},
		{"maxmemory 3m", "maxmemory", "3000000"},
		{"maxmemory 3MB", "maxmemory", "3145728"},
		{"maxmemory 2g", "maxmemory", "2000000000"},
		{"maxmemory 18446744073709551615kb", "maxmemory", "18446744073709550592"},
		{"maxmemory 99999999999999999999", "maxmemory", "18446744073709551615"},
		{"maxmemory-clients 0%", "maxmemory-clients", "0"},
		{"maxmemory-clients 99999999999999999999", "maxmemory-clients", "1%"},
		{"hz 0", "hz", "1"},
		{"unixsocketperm 0777", "unixsocketperm", "777"},
		{"unixsocketperm \"\"", "unixsocketperm", "0"},
		{"replicaof 1.2.3.4 \" 5\"", "replicaof", "1.2.3.4 5"},
		{"slaveof NO ONE", "replicaof", ""},
		{"auto-aof-rewrite-min-size \"\"", "auto-aof-rewrite-min-size", "0"},
	}
	for _, tc := range cases {
		c, err := loadString(t, tc.line+"\n")
		require.NoError(t, err, tc.line)
		require.Equal(t, tc.want, c.String(tc.name), tc.line)
	}
	c, err := loadString(t, "maxmemory 99999999999999999999\n")
	require.NoError(t, err)
	require.Equal(t, int64(math.MaxInt64), c.Int("maxmemory"))
	require.Equal(t, uint64(math.MaxUint64), c.Uint("maxmemory"))
	c, err = loadString(t, "replicaof 10.0.0.1 6380\n")
	require.NoError(t, err)
	host, port, ok := c.ReplicaOf()
	require.True(t, ok)
	require.Equal(t, "10.0.0.1", host)
	require.Equal(t, 6380, port)
}

func TestLoadErrors(t *testing.T) {
	cases := []struct {
		content string
		line    int
		text    string
		reason  string
	}{
		{"port 7000\nfoo bar\n", 2, "foo bar", "Bad directive or wrong number of arguments"},
		{"# c\n\nappendonly maybe\n", 3, "appendonly maybe", "argument must be 'yes' or 'no'"},
		{"port 70000\n", 1, "port 70000", "argument must be between 0 and 65535 inclusive"},
		{"maxmemory-policy foo\n", 1, "maxmemory-policy foo", "argument(s) must be one of the following: volatile-lru, volatile-lfu, volatile-random, volatile-ttl, allkeys-lru, allkeys-lfu, allkeys-random, noeviction"},
		{"maxmemory 10x\n", 1, "maxmemory 10x", "argument must be a memory value"},
		{"port \"7000\n", 1, "port \"7000", "Unbalanced quotes in configuration line"},
		{"port 7000 7001\n", 1, "port 7000 7001", "wrong number of arguments"},
		{"save 10\n", 1, "save 10", "Invalid save parameters"},
		{"   PORT   7000   \n  \tfoo\n", 2, "foo", "Bad directive or wrong number of arguments"},
		{"port 1\r\nfoo\r\n", 2, "foo", "Bad directive or wrong number of arguments"},
		{"list-max-ziplist-entries\n", 1, "list-max-ziplist-entries", "Bad directive or wrong number of arguments"},
		{"foo.bar\n", 1, "foo.bar", "Module config specified without value"},
		{"sentinel monitor x\n", 1, "sentinel monitor x", "sentinel directive while not in sentinel mode"},
		{"dir /nonexistent-zredis\n", 1, "dir /nonexistent-zredis", "No such file or directory"},
		{"dir /etc/passwd\n", 1, "dir /etc/passwd", "Not a directory"},
		{"user a on\nuser a off\n", 2, "user a off", "Error in user declaration 'a': Duplicate user found. A user can only be defined once in config files"},
		{"shutdown-on-sigterm save nosave\n", 1, "shutdown-on-sigterm save nosave", "shutdown options SAVE and NOSAVE can't be used simultaneously"},
	}
	for _, tc := range cases {
		_, err := loadString(t, tc.content)
		var ce *Error
		require.ErrorAs(t, err, &ce, tc.content)
		require.Equal(t, tc.line, ce.Line, tc.content)
		require.Equal(t, tc.text, ce.Text, tc.content)
		require.Equal(t, tc.reason, ce.Reason, tc.content)
		require.False(t, ce.Logged)
		require.Equal(t, fmt.Sprintf("\n*** FATAL CONFIG FILE ERROR (Redis 7.0.15, %s) ***\nReading the configuration file, at line %d\n>>> '%s'\n%s", ce.File, tc.line, tc.text, tc.reason), err.Error())
	}

	_, err := loadString(t, "cluster-enabled yes\nreplicaof 1.2.3.4 5\n")
	require.EqualError(t, err, "\n*** FATAL CONFIG FILE ERROR (Redis 7.0.15) ***\nreplicaof directive not allowed in cluster mode")
	_, err = loadString(t, "logfile /nonexistent-zredis/dir/log\n")
	require.EqualError(t, err, "\n*** FATAL CONFIG FILE ERROR (Redis 7.0.15) ***\nCan't open the log file: No such file or directory")

	_, err = loadString(t, "port 1\nloadmodule /x/mod.so a b\n")
	var ce *Error
	require.ErrorAs(t, err, &ce)
	require.True(t, ce.Logged)
	require.Equal(t, 2, ce.Line)
	require.Equal(t, "Can't load module from /x/mod.so: modules are not supported", err.Error())

	_, err = loadString(t, "port 1\nfoo.bar 1\n")
	require.EqualError(t, err, "Module Configuration detected without loadmodule directive or no ApplyConfig call: aborting")

	_, err = Load("/nonexistent-zredis/redis.conf", "")
	require.EqualError(t, err, "Fatal error, can't open config file '/nonexistent-zredis/redis.conf': No such file or directory")

	// Overrides are appended after the file's content and a newline; their
	// arguments are quoted.
	_, err = loadString(t, "port 7000\n", "--foo", "bar")
	require.ErrorAs(t, err, &ce)
	require.Equal(t, 3, ce.Line)
	require.Equal(t, `foo "bar"`, ce.Text)
	_, err = loadString(t, "port 7000", "--port", "a'b\"c", "x")
	require.ErrorAs(t, err, &ce)
	require.Equal(t, 2, ce.Line)
	require.Equal(t, `port "a'b\"c" "x"`, ce.Text)
	require.Equal(t, "wrong number of arguments", ce.Reason)

	old := Banner
	Banner = "zredis 1.2.3"
	defer func() { Banner = old }()
	_, err = loadString(t, "foo\n")
	require.ErrorAs(t, err, &ce)
	require.True(t, strings.HasPrefix(err.Error(), "\n*** FATAL CONFIG FILE ERROR (zredis 1.2.3, "+ce.File+") ***\n"), err.Error())
}

func TestLoadInclude(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "sub", "conf.d"), 0o755))
	write := func(name, content string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644))
	}
	write("sub/inner.conf", "# inner\nport 7001\nmaxmemory 1mb\n")
	write("sub/mid.conf", "include sub/inner.conf\nport 7002\n")
	write("sub/conf.d/a.conf", "timeout 5\n")
	write("sub/conf.d/b.conf", "timeout 6\ntcp-keepalive 7\n")
	write("top.conf", "\n\ninclude sub/mid.conf\nport 7003\ninclude sub/conf.d/*.conf\ninclude sub/none/*.conf\n")
	c, err := LoadWith(LoadOptions{File: "top.conf", env: testEnv(dir)})
	require.NoError(t, err)
	require.Equal(t, "7003", c.String("port"))
	require.Equal(t, "1048576", c.String("maxmemory"))
	require.Equal(t, "6", c.String("timeout"))
	require.Equal(t, "7", c.String("tcp-keepalive"))
	require.Equal(t, filepath.Join(dir, "top.conf"), c.File())

	// Errors in included files carry that file's line numbers.
	write("sub/inner.conf", "# inner\nport 7001\nbadinsub x\n")
	_, err = LoadWith(LoadOptions{File: "top.conf", env: testEnv(dir)})
	var ce *Error
	require.ErrorAs(t, err, &ce)
	require.Equal(t, 3, ce.Line)
	require.Equal(t, "sub/inner.conf", ce.File)
	require.Equal(t, "badinsub x", ce.Text)

	// Relative includes follow the working directory, i.e. a preceding dir.
	write("sub/rel.conf", "hz 20\n")
	write("dir.conf", "dir sub\ninclude rel.conf\n")
	c, err = LoadWith(LoadOptions{File: "dir.conf", env: testEnv(dir)})
	require.NoError(t, err)
	require.Equal(t, "20", c.String("hz"))
	require.Equal(t, filepath.Join(dir, "sub"), c.String("dir"))

	write("missing.conf", "include nonexistent2.conf\n")
	_, err = LoadWith(LoadOptions{File: "missing.conf", env: testEnv(dir)})
	require.EqualError(t, err, "Fatal error, can't open config file 'nonexistent2.conf': No such file or directory")

	write("loop.conf", "include loop.conf\n")
	_, err = LoadWith(LoadOptions{File: "loop.conf", env: testEnv(dir)})
	require.Error(t, err)
}

func TestLoadStdin(t *testing.T) {
	dir := t.TempDir()
	e := testEnv(dir)
	e.readStdin = func() ([]byte, error) { return []byte("port 7100\nhz 20\n"), nil }
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.conf"), []byte("port 7000\ntimeout 3\n"), 0o644))
	cl := ParseArgs([]string{"a.conf", "--hz", "30", "-"})
	c, err := LoadWith(LoadOptions{File: cl.File, Stdin: cl.Stdin, Overrides: cl.Overrides, env: e})
	require.NoError(t, err)
	require.Equal(t, "7100", c.String("port"))
	require.Equal(t, "30", c.String("hz"))
	require.Equal(t, "3", c.String("timeout"))
}

func TestRenameCommand(t *testing.T) {
	known := map[string]bool{"keys": true, "flushall": true, "get": true}
	exists := func(n string) bool { return known[strings.ToLower(n)] }
	load := func(content string) error {
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, "r.conf"), []byte(content), 0o644))
		_, err := LoadWith(LoadOptions{File: "r.conf", CommandExists: exists, env: testEnv(dir)})
		return err
	}
	require.NoError(t, load("rename-command KEYS \"\"\nrename-command FLUSHALL keys\n"))
	err := load("rename-command FOOBAR x\n")
	var ce *Error
	require.ErrorAs(t, err, &ce)
	require.Equal(t, "No such command in rename-command", ce.Reason)
	err = load("rename-command keys get\n")
	require.ErrorAs(t, err, &ce)
	require.Equal(t, "Target command name already exists", ce.Reason)
	err = load("rename-command keys x\nrename-command keys y\n")
	require.ErrorAs(t, err, &ce)
	require.Equal(t, 2, ce.Line)
}

func TestLoadDebianConf(t *testing.T) {
	src, err := filepath.Abs("testdata/debian-redis.conf")
	require.NoError(t, err)
	e := testEnv(t.TempDir())
	// The file names /var/lib/redis and /var/log/redis/redis-server.log;
	// accept them without touching the system.
	realCheckDir := e.checkDir
	e.checkDir = func(p string) (string, error) {
		if p == "/var/lib/redis" {
			return p, nil
		}
		return realCheckDir(p)
	}
	var logChecked string
	e.checkLog = func(p string) error { logChecked = p; return nil }
	c, err := LoadWith(LoadOptions{File: src, env: e})
	require.NoError(t, err)
	require.Equal(t, "/var/log/redis/redis-server.log", logChecked)
	want := map[string]string{
		"bind": "127.0.0.1 -::1", "port": "6379", "daemonize": "yes",
		"pidfile": "/run/redis/redis-server.pid", "logfile": "/var/log/redis/redis-server.log",
		"dir": "/var/lib/redis", "databases": "16", "save": "3600 1 300 100 60 10000",
		"appendonly": "no", "notify-keyspace-events": "",
		"client-output-buffer-limit": "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60",
		"auto-aof-rewrite-min-size":  "67108864", "proc-title-template": "{title} {listen-addr} {server-mode}",
	}
	for k, v := range want {
		require.Equal(t, v, c.String(k), k)
	}
	// Apart from the lines it sets explicitly, everything is default.
	def := New()
	diff := []string{}
	for _, p := range c.Get("*") {
		if def.String(p.Name) != p.Value {
			diff = append(diff, p.Name)
		}
	}
	sort.Strings(diff)
	require.Equal(t, []string{"daemonize", "dir", "logfile", "pidfile"}, diff)
}

// A refused "user" line is echoed without its clear-text passwords.
func TestUserLinePasswordsNotEchoed(t *testing.T) {
	_, err := LoadWith(LoadOptions{Overrides: "user alice >s3cret '<old' on bad\n",
		ValidateUser: func(rules []string) (int, string) { return 0, "Syntax error" }})
	require.Error(t, err)
	require.NotContains(t, err.Error(), "s3cret")
	require.NotContains(t, err.Error(), "old")
	require.Contains(t, err.Error(), ">(redacted)")
}
