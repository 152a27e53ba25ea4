package tests

import (
	"bufio"
	"bytes"
	"context"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zredis/zredis/internal/testsupport"
)

// zredis as a replica of a stock redis-server 7.0: the full sync (a
// payload on disk, "$<len>", and a diskless one, "$EOF:<mark>"), the
// command stream applied with the master's offsets, writes refused to
// clients, a partial resync after a broken link, and REPLICAOF NO ONE.

// replicaInfo reads INFO replication as a map.
func replicaInfo(t *testing.T, c *Conn) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, line := range strings.Split(c.Do("INFO", "replication"), "\r\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			m[k] = v
		}
	}
	return m
}

// replicaConverged waits until the replica has applied everything the
// master produced: its slave_repl_offset reaches the master's
// master_repl_offset, which must not move meanwhile.
func replicaConverged(t *testing.T, master, replica *Conn) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		m := replicaInfo(t, master)["master_repl_offset"]
		r := replicaInfo(t, replica)
		if r["master_link_status"] == "up" && r["slave_repl_offset"] == m {
			assert.Equal(t, m, r["master_repl_offset"], "the replica's own offset is the master's")
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("replica at %s (link %s), master at %s", r["slave_repl_offset"], r["master_link_status"], m)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// liveWrites changes the master's data while the replica follows: every
// type, several databases, expirations, deletions, MULTI.
func liveWrites(t *testing.T, addr string, round int) {
	t.Helper()
	ctx := context.Background()
	for _, db := range []int{0, 3, 15} {
		c := redis.NewClient(&redis.Options{Addr: addr, DB: db})
		p := c.TxPipeline()
		r := strconv.Itoa(round)
		p.Set(ctx, "live:"+r, "v"+r, 0)
		p.Incr(ctx, "counter")
		p.RPush(ctx, "lsmall", "pushed"+r)
		p.HSet(ctx, "hsmall", "f"+r, r)
		p.ZIncrBy(ctx, "zsmall", 1, "a")
		p.SRem(ctx, "sstr", "b")
		p.Del(ctx, "empty")
		p.Set(ctx, "soon:"+r, "x", time.Hour)
		p.Expire(ctx, "str", 2*time.Hour)
		if _, err := p.Exec(ctx); err != nil {
			t.Fatal(err)
		}
		c.Close()
	}
}

func TestReplicaOfRedis(t *testing.T) {
	parallelReplication(t)
	for _, diskless := range []bool{false, true} {
		name := "disk"
		if diskless {
			name = "diskless"
		}
		t.Run(name, func(t *testing.T) {
			m := StartRedis(t, "--repl-diskless-sync", map[bool]string{false: "no", true: "yes"}[diskless],
				"--repl-diskless-sync-delay", "0")
			fillDataset(t, m.Addr)
			mc := Dial(t, m.Addr)
			z := StartZredis(t, "--replicaof", "127.0.0.1", strconv.Itoa(m.Port))
			zc := Dial(t, z.Addr)
			replicaConverged(t, mc, zc)
			requireSameDataset(t, dataset(t, m.Addr), dataset(t, z.Addr))
			assert.Equal(t, "1", replicaInfo(t, mc)["connected_slaves"])

			for round := range 5 {
				liveWrites(t, m.Addr, round)
			}
			replicaConverged(t, mc, zc)
			requireSameDataset(t, dataset(t, m.Addr), dataset(t, z.Addr))

			info := replicaInfo(t, zc)
			assert.Equal(t, "slave", info["role"])
			assert.Equal(t, strconv.Itoa(m.Port), info["master_port"])
			assert.Equal(t, replicaInfo(t, mc)["master_replid"], info["master_replid"])
			assert.Equal(t, "-READONLY You can't write against a read only replica.\r\n", zc.Do("SET", "k", "v"))
			assert.Contains(t, zc.Do("CONFIG", "GET", "replicaof"), "127.0.0.1 "+strconv.Itoa(m.Port))

			// A broken link continues where it stopped: a partial resync.
			full := statInt(t, mc, "sync_full")
			before := statInt(t, mc, "sync_partial_ok")
			require.Equal(t, ":1\r\n", mc.Do("CLIENT", "KILL", "TYPE", "replica"))
			liveWrites(t, m.Addr, 100)
			replicaConverged(t, mc, zc)
			assert.Equal(t, before+1, statInt(t, mc, "sync_partial_ok"), "a partial resync")
			assert.Equal(t, full, statInt(t, mc, "sync_full"), "no full sync")
			requireSameDataset(t, dataset(t, m.Addr), dataset(t, z.Addr))

			// The master's client is listed with flag M; killing it drops
			// the link, which continues where it stopped.
			masterClient := zc.Do("CLIENT", "LIST", "TYPE", "master")
			assert.Contains(t, masterClient, "flags=M ")
			assert.Contains(t, masterClient, "user=(superuser) ")
			require.Equal(t, ":1\r\n", zc.Do("CLIENT", "KILL", "TYPE", "master"))
			liveWrites(t, m.Addr, 200)
			replicaConverged(t, mc, zc)
			assert.Equal(t, before+2, statInt(t, mc, "sync_partial_ok"), "a partial resync")
			requireSameDataset(t, dataset(t, m.Addr), dataset(t, z.Addr))

			// Promoted: writes are taken, the master sees the replica go.
			assert.Equal(t, "+OK\r\n", zc.Do("REPLICAOF", "NO", "ONE"))
			assert.Equal(t, "+OK\r\n", zc.Do("SET", "k", "v"))
			assert.Equal(t, "master", replicaInfo(t, zc)["role"])
			assert.Equal(t, "*2\r\n$9\r\nreplicaof\r\n$0\r\n\r\n", zc.Do("CONFIG", "GET", "replicaof"))
		})
	}
}

// statInt reads an INFO stats field.
func statInt(t *testing.T, c *Conn, field string) int {
	t.Helper()
	for _, line := range strings.Split(c.Do("INFO", "stats"), "\r\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && k == field {
			n, err := strconv.Atoi(v)
			require.NoError(t, err)
			return n
		}
	}
	t.Fatalf("no %s in INFO stats", field)
	return 0
}

// REPLICAOF's replies and refusals as redis-server's, and keys past their
// deadline stay on the replica until the master's DEL.
func TestReplicaOfCommand(t *testing.T) {
	m := StartRedis(t, "--repl-diskless-sync", "no", "--enable-debug-command", "yes")
	mc := Dial(t, m.Addr)
	for _, p := range []*Proc{StartZredis(t), StartRedis(t)} {
		c := Dial(t, p.Addr)
		assert.Equal(t, "-ERR Invalid master port\r\n", c.Do("REPLICAOF", "localhost", "abc"), p.Name)
		assert.Equal(t, "+OK\r\n", c.Do("REPLICAOF", "NO", "ONE"), p.Name)
		assert.Equal(t, "+OK\r\n", c.Do("REPLICAOF", "127.0.0.1", strconv.Itoa(m.Port)), p.Name)
		assert.Equal(t, "+OK Already connected to specified master\r\n", c.Do("REPLICAOF", "127.0.0.1", strconv.Itoa(m.Port)), p.Name)
		replicaConverged(t, mc, c)
		assert.Equal(t, "+OK\r\n", c.Do("SLAVEOF", "no", "one"), p.Name)
	}

	// A key the master lets expire is gone from the replica only when the
	// master's DEL comes: the replica does not expire it itself.
	z := StartZredis(t, "--replicaof", "127.0.0.1", strconv.Itoa(m.Port))
	zc := Dial(t, z.Addr)
	replicaConverged(t, mc, zc)
	require.Equal(t, "+OK\r\n", mc.Do("DEBUG", "SET-ACTIVE-EXPIRE", "0"))
	require.Equal(t, "+OK\r\n", mc.Do("SET", "short", "v", "PX", "50"))
	replicaConverged(t, mc, zc)
	time.Sleep(100 * time.Millisecond)
	assert.Equal(t, ":1\r\n", zc.Do("DBSIZE"), "the replica keeps the key")
	mc.Do("GET", "short") // the master expires it on access and sends DEL
	replicaConverged(t, mc, zc)
	assert.Equal(t, ":0\r\n", zc.Do("DBSIZE"))
	mc.Do("DEBUG", "SET-ACTIVE-EXPIRE", "1")
}

// The expiry stream under replication: a replica sends nothing (its keys
// leave by the master's DEL); once promoted it expires at once the keys
// already past their deadline, in deadline order, one message each, and
// then those that fall due later.
func TestReplicaExpiryStream(t *testing.T) {
	m := StartRedis(t, "--repl-diskless-sync", "no", "--enable-debug-command", "yes")
	mc := Dial(t, m.Addr)
	ep := zmqEndpoint(t)
	z := StartZredis(t, "--replicaof", "127.0.0.1", strconv.Itoa(m.Port), "--expiry-zmq-endpoints", ep)
	zc := Dial(t, z.Addr)
	l := startListener(t, []string{ep})
	replicaConverged(t, mc, zc)
	waitInfo(t, zc, "expiry_zmq_listeners", "1", 30*time.Second)

	// Keys the master expires: their DELs come, the replica sends nothing.
	for i := range 20 {
		require.Equal(t, "+OK\r\n", mc.Do("SET", "gone:"+strconv.Itoa(i), "v", "PX", "50"))
	}
	require.Eventually(t, func() bool { return mc.Do("DBSIZE") == ":0\r\n" }, 30*time.Second, 20*time.Millisecond)
	replicaConverged(t, mc, zc)
	assert.Equal(t, ":0\r\n", zc.Do("DBSIZE"))
	assert.Empty(t, l.quiet(300*time.Millisecond), "a replica sends no expiry message")

	// Keys past their deadline that the master has not expired yet.
	require.Equal(t, "+OK\r\n", mc.Do("DEBUG", "SET-ACTIVE-EXPIRE", "0"))
	for i := range 10 {
		require.Equal(t, "+OK\r\n", mc.Do("SET", "due:"+strconv.Itoa(i), "v"+strconv.Itoa(i), "PX", strconv.Itoa(10+i)))
	}
	require.Equal(t, "+OK\r\n", mc.Do("SET", "later", "v", "PX", "1500"))
	replicaConverged(t, mc, zc)
	time.Sleep(100 * time.Millisecond)
	assert.Equal(t, ":11\r\n", zc.Do("DBSIZE"), "the replica keeps them")
	assert.Empty(t, l.quiet(100*time.Millisecond))

	require.Equal(t, "+OK\r\n", zc.Do("REPLICAOF", "NO", "ONE"))
	got := l.recv(t, 10, 30*time.Second)
	for i, d := range got {
		assert.Equal(t, "due:"+strconv.Itoa(i), string(d.Key), "in deadline order")
	}
	later := l.recv(t, 1, 30*time.Second)
	assert.Equal(t, "later", string(later[0].Key))
	assert.Empty(t, l.quiet(200*time.Millisecond), "one message each")
}

// fakeMaster answers a replica's handshake and then whatever script
// says; it accepts connections until the test ends.
func fakeMaster(t *testing.T, script func(c net.Conn, br *bufio.Reader)) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				// PING, REPLCONF listening-port, REPLCONF capa.
				for range 3 {
					if _, err := readCommand(br); err != nil {
						return
					}
					c.Write([]byte("+OK\r\n"))
				}
				if _, err := readCommand(br); err != nil { // PSYNC
					return
				}
				script(c, br)
			}()
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port
}

// readCommand reads one RESP multibulk command.
func readCommand(br *bufio.Reader) ([]string, error) {
	line, err := br.ReadString('\n')
	if err != nil {
		return nil, err
	}
	n, _ := strconv.Atoi(strings.TrimSpace(line[1:]))
	var args []string
	for range n {
		if _, err := br.ReadString('\n'); err != nil {
			return nil, err
		}
		a, err := br.ReadString('\n')
		if err != nil {
			return nil, err
		}
		args = append(args, strings.TrimRight(a, "\r\n"))
	}
	return args, nil
}

// A master that sends garbage, a truncated payload, or goes silent: the
// link is dropped and retried, the log says why, and the replica keeps
// serving its data.
func TestReplicaFaultyMaster(t *testing.T) {
	replid := strings.Repeat("a", 40)
	for _, tc := range []struct {
		name, log string
		script    func(c net.Conn, br *bufio.Reader)
	}{
		{"garbage", "Bad protocol from MASTER", func(c net.Conn, _ *bufio.Reader) {
			c.Write([]byte("+FULLRESYNC " + replid + " 0\r\nGARBAGE\r\n"))
		}},
		{"truncated payload", "I/O error trying to sync with MASTER", func(c net.Conn, _ *bufio.Reader) {
			c.Write([]byte("+FULLRESYNC " + replid + " 0\r\n$1000\r\nREDIS0010"))
		}},
		{"bad payload", "Failed trying to load the MASTER synchronization DB from disk", func(c net.Conn, _ *bufio.Reader) {
			c.Write([]byte("+FULLRESYNC " + replid + " 0\r\n$9\r\nNOTANRDB!"))
			time.Sleep(5 * time.Second)
		}},
		{"silent", "MASTER timeout: no data nor PING received", func(c net.Conn, _ *bufio.Reader) {
			c.Write([]byte("+CONTINUE\r\n"))
			time.Sleep(10 * time.Second)
		}},
		{"psync refused", "Unexpected reply to PSYNC from master", func(c net.Conn, _ *bufio.Reader) {
			c.Write([]byte("-ERR no\r\n"))
		}},
		{"endless line", "the master sent a line longer than 4096 bytes", func(c net.Conn, _ *bufio.Reader) {
			c.Write(bytes.Repeat([]byte("x"), 1<<20))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			port := fakeMaster(t, tc.script)
			z := StartZredis(t, "--repl-timeout", "1")
			zc := Dial(t, z.Addr)
			require.Equal(t, "+OK\r\n", zc.Do("SET", "mine", "v"))
			require.Equal(t, "+OK\r\n", zc.Do("REPLICAOF", "127.0.0.1", strconv.Itoa(port)))
			require.Eventually(t, func() bool { return strings.Contains(z.Output(), tc.log) }, 15*time.Second, 50*time.Millisecond, "log:\n%s", z.Output())
			assert.Equal(t, "+PONG\r\n", zc.Do("PING"))
			assert.Equal(t, "down", replicaInfo(t, zc)["master_link_status"])
			if tc.name == "bad payload" {
				// As Redis with repl-diskless-load disabled: the old data
				// set was flushed before the payload was found bad.
				assert.Equal(t, "$-1\r\n", zc.Do("GET", "mine"))
			} else {
				assert.Equal(t, "$1\r\nv\r\n", zc.Do("GET", "mine"), "the data set is kept")
			}
		})
	}
}

// A wrong masterauth: the link stays down, the log says why.
func TestReplicaWrongMasterauth(t *testing.T) {
	m := testsupport.Start(t, testsupport.Options{Name: "redis", Bin: RequireRedis(t), Args: []string{"--requirepass", "right"}, Password: "right"})
	z := StartZredis(t, "--masterauth", "wrong", "--replicaof", "127.0.0.1", strconv.Itoa(m.Port))
	zc := Dial(t, z.Addr)
	require.Eventually(t, func() bool { return strings.Contains(z.Output(), "Unable to AUTH to MASTER") }, 20*time.Second, 50*time.Millisecond)
	assert.Equal(t, "down", replicaInfo(t, zc)["master_link_status"])
	assert.NotContains(t, z.Output(), "wrong", "the password is not logged")
}

// A replica with maxmemory evicts nothing (replica-ignore-maxmemory yes):
// its keys leave by its master's DELs only.
func TestReplicaIgnoresMaxmemory(t *testing.T) {
	m := StartRedis(t, "--repl-diskless-sync", "no")
	mc := Dial(t, m.Addr)
	val := strings.Repeat("v", 1000)
	for i := range 5000 {
		require.Equal(t, "+OK\r\n", mc.Do("SET", "k"+strconv.Itoa(i), val))
	}
	z := StartZredis(t, "--maxmemory", "2mb", "--maxmemory-policy", "allkeys-lru", "--replicaof", "127.0.0.1", strconv.Itoa(m.Port))
	zc := Dial(t, z.Addr)
	replicaConverged(t, mc, zc)
	assert.Equal(t, ":5000\r\n", zc.Do("DBSIZE"))
	assert.Equal(t, "$1000\r\n"+val+"\r\n", zc.Do("GET", "k1"))
	assert.Contains(t, zc.Do("INFO", "stats"), "\r\nevicted_keys:0\r\n")
}

// A master with redis-server's default diskless sync sends newlines
// before its reply to PSYNC while it waits for more replicas; REPLICAOF
// inside MULTI runs; REPLICAOF NO ONE forgets where the stream stopped,
// so writes made as a master are not kept by a later partial resync.
func TestReplicaOfDefaultMasterAndRoleChanges(t *testing.T) {
	parallelReplication(t)
	m := StartRedis(t, "--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "2")
	mc := Dial(t, m.Addr)
	require.Equal(t, "+OK\r\n", mc.Do("SET", "a", "1"))
	z := StartZredis(t)
	zc := Dial(t, z.Addr)
	zc.Do("MULTI")
	zc.Do("REPLICAOF", "127.0.0.1", strconv.Itoa(m.Port))
	assert.Equal(t, "*1\r\n+OK\r\n", zc.Do("EXEC"))
	replicaConverged(t, mc, zc)
	assert.Equal(t, "$1\r\n1\r\n", zc.Do("GET", "a"))

	require.Equal(t, "+OK\r\n", zc.Do("REPLICAOF", "NO", "ONE"))
	require.Equal(t, "+OK\r\n", zc.Do("SET", "local", "x"))
	require.Equal(t, ":2\r\n", zc.Do("INCR", "a"))
	full := statInt(t, mc, "sync_full")
	require.Equal(t, "+OK\r\n", zc.Do("REPLICAOF", "127.0.0.1", strconv.Itoa(m.Port)))
	replicaConverged(t, mc, zc)
	assert.Equal(t, full+1, statInt(t, mc, "sync_full"), "a full sync: the data diverged")
	assert.Equal(t, "$1\r\n1\r\n", zc.Do("GET", "a"))
	assert.Equal(t, "$-1\r\n", zc.Do("GET", "local"))
}

// With replica-serve-stale-data no and the link down, commands not
// flagged stale get MASTERDOWN; an empty transaction runs.
func TestReplicaMasterDown(t *testing.T) {
	port := FreePort(t) // nothing listens there
	for _, p := range []*Proc{StartZredis(t, "--replica-serve-stale-data", "no"), StartRedis(t, "--replica-serve-stale-data", "no")} {
		c := Dial(t, p.Addr)
		require.Equal(t, "+OK\r\n", c.Do("REPLICAOF", "127.0.0.1", strconv.Itoa(port)))
		assert.Equal(t, "-MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.\r\n", c.Do("GET", "k"), p.Name)
		assert.Equal(t, "-MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.\r\n", c.Do("PING"), p.Name)
		assert.Equal(t, "$2\r\nhi\r\n", c.Do("ECHO", "hi"), p.Name)
		assert.Equal(t, "+OK\r\n", c.Do("MULTI"), p.Name)
		assert.Equal(t, "*0\r\n", c.Do("EXEC"), p.Name)
		assert.Equal(t, "-READONLY You can't write against a read only replica.\r\n", c.Do("SET", "k", "v"), p.Name)
	}
}

// zredis replicating zredis, each with a 0MQ listener: N keys expiring on
// the master give exactly N messages, all from the master; once the
// master is gone and the replica promoted, the keys that expire later
// all come from it.
func TestReplicaOfZredisExpiryStream(t *testing.T) {
	epM, epR := zmqEndpoint(t), zmqEndpoint(t)
	zm := StartZredis(t, "--expiry-zmq-endpoints", epM, "--repl-diskless-sync-delay", "0")
	mc := Dial(t, zm.Addr)
	zr := StartZredis(t, "--expiry-zmq-endpoints", epR, "--replicaof", "127.0.0.1", strconv.Itoa(zm.Port))
	rc := Dial(t, zr.Addr)
	lm, lr := startListener(t, []string{epM}), startListener(t, []string{epR})
	replicaConverged(t, mc, rc)
	waitInfo(t, mc, "expiry_zmq_listeners", "1", 30*time.Second)
	waitInfo(t, rc, "expiry_zmq_listeners", "1", 30*time.Second)

	for i := range 50 {
		require.Equal(t, "+OK\r\n", mc.Do("SET", "soon:"+strconv.Itoa(i), "v", "PX", "100"))
	}
	// Due once the master is stopped, even on a busy machine.
	for i := range 20 {
		require.Equal(t, "+OK\r\n", mc.Do("SET", "late:"+strconv.Itoa(i), "v", "PX", "6000"))
	}
	assert.Len(t, lm.recv(t, 50, 30*time.Second), 50)
	replicaConverged(t, mc, rc)
	assert.Equal(t, ":20\r\n", rc.Do("DBSIZE"))
	assert.Empty(t, lr.quiet(200*time.Millisecond), "nothing from the replica")

	zm.Stop()
	require.Equal(t, "+OK\r\n", rc.Do("REPLICAOF", "NO", "ONE"))
	got := lr.recv(t, 20, 30*time.Second)
	for _, d := range got {
		assert.True(t, strings.HasPrefix(string(d.Key), "late:"), string(d.Key))
	}
	assert.Empty(t, lr.quiet(200*time.Millisecond), "one message each")
	assert.Empty(t, lm.quiet(0), "the master sent no late key")
}

// zredis replicating zredis: the data after the full sync and after live
// writes, and a broken link continuing with a partial resync.
func TestReplicaOfZredis(t *testing.T) {
	zm := StartZredis(t, "--repl-diskless-sync-delay", "0")
	fillDataset(t, zm.Addr)
	mc := Dial(t, zm.Addr)
	zr := StartZredis(t, "--replicaof", "127.0.0.1", strconv.Itoa(zm.Port))
	rc := Dial(t, zr.Addr)
	replicaConverged(t, mc, rc)
	requireSameDataset(t, dataset(t, zm.Addr), dataset(t, zr.Addr))
	for round := range 3 {
		liveWrites(t, zm.Addr, round)
	}
	replicaConverged(t, mc, rc)
	requireSameDataset(t, dataset(t, zm.Addr), dataset(t, zr.Addr))

	full, partial := statInt(t, mc, "sync_full"), statInt(t, mc, "sync_partial_ok")
	require.Equal(t, ":1\r\n", mc.Do("CLIENT", "KILL", "TYPE", "replica"))
	liveWrites(t, zm.Addr, 50)
	replicaConverged(t, mc, rc)
	assert.Equal(t, partial+1, statInt(t, mc, "sync_partial_ok"))
	assert.Equal(t, full, statInt(t, mc, "sync_full"))
	requireSameDataset(t, dataset(t, zm.Addr), dataset(t, zr.Addr))
	assert.Equal(t, "*5\r\n$5\r\nslave\r\n$9\r\n127.0.0.1\r\n:"+strconv.Itoa(zm.Port)+"\r\n$9\r\nconnected\r\n", rc.Do("ROLE")[:len("*5\r\n$5\r\nslave\r\n$9\r\n127.0.0.1\r\n:"+strconv.Itoa(zm.Port)+"\r\n$9\r\nconnected\r\n")])
}
