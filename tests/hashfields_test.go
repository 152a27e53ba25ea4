package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zredis/zredis/zmqpub"
)

// Hash fields that expire on their own (Redis 7.4's HEXPIRE family), end
// to end: the expiry stream's hash-fields messages, the HDELs a master
// propagates, a zredis replica keeping field deadlines, a redis-server
// 7.0 replica refused them, and the AOF across a kill -9.

// TestHashFieldsExpiryStream sends every field that expires on its own
// as a hash-fields message with its value, the fields of one hash due in
// the same millisecond together; the hash goes with its last field,
// without a message of its own.
func TestHashFieldsExpiryStream(t *testing.T) {
	ep := zmqEndpoint(t)
	z := StartZredis(t, "--expiry-zmq-endpoints", ep, "--expiry-zmq-types", "string hash hash-fields")
	l := startListener(t, []string{ep})
	c := Dial(t, z.Addr)
	// Relative times, each later than the one before whatever the pace
	// of the machine: one command's fields share its deadline.
	require.Equal(t, ":4\r\n", c.Do("HSET", "mail:1", "from", "a@example.org", "rcpt:1", "deferred", "rcpt:2", "sent", "lock", "w1"))
	require.Equal(t, "*2\r\n:1\r\n:1\r\n", c.Do("HPEXPIRE", "mail:1", "300", "FIELDS", "2", "rcpt:1", "lock"))
	require.Equal(t, "*1\r\n:1\r\n", c.Do("HPEXPIRE", "mail:1", "400", "FIELDS", "1", "rcpt:2"))
	require.Equal(t, ":1\r\n", c.Do("HSET", "small", "only", "v"))
	require.Equal(t, "*1\r\n:1\r\n", c.Do("HPEXPIRE", "small", "500", "FIELDS", "1", "only"))

	msgs := l.recv(t, 3, 10*time.Second)
	pairs := func(d zmqpub.Decoded) map[string]string {
		m := map[string]string{}
		for i := 0; i+1 < len(d.Parts); i += 2 {
			m[string(d.Parts[i])] = string(d.Parts[i+1])
		}
		return m
	}
	for _, d := range msgs {
		assert.Equal(t, zmqpub.TypeHashFields, d.Type)
	}
	assert.Equal(t, "mail:1", string(msgs[0].Key))
	assert.Equal(t, map[string]string{"rcpt:1": "deferred", "lock": "w1"}, pairs(msgs[0]), "one message for the fields of one millisecond")
	assert.Equal(t, map[string]string{"rcpt:2": "sent"}, pairs(msgs[1]))
	assert.Equal(t, "small", string(msgs[2].Key))
	assert.Equal(t, map[string]string{"only": "v"}, pairs(msgs[2]))
	assert.Equal(t, ":0\r\n", c.Do("EXISTS", "small"), "the hash went with its last field")
	assert.Equal(t, "*2\r\n$4\r\nfrom\r\n$13\r\na@example.org\r\n", c.Do("HGETALL", "mail:1"))
	assert.Equal(t, "4", infoField(t, c, "stats", "expired_subkeys"))
	assert.Equal(t, "0", infoField(t, c, "stats", "expired_keys"))

	// A field given a time already past is deleted, not expired: no
	// message, as EXPIRE with a past time.
	require.Equal(t, "*1\r\n:2\r\n", c.Do("HEXPIRE", "mail:1", "0", "FIELDS", "1", "from"))
	require.Equal(t, "+OK\r\n", c.Do("SET", "marker", "x"))
	require.Equal(t, ":1\r\n", c.Do("PEXPIRE", "marker", "10"))
	next := l.recv(t, 1, 10*time.Second)[0]
	assert.Equal(t, zmqpub.TypeString, next.Type, "the past-time deletion sent nothing")
}

// TestHashFieldsNotSentUnlessAsked: a listener written for the original
// two types never sees a hash-fields message with the default types.
func TestHashFieldsNotSentUnlessAsked(t *testing.T) {
	ep := zmqEndpoint(t)
	z := StartZredis(t, "--expiry-zmq-endpoints", ep)
	l := startListener(t, []string{ep})
	c := Dial(t, z.Addr)
	c.Do("HSET", "h", "f", "v", "g", "w")
	c.Do("HPEXPIRE", "h", "50", "FIELDS", "1", "f")
	c.Do("SET", "after", "1", "PX", "300")
	d := l.recv(t, 1, 10*time.Second)[0]
	assert.Equal(t, "after", string(d.Key))
	assert.Equal(t, "1", infoField(t, c, "stats", "expired_subkeys"))
}

// TestHashFieldsReplication: a master propagates HPEXPIREAT (absolute)
// and one HDEL per expired field, never a DEL; a zredis replica keeps
// the deadlines (HPEXPIRETIME answers there) and applies the HDELs.
func TestHashFieldsReplication(t *testing.T) {
	z := StartZredis(t, "--repl-diskless-sync-delay", "0")
	c := Dial(t, z.Addr)
	c.Do("HSET", "q", "a", "1", "b", "2", "c", "3")
	far := strconv.FormatInt(time.Now().Add(time.Hour).UnixMilli(), 10)
	require.Equal(t, "*1\r\n:1\r\n", c.Do("HPEXPIREAT", "q", far, "FIELDS", "1", "a"))
	r := StartZredis(t, "--replicaof", "127.0.0.1", strconv.Itoa(z.Port))
	waitLinkUp(t, r)
	rc := Dial(t, r.Addr)
	assert.Equal(t, "*1\r\n:"+far+"\r\n", rc.Do("HPEXPIRETIME", "q", "FIELDS", "1", "a"), "the full sync kept the deadline")

	require.Equal(t, "*2\r\n:1\r\n:1\r\n", c.Do("HEXPIRE", "q", "3", "FIELDS", "2", "b", "c"))
	waitConverged(t, z, r)
	masterAt := c.Do("HPEXPIRETIME", "q", "FIELDS", "2", "b", "c")
	assert.Equal(t, masterAt, rc.Do("HPEXPIRETIME", "q", "FIELDS", "2", "b", "c"), "propagated in absolute form")
	waitFor(t, func() bool { return rc.Do("HLEN", "q") == ":1\r\n" })
	assert.Equal(t, "*1\r\n:"+far+"\r\n", rc.Do("HPEXPIRETIME", "q", "FIELDS", "1", "a"))
	assert.Equal(t, "0", infoField(t, rc, "stats", "expired_subkeys"), "the replica expired nothing itself")

	// Writes that keep a field's deadline keep it on the replica too.
	require.Equal(t, ":1\r\n", c.Do("HSETEX", "q", "KEEPTTL", "FIELDS", "1", "a", "2.5"))
	require.Equal(t, "$3\r\n3.5\r\n", c.Do("HINCRBYFLOAT", "q", "a", "1"))
	require.Equal(t, ":4\r\n", c.Do("HINCRBY", "q", "n", "4"))
	waitConverged(t, z, r)
	assert.Equal(t, "*1\r\n:"+far+"\r\n", rc.Do("HPEXPIRETIME", "q", "FIELDS", "1", "a"))
	assert.Equal(t, "$3\r\n3.5\r\n", rc.Do("HGET", "q", "a"))
}

// TestHashFieldsOldReplicaRefused: while a redis-server 7.0 replica is
// attached, a command that would give a field a deadline is refused with
// a clear error, and such a replica cannot be synchronised in full while
// the data set holds field deadlines.
func TestHashFieldsOldReplicaRefused(t *testing.T) {
	RequireRedis(t)
	z := StartZredis(t, "--repl-diskless-sync-delay", "0")
	c := Dial(t, z.Addr)
	c.Do("HSET", "h", "f", "v")
	r := startReplica(t, z)
	waitLinkUp(t, r)
	got := c.Do("HEXPIRE", "h", "100", "FIELDS", "1", "f")
	assert.True(t, strings.HasPrefix(got, "-ERR hash field expiration is not supported by replica 127.0.0.1:"+strconv.Itoa(r.Port)), got)
	got = c.Do("HSETEX", "h", "EX", "100", "FIELDS", "1", "f", "v")
	assert.True(t, strings.HasPrefix(got, "-ERR hash field expiration is not supported"), got)
	assert.Equal(t, ":0\r\n", c.Do("HSET", "h", "f", "w"), "HSET without a deadline goes on")
	assert.Equal(t, "*1\r\n:-1\r\n", c.Do("HTTL", "h", "FIELDS", "1", "f"))
	r.Stop()

	// Now with a field deadline in the data set, a new 7.0 replica is
	// refused its full sync.
	waitFor(t, func() bool { return infoField(t, c, "replication", "connected_slaves") == "0" })
	require.Equal(t, "*1\r\n:1\r\n", c.Do("HEXPIRE", "h", "100", "FIELDS", "1", "f"))
	r2 := startReplica(t, z)
	waitOutput(t, z, "cannot load")
	assert.NotEqual(t, "up", replInfo(t, r2, "master_link_status"))
}

// TestHashFieldsAOFKill9 keeps pending field deadlines across a kill -9
// with appendfsync always, and the fields expire after the restart.
func TestHashFieldsAOFKill9(t *testing.T) {
	dir := t.TempDir()
	args := []string{"--dir", dir, "--appendonly", "yes", "--appendfsync", "always"}
	z := StartZredis(t, args...)
	c := Dial(t, z.Addr)
	for i := range 100 {
		k := fmt.Sprintf("h%d", i)
		c.Do("HSET", k, "keep", "k", "soon", "s", "later", "l")
		c.Do("HPEXPIRE", k, "4000", "FIELDS", "1", "soon")
		c.Do("HEXPIRE", k, "3600", "FIELDS", "1", "later")
	}
	c.Do("HINCRBYFLOAT", "h0", "later", "1")
	want := c.Do("HPEXPIRETIME", "h0", "FIELDS", "3", "keep", "soon", "later")
	// A field persisted before its deadline stays persisted when the AOF
	// is replayed after that deadline.
	c.Do("HSET", "p", "f", "v", "g", "w")
	require.Equal(t, "*1\r\n:1\r\n", c.Do("HPEXPIRE", "p", "1000", "FIELDS", "1", "f"))
	require.Equal(t, "*1\r\n:1\r\n", c.Do("HPERSIST", "p", "FIELDS", "1", "f"))
	z.Kill()
	time.Sleep(1100 * time.Millisecond) // the restart replays the HPERSIST after the deadline
	z2 := StartZredis(t, args...)
	c2 := Dial(t, z2.Addr)
	assert.Equal(t, want, c2.Do("HPEXPIRETIME", "h0", "FIELDS", "3", "keep", "soon", "later"))
	assert.Equal(t, "$1\r\nv\r\n", c2.Do("HGET", "p", "f"))
	assert.Equal(t, "*1\r\n:-1\r\n", c2.Do("HTTL", "p", "FIELDS", "1", "f"))
	waitFor(t, func() bool { return c2.Do("HEXISTS", "h99", "soon") == ":0\r\n" })
	assert.Equal(t, ":2\r\n", c2.Do("HLEN", "h50"))
	// The expired fields went to the AOF as HDELs, after the restart too.
	data, err := os.ReadFile(filepath.Join(dir, "appendonlydir", "appendonly.aof.1.incr.aof"))
	require.NoError(t, err)
	assert.Contains(t, string(data), "HPEXPIREAT")
	assert.NotContains(t, string(data), "$7\r\nHEXPIRE\r\n", "HEXPIRE propagates as HPEXPIREAT")
}

// pipelineCmds sends cmds in batches and reads their replies, failing on an
// error reply.
func pipelineCmds(t *testing.T, c *Conn, cmds [][]string) {
	t.Helper()
	const batch = 1000
	for i := 0; i < len(cmds); i += batch {
		var buf []byte
		end := min(i+batch, len(cmds))
		for _, cmd := range cmds[i:end] {
			buf = append(buf, Encode(cmd...)...)
		}
		c.Send(buf)
		for range cmds[i:end] {
			if r := c.Read(); strings.HasPrefix(r, "-") {
				t.Fatalf("error reply: %s", r)
			}
		}
	}
}

// TestHashFieldsStreamAtScale: 100,000 fields with deadlines spread over
// 2 s, among 1,000,000 volatile fields due in an hour, all arrive at a
// libzmq listener, each once, with its value.
func TestHashFieldsStreamAtScale(t *testing.T) {
	if testing.Short() {
		t.Skip("loads a million fields")
	}
	ep := zmqEndpoint(t)
	z := StartZredis(t, "--expiry-zmq-endpoints", ep, "--expiry-zmq-types", "hash-fields")
	c := Dial(t, z.Addr)
	var cmds [][]string
	for h := range 1000 {
		key := fmt.Sprintf("vol:%d", h)
		hset := []string{"HSET", key}
		exp := []string{"HEXPIRE", key, "3600", "FIELDS", "1000"}
		for f := range 1000 {
			hset = append(hset, fmt.Sprintf("f%d", f), "v")
			exp = append(exp, fmt.Sprintf("f%d", f))
		}
		cmds = append(cmds, hset, exp)
	}
	pipelineCmds(t, c, cmds)
	l := startListener(t, []string{ep})
	time.Sleep(200 * time.Millisecond) // the listener connects

	// Relative deadlines, 2 s after each field's own command plus its
	// place in the spread: a slow load delays them, never makes them past.
	const n = 100000
	cmds = cmds[:0]
	for i := range n {
		key := fmt.Sprintf("lag:%d", i%1000)
		f := fmt.Sprintf("f%d", i)
		ttl := strconv.FormatInt(2000+2000*int64(i)/n, 10)
		cmds = append(cmds, []string{"HSET", key, f, "value-" + f}, []string{"HPEXPIRE", key, ttl, "FIELDS", "1", f})
	}
	pipelineCmds(t, c, cmds)

	seen := make(map[string]bool, n)
	for len(seen) < n {
		d := l.recv(t, 1, 30*time.Second)[0]
		require.Equal(t, zmqpub.TypeHashFields, d.Type)
		for i := 0; i+1 < len(d.Parts); i += 2 {
			f := string(d.Parts[i])
			require.False(t, seen[f], "field %s sent twice", f)
			require.Equal(t, "value-"+f, string(d.Parts[i+1]))
			seen[f] = true
		}
	}
	assert.Equal(t, strconv.Itoa(n), infoField(t, c, "stats", "expired_subkeys"))
	assert.Contains(t, c.Do("INFO", "keyspace"), "subexpiry=1000\r\n", "the thousand hashes of long-lived fields stay indexed")
}

// TestHashFieldsNotifications: 7.4's keyspace events for field TTLs:
// hexpire, hpersist, hdel for a time already past, hexpired when fields
// expire (and del when the hash goes with its last field); 8.0's for
// HGETDEL and HSETEX.
func TestHashFieldsNotifications(t *testing.T) {
	z := StartZredis(t)
	c := Dial(t, z.Addr)
	require.Equal(t, "+OK\r\n", c.Do("CONFIG", "SET", "notify-keyspace-events", "KEA"))
	sub := Dial(t, z.Addr)
	require.Equal(t, "*3\r\n$10\r\npsubscribe\r\n$1\r\n*\r\n:1\r\n", sub.Do("PSUBSCRIBE", "*"))
	c.Do("HSET", "h", "a", "1", "b", "2", "c", "3")
	c.Do("HEXPIRE", "h", "100", "FIELDS", "1", "a")
	assert.Contains(t, c.Do("INFO", "keyspace"), ",subexpiry=1\r\n")
	c.Do("HPERSIST", "h", "FIELDS", "1", "a")
	// The hash leaves subexpiry with its last field TTL (7.4.1 keeps it
	// counted until its active expiry looks: TestHFEDiff's one skip).
	assert.Contains(t, c.Do("INFO", "keyspace"), ",subexpiry=0\r\n")
	c.Do("HEXPIRE", "h", "0", "FIELDS", "1", "a")
	c.Do("HPEXPIRE", "h", "20", "FIELDS", "2", "b", "c")
	waitFor(t, func() bool { return c.Do("EXISTS", "h") == ":0\r\n" })
	c.Do("HSETEX", "g", "PX", "100000", "FIELDS", "1", "x", "1")
	c.Do("HGETDEL", "g", "FIELDS", "1", "x")
	c.Do("PUBLISH", notifySentinel, "end")
	got := readNotifications(t, sub)
	want := []string{
		"__keyspace@0__:h -> hset", "__keyevent@0__:hset -> h",
		"__keyspace@0__:h -> hexpire", "__keyevent@0__:hexpire -> h",
		"__keyspace@0__:h -> hpersist", "__keyevent@0__:hpersist -> h",
		"__keyspace@0__:h -> hdel", "__keyevent@0__:hdel -> h",
		"__keyspace@0__:h -> hexpire", "__keyevent@0__:hexpire -> h",
		"__keyspace@0__:h -> hexpired", "__keyevent@0__:hexpired -> h",
		"__keyspace@0__:h -> del", "__keyevent@0__:del -> h",
		"__keyspace@0__:g -> hset", "__keyevent@0__:hset -> g",
		"__keyspace@0__:g -> hexpire", "__keyevent@0__:hexpire -> g",
		"__keyspace@0__:g -> hdel", "__keyevent@0__:hdel -> g",
		"__keyspace@0__:g -> del", "__keyevent@0__:del -> g",
	}
	assert.Equal(t, want, got)
}

// TestHashFieldsAOFRewrite: an AOF rewrite keeps field TTLs, with the
// RDB preamble (a version 12 base) and without (HPEXPIREAT commands),
// and a restart on it has them.
func TestHashFieldsAOFRewrite(t *testing.T) {
	for _, preamble := range []string{"yes", "no"} {
		t.Run("preamble-"+preamble, func(t *testing.T) {
			dir := t.TempDir()
			args := []string{"--dir", dir, "--appendonly", "yes", "--aof-use-rdb-preamble", preamble}
			z := StartZredis(t, args...)
			c := Dial(t, z.Addr)
			c.Do("HSET", "small", "a", "1", "b", "2")
			require.Equal(t, "*1\r\n:1\r\n", c.Do("HPEXPIREAT", "small", "4102444800000", "FIELDS", "1", "a"))
			var big []string
			for i := range 300 {
				big = append(big, fmt.Sprintf("f%d", i), "v")
			}
			c.Do(append([]string{"HSET", "big"}, big...)...)
			require.Equal(t, "*2\r\n:1\r\n:1\r\n", c.Do("HPEXPIREAT", "big", "4102444801000", "FIELDS", "2", "f1", "f2"))
			c.Do("BGREWRITEAOF")
			waitInfo(t, c, "aof_rewrite_in_progress", "0", 30*time.Second)
			waitFor(t, func() bool { return infoField(t, c, "persistence", "aof_rewrite_scheduled") == "0" })
			want := c.Do("HPEXPIRETIME", "big", "FIELDS", "3", "f1", "f2", "f3")
			bases, err := filepath.Glob(filepath.Join(dir, "appendonlydir", "appendonly.aof.2.base.*"))
			require.NoError(t, err)
			require.Len(t, bases, 1, "the rewrite made the second base")
			base, err := os.ReadFile(bases[0])
			require.NoError(t, err)
			if preamble == "yes" {
				assert.True(t, strings.HasPrefix(string(base), "REDIS0012"), "a base with field TTLs is RDB version 12")
			} else {
				assert.Contains(t, string(base), "HPEXPIREAT")
			}
			z.Stop()
			z2 := StartZredis(t, args...)
			c2 := Dial(t, z2.Addr)
			assert.Equal(t, "*2\r\n:4102444800000\r\n:-1\r\n", c2.Do("HPEXPIRETIME", "small", "FIELDS", "2", "a", "b"))
			assert.Equal(t, want, c2.Do("HPEXPIRETIME", "big", "FIELDS", "3", "f1", "f2", "f3"))
			assert.Equal(t, ":300\r\n", c2.Do("HLEN", "big"))
		})
	}
}
