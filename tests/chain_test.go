package tests

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zredis/zredis/internal/testsupport"
)

// A replica's stream is its master's: it keeps a backlog of it, serves
// replicas of its own from it (chained replicas), and continues the
// history when promoted, so that the old master and its other replicas
// come back with partial resyncs. Offsets are the top master's all the
// way down.

func replicaOf(t *testing.T, c *Conn, master *Proc) {
	t.Helper()
	require.Equal(t, "+OK\r\n", c.Do("REPLICAOF", "127.0.0.1", strconv.Itoa(master.Port)))
}

// TestChainedReplicas runs a redis-server master, a zredis replica, and
// below it a redis-server and a zredis replica: the sub-replicas get the
// master's stream through zredis, with the master's offsets, also
// across a full sync that starts while the master's stream is in a
// database other than 0, and a broken link that zredis continues
// without disturbing them.
func TestChainedReplicas(t *testing.T) {
	parallelReplication(t)
	RequireRedis(t)
	m := StartRedis(t)
	mc := Dial(t, m.Addr)
	fillReplData(t, mc, "pre") // the stream ends in db 9
	z := StartZredis(t, "--replicaof", "127.0.0.1", strconv.Itoa(m.Port))
	waitConverged(t, m, z)

	r := startReplica(t, z)
	z2 := StartZredis(t, "--replicaof", "127.0.0.1", strconv.Itoa(z.Port))
	waitLinkUp(t, r)
	waitLinkUp(t, z2)
	// Still in db 9 on the master's stream: no SELECT comes, the
	// sub-replicas learnt the database from the RDB (repl-stream-db).
	m9 := Dial(t, m.Addr)
	require.Equal(t, "+OK\r\n", m9.Do("SELECT", "9"))
	for i := range 20 {
		m9.Do("SET", "in9:"+strconv.Itoa(i), "v")
	}
	fillReplData(t, mc, "live")
	waitConverged(t, m, z, r, z2)
	compareDatasets(t, m, z)
	compareDatasets(t, m, r)
	compareDatasets(t, m, z2)
	zc := Dial(t, z.Addr)
	assert.Equal(t, "2", infoField(t, zc, "replication", "connected_slaves"))
	assert.Equal(t, replInfo(t, m, "master_replid"), replInfo(t, r, "master_replid"), "the whole chain has the master's history")
	assert.Equal(t, replInfo(t, m, "master_replid"), replInfo(t, z2, "master_replid"))

	// PUBLISH on the master reaches subscribers all the way down.
	subs := []*Conn{Dial(t, z.Addr), Dial(t, r.Addr), Dial(t, z2.Addr)}
	for _, sc := range subs {
		require.Equal(t, "*3\r\n$9\r\nsubscribe\r\n$4\r\nnews\r\n:1\r\n", sc.Do("SUBSCRIBE", "news"))
	}
	mc.Do("PUBLISH", "news", "hello")
	for _, sc := range subs {
		assert.Equal(t, "*3\r\n$7\r\nmessage\r\n$4\r\nnews\r\n$5\r\nhello\r\n", sc.Read())
	}
	waitConverged(t, m, z, r, z2)

	// zredis's link breaks and continues: its replicas stay connected.
	fullZ, partialZ := statInt(t, zc, "sync_full"), statInt(t, zc, "sync_partial_ok")
	partialM := statInt(t, mc, "sync_partial_ok")
	require.Equal(t, ":1\r\n", zc.Do("CLIENT", "KILL", "TYPE", "master"))
	for i := range 3 {
		liveWrites(t, m.Addr, i)
	}
	waitConverged(t, m, z, r, z2)
	assert.Equal(t, partialM+1, statInt(t, mc, "sync_partial_ok"), "zredis continued")
	assert.Equal(t, fullZ, statInt(t, zc, "sync_full"), "its replicas did not sync again")
	assert.Equal(t, partialZ, statInt(t, zc, "sync_partial_ok"), "its replicas were not disconnected")
	compareDatasets(t, m, r)
	compareDatasets(t, m, z2)

	// The sub-replicas' own links break: they continue from zredis's
	// backlog.
	require.Equal(t, ":2\r\n", zc.Do("CLIENT", "KILL", "TYPE", "replica"))
	liveWrites(t, m.Addr, 10)
	waitConverged(t, m, z, r, z2)
	assert.Equal(t, partialZ+2, statInt(t, zc, "sync_partial_ok"))
	assert.Equal(t, fullZ, statInt(t, zc, "sync_full"))
	compareDatasets(t, m, r)
	compareDatasets(t, m, z2)
}

// TestPromotionContinues promotes a zredis replica of a redis-server
// master: the master's other replica and the master itself follow it
// with partial resyncs; then the way back, where zredis continues the
// promoted redis-server's history with its own.
func TestPromotionContinues(t *testing.T) {
	parallelReplication(t)
	RequireRedis(t)
	m := StartRedis(t)
	mc := Dial(t, m.Addr)
	fillReplData(t, mc, "pre")
	z := StartZredis(t, "--replicaof", "127.0.0.1", strconv.Itoa(m.Port))
	r := startReplica(t, m)
	liveWrites(t, m.Addr, 1)
	waitConverged(t, m, z, r)
	zc, rc := Dial(t, z.Addr), Dial(t, r.Addr)

	require.Equal(t, "+OK\r\n", zc.Do("REPLICAOF", "NO", "ONE"))
	assert.Equal(t, replInfo(t, m, "master_replid"), infoField(t, zc, "replication", "master_replid2"))
	replicaOf(t, rc, z)
	replicaOf(t, mc, z)
	liveWrites(t, z.Addr, 2)
	fillReplData(t, zc, "after")
	waitConverged(t, z, r, m)
	assert.Equal(t, 2, statInt(t, zc, "sync_partial_ok"), "both continued")
	assert.Equal(t, 0, statInt(t, zc, "sync_full"))
	compareDatasets(t, z, r)
	compareDatasets(t, z, m)

	// And back: redis-server promoted, zredis continues its history.
	require.Equal(t, "+OK\r\n", mc.Do("REPLICAOF", "NO", "ONE"))
	replicaOf(t, zc, m)
	replicaOf(t, rc, m)
	liveWrites(t, m.Addr, 3)
	waitConverged(t, m, z, r)
	assert.Equal(t, 2, statInt(t, mc, "sync_partial_ok"), "zredis and the other replica continued")
	compareDatasets(t, m, z)
	compareDatasets(t, m, r)
}

// TestPromotionContinuesZredis is the same among zredis servers only: a
// master, two replicas, one promoted, the other and the old master
// following it without a full sync.
func TestPromotionContinuesZredis(t *testing.T) {
	parallelReplication(t)
	a := StartZredis(t)
	ac := Dial(t, a.Addr)
	fillReplData(t, ac, "pre")
	b := StartZredis(t, "--replicaof", "127.0.0.1", strconv.Itoa(a.Port))
	c := StartZredis(t, "--replicaof", "127.0.0.1", strconv.Itoa(a.Port))
	liveWrites(t, a.Addr, 1)
	waitConverged(t, a, b, c)
	bc, cc := Dial(t, b.Addr), Dial(t, c.Addr)

	require.Equal(t, "+OK\r\n", bc.Do("REPLICAOF", "NO", "ONE"))
	replicaOf(t, cc, b)
	replicaOf(t, ac, b)
	liveWrites(t, b.Addr, 2)
	waitConverged(t, b, c, a)
	assert.Equal(t, 2, statInt(t, bc, "sync_partial_ok"))
	assert.Equal(t, 0, statInt(t, bc, "sync_full"))
	compareDatasets(t, b, c)
	compareDatasets(t, b, a)
}

// TestReplicaRestartContinues restarts a zredis replica from the RDB it
// saved at shutdown: the file holds where the stream stood
// (repl-id, repl-offset, repl-stream-db), so the master lets it
// continue, as redis-server does.
func TestReplicaRestartContinues(t *testing.T) {
	parallelReplication(t)
	RequireRedis(t)
	m := StartRedis(t)
	mc := Dial(t, m.Addr)
	fillReplData(t, mc, "pre")
	dir := t.TempDir()
	z := StartZredis(t, "--dir", dir, "--replicaof", "127.0.0.1", strconv.Itoa(m.Port))
	waitConverged(t, m, z)
	zc := Dial(t, z.Addr)
	zc.Send(Encode("SHUTDOWN", "SAVE"))
	_, exited := z.Wait(30 * time.Second)
	require.True(t, exited)

	// The master's stream goes on meanwhile, in db 9 without a SELECT.
	m9 := Dial(t, m.Addr)
	require.Equal(t, "+OK\r\n", m9.Do("SELECT", "9"))
	for i := range 20 {
		m9.Do("SET", "while-down:"+strconv.Itoa(i), "v")
	}
	full, partial := statInt(t, mc, "sync_full"), statInt(t, mc, "sync_partial_ok")
	z = StartZredis(t, "--dir", dir, "--replicaof", "127.0.0.1", strconv.Itoa(m.Port))
	waitConverged(t, m, z)
	assert.Equal(t, partial+1, statInt(t, mc, "sync_partial_ok"), "the restarted replica continued")
	assert.Equal(t, full, statInt(t, mc, "sync_full"))
	compareDatasets(t, m, z)
}

// TestReplicaOfUnblocksClients: a master that becomes a replica ends its
// blocked clients' commands with an error and closes them, as
// redis-server does: a replica must not pop what its master pushes.
func TestReplicaOfUnblocksClients(t *testing.T) {
	RequireRedis(t)
	m := StartRedis(t)
	for name, p := range map[string]*Proc{"redis": StartRedis(t), "zredis": StartZredis(t)} {
		t.Run(name, func(t *testing.T) {
			blocked := Dial(t, p.Addr)
			blocked.Send(Encode("BLPOP", "queue", "0"))
			c := Dial(t, p.Addr)
			waitFor(t, func() bool { return infoField(t, c, "clients", "blocked_clients") == "1" })
			replicaOf(t, c, m)
			reply, err := blocked.ReadErr(10 * time.Second)
			require.NoError(t, err)
			assert.Equal(t, "-UNBLOCKED force unblock from blocking operation, instance state changed (master -> replica?)\r\n", reply)
			_, err = blocked.ReadErr(10 * time.Second)
			assert.Error(t, err, "the connection is closed")
		})
	}
}

// TestDemotedOutboxDrains: what a master produced for its expiry stream
// and no listener took yet keeps draining once it is a replica, across
// the full sync that replaces its data set and across a restart as a
// replica (from the spool); as a replica it produces nothing more.
func TestDemotedOutboxDrains(t *testing.T) {
	requirePythonZMQ(t)
	m := StartZredis(t, "--repl-diskless-sync-delay", "0")
	mc := Dial(t, m.Addr)
	require.Equal(t, "+OK\r\n", mc.Do("SET", "master-key", "v"))
	dir := t.TempDir()
	ep := zmqEndpoint(t)
	args := []string{"--dir", dir, "--save", "", "--expiry-zmq-endpoints", ep, "--expiry-zmq-hwm", "10"}
	z := StartZredis(t, args...)
	zc := Dial(t, z.Addr)
	const n = 300
	setExpiring(t, z.Addr, n, 100*time.Millisecond, 0)
	waitInfo(t, zc, "expired_keys", strconv.Itoa(n), 30*time.Second)
	// Keys that would expire later: the full sync drops them, no message.
	require.Equal(t, "+OK\r\n", zc.Do("SET", "later", "v", "PX", "500"))

	// Demoted: the data set becomes the master's; the outbox stays.
	replicaOf(t, zc, m)
	waitLinkUp(t, z)
	waitConverged(t, m, z)
	assert.Equal(t, "$1\r\nv\r\n", zc.Do("GET", "master-key"))
	info := infoExpiry(t, zc)
	queued, _ := strconv.Atoi(info["expiry_messages_queued"])
	spooled, _ := strconv.Atoi(info["expiry_messages_spooled"])
	require.Equal(t, n, queued+spooled, "INFO: %v", info)

	// Restarted as a replica: the spool is sent by the next run.
	z.Stop()
	z = StartZredis(t, append(args, "--replicaof", "127.0.0.1", strconv.Itoa(m.Port))...)
	zc = Dial(t, z.Addr)
	waitLinkUp(t, z)
	l := startListener(t, []string{ep}, "--count", strconv.Itoa(n))
	got := l.recv(t, n, 30*time.Second)
	checkDeadlineOrder(t, got, n, 100*time.Millisecond)
	// A master key expiring now is the master's to send, not this replica's.
	require.Equal(t, "+OK\r\n", mc.Do("SET", "m-soon", "v", "PX", "50"))
	time.Sleep(300 * time.Millisecond)
	waitConverged(t, m, z)
	assert.Empty(t, l.quiet(300*time.Millisecond), "a replica sends nothing of its own")
	waitInfo(t, zc, "expiry_messages_sent", strconv.Itoa(n), 30*time.Second)
}

// TestMasterRestartContinues: a master restarted from the RDB it saved
// at shutdown keeps its history as ID2, so its replica continues with a
// partial resync, as redis-server 7.0 does.
func TestMasterRestartContinues(t *testing.T) {
	dir := t.TempDir()
	args := []string{"--dir", dir, "--repl-diskless-sync-delay", "0"}
	m := StartZredis(t, args...)
	mc := Dial(t, m.Addr)
	fillReplData(t, mc, "pre")
	r := StartZredis(t, "--replicaof", "127.0.0.1", strconv.Itoa(m.Port))
	waitConverged(t, m, r)
	oldID := replInfo(t, m, "master_replid")
	mc.Send(Encode("SHUTDOWN", "SAVE"))
	_, exited := m.Wait(30 * time.Second)
	require.True(t, exited)

	m = testsupport.Start(t, testsupport.Options{Name: "zredis", Bin: zredisBin, Args: args, Port: m.Port})
	mc = Dial(t, m.Addr)
	assert.Equal(t, oldID, replInfo(t, m, "master_replid2"))
	assert.Equal(t, "1", replInfo(t, m, "repl_backlog_active"))
	waitLinkUp(t, r)
	liveWrites(t, m.Addr, 1)
	waitConverged(t, m, r)
	assert.Equal(t, 1, statInt(t, mc, "sync_partial_ok"), "the replica continued")
	assert.Equal(t, 0, statInt(t, mc, "sync_full"))
	compareDatasets(t, m, r)
}

// TestReplicaErrorFromMaster: a command of the master's stream that
// fails on the replica (its data diverged) is logged as CRITICAL and
// counted; with propagation-error-behavior panic-on-replicas a read-only
// replica aborts instead of going on. As redis-server.
func TestReplicaErrorFromMaster(t *testing.T) {
	parallelReplication(t)
	RequireRedis(t)
	for _, name := range []string{"redis", "zredis"} {
		for _, behavior := range []string{"ignore", "panic-on-replicas"} {
			t.Run(name+"/"+behavior, func(t *testing.T) {
				m := StartRedis(t, "--repl-diskless-sync-delay", "0")
				mc := Dial(t, m.Addr)
				r := StartServer(t, name, "--replicaof", "127.0.0.1", strconv.Itoa(m.Port), "--propagation-error-behavior", behavior)
				waitLinkUp(t, r)
				rc := Dial(t, r.Addr)
				// Diverge: a list where the master has nothing.
				require.Equal(t, "+OK\r\n", rc.Do("CONFIG", "SET", "replica-read-only", "no"))
				require.Equal(t, ":1\r\n", rc.Do("RPUSH", "k", "x"))
				require.Equal(t, "+OK\r\n", rc.Do("CONFIG", "SET", "replica-read-only", "yes"))
				require.Equal(t, ":1\r\n", mc.Do("INCR", "k"))
				line := "== CRITICAL == This replica is sending an error to its master: '-WRONGTYPE Operation against a key holding the wrong kind of value' after processing the command 'incr'"
				require.Eventually(t, func() bool { return strings.Contains(r.Output(), line) }, 20*time.Second, 20*time.Millisecond, r.Output())
				// The backlog line follows the CRITICAL one in a write of its own.
				require.Eventually(t, func() bool { return strings.Contains(r.Output(), "Latest backlog is: '") }, 20*time.Second, 20*time.Millisecond, r.Output())
				if behavior == "ignore" {
					waitConverged(t, m, r)
					assert.Equal(t, "1", infoField(t, rc, "stats", "unexpected_error_replies"))
					return
				}
				_, exited := r.Wait(30 * time.Second)
				require.True(t, exited, "the replica aborted")
				assert.Contains(t, r.Output(), "Guru Meditation: This replica panicked sending an error to its master after processing the command 'incr' #")
			})
		}
	}
}

// TestWritableReplicaExpiresItsOwnKeys: on a writable replica
// (replica-read-only no) a key a client wrote with a TTL is expired by
// the replica itself, as redis-server 7.0 does (expired_keys, DBSIZE),
// and sends no expiry message: the stream is its master's. The
// master's keys still wait for the master's DEL.
func TestWritableReplicaExpiresItsOwnKeys(t *testing.T) {
	RequireRedis(t)
	requirePythonZMQ(t)
	for _, name := range []string{"redis", "zredis"} {
		t.Run(name, func(t *testing.T) {
			m := StartRedis(t, "--repl-diskless-sync-delay", "0", "--enable-debug-command", "yes")
			args := []string{"--replicaof", "127.0.0.1", strconv.Itoa(m.Port), "--replica-read-only", "no"}
			ep := zmqEndpoint(t)
			if name == "zredis" {
				args = append(args, "--expiry-zmq-endpoints", ep)
			}
			r := StartServer(t, name, args...)
			waitLinkUp(t, r)
			rc := Dial(t, r.Addr)
			var l *pyListener
			if name == "zredis" {
				l = startListener(t, []string{ep})
				waitInfo(t, rc, "expiry_zmq_listeners", "1", 30*time.Second)
			}
			require.Equal(t, "+OK\r\n", rc.Do("SET", "local", "v", "PX", "50"))
			require.Equal(t, ":1\r\n", rc.Do("RPUSH", "local2", "x"))
			require.Equal(t, ":1\r\n", rc.Do("PEXPIRE", "local2", "50"))
			require.Equal(t, "+OK\r\n", rc.Do("SET", "kept", "v"))
			require.Eventually(t, func() bool { return rc.Do("DBSIZE") == ":1\r\n" }, 20*time.Second, 20*time.Millisecond)
			assert.Equal(t, "2", infoField(t, rc, "stats", "expired_keys"))
			if l != nil {
				assert.Empty(t, l.quiet(300*time.Millisecond), "no expiry message from a replica")
			}
			// A master's key expires by the master's DEL, not here.
			mc := Dial(t, m.Addr)
			require.Equal(t, "+OK\r\n", mc.Do("DEBUG", "SET-ACTIVE-EXPIRE", "0"))
			require.Equal(t, "+OK\r\n", mc.Do("SET", "m", "v", "PX", "50"))
			waitConverged(t, m, r)
			time.Sleep(300 * time.Millisecond)
			assert.Equal(t, ":2\r\n", rc.Do("DBSIZE"), "the master's key stays until its DEL")
			assert.Equal(t, "$-1\r\n", rc.Do("GET", "m"))
		})
	}
}

// TestMasterLinkDownSince: master_link_down_since_seconds is -1 until the
// link was once up, then counts from when it went down, as redis-server
// (Sentinel reads it to choose the replica to promote).
func TestMasterLinkDownSince(t *testing.T) {
	parallelReplication(t)
	RequireRedis(t)
	for _, name := range []string{"redis", "zredis"} {
		t.Run(name, func(t *testing.T) {
			r := StartServer(t, name)
			rc := Dial(t, r.Addr)
			replicaOf(t, rc, &Proc{Port: FreePort(t)}) // nobody listens there
			time.Sleep(1500 * time.Millisecond)
			assert.Equal(t, "-1", infoField(t, rc, "replication", "master_link_down_since_seconds"), "never up")
			m := StartRedis(t, "--repl-diskless-sync-delay", "0")
			replicaOf(t, rc, m)
			waitLinkUp(t, r)
			killed := time.Now()
			m.Kill()
			require.Eventually(t, func() bool { return infoField(t, rc, "replication", "master_link_status") == "down" }, 20*time.Second, 20*time.Millisecond)
			time.Sleep(1100 * time.Millisecond)
			down, err := strconv.Atoi(infoField(t, rc, "replication", "master_link_down_since_seconds"))
			require.NoError(t, err)
			// At most 3 s, or, on a machine slow to see the link go
			// down, the seconds since the kill (rounded up) and one more.
			most := max(3, int((time.Since(killed)+time.Second-1)/time.Second)+1)
			assert.True(t, down >= 1 && down <= most, "down since %d s (at most %d)", down, most)
		})
	}
}
