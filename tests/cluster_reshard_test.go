package tests

// Resharding a mixed cluster: CLUSTER SETSLOT and cluster-aware MIGRATE
// driven by redis-cli --cluster reshard between zredis and redis-server
// masters while a client writes, and SETSLOT's replies against
// redis-server's.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zredis/zredis/cluster"
	"github.com/zredis/zredis/zmqpub"
)

// clusterCLILong is clusterCLI for a command that moves keys, which may
// take minutes on a busy machine.
func clusterCLILong(t *testing.T, args ...string) (string, int) {
	t.Helper()
	return clusterCLIWithin(t, 5*time.Minute, args...)
}

// clusterConverged waits until every node of ps sees the cluster ok,
// knowing n nodes, and redis-cli --cluster check finds it clean from
// each of them.
func clusterConverged(t *testing.T, n int, ps ...*Proc) {
	t.Helper()
	require.Eventually(t, func() bool {
		for _, p := range ps {
			info := Dial(t, p.Addr).Do("CLUSTER", "INFO")
			if !strings.Contains(info, "cluster_state:ok") || !strings.Contains(info, fmt.Sprintf("cluster_known_nodes:%d", n)) {
				return false
			}
		}
		for _, p := range ps {
			out, code := clusterCLI(t, "--cluster", "check", p.Addr)
			if code != 0 || !strings.Contains(out, "[OK] All nodes agree about slots configuration.") ||
				!strings.Contains(out, "[OK] All 16384 slots covered.") || strings.Contains(out, "[WARNING]") {
				return false
			}
		}
		return true
	}, 60*time.Second, 200*time.Millisecond, "the cluster does not converge")
}

// A mixed cluster of two zredis masters and a redis-server master is
// resharded four times while a cluster-aware client writes: slots go
// from a zredis node to the redis-server node, back from it to a zredis
// node, and between the two zredis nodes, each with redis-cli --cluster
// reshard (SETSLOT IMPORTING/MIGRATING, GETKEYSINSLOT, MIGRATE with
// KEYS, SETSLOT NODE). The cluster ends clean, every key is held by one
// node only, and every acknowledged write reads back with its last
// value.
func TestClusterReshard(t *testing.T) {
	RequireRedis(t)
	ctx := context.Background()
	za := StartZredis(t, clusterNodeArgs(t)...)
	zb := StartZredis(t, clusterNodeArgs(t)...)
	rc := StartRedis(t, clusterNodeArgs(t)...)
	masters := []*Proc{za, zb, rc}
	out, code := clusterCLI(t, "--cluster", "create", za.Addr, zb.Addr, rc.Addr, "--cluster-yes")
	require.Equal(t, 0, code, out)
	clusterConverged(t, 3, masters...)
	id := map[*Proc]string{}
	for _, p := range masters {
		id[p] = bulkText(Dial(t, p.Addr).Do("CLUSTER", "MYID"))
	}

	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{za.Addr, rc.Addr}, MaxRedirects: 32,
		ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second})
	defer cc.Close()
	// Keys already there, with and without a TTL far away, of several
	// types (MIGRATE sends each as a DUMP payload), by tens in a slot.
	const preload = 6000
	pipe := cc.Pipeline()
	for i := range preload {
		k := preKey(i)
		switch i % 3 {
		case 0:
			pipe.Set(ctx, k, i, 0)
		case 1:
			pipe.Set(ctx, k, i, time.Hour)
		default:
			pipe.HSet(ctx, k, "f", i)
		}
	}
	_, err := pipe.Exec(ctx)
	require.NoError(t, err)

	// The writer: SETs in a loop over a set of keys, each write retried
	// until acknowledged, so that the last acknowledged value of a key
	// is the last value written to it.
	const writerKeys = 3000
	acked := make([]int, writerKeys) // 0: never written
	var mu sync.Mutex
	stop := make(chan struct{})
	done := make(chan struct{})
	var writes, retries int
	var lastErr error
	go func() {
		defer close(done)
		for v := 1; ; v++ {
			select {
			case <-stop:
				return
			default:
			}
			i := v % writerKeys
			for {
				err := cc.Set(ctx, fmt.Sprintf("w:%d", i), v, 0).Err()
				if err == nil {
					break
				}
				mu.Lock()
				retries++
				lastErr = err
				mu.Unlock()
				select {
				case <-stop:
					return
				case <-time.After(10 * time.Millisecond):
				}
			}
			mu.Lock()
			acked[i] = v
			writes++
			mu.Unlock()
		}
	}()
	stopped := false
	stopWriter := func() {
		if !stopped {
			stopped = true
			close(stop)
			<-done
		}
	}
	defer stopWriter()
	// The writer is under way before the first reshard.
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return writes > 200
	}, 30*time.Second, 10*time.Millisecond)

	for _, move := range []struct{ from, to *Proc }{{za, rc}, {rc, za}, {zb, za}, {rc, zb}} {
		out, code := clusterCLILong(t, "--cluster", "reshard", move.to.Addr, "--cluster-from", id[move.from],
			"--cluster-to", id[move.to], "--cluster-slots", "300", "--cluster-yes")
		require.Equal(t, 0, code, "%s -> %s:\n%s", move.from.Name, move.to.Name, out)
		require.NotContains(t, out, "[ERR]", out)
		clusterConverged(t, 3, masters...)
	}
	stopWriter()
	mu.Lock()
	t.Logf("%d writes acknowledged, %d retried (last error: %v)", writes, retries, lastErr)
	mu.Unlock()

	// Each key is in one place: the masters' keys add up to the keys
	// written, none left behind on a node that gave its slot away.
	written := preload
	for _, v := range acked {
		if v != 0 {
			written++
		}
	}
	total := int64(0)
	for _, p := range masters {
		c := redis.NewClient(&redis.Options{Addr: p.Addr})
		n, err := c.DBSize(ctx).Result()
		c.Close()
		require.NoError(t, err)
		total += n
	}
	assert.EqualValues(t, written, total)

	check := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{zb.Addr}, MaxRedirects: 8})
	defer check.Close()
	for i, v := range acked {
		if v == 0 {
			continue
		}
		got, err := check.Get(ctx, fmt.Sprintf("w:%d", i)).Int()
		require.NoError(t, err, "w:%d", i)
		require.Equal(t, v, got, "w:%d", i)
	}
	for i := range preload {
		k := preKey(i)
		switch i % 3 {
		case 0, 1:
			got, err := check.Get(ctx, k).Int()
			require.NoError(t, err, k)
			require.Equal(t, i, got, k)
			if i%3 == 1 {
				ttl, err := check.TTL(ctx, k).Result()
				require.NoError(t, err)
				require.Greater(t, ttl, 50*time.Minute, k)
			}
		default:
			got, err := check.HGet(ctx, k, "f").Int()
			require.NoError(t, err, k)
			require.Equal(t, i, got, k)
		}
	}
}

// preKey is the i-th key loaded before a reshard: ten keys share a
// hash tag, so that MIGRATE moves several keys of a slot at once.
func preKey(i int) string { return fmt.Sprintf("pre:{%d}:%d", i/10, i) }

// myselfLine is the line of CLUSTER NODES about the node answering,
// with its names replaced as norm does.
func myselfLine(nodes string, norm func(string) string) string {
	for _, l := range strings.Split(nodes, "\n") {
		if strings.Contains(l, "myself") {
			return norm(l)
		}
	}
	return ""
}

// CLUSTER SETSLOT on a zredis node and on a redis-server node, each in a
// cluster of two with a redis-server peer: the same replies and refusals,
// the same line of CLUSTER NODES (slots, [slot->-id] and [slot-<-id]
// marks, config epoch) and epochs in CLUSTER INFO, node names aside;
// and the zredis node's nodes.conf has each change once SETSLOT replied.
func TestClusterSetSlotDiff(t *testing.T) {
	RequireRedis(t)
	// Two masters serve a few slots only: the cluster is ok without
	// full coverage.
	args := func() []string { return append(clusterNodeArgs(t), "--cluster-require-full-coverage", "no") }
	zp, zpeer := StartZredis(t, args()...), StartRedis(t, args()...)
	rp, rpeer := StartRedis(t, args()...), StartRedis(t, args()...)
	type side struct {
		c            *Conn
		me, peer     string
		peerC        *Conn
		peerProcPort int
	}
	mk := func(p, peer *Proc) *side {
		s := &side{c: Dial(t, p.Addr), peerC: Dial(t, peer.Addr)}
		s.me, s.peer = bulkText(s.c.Do("CLUSTER", "MYID")), bulkText(s.peerC.Do("CLUSTER", "MYID"))
		// Config epochs set by hand, so that no collision renumbers
		// them by the nodes' random names.
		require.Equal(t, "+OK\r\n", s.c.Do("CLUSTER", "SET-CONFIG-EPOCH", "1"))
		require.Equal(t, "+OK\r\n", s.peerC.Do("CLUSTER", "SET-CONFIG-EPOCH", "2"))
		require.Equal(t, "+OK\r\n", s.c.Do("CLUSTER", "MEET", "127.0.0.1", fmt.Sprint(peer.Port), clusterBusPort(t, s.peerC)))
		return s
	}
	z, r := mk(zp, zpeer), mk(rp, rpeer)
	for _, s := range []*side{z, r} {
		require.Eventually(t, func() bool {
			nodes := s.c.Do("CLUSTER", "NODES")
			return strings.Contains(nodes, s.peer) && !strings.Contains(nodes, "handshake") &&
				strings.Contains(s.c.Do("CLUSTER", "INFO"), "cluster_current_epoch:2")
		}, 30*time.Second, 50*time.Millisecond, "the nodes do not meet")
	}
	norm := func(s *side) func(string) string {
		return func(reply string) string {
			reply = strings.ReplaceAll(reply, s.me, "<me>")
			reply = strings.ReplaceAll(reply, s.peer, "<peer>")
			fields := strings.Fields(reply)
			if len(fields) > 5 && fields[0] == "<me>" {
				fields[1] = "<addr>"
				reply = strings.Join(fields, " ")
			}
			return reply
		}
	}
	infoEpochs := func(info string) string {
		var keep []string
		for _, l := range strings.Split(info, "\r\n") {
			if strings.HasPrefix(l, "cluster_current_epoch") || strings.HasPrefix(l, "cluster_my_epoch") ||
				strings.HasPrefix(l, "cluster_slots_assigned") {
				keep = append(keep, l)
			}
		}
		return strings.Join(keep, " ")
	}
	// "a" hashes to slot 15495; dumpOf1 is DUMP's payload of the string
	// "1" (redis-server 7.0's).
	const dumpOf1 = "\x00\xc0\x01\n\x00&x\xe7\xb6\xd1\x01\x11\xfc"
	steps := [][]string{
		{"CLUSTER", "SETSLOT", "100", "MIGRATING", "$PEER"},
		{"CLUSTER", "SETSLOT", "x", "STABLE"},
		{"CLUSTER", "SETSLOT", "16384", "STABLE"},
		{"CLUSTER", "SETSLOT", "-1", "MIGRATING", "$PEER"},
		{"CLUSTER", "SETSLOT", "100"},
		{"CLUSTER", "ADDSLOTS", "100", "15495"},
		{"CLUSTER", "SETSLOT", "100", "IMPORTING", "$PEER"},
		{"CLUSTER", "SETSLOT", "100", "MIGRATING", "nosuchnode"},
		{"CLUSTER", "SETSLOT", "100", "MIGRATING", "0123456789012345678901234567890123456789"},
		{"CLUSTER", "SETSLOT", "100", "MIGRATING", "$PEER"},
		{"NODES"},
		{"CLUSTER", "SETSLOT", "100", "STABLE"},
		{"NODES"},
		{"CLUSTER", "SETSLOT", "100", "BOGUS", "$PEER"},
		{"CLUSTER", "SETSLOT", "100", "STABLE", "extra"},
		{"CLUSTER", "SETSLOT", "100", "NODE"},
		{"CLUSTER", "SETSLOT", "100", "MIGRATING"},
		{"CLUSTER", "SETSLOT", "100", "NODE", "nosuchnode"},
		{"CLUSTER", "SETSLOT", "300", "IMPORTING", "nosuchnode"},
		{"WAITOK"},
		{"SET", "a", "1"},
		{"CLUSTER", "SETSLOT", "15495", "MIGRATING", "$PEER"},
		{"CLUSTER", "SETSLOT", "15495", "NODE", "$PEER"},
		{"GET", "a"},
		{"GET", "{a}x"},
		{"MGET", "a", "{a}x"},
		{"CLUSTER", "SETSLOT", "200", "IMPORTING", "$PEER"},
		{"NODES"},
		{"CLUSTER", "SETSLOT", "200", "NODE", "$ME"},
		{"NODES"},
		{"INFO"},
		{"CLUSTER", "SETSLOT", "200", "NODE", "$ME"},
		{"INFO"},
		// A key past its deadline counts as missing: -ASK, as for a key
		// that is gone.
		{"SET", "{a}e", "1", "PX", "20"},
		{"SLEEP"},
		{"CLUSTER", "SETSLOT", "15495", "MIGRATING", "$PEER"},
		{"NODES"},
		{"GET", "{a}e"},
		{"DEL", "a"},
		{"CLUSTER", "SETSLOT", "15495", "NODE", "$PEER"},
		{"NODES"},
		{"GET", "a"},
		{"CLUSTER", "SETSLOT", "15495", "IMPORTING", "$PEER"},
		{"GET", "a"},
		{"ASKING"},
		{"GET", "a"},
		{"ASKING"},
		{"MGET", "a", "{a}x"},
		{"ASKING"},
		{"RESTORE-ASKING", "a", "0", dumpOf1},
		{"GET", "a"},
		{"RESTORE-ASKING", "{a}x", "0", dumpOf1},
		{"CLUSTER", "SETSLOT", "15495", "STABLE"},
		{"NODES"},
	}
	for _, step := range steps {
		var replies [2]string
		for i, s := range []*side{z, r} {
			args := make([]string, len(step))
			for j, a := range step {
				args[j] = strings.NewReplacer("$PEER", s.peer, "$ME", s.me).Replace(a)
			}
			switch args[0] {
			case "WAITOK":
				require.Eventually(t, func() bool {
					return strings.Contains(s.c.Do("CLUSTER", "INFO"), "cluster_state:ok")
				}, 30*time.Second, 50*time.Millisecond, "the cluster is not ok")
			case "SLEEP":
				time.Sleep(100 * time.Millisecond)
			case "NODES":
				replies[i] = myselfLine(s.c.Do("CLUSTER", "NODES"), norm(s))
			case "INFO":
				replies[i] = infoEpochs(s.c.Do("CLUSTER", "INFO"))
			default:
				replies[i] = norm(s)(s.c.Do(args...))
				replies[i] = strings.ReplaceAll(replies[i], zp.Addr, "<addr>")
				replies[i] = strings.ReplaceAll(replies[i], rp.Addr, "<addr>")
				replies[i] = strings.ReplaceAll(replies[i], zpeer.Addr, "<peeraddr>")
				replies[i] = strings.ReplaceAll(replies[i], rpeer.Addr, "<peeraddr>")
			}
		}
		assert.Equal(t, replies[1], replies[0], "%q", step)
		if step[0] == "CLUSTER" && strings.HasPrefix(replies[0], "+OK") {
			// nodes.conf was written before the reply.
			conf, err := os.ReadFile(filepath.Join(zp.Dir, "nodes.conf"))
			require.NoError(t, err)
			assert.Equal(t, myselfLine(z.c.Do("CLUSTER", "NODES"), norm(z)), myselfLine(string(conf), norm(z)), "nodes.conf after %q", step)
		}
	}
}

// clusterBusPort is the bus port of the node c is connected to, from its
// CLUSTER NODES line.
func clusterBusPort(t *testing.T, c *Conn) string {
	t.Helper()
	line := myselfLine(c.Do("CLUSTER", "NODES"), func(s string) string { return s })
	f := strings.Fields(line)
	require.GreaterOrEqual(t, len(f), 2, line)
	_, bus, ok := strings.Cut(f[1], "@")
	require.True(t, ok, line)
	return strings.SplitN(bus, ",", 2)[0]
}

// The expiry stream across a reshard between two zredis masters, each
// with its own listener: a key is expired, and sent with its value, once,
// by the node that holds it at its deadline. Keys whose deadlines fall
// while their slots move are expired by the source before MIGRATE takes
// them, or by the target after; keys of the slots that stay are expired
// by the source; keys moved alive are expired by the target only, the
// source sending nothing for a key it migrated away.
func TestClusterReshardExpiry(t *testing.T) {
	RequireRedis(t)
	requirePythonZMQ(t)
	ctx := context.Background()
	epA, epB := zmqEndpoint(t), zmqEndpoint(t)
	za := StartZredis(t, append(clusterNodeArgs(t), "--expiry-zmq-endpoints", epA)...)
	zb := StartZredis(t, append(clusterNodeArgs(t), "--expiry-zmq-endpoints", epB)...)
	a, b := Dial(t, za.Addr), Dial(t, zb.Addr)
	// redis-cli --cluster create wants three masters: two are joined by
	// hand, with config epochs of their own.
	require.Equal(t, "+OK\r\n", a.Do("CLUSTER", "ADDSLOTSRANGE", "0", "8191"))
	require.Equal(t, "+OK\r\n", b.Do("CLUSTER", "ADDSLOTSRANGE", "8192", "16383"))
	require.Equal(t, "+OK\r\n", a.Do("CLUSTER", "SET-CONFIG-EPOCH", "1"))
	require.Equal(t, "+OK\r\n", b.Do("CLUSTER", "SET-CONFIG-EPOCH", "2"))
	require.Equal(t, "+OK\r\n", a.Do("CLUSTER", "MEET", "127.0.0.1", fmt.Sprint(zb.Port), clusterBusPort(t, b)))
	clusterConverged(t, 2, za, zb)
	la, lb := startListener(t, []string{epA}), startListener(t, []string{epB})
	waitInfo(t, a, "expiry_zmq_listeners", "1", 30*time.Second)
	waitInfo(t, b, "expiry_zmq_listeners", "1", 30*time.Second)

	// The reshard moves za's first slots: 0 to moved-1.
	const moved = 800
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{za.Addr, zb.Addr}, MaxRedirects: 32})
	defer cc.Close()
	type key struct {
		name     string
		slot     int
		long     bool // moved alive: its TTL is shortened once on zb
		expected string
	}
	var keys []key
	short, long, stay, other := 0, 0, 0, 0
	for i := 0; short+long+stay+other < 900; i++ {
		k := fmt.Sprintf("e:{%d}", i)
		s := int(cluster.KeySlot([]byte(k)))
		switch {
		case s < moved && i%3 == 0 && long < 150:
			long++
			keys = append(keys, key{name: k, slot: s, long: true})
		case s < moved && short < 450:
			short++
			keys = append(keys, key{name: k, slot: s})
		case s >= moved && s < 8192 && stay < 150:
			stay++
			keys = append(keys, key{name: k, slot: s})
		case s >= 8192 && other < 150:
			other++
			keys = append(keys, key{name: k, slot: s})
		}
	}
	pipe := cc.Pipeline()
	for i, k := range keys {
		ttl := time.Duration(1000+(i*53)%7000) * time.Millisecond // deadlines spread over the reshard
		if k.long {
			ttl = time.Hour
		}
		pipe.Set(ctx, k.name, "v:"+k.name, ttl)
	}
	_, err := pipe.Exec(ctx)
	require.NoError(t, err)

	ids := map[*Proc]string{za: bulkText(a.Do("CLUSTER", "MYID")), zb: bulkText(b.Do("CLUSTER", "MYID"))}
	out, code := clusterCLILong(t, "--cluster", "reshard", za.Addr, "--cluster-from", ids[za], "--cluster-to", ids[zb],
		"--cluster-slots", strconv.Itoa(moved), "--cluster-yes")
	require.Equal(t, 0, code, out)
	clusterConverged(t, 2, za, zb)

	// The keys moved alive are zb's, with their TTLs; their deadlines
	// are brought forward there.
	for _, k := range keys {
		if !k.long {
			continue
		}
		require.Equal(t, ":0\r\n", a.Do("CLUSTER", "COUNTKEYSINSLOT", strconv.Itoa(k.slot)), k.name)
		ttl, err := cc.PTTL(ctx, k.name).Result()
		require.NoError(t, err)
		require.Greater(t, ttl, 50*time.Minute, k.name)
		require.NoError(t, cc.PExpire(ctx, k.name, 300*time.Millisecond).Err())
	}

	// Every key expires once, with its value, from the node it was on.
	got := map[string]string{} // key -> the node that sent it
	var wrong []string         // messages not as the key was stored
	recvAll := func(l *pyListener, from string) {
		for _, d := range l.quiet(0) {
			got[string(d.Key)] += from
			if d.Type != zmqpub.TypeString || len(d.Parts) != 1 || string(d.Parts[0]) != "v:"+string(d.Key) {
				wrong = append(wrong, msgKey(d))
			}
		}
	}
	require.Eventually(t, func() bool {
		recvAll(la, "a")
		recvAll(lb, "b")
		return len(got) == len(keys)
	}, 60*time.Second, 50*time.Millisecond, "not every key's expiry arrived")
	assert.Empty(t, wrong)
	// Nothing more comes: no key is sent twice.
	for _, l := range []*pyListener{la, lb} {
		for _, d := range l.quiet(time.Second) {
			got[string(d.Key)] += "+"
		}
	}
	bySource := map[string]int{}
	for _, k := range keys {
		from := got[k.name]
		if !k.long && k.slot < moved {
			bySource[from]++
		}
		switch {
		case k.long:
			assert.Equal(t, "b", from, "%s (slot %d), moved alive", k.name, k.slot)
		case k.slot >= 8192:
			assert.Equal(t, "b", from, "%s (slot %d), zb's", k.name, k.slot)
		case k.slot >= moved:
			assert.Equal(t, "a", from, "%s (slot %d), stays on za", k.name, k.slot)
		default:
			assert.Contains(t, []string{"a", "b"}, from, "%s (slot %d), moved during its life", k.name, k.slot)
		}
	}
	t.Logf("keys expiring while their slots moved, by the node that sent them: %v", bySource)
	for _, p := range []*Proc{za, zb} {
		assert.Equal(t, ":0\r\n", Dial(t, p.Addr).Do("DBSIZE"), p.Name)
	}
}
