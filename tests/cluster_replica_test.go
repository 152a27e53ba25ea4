package tests

// Cluster replicas end to end: zredis nodes as replicas in a cluster with
// redis-server 7.0 nodes (CLUSTER REPLICATE), promoted when their master
// dies or by CLUSTER FAILOVER, and zredis masters handing over to their
// replicas in a manual failover.

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zredis/zredis/internal/testsupport"
)

// tryDo sends one command to addr on a new connection and returns the
// raw reply, or the error: the node may be dead or busy.
func tryDo(addr string, args ...string) (string, error) {
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return "", err
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := nc.Write(Encode(args...)); err != nil {
		return "", err
	}
	var b bytes.Buffer
	err = readRaw(bufio.NewReader(nc), &b)
	return b.String(), err
}

// nodeFields is the CLUSTER NODES line of node id as p sees it, split
// in fields; nil when p does not know it or does not answer.
func nodeFields(t *testing.T, p *Proc, id string) []string {
	nodes, err := tryDo(p.Addr, "CLUSTER", "NODES")
	if err != nil {
		return nil
	}
	for _, l := range strings.Split(nodes, "\n") {
		if f := strings.Fields(l); len(f) >= 8 && f[0] == id {
			return f
		}
	}
	return nil
}

// isReplicaOf reports whether every one of ps sees node id as a replica of
// master.
func isReplicaOf(t *testing.T, ps []*Proc, id, master string) bool {
	for _, p := range ps {
		f := nodeFields(t, p, id)
		if f == nil || !strings.Contains(f[2], "slave") || f[3] != master {
			return false
		}
	}
	return true
}

// masterOf reports whether every one of ps sees node id as a master
// serving slots.
func masterOf(t *testing.T, ps []*Proc, id string) bool {
	for _, p := range ps {
		f := nodeFields(t, p, id)
		if f == nil || !strings.Contains(f[2], "master") || strings.Contains(f[2], "fail") || len(f) < 9 {
			return false
		}
	}
	return true
}

// clusterHealthy reports whether every one of ps says cluster_state:ok
// and knows n nodes.
func clusterHealthy(t *testing.T, ps []*Proc, n int) bool {
	for _, p := range ps {
		info, err := tryDo(p.Addr, "CLUSTER", "INFO")
		if err != nil || !strings.Contains(info, "cluster_state:ok") || !strings.Contains(info, "cluster_known_nodes:"+strconv.Itoa(n)+"\r\n") {
			return false
		}
	}
	return true
}

// requireChecked runs redis-cli --cluster check against every one of ps:
// every node agrees, every slot is covered.
func requireChecked(t *testing.T, ps []*Proc) {
	t.Helper()
	for _, p := range ps {
		// A node that just changed role may not have told every other
		// one yet: checked until it agrees, within a deadline.
		var out string
		ok := pollUntil(30*time.Second, func() bool {
			var code int
			out, code = clusterCLI(t, "--cluster", "check", p.Addr)
			return code == 0 && strings.Contains(out, "[OK] All nodes agree about slots configuration.") &&
				strings.Contains(out, "[OK] All 16384 slots covered.")
		})
		require.True(t, ok, "%s: %s", p.Name, out)
	}
}

func myID(t *testing.T, p *Proc) string {
	t.Helper()
	return bulkText(Dial(t, p.Addr).Do("CLUSTER", "MYID"))
}

// linkUp reports whether p's link to its master is up.
func linkUp(p *Proc) bool {
	info, err := tryDo(p.Addr, "INFO", "replication")
	return err == nil && strings.Contains(info, "master_link_status:up")
}

// CLUSTER REPLICATE and CLUSTER FAILOVER's refusals on a zredis node and
// on a redis-server node that joined the same cluster: the same replies
// (their own names aside); then both become replicas of a redis-server
// master.
func TestClusterReplicateDiff(t *testing.T) {
	RequireRedis(t)
	m := StartRedis(t, clusterNodeArgs(t)...)
	rr := StartRedis(t, clusterNodeArgs(t)...)
	zp := StartZredis(t, clusterNodeArgs(t)...)
	rp := StartRedis(t, clusterNodeArgs(t)...)
	all := []*Proc{m, rr, zp, rp}
	for _, p := range all[1:] {
		require.Equal(t, "+OK\r\n", Dial(t, p.Addr).Do("CLUSTER", "MEET", "127.0.0.1", strconv.Itoa(m.Port), strconv.Itoa(busPortOf(t, m))))
	}
	mID, rrID := myID(t, m), myID(t, rr)
	require.Eventually(t, func() bool {
		for _, p := range all {
			if !strings.Contains(Dial(t, p.Addr).Do("CLUSTER", "INFO"), "cluster_known_nodes:4\r\n") {
				return false
			}
		}
		return true
	}, 30*time.Second, 100*time.Millisecond, "the nodes do not meet")
	require.Equal(t, "+OK\r\n", Dial(t, rr.Addr).Do("CLUSTER", "REPLICATE", mID))
	require.Eventually(t, func() bool { return isReplicaOf(t, all, rrID, mID) }, 30*time.Second, 100*time.Millisecond)

	z, r := Dial(t, zp.Addr), Dial(t, rp.Addr)
	zid, rid := myID(t, zp), myID(t, rp)
	slot := strings.Trim(z.Do("CLUSTER", "KEYSLOT", "k"), ":\r\n")
	for _, args := range [][]string{
		{"CLUSTER", "REPLICATE", "nosuchnode"},
		{"CLUSTER", "REPLICATE", "0123456789012345678901234567890123456789"},
		{"CLUSTER", "REPLICATE", "<myid>"},
		{"CLUSTER", "REPLICATE", rrID},
		{"CLUSTER", "REPLICATE", mID, "extra"},
		{"CLUSTER", "FAILOVER"},
		{"CLUSTER", "FAILOVER", "FORCE"},
		{"CLUSTER", "FAILOVER", "TAKEOVER"},
		{"CLUSTER", "FAILOVER", "bogus"},
		{"CLUSTER", "FAILOVER", "FORCE", "extra"},
		{"CLUSTER", "ADDSLOTS", slot},
		{"CLUSTER", "REPLICATE", mID},
		{"SET", "k", "v"},
		{"CLUSTER", "DELSLOTS", slot},
		{"CLUSTER", "REPLICATE", mID},
		{"FLUSHALL"},
		{"CLUSTER", "REPLICATE", mID},
		{"CLUSTER", "REPLICATE", mID},
		{"CLUSTER", "REPLICATE", rrID},
		{"CLUSTER", "FAILOVER", "bogus"},
	} {
		za, ra := append([]string(nil), args...), append([]string(nil), args...)
		for i, a := range args {
			if a == "<myid>" {
				za[i], ra[i] = zid, rid
			}
		}
		zr, rr := z.Do(za...), r.Do(ra...)
		assert.Equal(t, strings.ReplaceAll(rr, rid, "<myid>"), strings.ReplaceAll(zr, zid, "<myid>"), "%q", args)
	}
	// Both are replicas of m in every node's view, and replicate it.
	require.Eventually(t, func() bool {
		return isReplicaOf(t, all, zid, mID) && isReplicaOf(t, all, rid, mID) && linkUp(zp) && linkUp(rp)
	}, 30*time.Second, 100*time.Millisecond, "the nodes do not become replicas of m")
	assert.Contains(t, z.Do("ROLE"), "slave")
	// A replica of a master without slots has nothing to fail over.
	assert.Equal(t, r.Do("CLUSTER", "FAILOVER"), z.Do("CLUSTER", "FAILOVER"))
	// CLUSTER RESET makes a replica a master again, alone.
	assert.Equal(t, r.Do("CLUSTER", "RESET"), z.Do("CLUSTER", "RESET"))
	for _, c := range []*Conn{z, r} {
		assert.True(t, strings.HasPrefix(c.Do("ROLE"), "*3\r\n$6\r\nmaster\r\n"))
		assert.Contains(t, c.Do("CLUSTER", "INFO"), "cluster_known_nodes:1\r\n")
		assert.Contains(t, c.Do("CLUSTER", "NODES"), "myself,master")
	}
}

// busPortOf is a node's cluster bus port, from its arguments.
func busPortOf(t *testing.T, p *Proc) int {
	t.Helper()
	for _, l := range strings.Split(Dial(t, p.Addr).Do("CONFIG", "GET", "cluster-port"), "\r\n") {
		if n, err := strconv.Atoi(l); err == nil && n > 0 {
			return n
		}
	}
	t.Fatalf("%s: no cluster-port", p.Name)
	return 0
}

// clusterWriter writes keys through a ClusterClient until stopped, and keeps
// those acknowledged: a failover may refuse some, never lose one.
type clusterWriter struct {
	cc   *redis.ClusterClient
	stop chan struct{}
	done chan struct{}
	mu   sync.Mutex
	acks map[string]string
}

func startClusterWriter(addrs []string, prefix string) *clusterWriter {
	w := &clusterWriter{cc: redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, MaxRedirects: 16, MaxRetries: 1,
		DialTimeout: time.Second, ReadTimeout: 5 * time.Second, WriteTimeout: 5 * time.Second}),
		stop: make(chan struct{}), done: make(chan struct{}), acks: map[string]string{}}
	go func() {
		defer close(w.done)
		ctx := context.Background()
		for i := 0; ; i++ {
			select {
			case <-w.stop:
				return
			default:
			}
			k, v := fmt.Sprintf("%s:%d", prefix, i), strconv.Itoa(i)
			if w.cc.Set(ctx, k, v, 0).Err() == nil {
				w.mu.Lock()
				w.acks[k] = v
				w.mu.Unlock()
			} else {
				// A node died or changed role: the client asks the
				// cluster who serves what rather than wait on it.
				w.cc.ReloadState(ctx)
				time.Sleep(50 * time.Millisecond)
			}
		}
	}()
	return w
}

// count is how many writes were acknowledged so far.
func (w *clusterWriter) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.acks)
}

// finish stops the writer and checks every acknowledged write is read
// back through a new client of addrs.
func (w *clusterWriter) finish(t *testing.T, addrs []string) {
	t.Helper()
	w.halt()
	w.verify(t, addrs)
}

// halt stops the writer: before a master is killed, so that what it
// acknowledged reached its replicas (WAIT) and may be checked later.
func (w *clusterWriter) halt() {
	close(w.stop)
	<-w.done
	w.cc.Close()
}

// verify checks, after finish, that every acknowledged write is read
// back.
func (w *clusterWriter) verify(t *testing.T, addrs []string) {
	t.Helper()
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, MaxRedirects: 16})
	defer cc.Close()
	ctx := context.Background()
	require.NotEmpty(t, w.acks)
	lost := 0
	for k, v := range w.acks {
		got, err := cc.Get(ctx, k).Result()
		if err != nil || got != v {
			lost++
			if lost < 5 {
				t.Errorf("acknowledged write %s=%s read back as %q, %v", k, v, got, err)
			}
		}
	}
	require.Zero(t, lost, "acknowledged writes lost (of %d)", len(w.acks))
}

// waitWrites waits until the writer got n more writes acknowledged.
func (w *clusterWriter) waitWrites(t *testing.T, n int) {
	t.Helper()
	from := w.count()
	require.True(t, pollUntil(60*time.Second, func() bool { return w.count() >= from+n }),
		"the cluster does not take writes")
}

// A zredis replica of a redis-server master in a mixed cluster, added by
// redis-cli --cluster add-node --cluster-slave (CLUSTER REPLICATE): kill
// -9 of the master, and the zredis replica wins the election; every node
// agrees, every acknowledged write is read (those before the kill once
// WAIT saw them replicated, and those after). Its expiry listener got
// nothing while it was a replica (the keys its master expired), and gets
// the keys of its slots that expire once it is the master, those whose
// deadline passed while it waited for the election included.
func TestClusterZredisReplicaPromoted(t *testing.T) {
	RequireRedis(t)
	requirePythonZMQ(t)
	ctx := context.Background()
	ep := zmqEndpoint(t)
	ra := StartRedis(t, clusterNodeArgs(t)...)
	rb := StartRedis(t, clusterNodeArgs(t)...)
	zc := StartZredis(t, clusterNodeArgs(t)...)
	zr := StartZredis(t, append(clusterNodeArgs(t), "--expiry-zmq-endpoints", ep)...)
	out, code := clusterCLI(t, "--cluster", "create", ra.Addr, rb.Addr, zc.Addr, "--cluster-yes")
	require.Equal(t, 0, code, out)
	raID, zrID := myID(t, ra), myID(t, zr)
	out, code = clusterCLI(t, "--cluster", "add-node", zr.Addr, ra.Addr, "--cluster-slave", "--cluster-master-id", raID)
	require.Equal(t, 0, code, out)
	all := []*Proc{ra, rb, zc, zr}
	require.Eventually(t, func() bool {
		return clusterHealthy(t, all, 4) && isReplicaOf(t, all, zrID, raID) && linkUp(zr)
	}, 60*time.Second, 100*time.Millisecond, "the zredis replica does not join")
	requireChecked(t, all)
	l := startListener(t, []string{ep})
	waitInfo(t, Dial(t, zr.Addr), "expiry_zmq_listeners", "1", 30*time.Second)

	w := startClusterWriter([]string{ra.Addr, zc.Addr}, "w")
	w.waitWrites(t, 500)
	w.halt()
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{ra.Addr}, MaxRedirects: 16})
	defer cc.Close()
	// Keys that expire while ra is up (ra sends their DEL), and keys due
	// a few seconds on, which the promoted replica expires.
	for i := range 200 {
		require.NoError(t, cc.Set(ctx, fmt.Sprintf("early:%d", i), "e", 300*time.Millisecond).Err())
	}
	for i := range 200 {
		require.NoError(t, cc.Set(ctx, fmt.Sprintf("late:%d", i), "l", 8*time.Second).Err())
	}
	a := redis.NewClient(&redis.Options{Addr: ra.Addr})
	defer a.Close()
	late, err := a.Keys(ctx, "late:*").Result()
	require.NoError(t, err)
	require.NotEmpty(t, late)
	require.True(t, pollUntil(30*time.Second, func() bool {
		n, err := a.Keys(ctx, "early:*").Result()
		return err == nil && len(n) == 0
	}), "ra does not expire its keys")
	require.Equal(t, ":1\r\n", Dial(t, ra.Addr).Do("WAIT", "1", "5000"))
	// A READONLY client reads the master's slots on the replica; another
	// is sent to the master.
	held, err := a.Keys(ctx, "w:*").Result()
	require.NoError(t, err)
	require.NotEmpty(t, held)
	ro := Dial(t, zr.Addr)
	assert.Equal(t, "+OK\r\n", ro.Do("READONLY"))
	assert.True(t, strings.HasPrefix(ro.Do("GET", held[0]), "$"))
	assert.True(t, strings.HasPrefix(ro.Do("SET", held[0], "x"), "-MOVED "))
	assert.True(t, strings.HasPrefix(Dial(t, zr.Addr).Do("GET", held[0]), "-MOVED "))
	require.Empty(t, l.quiet(time.Second), "a replica sends no expiry message")
	// The replica's offset reaches the other nodes: CLUSTER SLOTS lists it
	// with ra's slots, on a redis-server node and on itself.
	for _, p := range []*Proc{rb, zr} {
		c := redis.NewClient(&redis.Options{Addr: p.Addr})
		defer c.Close()
		require.True(t, pollUntil(30*time.Second, func() bool {
			slots, err := c.ClusterSlots(ctx).Result()
			if err != nil {
				return false
			}
			for _, r := range slots {
				if len(r.Nodes) == 2 && r.Nodes[0].ID == raID && r.Nodes[1].ID == zrID {
					return true
				}
			}
			return false
		}), "%s: CLUSTER SLOTS does not list the zredis replica", p.Name)
	}

	ra.Kill()
	live := []*Proc{rb, zc, zr}
	require.Eventually(t, func() bool {
		return masterOf(t, live, zrID) && clusterHealthy(t, live, 4)
	}, 60*time.Second, 200*time.Millisecond, "the zredis replica is not promoted")
	assert.Contains(t, Dial(t, zr.Addr).Do("ROLE"), "master")
	w2 := startClusterWriter([]string{rb.Addr, zr.Addr}, "w2")
	w2.waitWrites(t, 200)
	requireChecked(t, live)
	w2.finish(t, []string{rb.Addr, zr.Addr})
	w.verify(t, []string{rb.Addr, zr.Addr})

	// Every late key of its slots expires on the new master, with its
	// message; none of the early ones had one.
	got := map[string]bool{}
	require.True(t, pollUntil(60*time.Second, func() bool {
		for _, d := range l.quiet(100 * time.Millisecond) {
			got[string(d.Key)] = true
		}
		return len(got) >= len(late)
	}), "messages for %d of %d keys", len(got), len(late))
	for _, k := range late {
		assert.True(t, got[k], k)
	}
	for k := range got {
		assert.True(t, strings.HasPrefix(k, "late:"), k)
	}
}

// CLUSTER FAILOVER while a client writes: on a redis-server replica of a
// zredis master (the zredis master holds writes and gives its offset),
// back on the zredis node, now a replica of the redis-server node, and
// on a zredis replica of a redis-server master. Each time the replica
// becomes the master, its old master its replica, every node agrees and
// no acknowledged write is lost.
func TestClusterManualFailover(t *testing.T) {
	RequireRedis(t)
	za := StartZredis(t, clusterNodeArgs(t)...)
	rb := StartRedis(t, clusterNodeArgs(t)...)
	rc := StartRedis(t, clusterNodeArgs(t)...)
	rd := StartRedis(t, clusterNodeArgs(t)...)
	// ze is restarted on its own directory and ports.
	zeOpts := testsupport.Options{Name: "zredis", Bin: zredisBin, Args: clusterNodeArgs(t), Dir: t.TempDir(), Port: FreePort(t)}
	ze := testsupport.Start(t, zeOpts)
	out, code := clusterCLI(t, "--cluster", "create", za.Addr, rb.Addr, rc.Addr, "--cluster-yes")
	require.Equal(t, 0, code, out)
	zaID, rbID, rdID, zeID := myID(t, za), myID(t, rb), myID(t, rd), myID(t, ze)
	out, code = clusterCLI(t, "--cluster", "add-node", rd.Addr, za.Addr, "--cluster-slave", "--cluster-master-id", zaID)
	require.Equal(t, 0, code, out)
	out, code = clusterCLI(t, "--cluster", "add-node", ze.Addr, rb.Addr, "--cluster-slave", "--cluster-master-id", rbID)
	require.Equal(t, 0, code, out)
	all := []*Proc{za, rb, rc, rd, ze}
	require.Eventually(t, func() bool {
		return clusterHealthy(t, all, 5) && isReplicaOf(t, all, rdID, zaID) && isReplicaOf(t, all, zeID, rbID) &&
			linkUp(rd) && linkUp(ze)
	}, 60*time.Second, 100*time.Millisecond, "the replicas do not join")

	w := startClusterWriter([]string{za.Addr, rb.Addr, rc.Addr}, "mf")
	type step struct {
		replica, master     *Proc
		replicaID, masterID string
		args                []string
	}
	// failover runs CLUSTER FAILOVER args on the replica and waits until
	// every node sees it as the master, its old master as its replica.
	failover := func(st step) {
		t.Helper()
		require.Eventually(t, func() bool { return linkUp(st.replica) }, 60*time.Second, 100*time.Millisecond)
		args := append([]string{"CLUSTER", "FAILOVER"}, st.args...)
		require.Equal(t, "+OK\r\n", Dial(t, st.replica.Addr).Do(args...), st.replica.Name)
		require.Eventually(t, func() bool {
			return masterOf(t, all, st.replicaID) && isReplicaOf(t, all, st.masterID, st.replicaID) &&
				clusterHealthy(t, all, 5)
		}, 60*time.Second, 200*time.Millisecond, "%s does not take over from %s (%q)", st.replica.Name, st.master.Name, args)
		require.Eventually(t, func() bool { return linkUp(st.master) }, 60*time.Second, 100*time.Millisecond,
			"the old master %s does not replicate the new one", st.master.Name)
	}
	for _, st := range []step{
		{rd, za, rdID, zaID, nil}, // redis-server replica, zredis master
		{za, rd, zaID, rdID, nil}, // zredis replica, redis-server master
		{ze, rb, zeID, rbID, nil}, // zredis replica, redis-server master
		{rb, ze, rbID, zeID, nil}, // and back: ze is a replica again
	} {
		w.waitWrites(t, 300)
		failover(st)
		w.waitWrites(t, 300)
	}
	// A zredis replica restarted: nodes.conf makes it a replica of its
	// master again, which it replicates.
	ze.Stop()
	ze = testsupport.Start(t, zeOpts)
	all[4] = ze
	require.Eventually(t, func() bool {
		return isReplicaOf(t, all, zeID, rbID) && linkUp(ze) && clusterHealthy(t, all, 5)
	}, 60*time.Second, 100*time.Millisecond, "the restarted replica does not replicate its master")
	assert.Contains(t, Dial(t, ze.Addr).Do("ROLE"), "slave")
	w.waitWrites(t, 300)
	requireChecked(t, all)
	w.finish(t, []string{rb.Addr, rc.Addr})

	// FORCE (no handshake with the master) and TAKEOVER (no election),
	// with no write in flight: they may lose what the replica had not
	// received.
	require.Equal(t, ":1\r\n", Dial(t, rb.Addr).Do("WAIT", "1", "5000"))
	failover(step{ze, rb, zeID, rbID, []string{"FORCE"}})
	failover(step{rb, ze, rbID, zeID, []string{"TAKEOVER"}})
	require.Equal(t, ":1\r\n", Dial(t, rb.Addr).Do("WAIT", "1", "5000"))
	failover(step{ze, rb, zeID, rbID, []string{"TAKEOVER"}})
	requireChecked(t, all)
	w.verify(t, []string{rb.Addr, rc.Addr})
}

// A zredis master with two zredis replicas, one with
// cluster-replica-no-failover: killed, the other replica is elected, and
// the one that may not fail over follows it as its new master's replica.
// Every acknowledged write is read.
func TestClusterZredisOnlyFailover(t *testing.T) {
	RequireRedis(t) // redis-cli
	za := StartZredis(t, clusterNodeArgs(t)...)
	zb := StartZredis(t, clusterNodeArgs(t)...)
	zc := StartZredis(t, clusterNodeArgs(t)...)
	// Without migration: a master with two replicas gives one to a
	// master without any (TestClusterReplicaMigration).
	noMigration := func() []string { return append(clusterNodeArgs(t), "--cluster-allow-replica-migration", "no") }
	r1 := StartZredis(t, noMigration()...)
	r2 := StartZredis(t, append(noMigration(), "--cluster-replica-no-failover", "yes")...)
	out, code := clusterCLI(t, "--cluster", "create", za.Addr, zb.Addr, zc.Addr, "--cluster-yes")
	require.Equal(t, 0, code, out)
	zaID, r1ID, r2ID := myID(t, za), myID(t, r1), myID(t, r2)
	for _, r := range []*Proc{r1, r2} {
		out, code = clusterCLI(t, "--cluster", "add-node", r.Addr, za.Addr, "--cluster-slave", "--cluster-master-id", zaID)
		require.Equal(t, 0, code, out)
	}
	all := []*Proc{za, zb, zc, r1, r2}
	require.Eventually(t, func() bool {
		return clusterHealthy(t, all, 5) && isReplicaOf(t, all, r1ID, zaID) && isReplicaOf(t, all, r2ID, zaID) &&
			linkUp(r1) && linkUp(r2)
	}, 60*time.Second, 100*time.Millisecond, "the replicas do not join")
	f := nodeFields(t, zb, r2ID)
	require.NotNil(t, f)
	assert.Contains(t, f[2], "nofailover")

	w := startClusterWriter([]string{za.Addr, zb.Addr}, "z")
	w.waitWrites(t, 500)
	w.halt()
	require.Equal(t, ":2\r\n", Dial(t, za.Addr).Do("WAIT", "2", "5000"))
	za.Kill()
	live := []*Proc{zb, zc, r1, r2}
	require.Eventually(t, func() bool {
		return masterOf(t, live, r1ID) && isReplicaOf(t, live, r2ID, r1ID) && clusterHealthy(t, live, 5) && linkUp(r2)
	}, 60*time.Second, 200*time.Millisecond, "r1 is not elected, or r2 does not follow it")
	w2 := startClusterWriter([]string{zb.Addr, r1.Addr}, "z2")
	w2.waitWrites(t, 200)
	requireChecked(t, live)
	w2.finish(t, []string{zb.Addr, r1.Addr})
	w.verify(t, []string{zb.Addr, r1.Addr})
}

// Replica migration: a master's replica fails, and one of a zredis
// master's two zredis replicas moves to it (clusterHandleSlaveMigration)
// after the delay, and replicates it.
func TestClusterReplicaMigration(t *testing.T) {
	RequireRedis(t)
	za := StartZredis(t, clusterNodeArgs(t)...)
	zb := StartZredis(t, clusterNodeArgs(t)...)
	rc := StartRedis(t, clusterNodeArgs(t)...)
	r1 := StartZredis(t, clusterNodeArgs(t)...)
	r2 := StartZredis(t, clusterNodeArgs(t)...)
	r3 := StartRedis(t, clusterNodeArgs(t)...)
	r4 := StartRedis(t, clusterNodeArgs(t)...) // zb's replica: only rc is left without one
	out, code := clusterCLI(t, "--cluster", "create", za.Addr, zb.Addr, rc.Addr, "--cluster-yes")
	require.Equal(t, 0, code, out)
	zaID, zbID, rcID, r1ID, r2ID, r3ID := myID(t, za), myID(t, zb), myID(t, rc), myID(t, r1), myID(t, r2), myID(t, r3)
	for _, p := range [][2]*Proc{{r3, rc}, {r4, zb}} {
		out, code = clusterCLI(t, "--cluster", "add-node", p[0].Addr, za.Addr, "--cluster-slave", "--cluster-master-id", myID(t, p[1]))
		require.Equal(t, 0, code, out)
	}
	for _, r := range []*Proc{r1, r2} {
		out, code = clusterCLI(t, "--cluster", "add-node", r.Addr, za.Addr, "--cluster-slave", "--cluster-master-id", zaID)
		require.Equal(t, 0, code, out)
	}
	all := []*Proc{za, zb, rc, r1, r2, r3, r4}
	require.Eventually(t, func() bool {
		return clusterHealthy(t, all, 7) && isReplicaOf(t, all, r1ID, zaID) && isReplicaOf(t, all, r2ID, zaID) &&
			isReplicaOf(t, all, r3ID, rcID) && isReplicaOf(t, all, myID(t, r4), zbID) && linkUp(r1) && linkUp(r2) && linkUp(r3)
	}, 60*time.Second, 100*time.Millisecond, "the replicas do not join")

	r3.Kill()
	live := []*Proc{za, zb, rc, r1, r2, r4}
	require.Eventually(t, func() bool {
		return clusterHealthy(t, live, 7) && (isReplicaOf(t, live, r1ID, zaID) && isReplicaOf(t, live, r2ID, rcID) && linkUp(r2) ||
			isReplicaOf(t, live, r2ID, zaID) && isReplicaOf(t, live, r1ID, rcID) && linkUp(r1))
	}, 90*time.Second, 200*time.Millisecond, "no replica migrates to the master whose replica failed")
}
