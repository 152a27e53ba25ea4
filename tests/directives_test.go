package tests

// Directives that protect or run the process, end to end against the real
// binary and, where it can be compared, redis-server 7.0: a value zredis
// refuses stops the start (tls-cluster yes without a tls-port in cluster
// mode), pidfile, daemonize, supervised systemd, oom-score-adj,
// min-replicas-to-write (NOREPLICAS with no replica), and the databases
// bound of the expiry stream.

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/zredis/zredis/internal/testsupport"
)

// runMerged is runToExit with stdout and stderr together.
func runMerged(t *testing.T, bin string, args ...string) (int, string) {
	t.Helper()
	o, e, code := runToExit(t, bin, args...)
	return code, o + e
}

// A configuration asking for a TLS cluster bus without a TLS port stops
// zredis's start with the line and the reason (redis-server would
// announce port 0). Without cluster mode, tls-cluster yes still wants
// TLS configured, and without a certificate neither server starts.
func TestTLSClusterWithoutTLSPortRefused(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "cluster.conf")
	port := strconv.Itoa(FreePort(t))
	require.NoError(t, os.WriteFile(file, []byte("port "+port+"\nbind 127.0.0.1\ndir "+dir+"\ncluster-enabled yes\ntls-cluster yes\n"), 0o644))
	code, out := runMerged(t, zredisBin, file)
	assert.Equal(t, 1, code, out)
	assert.Contains(t, out, "*** FATAL CONFIG FILE ERROR (zredis ")
	assert.Contains(t, out, "tls-cluster yes needs a tls-port in cluster mode")

	for _, bin := range []string{zredisBin, RequireRedis(t)} {
		code, out = runMerged(t, bin, file, "--cluster-enabled", "no")
		assert.Equal(t, 1, code, out)
		assert.Contains(t, out, "Failed to configure TLS. Check logs for more info.", bin)
	}
}

// aof-disable-auto-gc yes keeps the files each rewrite turns into
// history, listed as such in the manifest; CONFIG SET aof-disable-auto-gc
// no deletes them at once, as redis-server does.
func TestAOFDisableAutoGCDiff(t *testing.T) {
	type state struct{ kept, after string }
	got := map[string]state{}
	onBothConfigured(t, []string{"--appendonly", "yes", "--aof-disable-auto-gc", "yes"}, func(t *testing.T, p *Proc) {
		c := Dial(t, p.Addr)
		aofDir := filepath.Join(p.Dir, "appendonlydir")
		manifest := func() string {
			raw, err := os.ReadFile(filepath.Join(aofDir, "appendonly.aof.manifest"))
			require.NoError(t, err)
			return string(raw)
		}
		files := func() string {
			ents, err := os.ReadDir(aofDir)
			require.NoError(t, err)
			var names []string
			for _, e := range ents {
				names = append(names, e.Name())
			}
			return strings.Join(names, " ")
		}
		for i, key := range []string{"a", "b"} {
			require.Equal(t, "+OK\r\n", c.Do("SET", key, "1"))
			require.Equal(t, "+Background append only file rewriting started\r\n", c.Do("BGREWRITEAOF"))
			want := "seq " + strconv.Itoa(i+2) + " type b"
			require.Eventually(t, func() bool { return strings.Contains(manifest(), want) }, 30*time.Second, 20*time.Millisecond)
		}
		require.Eventually(t, func() bool { return !strings.Contains(c.Do("INFO", "persistence"), "aof_rewrite_in_progress:1") },
			30*time.Second, 20*time.Millisecond)
		kept := files() + "\n" + manifest()
		assert.Contains(t, kept, "file appendonly.aof.1.base.rdb seq 1 type h")
		require.Equal(t, "+OK\r\n", c.Do("CONFIG", "SET", "aof-disable-auto-gc", "no"))
		require.Eventually(t, func() bool { return !strings.Contains(manifest(), "type h") }, 30*time.Second, 20*time.Millisecond)
		require.Eventually(t, func() bool { return !strings.Contains(files(), ".1.") }, 30*time.Second, 20*time.Millisecond)
		got[p.Name] = state{kept, files() + "\n" + manifest()}
	})
	if _, ok := got["redis"]; ok {
		diffCases.Add(1)
		assert.Equal(t, got["redis"], got["zredis"])
	}
}

// More databases than an expiry message can name stop the start while
// the expiry stream is on.
func TestExpiryDatabasesBound(t *testing.T) {
	port := strconv.Itoa(FreePort(t))
	zmq := "tcp://127.0.0.1:" + strconv.Itoa(FreePort(t))
	code, out := runMerged(t, zredisBin, "--port", port, "--bind", "127.0.0.1", "--databases", "65537", "--expiry-zmq-endpoints", zmq)
	assert.Equal(t, 1, code, out)
	assert.Contains(t, out, ">>> 'databases \"65537\"'")
	assert.Contains(t, out, "databases must be at most 65536")
	p := StartZredis(t, "--databases", "65536", "--expiry-zmq-endpoints", zmq)
	assert.Equal(t, "+OK\r\n", Dial(t, p.Addr).Do("SELECT", "65535"))
}

// pidfile holds the server's pid while it runs and is removed when it
// exits, as redis-server does.
func TestPidfileDiff(t *testing.T) {
	for _, name := range []string{"zredis", "redis"} {
		t.Run(name, func(t *testing.T) {
			pidPath := filepath.Join(t.TempDir(), "server.pid")
			p := StartServer(t, name, "--pidfile", pidPath)
			raw, err := os.ReadFile(pidPath)
			require.NoError(t, err)
			assert.Equal(t, strconv.Itoa(p.Pid())+"\n", string(raw))
			c := Dial(t, p.Addr)
			c.Send(Encode("SHUTDOWN", "NOSAVE"))
			c.ReadErr(10 * time.Second)
			_, ok := p.Wait(15 * time.Second)
			require.True(t, ok)
			_, err = os.Stat(pidPath)
			assert.True(t, os.IsNotExist(err), "pid file removed at exit")
			assert.Contains(t, p.Output(), "Removing the pid file.")
		})
	}
}

// daemonize yes: the command returns at once with status 0, a detached
// process (its own session) serves, writes the pid file and removes it
// when it shuts down, as redis-server's forked child does.
func TestDaemonizeDiff(t *testing.T) {
	for _, name := range []string{"zredis", "redis"} {
		t.Run(name, func(t *testing.T) {
			bin := serverBin(t, name)
			dir := t.TempDir()
			pidPath := filepath.Join(dir, "d.pid")
			port := FreePort(t)
			conf := filepath.Join(dir, "d.conf")
			require.NoError(t, os.WriteFile(conf, []byte("daemonize yes\npidfile "+pidPath+"\nlogfile "+filepath.Join(dir, "d.log")+
				"\nport "+strconv.Itoa(port)+"\nbind 127.0.0.1\nsave \"\"\ndir "+dir+"\n"), 0o644))
			code, out := runMerged(t, bin, conf)
			require.Equal(t, 0, code, out)
			var pid int
			require.Eventually(t, func() bool {
				raw, err := os.ReadFile(pidPath)
				if err != nil {
					return false
				}
				pid, err = strconv.Atoi(strings.TrimSpace(string(raw)))
				return err == nil
			}, 30*time.Second, 20*time.Millisecond)
			t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
			assert.Equal(t, pid, sessionOf(t, pid), "the server leads its own session")
			addr := "127.0.0.1:" + strconv.Itoa(port)
			require.Eventually(t, func() bool {
				nc, err := net.Dial("tcp", addr)
				if err == nil {
					nc.Close()
				}
				return err == nil
			}, 30*time.Second, 20*time.Millisecond)
			c := Dial(t, addr)
			require.Equal(t, "+PONG\r\n", c.Do("PING"))
			c.Send(Encode("SHUTDOWN", "NOSAVE"))
			c.ReadErr(10 * time.Second)
			require.Eventually(t, func() bool {
				_, err := os.Stat(pidPath)
				return os.IsNotExist(err)
			}, 30*time.Second, 20*time.Millisecond, "pid file removed at exit")
			log, err := os.ReadFile(filepath.Join(dir, "d.log"))
			require.NoError(t, err)
			assert.Contains(t, string(log), "Removing the pid file.")
		})
	}
}

// sessionOf is the session id of process pid (/proc/<pid>/stat's sixth
// field, after the parenthesised command name).
func sessionOf(t *testing.T, pid int) int {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	require.NoError(t, err)
	s := string(raw)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	sid, err := strconv.Atoi(f[3])
	require.NoError(t, err)
	return sid
}

// supervised systemd: READY=1 (with a STATUS line) reaches $NOTIFY_SOCKET
// once the server accepts connections, and STOPPING=1 when it shuts down,
// as from redis-server.
func TestSupervisedSystemdDiff(t *testing.T) {
	msgs := map[string][]string{}
	for _, name := range []string{"zredis", "redis"} {
		t.Run(name, func(t *testing.T) {
			bin := serverBin(t, name)
			dir := t.TempDir()
			sockPath := filepath.Join(dir, "notify")
			sock, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sockPath, Net: "unixgram"})
			require.NoError(t, err)
			defer sock.Close()
			// Not waiting for PING: READY=1 must come first.
			p := testsupport.Start(t, testsupport.Options{Name: name, Bin: bin, Args: []string{"--save", "", "--dir", dir, "--supervised", "systemd"},
				Env: []string{"NOTIFY_SOCKET=" + sockPath}, NoWait: true})
			var got []string
			read := func(until string) {
				buf := make([]byte, 4096)
				for {
					sock.SetReadDeadline(time.Now().Add(10 * time.Second))
					n, err := sock.Read(buf)
					require.NoError(t, err, "after %q", got)
					got = append(got, string(buf[:n]))
					if strings.Contains(string(buf[:n]), until) {
						return
					}
				}
			}
			read("READY=1")
			c := Dial(t, p.Addr)
			require.Equal(t, "+PONG\r\n", c.Do("PING"), "ready means accepting connections")
			assert.Contains(t, c.Do("INFO", "server"), "process_supervised:systemd\r\n")
			// STOPPING=1 as the shutdown starts, then the final save's status.
			c.Send(Encode("SHUTDOWN", "SAVE"))
			read("STATUS=Saving the final RDB snapshot")
			msgs[name] = got
		})
	}
	if msgs["redis"] == nil {
		return
	}
	// The loading STATUS names the product; the rest is the same.
	norm := func(ms []string) string {
		return strings.ReplaceAll(strings.Join(ms, ""), "STATUS=Redis is loading...", "STATUS=zredis is loading...")
	}
	diffCases.Add(1)
	assert.Equal(t, norm(msgs["redis"]), norm(msgs["zredis"]))
}

// oom-score-adj writes /proc/<pid>/oom_score_adj from oom-score-adj-values
// at start and on CONFIG SET, relative to the score the process started
// with, and puts that score back with "no", as redis-server does.
func TestOOMScoreAdjDiff(t *testing.T) {
	scores := map[string][]string{}
	onBothConfigured(t, []string{"--oom-score-adj", "relative", "--oom-score-adj-values", "15 200 800"}, func(t *testing.T, p *Proc) {
		path := "/proc/" + strconv.Itoa(p.Pid()) + "/oom_score_adj"
		read := func() string {
			raw, err := os.ReadFile(path)
			require.NoError(t, err)
			return strings.TrimSpace(string(raw))
		}
		c := Dial(t, p.Addr)
		got := []string{read()}
		got = append(got, c.Do("CONFIG", "SET", "oom-score-adj-values", "30 200 800"), read())
		got = append(got, c.Do("CONFIG", "SET", "oom-score-adj", "absolute"), read())
		got = append(got, c.Do("CONFIG", "SET", "oom-score-adj", "no"), read())
		got = append(got, c.Do("CONFIG", "SET", "oom-score-adj-values", "1 2"), read())
		scores[p.Name] = got
	})
	if scores["redis"] != nil {
		assert.Equal(t, scores["redis"], scores["zredis"])
	}
}

// min-replicas-to-write with no replica connected refuses every write
// (and EXEC of queued writes) with NOREPLICAS, as redis-server does; reads
// go on, and min-replicas-max-lag 0 turns the check off.
func TestNoReplicasDiff(t *testing.T) {
	replies := map[string][]string{}
	onBothConfigured(t, []string{"--min-replicas-to-write", "1"}, func(t *testing.T, p *Proc) {
		c := Dial(t, p.Addr)
		other := Dial(t, p.Addr)
		var got []string
		do := func(args ...string) { got = append(got, c.Do(args...)) }
		do("SET", "k", "v")
		do("GET", "k")
		do("PING")
		do("DEL", "k")
		do("MULTI")
		do("SET", "k", "v")
		do("GET", "k")
		do("EXEC")
		do("CONFIG", "SET", "min-replicas-max-lag", "0")
		do("SET", "k", "v")
		do("CONFIG", "SET", "min-replicas-max-lag", "10")
		do("MULTI")
		do("GET", "k")
		do("EXEC")
		// Queued while writes were allowed, refused at EXEC.
		do("CONFIG", "SET", "min-replicas-to-write", "0")
		do("MULTI")
		do("INCR", "n")
		other.Do("CONFIG", "SET", "min-replicas-to-write", "2")
		do("EXEC")
		do("EXISTS", "n")
		info := c.Do("INFO", "replication")
		assert.Contains(t, info, "connected_slaves:0\r\nmin_slaves_good_slaves:0\r\n")
		replies[p.Name] = got
	})
	if replies["redis"] != nil {
		assert.Equal(t, replies["redis"], replies["zredis"])
	}
}

// propagation-error-behavior: a command of the AOF that fails when
// replayed is logged as CRITICAL (and the load goes on) under ignore, and
// stops the start under panic, as redis-server (which aborts) does.
func TestAOFPropagationErrorBehaviorDiff(t *testing.T) {
	aofText := string(Encode("SET", "k", "abc")) + string(Encode("INCR", "k")) + string(Encode("SET", "j", "1"))
	const critical = "== CRITICAL == This server is sending an error to its AOF-loading-client: 'value is not an integer or out of range' after processing the command 'incr'"
	for _, name := range []string{"zredis", "redis"} {
		t.Run(name, func(t *testing.T) {
			bin := serverBin(t, name)
			dir := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(dir, "appendonly.aof"), []byte(aofText), 0o644))
			code, out := runMerged(t, bin, "--port", strconv.Itoa(FreePort(t)), "--bind", "127.0.0.1", "--dir", dir,
				"--appendonly", "yes", "--save", "", "--propagation-error-behavior", "panic")
			assert.NotEqual(t, 0, code, out)
			assert.Contains(t, out, critical)
			assert.Contains(t, out, "panicked sending an error to its AOF-loading-client after processing the command 'incr'")

			dir = t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(dir, "appendonly.aof"), []byte(aofText), 0o644))
			args := []string{"--dir", dir, "--appendonly", "yes", "--save", ""}
			p := StartServer(t, name, args...)
			c := Dial(t, p.Addr)
			assert.Equal(t, "$1\r\n1\r\n", c.Do("GET", "j"), "the load goes on")
			assert.Contains(t, c.Do("INFO", "stats"), "unexpected_error_replies:1\r\n")
			waitOutput(t, p, critical)
		})
	}
}

// maxclients beyond the open file limit is lowered at start to what the
// limit allows (limit - 32), with Redis's log lines, and CONFIG SET of a
// value the limit cannot serve fails, as redis-server does.
func TestMaxclientsFitsOpenFileLimitDiff(t *testing.T) {
	got := map[string][]string{}
	for _, name := range []string{"zredis", "redis"} {
		t.Run(name, func(t *testing.T) {
			bin := serverBin(t, name)
			wrapper := filepath.Join(t.TempDir(), "limited")
			require.NoError(t, os.WriteFile(wrapper, []byte("#!/bin/sh\nulimit -n 100\nexec "+bin+" \"$@\"\n"), 0o755))
			p := testsupport.Start(t, testsupport.Options{Name: name, Bin: wrapper, Args: []string{"--maxclients", "10000"}})
			c := Dial(t, p.Addr)
			replies := []string{c.Do("CONFIG", "GET", "maxclients"), c.Do("CONFIG", "SET", "maxclients", "90"),
				c.Do("CONFIG", "GET", "maxclients"), c.Do("CONFIG", "SET", "maxclients", "60"), c.Do("CONFIG", "GET", "maxclients")}
			waitOutput(t, p, "You requested maxclients of 10000 requiring at least 10032 max file descriptors.")
			waitOutput(t, p, "Current maximum open files is 100. maxclients has been reduced to 68 to compensate for low ulimit.")
			waitOutput(t, p, "Failed applying new configuration. Possibly related to new maxclients setting. Restoring previous settings.")
			got[name] = replies
		})
	}
	if got["redis"] != nil {
		diffCases.Add(1)
		assert.Equal(t, got["redis"], got["zredis"])
		assert.Equal(t, "*2\r\n$10\r\nmaxclients\r\n$2\r\n68\r\n", got["zredis"][0])
	}
}

// socket-mark-id sets SO_MARK on the listening sockets, and the accepted
// connections carry it, as with redis-server (ss shows fwmark).
func TestSocketMarkIDDiff(t *testing.T) {
	ssPath := RequireTool(t, "ss")
	// A machine condition, not a missing install: an unprivileged run
	// cannot set SO_MARK, so ZREDIS_TEST_REQUIRE_ALL does not turn this
	// skip into a failure.
	if os.Geteuid() != 0 {
		t.Skip("setting SO_MARK needs CAP_NET_ADMIN (run as root)")
	}
	onBothConfigured(t, []string{"--socket-mark-id", "77"}, func(t *testing.T, p *Proc) {
		c := Dial(t, p.Addr)
		require.Equal(t, "+PONG\r\n", c.Do("PING"))
		out, err := exec.Command(ssPath, "-tanepi", "( sport = :"+strconv.Itoa(p.Port)+" )").CombinedOutput()
		require.NoError(t, err, string(out))
		s := string(out)
		assert.Regexp(t, `(?s)LISTEN.*fwmark:0x4d`, s)
		assert.Regexp(t, `(?s)ESTAB.*fwmark:0x4d`, s)
	})
}
