package tests

// Three parts of replication, each held against redis-server 7.0 doing
// the same: PUBLISH and SPUBLISH propagated to replicas only (their
// subscribers get the master's messages; the AOF does not get them), the
// replication traffic in INFO stats (total_net_repl_*_bytes,
// instantaneous_*_repl_kbps, within the network totals), and a replica
// that cannot write to its disk (replica-ignore-disk-write-errors).

import (
	"encoding/hex"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// startKind starts zredis or redis-server with args.
func startKind(t *testing.T, kind string, args ...string) *Proc {
	t.Helper()
	if kind == "redis" {
		return StartRedis(t, args...)
	}
	return StartZredis(t, args...)
}

// replicaArgs are the arguments of a replica of master, of either kind
// (a stock replica loads its payload from disk, as zredis does).
func replicaArgs(kind string, master *Proc, extra ...string) []string {
	args := append([]string{"--replicaof", "127.0.0.1", strconv.Itoa(master.Port)}, extra...)
	if kind == "redis" {
		args = append(args, "--repl-diskless-load", "disabled")
	}
	return args
}

// statField reads one INFO stats field as a number.
func statField(t *testing.T, c *Conn, field string) int64 {
	t.Helper()
	v := infoField(t, c, "stats", field)
	n, err := strconv.ParseInt(v, 10, 64)
	require.NoError(t, err, "INFO stats %s: %q", field, v)
	return n
}

// replOffset reads master_repl_offset (on a master) or slave_repl_offset
// (on a replica).
func replOffset(t *testing.T, c *Conn, field string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(infoField(t, c, "replication", field), 10, 64)
	require.NoError(t, err)
	return n
}

// ---- PUBLISH ------------------------------------------------------------------

// publishScenario runs PUBLISH and SPUBLISH on master, alone and inside
// transactions, with one subscriber on each replica (channel, pattern and
// shard channel), and returns what the master's AOF got and what each
// replica's subscriber received, in order.
func publishScenario(t *testing.T, master *Proc, replicas ...*Proc) (aofLines []string, received [][]string) {
	t.Helper()
	mc := Dial(t, master.Addr)
	aof := newAOFProp(t, master)
	subs := make([]*Conn, len(replicas))
	for i, r := range replicas {
		replicaConverged(t, mc, Dial(t, r.Addr))
		subs[i] = Dial(t, r.Addr)
		require.Equal(t, "*3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n", subs[i].Do("SUBSCRIBE", "ch"))
		require.Equal(t, "*3\r\n$10\r\npsubscribe\r\n$2\r\nc*\r\n:2\r\n", subs[i].Do("PSUBSCRIBE", "c*"))
		require.Equal(t, "*3\r\n$10\r\nssubscribe\r\n$3\r\nsch\r\n:1\r\n", subs[i].Do("SSUBSCRIBE", "sch"))
	}
	aof.appended() // what the AOF held before

	steps := [][]string{
		{"PUBLISH", "ch", "hello"},
		{"SPUBLISH", "sch", "shard"},
		{"SELECT", "2"},
		{"PUBLISH", "ch", "in db 2"},
		{"MULTI"}, {"PUBLISH", "ch", "a"}, {"SET", "k", "v"}, {"EXEC"},
		{"MULTI"}, {"PUBLISH", "ch", "b"}, {"PUBLISH", "other", "c"}, {"EXEC"},
		{"SET", "k2", "v2"},
	}
	var replies []string
	for _, s := range steps {
		replies = append(replies, mc.Do(s...))
	}
	// No subscriber on the master: PUBLISH answers 0.
	require.Equal(t, []string{":0\r\n", ":0\r\n", "+OK\r\n", ":0\r\n",
		"+OK\r\n", "+QUEUED\r\n", "+QUEUED\r\n", "*2\r\n:0\r\n+OK\r\n",
		"+OK\r\n", "+QUEUED\r\n", "+QUEUED\r\n", "*2\r\n:0\r\n:0\r\n", "+OK\r\n"}, replies)
	aofLines = aof.appended()

	// Each subscriber gets every message once, in the master's order:
	// ch matches both its channel and its pattern, "other" neither.
	for i, r := range replicas {
		replicaConverged(t, mc, Dial(t, r.Addr))
		var got []string
		for range 9 {
			got = append(got, subs[i].Read())
		}
		received = append(received, got)
		rc := Dial(t, r.Addr)
		rc.Do("SELECT", "2")
		assert.Equal(t, "$2\r\nv2\r\n", rc.Do("GET", "k2"), "replica %s", r.Name)
	}
	return aofLines, received
}

// A PUBLISH (and SPUBLISH) on the master reaches the subscribers of a
// stock replica and of a zredis replica, also inside MULTI; the master's
// AOF never gets it (a transaction of two PUBLISHes leaves an empty MULTI
// ... EXEC there, as redis-server's); the replicas' offsets still match
// the master's, which counted the PUBLISHes into its stream. The same
// scenario on a redis-server master gives the same AOF and messages.
func TestReplicationPublish(t *testing.T) {
	RequireRedis(t)
	masterArgs := []string{"--appendonly", "yes", "--appendfsync", "always", "--repl-diskless-sync-delay", "0"}
	results := map[string][]string{}
	messages := map[string][][]string{}
	for _, kind := range []string{"zredis", "redis"} {
		t.Run(kind+" master", func(t *testing.T) {
			m := startKind(t, kind, masterArgs...)
			rr := StartRedis(t, replicaArgs("redis", m)...)
			zr := StartZredis(t, replicaArgs("zredis", m)...)
			aofLines, received := publishScenario(t, m, rr, zr)
			results[kind], messages[kind] = aofLines, received
			assert.Equal(t, []string{"SELECT 2", "MULTI", "SET k v", "EXEC", "MULTI", "EXEC", "SET k2 v2"}, aofLines)
			want := []string{
				"*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$5\r\nhello\r\n",
				"*4\r\n$8\r\npmessage\r\n$2\r\nc*\r\n$2\r\nch\r\n$5\r\nhello\r\n",
				"*3\r\n$8\r\nsmessage\r\n$3\r\nsch\r\n$5\r\nshard\r\n",
				"*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$7\r\nin db 2\r\n",
				"*4\r\n$8\r\npmessage\r\n$2\r\nc*\r\n$2\r\nch\r\n$7\r\nin db 2\r\n",
				"*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$1\r\na\r\n",
				"*4\r\n$8\r\npmessage\r\n$2\r\nc*\r\n$2\r\nch\r\n$1\r\na\r\n",
				"*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$1\r\nb\r\n",
				"*4\r\n$8\r\npmessage\r\n$2\r\nc*\r\n$2\r\nch\r\n$1\r\nb\r\n",
			}
			for i, got := range received {
				assert.Equal(t, want, got, "replica %d", i)
			}
		})
	}
	if results["redis"] != nil && results["zredis"] != nil {
		assert.Equal(t, results["redis"], results["zredis"], "the masters' AOFs")
		assert.Equal(t, messages["redis"], messages["zredis"], "the replicas' messages")
	}
}

// ---- INFO stats ---------------------------------------------------------------

// The replication traffic in INFO stats, for every pairing of zredis and
// redis-server: nothing before a replica; once one synchronised, the
// master counts what it wrote to it as total_net_repl_output_bytes and
// the replica what it read as total_net_repl_input_bytes, both within
// the network totals; afterwards each grows by exactly the stream's
// bytes (the offsets' growth); the instantaneous repl rates move; CONFIG
// RESETSTAT zeroes them.
func TestReplicationNetStats(t *testing.T) {
	RequireRedis(t)
	// Values the RDB does not compress.
	rnd := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, 50_000)
	for i := range b {
		b[i] = byte(rnd.Uint32())
	}
	big := hex.EncodeToString(b)
	for _, pair := range [][2]string{{"zredis", "redis"}, {"redis", "zredis"}, {"zredis", "zredis"}, {"redis", "redis"}} {
		t.Run(pair[0]+" master, "+pair[1]+" replica", func(t *testing.T) {
			// No PING during the test: every stream byte is a write's.
			m := startKind(t, pair[0], "--repl-diskless-sync-delay", "0", "--repl-ping-replica-period", "3600")
			mc := Dial(t, m.Addr)
			mc.Do("SET", "before", big)
			assert.Zero(t, statField(t, mc, "total_net_repl_output_bytes"), "no replica yet")
			assert.Zero(t, statField(t, mc, "total_net_repl_input_bytes"))

			r := startKind(t, pair[1], replicaArgs(pair[1], m)...)
			rc := Dial(t, r.Addr)
			replicaConverged(t, mc, rc)
			assert.Greater(t, statField(t, mc, "total_net_repl_output_bytes"), int64(len(big)/2), "the RDB payload")
			assert.Greater(t, statField(t, rc, "total_net_repl_input_bytes"), int64(len(big)/2), "the RDB payload")
			assert.Zero(t, statField(t, mc, "total_net_repl_input_bytes"))
			assert.Zero(t, statField(t, rc, "total_net_repl_output_bytes"))

			mOut, mTotal, mOff := statField(t, mc, "total_net_repl_output_bytes"), statField(t, mc, "total_net_output_bytes"), replOffset(t, mc, "master_repl_offset")
			rIn, rTotal, rOff := statField(t, rc, "total_net_repl_input_bytes"), statField(t, rc, "total_net_input_bytes"), replOffset(t, rc, "slave_repl_offset")
			assert.GreaterOrEqual(t, mTotal, mOut, "the total includes replication")
			assert.GreaterOrEqual(t, rTotal, rIn, "the total includes replication")
			// Written until both rates show it: the cron samples them
			// every 100 ms, from its first tick on.
			n := 0
			waitFor(t, func() bool {
				require.Equal(t, "+OK\r\n", mc.Do("SET", "k"+strconv.Itoa(n%10), big))
				n++
				return n >= 10 && infoField(t, mc, "stats", "instantaneous_output_repl_kbps") != "0.00" &&
					infoField(t, rc, "stats", "instantaneous_input_repl_kbps") != "0.00"
			})
			mc.Do("PUBLISH", "ch", "m")
			replicaConverged(t, mc, rc)
			stream := replOffset(t, mc, "master_repl_offset") - mOff
			assert.Greater(t, stream, int64(10*len(big)))
			assert.Equal(t, stream, statField(t, mc, "total_net_repl_output_bytes")-mOut, "the master wrote the stream")
			assert.Equal(t, stream, replOffset(t, rc, "slave_repl_offset")-rOff)
			assert.Equal(t, stream, statField(t, rc, "total_net_repl_input_bytes")-rIn, "the replica read the stream")
			assert.GreaterOrEqual(t, statField(t, mc, "total_net_output_bytes")-mTotal, stream)
			assert.GreaterOrEqual(t, statField(t, rc, "total_net_input_bytes")-rTotal, stream)

			for _, c := range []*Conn{mc, rc} {
				require.Equal(t, "+OK\r\n", c.Do("CONFIG", "RESETSTAT"))
				assert.Zero(t, statField(t, c, "total_net_repl_output_bytes"))
				assert.Zero(t, statField(t, c, "total_net_repl_input_bytes"))
			}
		})
	}
}

// ---- replica-ignore-disk-write-errors -----------------------------------------

// A replica whose writes are refused for a disk error (a failed BGSAVE
// with save points: clients get MISCONF) and whose master then writes:
// with replica-ignore-disk-write-errors no (the default) it panics, the
// log saying "Guru Meditation: Replica was unable to write command to
// disk." and the process ending abnormally; with yes it applies the write
// and logs "Replica is applying a command even though it is unable to
// write to disk.". redis-server does the same.
func TestReplicaIgnoreDiskWriteErrors(t *testing.T) {
	RequireRedis(t)
	for _, kind := range []string{"zredis", "redis"} {
		for _, ignore := range []string{"no", "yes"} {
			t.Run(kind+" replica, "+ignore, func(t *testing.T) {
				m := StartZredis(t, "--repl-diskless-sync-delay", "0")
				mc := Dial(t, m.Addr)
				dir := t.TempDir()
				r := startKind(t, kind, replicaArgs(kind, m, "--dir", dir, "--save", "3600 1",
					"--replica-ignore-disk-write-errors", ignore)...)
				rc := Dial(t, r.Addr)
				require.Equal(t, "+OK\r\n", mc.Do("SET", "a", "1"))
				replicaConverged(t, mc, rc)

				// A directory in the way of dbfilename fails the save.
				require.NoError(t, os.RemoveAll(filepath.Join(dir, "dump.rdb")))
				require.NoError(t, os.Mkdir(filepath.Join(dir, "dump.rdb"), 0o755))
				require.Equal(t, "+Background saving started\r\n", rc.Do("BGSAVE"))
				waitFor(t, func() bool { return infoField(t, rc, "persistence", "rdb_last_bgsave_status") == "err" })
				require.True(t, strings.HasPrefix(rc.Do("SET", "x", "y"), "-MISCONF "), "a client's write")

				require.Equal(t, "+OK\r\n", mc.Do("SET", "k", "v"))
				if ignore == "no" {
					code, exited := r.Wait(30 * time.Second)
					require.True(t, exited, "the replica still runs")
					assert.NotZero(t, code)
					assert.Contains(t, r.Output(), "# Guru Meditation: Replica was unable to write command to disk. #")
					return
				}
				waitFor(t, func() bool { return rc.Do("GET", "k") == "$1\r\nv\r\n" })
				waitFor(t, func() bool {
					return strings.Contains(r.Output(), "# Replica is applying a command even though it is unable to write to disk.\n")
				})
				assert.False(t, r.Exited())
				// No final save (it would fail, and the shutdown with it).
				require.Equal(t, "+OK\r\n", rc.Do("CONFIG", "SET", "save", ""))
			})
		}
	}
}
