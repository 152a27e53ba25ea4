package cluster

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/zredis/zredis/cluster/bus"
	"github.com/zredis/zredis/internal/testsupport"
	"github.com/zredis/zredis/resp"
)

func TestKeySlot(t *testing.T) {
	require.Equal(t, uint16(0x31c3), crc16([]byte("123456789")), "the cluster specification's check value")
	for key, want := range map[string]int{
		"foo":                  12182,
		"":                     0,
		"{user1000}.following": KeySlot([]byte("user1000")),
		"foo{}{bar}":           int(crc16([]byte("foo{}{bar}")) & 0x3fff),
		"foo{{bar}}zap":        KeySlot([]byte("{bar")),
		"foo{bar}{zap}":        KeySlot([]byte("bar")),
		"{":                    int(crc16([]byte("{")) & 0x3fff),
		"a{b":                  int(crc16([]byte("a{b")) & 0x3fff),
	} {
		require.Equal(t, want, KeySlot([]byte(key)), "%q", key)
	}
}

// startCluster starts n redis-server 7.0 nodes in cluster mode, each
// with its own bus port, and has them meet.
func startCluster(t *testing.T, n int) ([]*testsupport.Proc, []*redis.Client) {
	t.Helper()
	var procs []*testsupport.Proc
	var clients []*redis.Client
	for i := range n {
		cport := testsupport.FreePort(t)
		p := testsupport.StartRedis(t, "--cluster-enabled", "yes", "--cluster-port", strconv.Itoa(cport),
			"--cluster-announce-hostname", fmt.Sprintf("node-%d.test", i))
		c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(p.Port), Protocol: 2})
		t.Cleanup(func() { c.Close() })
		procs, clients = append(procs, p), append(clients, c)
	}
	ctx := context.Background()
	for i := 1; i < n; i++ {
		cport, err := clients[i].ConfigGet(ctx, "cluster-port").Result()
		require.NoError(t, err)
		require.NoError(t, clients[0].Do(ctx, "CLUSTER", "MEET", "127.0.0.1", procs[i].Port, cport["cluster-port"]).Err())
	}
	return procs, clients
}

// The slot of a key is redis-server's, for keys with and without hash
// tags.
func TestKeySlotMatchesRedis(t *testing.T) {
	_, clients := startCluster(t, 1)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 500; i++ {
		b := make([]byte, rng.IntN(12))
		for j := range b {
			b[j] = "ab{}x\x00\xff"[rng.IntN(7)]
		}
		want, err := clients[0].ClusterKeySlot(ctx, string(b)).Result()
		require.NoError(t, err)
		require.EqualValues(t, want, KeySlot(b), "%q", b)
	}
}

// normalized is a nodes.conf or CLUSTER NODES text as a sorted list of
// lines, with what a load does not keep made equal: the ping and pong
// times (only whether they are zero counts) and the link state.
func normalized(text string) []string {
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(text), "\n") {
		f := strings.Fields(l)
		if len(f) >= 8 && f[0] != "vars" {
			for _, i := range []int{4, 5} {
				if f[i] != "0" {
					f[i] = "T"
				}
			}
			f[7] = "link"
		}
		lines = append(lines, strings.Join(f, " "))
	}
	slices.Sort(lines)
	return lines
}

// withoutPingSent masks the ping-sent field of normalized node lines.
func withoutPingSent(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		f := strings.Fields(l)
		if len(f) >= 8 && f[0] != "vars" {
			f[4] = "-"
		}
		out[i] = strings.Join(f, " ")
	}
	slices.Sort(out)
	return out
}

// nodes.conf as redis-server 7.0 writes it, for masters, a replica,
// slot ranges, single slots and slots migrating and importing: read,
// then written again, it is the same file (but for what a load resets).
func TestNodesConfMatchesRedis(t *testing.T) {
	procs, clients := startCluster(t, 3)
	ctx := context.Background()
	ids := make([]string, 3)
	for i, c := range clients {
		id, err := c.ClusterMyID(ctx).Result()
		require.NoError(t, err)
		ids[i] = id
	}
	require.Eventually(t, func() bool {
		for _, c := range clients {
			nodes, err := c.ClusterNodes(ctx).Result()
			if err != nil || strings.Count(nodes, " connected") != 3 || strings.Contains(nodes, "handshake") {
				return false
			}
		}
		return true
	}, 20*time.Second, 50*time.Millisecond)
	require.NoError(t, clients[0].ClusterAddSlotsRange(ctx, 0, 5000).Err())
	require.NoError(t, clients[0].ClusterAddSlots(ctx, 5002, 7000).Err())
	require.NoError(t, clients[1].ClusterAddSlotsRange(ctx, 8000, 16383).Err())
	require.NoError(t, clients[0].Do(ctx, "CLUSTER", "SETSLOT", 7000, "MIGRATING", ids[1]).Err())
	require.NoError(t, clients[1].Do(ctx, "CLUSTER", "SETSLOT", 7000, "IMPORTING", ids[0]).Err())
	require.NoError(t, clients[0].Do(ctx, "CLUSTER", "BUMPEPOCH").Err())
	require.Eventually(t, func() bool {
		nodes, err := clients[2].ClusterNodes(ctx).Result()
		return err == nil && strings.Contains(nodes, " 8000-16383")
	}, 20*time.Second, 50*time.Millisecond)
	require.NoError(t, clients[2].ClusterReplicate(ctx, ids[0]).Err())
	require.Eventually(t, func() bool {
		for _, c := range clients {
			nodes, err := c.ClusterNodes(ctx).Result()
			if err != nil || !strings.Contains(nodes, "slave "+ids[0]) {
				return false
			}
		}
		return true
	}, 20*time.Second, 50*time.Millisecond)

	// Every node knows every hostname.
	require.Eventually(t, func() bool {
		for _, c := range clients {
			nodes, err := c.ClusterNodes(ctx).Result()
			if err != nil || strings.Count(nodes, ".test ") != 3 {
				return false
			}
		}
		return true
	}, 20*time.Second, 50*time.Millisecond)
	// The replica is in CLUSTER SLOTS once it has a replication offset.
	require.Eventually(t, func() bool {
		for _, c := range clients {
			slots, err := c.Do(ctx, "CLUSTER", "SLOTS").Slice()
			if err != nil || len(slots) == 0 {
				return false
			}
			for _, r := range slots {
				if r := r.([]any); r[0].(int64) == 0 && len(r) != 4 {
					return false
				}
			}
		}
		return true
	}, 20*time.Second, 50*time.Millisecond)

	for i, c := range clients {
		require.NoError(t, c.ClusterSaveConfig(ctx).Err())
		file, err := os.ReadFile(filepath.Join(procs[i].Dir, "nodes.conf"))
		require.NoError(t, err)
		cfg, err := ParseNodesConf(file, 1)
		require.NoError(t, err, "node %d:\n%s", i, file)
		require.Equal(t, ids[i], string(cfg.Myself.Name[:]))
		require.Equal(t, normalized(string(file)), normalized(string(cfg.NodesConf())), "node %d", i)

		// A ping may go out (or its pong come back) between the save and
		// CLUSTER NODES: ping-sent is compared only with the file's own
		// round trip above.
		nodes, err := c.ClusterNodes(ctx).Result()
		require.NoError(t, err)
		require.Equal(t, withoutPingSent(normalized(nodes)), withoutPingSent(normalized(string(cfg.AppendNodes(nil, 0, false)))), "node %d", i)

		// CLUSTER SLOTS, for each preferred endpoint type.
		for _, ep := range []struct {
			name string
			ep   Endpoint
		}{{"ip", EndpointIP}, {"hostname", EndpointHostname}, {"unknown-endpoint", EndpointUnknown}} {
			require.NoError(t, c.ConfigSet(ctx, "cluster-preferred-endpoint-type", ep.name).Err())
			want, err := c.Do(ctx, "CLUSTER", "SLOTS").Slice()
			require.NoError(t, err)
			w := resp.NewWriter()
			cfg.WriteSlots(w, ep.ep, false, func(*Node) bool { return true })
			got, rest := parseRESP2(t, w.Bytes())
			require.Empty(t, rest)
			require.Equal(t, want, got, "node %d, %s", i, ep.name)

			// CLUSTER SHARDS, in any order of shards, offsets aside.
			want, err = c.Do(ctx, "CLUSTER", "SHARDS").Slice()
			require.NoError(t, err)
			for _, n := range cfg.Nodes {
				n.ReplOffset = 1
			}
			w.Reset()
			cfg.WriteShards(w, ep.ep, false)
			got, rest = parseRESP2(t, w.Bytes())
			require.Empty(t, rest)
			require.Equal(t, shardSet(want), shardSet(got.([]any)), "node %d, %s", i, ep.name)
		}
	}
	cfg, err := ParseNodesConf(func() []byte {
		b, _ := os.ReadFile(filepath.Join(procs[0].Dir, "nodes.conf"))
		return b
	}(), 1)
	require.NoError(t, err)
	require.Equal(t, map[int]bus.Name{7000: nameOf(ids[1])}, cfg.Migrating)
	me := cfg.Myself
	require.True(t, me.Slots.Has(0) && me.Slots.Has(5000) && !me.Slots.Has(5001) && me.Slots.Has(5002) && me.Slots.Has(7000) && !me.Slots.Has(7001))
	replica := cfg.Lookup(nameOf(ids[2]))
	require.Equal(t, me.Name, replica.Master)
	require.Zero(t, replica.ConfigEpoch, "a replica's config epoch is not loaded")
	require.GreaterOrEqual(t, cfg.CurrentEpoch, me.ConfigEpoch)
}

// parseRESP2 reads one RESP2 reply as go-redis gives it: arrays as
// []any, bulk and simple strings as string, integers as int64, nulls as
// nil.
func parseRESP2(t *testing.T, b []byte) (any, []byte) {
	t.Helper()
	i := bytes.Index(b, []byte("\r\n"))
	require.Positive(t, i)
	line, rest := string(b[1:i]), b[i+2:]
	switch b[0] {
	case '+':
		return line, rest
	case ':':
		n, err := strconv.ParseInt(line, 10, 64)
		require.NoError(t, err)
		return n, rest
	case '$':
		n, err := strconv.Atoi(line)
		require.NoError(t, err)
		if n < 0 {
			return nil, rest
		}
		return string(rest[:n]), rest[n+2:]
	case '*':
		n, err := strconv.Atoi(line)
		require.NoError(t, err)
		if n < 0 {
			return nil, rest
		}
		a := []any{}
		for range n {
			var v any
			v, rest = parseRESP2(t, rest)
			a = append(a, v)
		}
		return a, rest
	}
	t.Fatalf("not RESP2: %q", b)
	return nil, nil
}

// shardSet is a CLUSTER SHARDS reply as sorted strings, one per shard,
// with the replication offsets zeroed.
func shardSet(shards []any) []string {
	var zero func(v any)
	zero = func(v any) {
		a, ok := v.([]any)
		if !ok {
			return
		}
		for i := range a {
			if i+1 < len(a) && a[i] == "replication-offset" {
				a[i+1] = int64(0)
			}
			zero(a[i])
		}
	}
	var out []string
	for _, sh := range shards {
		zero(sh)
		out = append(out, fmt.Sprint(sh))
	}
	slices.Sort(out)
	return out
}

func TestParseNodesConfRefuses(t *testing.T) {
	const me = "e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca"
	good := me + " 127.0.0.1:7000@17000 myself,master - 0 0 1 connected 0-10\nvars currentEpoch 1 lastVoteEpoch 0\n"
	cfg, err := ParseNodesConf([]byte(good), 5)
	require.NoError(t, err)
	require.Equal(t, good, string(cfg.NodesConf()))
	cfg, err = ParseNodesConf(nil, 5)
	require.NoError(t, err)
	require.Nil(t, cfg, "an empty file: a new configuration")
	for _, bad := range []string{
		"vars currentEpoch\n",
		me + " 127.0.0.1:7000@17000 myself,master - 0 0 1\n", // seven fields
		"E7D1EECCE10FD6BB5EB35B9F99A514335D9BA9CA 127.0.0.1:7000@17000 myself,master - 0 0 1 connected\n", // upper case
		me + " 127.0.0.1 myself,master - 0 0 1 connected\n",                                               // no port
		me + " 127.0.0.1:7000@17000 myself,master,primary - 0 0 1 connected\n",                            // unknown flag
		me + " 127.0.0.1:7000@17000 master - 0 0 1 connected\n",                                           // no myself
		me + " 127.0.0.1:7000@17000 myself,master - 0 0 1 connected 16384\n",                              // slot out of range
		me + " 127.0.0.1:7000@17000 myself,master - 0 0 1 connected 5-16384\n",                            // range out of range
		me + " 127.0.0.1:7000@17000 myself,master - 0 0 1 connected [5->-xyz]\n",                          // bad node name
		me + " 127.0.0.1:7000@17000 myself,master - 0 0 1 connected [5\n",
		me + " 127.0.0.1:7000@17000 myself,master notaname 0 0 1 connected\n",
		me + " 127.0.0.1:7000@17000 myself,master \"\" 0 0 1 connected\n", // an empty master
		me + " 127.0.0.1:7000@17000 myself,master - 0 0 1 connected \"unterminated\n",
	} {
		_, err := ParseNodesConf([]byte(bad), 5)
		require.ErrorIs(t, err, ErrCorrupted, "%q", bad)
	}
	// An empty slot argument is slot 0, as Redis's atoi reads it.
	cfg, err = ParseNodesConf([]byte(me+" 127.0.0.1:7000@17000 myself,master - 0 0 1 connected \"\"\n"), 5)
	require.NoError(t, err)
	require.True(t, cfg.Myself.Slots.Has(0))
	// A file of 3.x, without the bus port.
	cfg, err = ParseNodesConf([]byte(me+" 127.0.0.1:7000 myself,master - 0 0 0 connected\n"), 5)
	require.NoError(t, err)
	require.Equal(t, 17000, cfg.Myself.CPort)
	require.Equal(t, fmt.Sprintf("%s 127.0.0.1:7000@17000 myself,master - 0 0 0 connected", me), string(cfg.AppendNode(nil, cfg.Myself, false)))
}
