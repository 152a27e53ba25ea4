package tests

import (
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// FAILOVER, as Redis 7.0's tests/integration/failover.tcl runs it: a
// master hands its role to a replica without losing a write, the
// replicas continuing with partial resyncs; its refusals, its timeout,
// FORCE and ABORT. zredis in every role, next to redis-server.

// failoverDone waits until the master's failover ended.
func failoverDone(t *testing.T, c *Conn) {
	t.Helper()
	require.Eventually(t, func() bool { return infoField(t, c, "replication", "master_failover_state") == "no-failover" },
		30*time.Second, 20*time.Millisecond)
}

// waitOnline waits until the master lists n replicas, all online (a
// replica may have its data before its master counts it online).
func waitOnline(t *testing.T, c *Conn, n int) {
	t.Helper()
	require.Eventually(t, func() bool {
		info := replicaInfo(t, c)
		if info["connected_slaves"] != strconv.Itoa(n) {
			return false
		}
		for i := range n {
			if !strings.Contains(info["slave"+strconv.Itoa(i)], "state=online") {
				return false
			}
		}
		return true
	}, 30*time.Second, 20*time.Millisecond)
}

// TestFailoverRefusals compares FAILOVER's errors with redis-server's.
func TestFailoverRefusals(t *testing.T) {
	RequireRedis(t)
	replies := map[string][]string{}
	for _, name := range []string{"redis", "zredis"} {
		m := StartServer(t, name, "--repl-diskless-sync-delay", "0")
		mc := Dial(t, m.Addr)
		var got []string
		do := func(args ...string) { got = append(got, mc.Do(args...)) }
		do("FAILOVER")
		do("FAILOVER", "ABORT")
		r := StartServer(t, name, "--replicaof", "127.0.0.1", strconv.Itoa(m.Port))
		waitLinkUp(t, r)
		waitConverged(t, m, r)
		waitOnline(t, mc, 1)
		port := strconv.Itoa(r.Port)
		do("FAILOVER", "TO", "invalidhost", port)
		do("FAILOVER", "TO", "", port)
		do("FAILOVER", "TIMEOUT", "99999999999999999", "TO", "127.0.0.1", port, "FORCE", "BOGUS")
		do("PSYNC", infoField(t, mc, "replication", "master_replid"), "1", "FAILOVER")
		do("FAILOVER", "TO", "127.0.0.1", "invalidport")
		do("FAILOVER", "FORCE", "TIMEOUT", "100")
		do("FAILOVER", "TO", "127.0.0.1", port, "FORCE")
		do("FAILOVER", "TIMEOUT", "0")
		do("FAILOVER", "TIMEOUT", "-5")
		do("FAILOVER", "TIMEOUT", "x")
		do("FAILOVER", "TIMEOUT", "10", "TIMEOUT", "10")
		do("FAILOVER", "BOGUS")
		do("FAILOVER", "ABORT", "TIMEOUT", "10")
		got = append(got, Dial(t, r.Addr).Do("FAILOVER", "TO", "127.0.0.1", port))
		// A failover that waits: the replica is stopped, so it never
		// catches up.
		require.NoError(t, r.Signal(syscall.SIGSTOP))
		require.Equal(t, "+OK\r\n", mc.Do("SET", "k", "v"))
		do("FAILOVER", "TO", "127.0.0.1", port, "TIMEOUT", "60000")
		got = append(got, infoField(t, mc, "replication", "master_failover_state"))
		do("GET", "k") // reads go on
		do("FAILOVER")
		do("REPLICAOF", "127.0.0.1", "1")
		do("PSYNC", "?", "-1")
		do("FAILOVER", "ABORT")
		got = append(got, infoField(t, mc, "replication", "master_failover_state"))
		require.NoError(t, r.Signal(syscall.SIGCONT))
		assert.Equal(t, "+OK\r\n", mc.Do("SET", "k", "w"), "writes run again")
		waitConverged(t, m, r)
		replies[name] = got
	}
	assert.Equal(t, replies["redis"], replies["zredis"])
}

// TestFailover runs a three-node group through FAILOVER TO a replica, to
// any replica, and TO a stopped replica with FORCE, as failover.tcl does,
// for groups of zredis servers and mixed groups: every acknowledged
// write is kept, and the replicas follow the new master with partial
// resyncs.
func TestFailover(t *testing.T) {
	parallelReplication(t)
	for _, kinds := range [][3]string{
		{"zredis", "zredis", "zredis"},
		{"redis", "zredis", "redis"}, // a stock master hands over to zredis
		{"zredis", "redis", "zredis"},
	} {
		t.Run(kinds[0]+"-"+kinds[1]+"-"+kinds[2], func(t *testing.T) {
			RequireRedis(t)
			var n [3]*Proc
			var c [3]*Conn
			for i, k := range kinds {
				n[i] = StartServer(t, k, "--repl-diskless-sync-delay", "0")
				c[i] = Dial(t, n[i].Addr)
			}
			fillReplData(t, c[0], "pre")
			for i := 1; i < 3; i++ {
				replicaOf(t, c[i], n[0])
			}
			waitLinkUp(t, n[1])
			waitLinkUp(t, n[2])
			waitConverged(t, n[0], n[1], n[2])
			waitOnline(t, c[0], 2)

			// To a named replica, which lags at first.
			psyncs, fulls := statInt(t, c[1], "sync_partial_ok"), statInt(t, c[1], "sync_full")
			require.NoError(t, n[1].Signal(syscall.SIGSTOP))
			liveWrites(t, n[0].Addr, 1)
			require.NoError(t, n[1].Signal(syscall.SIGCONT))
			require.Equal(t, "+OK\r\n", c[0].Do("FAILOVER", "TO", "127.0.0.1", strconv.Itoa(n[1].Port)))
			failoverDone(t, c[0])
			replicaOf(t, c[2], n[1])
			waitLinkUp(t, n[0])
			waitLinkUp(t, n[2])
			liveWrites(t, n[1].Addr, 2)
			waitConverged(t, n[1], n[0], n[2])
			assert.Contains(t, c[0].Do("ROLE"), "slave")
			assert.Contains(t, c[1].Do("ROLE"), "master")
			assert.Equal(t, psyncs+2, statInt(t, c[1], "sync_partial_ok"))
			assert.Equal(t, fulls, statInt(t, c[1], "sync_full"))
			compareDatasets(t, n[1], n[0])
			compareDatasets(t, n[1], n[2])

			// To any replica: node 0 is stopped, node 2 is chosen.
			psyncs = statInt(t, c[2], "sync_partial_ok")
			require.NoError(t, n[0].Signal(syscall.SIGSTOP))
			require.Equal(t, "+OK\r\n", c[1].Do("SET", "case", "1"))
			require.Equal(t, "+OK\r\n", c[1].Do("FAILOVER"))
			failoverDone(t, c[1])
			require.NoError(t, n[0].Signal(syscall.SIGCONT))
			replicaOf(t, c[0], n[2])
			waitLinkUp(t, n[0])
			waitLinkUp(t, n[1])
			waitConverged(t, n[2], n[0], n[1])
			assert.Contains(t, c[2].Do("ROLE"), "master")
			assert.Equal(t, psyncs+2, statInt(t, c[2], "sync_partial_ok"))
			compareDatasets(t, n[2], n[0])
			compareDatasets(t, n[2], n[1])

			// FORCE: node 0 is stopped and never acknowledges; at the
			// timeout node 2 fails over anyway and waits for it.
			psyncs, fulls = statInt(t, c[0], "sync_partial_ok"), statInt(t, c[0], "sync_full")
			require.NoError(t, n[0].Signal(syscall.SIGSTOP))
			require.Equal(t, "+OK\r\n", c[2].Do("SET", "case", "2"))
			require.Equal(t, "+OK\r\n", c[2].Do("FAILOVER", "TO", "127.0.0.1", strconv.Itoa(n[0].Port), "TIMEOUT", "100", "FORCE"))
			require.Eventually(t, func() bool {
				return infoField(t, c[2], "replication", "master_failover_state") == "failover-in-progress"
			}, 30*time.Second, 20*time.Millisecond)
			assert.Contains(t, c[1].Do("ROLE"), "slave", "never two masters")
			assert.Contains(t, c[2].Do("ROLE"), "slave")
			require.NoError(t, n[0].Signal(syscall.SIGCONT))
			failoverDone(t, c[2])
			replicaOf(t, c[1], n[0])
			waitLinkUp(t, n[1])
			waitLinkUp(t, n[2])
			waitConverged(t, n[0], n[1], n[2])
			assert.Contains(t, c[0].Do("ROLE"), "master")
			assert.Contains(t, n[2].Output(), "time out exceeded, failing over.")
			assert.Equal(t, psyncs+2, statInt(t, c[0], "sync_partial_ok"))
			assert.Equal(t, fulls, statInt(t, c[0], "sync_full"))
			assert.Equal(t, "$1\r\n2\r\n", c[0].Do("GET", "case"))
			compareDatasets(t, n[0], n[1])
			compareDatasets(t, n[0], n[2])

			// A timeout without FORCE ends the failover: nothing moves.
			psyncs, fulls = statInt(t, c[0], "sync_partial_ok"), statInt(t, c[0], "sync_full")
			require.NoError(t, n[1].Signal(syscall.SIGSTOP))
			require.Equal(t, "+OK\r\n", c[0].Do("SET", "case", "3"))
			require.Equal(t, "+OK\r\n", c[0].Do("FAILOVER", "TO", "127.0.0.1", strconv.Itoa(n[1].Port), "TIMEOUT", "300"))
			failoverDone(t, c[0])
			require.NoError(t, n[1].Signal(syscall.SIGCONT))
			waitConverged(t, n[0], n[1], n[2])
			assert.Contains(t, c[0].Do("ROLE"), "master")
			assert.Contains(t, n[0].Output(), "Replica never caught up before timeout")
			assert.Equal(t, psyncs, statInt(t, c[0], "sync_partial_ok"))
			assert.Equal(t, fulls, statInt(t, c[0], "sync_full"))
		})
	}
}

// TestFailoverTargetRefuses: a target that refuses the PSYNC (its ACL
// forbids it) ends the failover; the master is a master again, and its
// replicas come back with partial resyncs.
func TestFailoverTargetRefuses(t *testing.T) {
	parallelReplication(t)
	for _, name := range []string{"redis", "zredis"} {
		t.Run(name, func(t *testing.T) {
			RequireRedis(t)
			m := StartServer(t, name, "--repl-diskless-sync-delay", "0")
			mc := Dial(t, m.Addr)
			r1 := StartServer(t, name, "--replicaof", "127.0.0.1", strconv.Itoa(m.Port))
			r2 := StartServer(t, name, "--replicaof", "127.0.0.1", strconv.Itoa(m.Port))
			waitLinkUp(t, r1)
			waitLinkUp(t, r2)
			waitConverged(t, m, r1, r2)
			waitOnline(t, mc, 2)
			r1c := Dial(t, r1.Addr)
			require.Equal(t, "+OK\r\n", r1c.Do("ACL", "SETUSER", "default", "-psync"))
			psyncs, fulls := statInt(t, mc, "sync_partial_ok"), statInt(t, mc, "sync_full")

			// A write the stopped target has not acknowledged: the
			// failover waits for it.
			require.NoError(t, r1.Signal(syscall.SIGSTOP))
			require.Equal(t, "+OK\r\n", mc.Do("SET", "foo", "bar"))
			require.Equal(t, "+OK\r\n", mc.Do("FAILOVER", "TO", "127.0.0.1", strconv.Itoa(r1.Port)))
			require.NoError(t, r1.Signal(syscall.SIGCONT))
			failoverDone(t, mc)
			require.Equal(t, "+OK\r\n", r1c.Do("ACL", "SETUSER", "default", "+psync"))
			waitLinkUp(t, r1)
			waitLinkUp(t, r2)
			waitConverged(t, m, r1, r2)
			assert.Contains(t, mc.Do("ROLE"), "master")
			assert.Equal(t, psyncs+2, statInt(t, mc, "sync_partial_ok"))
			assert.Equal(t, fulls, statInt(t, mc, "sync_full"))
			waitOutput(t, m, "Failover target rejected psync request")
		})
	}
}

// TestFailoverExpiryStream: 10,000 keys expire over 3 seconds while the
// master fails over to a replica in the middle of them (the first due
// 2.5 s after they are set: the set-up before the failover has time to
// finish on a busy machine). Listeners on every node get each key
// exactly once: from the old master before the switch (its writes and
// expiry are held while it waits for the target), from the new master
// after it, none from a replica.
func TestFailoverExpiryStream(t *testing.T) {
	parallelReplication(t)
	requirePythonZMQ(t)
	const n = 10000
	var nodes [3]*Proc
	var eps [3]string
	for i := range nodes {
		eps[i] = zmqEndpoint(t)
		nodes[i] = StartZredis(t, "--repl-diskless-sync-delay", "0", "--expiry-zmq-endpoints", eps[i])
	}
	mc := Dial(t, nodes[0].Addr)
	for _, r := range nodes[1:] {
		replicaOf(t, Dial(t, r.Addr), nodes[0])
		waitLinkUp(t, r)
	}
	var ls [3]*pyListener
	for i := range ls {
		ls[i] = startListener(t, []string{eps[i]})
		waitInfo(t, Dial(t, nodes[i].Addr), "expiry_zmq_listeners", "1", 30*time.Second)
	}
	base := setExpiring(t, nodes[0].Addr, n, 3*time.Second, 2500*time.Millisecond)
	waitConverged(t, nodes[0], nodes[1], nodes[2])
	waitOnline(t, mc, 2)

	// Halfway through the deadlines, fail over to node 1.
	time.Sleep(time.Until(time.UnixMilli(base).Add(1500 * time.Millisecond)))
	require.Equal(t, "+OK\r\n", mc.Do("FAILOVER", "TO", "127.0.0.1", strconv.Itoa(nodes[1].Port)))
	failoverDone(t, mc)
	require.Equal(t, "+OK\r\n", Dial(t, nodes[2].Addr).Do("REPLICAOF", "127.0.0.1", strconv.Itoa(nodes[1].Port)))

	seen := make([]int, n)
	from := [3]int{}
	deadline := time.Now().Add(30 * time.Second)
	total := 0
	for total < n && time.Now().Before(deadline) {
		for i, l := range ls {
			for _, d := range l.quiet(50 * time.Millisecond) {
				seen[keyIndex(t, d)]++
				from[i]++
				total++
			}
		}
	}
	time.Sleep(300 * time.Millisecond)
	for i, l := range ls {
		for _, d := range l.quiet(100 * time.Millisecond) {
			seen[keyIndex(t, d)]++
			from[i]++
		}
	}
	t.Logf("messages: %d from the old master, %d from the new one, %d from the other replica", from[0], from[1], from[2])
	lost, dup := 0, 0
	for _, c := range seen {
		switch {
		case c == 0:
			lost++
		case c > 1:
			dup++
		}
	}
	assert.Zero(t, lost, "keys with no message")
	assert.Zero(t, dup, "keys with more than one message")
	assert.Zero(t, from[2], "the replica sent nothing")
	assert.NotZero(t, from[0], "the old master sent the keys due before the switch")
	assert.NotZero(t, from[1], "the new master sent the keys due after it")
	waitConverged(t, nodes[1], nodes[0], nodes[2])
	assert.Equal(t, ":0\r\n", mc.Do("DBSIZE"))
}
