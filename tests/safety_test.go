package tests

import (
	"bufio"
	"bytes"
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
	"github.com/zredis/zredis/internal/testsupport"
)

// Failures that must not lose data (issue: data safety and limits), each
// compared with a real redis-server started from the same arguments.

// A SHUTDOWN or SIGTERM whose final save cannot be written is cancelled:
// SHUTDOWN answers "Errors trying to SHUTDOWN. Check logs.", the server
// logs why and goes on serving, with every write kept; SHUTDOWN NOSAVE
// and FORCE still stop it. The directory is removed under both servers so
// that the save's temp file cannot be created.
func TestShutdownFailedSaveKeepsServing(t *testing.T) {
	for _, name := range []string{"redis", "zredis"} {
		t.Run(name, func(t *testing.T) {
			dir, err := os.MkdirTemp("", "zredis-shutdown")
			require.NoError(t, err)
			defer os.RemoveAll(dir)
			args := []string{"--dir", dir, "--save", "3600 1"}
			p := StartServer(t, name, args...)
			c := Dial(t, p.Addr)
			require.Equal(t, "+OK\r\n", c.Do("SET", "mail:1", "body"))
			require.NoError(t, os.RemoveAll(dir))

			assert.Equal(t, "-ERR Errors trying to SHUTDOWN. Check logs.\r\n", c.Do("SHUTDOWN"))
			assert.Equal(t, "-ERR Errors trying to SHUTDOWN. Check logs.\r\n", c.Do("SHUTDOWN", "SAVE"))
			waitOutput(t, p, "Error trying to save the DB, can't exit.")
			waitOutput(t, p, "Errors trying to shut down the server. Check the logs for more information.")
			assert.Equal(t, "+OK\r\n", c.Do("SET", "mail:2", "body"))
			assert.Equal(t, ":2\r\n", c.Do("DBSIZE"))

			// A SIGTERM whose save fails is cancelled the same way.
			before := strings.Count(p.Output(), "Errors trying to shut down the server")
			require.NoError(t, p.Signal(syscall.SIGTERM))
			deadline := time.Now().Add(20 * time.Second)
			for strings.Count(p.Output(), "Errors trying to shut down the server") == before {
				require.True(t, time.Now().Before(deadline), "the SIGTERM was not handled:\n%s", p.Output())
				time.Sleep(10 * time.Millisecond)
			}
			assert.Equal(t, "+PONG\r\n", c.Do("PING"))
			assert.Equal(t, "$4\r\nbody\r\n", c.Do("GET", "mail:2"))

			// FORCE exits although the save fails.
			c.Send(Encode("SHUTDOWN", "FORCE"))
			_, err = c.ReadErr(10 * time.Second)
			assert.Error(t, err, "SHUTDOWN FORCE closes the connection")
			code, ok := p.Wait(10 * time.Second)
			require.True(t, ok, "no exit after SHUTDOWN FORCE")
			assert.Equal(t, 0, code)
			assert.Contains(t, p.Output(), "Error trying to save the DB. Exit anyway.")
		})
	}
}

// While a failed shutdown is cancelled, the expiry stream goes on: a key
// that expires afterwards reaches the listener.
func TestShutdownFailedSaveExpiryStreamGoesOn(t *testing.T) {
	ep := zmqEndpoint(t)
	dir, err := os.MkdirTemp("", "zredis-shutdown")
	require.NoError(t, err)
	defer os.RemoveAll(dir)
	z := StartZredis(t, "--dir", dir, "--save", "3600 1", "--expiry-zmq-endpoints", ep)
	l := startListener(t, []string{ep})
	c := Dial(t, z.Addr)
	require.NoError(t, os.RemoveAll(dir))
	require.Equal(t, "-ERR Errors trying to SHUTDOWN. Check logs.\r\n", c.Do("SHUTDOWN"))
	require.Equal(t, "+OK\r\n", c.Do("SET", "lock:1", "v", "PX", "50"))
	got := l.recv(t, 1, 30*time.Second)
	assert.Equal(t, "lock:1", string(got[0].Key))
	z.Signal(syscall.SIGKILL)
}

// A client blocked in a blocking pop that hangs up is never served: the
// element pushed right after the hang-up stays where it was pushed, for
// every blocking command, on many trials. redis-server notices the
// hang-up on its event loop, so it keeps the element when the hang-up
// came a moment before the push (20 ms here, and no sooner than INFO
// counts the client unblocked), but loses some when both
// arrive in the same round of its loop; zredis asks the socket before
// serving a blocked client, and loses none with no gap at all.
func TestBlockedClientHangupLosesNothing(t *testing.T) {
	cases := []struct {
		block []string
		push  []string
		count []string // the pushed element is still here: ":1"
	}{
		{[]string{"BLPOP", "q", "0"}, []string{"RPUSH", "q", "m"}, []string{"LLEN", "q"}},
		{[]string{"BRPOP", "q", "0"}, []string{"RPUSH", "q", "m"}, []string{"LLEN", "q"}},
		{[]string{"BLMOVE", "q", "dst", "LEFT", "RIGHT", "0"}, []string{"RPUSH", "q", "m"}, []string{"LLEN", "q"}},
		{[]string{"BRPOPLPUSH", "q", "dst", "0"}, []string{"RPUSH", "q", "m"}, []string{"LLEN", "q"}},
		{[]string{"BLMPOP", "0", "1", "q", "LEFT"}, []string{"RPUSH", "q", "m"}, []string{"LLEN", "q"}},
		{[]string{"BZPOPMIN", "z", "0"}, []string{"ZADD", "z", "1", "m"}, []string{"ZCARD", "z"}},
		{[]string{"BZPOPMAX", "z", "0"}, []string{"ZADD", "z", "1", "m"}, []string{"ZCARD", "z"}},
		{[]string{"BZMPOP", "0", "1", "z", "MIN"}, []string{"ZADD", "z", "1", "m"}, []string{"ZCARD", "z"}},
	}
	const trials = 20
	for _, name := range []string{"redis", "zredis"} {
		t.Run(name, func(t *testing.T) {
			p := StartServer(t, name)
			ctl := Dial(t, p.Addr)
			gaps := []time.Duration{20 * time.Millisecond}
			if name == "zredis" {
				gaps = append(gaps, 0)
			}
			for _, gap := range gaps {
				for _, tc := range cases {
					lost := 0
					for i := 0; i < trials; i++ {
						ctl.Do("DEL", "q", "z", "dst")
						waiter := Dial(t, p.Addr)
						waiter.Send(Encode(tc.block...))
						waitBlocked(t, ctl, 1)
						waiter.nc.Close()
						time.Sleep(gap)
						if gap > 0 {
							// "A moment before": once the server saw the
							// hang-up, however long a busy machine takes.
							waitBlocked(t, ctl, 0)
						}
						ctl.Do(tc.push...)
						if ctl.Do(tc.count...) != ":1\r\n" {
							lost++
						}
						waitBlocked(t, ctl, 0)
					}
					assert.Zero(t, lost, "%s, push %v after the hang-up: elements popped for a client that hung up, of %d", tc.block[0], gap, trials)
				}
			}
		})
	}
}

// A MONITOR client is a replica to Redis and exempt from CLIENT PAUSE and
// from the shutdown's hold: it may not read or write keys.
func TestMonitorCannotTouchKeyspace(t *testing.T) {
	d := NewDiff(t)
	d.Do("MONITOR")
	d.Do("GET", "k")
	d.Do("SET", "k", "v")
	d.Do("EXPIRE", "k", "10")
}

// SHUTDOWN in a pipeline, with a final save that fails: every reply is
// redis-server's, byte for byte, and the commands after it run.
func TestShutdownFailedSaveInPipeline(t *testing.T) {
	var out []string
	for _, name := range []string{"redis", "zredis"} {
		dir, err := os.MkdirTemp("", "zredis-shutdown")
		require.NoError(t, err)
		defer os.RemoveAll(dir)
		p := StartServer(t, name, "--dir", dir, "--save", "3600 1")
		require.NoError(t, os.RemoveAll(dir))
		c := Dial(t, p.Addr)
		cmds := [][]string{{"SET", "a", "1"}, {"SHUTDOWN"}, {"SET", "b", "2"}, {"GET", "a"}, {"SHUTDOWN", "ABORT"}, {"DBSIZE"}}
		var raw []byte
		for _, cmd := range cmds {
			raw = append(raw, Encode(cmd...)...)
		}
		c.Send(raw)
		var replies []string
		for range cmds {
			replies = append(replies, c.Read())
		}
		out = append(out, strings.Join(replies, ""))
		p.Signal(syscall.SIGKILL)
	}
	assert.Equal(t, out[0], out[1])
}

// A SIGTERM or SHUTDOWN while the dataset loads stops the load and exits
// without a final save, as Redis forces NOSAVE while loading: the file on
// disk is left as it was (a save then would write half of it).
func TestShutdownDuringLoading(t *testing.T) {
	dir := t.TempDir()
	r := StartRedis(t, "--dir", dir, "--enable-debug-command", "yes")
	rc := Dial(t, r.Addr)
	require.Equal(t, "+OK\r\n", rc.Do("DEBUG", "POPULATE", "2000000", "key", "100"))
	require.Equal(t, "+OK\r\n", rc.Do("SAVE"))
	r.Stop()
	dump := filepath.Join(dir, "dump.rdb")
	before, err := os.ReadFile(dump)
	require.NoError(t, err)

	for _, how := range []string{"SIGTERM", "SHUTDOWN"} {
		t.Run(how, func(t *testing.T) {
			// Not waiting for PING: the test catches the server loading.
			p := testsupport.Start(t, testsupport.Options{Name: "zredis", Bin: zredisBin, Args: []string{"--dir", dir, "--save", "3600 1"}, NoWait: true})
			addr := p.Addr
			// Wait for LOADING, then ask for the shutdown.
			var c *Conn
			deadline := time.Now().Add(10 * time.Second)
			for {
				require.True(t, time.Now().Before(deadline), "never saw LOADING")
				nc, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
				if err != nil {
					time.Sleep(5 * time.Millisecond)
					continue
				}
				c = &Conn{t: t, nc: nc, rd: bufio.NewReader(nc)}
				reply := c.Do("PING")
				if strings.HasPrefix(reply, "-LOADING") {
					break
				}
				require.Fail(t, "the load ended before the test could interrupt it", reply)
			}
			if how == "SIGTERM" {
				require.NoError(t, p.Signal(syscall.SIGTERM))
			} else {
				c.Send(Encode("SHUTDOWN"))
			}
			code, exited := p.Wait(20 * time.Second)
			if !exited {
				t.Fatal("no exit")
			}
			assert.Equal(t, 0, code)
			log := p.Output()
			assert.NotContains(t, log, "Saving the final RDB snapshot", log)
			if how == "SIGTERM" {
				assert.Contains(t, log, "Received shutdown signal during loading, scheduling shutdown.")
			}
			after, err := os.ReadFile(dump)
			require.NoError(t, err)
			assert.True(t, bytes.Equal(before, after), "dump.rdb changed")
		})
	}
}

// The log file is opened for each line, as Redis does: a log rotated by
// renaming is created anew at the next line. SIGHUP and a log reader that
// went away do not stop the server (Redis ignores SIGHUP and SIGPIPE).
func TestLogFileRotationAndSIGHUP(t *testing.T) {
	dir := t.TempDir()
	logPath := filepath.Join(dir, "z.log")
	z := StartZredis(t, "--logfile", logPath)
	c := Dial(t, z.Addr)
	require.NoError(t, os.Rename(logPath, logPath+".1"))
	require.Equal(t, "+OK\r\n", c.Do("SAVE"))
	b, err := os.ReadFile(logPath)
	require.NoError(t, err, "the log file was not created again")
	assert.Contains(t, string(b), "DB saved on disk")
	require.NoError(t, z.Signal(syscall.SIGHUP))
	time.Sleep(100 * time.Millisecond)
	assert.Equal(t, "+PONG\r\n", c.Do("PING"))
}

// A second server started on the same port and pid file fails to bind and
// leaves the running server's pid file alone.
func TestPidFileSecondStart(t *testing.T) {
	dir := t.TempDir()
	pidPath := filepath.Join(dir, "z.pid")
	z := StartZredis(t, "--pidfile", pidPath)
	b, err := os.ReadFile(pidPath)
	require.NoError(t, err)
	require.Equal(t, strconv.Itoa(z.Pid())+"\n", string(b))
	second := testsupport.Start(t, testsupport.Options{Name: "zredis", Bin: zredisBin, Port: z.Port, Args: []string{"--pidfile", pidPath, "--dir", dir}, NoWait: true})
	code, exited := second.Wait(15 * time.Second)
	out := second.Output()
	require.True(t, exited && code != 0, "the second server must fail to bind:\n%s", out)
	b, err = os.ReadFile(pidPath)
	require.NoError(t, err, "the running server's pid file was removed:\n%s", out)
	assert.Equal(t, strconv.Itoa(z.Pid())+"\n", string(b))
}

// Protected mode, on by default: with no password, a client whose address
// is not 127.0.0.1 or ::1 gets Redis's DENIED text and is closed (here a
// client from 127.0.0.2, which Redis compares by text as not local);
// with a password, or protected-mode no, it is served.
func TestProtectedMode(t *testing.T) {
	dialFrom := func(t *testing.T, addr string) *Conn {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}, Timeout: 2 * time.Second}
		nc, err := d.Dial("tcp", addr)
		require.NoError(t, err)
		t.Cleanup(func() { nc.Close() })
		return &Conn{t: t, nc: nc, rd: bufio.NewReader(nc)}
	}
	// The harness's readiness probe needs no password: requirepass is
	// set once the server runs.
	for _, args := range [][]string{nil, {"requirepass"}, {"--protected-mode", "no"}} {
		var replies []string
		for _, name := range []string{"redis", "zredis"} {
			start := args
			if len(args) == 1 {
				start = nil
			}
			p := StartServer(t, name, start...)
			if len(args) == 1 {
				require.Equal(t, "+OK\r\n", Dial(t, p.Addr).Do("CONFIG", "SET", "requirepass", "s3cret"))
			}
			c := dialFrom(t, p.Addr)
			c.Send(Encode("PING"))
			reply, err := c.ReadErr(10 * time.Second)
			if err == nil && strings.HasPrefix(reply, "-DENIED") {
				_, err = c.ReadErr(10 * time.Second)
				assert.Error(t, err, "%s: the connection is closed after DENIED", name)
			}
			replies = append(replies, reply)
			info := Dial(t, p.Addr)
			if len(args) == 1 {
				info.Do("AUTH", "s3cret")
			}
			rejected := strings.Contains(info.Do("INFO", "stats"), "rejected_connections:1\r\n")
			assert.Equal(t, strings.HasPrefix(reply, "-DENIED"), rejected, "%s %v: rejected_connections", name, args)
		}
		assert.Equal(t, replies[0], replies[1], "%v", args)
		if args == nil {
			assert.True(t, strings.HasPrefix(replies[1], "-DENIED Redis is running in protected mode"), replies[1])
		}
	}
}

// The users of the configuration file are enforced from the start, as
// redis-server enforces them; an aclfile that cannot be read stops the
// start with Redis's message.
func TestConfiguredUsersEnforced(t *testing.T) {
	for _, name := range []string{"zredis", "redis"} {
		bin := serverBin(t, name)
		path := filepath.Join(t.TempDir(), "z.conf")
		require.NoError(t, os.WriteFile(path, []byte("user admin on >s3cret ~* &* +@all\nuser default off\n"), 0o644))
		p := testsupport.Start(t, testsupport.Options{Name: filepath.Base(bin), Bin: bin, Args: []string{path}, Password: "s3cret", User: "admin"})
		c := Dial(t, p.Addr)
		assert.Equal(t, "-NOAUTH Authentication required.\r\n", c.Do("PING"), bin)
		assert.Equal(t, "-WRONGPASS invalid username-password pair or user is disabled.\r\n", c.Do("AUTH", "default", "x"), bin)
		assert.Equal(t, "+OK\r\n", c.Do("AUTH", "admin", "s3cret"), bin)
		assert.Equal(t, "+PONG\r\n", c.Do("PING"), bin)

		path = filepath.Join(t.TempDir(), "a.conf")
		require.NoError(t, os.WriteFile(path, []byte("aclfile /nonexistent/users.acl\n"), 0o644))
		p = testsupport.Start(t, testsupport.Options{Name: filepath.Base(bin), Bin: bin, Args: []string{path}, NoWait: true})
		code, exited := p.Wait(15 * time.Second)
		require.True(t, exited && code != 0, "%s started with a missing aclfile:\n%s", bin, p.Output())
		assert.Contains(t, p.Output(), "Aborting Redis startup because of ACL errors: Error loading ACLs, opening file '/nonexistent/users.acl': No such file or directory", bin)
	}
}

// Nothing expires under CLIENT PAUSE (Redis 7.0 pauses expiry with
// writes): a key past its deadline reads as gone but stays, and expires
// once the pause ends.
func TestNoExpiryWhilePaused(t *testing.T) {
	onBoth(t, func(t *testing.T, p *Proc) {
		c := Dial(t, p.Addr)
		require.Equal(t, "+OK\r\n", c.Do("SET", "k", "v", "PX", "100"))
		// Long enough for the checks below on a busy machine: UNPAUSE ends it.
		require.Equal(t, "+OK\r\n", c.Do("CLIENT", "PAUSE", "60000", "WRITE"))
		time.Sleep(300 * time.Millisecond)
		assert.Equal(t, "$-1\r\n", c.Do("GET", "k"), "past its deadline: gone for readers")
		assert.Equal(t, ":1\r\n", c.Do("DBSIZE"), "but not removed")
		assert.Contains(t, c.Do("INFO", "stats"), "\r\nexpired_keys:0\r\n")
		require.Equal(t, "+OK\r\n", c.Do("CLIENT", "UNPAUSE"))
		require.Eventually(t, func() bool { return c.Do("DBSIZE") == ":0\r\n" }, 20*time.Second, 20*time.Millisecond)
		assert.Contains(t, c.Do("INFO", "stats"), "\r\nexpired_keys:1\r\n")
	})
}

// While clients are paused the dataset stays still: lowering maxmemory
// under CLIENT PAUSE WRITE evicts nothing until the pause ends, as
// Redis's isSafeToPerformEvictions.
func TestNoEvictionWhilePaused(t *testing.T) {
	onBoth(t, func(t *testing.T, p *Proc) {
		c := Dial(t, p.Addr)
		require.Equal(t, "+OK\r\n", c.Do("CONFIG", "SET", "maxmemory-policy", "allkeys-random"))
		val := strings.Repeat("v", 10000)
		var raw []byte
		for i := 0; i < 2000; i++ {
			raw = append(raw, Encode("SET", "k"+strconv.Itoa(i), val)...)
		}
		c.Send(raw)
		for i := 0; i < 2000; i++ {
			c.Read()
		}
		// Long enough for the checks below on a busy machine: UNPAUSE ends it.
		require.Equal(t, "+OK\r\n", c.Do("CLIENT", "PAUSE", "60000", "WRITE"))
		require.Equal(t, "+OK\r\n", c.Do("CONFIG", "SET", "maxmemory", "5mb"))
		assert.Equal(t, ":2000\r\n", c.Do("DBSIZE"), "keys evicted during the pause")
		assert.Contains(t, c.Do("INFO", "stats"), "\r\nevicted_keys:0\r\n")
		require.Equal(t, "+OK\r\n", c.Do("CLIENT", "UNPAUSE"))
		c.Do("SET", "after", "pause")
		assert.NotContains(t, c.Do("INFO", "stats"), "\r\nevicted_keys:0\r\n", "evictions resume after the pause")
	})
}
