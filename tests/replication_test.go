package tests

// zredis as the master of stock redis-server replicas: full
// synchronisation (diskless and disk-based) while clients write, the
// stream after it, partial resynchronisation after a broken link, WAIT,
// ROLE, INFO replication, min-replicas-to-write, redis-cli --rdb and
// --replica, and the replica output buffer limit.

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// replDBs are the databases the replication tests write to.
var replDBs = []int{0, 3, 9}

// startReplica starts a real redis-server replicating from master.
func startReplica(t *testing.T, master *Proc) *Proc {
	t.Helper()
	return StartRedis(t, "--replicaof", "127.0.0.1", strconv.Itoa(master.Port), "--repl-diskless-load", "disabled")
}

// fillReplData writes keys of every type, some with a TTL, in every
// database of replDBs.
func fillReplData(t *testing.T, c *Conn, prefix string) {
	t.Helper()
	for _, db := range replDBs {
		require.Equal(t, "+OK\r\n", c.Do("SELECT", strconv.Itoa(db)))
		for i := range 50 {
			k := fmt.Sprintf("%s:%d:%d", prefix, db, i)
			c.Do("SET", k+":s", strings.Repeat("v", i*37))
			c.Do("HSET", k+":h", "f1", "a", "f2", strconv.Itoa(i), "f3", strings.Repeat("x", 100))
			c.Do("RPUSH", k+":l", "a", "b", strconv.Itoa(i))
			c.Do("SADD", k+":set", "m1", "m2", strconv.Itoa(i))
			c.Do("SADD", k+":iset", "1", "2", strconv.Itoa(i+100))
			c.Do("ZADD", k+":z", "1.5", "a", strconv.Itoa(i), "b")
			c.Do("INCRBY", k+":n", strconv.Itoa(i))
			if i%3 == 0 {
				c.Do("EXPIRE", k+":s", "1000")
				c.Do("PEXPIRE", k+":h", "2000000")
			}
			if i%10 == 0 {
				// Expire during the test: the DELs travel in the stream.
				c.Do("SET", k+":short", "x", "PX", "300")
			}
		}
	}
	require.Equal(t, "+OK\r\n", c.Do("SELECT", "0"))
	for pass := time.Now().Add(300 * time.Millisecond).UnixNano(); ; {
		if last := shortTTLsPass.Load(); last >= pass || shortTTLsPass.CompareAndSwap(last, pass) {
			break
		}
	}
}

// shortTTLsPass is when the last short TTL fillReplData wrote passes
// (Unix ns). compareConns waits for it: a comparison running while a
// deadline passes sees the key on one server and not on the other.
var shortTTLsPass atomic.Int64

// writeDuring writes to zredis from a go-redis client until stop is
// closed; done receives the first error (nil when none).
func writeDuring(addr string, stop <-chan struct{}) <-chan error {
	done := make(chan error, 1)
	go func() {
		rdb := redis.NewClient(&redis.Options{Addr: addr, DB: 3, MaxRetries: -1})
		defer rdb.Close()
		ctx := context.Background()
		for i := 0; ; i++ {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			k := fmt.Sprintf("during:%d", i%500)
			_, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
				p.Incr(ctx, "during:counter")
				p.HSet(ctx, k+":h", "i", i)
				p.LPush(ctx, "during:list", i)
				p.LTrim(ctx, "during:list", 0, 99)
				p.Set(ctx, k, i, time.Hour)
				p.ZIncrBy(ctx, "during:z", 1, k)
				p.SPop(ctx, "during:nothing")
				return nil
			})
			if err != nil && err != redis.Nil { // SPOP of no set answers nil
				done <- err
				return
			}
		}
	}()
	return done
}

// replInfo reads one field of INFO replication.
func replInfo(t *testing.T, p *Proc, field string) string {
	t.Helper()
	return infoField(t, Dial(t, p.Addr), "replication", field)
}

// waitLinkUp waits until the replica's link with its master is up.
func waitLinkUp(t *testing.T, replica *Proc) {
	t.Helper()
	c := Dial(t, replica.Addr)
	waitFor(t, func() bool { return infoField(t, c, "replication", "master_link_status") == "up" })
}

// waitConverged waits until every replica applied the master's whole
// stream: its slave_repl_offset equals the master's master_repl_offset.
func waitConverged(t *testing.T, master *Proc, replicas ...*Proc) {
	t.Helper()
	mc := Dial(t, master.Addr)
	for _, r := range replicas {
		rc := Dial(t, r.Addr)
		var m, s string
		ok := false
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			m = infoField(t, mc, "replication", "master_repl_offset")
			s = infoField(t, rc, "replication", "slave_repl_offset")
			if m != "" && m == s {
				ok = true
				break
			}
		}
		require.True(t, ok, "replica %s: slave_repl_offset %s, master_repl_offset %s", r.Addr, s, m)
	}
}

// compareDatasets compares every key of replDBs on the two servers, by
// type, value and absolute expire time.
func compareDatasets(t *testing.T, a, b *Proc) {
	t.Helper()
	compareConns(t, Dial(t, a.Addr), Dial(t, b.Addr))
}

// compareConns is compareDatasets through two connections (a server
// without a TCP port is reached over TLS).
func compareConns(t *testing.T, ca, cb *Conn) {
	t.Helper()
	if wait := time.Until(time.Unix(0, shortTTLsPass.Load())); wait > 0 {
		time.Sleep(wait + 50*time.Millisecond)
	}
	for _, db := range replDBs {
		require.Equal(t, "+OK\r\n", ca.Do("SELECT", strconv.Itoa(db)))
		require.Equal(t, "+OK\r\n", cb.Do("SELECT", strconv.Itoa(db)))
		// A key past its deadline stays counted by DBSIZE (not listed by
		// KEYS) until its master's active expiry removes it, on a busy
		// machine well after the deadline, and on a replica until the DEL
		// that follows: wait until both hold only live keys, so that no
		// removal lands between the two DBSIZEs compared below.
		pollUntil(30*time.Second, func() bool {
			return liveOnly(ca) && liveOnly(cb) && ca.Do("DBSIZE") == cb.Do("DBSIZE")
		})
		keysA := sortedElems(ca.Do("KEYS", "*"))
		require.Equal(t, keysA, sortedElems(cb.Do("KEYS", "*")), "keys of db %d", db)
		require.Equal(t, ca.Do("DBSIZE"), cb.Do("DBSIZE"), "db %d", db)
		for _, key := range bulkElems(keysA) {
			typ := ca.Do("TYPE", key)
			if typ == "+none\r\n" {
				continue // expired since KEYS
			}
			require.Equal(t, typ, cb.Do("TYPE", key), "type of %s", key)
			var read []string
			sorted := false
			switch typ {
			case "+string\r\n":
				read = []string{"GET", key}
			case "+hash\r\n":
				read, sorted = []string{"HGETALL", key}, true
			case "+list\r\n":
				read = []string{"LRANGE", key, "0", "-1"}
			case "+set\r\n":
				read, sorted = []string{"SMEMBERS", key}, true
			case "+zset\r\n":
				read = []string{"ZRANGE", key, "0", "-1", "WITHSCORES"}
			default:
				t.Fatalf("%s: unexpected type %q", key, typ)
			}
			va, vb := ca.Do(read...), cb.Do(read...)
			if sorted {
				va, vb = sortedElems(va), sortedElems(vb)
			}
			require.Equal(t, va, vb, "db %d key %s", db, key)
			require.Equal(t, ca.Do("PEXPIRETIME", key), cb.Do("PEXPIRETIME", key), "expire time of %s", key)
		}
	}
}

// liveOnly reports whether the selected database of c holds no key past
// its deadline: DBSIZE counts exactly the keys KEYS lists.
func liveOnly(c *Conn) bool {
	head, _, _ := strings.Cut(c.Do("KEYS", "*"), "\r\n")
	return c.Do("DBSIZE") == ":"+strings.TrimPrefix(head, "*")+"\r\n"
}

// bulkElems returns the bulk strings of a raw array reply.
func bulkElems(raw string) []string {
	rd := bufio.NewReader(strings.NewReader(raw))
	rd.ReadString('\n')
	var out []string
	for {
		line, err := rd.ReadString('\n')
		if err != nil {
			return out
		}
		n, _ := strconv.Atoi(strings.TrimSpace(line[1:]))
		buf := make([]byte, n+2)
		if _, err := ioReadFull(rd, buf); err != nil {
			return out
		}
		out = append(out, string(buf[:n]))
	}
}

// TestReplicationMaster runs two stock replicas of a zredis master,
// synchronised at the same time (diskless) while a client writes, then
// checks the datasets, the offsets, WAIT, ROLE, INFO, min-replicas and a
// partial resynchronisation after the links are killed.
func TestReplicationMaster(t *testing.T) {
	parallelReplication(t)
	RequireRedis(t)
	z := StartZredis(t, "--repl-diskless-sync-delay", "0", "--repl-ping-replica-period", "1")
	c := Dial(t, z.Addr)
	assert.Equal(t, "0", infoField(t, c, "replication", "master_repl_offset"))
	assert.Equal(t, "0", infoField(t, c, "replication", "repl_backlog_active"))
	replid := infoField(t, c, "replication", "master_replid")
	require.Len(t, replid, 40)
	fillReplData(t, c, "before")

	stop := make(chan struct{})
	writing := writeDuring(z.Addr, stop)
	r1 := startReplica(t, z)
	r2 := startReplica(t, z)
	waitLinkUp(t, r1)
	waitLinkUp(t, r2)
	fillReplData(t, c, "during")
	close(stop)
	require.NoError(t, <-writing)
	fillReplData(t, c, "after")
	time.Sleep(400 * time.Millisecond) // the short TTLs pass: their DELs are in the stream
	waitConverged(t, z, r1, r2)
	compareDatasets(t, z, r1)
	compareDatasets(t, z, r2)

	// A new history: the backlog came with the first replica.
	assert.NotEqual(t, replid, infoField(t, c, "replication", "master_replid"))
	assert.Equal(t, replInfo(t, r1, "master_replid"), infoField(t, c, "replication", "master_replid"))
	assert.Equal(t, "2", infoField(t, c, "replication", "connected_slaves"))
	assert.Equal(t, "1", infoField(t, c, "replication", "repl_backlog_active"))
	assert.Equal(t, "2", infoField(t, c, "stats", "sync_full"))
	assert.Equal(t, "0", infoField(t, c, "stats", "sync_partial_ok"))
	info := c.Do("INFO", "replication")
	assert.Regexp(t, `slave0:ip=127\.0\.0\.1,port=\d+,state=online,offset=\d+,lag=\d+\r\n`, info)
	assert.Regexp(t, `slave1:ip=127\.0\.0\.1,port=\d+,state=online,offset=\d+,lag=\d+\r\n`, info)
	fields := []string{"role", "connected_slaves", "slave0", "slave1", "master_failover_state", "master_replid",
		"master_replid2", "master_repl_offset", "second_repl_offset", "repl_backlog_active", "repl_backlog_size",
		"repl_backlog_first_byte_offset", "repl_backlog_histlen"}
	var got []string
	for _, line := range strings.Split(info, "\r\n")[1:] {
		if name, _, ok := strings.Cut(line, ":"); ok {
			got = append(got, name)
		}
	}
	assert.Equal(t, fields, got, "INFO replication's fields, in Redis 7.0's order")
	assert.Contains(t, c.Do("CLIENT", "LIST", "TYPE", "replica"), "flags=S ")
	all := strings.Count(c.Do("CLIENT", "LIST"), "\n") - 2 // the bulk header and trailer
	assert.Equal(t, strconv.Itoa(all-2), infoField(t, c, "clients", "connected_clients"), "replicas are not clients for INFO")

	// WAIT counts the replicas that acknowledged the client's last write.
	require.Equal(t, "+OK\r\n", c.Do("SET", "waited", "1"))
	assert.Equal(t, ":2\r\n", c.Do("WAIT", "2", "0"))
	require.Equal(t, "+OK\r\n", c.Do("SET", "waited", "2"))
	assert.Contains(t, []string{":1\r\n", ":2\r\n"}, c.Do("WAIT", "1", "0"), "WAIT answers once one replica acknowledged")
	// Both acknowledged before the next WAIT times out, however slow the
	// machine: what it answers is then the count, not a race.
	c.Do("WAIT", "2", "0")
	assert.Equal(t, ":2\r\n", c.Do("WAIT", "3", "200"), "the timeout answers the count")
	c.Send([]byte("*1\r\n$5\r\nMULTI\r\n*3\r\n$4\r\nWAIT\r\n$1\r\n5\r\n$1\r\n0\r\n*1\r\n$4\r\nEXEC\r\n"))
	assert.Equal(t, "+OK\r\n", c.Read())
	assert.Equal(t, "+QUEUED\r\n", c.Read())
	assert.Equal(t, "*1\r\n:2\r\n", c.Read(), "WAIT in MULTI answers at once")

	// ROLE: master, the offset, the online replicas.
	waitConverged(t, z, r1, r2)
	role := c.Do("ROLE")
	assert.True(t, strings.HasPrefix(role, "*3\r\n$6\r\nmaster\r\n:"), role)
	assert.Contains(t, role, "*3\r\n$9\r\n127.0.0.1\r\n$"+strconv.Itoa(len(strconv.Itoa(r1.Port)))+"\r\n"+strconv.Itoa(r1.Port)+"\r\n")

	// min-replicas-to-write counts the good replicas.
	require.Equal(t, "+OK\r\n", c.Do("CONFIG", "SET", "min-replicas-to-write", "2"))
	assert.Equal(t, "+OK\r\n", c.Do("SET", "guarded", "1"))
	assert.Equal(t, "2", infoField(t, c, "replication", "min_slaves_good_slaves"))
	require.Equal(t, "+OK\r\n", c.Do("CONFIG", "SET", "min-replicas-to-write", "3"))
	assert.Equal(t, "-NOREPLICAS Not enough good replicas to write.\r\n", c.Do("SET", "guarded", "2"))
	require.Equal(t, "+OK\r\n", c.Do("CONFIG", "SET", "min-replicas-to-write", "0"))

	// A broken link: the replicas continue from their offsets.
	assert.Equal(t, ":2\r\n", c.Do("CLIENT", "KILL", "TYPE", "replica"))
	fillReplData(t, c, "relinked")
	waitFor(t, func() bool { return infoField(t, c, "replication", "connected_slaves") == "2" })
	waitLinkUp(t, r1)
	waitLinkUp(t, r2)
	fillReplData(t, c, "relinked2")
	time.Sleep(400 * time.Millisecond)
	waitConverged(t, z, r1, r2)
	assert.Equal(t, "2", infoField(t, c, "stats", "sync_full"), "no new full synchronisation")
	assert.Equal(t, "2", infoField(t, c, "stats", "sync_partial_ok"))
	compareDatasets(t, z, r1)
	compareDatasets(t, z, r2)
	waitOutput(t, z, "Partial resynchronization request from")
}

// TestReplicationDiskBased synchronises a replica with an RDB file written
// to dir and sent with its length (repl-diskless-sync no).
func TestReplicationDiskBased(t *testing.T) {
	RequireRedis(t)
	z := StartZredis(t, "--repl-diskless-sync", "no")
	c := Dial(t, z.Addr)
	fillReplData(t, c, "disk")
	r := startReplica(t, z)
	waitLinkUp(t, r)
	fillReplData(t, c, "disk2")
	time.Sleep(400 * time.Millisecond)
	waitConverged(t, z, r)
	compareDatasets(t, z, r)
	waitOutput(t, z, "Starting BGSAVE for SYNC with target: disk")
	// The temporary file is gone once sent.
	files, _ := filepath.Glob(filepath.Join(z.Dir, "temp-*.rdb"))
	assert.Empty(t, files)
}

// TestReplicationRedisCLI: redis-cli --rdb gets a file redis-check-rdb
// accepts and redis-server loads; redis-cli --replica shows the stream.
func TestReplicationRedisCLI(t *testing.T) {
	requireRedisCLI(t)
	RequireRedis(t)
	z := StartZredis(t, "--repl-diskless-sync-delay", "0")
	c := Dial(t, z.Addr)
	fillReplData(t, c, "cli")

	dir := t.TempDir()
	file := filepath.Join(dir, "dump.rdb")
	cli(t, z, nil, "--rdb", file)
	check := exec.Command("/usr/bin/redis-check-rdb", file)
	checkOut, err := check.CombinedOutput()
	require.NoError(t, err, "%s", checkOut)
	assert.Contains(t, string(checkOut), "RDB looks OK")
	loaded := StartRedis(t, "--dir", dir, "--dbfilename", "dump.rdb")
	time.Sleep(400 * time.Millisecond) // the short TTLs pass on zredis too
	compareDatasets(t, z, loaded)
	waitFor(t, func() bool { return infoField(t, c, "replication", "connected_slaves") == "0" })

	// redis-cli --replica prints every command of the stream.
	bin := requireRedisCLI(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-h", "127.0.0.1", "-p", strconv.Itoa(z.Port), "--replica")
	// Its progress goes to stderr, the commands to stdout: one pipe.
	pr, pw, err := os.Pipe()
	require.NoError(t, err)
	defer pr.Close()
	cmd.Stdout, cmd.Stderr = pw, pw
	require.NoError(t, cmd.Start())
	pw.Close()
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	lines := make(chan string, 10000)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	sawSync := false
	for line := range lines {
		if strings.Contains(line, "Logging commands from master") {
			sawSync = true
			break
		}
	}
	require.True(t, sawSync, "redis-cli --replica did not finish its sync")
	require.Equal(t, "+OK\r\n", c.Do("SET", "seen-by-cli", "42"))
	found := false
	for line := range lines {
		if strings.Contains(line, "seen-by-cli") {
			found = true
			break
		}
	}
	assert.True(t, found, "the SET was not shown by redis-cli --replica")
}

// TestReplicationOutputLimit: a replica that never reads is disconnected
// by the replica output buffer limit; other clients go on.
func TestReplicationOutputLimit(t *testing.T) {
	z := StartZredis(t, "--repl-diskless-sync", "no", "--client-output-buffer-limit", "replica 262144 131072 10")
	c := Dial(t, z.Addr)
	require.Equal(t, "+OK\r\n", c.Do("SET", "k", "v"))
	stalled := Dial(t, z.Addr)
	stalled.Send(Encode("PSYNC", "?", "-1")) // and never read
	waitFor(t, func() bool { return infoField(t, c, "replication", "connected_slaves") == "1" })
	big := strings.Repeat("x", 100<<10)
	for i := 0; i < 300 && infoField(t, c, "replication", "connected_slaves") == "1"; i++ {
		require.Equal(t, "+OK\r\n", c.Do("SET", "big"+strconv.Itoa(i), big))
	}
	waitFor(t, func() bool { return infoField(t, c, "replication", "connected_slaves") == "0" })
	assert.Equal(t, "+PONG\r\n", c.Do("PING"))
	waitOutput(t, z, "for overcoming of output buffer limits")
	assert.NotContains(t, c.Do("CLIENT", "LIST"), "flags=S")
}

// TestReplicationDelayedDiskless: with repl-diskless-sync-delay the
// replicas wait for the delay (kept alive by newlines), then share a
// diskless synchronisation started by the cron; once they are gone the
// backlog is freed after repl-backlog-ttl, with a new replication ID.
func TestReplicationDelayedDiskless(t *testing.T) {
	parallelReplication(t)
	RequireRedis(t)
	z := StartZredis(t, "--repl-diskless-sync-delay", "1", "--repl-backlog-ttl", "1")
	c := Dial(t, z.Addr)
	fillReplData(t, c, "delayed")
	r1 := startReplica(t, z)
	r2 := startReplica(t, z)
	waitLinkUp(t, r1)
	waitLinkUp(t, r2)
	fillReplData(t, c, "delayed2")
	time.Sleep(400 * time.Millisecond)
	waitConverged(t, z, r1, r2)
	compareDatasets(t, z, r1)
	compareDatasets(t, z, r2)
	waitOutput(t, z, "Delay next BGSAVE for diskless SYNC")
	waitOutput(t, z, "Starting BGSAVE for SYNC with target: replicas sockets")

	replid := infoField(t, c, "replication", "master_replid")
	r1.Close()
	r2.Close()
	waitFor(t, func() bool { return infoField(t, c, "replication", "repl_backlog_active") == "0" })
	assert.NotEqual(t, replid, infoField(t, c, "replication", "master_replid"))
	assert.Equal(t, "0", infoField(t, c, "replication", "repl_backlog_histlen"))
	waitOutput(t, z, "Replication backlog freed after 1 seconds without connected replicas.")
}

// TestReplicaGoneDuringSync: replicas that go away in the middle of their
// full synchronisation (one closes after reading part of the payload,
// one is killed while it waits for it) are dropped and logged; another
// replica synchronising at the same time finishes, and clients are
// served throughout. Disk-based and diskless.
func TestReplicaGoneDuringSync(t *testing.T) {
	RequireRedis(t)
	for _, diskless := range []string{"no", "yes"} {
		t.Run("diskless="+diskless, func(t *testing.T) {
			z := StartZredis(t, "--repl-diskless-sync", diskless, "--repl-diskless-sync-delay", "1")
			c := Dial(t, z.Addr)
			// About 16 MB: more than the sockets buffer.
			val := strings.Repeat("v", 1024)
			var batch []byte
			for i := range 16000 {
				batch = append(batch, Encode("SET", "k"+strconv.Itoa(i), val)...)
				if i%1000 == 999 {
					c.Send(batch)
					for range 1000 {
						require.Equal(t, "+OK\r\n", c.Read())
					}
					batch = batch[:0]
				}
			}
			// A replica that reads 64 KiB of its payload, then hangs up.
			partial := Dial(t, z.Addr)
			partial.Send(Encode("REPLCONF", "capa", "eof"))
			require.Equal(t, "+OK\r\n", partial.Read())
			partial.Send(Encode("PSYNC", "?", "-1"))
			// A stock replica killed while it waits for its payload.
			killed := startReplica(t, z)
			// And one that finishes.
			r := startReplica(t, z)
			waitFor(t, func() bool { return infoField(t, c, "replication", "connected_slaves") == "3" })
			buf := make([]byte, 64<<10)
			_, err := ioReadFull(partial.rd, buf)
			require.NoError(t, err)
			partial.nc.Close()
			killed.Kill()
			assert.Equal(t, "+OK\r\n", c.Do("SET", "during", "sync"))
			waitConverged(t, z, r)
			// The master notices the two hang-ups on its own time.
			pollUntil(30*time.Second, func() bool { return infoField(t, c, "replication", "connected_slaves") == "1" })
			assert.Equal(t, "1", infoField(t, c, "replication", "connected_slaves"))
			assert.Equal(t, "$4\r\nsync\r\n", Dial(t, r.Addr).Do("GET", "during"))
			assert.Equal(t, ":16001\r\n", Dial(t, r.Addr).Do("DBSIZE"))
			assert.Equal(t, "+PONG\r\n", c.Do("PING"))
			waitOutput(t, z, "Connection with replica")
		})
	}
}
