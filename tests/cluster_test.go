package tests

// Cluster mode end to end: zredis nodes and redis-server 7.0 nodes in
// one Redis Cluster, made and checked with redis-cli --cluster, used by
// a cluster-aware client (go-redis's ClusterClient), and failing over
// when a zredis master is killed.

import (
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// clusterNodeArgs are a cluster node's arguments: its own bus port (a
// free one: port + 10000 may not be) and a short node timeout, so a
// failure is detected in seconds.
func clusterNodeArgs(t *testing.T) []string {
	return []string{"--cluster-enabled", "yes", "--cluster-port", strconv.Itoa(FreePort(t)),
		"--cluster-node-timeout", "1000", "--appendonly", "no", "--save", ""}
}

// clusterCLI runs redis-cli with args and returns its output and exit
// code.
func clusterCLI(t *testing.T, args ...string) (string, int) {
	t.Helper()
	return clusterCLIWithin(t, 60*time.Second, args...)
}

// clusterCLIWithin is clusterCLI, killing redis-cli after limit.
func clusterCLIWithin(t *testing.T, limit time.Duration, args ...string) (string, int) {
	t.Helper()
	cli := RequireTool(t, "redis-cli")
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	out, err := exec.CommandContext(ctx, cli, args...).CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("redis-cli: %v", err)
	}
	return string(out), code
}

// A mixed cluster: two zredis masters and one redis-server master made
// by redis-cli --cluster create, a redis-server replica of a zredis
// master added with --cluster add-node. Every node agrees (--cluster
// check); a ClusterClient writes and reads keys of every slot range; a
// plain client gets Redis's redirections and refusals; a message
// published on one node reaches a subscriber of another. Then kill -9
// of the zredis master: the cluster, zredis voting, promotes its
// replica, and every acknowledged write is still read.
func TestClusterMixed(t *testing.T) {
	RequireRedis(t)
	ctx := context.Background()
	za := StartZredis(t, clusterNodeArgs(t)...)
	zb := StartZredis(t, clusterNodeArgs(t)...)
	rc := StartRedis(t, clusterNodeArgs(t)...)
	rd := StartRedis(t, clusterNodeArgs(t)...)
	for _, p := range []*Proc{za, zb} {
		assert.Contains(t, Dial(t, p.Addr).Do("INFO", "cluster"), "cluster_enabled:1")
	}

	out, code := clusterCLI(t, "--cluster", "create", za.Addr, zb.Addr, rc.Addr, "--cluster-yes")
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "[OK] All 16384 slots covered.")
	zaID := bulkText(Dial(t, za.Addr).Do("CLUSTER", "MYID"))
	out, code = clusterCLI(t, "--cluster", "add-node", rd.Addr, za.Addr, "--cluster-slave", "--cluster-master-id", zaID)
	require.Equal(t, 0, code, out)

	all := []*Proc{za, zb, rc, rd}
	require.Eventually(t, func() bool {
		for _, p := range all {
			c := Dial(t, p.Addr)
			if !strings.Contains(c.Do("CLUSTER", "INFO"), "cluster_state:ok") {
				return false
			}
			if !strings.Contains(c.Do("CLUSTER", "INFO"), "cluster_known_nodes:4") {
				return false
			}
		}
		return strings.Contains(Dial(t, rd.Addr).Do("INFO", "replication"), "master_link_status:up")
	}, 30*time.Second, 100*time.Millisecond, "the cluster does not converge")
	for _, p := range all {
		out, code = clusterCLI(t, "--cluster", "check", p.Addr)
		require.Equal(t, 0, code, out)
		require.Contains(t, out, "[OK] All nodes agree about slots configuration.", out)
		require.Contains(t, out, "[OK] All 16384 slots covered.", out)
	}

	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{za.Addr, rc.Addr}, MaxRedirects: 8})
	defer cc.Close()
	const n = 2000
	for i := range n {
		require.NoError(t, cc.Set(ctx, fmt.Sprintf("key:%d", i), i, 0).Err())
	}
	for i := range n {
		v, err := cc.Get(ctx, fmt.Sprintf("key:%d", i)).Int()
		require.NoError(t, err)
		require.Equal(t, i, v)
	}
	// Every master holds some of them, and counts them per slot as
	// redis-server does.
	total := int64(0)
	for _, p := range []*Proc{za, zb, rc} {
		c := redis.NewClient(&redis.Options{Addr: p.Addr})
		size, err := c.DBSize(ctx).Result()
		require.NoError(t, err)
		assert.Greater(t, size, int64(0), p.Name)
		total += size
		slot, err := c.ClusterKeySlot(ctx, "key:1").Result()
		require.NoError(t, err)
		count, err := c.ClusterCountKeysInSlot(ctx, int(slot)).Result()
		require.NoError(t, err)
		keys, err := c.ClusterGetKeysInSlot(ctx, int(slot), 10).Result()
		require.NoError(t, err)
		assert.EqualValues(t, len(keys), count, p.Name)
		c.Close()
	}
	assert.EqualValues(t, n, total)

	// A plain client of a zredis node: the redirections, as redis-server
	// answers them.
	plain := Dial(t, za.Addr)
	slotsReply, err := redis.NewClient(&redis.Options{Addr: za.Addr}).ClusterSlots(ctx).Result()
	require.NoError(t, err)
	var otherKey, otherAddr, localKey string
	var otherSlot int64
	for i := 0; otherKey == "" || localKey == ""; i++ {
		k := fmt.Sprintf("probe:%d", i)
		s, _ := strconv.ParseInt(strings.Trim(plain.Do("CLUSTER", "KEYSLOT", k), ":\r\n"), 10, 64)
		for _, r := range slotsReply {
			if int64(r.Start) <= s && s <= int64(r.End) {
				if r.Nodes[0].Addr != za.Addr {
					otherKey, otherAddr, otherSlot = k, r.Nodes[0].Addr, s
				} else {
					localKey = k
				}
			}
		}
	}
	assert.Equal(t, fmt.Sprintf("-MOVED %d %s\r\n", otherSlot, otherAddr), plain.Do("SET", otherKey, "v"))
	// A shard channel lives in its slot's shard, as a key does.
	assert.Equal(t, fmt.Sprintf("-MOVED %d %s\r\n", otherSlot, otherAddr), plain.Do("SPUBLISH", otherKey, "m"))
	assert.Equal(t, ":0\r\n", plain.Do("SPUBLISH", localKey, "m"))
	assert.Equal(t, "-CROSSSLOT Keys in request don't hash to the same slot\r\n", plain.Do("MSET", "a", "1", "b", "2"))
	assert.Equal(t, "-ERR SELECT is not allowed in cluster mode\r\n", plain.Do("SELECT", "1"))
	assert.Equal(t, "-ERR REPLICAOF not allowed in cluster mode.\r\n", plain.Do("REPLICAOF", "127.0.0.1", "1"))
	assert.Equal(t, "-ERR MOVE is not allowed in cluster mode\r\n", plain.Do("MOVE", localKey, "1"))
	assert.Equal(t, "-ERR SWAPDB is not allowed in cluster mode\r\n", plain.Do("SWAPDB", "0", "1"))
	assert.Equal(t, "-ERR Copying to another database is not allowed in cluster mode\r\n", plain.Do("COPY", localKey, "{"+localKey+"}x", "DB", "1"))
	assert.Equal(t, "+OK\r\n", plain.Do("MULTI"))
	assert.Equal(t, fmt.Sprintf("-MOVED %d %s\r\n", otherSlot, otherAddr), plain.Do("SET", otherKey, "v"))
	assert.Equal(t, "-EXECABORT Transaction discarded because of previous errors.\r\n", plain.Do("EXEC"))

	// Scripts keep to this node's keys, in one slot.
	assert.Equal(t, "$-1\r\n", plain.Do("EVAL", "return redis.call('get', KEYS[1])", "1", localKey))
	assert.True(t, strings.HasPrefix(plain.Do("EVAL", "return redis.call('get', ARGV[1])", "0", otherKey),
		"-ERR Script attempted to access a non local key in a cluster node"))
	assert.Equal(t, "-ERR Can not run script on cluster, 'no-cluster' flag is set.\r\n",
		plain.Do("EVAL", "#!lua flags=no-cluster\nreturn 1", "0"))

	// PUBLISH on a zredis node reaches a subscriber of a redis-server
	// node, and the other way round. A channel per pair: the bus takes
	// the first message to every node, zb too, at its own pace.
	for _, pair := range [][2]*Proc{{za, rc}, {rc, zb}} {
		channel := "news-" + pair[0].Name
		sub := redis.NewClient(&redis.Options{Addr: pair[1].Addr}).Subscribe(ctx, channel)
		_, err := sub.Receive(ctx)
		require.NoError(t, err)
		require.NoError(t, redis.NewClient(&redis.Options{Addr: pair[0].Addr}).Publish(ctx, channel, "from "+pair[0].Name).Err())
		msg, err := sub.ReceiveMessage(ctx)
		require.NoError(t, err)
		assert.Equal(t, "from "+pair[0].Name, msg.Payload)
		sub.Close()
	}

	// The writes reached the replica before the master dies.
	require.Equal(t, ":1\r\n", Dial(t, za.Addr).Do("WAIT", "1", "5000"))
	za.Kill()
	rdID := bulkText(Dial(t, rd.Addr).Do("CLUSTER", "MYID"))
	require.Eventually(t, func() bool {
		for _, p := range []*Proc{zb, rc} {
			nodes := Dial(t, p.Addr).Do("CLUSTER", "NODES")
			promoted := false
			for _, l := range strings.Split(nodes, "\n") {
				f := strings.Fields(l)
				if len(f) > 8 && f[0] == rdID && strings.Contains(f[2], "master") {
					promoted = true
				}
			}
			if !promoted || !strings.Contains(Dial(t, p.Addr).Do("CLUSTER", "INFO"), "cluster_state:ok") {
				return false
			}
		}
		return true
	}, 30*time.Second, 200*time.Millisecond, "the replica of the killed zredis master is not promoted")
	cc2 := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{zb.Addr, rc.Addr}, MaxRedirects: 8})
	defer cc2.Close()
	for i := range n {
		v, err := cc2.Get(ctx, fmt.Sprintf("key:%d", i)).Int()
		require.NoError(t, err, "key:%d", i)
		require.Equal(t, i, v)
	}
}

// The CLUSTER subcommands of a lone node, and their refusals, against a
// lone redis-server node started the same way: the same replies, node
// names and times aside.
func TestClusterCommandsDiff(t *testing.T) {
	RequireRedis(t)
	zp, rp := StartZredis(t, clusterNodeArgs(t)...), StartRedis(t, clusterNodeArgs(t)...)
	z, r := Dial(t, zp.Addr), Dial(t, rp.Addr)
	zid, rid := bulkText(z.Do("CLUSTER", "MYID")), bulkText(r.Do("CLUSTER", "MYID"))
	require.Len(t, zid, 40)
	norm := func(reply, id string, port int) string {
		reply = strings.ReplaceAll(reply, id, "<myid>")
		reply = regexp.MustCompile(`[0-9.]*:\d+@\d+`).ReplaceAllString(reply, "<addr>")
		return strings.ReplaceAll(reply, ":"+strconv.Itoa(port)+"\r\n", ":<port>\r\n")
	}
	for _, args := range [][]string{
		{"CLUSTER", "INFO"},
		{"CLUSTER", "KEYSLOT", "{user1000}.following"},
		{"CLUSTER", "ADDSLOTS", "1", "2", "x"},
		{"CLUSTER", "ADDSLOTS", "1", "16384"},
		{"CLUSTER", "ADDSLOTS", "1", "1"},
		{"CLUSTER", "ADDSLOTS", "1", "2", "3"},
		{"CLUSTER", "ADDSLOTS", "3"},
		{"CLUSTER", "ADDSLOTSRANGE", "10", "5"},
		{"CLUSTER", "ADDSLOTSRANGE", "10", "20", "15", "30"},
		{"CLUSTER", "ADDSLOTSRANGE", "10", "20", "30"},
		{"CLUSTER", "ADDSLOTSRANGE", "100", "200", "300", "400"},
		{"CLUSTER", "DELSLOTS", "50"},
		{"CLUSTER", "DELSLOTSRANGE", "150", "160"},
		{"CLUSTER", "NODES"},
		{"CLUSTER", "SLOTS"},
		{"CLUSTER", "SHARDS"},
		{"CLUSTER", "COUNTKEYSINSLOT", "100"},
		{"CLUSTER", "COUNTKEYSINSLOT", "16384"},
		{"CLUSTER", "COUNTKEYSINSLOT", "x"},
		{"CLUSTER", "GETKEYSINSLOT", "100", "-1"},
		{"CLUSTER", "GETKEYSINSLOT", "100", "10"},
		{"CLUSTER", "SET-CONFIG-EPOCH", "-1"},
		{"CLUSTER", "SET-CONFIG-EPOCH", "5"},
		{"CLUSTER", "SET-CONFIG-EPOCH", "6"},
		{"CLUSTER", "BUMPEPOCH"},
		{"CLUSTER", "BUMPEPOCH"},
		{"CLUSTER", "INFO"},
		{"CLUSTER", "COUNT-FAILURE-REPORTS", "0123456789012345678901234567890123456789"},
		{"CLUSTER", "FORGET", "nosuchnode"},
		{"CLUSTER", "REPLICAS", "nosuchnode"},
		{"CLUSTER", "MEET", "not-an-ip", "7000"},
		{"CLUSTER", "MEET", "127.0.0.1", "x"},
		{"CLUSTER", "MEET", "127.0.0.1", "7000", "x"},
		{"CLUSTER", "MEET", "127.0.0.1", "7000", "17000", "extra"},
		{"CLUSTER", "LINKS"},
		{"CLUSTER", "HELP"},
		{"CLUSTER", "SAVECONFIG"},
		{"CLUSTER", "RESET", "bogus"},
		{"SET", "a", "1"},
		{"SET", "{user1000}.following", "1"},
		{"CLUSTER", "RESET"},
		{"CLUSTER", "FLUSHSLOTS"},
		{"FLUSHALL"},
		{"CLUSTER", "FLUSHSLOTS"},
		{"CLUSTER", "NODES"},
		{"READONLY"},
		{"READWRITE"},
		{"ASKING"},
		{"CLUSTER", "RESET", "HARD"},
		{"CLUSTER", "INFO"},
	} {
		zr, rr := z.Do(args...), r.Do(args...)
		if len(args) == 3 && args[1] == "RESET" && args[2] == "HARD" {
			zid, rid = bulkText(z.Do("CLUSTER", "MYID")), bulkText(r.Do("CLUSTER", "MYID"))
		}
		assert.Equal(t, norm(rr, rid, rp.Port), norm(zr, zid, zp.Port), "%q", args)
	}
}

// A zredis master cut off (SIGSTOP) while the cluster fails it over to
// its redis-server replica: when it comes back it finds its slots served
// with a newer configuration and, left without slots, becomes a replica
// of the node that took them, as redis-server does
// (clusterUpdateSlotsConfigWith): it never expires (and sends to the
// expiry stream) a key another master now holds, and holds the new
// master's data.
func TestClusterStoppedMasterGivesUpSlots(t *testing.T) {
	RequireRedis(t)
	ctx := context.Background()
	za := StartZredis(t, clusterNodeArgs(t)...)
	zb := StartZredis(t, clusterNodeArgs(t)...)
	rc := StartRedis(t, clusterNodeArgs(t)...)
	rd := StartRedis(t, clusterNodeArgs(t)...)
	out, code := clusterCLI(t, "--cluster", "create", za.Addr, zb.Addr, rc.Addr, "--cluster-yes")
	require.Equal(t, 0, code, out)
	zaID := bulkText(Dial(t, za.Addr).Do("CLUSTER", "MYID"))
	out, code = clusterCLI(t, "--cluster", "add-node", rd.Addr, za.Addr, "--cluster-slave", "--cluster-master-id", zaID)
	require.Equal(t, 0, code, out)
	require.Eventually(t, func() bool {
		return strings.Contains(Dial(t, rd.Addr).Do("INFO", "replication"), "master_link_status:up") &&
			strings.Contains(Dial(t, za.Addr).Do("CLUSTER", "INFO"), "cluster_state:ok")
	}, 30*time.Second, 100*time.Millisecond)
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{zb.Addr}})
	defer cc.Close()
	for i := range 300 {
		require.NoError(t, cc.Set(ctx, fmt.Sprintf("k%d", i), i, time.Hour).Err())
	}
	a := redis.NewClient(&redis.Options{Addr: za.Addr})
	defer a.Close()
	held, err := a.DBSize(ctx).Result()
	require.NoError(t, err)
	require.Greater(t, held, int64(0))
	require.Equal(t, ":1\r\n", Dial(t, za.Addr).Do("WAIT", "1", "5000"))

	require.NoError(t, za.Signal(syscall.SIGSTOP))
	rdID := bulkText(Dial(t, rd.Addr).Do("CLUSTER", "MYID"))
	require.Eventually(t, func() bool {
		return strings.Contains(Dial(t, rd.Addr).Do("ROLE"), "master")
	}, 30*time.Second, 100*time.Millisecond, "the replica is not promoted")
	require.NoError(t, za.Signal(syscall.SIGCONT))

	d := redis.NewClient(&redis.Options{Addr: rd.Addr})
	defer d.Close()
	require.Eventually(t, func() bool {
		nodes, err := a.ClusterNodes(ctx).Result()
		if err != nil {
			return false
		}
		for _, l := range strings.Split(nodes, "\n") {
			f := strings.Fields(l)
			if len(f) >= 8 && f[0] == zaID && (len(f) != 8 || !strings.Contains(f[2], "slave") || f[3] != rdID) {
				return false // still a master, or serves slots
			}
			if len(f) >= 9 && f[0] == rdID && !strings.Contains(f[2], "master") {
				return false
			}
		}
		info, err := a.Info(ctx, "replication").Result()
		if err != nil || !strings.Contains(info, "master_link_status:up") {
			return false
		}
		n, err := a.DBSize(ctx).Result()
		m, err2 := d.DBSize(ctx).Result()
		if err != nil || err2 != nil || n != m {
			return false
		}
		// Every node has its state back to ok: one that still says
		// fail answers CLUSTERDOWN to the reads below (a busy machine
		// can take longer than the cluster client's retries).
		for _, addr := range []string{za.Addr, zb.Addr, rc.Addr, rd.Addr} {
			if !strings.Contains(Dial(t, addr).Do("CLUSTER", "INFO"), "cluster_state:ok") {
				return false
			}
		}
		return true
	}, 30*time.Second, 200*time.Millisecond, "the node back from its pause keeps its old slots or keys")
	for i := range 300 {
		v, err := cc.Get(ctx, fmt.Sprintf("k%d", i)).Int()
		require.NoError(t, err)
		require.Equal(t, i, v)
	}
}

// The expiry stream's modes that cannot live in a cluster are refused,
// at start and by CONFIG SET: the hash expire cycles (their counter's
// second database does not exist) and the stream key (one key, in one
// master's slot, where every master appends its own expiries).
func TestClusterRefusesExpiryModes(t *testing.T) {
	for _, c := range []struct{ directive, value, reason string }{
		{"expiry-zmq-hash-max-expire-cycles", "1", "the hash expire cycles keep their counter in a second database"},
		{"expiry-stream-key", "expiries", "the expiry stream key is one key, in one slot that one master serves"},
	} {
		args := append(clusterNodeArgs(t), "--port", strconv.Itoa(FreePort(t)), "--dir", t.TempDir(), "--"+c.directive, c.value)
		code, out := runMerged(t, zredisBin, args...)
		assert.Equal(t, 1, code, out)
		assert.Contains(t, out, c.reason, c.directive)
	}
	node := Dial(t, StartZredis(t, clusterNodeArgs(t)...).Addr)
	assert.Contains(t, node.Do("CONFIG", "SET", "expiry-zmq-hash-max-expire-cycles", "1"), "the hash expire cycles keep their counter in a second database")
	assert.Equal(t, "*2\r\n$33\r\nexpiry-zmq-hash-max-expire-cycles\r\n$1\r\n0\r\n", node.Do("CONFIG", "GET", "expiry-zmq-hash-max-expire-cycles"))
	assert.Contains(t, node.Do("CONFIG", "SET", "expiry-stream-key", "expiries"), "the expiry stream key is one key")
	assert.Equal(t, "*2\r\n$17\r\nexpiry-stream-key\r\n$0\r\n\r\n", node.Do("CONFIG", "GET", "expiry-stream-key"))
}

// slotOwner is the node that serves slot as p's CLUSTER NODES shows it,
// "" for none or no answer.
func slotOwner(p *Proc, slot int) string {
	nodes, err := tryDo(p.Addr, "CLUSTER", "NODES")
	if err != nil {
		return ""
	}
	for _, l := range strings.Split(nodes, "\n") {
		f := strings.Fields(l)
		if len(f) < 9 {
			continue
		}
		for _, r := range f[8:] {
			lo, hi, ok := strings.Cut(r, "-")
			if !ok {
				hi = lo
			}
			a, err1 := strconv.Atoi(lo)
			b, err2 := strconv.Atoi(hi)
			if err1 == nil && err2 == nil && a <= slot && slot <= b {
				return f[0]
			}
		}
	}
	return ""
}

// A master that stops claiming a slot (CLUSTER DELSLOTS on it alone)
// lets another master take the slot with an older config epoch, as
// 7.0.15 has it (owner_not_claiming_slot): the nodes that still bind
// the slot to the first master accept the claim instead of sending
// UPDATEs that took it back to a master not serving it. The same steps
// on three redis-server nodes and on three zredis nodes: every node
// ends with the slot on the claiming master.
func TestClusterUnclaimedSlotDiff(t *testing.T) {
	RequireRedis(t)
	for _, kind := range []string{"redis", "zredis"} {
		t.Run(kind, func(t *testing.T) {
			var ps []*Proc
			for range 3 {
				if kind == "redis" {
					ps = append(ps, StartRedis(t, clusterNodeArgs(t)...))
				} else {
					ps = append(ps, StartZredis(t, clusterNodeArgs(t)...))
				}
			}
			out, code := clusterCLI(t, "--cluster", "create", ps[0].Addr, ps[1].Addr, ps[2].Addr, "--cluster-yes")
			require.Equal(t, 0, code, out)
			require.Eventually(t, func() bool { return clusterHealthy(t, ps, 3) }, 30*time.Second, 100*time.Millisecond)
			// owner: the master of the newest config epoch; claimer:
			// the oldest.
			ids := make([]string, 3)
			epochs := make([]int, 3)
			for i, p := range ps {
				ids[i] = myID(t, p)
				epochs[i], _ = strconv.Atoi(nodeFields(t, ps[0], ids[i])[6])
			}
			owner, claimer := 0, 0
			for i := range ps {
				if epochs[i] > epochs[owner] {
					owner = i
				}
				if epochs[i] < epochs[claimer] {
					claimer = i
				}
			}
			require.NotEqual(t, owner, claimer, "epochs %v", epochs)
			slot := -1
			for s := 0; s < 16384 && slot < 0; s++ {
				if slotOwner(ps[owner], s) == ids[owner] {
					slot = s
				}
			}
			require.GreaterOrEqual(t, slot, 0)

			require.Equal(t, "+OK\r\n", Dial(t, ps[owner].Addr).Do("CLUSTER", "DELSLOTS", strconv.Itoa(slot)))
			// The others see the owner's messages without the slot
			// (a node pings each other one at least every half node
			// timeout).
			time.Sleep(2 * time.Second)
			for i, p := range ps {
				if i != owner {
					require.Equal(t, ids[owner], slotOwner(p, slot), "node %d unbound the slot", i)
				}
			}
			require.Equal(t, "+OK\r\n", Dial(t, ps[claimer].Addr).Do("CLUSTER", "SETSLOT", strconv.Itoa(slot), "NODE", ids[claimer]))
			require.Eventually(t, func() bool {
				for _, p := range ps {
					if slotOwner(p, slot) != ids[claimer] {
						return false
					}
				}
				return true
			}, 15*time.Second, 100*time.Millisecond, "the slot is not the claimer's everywhere: %s / %s / %s",
				slotOwner(ps[0], slot), slotOwner(ps[1], slot), slotOwner(ps[2], slot))
			// And it stays so.
			time.Sleep(2 * time.Second)
			for i, p := range ps {
				require.Equal(t, ids[claimer], slotOwner(p, slot), "node %d", i)
			}
		})
	}
}
