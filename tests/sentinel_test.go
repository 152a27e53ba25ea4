package tests

// Stock Redis Sentinel 7.0 managing zredis. Three sentinels
// (`redis-server <file> --sentinel`, quorum 2, down-after-milliseconds
// 2000) watch a group of zredis and redis-server nodes: they discover the
// replicas through the master's INFO and each other through
// __sentinel__:hello, fail over a killed master and a live one (SENTINEL
// FAILOVER), reconfigure the nodes with their MULTI ... EXEC transaction,
// whose CONFIG REWRITE rewrites each node's configuration file, and turn
// an old master that comes back into a replica. replica-priority 0 is
// never promoted; replica-announced no is hidden from SENTINEL REPLICAS.
// The reconfiguration transaction itself, and the file it rewrites, are
// compared with redis-server's. The killed-master test runs alone, as
// it measures the failover time; the other groups run in parallel.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zredis/zredis/internal/testsupport"
)

const (
	sentinelGroup     = "mymaster"
	sentinelDownAfter = 2000 // down-after-milliseconds
)

// groupNode is a zredis or redis-server of a group the sentinels watch,
// started from a configuration file of its own, as under Sentinel: its
// reconfiguration ends with CONFIG REWRITE.
type groupNode struct {
	*Proc
	kind string // "zredis" or "redis"
	conf string // the configuration file
	opts testsupport.Options
}

// startGroupNode starts a node of kind on a free port from a new
// configuration file: port, bind, dir, no persistence, diskless sync
// without delay, then lines.
func startGroupNode(t *testing.T, kind string, lines ...string) *groupNode {
	t.Helper()
	bin := serverBin(t, kind)
	dir := t.TempDir()
	port := FreePort(t)
	conf := filepath.Join(dir, "node.conf")
	text := fmt.Sprintf("port %d\nbind 127.0.0.1\ndir %s\nsave \"\"\nappendonly no\nrepl-diskless-sync-delay 0\n", port, dir)
	for _, l := range lines {
		text += l + "\n"
	}
	require.NoError(t, os.WriteFile(conf, []byte(text), 0o644))
	n := &groupNode{kind: kind, conf: conf, opts: testsupport.Options{
		Name: kind, Bin: bin, Args: []string{conf}, ArgsOnly: true, Port: port, Dir: dir}}
	n.Proc = testsupport.Start(t, n.opts)
	return n
}

// restart starts a killed node again: same port, directory and
// configuration file (as Sentinel may have rewritten it).
func (n *groupNode) restart(t *testing.T) {
	t.Helper()
	n.Proc = testsupport.Start(t, n.opts)
}

// replicaOfLine is the directive that makes a node a replica of m.
func replicaOfLine(m *groupNode) string { return fmt.Sprintf("replicaof 127.0.0.1 %d", m.Port) }

// replicaOfDirectives returns the replicaof/slaveof lines of n's file.
func replicaOfDirectives(t *testing.T, n *groupNode) []string {
	t.Helper()
	b, err := os.ReadFile(n.conf)
	require.NoError(t, err)
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "replicaof ") || strings.HasPrefix(l, "slaveof ") {
			out = append(out, l)
		}
	}
	return out
}

// sentinelProc is one sentinel and a client of it.
type sentinelProc struct {
	*Proc
	c *redis.SentinelClient
}

// startSentinels starts three sentinels monitoring master (quorum 2,
// down-after-milliseconds 2000, failover-timeout 10000), each with a
// writable configuration file in a directory of its own. They are
// stopped before the nodes, which were started first. A failing test
// shows the end of their logs.
func startSentinels(t *testing.T, master *groupNode) []*sentinelProc {
	t.Helper()
	return startSentinelsOn(t, master.Port, 10000)
}

// startSentinelsOn is startSentinels for a master at 127.0.0.1:port
// (a proxy's port), with failover-timeout failoverTimeout ms.
func startSentinelsOn(t *testing.T, port, failoverTimeout int) []*sentinelProc {
	t.Helper()
	bin := RequireRedis(t)
	var ss []*sentinelProc
	for range 3 {
		dir := t.TempDir()
		sport := FreePort(t)
		conf := filepath.Join(dir, "sentinel.conf")
		text := fmt.Sprintf("port %d\nbind 127.0.0.1\ndir %s\nsentinel resolve-hostnames no\n"+
			"sentinel monitor %s 127.0.0.1 %d 2\n"+
			"sentinel down-after-milliseconds %[3]s %[5]d\n"+
			"sentinel failover-timeout %[3]s %[6]d\n",
			sport, dir, sentinelGroup, port, sentinelDownAfter, failoverTimeout)
		require.NoError(t, os.WriteFile(conf, []byte(text), 0o644))
		p := testsupport.Start(t, testsupport.Options{Name: "sentinel", Bin: bin,
			Args: []string{conf, "--sentinel"}, ArgsOnly: true, Port: sport, Dir: dir})
		t.Cleanup(func() {
			if t.Failed() {
				out := p.Output()
				if len(out) > 4000 {
					out = out[len(out)-4000:]
				}
				t.Logf("sentinel %s log (end):\n%s", p.Addr, out)
			}
		})
		c := redis.NewSentinelClient(&redis.Options{Addr: p.Addr, Protocol: 2, DisableIdentity: true})
		t.Cleanup(func() { c.Close() })
		ss = append(ss, &sentinelProc{Proc: p, c: c})
	}
	return ss
}

// waitUntil polls cond every 20 ms until it holds, failing the test
// after timeout.
func waitUntil(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(timeout); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not reached in %s", what, timeout)
		}
	}
}

// sentinelReplicas is SENTINEL REPLICAS of the group, by "ip:port".
func sentinelReplicas(s *sentinelProc) map[string]map[string]string {
	list, err := s.c.Replicas(context.Background(), sentinelGroup).Result()
	if err != nil {
		return nil
	}
	out := map[string]map[string]string{}
	for _, r := range list {
		out[r["name"]] = r
	}
	return out
}

// masterAddrOf is SENTINEL GET-MASTER-ADDR-BY-NAME as "ip:port".
func masterAddrOf(s *sentinelProc) string {
	a, err := s.c.GetMasterAddrByName(context.Background(), sentinelGroup).Result()
	if err != nil || len(a) != 2 {
		return ""
	}
	return a[0] + ":" + a[1]
}

// waitDiscovered waits until every sentinel names master, lists each of
// replicas as a replica with its link up (flags exactly "slave"), and
// knows the two other sentinels.
func waitDiscovered(t *testing.T, ss []*sentinelProc, master *groupNode, replicas ...*groupNode) {
	t.Helper()
	ctx := context.Background()
	waitUntil(t, 60*time.Second, "discovery", func() bool {
		for _, s := range ss {
			if masterAddrOf(s) != master.Addr {
				return false
			}
			rs := sentinelReplicas(s)
			for _, r := range replicas {
				if rs[r.Addr]["flags"] != "slave" || rs[r.Addr]["master-link-status"] != "ok" {
					return false
				}
			}
			others, err := s.c.Sentinels(ctx, sentinelGroup).Result()
			if err != nil || len(others) != 2 {
				return false
			}
		}
		return true
	})
	// A view is current within a second (PINGs) or ten (INFO); a busy
	// machine can delay a reply: wait for a current view before checking
	// that it is one.
	pollUntil(30*time.Second, func() bool {
		for _, s := range ss {
			m, err := s.c.Master(ctx, sentinelGroup).Result()
			if err != nil || !fresh(m) {
				return false
			}
			for _, r := range sentinelReplicas(s) {
				if !fresh(r) {
					return false
				}
			}
		}
		return true
	})
	for _, s := range ss {
		m, err := s.c.Master(ctx, sentinelGroup).Result()
		require.NoError(t, err)
		assert.Equal(t, "master", m["flags"], "SENTINEL MASTER flags")
		assert.Len(t, sentinelReplicas(s), len(replicas))
		assert.Equal(t, "2", m["num-other-sentinels"])
		assert.Equal(t, "master", m["role-reported"])
		assertFresh(t, m)
		for _, r := range sentinelReplicas(s) {
			assertFresh(t, r)
			assert.Equal(t, "slave", r["role-reported"], r["name"])
			assert.Equal(t, "127.0.0.1", r["master-host"], r["name"])
			assert.Equal(t, strconv.Itoa(master.Port), r["master-port"], r["name"])
			assert.Equal(t, "1", r["replica-announced"], r["name"])
		}
	}
}

// assertFresh checks that a sentinel's view of an instance is current:
// it answered a PING less than 2 s ago (one a second) and an INFO less
// than 11 s ago (one every 10 s).
func assertFresh(t *testing.T, inst map[string]string) {
	t.Helper()
	ping, err1 := strconv.Atoi(inst["last-ok-ping-reply"])
	info, err2 := strconv.Atoi(inst["info-refresh"])
	assert.True(t, err1 == nil && ping < 2000, "%s: last-ok-ping-reply %q", inst["name"], inst["last-ok-ping-reply"])
	assert.True(t, err2 == nil && info < 11000, "%s: info-refresh %q", inst["name"], inst["info-refresh"])
}

// fresh is assertFresh's condition, for waiting.
func fresh(inst map[string]string) bool {
	ping, err1 := strconv.Atoi(inst["last-ok-ping-reply"])
	info, err2 := strconv.Atoi(inst["info-refresh"])
	return err1 == nil && ping < 2000 && err2 == nil && info < 11000
}

// waitSwitch waits until all sentinels name a master other than old and
// agree on it; it returns that address, and how long after start the
// first sentinel, then the last one, answered it.
func waitSwitch(t *testing.T, ss []*sentinelProc, old *groupNode, start time.Time) (string, time.Duration, time.Duration) {
	t.Helper()
	// Time for several elections: one that fails (two sentinels voting
	// for themselves, likelier on a busy machine) is retried only after
	// twice the failover-timeout (20 s).
	return waitSwitchWithin(t, ss, old, start, 90*time.Second)
}

// waitSwitchWithin is waitSwitch failing after timeout from start.
func waitSwitchWithin(t *testing.T, ss []*sentinelProc, old *groupNode, start time.Time, timeout time.Duration) (string, time.Duration, time.Duration) {
	t.Helper()
	seen := make([]time.Duration, len(ss))
	addrs := make([]string, len(ss))
	deadline := start.Add(timeout)
	for {
		done := true
		for i, s := range ss {
			if seen[i] != 0 {
				continue
			}
			if a := masterAddrOf(s); a != "" && a != old.Addr {
				seen[i], addrs[i] = time.Since(start), a
			} else {
				done = false
			}
		}
		if done {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the sentinels did not switch from %s: %q", old.Addr, addrs)
		}
		time.Sleep(10 * time.Millisecond)
	}
	first, last := seen[0], seen[0]
	for i := range ss {
		require.Equal(t, addrs[0], addrs[i], "the sentinels agree on the new master")
		first, last = min(first, seen[i]), max(last, seen[i])
	}
	return addrs[0], first, last
}

// nodeReplInfo is INFO replication of the node at addr as a map, read
// on a new connection (nil on an error): the sentinels' reconfiguration
// kills the normal clients of the node it reconfigures.
func nodeReplInfo(addr string) map[string]string {
	c := redis.NewClient(&redis.Options{Addr: addr, Protocol: 2, DisableIdentity: true, MaxRetries: -1})
	defer c.Close()
	raw, err := c.Info(context.Background(), "replication").Result()
	if err != nil {
		return nil
	}
	m := map[string]string{}
	for _, line := range strings.Split(raw, "\r\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			m[k] = v
		}
	}
	return m
}

// waitFollows waits until replica is a replica of master with its link
// up, then until it applied master's whole stream.
func waitFollows(t *testing.T, master, replica *groupNode) {
	t.Helper()
	waitUntil(t, 30*time.Second, replica.Addr+" follows "+master.Addr, func() bool {
		info := nodeReplInfo(replica.Addr)
		return info["role"] == "slave" && info["master_port"] == strconv.Itoa(master.Port) &&
			info["master_link_status"] == "up"
	})
	waitConverged(t, master.Proc, replica.Proc)
}

// checkSentinelClients checks how the sentinels use the master: two
// named connections each (CLIENT SETNAME sentinel-<id>-cmd and
// -pubsub, this one subscribed to __sentinel__:hello), a PING a second
// and a hello PUBLISH every two seconds from each.
func checkSentinelClients(t *testing.T, ss []*sentinelProc, master *groupNode) {
	t.Helper()
	ctx := context.Background()
	c := Dial(t, master.Addr)
	clients := map[string]string{}
	list := bulkElems("*1\r\n" + c.Do("CLIENT", "LIST"))[0] // the reply is one bulk string
	for _, line := range strings.Split(strings.TrimSpace(list), "\n") {
		for _, f := range strings.Fields(line) {
			if name, ok := strings.CutPrefix(f, "name="); ok && name != "" {
				clients[name] = line
			}
		}
	}
	for _, s := range ss {
		cmd := redis.NewStringCmd(ctx, "SENTINEL", "MYID")
		require.NoError(t, s.c.Process(ctx, cmd))
		prefix := "sentinel-" + cmd.Val()[:8]
		require.Contains(t, clients, prefix+"-cmd")
		require.Contains(t, clients, prefix+"-pubsub")
		assert.Contains(t, clients[prefix+"-pubsub"], " flags=P ")
		assert.Contains(t, clients[prefix+"-pubsub"], " sub=1 ")
	}
	assert.Equal(t, "*2\r\n$18\r\n__sentinel__:hello\r\n:3\r\n", c.Do("PUBSUB", "NUMSUB", "__sentinel__:hello"))
	calls := func() (ping, publish int) {
		for _, line := range strings.Split(c.Do("INFO", "commandstats"), "\r\n") {
			n := 0
			if _, rest, ok := strings.Cut(line, ":calls="); ok {
				n, _ = strconv.Atoi(strings.SplitN(rest, ",", 2)[0])
			}
			switch {
			case strings.HasPrefix(line, "cmdstat_ping:"):
				ping = n
			case strings.HasPrefix(line, "cmdstat_publish:"):
				publish = n
			}
		}
		return
	}
	before := time.Now()
	ping0, pub0 := calls()
	time.Sleep(4 * time.Second)
	ping1, pub1 := calls()
	// 3 sentinels: about 12 PINGs (one a second each) and one or two
	// hellos each (one every two seconds, a little more) in 4 s. A busy
	// machine may hold this test longer than the 4 s between the counts:
	// the upper bounds grow with the time that really passed.
	window := time.Since(before).Seconds()
	maxPing, maxPub := max(18, int(18*window/4)), max(9, int(9*window/4))
	assert.True(t, ping1-ping0 >= 8 && ping1-ping0 <= maxPing, "PINGs in %.1f s: %d", window, ping1-ping0)
	assert.True(t, pub1-pub0 >= 3 && pub1-pub0 <= maxPub, "hello PUBLISHes in %.1f s: %d", window, pub1-pub0)
	assert.Contains(t, c.Do("INFO", "commandstats"), "cmdstat_client|setname:calls=")
}

// failoverKilled runs a group under three sentinels: master m, replicas
// rs, data written and replicated (and, with a zredis master, how the
// sentinels use it checked); then kills m (kill -9) and waits for the
// sentinels to switch, logging how long it took. The new master must be
// want (any of rs when nil); it takes writes, the other replicas follow
// it, and m, restarted with its configuration file (not rewritten: it
// was down), comes back as a master and is turned into a replica of the
// new one.
func failoverKilled(t *testing.T, m, want *groupNode, rs ...*groupNode) {
	t.Helper()
	fillReplData(t, Dial(t, m.Addr), "pre")
	for _, r := range rs {
		waitFollows(t, m, r)
	}
	ss := startSentinels(t, m)
	waitDiscovered(t, ss, m, rs...)
	if m.kind == "zredis" {
		checkSentinelClients(t, ss, m)
	}

	start := time.Now()
	m.Kill()
	addr, first, last := waitSwitch(t, ss, m, start)
	var nm *groupNode
	var others []*groupNode
	for _, r := range rs {
		if r.Addr == addr {
			nm = r
		} else {
			others = append(others, r)
		}
	}
	require.NotNil(t, nm, "the new master %s is one of the replicas", addr)
	if want != nil {
		require.Equal(t, want.Addr, nm.Addr, "the replica promoted")
	}
	t.Logf("failover of a killed %s master to a %s replica (down-after-milliseconds %d): first sentinel names the new master after %v, all three after %v",
		m.kind, nm.kind, sentinelDownAfter, first.Round(time.Millisecond), last.Round(time.Millisecond))

	// The new master takes writes; the other replicas follow it.
	nc := Dial(t, nm.Addr)
	waitUntil(t, 30*time.Second, "new master writable", func() bool {
		return nc.Do("SET", "after:failover", "1") == "+OK\r\n"
	})
	fillReplData(t, nc, "post")
	time.Sleep(400 * time.Millisecond) // its keys set with PX 300 are gone on both sides
	for _, r := range others {
		waitFollows(t, nm, r)
		compareDatasets(t, nm.Proc, r.Proc)
		assert.Equal(t, []string{replicaOfLine(nm)}, replicaOfDirectives(t, r), "the rewritten file of %s", r.Addr)
	}
	assert.Empty(t, replicaOfDirectives(t, nm), "the promoted replica's rewritten file")

	// The old master comes back as a master (its file was not
	// rewritten) and the sentinels make it a replica of the new one.
	assert.Empty(t, replicaOfDirectives(t, m))
	m.restart(t)
	assert.Equal(t, "master", nodeReplInfo(m.Addr)["role"], "the old master restarts as a master")
	restarted := time.Now()
	waitFollows(t, nm, m)
	t.Logf("the restarted old master was reconfigured as a replica after %v", time.Since(restarted).Round(time.Millisecond))
	compareDatasets(t, nm.Proc, m.Proc)
	assert.Equal(t, []string{replicaOfLine(nm)}, replicaOfDirectives(t, m), "the old master's rewritten file")
	waitUntil(t, 30*time.Second, "sentinels see the old master as a healthy replica", func() bool {
		for _, s := range ss {
			if sentinelReplicas(s)[m.Addr]["flags"] != "slave" {
				return false
			}
		}
		return true
	})
	// No command the sentinels sent was refused, but for -LOADING while
	// a replica loads its master's payload (as redis-server answers).
	for _, n := range append([]*groupNode{m}, rs...) {
		for _, line := range strings.Split(Dial(t, n.Addr).Do("INFO", "errorstats"), "\r\n") {
			if strings.HasPrefix(line, "errorstat_") && !strings.HasPrefix(line, "errorstat_LOADING:") {
				t.Errorf("%s %s: %s", n.kind, n.Addr, line)
			}
		}
	}
}

// A zredis master with two zredis replicas under three sentinels:
// discovery, kill -9 of the master, a replica promoted that takes
// writes, the other following it, the old master rejoining as a replica.
func TestSentinelFailoverKilledMaster(t *testing.T) {
	m := startGroupNode(t, "zredis")
	r1 := startGroupNode(t, "zredis", replicaOfLine(m))
	r2 := startGroupNode(t, "zredis", replicaOfLine(m))
	failoverKilled(t, m, nil, r1, r2)
}

// SENTINEL FAILOVER on a live zredis master: its replica is promoted and
// the old master is turned into a replica of it.
func TestSentinelFailoverCommand(t *testing.T) {
	t.Parallel()
	m := startGroupNode(t, "zredis")
	r := startGroupNode(t, "zredis", replicaOfLine(m))
	fillReplData(t, Dial(t, m.Addr), "pre")
	waitFollows(t, m, r)
	ss := startSentinels(t, m)
	waitDiscovered(t, ss, m, r)

	start := time.Now()
	require.NoError(t, ss[1].c.Failover(context.Background(), sentinelGroup).Err())
	addr, first, last := waitSwitch(t, ss, m, start)
	require.Equal(t, r.Addr, addr)
	t.Logf("SENTINEL FAILOVER: first sentinel names the new master after %v, all three after %v",
		first.Round(time.Millisecond), last.Round(time.Millisecond))

	rc := Dial(t, r.Addr)
	waitUntil(t, 30*time.Second, "new master writable", func() bool {
		return rc.Do("SET", "after:failover", "1") == "+OK\r\n"
	})
	fillReplData(t, rc, "post")
	time.Sleep(400 * time.Millisecond) // its keys set with PX 300 are gone on both sides
	waitFollows(t, r, m)
	compareDatasets(t, r.Proc, m.Proc)
	assert.Empty(t, replicaOfDirectives(t, r))
	assert.Equal(t, []string{replicaOfLine(r)}, replicaOfDirectives(t, m))
}

// Mixed groups, both ways: a redis-server master failing over to a
// zredis replica that a redis-server replica then follows, and a zredis
// master failing over to a redis-server replica that a zredis replica
// then follows (replica-priority picks the replica promoted); and, for
// reference, the same with redis-server only.
func TestSentinelMixedGroups(t *testing.T) {
	t.Parallel()
	RequireRedis(t)
	for _, kinds := range [][3]string{{"redis", "zredis", "redis"}, {"zredis", "redis", "zredis"}, {"redis", "redis", "redis"}} {
		t.Run(fmt.Sprintf("%s master, %s promoted, %s follows", kinds[0], kinds[1], kinds[2]), func(t *testing.T) {
			t.Parallel()
			m := startGroupNode(t, kinds[0])
			promoted := startGroupNode(t, kinds[1], replicaOfLine(m), "replica-priority 10")
			other := startGroupNode(t, kinds[2], replicaOfLine(m))
			failoverKilled(t, m, promoted, promoted, other)
		})
	}
}

// replica-priority 0 is never promoted, even when it is the only replica
// left; replica-announced no hides a replica from SENTINEL REPLICAS but
// not from the failover.
func TestSentinelPriorityZeroAndUnannounced(t *testing.T) {
	t.Parallel()
	m := startGroupNode(t, "zredis")
	p0 := startGroupNode(t, "zredis", replicaOfLine(m), "replica-priority 0")
	hidden := startGroupNode(t, "zredis", replicaOfLine(m), "replica-announced no")
	waitFollows(t, m, p0)
	waitFollows(t, m, hidden)
	ss := startSentinels(t, m)
	waitDiscovered(t, ss, m, p0)
	ctx := context.Background()
	waitUntil(t, 30*time.Second, "both replicas known", func() bool {
		for _, s := range ss {
			if mi, _ := s.c.Master(ctx, sentinelGroup).Result(); mi["num-slaves"] != "2" {
				return false
			}
		}
		return true
	})
	for _, s := range ss {
		rs := sentinelReplicas(s)
		require.Len(t, rs, 1, "SENTINEL REPLICAS hides the replica-announced no one")
		assert.Equal(t, "0", rs[p0.Addr]["slave-priority"])
	}

	start := time.Now()
	m.Kill()
	addr, _, last := waitSwitch(t, ss, m, start)
	require.Equal(t, hidden.Addr, addr, "the replica with priority 0 is not promoted")
	t.Logf("failover to the replica-announced no replica after %v", last.Round(time.Millisecond))
	waitFollows(t, hidden, p0)

	// With the new master gone too, only the priority 0 replica is left:
	// the failover is abandoned and it stays a replica.
	hidden.Kill()
	// Several elections may be needed (see waitSwitch).
	waitUntil(t, 90*time.Second, "-failover-abort-no-good-slave", func() bool {
		for _, s := range ss {
			if strings.Contains(s.Output(), "-failover-abort-no-good-slave master "+sentinelGroup+" "+strings.Replace(hidden.Addr, ":", " ", 1)) {
				return true
			}
		}
		return false
	})
	for _, s := range ss {
		assert.Equal(t, hidden.Addr, masterAddrOf(s))
	}
	assert.Equal(t, "slave", nodeReplInfo(p0.Addr)["role"])
}

// reconfigure sends p the transaction Sentinel sends a node it
// reconfigures, SLAVEOF target in it, with a normal and a pub/sub client
// connected, and returns the raw replies. Both clients must be
// disconnected, the sender not.
func reconfigure(t *testing.T, name string, p *Proc, target []string) string {
	t.Helper()
	plain, sub := Dial(t, p.Addr), Dial(t, p.Addr)
	require.Equal(t, "+OK\r\n", plain.Do("CLIENT", "SETNAME", "plain"))
	sub.Do("SUBSCRIBE", "__sentinel__:hello")
	c := Dial(t, p.Addr)
	tx := [][]string{{"MULTI"}, append([]string{"SLAVEOF"}, target...), {"CONFIG", "REWRITE"},
		{"CLIENT", "KILL", "TYPE", "normal"}, {"CLIENT", "KILL", "TYPE", "pubsub"}, {"EXEC"}}
	for _, cmd := range tx {
		c.Send(Encode(cmd...))
	}
	replies := ""
	for range tx {
		replies += c.Read()
	}
	for _, killed := range []*Conn{plain, sub} {
		_, err := killed.ReadErr(10 * time.Second)
		var ne net.Error
		assert.True(t, err != nil && !(errors.As(err, &ne) && ne.Timeout()),
			"%s: a killed client's connection is closed (%v)", name, err)
	}
	assert.Equal(t, "+PONG\r\n", c.Do("PING"), "%s: the client that sent the transaction stays", name)
	return replies
}

// The transaction Sentinel sends a node it reconfigures, with a normal
// and a pub/sub client connected, answered by zredis as by redis-server,
// and the configuration files CONFIG REWRITE leaves equal.
func TestSentinelReconfigurationTransaction(t *testing.T) {
	master := StartRedis(t, "--repl-diskless-sync-delay", "0")
	lines := []string{
		"# a comment CONFIG REWRITE keeps",
		"slaveof 127.0.0.1 " + strconv.Itoa(master.Port),
		"replica-priority 50",
		"maxmemory 100mb",
	}
	nodes := []*groupNode{startGroupNode(t, "redis", lines...), startGroupNode(t, "zredis", lines...)}
	for _, n := range nodes {
		waitLinkUp(t, n.Proc)
	}
	mport := strconv.Itoa(master.Port)
	for step, target := range [][]string{{"NO", "ONE"}, {"127.0.0.1", mport}, {"127.0.0.1", mport}} {
		var replies, files [2]string
		for i, n := range nodes {
			replies[i] = reconfigure(t, n.kind, n.Proc, target)
			b, err := os.ReadFile(n.conf)
			require.NoError(t, err)
			files[i] = strings.ReplaceAll(strings.ReplaceAll(string(b), n.Dir, "DIR"), strconv.Itoa(n.Port), "PORT")
		}
		assert.Equal(t, replies[0], replies[1], "SLAVEOF %s: replies (redis-server, zredis)", target)
		assert.Equal(t, files[0], files[1], "SLAVEOF %s: rewritten files (redis-server, zredis)", target)
		t.Logf("SLAVEOF %s: %q", target, replies[1])
		if step == 2 {
			t.Logf("the rewritten file:\n%s", files[1])
		}
	}

	// Without a configuration file, CONFIG REWRITE fails inside EXEC and
	// the rest applies.
	var replies [2]string
	for i, name := range []string{"redis", "zredis"} {
		p := StartServer(t, name)
		replies[i] = reconfigure(t, name, p, []string{"127.0.0.1", mport})
		assert.True(t, strings.HasPrefix(Dial(t, p.Addr).Do("ROLE"), "*5\r\n$5\r\nslave\r\n$9\r\n127.0.0.1\r\n:"+mport+"\r\n"),
			"%s: a replica of the master", name)
	}
	assert.Equal(t, replies[0], replies[1], "without a file: replies (redis-server, zredis)")
	assert.Contains(t, replies[1], "-ERR The server is running without a config file\r\n")
}
