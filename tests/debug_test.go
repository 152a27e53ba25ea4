package tests

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// DEBUG against redis-server 7.0: the same writes give the same digests,
// the subcommands answer the same, bad input gets the same errors.

// debugDiff starts a zredis and a redis-server of their own, DEBUG
// allowed (enable-debug-command yes unless args set it), no save points;
// both are stopped when the test ends.
func debugDiff(t *testing.T, args ...string) *Diff {
	t.Helper()
	RequireRedis(t)
	if !strings.Contains(strings.Join(args, " "), "--enable-debug-command") {
		args = append([]string{"--enable-debug-command", "yes"}, args...)
	}
	args = append([]string{"--save", ""}, args...)
	z := StartZredis(t, args...)
	r := StartRedis(t, args...)
	return &Diff{t: t, Z: Dial(t, z.Addr), R: Dial(t, r.Addr)}
}

// debugWrites writes values of every type and encoding in databases 0
// and 5, on both servers, requiring the same replies, and returns the
// keys of database 0.
func debugWrites(d *Diff) []string {
	d.t.Helper()
	var keys []string
	do := func(args ...string) {
		d.t.Helper()
		d.Do(args...)
		if len(args) > 1 && !strings.EqualFold(args[0], "select") {
			keys = append(keys, args[1])
		}
	}
	do("SET", "str", "hello")
	do("SET", "int", "12345")
	do("SET", "neg", "-9223372036854775808")
	do("SET", "float", "3.14")
	do("SET", "long", strings.Repeat("abcdefgh", 20))
	do("INCRBY", "counter", "41")
	do("APPEND", "str", " world")
	do("SETRANGE", "raw", "3", "xyz")
	do("SET", "ttl", "v", "EX", "1000")
	do("SET", "pttl", "v", "PXAT", strconv.FormatInt(time.Now().Add(time.Hour).UnixMilli(), 10))
	do("SET", "persisted", "v", "EX", "1000")
	do("PERSIST", "persisted")
	do("RPUSH", "list", "a", "1", "2", "-3", "xyz")
	do("LPUSH", "list", "front")
	big := []string{"RPUSH", "biglist"}
	for i := range 1200 {
		big = append(big, "element-"+strconv.Itoa(i))
	}
	do(big...)
	do("SADD", "intset", "1", "2", "3", "-5", "100")
	do("SADD", "strset", "a", "b", "c", "1", "2")
	many := []string{"SADD", "bigset"}
	for i := range 600 {
		many = append(many, strconv.Itoa(i*7))
	}
	do(many...)
	do("ZADD", "zset", "1", "a", "2.5", "b", "-0", "c", "1e20", "d", "0.1", "e", "123456789012345678", "f")
	do("ZADD", "zinf", "inf", "a", "-inf", "b", "3", "c")
	zbig := []string{"ZADD", "bigzset"}
	for i := range 200 {
		zbig = append(zbig, strconv.FormatFloat(float64(i)/3, 'g', -1, 64), "m"+strconv.Itoa(i))
	}
	do(zbig...)
	do("HSET", "hash", "f1", "v1", "f2", "2", "f3", "-3.5")
	do("HSET", "ttlhash", "a", "1")
	do("EXPIRE", "ttlhash", "5000")
	hbig := []string{"HSET", "bighash"}
	for i := range 200 {
		hbig = append(hbig, "field"+strconv.Itoa(i), strconv.Itoa(i*i))
	}
	do(hbig...)
	do("HSET", "longvalhash", "f", strings.Repeat("x", 100))
	do("XADD", "stream", "1-1", "a", "1", "b", "2")
	do("XADD", "stream", "1-2", "c", "3")
	do("XADD", "stream", "2-0", "a", "1", "b", "2")
	do("XDEL", "stream", "1-2")
	do("XGROUP", "CREATE", "stream", "g", "0")
	for i := range 250 {
		do("XADD", "bigstream", strconv.Itoa(i+1)+"-0", "field", strconv.Itoa(i), "other", "x")
	}
	do("XADD", "emptied", "5-5", "k", "v")
	do("XDEL", "emptied", "5-5")
	d.Do("SELECT", "5")
	d.Do("SET", "str", "db5")
	d.Do("ZADD", "z", "5", "m")
	d.Do("SELECT", "0")
	return keys
}

// TestDebugDigest: DEBUG DIGEST and DIGEST-VALUE equal redis-server's for
// the same data, whatever the type and encoding, with deadlines, in
// several databases.
func TestDebugDigest(t *testing.T) {
	d := debugDiff(t)
	zero := "+0000000000000000000000000000000000000000\r\n"
	require.Equal(t, zero, d.Do("DEBUG", "DIGEST"))
	d.Do("DEBUG", "DIGEST-VALUE")
	d.Do("DEBUG", "DIGEST-VALUE", "nokey")
	keys := debugWrites(d)
	for _, k := range keys {
		d.Do("OBJECT", "ENCODING", k)
		d.Do("DEBUG", "DIGEST-VALUE", k)
	}
	d.Do(append([]string{"DEBUG", "DIGEST-VALUE"}, keys...)...)
	dg := d.Do("DEBUG", "DIGEST")
	assert.NotEqual(t, zero, dg)
	d.Do("SELECT", "5")
	d.Do("DEBUG", "DIGEST-VALUE", "str", "z")
	d.Do("SELECT", "0")

	// The digest follows the data: a change, and its undoing.
	d.Do("LSET", "list", "0", "other")
	assert.NotEqual(t, dg, d.Do("DEBUG", "DIGEST"))
	d.Do("LSET", "list", "0", "front")
	assert.Equal(t, dg, d.Do("DEBUG", "DIGEST"))
	d.Do("EXPIRE", "str", "100")
	assert.NotEqual(t, dg, d.Do("DEBUG", "DIGEST"))
	d.Do("FLUSHALL")
	d.Do("DEBUG", "DIGEST")
}

// TestDebugProtocol: every type in RESP2 and in RESP3, as redis-server
// sends it.
func TestDebugProtocol(t *testing.T) {
	d := debugDiff(t)
	types := []string{"string", "integer", "double", "bignum", "null", "array", "set", "map", "attrib", "push", "verbatim", "true", "false", "BOGUS", "Map"}
	for _, typ := range types {
		d.Do("DEBUG", "PROTOCOL", typ)
	}
	t.Run("resp3", func(t *testing.T) {
		d.t = t
		d.Resp3()
		for _, typ := range types {
			got := d.Do("DEBUG", "PROTOCOL", typ)
			if got[0] == '|' || got[0] == '>' {
				// An attribute or a push, then the reply itself.
				assert.Equal(t, d.R.Read(), d.Z.Read(), typ)
			}
		}
	})
}

// TestDebugGate: enable-debug-command no, yes and local, as redis-server.
func TestDebugGate(t *testing.T) {
	for _, v := range []string{"no", "local", "yes"} {
		t.Run(v, func(t *testing.T) {
			d := debugDiff(t, "--enable-debug-command", v)
			d.Do("DEBUG")
			d.Do("DEBUG", "HELP")
			d.Do("DEBUG", "SLEEP", "0")
			d.Do("debug", "bogus")
			d.Do("CONFIG", "GET", "enable-debug-command")
			d.Do("CONFIG", "SET", "enable-debug-command", "yes")
			d.Do("MULTI")
			d.Do("DEBUG", "SLEEP", "0")
			d.Do("EXEC")
			d.Do("COMMAND", "INFO", "debug")
			// Before authentication.
			d.Do("CONFIG", "SET", "requirepass", "pw")
			z, r := Dial(t, d.Z.nc.RemoteAddr().String()), Dial(t, d.R.nc.RemoteAddr().String())
			assert.Equal(t, r.Do("DEBUG", "SLEEP", "0"), z.Do("DEBUG", "SLEEP", "0"))
		})
	}
}

// TestDebugReload: RELOAD keeps the data (the same digest before and
// after, on both servers); NOSAVE loads the file as it is; the options
// and their errors are redis-server's.
func TestDebugReload(t *testing.T) {
	d := debugDiff(t)
	d.Do("DEBUG", "RELOAD")
	debugWrites(d)
	d.DoBoth("FUNCTION", "LOAD", "#!lua name=lib\nredis.register_function('f', function() return 1 end)")
	before := d.Do("DEBUG", "DIGEST")
	d.Do("DEBUG", "RELOAD")
	assert.Equal(t, before, d.Do("DEBUG", "DIGEST"))
	d.Do("DBSIZE")
	d.Do("FCALL", "f", "0")
	d.Do("TTL", "ttl")
	d.Do("OBJECT", "ENCODING", "bigset")
	d.Do("SET", "later", "x")
	d.Do("DEBUG", "RELOAD", "NOSAVE")
	d.Do("EXISTS", "later")
	assert.Equal(t, before, d.Do("DEBUG", "DIGEST"))
	d.Do("DEBUG", "RELOAD", "nosave", "noflush", "merge")
	assert.Equal(t, before, d.Do("DEBUG", "DIGEST"))
	// FLUSHALL keeps the library, which the file holds too: the load
	// fails on it, before any key.
	d.Do("FLUSHALL")
	d.Do("DEBUG", "reload", "NOSAVE", "NOFLUSH")
	d.Do("DEBUG", "DIGEST")
	d.Do("FUNCTION", "FLUSH")
	d.Do("DEBUG", "reload", "NOSAVE", "NOFLUSH")
	assert.Equal(t, before, d.Do("DEBUG", "DIGEST"))
	d.Do("FUNCTION", "LIST")
	d.Do("DEBUG", "RELOAD", "NOSAVE", "other")
	d.Do("DEBUG", "RELOAD", "bogus")
	d.Do("SELECT", "5")
	d.Do("DBSIZE")
}

// TestDebugLoadAOF: with appendonly yes, LOADAOF replays the AOF into
// the same dataset, and the AOF does not grow from it.
func TestDebugLoadAOF(t *testing.T) {
	d := debugDiff(t, "--appendonly", "yes")
	debugWrites(d)
	before := d.Do("DEBUG", "DIGEST")
	size := infoField(t, d.Z, "persistence", "aof_current_size")
	d.Do("DEBUG", "LOADAOF")
	assert.Equal(t, before, d.Do("DEBUG", "DIGEST"))
	assert.Equal(t, size, infoField(t, d.Z, "persistence", "aof_current_size"), "nothing replayed is appended again")
	assert.Equal(t, "0", infoField(t, d.Z, "persistence", "rdb_changes_since_last_save"))
	d.Do("SET", "after", "1")
	d.Do("DEBUG", "LOADAOF")
	d.Do("GET", "after")
	assert.NotEqual(t, before, d.Do("DEBUG", "DIGEST"))
}

// TestDebugPopulate: the keys, values, sizes and errors of POPULATE.
func TestDebugPopulate(t *testing.T) {
	d := debugDiff(t)
	d.Do("SET", "key:3", "mine")
	d.Do("DEBUG", "POPULATE", "10")
	d.Do("DBSIZE")
	for i := range 10 {
		d.Do("GET", "key:"+strconv.Itoa(i))
	}
	d.Do("DEBUG", "POPULATE", "5", "pre", "3")
	d.Do("DEBUG", "POPULATE", "5", "big", "20")
	d.Do("DEBUG", "POPULATE", "3", strings.Repeat("p", 130), "4")
	d.Do("DEBUG", "POPULATE", "0")
	d.Do("GET", "pre:4")
	d.Do("GET", "big:1")
	d.Do("STRLEN", "big:1")
	d.Do("OBJECT", "ENCODING", "big:1")
	d.Do("OBJECT", "ENCODING", "key:1")
	d.DoSorted("KEYS", "*")
	d.Do("DEBUG", "DIGEST")
	for _, args := range [][]string{{"-1"}, {"x"}, {"1", "a", "-1"}, {"1", "a", "b"}, {"1.5"}, {""}, {"1", "a", "1", "x"}} {
		d.Do(append([]string{"DEBUG", "POPULATE"}, args...)...)
	}
	// No change counted.
	assert.Equal(t, infoField(t, d.R, "persistence", "rdb_changes_since_last_save"), infoField(t, d.Z, "persistence", "rdb_changes_since_last_save"))
}

// TestDebugSleepAndExpire: SLEEP holds the server; SET-ACTIVE-EXPIRE 0
// leaves keys past their deadline in place until read.
func TestDebugSleepAndExpire(t *testing.T) {
	d := debugDiff(t)
	d.Do("DEBUG", "SLEEP", "0")
	d.Do("DEBUG", "SLEEP", "garbage")
	d.Do("DEBUG", "SLEEP", "-1")
	start := time.Now()
	d.Do("DEBUG", "SLEEP", "0.2")
	assert.GreaterOrEqual(t, time.Since(start), 400*time.Millisecond, "each server slept")

	d.Do("DEBUG", "SET-ACTIVE-EXPIRE", "0")
	d.Do("SET", "k", "v", "PX", "50")
	time.Sleep(300 * time.Millisecond)
	d.Do("DBSIZE")
	d.Do("DEBUG", "DIGEST-VALUE", "k")
	d.Do("GET", "k")
	d.Do("DBSIZE")
	d.Do("DEBUG", "SET-ACTIVE-EXPIRE", "1")
	d.Do("SET", "k2", "v", "PX", "50")
	for _, c := range []*Conn{d.Z, d.R} {
		require.Eventually(t, func() bool { return c.Do("DBSIZE") == ":0\r\n" }, 10*time.Second, 20*time.Millisecond)
	}
}

// debugObjectMask hides what differs between two processes in DEBUG
// OBJECT: the address and the LRU clock.
var debugObjectMask = regexp.MustCompile(`at:0x[0-9a-f]+|lru:\d+`)

// TestDebugIntrospection: OBJECT, LISTPACK, QUICKLIST, HTSTATS-KEY and
// the small subcommands, and every error of bad input, as redis-server.
func TestDebugIntrospection(t *testing.T) {
	d := debugDiff(t)
	debugWrites(d)
	for _, k := range []string{"str", "int", "neg", "float", "counter", "raw", "list", "biglist"} {
		z, r := d.Z.Do("DEBUG", "OBJECT", k), d.R.Do("DEBUG", "OBJECT", k)
		assert.Equal(t, debugObjectMask.ReplaceAllString(r, ""), debugObjectMask.ReplaceAllString(z, ""), k)
	}
	for _, k := range []string{"hash", "bighash", "zset", "bigzset", "intset", "bigset", "list", "str", "nokey"} {
		d.Do("DEBUG", "LISTPACK", k)
		d.Do("DEBUG", "QUICKLIST", k)
		d.Do("DEBUG", "QUICKLIST", k, "1")
		if k == "bighash" || k == "bigzset" || k == "bigset" {
			z, r := d.Z.Do("DEBUG", "HTSTATS-KEY", k), d.R.Do("DEBUG", "HTSTATS-KEY", k)
			for _, field := range []string{"table size", "number of elements"} {
				re := regexp.MustCompile(field + `: \d+`)
				assert.Equal(t, re.FindString(r), re.FindString(z), "%s %s", k, field)
			}
			continue
		}
		d.Do("DEBUG", "HTSTATS-KEY", k)
	}
	for _, args := range [][]string{
		{"DEBUG", "OBJECT", "nokey"},
		{"DEBUG", "HELP"},
		{"DEBUG", "HELP", "extra"},
		{"DEBUG", "bogus"},
		{"DEBUG", "object"},
		{"DEBUG", "object", "a", "b"},
		{"DEBUG", "digest", "x"},
		{"DEBUG", "sleep"},
		{"DEBUG", "protocol"},
		{"DEBUG", "protocol", "a", "b"},
		{"DEBUG", "populate"},
		{"DEBUG", "set-active-expire"},
		{"DEBUG", "change-repl-id", "x"},
		{"DEBUG", "stringmatch-test", "x"},
		{"DEBUG", "quicklist-packed-threshold"},
		{"DEBUG", "quicklist-packed-threshold", "1b"},
		{"DEBUG", "quicklist-packed-threshold", "0"},
		{"DEBUG", "quicklist-packed-threshold", "4gb"},
		{"DEBUG", "quicklist-packed-threshold", "abc"},
		{"DEBUG", "quicklist-packed-threshold", "-1"},
		{"DEBUG", "quicklist-packed-threshold", "100mb"},
		{"DEBUG", "set-skip-checksum-validation", "1"},
		{"DEBUG", "set-skip-checksum-validation", "0"},
		{"DEBUG", "set-disable-deny-scripts", "0"},
		{"DEBUG", "pause-cron", "0"},
		{"DEBUG", "replybuffer", "peak-reset-time", "never"},
		{"DEBUG", "replybuffer", "peak-reset-time", "reset"},
		{"DEBUG", "replybuffer", "peak-reset-time", "100"},
		{"DEBUG", "replybuffer", "peak-reset-time", "soon"},
		{"DEBUG", "replybuffer", "resizing", "1"},
		{"DEBUG", "replybuffer", "bogus", "1"},
		{"DEBUG", "replybuffer", "resizing"},
		{"DEBUG", "log", "hello from the test"},
		{"DEBUG", "log"},
		{"DEBUG", "error", "MYERR custom\nerror"},
		{"DEBUG", "error", ""},
		{"DEBUG", "leak", "x"},
		{"DEBUG", "aof-flush-sleep", "0"},
		{"DEBUG", "drop-cluster-packet-filter", "x"},
		{"DEBUG", "drop-cluster-packet-filter", "-1"},
		{"DEBUG", "clusterlink", "kill", "all", "abc"},
		{"DEBUG", "client-eviction"},
		{"DEBUG", "mallctl", "no.such.key"},
		{"DEBUG", "mallctl", "no.such.key", "x"},
		{"DEBUG", "mallctl-str", "no.such.key"},
		{"DEBUG", "htstats", "x"},
		{"DEBUG", "htstats", "-1"},
		{"DEBUG", "htstats", "16"},
		{"DEBUG", "htstats", "3"},
		{"DEBUG", "digest-value"},
		{"DEBUG", "listpack"},
	} {
		d.Do(args...)
	}
	// redis-server's DEBUG STRINGMATCH-TEST fuzzes its matcher for 11 s
	// on a quiet 2-core VM, past connDeadline beside a parallel make
	// test: its reply is awaited longer.
	d.Z.Send(Encode("DEBUG", "stringmatch-test"))
	d.R.Send(Encode("DEBUG", "stringmatch-test"))
	z, err := d.Z.ReadErr(3 * time.Minute)
	require.NoError(t, err)
	r, err := d.R.ReadErr(3 * time.Minute)
	require.NoError(t, err)
	assert.Equal(t, r, z)
	// What no client can see the same in two processes: the replication
	// ID changes, the server goes on.
	id := infoField(t, d.Z, "replication", "master_replid")
	d.Do("DEBUG", "CHANGE-REPL-ID")
	assert.NotEqual(t, id, infoField(t, d.Z, "replication", "master_replid"))
	d.Do("PING")
}

// TestDebugSkipChecksum: RESTORE of a payload whose CRC is wrong, refused
// until SET-SKIP-CHECKSUM-VALIDATION 1.
func TestDebugSkipChecksum(t *testing.T) {
	d := debugDiff(t)
	d.Do("SET", "k", "value")
	dump := d.Do("DUMP", "k")
	payload := []byte(dump[strings.Index(dump, "\r\n")+2 : len(dump)-2])
	payload[len(payload)-1] ^= 0xff
	d.Do("RESTORE", "k2", "0", string(payload))
	d.Do("DEBUG", "SET-SKIP-CHECKSUM-VALIDATION", "1")
	d.Do("RESTORE", "k2", "0", string(payload))
	d.Do("GET", "k2")
	d.Do("DEBUG", "SET-SKIP-CHECKSUM-VALIDATION", "0")
	d.Do("RESTORE", "k3", "0", string(payload))
}
