package commands

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/zredis/zredis/engine"
	"github.com/zredis/zredis/keyspace"
)

// kstep is one command of a scenario and its expected raw reply, or a
// move of the clock when advance is set.
type kstep struct {
	args    []string
	want    string
	advance time.Duration
}

func kcmd(want string, args ...string) kstep { return kstep{args: args, want: want} }
func kwait(d time.Duration) kstep            { return kstep{advance: d} }

func runScenario(t *testing.T, e *testEnv, steps []kstep) {
	t.Helper()
	for i, s := range steps {
		if s.advance != 0 {
			e.advance(s.advance)
			continue
		}
		require.Equal(t, s.want, e.run(s.args...), "step %d: %q", i, s.args)
	}
}

// Absolute times relative to the test clock.
var (
	kNowS  = testEpochMs / 1000
	kAt    = func(ms int64) string { return strconv.FormatInt(testEpochMs+ms, 10) }
	kAtSec = func(s int64) string { return strconv.FormatInt(kNowS+s, 10) }
)

func TestKeysCommands(t *testing.T) {
	cases := []struct {
		name  string
		steps []kstep
	}{
		{"del", []kstep{
			kcmd(replyOK, "SET", "a", "1"),
			kcmd(replyOK, "SET", "b", "1"),
			kcmd(replyInt(2), "DEL", "a", "b", "c", "a"),
			kcmd(replyInt(0), "DEL", "a"),
			kcmd(replyInt(0), "EXISTS", "a", "b"),
		}},
		{"unlink", []kstep{
			kcmd(replyOK, "SET", "a", "1"),
			kcmd(replyInt(1), "UNLINK", "a", "x"),
			kcmd(replyNull, "GET", "a"),
		}},
		{"exists counts repeats", []kstep{
			kcmd(replyOK, "SET", "a", "1"),
			kcmd(replyInt(3), "EXISTS", "a", "a", "nope", "a"),
		}},
		{"touch", []kstep{
			kcmd(replyOK, "SET", "a", "1"),
			kcmd(replyInt(1), "TOUCH", "a", "b"),
		}},
		{"type", []kstep{
			kcmd(replySimple("none"), "TYPE", "a"),
			kcmd(replyOK, "SET", "a", "1"),
			kcmd(replySimple("string"), "TYPE", "a"),
		}},
		{"expire and ttl", []kstep{
			kcmd(replyInt(0), "EXPIRE", "k", "10"),
			kcmd(replyInt(-2), "TTL", "k"),
			kcmd(replyOK, "SET", "k", "v"),
			kcmd(replyInt(-1), "TTL", "k"),
			kcmd(replyInt(-1), "PTTL", "k"),
			kcmd(replyInt(-1), "EXPIRETIME", "k"),
			kcmd(replyInt(1), "EXPIRE", "k", "10"),
			kcmd(replyInt(10), "TTL", "k"),
			kcmd(replyInt(10000), "PTTL", "k"),
			kcmd(replyInt(kNowS+10), "EXPIRETIME", "k"),
			kcmd(replyInt(testEpochMs+10000), "PEXPIRETIME", "k"),
			kwait(9499 * time.Millisecond),
			kcmd(replyInt(1), "TTL", "k"), // 501 ms rounds to 1 s
			kwait(2 * time.Millisecond),
			kcmd(replyInt(0), "TTL", "k"), // 499 ms rounds to 0 s
			kcmd(replyInt(499), "PTTL", "k"),
		}},
		{"pexpire expireat pexpireat", []kstep{
			kcmd(replyOK, "SET", "k", "v"),
			kcmd(replyInt(1), "PEXPIRE", "k", "1500"),
			kcmd(replyInt(1500), "PTTL", "k"),
			kcmd(replyInt(2), "TTL", "k"),
			kcmd(replyInt(1), "EXPIREAT", "k", kAtSec(100)),
			kcmd(replyInt(100000), "PTTL", "k"),
			kcmd(replyInt(1), "PEXPIREAT", "k", kAt(1234)),
			kcmd(replyInt(1234), "PTTL", "k"),
			kcmd(replyInt(testEpochMs+1234), "PEXPIRETIME", "k"),
			kcmd(replyInt(kNowS+1), "EXPIRETIME", "k"),
			kwait(1234 * time.Millisecond),
			kcmd(replyInt(-2), "PTTL", "k"),
			kcmd(replyInt(0), "EXISTS", "k"),
		}},
		{"expire in the past deletes", []kstep{
			kcmd(replyOK, "SET", "k", "v"),
			kcmd(replyInt(1), "EXPIRE", "k", "0"),
			kcmd(replyInt(0), "EXISTS", "k"),
			kcmd(replyOK, "SET", "k", "v"),
			kcmd(replyInt(1), "PEXPIREAT", "k", kAt(0)),
			kcmd(replyInt(0), "EXISTS", "k"),
			kcmd(replyOK, "SET", "k", "v"),
			kcmd(replyInt(1), "EXPIRE", "k", "-9223372036854775"),
			kcmd(replyInt(0), "EXISTS", "k"),
			kcmd(replyOK, "SET", "k", "v"),
			kcmd(replyInt(1), "PEXPIRE", "k", "-9223372036854775808"),
			kcmd(replyInt(0), "EXISTS", "k"),
		}},
		{"expire errors", []kstep{
			kcmd(replyOK, "SET", "k", "v"),
			kcmd(replyErr(engine.ErrNotInteger), "EXPIRE", "k", "1.5"),
			kcmd(replyErr(engine.ErrNotInteger), "EXPIRE", "k", "+1"),
			kcmd(replyErr(engine.ErrNotInteger), "EXPIRE", "k", " 1"),
			kcmd(replyErr(engine.ErrNotInteger), "EXPIRE", "k", ""),
			kcmd(replyErr("ERR Unsupported option foo"), "EXPIRE", "k", "10", "foo"),
			kcmd(replyErr("ERR Unsupported option foo"), "EXPIRE", "k", "abc", "foo"),
			kcmd(replyErr("ERR Unsupported option foo"), "EXPIRE", "nokey", "10", "nx", "foo"),
			kcmd(replyErr(engine.ErrExpireNXCombo), "EXPIRE", "k", "10", "nx", "xx"),
			kcmd(replyErr(engine.ErrExpireNXCombo), "EXPIRE", "k", "10", "NX", "GT"),
			kcmd(replyErr(engine.ErrExpireNXCombo), "EXPIRE", "k", "abc", "lt", "nx"),
			kcmd(replyErr(engine.ErrExpireGTLT), "EXPIRE", "k", "10", "gt", "lt"),
			kcmd(replyErr(engine.ErrExpireGTLT), "PEXPIRE", "k", "10", "xx", "gt", "lt"),
			kcmd(replyErr("ERR invalid expire time in 'expire' command"), "EXPIRE", "k", "9223372036854775807"),
			kcmd(replyErr("ERR invalid expire time in 'expire' command"), "EXPIRE", "k", "-9223372036854775808"),
			kcmd(replyErr("ERR invalid expire time in 'expire' command"), "EXPIRE", "k", "9223372036854776"),
			kcmd(replyErr("ERR invalid expire time in 'pexpire' command"), "PEXPIRE", "k", "9223372036854775807"),
			kcmd(replyErr("ERR invalid expire time in 'expireat' command"), "EXPIREAT", "k", "9223372036854776"),
			kcmd(replyInt(1), "PEXPIREAT", "k", "9223372036854775807"),
			kcmd(replyInt(9223372036854775807), "PEXPIRETIME", "k"),
			kcmd(replyErr(engine.ErrWrongArgs("expire")), "EXPIRE", "k"),
		}},
		{"expire NX XX", []kstep{
			kcmd(replyOK, "SET", "k", "v"),
			kcmd(replyInt(0), "EXPIRE", "k", "100", "xx"),
			kcmd(replyInt(-1), "TTL", "k"),
			kcmd(replyInt(1), "EXPIRE", "k", "100", "nx"),
			kcmd(replyInt(0), "EXPIRE", "k", "200", "nx"),
			kcmd(replyInt(100), "TTL", "k"),
			kcmd(replyInt(1), "EXPIRE", "k", "200", "xx"),
			kcmd(replyInt(200), "TTL", "k"),
			kcmd(replyInt(0), "EXPIRE", "nokey", "200", "nx"),
			kcmd(replyInt(1), "EXPIRE", "k", "300", "xx", "xx"),
		}},
		{"expire GT LT", []kstep{
			kcmd(replyOK, "SET", "k", "v"),
			kcmd(replyInt(0), "EXPIRE", "k", "100", "gt"), // no TTL = infinite
			kcmd(replyInt(1), "EXPIRE", "k", "100", "lt"),
			kcmd(replyInt(0), "EXPIRE", "k", "100", "lt"), // equal is not less
			kcmd(replyInt(0), "EXPIRE", "k", "100", "gt"), // nor greater
			kcmd(replyInt(1), "EXPIRE", "k", "200", "gt"),
			kcmd(replyInt(0), "EXPIRE", "k", "150", "gt"),
			kcmd(replyInt(1), "EXPIRE", "k", "150", "lt", "xx"),
			kcmd(replyInt(150), "TTL", "k"),
			kcmd(replyInt(1), "EXPIRE", "k", "-1", "lt"), // deletes
			kcmd(replyInt(0), "EXISTS", "k"),
			kcmd(replyOK, "SET", "k", "v"),
			kcmd(replyInt(0), "EXPIRE", "k", "-1", "gt"), // infinite is greater
			kcmd(replyInt(1), "EXISTS", "k"),
		}},
		{"persist", []kstep{
			kcmd(replyInt(0), "PERSIST", "k"),
			kcmd(replyOK, "SET", "k", "v", "EX", "100"),
			kcmd(replyInt(1), "PERSIST", "k"),
			kcmd(replyInt(0), "PERSIST", "k"),
			kcmd(replyInt(-1), "TTL", "k"),
		}},
		{"lazy expiry", []kstep{
			kcmd(replyOK, "SET", "k", "v", "PX", "100"),
			kwait(99 * time.Millisecond),
			kcmd(replyInt(1), "EXISTS", "k"),
			kcmd(replyInt(1), "PTTL", "k"),
			kwait(time.Millisecond),
			kcmd(replyInt(0), "EXISTS", "k"),
			kcmd(replySimple("none"), "TYPE", "k"),
			kcmd(replyInt(-2), "TTL", "k"),
		}},
		{"rename", []kstep{
			kcmd(replyErr(engine.ErrNoSuchKey), "RENAME", "a", "b"),
			kcmd(replyErr(engine.ErrNoSuchKey), "RENAME", "a", "a"),
			kcmd(replyErr(engine.ErrNoSuchKey), "RENAMENX", "a", "a"),
			kcmd(replyOK, "SET", "a", "1", "EX", "100"),
			kcmd(replyOK, "RENAME", "a", "a"),
			kcmd(replyInt(0), "RENAMENX", "a", "a"),
			kcmd(replyOK, "RENAME", "a", "b"),
			kcmd(replyInt(0), "EXISTS", "a"),
			kcmd(replyBulk("1"), "GET", "b"),
			kcmd(replyInt(100), "TTL", "b"),
			kcmd(replyOK, "SET", "c", "3"),
			kcmd(replyInt(0), "RENAMENX", "b", "c"),
			kcmd(replyOK, "RENAME", "c", "b"), // overwrites, drops b's TTL
			kcmd(replyBulk("3"), "GET", "b"),
			kcmd(replyInt(-1), "TTL", "b"),
			kcmd(replyInt(1), "RENAMENX", "b", "d"),
			kcmd(replyBulk("3"), "GET", "d"),
		}},
		{"rename of an expired key", []kstep{
			kcmd(replyOK, "SET", "a", "1", "PX", "10"),
			kwait(10 * time.Millisecond),
			kcmd(replyErr(engine.ErrNoSuchKey), "RENAME", "a", "b"),
		}},
		{"move", []kstep{
			kcmd(replyErr(engine.ErrNotInteger), "MOVE", "k", "x"),
			kcmd(replyErr(engine.ErrIntRange), "MOVE", "k", "2147483648"),
			kcmd(replyErr(engine.ErrDBIndex), "MOVE", "k", "16"),
			kcmd(replyErr(engine.ErrDBIndex), "MOVE", "k", "-1"),
			kcmd(replyErr(engine.ErrSameObject), "MOVE", "k", "0"),
			kcmd(replyInt(0), "MOVE", "k", "1"),
			kcmd(replyOK, "SET", "k", "v", "EX", "50"),
			kcmd(replyInt(1), "MOVE", "k", "1"),
			kcmd(replyInt(0), "EXISTS", "k"),
			kcmd(replyOK, "SET", "k", "here"),
			kcmd(replyInt(0), "MOVE", "k", "1"), // present there
			kcmd(replyOK, "SELECT", "1"),
			kcmd(replyBulk("v"), "GET", "k"),
			kcmd(replyInt(50), "TTL", "k"),
		}},
		{"copy", []kstep{
			kcmd(replyInt(0), "COPY", "a", "b"),
			kcmd(replyErr(engine.ErrSameObject), "COPY", "a", "a"),
			kcmd(replyErr(engine.ErrSameObject), "COPY", "a", "a", "DB", "0"),
			kcmd(replyErr(engine.ErrSyntax), "COPY", "a", "b", "foo"),
			kcmd(replyErr(engine.ErrSyntax), "COPY", "a", "b", "db"),
			kcmd(replyErr(engine.ErrNotInteger), "COPY", "a", "b", "db", "x", "foo"),
			kcmd(replyErr(engine.ErrDBIndex), "COPY", "a", "b", "db", "99"),
			kcmd(replyErr(engine.ErrSyntax), "COPY", "a", "b", "replace", "foo"),
			kcmd(replyOK, "SET", "a", "1", "EX", "70"),
			kcmd(replyInt(1), "COPY", "a", "b"),
			kcmd(replyInt(0), "COPY", "a", "b"),
			kcmd(replyOK, "SET", "a", "2"),
			kcmd(replyInt(1), "COPY", "a", "b", "REPLACE"),
			kcmd(replyBulk("2"), "GET", "b"),
			kcmd(replyInt(-1), "TTL", "b"),
			kcmd(replyInt(1), "COPY", "a", "a", "DB", "3"),
			kcmd(replyOK, "SELECT", "3"),
			kcmd(replyBulk("2"), "GET", "a"),
		}},
		{"randomkey", []kstep{
			kcmd(replyNull, "RANDOMKEY"),
			kcmd(replyOK, "SET", "only", "v"),
			kcmd(replyBulk("only"), "RANDOMKEY"),
			kcmd(replyOK, "SET", "only", "v", "PX", "5"),
			kwait(5 * time.Millisecond),
			kcmd(replyNull, "RANDOMKEY"),
		}},
		{"object", []kstep{
			kcmd(replyNull, "OBJECT", "ENCODING", "k"),
			kcmd(replyNull, "OBJECT", "REFCOUNT", "k"),
			kcmd(replyNull, "OBJECT", "IDLETIME", "k"),
			kcmd(replyNull, "OBJECT", "FREQ", "k"),
			kcmd(replyOK, "SET", "k", "123"),
			kcmd(replyBulk("int"), "OBJECT", "encoding", "k"),
			kcmd(replyInt(2147483647), "OBJECT", "REFCOUNT", "k"),
			kcmd(replyOK, "SET", "k", "12345"),
			kcmd(replyInt(1), "OBJECT", "REFCOUNT", "k"),
			kcmd(replyOK, "SET", "k", "0123"),
			kcmd(replyBulk("embstr"), "OBJECT", "ENCODING", "k"),
			kcmd(replyOK, "SET", "k", strings.Repeat("x", 45)),
			kcmd(replyBulk("raw"), "OBJECT", "ENCODING", "k"),
			kcmd(replyErr(engine.ErrLFUNotChosen), "OBJECT", "FREQ", "k"),
			kcmd(replyErr(engine.ErrUnknownSubcommand("foo", "OBJECT")), "OBJECT", "foo", "k"),
			kcmd(replyErr(engine.ErrWrongArgs("object")), "OBJECT"),
			kcmd(replyErr(engine.ErrWrongArgs("object|encoding")), "OBJECT", "ENCODING"),
			kcmd(replyErr(engine.ErrWrongArgs("object|help")), "OBJECT", "HELP", "x"),
		}},
		{"object idletime", []kstep{
			kcmd(replyOK, "SET", "k", "v"),
			kwait(10 * time.Second),
			kcmd(replyInt(10), "OBJECT", "IDLETIME", "k"),
			kcmd(replyInt(1), "EXISTS", "k"), // does not touch
			kcmd(replySimple("string"), "TYPE", "k"),
			kcmd(replyInt(-1), "TTL", "k"),
			kcmd(replyInt(10), "OBJECT", "IDLETIME", "k"),
			kcmd(replyBulk("v"), "GET", "k"),
			kcmd(replyInt(0), "OBJECT", "IDLETIME", "k"),
			kwait(3 * time.Second),
			kcmd(replyInt(1), "TOUCH", "k"),
			kcmd(replyInt(0), "OBJECT", "IDLETIME", "k"),
		}},
		{"scan errors", []kstep{
			kcmd(replyErr(engine.ErrInvalidCursor), "SCAN", " 0"),
			kcmd(replyErr(engine.ErrInvalidCursor), "SCAN", "0x"),
			kcmd(replyErr(engine.ErrInvalidCursor), "SCAN", "18446744073709551616"),
			kcmd(replyErr(engine.ErrInvalidCursor), "SCAN", "+"),
			kcmd(replyErr(engine.ErrInvalidCursor), "SCAN", "-"),
			kcmd(replyErr(engine.ErrInvalidCursor), "SCAN", "1 "),
			kcmd(replyErr(engine.ErrInvalidCursor), "SCAN", "x", "COUNT", "0"),
			kcmd(replyErr(engine.ErrSyntax), "SCAN", "0", "COUNT", "0"),
			kcmd(replyErr(engine.ErrSyntax), "SCAN", "0", "COUNT", "-1"),
			kcmd(replyErr(engine.ErrNotInteger), "SCAN", "0", "COUNT", "abc"),
			kcmd(replyErr(engine.ErrSyntax), "SCAN", "0", "foo", "bar"),
			kcmd(replyErr(engine.ErrSyntax), "SCAN", "0", "MATCH"),
			kcmd(replyErr(engine.ErrSyntax), "SCAN", "0", "TYPE"),
			kcmd(replyErr(engine.ErrNotInteger), "SCAN", "0", "COUNT", "x", "MATCH"),
			kcmd(replyArray(replyBulk("0"), replyArray()), "SCAN", ""),
			kcmd(replyArray(replyBulk("0"), replyArray()), "SCAN", "-1"),
			kcmd(replyArray(replyBulk("0"), replyArray()), "SCAN", "+18446744073709551615"),
			kcmd(replyArray(replyBulk("0"), replyArray()), "SCAN", "0", "TYPE", "nosuchtype"),
		}},
		{"keys", []kstep{
			kcmd(replyArray(), "KEYS", "*"),
			kcmd(replyOK, "SET", "hello", "1"),
			kcmd(replyBulks("hello"), "KEYS", "*"),
			kcmd(replyBulks("hello"), "KEYS", "h?l[a-z]o"),
			kcmd(replyArray(), "KEYS", "H*"),
			kcmd(replyOK, "SET", "gone", "1", "PX", "1"),
			kwait(time.Millisecond),
			kcmd(replyBulks("hello"), "KEYS", "*"),
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			runScenario(t, newTestEnv(t), c.steps)
		})
	}
}

func TestTTLRounding(t *testing.T) {
	e := newTestEnv(t)
	e.run("SET", "k", "v", "PX", "10000")
	for _, c := range []struct {
		left int64
		ttl  int64
	}{{10000, 10}, {9500, 10}, {9499, 9}, {1500, 2}, {1499, 1}, {500, 1}, {499, 0}, {1, 0}} {
		e.Clock.Set(testEpochMs + 10000 - c.left)
		assert.Equal(t, replyInt(c.ttl), e.run("TTL", "k"), "%d ms left", c.left)
		assert.Equal(t, replyInt(c.left), e.run("PTTL", "k"))
		assert.Equal(t, replyInt(kNowS+10), e.run("EXPIRETIME", "k"))
	}
}

func TestDirty(t *testing.T) {
	e := newTestEnv(t)
	for _, c := range []struct {
		args  []string
		dirty int
	}{
		{[]string{"SET", "a", "1"}, 1},
		{[]string{"SET", "b", "1"}, 1},
		{[]string{"DEL", "a", "b", "c"}, 2},
		{[]string{"SET", "a", "1"}, 1},
		{[]string{"EXPIRE", "a", "100"}, 1},
		{[]string{"EXPIRE", "a", "100", "NX"}, 0},
		{[]string{"PERSIST", "a"}, 1},
		{[]string{"PERSIST", "a"}, 0},
		{[]string{"RENAME", "a", "b"}, 1},
		{[]string{"RENAME", "b", "b"}, 0},
		{[]string{"COPY", "b", "c"}, 1},
		{[]string{"MOVE", "c", "1"}, 1},
		{[]string{"EXPIRE", "b", "-1"}, 1},
		{[]string{"EXISTS", "c"}, 0},
	} {
		e.run(c.args...)
		assert.Equal(t, c.dirty, e.dirty(), "%q", c.args)
	}
}

// EXPIRE with a past deadline is a deletion, not an expiry; a replica and
// a loading server store the deadline instead.
func TestExpirePastIsDeletion(t *testing.T) {
	e := newTestEnv(t)
	var events []string
	e.KS.AddExpiredSink(func(ev keyspace.Expired) { events = append(events, ev.Key) })
	e.run("SET", "k", "v")
	require.Equal(t, replyInt(1), e.run("EXPIRE", "k", "-5"))
	assert.Empty(t, events, "no expiry event")
	assert.Equal(t, replyInt(0), e.run("EXISTS", "k"))

	for _, mode := range []string{"replica", "loading"} {
		e.run("SET", "k", "v")
		e.withDB(func(*keyspace.DB) {
			e.KS.SetReplica(mode == "replica")
			e.KS.SetLoading(mode == "loading")
		})
		require.Equal(t, replyInt(1), e.run("PEXPIREAT", "k", kAt(-1000)), mode)
		e.withDB(func(db *keyspace.DB) {
			assert.Equal(t, 1, db.Len(), mode)
			e.KS.SetReplica(false)
			e.KS.SetLoading(false)
		})
		// Then it expires normally, with its event.
		assert.Equal(t, replyInt(0), e.run("EXISTS", "k"))
	}
	assert.Equal(t, []string{"k", "k"}, events)
}

// KEYS answers from a snapshot with the lock released: writes that run
// between the command and the reply do not show, and do not block.
func TestKeysOffloaded(t *testing.T) {
	e := newTestEnv(t)
	for i := 0; i < 100; i++ {
		e.run("SET", fmt.Sprintf("k%d", i), "v")
	}
	e.KS.Lock()
	off := e.D.Exec(e.Client, [][]byte{[]byte("KEYS"), []byte("k1*")})
	e.KS.Unlock()
	require.NotNil(t, off, "KEYS offloads")
	require.Empty(t, e.Client.W.Bytes(), "no reply under the lock")

	// Another client writes meanwhile.
	e.KS.Lock()
	e.KS.BeginCommand(false)
	e.KS.DB(0).Delete([]byte("k1"))
	e.KS.DB(0).SetString([]byte("k1new"), []byte("v"), false, 0)
	e.KS.Unlock()

	off()
	out := string(e.Client.W.Bytes())
	e.Client.W.Reset()
	want := []string{"k1"}
	for i := 10; i < 20; i++ {
		want = append(want, fmt.Sprintf("k%d", i))
	}
	assert.ElementsMatch(t, want, keysParseBulks(t, out))
	e.KS.Exec(func() {
		// The snapshot was released: writes are in place again.
		en := e.KS.DB(0).LookupWrite([]byte("k2"))
		assert.Same(t, en, e.KS.DB(0).LookupWrite([]byte("k2")))
	})
}

// A full SCAN returns every key once (without concurrent writes), honours
// MATCH and TYPE after COUNT, and never returns expired keys.
func TestScanCommand(t *testing.T) {
	e := newTestEnv(t)
	var all []string
	for i := 0; i < 500; i++ {
		k := fmt.Sprintf("key:%d", i)
		all = append(all, k)
		e.run("SET", k, "v")
	}
	e.putObject("list:1", keyspace.TypeList, 3)
	e.run("SET", "dying", "v", "PX", "10")
	e.advance(10 * time.Millisecond)

	scanAll := func(opts ...string) []string { return scanWalk(t, e, []string{"SCAN"}, opts...) }
	got := scanAll()
	sort.Strings(got)
	want := append(append([]string{}, all...), "list:1")
	sort.Strings(want)
	assert.Equal(t, want, got)

	got = scanAll("MATCH", "key:1?", "COUNT", "7")
	sort.Strings(got)
	assert.Equal(t, []string{"key:10", "key:11", "key:12", "key:13", "key:14", "key:15", "key:16", "key:17", "key:18", "key:19"}, got)

	assert.Equal(t, []string{"list:1"}, scanAll("TYPE", "LIST"))
	assert.Len(t, scanAll("type", "string", "count", "1000"), 500)

	// COUNT bounds the keys examined per call (ties aside).
	out := keysParseArray(t, e.run("SCAN", "0", "COUNT", "5"))
	assert.LessOrEqual(t, len(keysParseBulks(t, out[1])), 6)
	assert.NotEqual(t, replyBulk("0"), out[0])
}

func TestObjectHelp(t *testing.T) {
	e := newTestEnv(t)
	out := e.run("object", "help")
	lines := strings.Split(strings.TrimSuffix(out, "\r\n"), "\r\n")
	require.Equal(t, "*15", lines[0])
	assert.Equal(t, "+OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:", lines[1])
	assert.Equal(t, "+    Prints this help.", lines[15])
}

func TestObjectEncodingOfCollections(t *testing.T) {
	e := newTestEnv(t)
	e.putObject("l", keyspace.TypeList, 1)
	e.putObject("h", keyspace.TypeHash, 1)
	assert.Equal(t, replyBulk("quicklist"), e.run("OBJECT", "ENCODING", "l"))
	assert.Equal(t, replyBulk("hashtable"), e.run("OBJECT", "ENCODING", "h"))
	assert.Equal(t, replyInt(1), e.run("OBJECT", "REFCOUNT", "l"))
	assert.Equal(t, replySimple("list"), e.run("TYPE", "l"))
	assert.Equal(t, replySimple("hash"), e.run("TYPE", "h"))
}

func TestParseCursor(t *testing.T) {
	for _, c := range []struct {
		in   string
		want uint64
		ok   bool
	}{
		{"0", 0, true}, {"", 0, true}, {"00012", 12, true}, {"+7", 7, true},
		{"-1", 1<<64 - 1, true}, {"-0", 0, true},
		{"18446744073709551615", 1<<64 - 1, true},
		{"18446744073709551616", 0, false}, {"99999999999999999999", 0, false},
		{"+", 0, false}, {"-", 0, false}, {" 1", 0, false}, {"1 ", 0, false},
		{"0x1", 0, false}, {"1.0", 0, false}, {"--1", 0, false},
	} {
		got, ok := parseCursor([]byte(c.in))
		assert.Equal(t, c.ok, ok, "%q", c.in)
		if ok {
			assert.Equal(t, c.want, got, "%q", c.in)
		}
	}
}

// ---- reply parsing helpers --------------------------------------------------

// parseArray splits a raw array reply into its raw elements.
func keysParseArray(t *testing.T, raw string) []string {
	t.Helper()
	require.True(t, strings.HasPrefix(raw, "*"), "not an array: %q", raw)
	var elems []string
	n, rest := keysHeader(t, raw)
	for i := 0; i < n; i++ {
		var el string
		el, rest = keysElement(t, rest)
		elems = append(elems, el)
	}
	require.Empty(t, rest)
	return elems
}

// parseBulks decodes an array of bulk strings (or one bulk string).
func keysParseBulks(t *testing.T, raw string) []string {
	t.Helper()
	if strings.HasPrefix(raw, "$") {
		n, rest := keysHeader(t, raw)
		return []string{rest[:n]}
	}
	var out []string
	for _, el := range keysParseArray(t, raw) {
		n, rest := keysHeader(t, el)
		out = append(out, rest[:n])
	}
	return out
}

func keysHeader(t *testing.T, raw string) (int, string) {
	t.Helper()
	i := strings.Index(raw, "\r\n")
	require.Positive(t, i)
	n, err := strconv.Atoi(raw[1:i])
	require.NoError(t, err)
	return n, raw[i+2:]
}

func keysElement(t *testing.T, raw string) (string, string) {
	t.Helper()
	switch raw[0] {
	case '$':
		n, rest := keysHeader(t, raw)
		end := len(raw) - len(rest) + n + 2
		return raw[:end], raw[end:]
	case '*':
		n, rest := keysHeader(t, raw)
		for i := 0; i < n; i++ {
			_, rest = keysElement(t, rest)
		}
		return raw[:len(raw)-len(rest)], rest
	default:
		i := strings.Index(raw, "\r\n")
		return raw[:i+2], raw[i+2:]
	}
}

// scanWalk runs a complete SCAN, HSCAN, SSCAN or ZSCAN on e: cmd is the
// command up to the cursor ("SCAN", or "HSCAN", key), opts follow the
// cursor. It returns the elements of every page in order (a field and its
// value, a member and its score, for HSCAN and ZSCAN): the one SCAN page
// collector of the package's tests.
func scanWalk(t *testing.T, e *testEnv, cmd []string, opts ...string) []string {
	t.Helper()
	var got []string
	cursor := "0"
	for n := 0; ; n++ {
		require.Less(t, n, 10000, "%s does not terminate", cmd[0])
		out := e.run(append(append(append([]string{}, cmd...), cursor), opts...)...)
		elems := keysParseArray(t, out)
		require.Len(t, elems, 2, "%s reply %q", cmd[0], out)
		cursor = keysParseBulks(t, elems[0])[0]
		got = append(got, keysParseBulks(t, elems[1])...)
		if cursor == "0" {
			return got
		}
	}
}
