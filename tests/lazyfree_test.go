package tests

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// lazyfreed is INFO's lazyfreed_objects once nothing waits for
// redis-server's background thread (zredis has none: nothing pending).
func lazyfreed(t testing.TB, c *Conn) int64 {
	t.Helper()
	require.Eventually(t, func() bool {
		return infoInt(t, c, "memory", "lazyfree_pending_objects") == 0
	}, 10*time.Second, 5*time.Millisecond)
	return infoInt(t, c, "memory", "lazyfreed_objects")
}

// newLazyDiff is a Diff on servers of its own, for a test that changes
// the lazyfree directives and resets the statistics.
func newLazyDiff(t *testing.T, args ...string) *Diff {
	RequireRedis(t)
	z, r := StartZredis(t, args...), StartRedis(t, args...)
	return &Diff{t: t, Z: Dial(t, z.Addr), R: Dial(t, r.Addr)}
}

// lazyStep runs cmds on both servers, then requires the same
// lazyfreed_objects on both, and want.
func (d *Diff) lazyStep(what string, want int64, cmds ...[]string) {
	d.t.Helper()
	for _, args := range cmds {
		d.DoBoth(args...)
	}
	z, r := lazyfreed(d.t, d.Z), lazyfreed(d.t, d.R)
	diffCases.Add(1)
	assert.Equal(d.t, r, z, "%s: lazyfreed_objects, zredis against redis", what)
	assert.Equal(d.t, want, r, "%s: lazyfreed_objects of redis", what)
}

func sadd(key string, n int) []string {
	return cmd("SADD", []string{key}, numbered("m", n))
}

// TestLazyfreedObjectsDiff: lazyfreed_objects counts what redis-server
// 7.0 frees in its background thread: a value of more than 64
// allocations (hashtable or skiplist elements, quicklist nodes, stream
// rax nodes and groups) deleted by UNLINK, or by DEL, an expiry, an
// eviction or a command's side effect under the matching lazyfree-lazy-*
// directive; every key of FLUSHALL or FLUSHDB ASYNC; a script cache or
// function set of more than 64; and CONFIG RESETSTAT zeroes it.
func TestLazyfreedObjectsDiff(t *testing.T) {
	d := newLazyDiff(t, "--enable-debug-command", "yes")
	set := func(k string, v string) []string { return []string{"CONFIG", "SET", k, v} }
	d.lazyStep("start", 0)

	// UNLINK, by type and effort.
	d.lazyStep("hashtable set of 64", 0, sadd("s", 64), []string{"UNLINK", "s"})
	d.lazyStep("hashtable set of 65", 1, sadd("s", 65), []string{"UNLINK", "s"})
	d.lazyStep("intset", 1, cmd("SADD", []string{"s"}, numbered("", 500)), []string{"UNLINK", "s"})
	d.lazyStep("listpack zset", 1, cmd("ZADD", []string{"z"}, scored("m", 100)), []string{"UNLINK", "z"})
	d.lazyStep("skiplist zset", 2, cmd("ZADD", []string{"z"}, scored("m", 200)), []string{"UNLINK", "z"})
	d.lazyStep("skiplist zset of 64", 2, set("zset-max-listpack-entries", "0"),
		cmd("ZADD", []string{"z"}, scored("m", 64)), []string{"UNLINK", "z"}, set("zset-max-listpack-entries", "128"))
	var fields, long []string
	for i := 0; i < 200; i++ {
		fields = append(fields, "f"+strconv.Itoa(i), "v")
		long = append(long, "f"+strconv.Itoa(i), strings.Repeat("v", 70))
	}
	// One HSET of more fields than hash-max-listpack-entries leaves a
	// listpack in 7.0: only a value's length converts at once.
	d.lazyStep("listpack hash", 2, cmd("HSET", []string{"h"}, fields), []string{"UNLINK", "h"})
	d.lazyStep("hashtable hash of 64", 2, cmd("HSET", []string{"h"}, long[:128]), []string{"UNLINK", "h"})
	d.lazyStep("hashtable hash of 65", 3, cmd("HSET", []string{"h"}, long[:130]), []string{"UNLINK", "h"})
	d.lazyStep("string", 3, []string{"SET", "k", strings.Repeat("v", 100000)}, []string{"UNLINK", "k"})
	kb := strings.Repeat("x", 1000)
	var elems []string
	for i := 0; i < 600; i++ {
		elems = append(elems, kb)
	}
	d.lazyStep("list of 50 nodes", 3, cmd("RPUSH", []string{"l"}, elems[:400]), []string{"UNLINK", "l"})
	d.lazyStep("list of 75 nodes", 4, cmd("RPUSH", []string{"l"}, elems), []string{"UNLINK", "l"})
	d.lazyStep("list of 100000 small elements", 4, cmd("RPUSH", []string{"l"}, numbered("", 100000)), []string{"UNLINK", "l"})
	d.lazyStep("a node per element, 64", 4, set("list-max-listpack-size", "1"),
		cmd("RPUSH", []string{"l"}, numbered("", 64)), []string{"UNLINK", "l"})
	d.lazyStep("a node per element, 65", 5, cmd("LPUSH", []string{"l"}, numbered("", 65)), []string{"UNLINK", "l"},
		set("list-max-listpack-size", "-2"))

	// Streams: rax nodes, groups and the first group's PEL.
	var xadds [][]string
	for i := 1; i <= 100; i++ {
		xadds = append(xadds, []string{"XADD", "x", fmt.Sprintf("%d-1", i), "f", "v"})
	}
	d.lazyStep("stream of 20 nodes", 5, append([][]string{set("stream-node-max-entries", "5")}, append(xadds, []string{"UNLINK", "x"})...)...)
	d.lazyStep("stream of 20 nodes, 3 groups with a PEL of 20", 6, append(xadds,
		[]string{"XGROUP", "CREATE", "x", "a", "0"}, []string{"XGROUP", "CREATE", "x", "b", "0"}, []string{"XGROUP", "CREATE", "x", "c", "0"},
		[]string{"XREADGROUP", "GROUP", "a", "alice", "COUNT", "20", "STREAMS", "x", ">"}, []string{"UNLINK", "x"})...)
	d.lazyStep("stream of 100 nodes", 7, append(append([][]string{set("stream-node-max-entries", "1")}, xadds...), []string{"UNLINK", "x"})...)
	d.DoBoth("CONFIG", "SET", "stream-node-max-entries", "100")

	// DEL, GETDEL: lazyfree-lazy-user-del.
	d.lazyStep("DEL", 7, sadd("s", 100), []string{"DEL", "s"})
	d.lazyStep("DEL, lazy", 8, set("lazyfree-lazy-user-del", "yes"), sadd("s", 100), []string{"DEL", "s"},
		[]string{"SET", "k", "v"}, []string{"GETDEL", "k"}, set("lazyfree-lazy-user-del", "no"))

	// A command's side effects: lazyfree-lazy-server-del.
	server := [][]string{
		sadd("a", 100), sadd("b", 100),
		{"SUNION", "a", "b"}, {"SDIFF", "a", "nokey"}, // the temporary result
		{"SUNIONSTORE", "d", "a", "b"}, {"SUNIONSTORE", "d", "a", "b"}, // the destination overwritten
		{"SINTERSTORE", "d", "a", "nokey"}, // deleted by an empty result
		sadd("d", 100), {"SET", "d", "v"},
		sadd("e", 100), {"SPOP", "e", "1000"}, // the result and the key
		sadd("e", 100), {"RENAME", "a", "e"}, // the destination; the value moves
		{"COPY", "e", "b", "REPLACE"},
		{"ZADD", "z", "1", "a"}, {"ZUNIONSTORE", "z", "1", "e"}, // a listpack overwritten
		sadd("w", 200), {"ZUNIONSTORE", "y", "1", "w"}, {"ZUNIONSTORE", "y", "1", "w"}, // a skiplist overwritten
		{"RPUSH", "n", "3", "1", "2"}, {"SORT", "n", "STORE", "e"},
	}
	d.lazyStep("side effects", 8, server...)
	d.DoBoth("FLUSHALL")
	d.DoBoth("CONFIG", "SET", "lazyfree-lazy-server-del", "yes")
	d.lazyStep("side effects, lazy", 19, server...)
	d.DoBoth("CONFIG", "SET", "lazyfree-lazy-server-del", "no")

	// A deadline past: lazyfree-lazy-expire.
	d.lazyStep("EXPIRE in the past", 19, sadd("s", 100), []string{"EXPIRE", "s", "-1"})
	d.DoBoth("CONFIG", "SET", "lazyfree-lazy-expire", "yes")
	d.lazyStep("EXPIRE in the past, lazy", 20, sadd("s", 100), []string{"EXPIRE", "s", "-1"})
	d.DoBoth("DEBUG", "SET-ACTIVE-EXPIRE", "0")
	d.DoBoth(sadd("s", 100)...)
	d.DoBoth("PEXPIRE", "s", "1")
	d.DoBoth(sadd("s2", 100)...)
	d.DoBoth("PEXPIRE", "s2", "1")
	time.Sleep(20 * time.Millisecond)
	d.lazyStep("expired, met", 21, []string{"EXISTS", "s"})
	d.DoBoth("DEBUG", "SET-ACTIVE-EXPIRE", "1")
	require.Eventually(t, func() bool { return lazyfreed(t, d.Z) == 22 && lazyfreed(t, d.R) == 22 },
		5*time.Second, 10*time.Millisecond, "expired by the timer")
	d.DoBoth("CONFIG", "SET", "lazyfree-lazy-expire", "no")

	// Flushes: every key, whatever its size.
	d.DoBoth("FLUSHALL")
	d.DoBoth("SET", "a", "1")
	d.DoBoth(sadd("b", 100)...)
	d.DoBoth("SELECT", "3")
	d.DoBoth("SET", "c", "1")
	d.lazyStep("FLUSHDB", 22, []string{"FLUSHDB"})
	d.lazyStep("FLUSHDB ASYNC, empty", 22, []string{"FLUSHDB", "ASYNC"})
	d.lazyStep("FLUSHALL ASYNC", 25, []string{"SET", "c", "1"}, []string{"FLUSHALL", "ASYNC"})
	d.lazyStep("FLUSHALL SYNC", 25, []string{"SET", "c", "1"}, []string{"FLUSHALL", "SYNC"})
	d.DoBoth("CONFIG", "SET", "lazyfree-lazy-user-flush", "yes")
	d.lazyStep("FLUSHALL, lazy", 26, []string{"SET", "c", "1"}, []string{"FLUSHALL"})
	d.lazyStep("FLUSHDB SYNC, lazy", 26, []string{"SET", "c", "1"}, []string{"FLUSHDB", "SYNC"})
	d.DoBoth("SELECT", "0")

	// The script cache and the functions: more than 64.
	var scripts [][]string
	for i := 0; i < 65; i++ {
		scripts = append(scripts, []string{"SCRIPT", "LOAD", "return " + strconv.Itoa(i)})
	}
	d.lazyStep("SCRIPT FLUSH", 26, append(scripts, []string{"SCRIPT", "FLUSH", "SYNC"})...)
	d.lazyStep("SCRIPT FLUSH, lazy", 91, append(scripts, []string{"SCRIPT", "FLUSH"})...)
	d.lazyStep("64 scripts", 91, append(scripts[:64], []string{"SCRIPT", "FLUSH", "ASYNC"})...)
	lib := func(n int) []string {
		var b strings.Builder
		b.WriteString("#!lua name=many\n")
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, "redis.register_function('f%d', function() return %d end)\n", i, i)
		}
		return []string{"FUNCTION", "LOAD", b.String()}
	}
	d.lazyStep("FUNCTION FLUSH ASYNC, 64", 91, lib(64), []string{"FUNCTION", "FLUSH", "ASYNC"})
	d.lazyStep("FUNCTION FLUSH, lazy, 65", 156, lib(65), []string{"FUNCTION", "FLUSH"})
	d.lazyStep("FUNCTION FLUSH SYNC", 156, lib(65), []string{"FUNCTION", "FLUSH", "SYNC"})
	d.DoBoth("CONFIG", "SET", "lazyfree-lazy-user-flush", "no")

	d.lazyStep("CONFIG RESETSTAT", 0, []string{"CONFIG", "RESETSTAT"})
}

// TestLazyfreedTrackingTable: FLUSHDB ASYNC frees the tracking table in
// the background when its rax has more than 64 nodes, counting the keys
// it tracked.
func TestLazyfreedTrackingTable(t *testing.T) {
	d := newLazyDiff(t)
	for _, c := range []*Conn{d.Z, d.R} {
		require.Equal(t, "+OK\r\n", c.Do("CLIENT", "TRACKING", "on"))
	}
	read := func(keys ...string) (cmds [][]string) {
		for _, k := range keys {
			cmds = append(cmds, []string{"GET", k})
		}
		return cmds
	}
	var distinct, shared []string
	for i := 0; i < 32; i++ {
		distinct = append(distinct, string(rune('A'+i))+"key") // a branching root, a run and an end each
		shared = append(shared, "key:"+strconv.Itoa(i))
	}
	d.lazyStep("31 keys, 63 nodes", 0, append(read(distinct[:31]...), []string{"FLUSHDB", "ASYNC"})...)
	d.lazyStep("32 keys, 65 nodes", 32, append(read(distinct...), []string{"FLUSHDB", "ASYNC"})...)
	d.lazyStep("32 keys under a prefix", 32, append(read(shared...), []string{"FLUSHALL", "ASYNC"})...)
	d.lazyStep("sync", 32, append(read(distinct...), []string{"FLUSHDB"})...)
	d.lazyStep("with keys", 32+2+32, append(read(distinct...), []string{"SET", "a", "1"}, []string{"SET", "b", "1"},
		[]string{"FLUSHALL", "ASYNC"})...)
}

// TestLazyfreedEviction: under lazyfree-lazy-eviction every evicted key,
// each a set of 200 members, is freed in the background: the counter
// follows evicted_keys on both servers.
func TestLazyfreedEviction(t *testing.T) {
	onBothConfigured(t, []string{"--maxmemory", "4mb", "--maxmemory-policy", "allkeys-random", "--lazyfree-lazy-eviction", "yes"},
		func(t *testing.T, p *Proc) {
			c := Dial(t, p.Addr)
			// 1,000 sets of 200 members (about 5 MB) pass 4mb on both
			// servers whatever their start-up memory: 400 (about 2 MB
			// over zredis's 2.2-3.4 MB at start) could stop short of it.
			var cmds [][]string
			for i := 0; i < 1000; i++ {
				cmds = append(cmds, cmd("SADD", []string{"set:" + strconv.Itoa(i)}, numbered("member:", 200)))
			}
			pipeline(t, c, cmds)
			evicted := infoInt(t, c, "stats", "evicted_keys")
			require.NotZero(t, evicted)
			// redis-server counts a key when its background thread has
			// freed it, which may be just after the reply, and its
			// time-bounded eviction may go on evicting in its cron.
			assert.Eventually(t, func() bool {
				return lazyfreed(t, c) == infoInt(t, c, "stats", "evicted_keys")
			}, 10*time.Second, 10*time.Millisecond, "evicted %d, lazyfreed %d", evicted, lazyfreed(t, c))
		})
}

// TestLazyfreedReplicaFlush: with replica-lazy-flush, a replica's full
// synchronisation empties its data set in the background: its keys
// count, and its functions when more than 64.
func TestLazyfreedReplicaFlush(t *testing.T) {
	for _, name := range []string{"zredis", "redis"} {
		t.Run(name, func(t *testing.T) {
			diffCases.Add(1)
			master := StartServer(t, name)
			replica := StartServer(t, name, "--replica-lazy-flush", "yes")
			c := Dial(t, replica.Addr)
			var fn strings.Builder
			fn.WriteString("#!lua name=many\n")
			for i := 0; i < 65; i++ {
				fmt.Fprintf(&fn, "redis.register_function('f%d', function() return %d end)\n", i, i)
			}
			c.Do("FUNCTION", "LOAD", fn.String())
			c.Do("SET", "a", "1")
			c.Do(sadd("b", 100)...)
			c.Do("SELECT", "5")
			c.Do("SET", "c", "1")
			require.Equal(t, "+OK\r\n", c.Do("REPLICAOF", "127.0.0.1", strconv.Itoa(master.Port)))
			waitLinkUp(t, replica)
			assert.EqualValues(t, 3+65, lazyfreed(t, c))
		})
	}
}
