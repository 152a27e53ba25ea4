package tests

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Configuration end to end: config files with include, command-line
// overrides, the Debian redis.conf, fatal errors as redis-server prints
// them, --version, SIGTERM, CONFIG REWRITE across a restart.

// writeFile writes content to name in dir and returns the absolute path.
func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	return p
}

// configGetReply is the RESP2 reply of CONFIG GET for one parameter.
func configGetReply(name, value string) string {
	return fmt.Sprintf("*2\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n", len(name), name, len(value), value)
}

func TestConfigFileIncludeOverrides(t *testing.T) {
	dir := t.TempDir()
	inc := writeFile(t, dir, "inc.conf", `# included
hz 25
timeout 9
tcp-keepalive 120
databases 4
`)
	main := writeFile(t, dir, "main.conf", `# main file
hz 15
timeout 7
maxclients 123

include `+inc+`
  databases 8
maxmemory 10mb
client-query-buffer-limit 2gb
dbfilename "my dump.rdb"
Maxmemory-Policy allkeys-lru
`)
	args := []string{main, "--hz", "30", "--maxclients", "77"}
	want := []struct{ name, value string }{
		{"hz", "30"},              // command line over file and include
		{"timeout", "9"},          // include after the file's line
		{"databases", "8"},        // file's line after the include
		{"tcp-keepalive", "120"},  // only in the include
		{"maxclients", "77"},      // command line over file
		{"maxmemory", "10485760"}, // units
		{"client-query-buffer-limit", "2147483648"},
		{"dbfilename", "my dump.rdb"},       // quoted value
		{"maxmemory-policy", "allkeys-lru"}, // directive names ignore case
		{"proto-max-bulk-len", "536870912"}, // default
		{"port", ""},                        // checked below: the harness's port
	}
	check := func(t *testing.T, p *Proc) {
		c := Dial(t, p.Addr)
		for _, w := range want {
			if w.name == "port" {
				w.value = fmt.Sprint(p.Port)
			}
			assert.Equal(t, configGetReply(w.name, w.value), c.Do("CONFIG", "GET", w.name), "CONFIG GET %s", w.name)
		}
	}
	t.Run("zredis", func(t *testing.T) { check(t, StartZredis(t, args...)) })
	t.Run("redis", func(t *testing.T) { check(t, StartRedis(t, args...)) })
}

// debianConf is Debian's /etc/redis/redis.conf when installed, else the
// copy kept with the config package's test data.
func debianConf(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"/etc/redis/redis.conf", "../config/testdata/debian-redis.conf"} {
		if _, err := os.Stat(p); err == nil {
			abs, err := filepath.Abs(p)
			require.NoError(t, err)
			return abs
		}
	}
	t.Fatal("neither /etc/redis/redis.conf nor config/testdata/debian-redis.conf (kept in the repository) exists")
	return ""
}

// debianOverrides keep the Debian file's server in the foreground, without
// pid or log file; the harness adds port, bind and dir.
var debianOverrides = []string{"--daemonize", "no", "--pidfile", "", "--logfile", ""}

func TestConfigDebianFile(t *testing.T) {
	file := debianConf(t)
	p := StartZredis(t, append([]string{file}, debianOverrides...)...)
	c := Dial(t, p.Addr)
	assert.Equal(t, "+PONG\r\n", c.Do("PING"))
	for _, w := range []struct{ name, value string }{
		{"databases", "16"}, {"tcp-keepalive", "300"}, {"hz", "10"}, {"daemonize", "no"},
		{"dbfilename", "dump.rdb"}, {"appendonly", "no"}, {"appendfilename", "appendonly.aof"},
		{"maxclients", "10000"}, {"logfile", ""}, {"pidfile", ""},
	} {
		assert.Equal(t, configGetReply(w.name, w.value), c.Do("CONFIG", "GET", w.name), "CONFIG GET %s", w.name)
	}
}

// TestConfigDebianFileMatchesRedis compares CONFIG GET for every directive
// the Debian file sets between zredis and redis-server loaded with it.
func TestConfigDebianFileMatchesRedis(t *testing.T) {
	file := debianConf(t)
	args := append([]string{file}, debianOverrides...)
	r := StartRedis(t, args...)
	z := StartZredis(t, args...)
	zc, rc := Dial(t, z.Addr), Dial(t, r.Addr)

	f, err := os.Open(file)
	require.NoError(t, err)
	defer f.Close()
	skip := map[string]bool{"port": true, "bind": true, "dir": true, "include": true}
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		name := strings.ToLower(fields[0])
		if skip[name] || seen[name] {
			continue
		}
		seen[name] = true
		diffCases.Add(1)
		zr, rr := zc.Do("CONFIG", "GET", name), rc.Do("CONFIG", "GET", name)
		assert.Equal(t, rr, zr, "CONFIG GET %s", name)
	}
	require.NoError(t, sc.Err())
	require.NotEmpty(t, seen)
}

// runToExit runs bin with args to its exit (killed after 15 s) in a temp
// directory and returns its output and exit code.
func runToExit(t *testing.T, bin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = t.TempDir()
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%s %q did not exit within 15 s\nstdout: %s\nstderr: %s", bin, args, o.String(), e.String())
	}
	if err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			t.Fatal(err)
		}
	}
	return o.String(), e.String(), cmd.ProcessState.ExitCode()
}

var fatalBanner = regexp.MustCompile(`^\*\*\* FATAL CONFIG FILE ERROR \(.+\) \*\*\*$`)

// fatalBlock returns the lines of the FATAL CONFIG FILE ERROR block in
// out, with the banner (which names the server and version) replaced by
// a placeholder.
func fatalBlock(out string) []string {
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	for i, l := range lines {
		if fatalBanner.MatchString(l) {
			block := append([]string{"*** FATAL CONFIG FILE ERROR (...) ***"}, lines[i+1:]...)
			return block
		}
	}
	return nil
}

func TestConfigFatalErrors(t *testing.T) {
	dir := t.TempDir()
	inc := writeFile(t, dir, "bad-inc.conf", "port 6390\nmaxclients abc\n")
	cases := []struct {
		name  string
		file  string // config file content; "" for none
		extra []string
		want  []string // the lines after the banner, as redis-server 7.0.15 prints them
	}{
		{"unknown directive", "# comment\nport 6390\nno-such-directive yes\n", nil,
			[]string{"Reading the configuration file, at line 3", ">>> 'no-such-directive yes'", "Bad directive or wrong number of arguments"}},
		{"not an integer", "port 6390\nmaxclients abc\n", nil,
			[]string{"Reading the configuration file, at line 2", ">>> 'maxclients abc'", "argument couldn't be parsed into an integer"}},
		{"not a bool", "appendonly maybe\n", nil,
			[]string{"Reading the configuration file, at line 1", ">>> 'appendonly maybe'", "argument must be 'yes' or 'no'"}},
		{"out of range", "port 99999\n", nil,
			[]string{"Reading the configuration file, at line 1", ">>> 'port 99999'", "argument must be between 0 and 65535 inclusive"}},
		{"bad enum", "loglevel loud\n", nil,
			[]string{"Reading the configuration file, at line 1", ">>> 'loglevel loud'", "argument(s) must be one of the following: debug, verbose, notice, warning"}},
		{"bad memory value", "maxmemory 10xb\n", nil,
			[]string{"Reading the configuration file, at line 1", ">>> 'maxmemory 10xb'", "argument must be a memory value"}},
		{"below minimum", "client-query-buffer-limit 100kb\n", nil,
			[]string{"Reading the configuration file, at line 1", ">>> 'client-query-buffer-limit 100kb'", "argument must be between 1048576 and 9223372036854775807 inclusive"}},
		{"missing argument", "hz\n", nil,
			[]string{"Reading the configuration file, at line 1", ">>> 'hz'", "wrong number of arguments"}},
		{"unbalanced quotes", "bind \"unterminated\n", nil,
			[]string{"Reading the configuration file, at line 1", ">>> 'bind \"unterminated'", "Unbalanced quotes in configuration line"}},
		{"error in an included file", "# top\nhz 20\ninclude " + inc + "\n", nil,
			[]string{"Reading the configuration file, at line 2", ">>> 'maxclients abc'", "argument couldn't be parsed into an integer"}},
		{"error on the command line", "", []string{"--maxclients", "abc"},
			[]string{"Reading the configuration file, at line 3", ">>> 'maxclients \"abc\"'", "argument couldn't be parsed into an integer"}},
		{"rename of an unknown command", "rename-command NOSUCH foo\n", nil,
			[]string{"Reading the configuration file, at line 1", ">>> 'rename-command NOSUCH foo'", "No such command in rename-command"}},
		{"rename onto a command's name", "rename-command GET SET\n", nil,
			[]string{"Reading the configuration file, at line 1", ">>> 'rename-command GET SET'", "Target command name already exists"}},
		{"rename of a removed command", "rename-command FLUSHALL \"\"\nrename-command FLUSHALL x\n", nil,
			[]string{"Reading the configuration file, at line 2", ">>> 'rename-command FLUSHALL x'", "No such command in rename-command"}},
		{"bad override after a good file", "hz 20\n", []string{"--no-such", "yes"},
			[]string{"Reading the configuration file, at line 4", ">>> 'no-such \"yes\"'", "Bad directive or wrong number of arguments"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// --port 0 keeps a wrongly accepted configuration off the network.
			args := []string{"--port", "0"}
			if tc.file != "" {
				args = append([]string{writeFile(t, t.TempDir(), "bad.conf", tc.file)}, args...)
			}
			args = append(args, tc.extra...)
			want := append([]string{"*** FATAL CONFIG FILE ERROR (...) ***"}, tc.want...)

			_, stderr, code := runToExit(t, zredisBin, args...)
			assert.Equal(t, 1, code, "zredis exit code")
			assert.Equal(t, want, fatalBlock(stderr), "zredis stderr:\n%s", stderr)

			bin := RequireRedis(t)
			diffCases.Add(1)
			_, rerr, rcode := runToExit(t, bin, args...)
			assert.Equal(t, 1, rcode, "redis-server exit code")
			assert.Equal(t, want, fatalBlock(rerr), "redis-server stderr (the table is wrong):\n%s", rerr)
		})
	}
}

// TestConfigMissingFile: a config file or include that cannot be opened
// is fatal, with Redis's message (a log line on standard output).
func TestConfigMissingFile(t *testing.T) {
	inc := writeFile(t, t.TempDir(), "inc.conf", "include /nonexistent/zredis-test.conf\n")
	for _, args := range [][]string{
		{"/nonexistent/zredis-test.conf", "--port", "0"},
		{inc, "--port", "0"},
	} {
		want := "# Fatal error, can't open config file '/nonexistent/zredis-test.conf': No such file or directory"
		stdout, stderr, code := runToExit(t, zredisBin, args...)
		assert.Equal(t, 1, code, "zredis %q exit code", args)
		assert.Contains(t, stdout+stderr, want, "zredis %q", args)
		diffCases.Add(1)
		stdout, stderr, code = runToExit(t, RequireRedis(t), args...)
		assert.Equal(t, 1, code, "redis-server %q exit code", args)
		assert.Contains(t, stdout+stderr, want, "redis-server %q", args)
	}
}

func TestVersionFlag(t *testing.T) {
	for _, flag := range []string{"--version", "-v"} {
		stdout, _, code := runToExit(t, zredisBin, flag)
		assert.Equal(t, 0, code, flag)
		assert.Regexp(t, `v=\d+\.\d+\.\d+`, stdout, flag)
	}
}

func TestSignalsExitZero(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			p := StartZredis(t)
			c := Dial(t, p.Addr)
			require.Equal(t, "+OK\r\n", c.Do("SET", "k", "v"))
			require.NoError(t, p.Signal(sig))
			code, ok := p.Wait(15 * time.Second)
			require.True(t, ok, "no exit after %v", sig)
			assert.Equal(t, 0, code, "exit code after %v\n%s", sig, p.Output())
		})
	}
}

func TestConfigRewrite(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "rw.conf", "# my comment\nhz 15\nmaxclients 100\ntimeout 0\n")
	p := StartZredis(t, file)
	c := Dial(t, p.Addr)
	require.Equal(t, "+OK\r\n", c.Do("CONFIG", "SET", "maxclients", "200"))
	require.Equal(t, "+OK\r\n", c.Do("CONFIG", "SET", "maxmemory", "64mb"))
	require.Equal(t, "+OK\r\n", c.Do("CONFIG", "SET", "tcp-keepalive", "60"))
	require.Equal(t, "+OK\r\n", c.Do("CONFIG", "REWRITE"))

	b, err := os.ReadFile(file)
	require.NoError(t, err)
	lines := strings.Split(string(b), "\n")
	// As in Redis: lines of the file are rewritten in place, comments
	// kept, new settings appended after a marker.
	require.GreaterOrEqual(t, len(lines), 4, "%s", b)
	assert.Equal(t, []string{"# my comment", "hz 15", "maxclients 200", "timeout 0"}, lines[:4], "%s", b)
	assert.Contains(t, lines, "# Generated by CONFIG REWRITE", "%s", b)
	assert.Contains(t, lines, "maxmemory 64mb", "%s", b)
	assert.Contains(t, lines, "tcp-keepalive 60", "%s", b)

	p.Stop()
	p2 := StartZredis(t, file)
	c2 := Dial(t, p2.Addr)
	assert.Equal(t, configGetReply("maxclients", "200"), c2.Do("CONFIG", "GET", "maxclients"))
	assert.Equal(t, configGetReply("maxmemory", "67108864"), c2.Do("CONFIG", "GET", "maxmemory"))
	assert.Equal(t, configGetReply("tcp-keepalive", "60"), c2.Do("CONFIG", "GET", "tcp-keepalive"))
	assert.Equal(t, configGetReply("hz", "15"), c2.Do("CONFIG", "GET", "hz"))
}

// rename-command, from the configuration file as redis-server applies
// it: the command answers to its new name only, an empty name removes
// it, and the command keeps its full name where Redis shows it (COMMAND
// INFO, INFO commandstats).
func TestRenameCommand(t *testing.T) {
	conf := "rename-command FLUSHALL \"\"\nrename-command config my-config\nrename-command Set put\n"
	replies := map[string][]string{}
	for _, name := range []string{"zredis", "redis"} {
		path := writeFile(t, t.TempDir(), "r.conf", conf)
		var p *Proc
		if name == "zredis" {
			p = StartZredis(t, path)
		} else {
			p = StartRedis(t, path)
			diffCases.Add(1)
		}
		c := Dial(t, p.Addr)
		for _, args := range [][]string{
			{"FLUSHALL"}, {"flushall", "async"}, {"CONFIG", "GET", "maxmemory"}, {"SET", "k", "v"},
			{"MY-CONFIG", "GET", "maxmemory"}, {"PUT", "k", "v"}, {"GET", "k"},
			{"MULTI"}, {"put", "k2", "v2"}, {"set", "k3", "v3"}, {"EXEC"},
			{"COMMAND", "INFO", "put"}, {"COMMAND", "INFO", "set", "flushall"},
			{"COMMAND", "GETKEYS", "put", "a", "b"},
		} {
			replies[name] = append(replies[name], c.Do(args...))
		}
		stats := c.Do("INFO", "commandstats")
		assert.Contains(t, stats, "cmdstat_set:calls=1,", name)
		assert.Contains(t, stats, "cmdstat_config|get:calls=1,", name)
		assert.NotContains(t, stats, "cmdstat_flushall", name)
	}
	if len(replies["redis"]) > 0 {
		assert.Equal(t, replies["redis"], replies["zredis"])
	}
	assert.Equal(t, "-ERR unknown command 'FLUSHALL', with args beginning with: \r\n", replies["zredis"][0])
	assert.Equal(t, "+OK\r\n", replies["zredis"][5])
}

// Where the server listens, as in Redis 7.0: bind "" or port 0 leaves
// nothing to listen on and the server does not start; CONFIG SET bind
// really rebinds, and a value that cannot be bound is refused with the old
// listeners kept, so that CONFIG REWRITE never writes it.
func TestBindAndPort(t *testing.T) {
	for _, args := range [][]string{
		{"--bind", "", "--port", strconv.Itoa(FreePort(t))},
		{"--port", "0"},
	} {
		stdout, stderr, code := runToExit(t, zredisBin, args...)
		assert.Equal(t, 1, code, "%q", args)
		assert.Contains(t, stdout+stderr, "Configured to not listen anywhere, exiting.", "%q", args)
		diffCases.Add(1)
		rout, rerr, rcode := runToExit(t, RequireRedis(t), args...)
		assert.Equal(t, 1, rcode, "redis-server %q", args)
		assert.Contains(t, rout+rerr, "Configured to not listen anywhere, exiting.", "redis-server %q", args)
	}

	onBoth(t, func(t *testing.T, p *Proc) {
		c := Dial(t, p.Addr)
		before := c.Do("CONFIG", "GET", "bind")
		failed := "-ERR CONFIG SET failed (possibly related to argument 'bind') - Failed to bind to specified addresses.\r\n"
		// An address of no interface here (binding it sends nothing).
		assert.Equal(t, failed, c.Do("CONFIG", "SET", "bind", "127.0.0.1 10.99.99.99"))
		if p.Name == "zredis" {
			// A value that is no address at all, with a line break a
			// CONFIG REWRITE would have written as a line of its own
			// (redis-server would look the name up: not tried on it).
			assert.Equal(t, failed, c.Do("CONFIG", "SET", "bind", "127.0.0.1\nuser admin on nopass"))
		}
		assert.Equal(t, before, c.Do("CONFIG", "GET", "bind"), "the old value stays")
		assert.Equal(t, "+PONG\r\n", Dial(t, p.Addr).Do("PING"), "the old listener is kept")
		port := p.Addr[strings.LastIndexByte(p.Addr, ':')+1:]
		assert.Equal(t, "+OK\r\n", c.Do("CONFIG", "SET", "bind", "127.0.0.2"))
		assert.Equal(t, "+PONG\r\n", Dial(t, "127.0.0.2:"+port).Do("PING"))
		_, err := net.DialTimeout("tcp", p.Addr, time.Second)
		assert.Error(t, err, "127.0.0.1 no longer listened on")
		assert.Equal(t, "+PONG\r\n", c.Do("PING"), "connections stay")
		// Port 0 closes the TCP listeners, as changeListenPort does.
		assert.Equal(t, "+OK\r\n", c.Do("CONFIG", "SET", "port", "0"))
		_, err = net.DialTimeout("tcp", "127.0.0.2:"+port, time.Second)
		assert.Error(t, err)
		assert.Equal(t, "+PONG\r\n", c.Do("PING"))
	})
}

// unixsocket and unixsocketperm, as redis-server 7.0: the socket replaces a
// file left at its path, has the mode asked for, names its clients by its
// path (CLIENT LIST flag U, MONITOR "unix:path"), is not subject to
// protected mode, and is removed at exit.
func TestUnixSocket(t *testing.T) {
	for _, name := range []string{"zredis", "redis"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.sock")
			require.NoError(t, os.WriteFile(path, []byte("stale"), 0o644))
			var p *Proc
			args := []string{"--unixsocket", path, "--unixsocketperm", "700"}
			if name == "zredis" {
				p = StartZredis(t, args...)
			} else {
				p = StartRedis(t, args...)
				diffCases.Add(1)
			}
			st, err := os.Stat(path)
			require.NoError(t, err)
			assert.Equal(t, os.ModeSocket|0o700, st.Mode()&(os.ModeSocket|os.ModePerm))

			nc, err := net.Dial("unix", path)
			require.NoError(t, err)
			t.Cleanup(func() { nc.Close() })
			c := &Conn{t: t, nc: nc, rd: bufio.NewReader(nc)}
			assert.Equal(t, "+PONG\r\n", c.Do("PING"))
			info := c.Do("CLIENT", "INFO")
			assert.Contains(t, info, " addr="+path+":0 laddr="+path+":0 ")
			assert.Contains(t, info, " flags=U ")

			mon := Dial(t, p.Addr)
			mon.Send(Encode("MONITOR"))
			require.Equal(t, "+OK\r\n", mon.Read())
			c.Do("SET", "k", "v")
			assert.Regexp(t, `^\+\d+\.\d{6} \[0 unix:`+regexp.QuoteMeta(path)+`\] "SET" "k" "v"\r\n$`, mon.Read())

			p.Stop()
			_, err = os.Stat(path)
			assert.True(t, os.IsNotExist(err), "the socket file is removed at exit: %v", err)
			assert.Contains(t, p.Output(), "Removing the unix socket file.")
		})
	}
}

// TestConfigSetPortErrorsDiff: CONFIG SET port (and tls-port) answers
// redis-server 7.0's texts: updatePort's "Unable to listen on this
// port" when the port is taken, applyTLSPort's "Unable to update TLS
// configuration" with TLS not configured, the parse and range errors of
// an invalid value; the old port stays bound and configured.
func TestConfigSetPortErrorsDiff(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer taken.Close()
	busy := strconv.Itoa(taken.Addr().(*net.TCPAddr).Port)
	sameOnBoth(t, nil, func(t *testing.T, p *Proc) []string {
		c := Dial(t, p.Addr)
		var obs []string
		for _, args := range [][]string{
			{"port", busy}, {"port", "abc"}, {"port", "70000"}, {"port", "-1"}, {"port", ""}, {"port", "0x10"},
			{"tls-port", busy}, {"port", busy, "bind", "127.0.0.1"}, {"bind", "10.99.99.99", "port", busy},
			{"port", busy, "maxclients", "100"},
		} {
			obs = append(obs, c.Do(append([]string{"CONFIG", "SET"}, args...)...))
		}
		obs = append(obs, c.Do("CONFIG", "GET", "maxclients"), c.Do("CONFIG", "GET", "bind"))
		port := p.Addr[strings.LastIndexByte(p.Addr, ':')+1:]
		assert.Equal(t, "*2\r\n$4\r\nport\r\n$"+strconv.Itoa(len(port))+"\r\n"+port+"\r\n", c.Do("CONFIG", "GET", "port"))
		return append(obs, Dial(t, p.Addr).Do("PING"))
	})
}
