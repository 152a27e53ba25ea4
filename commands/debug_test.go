package commands

import (
	"encoding/binary"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/zredis/zredis/config"
	"github.com/zredis/zredis/engine"
	"github.com/zredis/zredis/persistence/rdb"
)

// fakeDebug records what DEBUG asks of the server.
type fakeDebug struct {
	reloads      []engine.ReloadOptions
	reloadErr    string
	loadAOFs     int
	activeExpire []bool
	replIDs      int
	pauseCron    []bool
}

func (d *fakeDebug) Reload(opts engine.ReloadOptions) string {
	d.reloads = append(d.reloads, opts)
	return d.reloadErr
}
func (d *fakeDebug) LoadAOF() string         { d.loadAOFs++; return "" }
func (d *fakeDebug) SetActiveExpire(on bool) { d.activeExpire = append(d.activeExpire, on) }
func (d *fakeDebug) ChangeReplID()           { d.replIDs++ }
func (d *fakeDebug) PauseCron(on bool)       { d.pauseCron = append(d.pauseCron, on) }

var fakeDebugs = map[*fakeServer]*fakeDebug{}

func (s *fakeServer) Debug() engine.Debug { return s.debug() }

func (s *fakeServer) debug() *fakeDebug {
	d := fakeDebugs[s]
	if d == nil {
		d = &fakeDebug{}
		fakeDebugs[s] = d
	}
	return d
}

// newDebugEnv is a test environment whose configuration lets DEBUG run
// (enable-debug-command is immutable: set as redis.conf would).
func newDebugEnv(t *testing.T, value string) *testEnv {
	t.Helper()
	e := newTestEnv(t)
	cfg, err := config.Load("", "enable-debug-command "+value)
	require.NoError(t, err)
	e.Srv.cfg = cfg
	return e
}

const errDebugNotAllowed = "-ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server.\r\n"

// enable-debug-command gates DEBUG as processCommand does: after the
// arity check, before authentication, and inside MULTI as a rejection
// that aborts the transaction.
func TestDebugGate(t *testing.T) {
	e := newTestEnv(t) // the default: no
	assert.Equal(t, errDebugNotAllowed, e.run("DEBUG", "HELP"))
	assert.Equal(t, replyErr("ERR wrong number of arguments for 'debug' command"), e.run("DEBUG"))
	assert.Equal(t, int64(2), e.D.CommandStats(table.Lookup([]byte("debug"))).RejectedCalls)
	require.Equal(t, replyOK, e.run("MULTI"))
	assert.Equal(t, errDebugNotAllowed, e.run("DEBUG", "SLEEP", "0"))
	assert.Equal(t, replyErr(engine.ErrExecAbort), e.run("EXEC"))
	// Before authentication.
	e.D.ACL.SetDefaultPassword("pw")
	e.Client.Authed = false
	assert.Equal(t, errDebugNotAllowed, e.run("DEBUG", "HELP"))

	for _, tc := range []struct {
		value, addr string
		unix, ok    bool
	}{
		{"yes", "10.1.2.3:5000", false, true},
		{"local", "127.0.0.1:5000", false, true},
		{"local", "[::1]:5000", false, true},
		{"local", "/tmp/redis.sock:0", true, true},
		{"local", "10.1.2.3:5000", false, false},
		{"local", "127.0.0.2:5000", false, false}, // Redis compares the text
		{"no", "127.0.0.1:5000", false, false},
	} {
		e := newDebugEnv(t, tc.value)
		e.Client.Addr, e.Client.UnixSocket = tc.addr, tc.unix
		got := e.run("DEBUG", "SLEEP", "0")
		if tc.ok {
			assert.Equal(t, replyOK, got, "%+v", tc)
		} else {
			assert.Equal(t, errDebugNotAllowed, got, "%+v", tc)
		}
	}
}

func TestDebugHelpAndErrors(t *testing.T) {
	e := newDebugEnv(t, "yes")
	help := e.run("DEBUG", "help")
	require.True(t, strings.HasPrefix(help, "*"+itoa(len(debugHelp)+3)+"\r\n+DEBUG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:\r\n+AOF-FLUSH-SLEEP <microsec>\r\n"), help)
	assert.True(t, strings.HasSuffix(help, "+HELP\r\n+    Prints this help.\r\n"))
	syntax := func(sub string) string {
		return replyErr("ERR unknown subcommand or wrong number of arguments for '" + sub + "'. Try DEBUG HELP.")
	}
	for _, args := range [][]string{
		{"DEBUG", "bogus"}, {"DEBUG", "help", "x"}, {"DEBUG", "object"}, {"DEBUG", "sleep"},
		{"DEBUG", "digest", "k"}, {"DEBUG", "populate"}, {"DEBUG", "populate", "1", "a", "1", "x"},
		{"DEBUG", "protocol"}, {"DEBUG", "replybuffer", "x", "y"}, {"DEBUG", "replybuffer", "resizing"},
		{"DEBUG", "set-active-expire"}, {"DEBUG", "quicklist", "k", "1", "2"}, {"DEBUG", "clusterlink", "x", "a", "b"},
		{"debug", "\x00\xff"},
	} {
		assert.Equal(t, syntax(args[1]), e.run(args...), "%q", args)
	}
	assert.Equal(t, replyErr("ERR DEBUG SEGFAULT is not supported by zredis"), e.run("DEBUG", "segfault"))
	assert.Equal(t, replyErr("ERR Debug option only available for cluster mode enabled setup!"), e.run("DEBUG", "clusterlink", "KILL", "all", "x"))
	assert.Equal(t, "-hello world  x\r\n", e.run("DEBUG", "error", "hello world\r\nx"))
	assert.False(t, e.failed(), "DEBUG ERROR is a reply, not a failed call")
	assert.Equal(t, replyErr("ERR No such file or directory"), e.run("DEBUG", "mallctl", "opt.narenas"))
	assert.Equal(t, replyErr(engine.ErrNotInteger), e.run("DEBUG", "mallctl", "x", "y"))
	assert.Equal(t, replyErr("ERR No such file or directory"), e.run("DEBUG", "mallctl-str", "x", "y"))
	assert.Equal(t, replyErr("ERR maxmemory-clients is disabled."), e.run("DEBUG", "client-eviction"))
	assert.Equal(t, replyOK, e.run("DEBUG", "log", "a\x00b"))
	assert.Equal(t, []string{"DEBUG LOG: a"}, e.Srv.warnings)
	assert.Equal(t, replyOK, e.run("DEBUG", "leak", "x"))
	assert.Equal(t, replyOK, e.run("DEBUG", "aof-flush-sleep", "100"))
	assert.Equal(t, replyOK, e.run("DEBUG", "drop-cluster-packet-filter", "-1"))
	assert.Equal(t, replyErr(engine.ErrNotInteger), e.run("DEBUG", "drop-cluster-packet-filter", "x"))
	assert.Equal(t, replySimple("Apparently Redis did not crash: test passed"), e.run("DEBUG", "stringmatch-test"))
}

func itoa(n int) string { return replyInt(int64(n))[1 : len(replyInt(int64(n)))-2] }

// The digests of redis-server 7.0.15 for the same writes.
func TestDebugDigest(t *testing.T) {
	e := newDebugEnv(t, "yes")
	zero := replySimple("0000000000000000000000000000000000000000")
	assert.Equal(t, zero, e.run("DEBUG", "digest"))
	assert.Equal(t, "*0\r\n", e.run("DEBUG", "digest-value"))
	e.run("SET", "foo", "bar")
	e.run("RPUSH", "l", "a", "b", "c")
	assert.Equal(t, replySimple("1ac172518b611d6f031f3e6f949b321095ab83d3"), e.run("DEBUG", "digest"))
	assert.Equal(t, replyArray(replySimple("68467c70ae30376e7ce005bcc8827f5ba7fd67dc"), replySimple("8bf72d812571eea9b927f3c11beb0c4165a6ff89"), zero),
		e.run("DEBUG", "digest-value", "foo", "l", "nokey"))
	// The same data written in another order.
	e2 := newDebugEnv(t, "yes")
	e2.run("RPUSH", "l", "a")
	e2.run("RPUSH", "l", "b", "c")
	e2.run("SET", "foo", "bar")
	assert.Equal(t, replySimple("1ac172518b611d6f031f3e6f949b321095ab83d3"), e2.run("DEBUG", "digest"))

	e = newDebugEnv(t, "yes")
	for _, c := range [][]string{
		{"SET", "s1", "hello"}, {"SET", "n1", "12345"}, {"SET", "n2", "-9223372036854775808"}, {"SET", "f1", "3.14"},
		{"INCR", "n1"}, {"APPEND", "s1", "world"}, {"SETEX", "ttl1", "1000", "v"},
		{"RPUSH", "l1", "a", "1", "2", "-3", "xyz"}, {"LPUSH", "l1", "front"},
		{"SADD", "si", "1", "2", "3", "-5", "100"}, {"SADD", "sh", "a", "b", "c", "1", "2"}, {"SADD", "big", "1", "2", "3", "x"},
		{"ZADD", "zl", "1", "a", "2.5", "b", "-0", "c", "1e20", "d", "0.1", "e"}, {"ZADD", "zinf", "inf", "a", "-inf", "b", "3", "c"},
		{"HSET", "h1", "f1", "v1", "f2", "2", "f3", "-3.5"}, {"HSET", "h2", "a", "1"}, {"EXPIRE", "h2", "5000"},
		{"XADD", "st", "1-1", "a", "1", "b", "2"}, {"XADD", "st", "1-2", "c", "3"}, {"XADD", "st", "2-0", "a", "1", "b", "2"}, {"XDEL", "st", "1-2"},
		{"SET", "k3", "v3"}, {"ZADD", "zz", "5", "m"},
	} {
		require.NotEqual(t, '-', e.run(c...)[0], "%q", c)
	}
	want := []string{
		"d87c56bb0bf36f8a07d2106a71a21b5567ac06f9", "8ce6337db2e42a86dbab94eee9a3348c7f8157d5",
		"4191566616a6d8b974bba999f8e82b3f2c8dcce0", "a1074fe106dbfdd0a16a345b5f8b79dad67237d3",
		"311b17018163335616e089f6b951c82c477335ac", "0dceba069d8ba6e515527604898926901c59ed0a",
		"6f42f496424012b2c5a66fc538bcfade595ffd8e", "b61daf08bbb208f9a6c7d9382868f1513fd7e269",
		"3bb087b1948bf20dd8244692cb9519e2c3947234", "26b878f6a6b0146a39c274af3b2122a46ec44346",
		"f9870b5e61fbb8a4b44adaa4a9aff72498c2c740", "cf500001a67e83560f1a394d782e8680bca49df0",
		"84ef85a87e5012a5b8b2a2fa00e404b4438e92de", "3c0c2d4613b841b336bec882dbf1a4fece595567",
	}
	wantReply := make([]string, len(want))
	for i, w := range want {
		wantReply[i] = replySimple(w)
	}
	assert.Equal(t, replyArray(wantReply...), e.run("DEBUG", "digest-value", "s1", "n1", "n2", "f1", "ttl1", "l1", "si", "sh", "big", "zl", "zinf", "h1", "h2", "st"))
	assert.Equal(t, replySimple("ca905e1d7c423799f3d75dc28f3998653c889ad7"), e.run("DEBUG", "digest"))
	// A key past its deadline that nothing expired yet still counts, as
	// it is still in Redis's dictionary.
	e.run("PEXPIRE", "s1", "10")
	before := e.run("DEBUG", "digest")
	e.Clock.Advance(50e6)
	assert.Equal(t, before, e.run("DEBUG", "digest"))
	assert.NotEqual(t, replySimple(want[0]), e.run("DEBUG", "digest-value", "s1"), "the deadline mark")
	assert.Equal(t, 0, e.dirty())
}

func TestDebugProtocol(t *testing.T) {
	e := newDebugEnv(t, "yes")
	resp2 := map[string]string{
		"string":   "$11\r\nHello World\r\n",
		"integer":  ":12345\r\n",
		"double":   "$5\r\n3.141\r\n",
		"bignum":   "$37\r\n1234567999999999999999999999999999999\r\n",
		"null":     "$-1\r\n",
		"array":    "*3\r\n:0\r\n:1\r\n:2\r\n",
		"set":      "*3\r\n:0\r\n:1\r\n:2\r\n",
		"map":      "*6\r\n:0\r\n:0\r\n:1\r\n:1\r\n:2\r\n:0\r\n",
		"attrib":   "$39\r\nSome real reply following the attribute\r\n",
		"push":     "-ERR RESP2 is not supported by this command\r\n",
		"verbatim": "$25\r\nThis is a verbatim\nstring\r\n",
		"true":     ":1\r\n",
		"false":    ":0\r\n",
		"bogus":    "-ERR Wrong protocol type name. Please use one of the following: string|integer|double|bignum|null|array|set|map|attrib|push|verbatim|true|false\r\n",
	}
	for typ, want := range resp2 {
		assert.Equal(t, want, e.run("DEBUG", "PROTOCOL", strings.ToUpper(typ)), typ)
	}
	e.resp3()
	resp3 := map[string]string{
		"string":   "$11\r\nHello World\r\n",
		"double":   ",3.141\r\n",
		"bignum":   "(1234567999999999999999999999999999999\r\n",
		"null":     "_\r\n",
		"set":      "~3\r\n:0\r\n:1\r\n:2\r\n",
		"map":      "%3\r\n:0\r\n#f\r\n:1\r\n#t\r\n:2\r\n#f\r\n",
		"attrib":   "|1\r\n$14\r\nkey-popularity\r\n*2\r\n$7\r\nkey:123\r\n:90\r\n$39\r\nSome real reply following the attribute\r\n",
		"push":     ">2\r\n$16\r\nserver-cpu-usage\r\n:42\r\n$40\r\nSome real reply following the push reply\r\n",
		"verbatim": "=29\r\ntxt:This is a verbatim\nstring\r\n",
		"true":     "#t\r\n",
		"false":    "#f\r\n",
	}
	for typ, want := range resp3 {
		assert.Equal(t, want, e.run("DEBUG", "protocol", typ), typ)
	}
}

func TestDebugPopulate(t *testing.T) {
	e := newDebugEnv(t, "yes")
	require.Equal(t, replyOK, e.run("SET", "key:1", "mine"))
	require.Equal(t, replyOK, e.run("DEBUG", "POPULATE", "3"))
	assert.Equal(t, 0, e.dirty(), "not propagated, no change counted")
	assert.Equal(t, replyInt(3), e.run("DBSIZE"))
	assert.Equal(t, replyBulk("value:0"), e.run("GET", "key:0"))
	assert.Equal(t, replyBulk("mine"), e.run("GET", "key:1"), "an existing key stays")
	assert.Equal(t, replyBulk("value:2"), e.run("GET", "key:2"))
	require.Equal(t, replyOK, e.run("DEBUG", "POPULATE", "2", "p\x00ignored", "3"))
	assert.Equal(t, replyBulk("val"), e.run("GET", "p:1"))
	require.Equal(t, replyOK, e.run("DEBUG", "POPULATE", "1", "z", "10"))
	assert.Equal(t, replyBulk("value:0\x00\x00\x00"), e.run("GET", "z:0"))
	assert.Equal(t, replyBulk("embstr"), e.run("OBJECT", "ENCODING", "z:0"))
	require.Equal(t, replyOK, e.run("DEBUG", "POPULATE", "0"))
	long := strings.Repeat("x", 130)
	require.Equal(t, replyOK, e.run("DEBUG", "POPULATE", "2", long))
	assert.Equal(t, replyBulk("value:0"), e.run("GET", long[:127]), "the name cut at 127 bytes; the second key is the same name")
	positive := replyErr("ERR value is out of range, must be positive")
	for _, args := range [][]string{{"-1"}, {"x"}, {"1", "a", "-1"}, {"1", "a", "b"}, {"99999999999999999999"}} {
		assert.Equal(t, positive, e.run(append([]string{"DEBUG", "POPULATE"}, args...)...), "%q", args)
	}
	assert.Equal(t, replyErr(engine.ErrStringTooLong), e.run("DEBUG", "POPULATE", "1", "a", "9999999999999"))
}

func TestDebugObject(t *testing.T) {
	e := newDebugEnv(t, "yes")
	assert.Equal(t, replyErr("ERR no such key"), e.run("DEBUG", "OBJECT", "nokey"))
	e.run("SET", "foo", "bar")
	e.run("SET", "n", "12")
	e.run("RPUSH", "l", "a", "b", "c")
	re := regexp.MustCompile(`^\+Value at:0x[0-9a-f]+ refcount:1 encoding:embstr serializedlength:4 lru:\d+ lru_seconds_idle:0\r\n$`)
	assert.Regexp(t, re, e.run("DEBUG", "OBJECT", "foo"))
	assert.Contains(t, e.run("DEBUG", "OBJECT", "n"), " refcount:2147483647 encoding:int ")
	assert.Regexp(t, `encoding:quicklist serializedlength:19 lru:\d+ lru_seconds_idle:0 ql_nodes:1 ql_avg_node:3.00 ql_listpack_max:-2 ql_compressed:0 ql_uncompressed_size:16\r\n$`,
		e.run("DEBUG", "OBJECT", "l"))
	e.Clock.Advance(5e9)
	assert.Contains(t, e.run("DEBUG", "OBJECT", "foo"), " lru_seconds_idle:5")

	assert.Equal(t, replyErr("ERR Not a listpack encoded object."), e.run("DEBUG", "LISTPACK", "l"))
	assert.Equal(t, replySimple("Quicklist structure printed on stdout"), e.run("DEBUG", "QUICKLIST", "l", "1"))
	assert.Equal(t, replyErr("ERR Not a quicklist encoded object."), e.run("DEBUG", "QUICKLIST", "foo"))
	assert.Equal(t, replyErr("ERR no such key"), e.run("DEBUG", "LISTPACK", "nokey"))
	e.run("HSET", "h", "f", "v")
	assert.Equal(t, replySimple("Listpack structure printed on stdout"), e.run("DEBUG", "LISTPACK", "h"))

	const notHT = "ERR The value stored at the specified key is not represented using an hash table"
	assert.Equal(t, replyErr(notHT), e.run("DEBUG", "HTSTATS-KEY", "h"))
	e.run("SADD", "s", "a", "b", "c", "d", "e")
	stats := e.run("DEBUG", "HTSTATS-KEY", "s")
	assert.Contains(t, stats, "Hash table 0 stats (main hash table):\n table size: 8\n number of elements: 5\n")
	assert.Equal(t, replyErr(engine.ErrNotInteger), e.run("DEBUG", "HTSTATS", "x"))
	assert.Equal(t, replyErr("ERR Out of range database"), e.run("DEBUG", "HTSTATS", "16"))
	assert.Equal(t, replyBulk("[Dictionary HT]\nHash table 0 stats (main hash table):\nNo stats available for empty dictionaries\n[Expires HT]\nHash table 0 stats (main hash table):\nNo stats available for empty dictionaries\n"),
		e.run("DEBUG", "HTSTATS", "1"))
}

// The subcommands that reach the server go through engine.Debug.
func TestDebugServerSubcommands(t *testing.T) {
	e := newDebugEnv(t, "yes")
	d := e.Srv.debug()
	assert.Equal(t, replyOK, e.run("DEBUG", "RELOAD"))
	assert.Equal(t, replyOK, e.run("DEBUG", "reload", "nosave", "NOFLUSH", "merge"))
	assert.Equal(t, replyErr("ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options."), e.run("DEBUG", "RELOAD", "nosave", "fast"))
	assert.Equal(t, []engine.ReloadOptions{{}, {Merge: true, NoFlush: true, NoSave: true}}, d.reloads)
	d.reloadErr = "ERR Error trying to load the RDB dump"
	assert.Equal(t, replyErr(d.reloadErr), e.run("DEBUG", "RELOAD"))
	assert.Equal(t, replyOK, e.run("DEBUG", "LOADAOF", "ignored"))
	assert.Equal(t, 1, d.loadAOFs)
	for _, v := range []string{"0", "1", "x", " 2abc", "-1"} {
		assert.Equal(t, replyOK, e.run("DEBUG", "SET-ACTIVE-EXPIRE", v))
		assert.Equal(t, replyOK, e.run("DEBUG", "PAUSE-CRON", v))
	}
	assert.Equal(t, []bool{false, true, false, true, true}, d.activeExpire)
	assert.Equal(t, d.activeExpire, d.pauseCron)
	assert.Equal(t, replyOK, e.run("DEBUG", "CHANGE-REPL-ID"))
	assert.Equal(t, 1, d.replIDs)
	assert.Equal(t, replyOK, e.run("DEBUG", "set-disable-deny-scripts", "1"))
	assert.True(t, e.D.Debug.DenyScriptsDisabled)
	assert.Equal(t, replyOK, e.run("DEBUG", "set-disable-deny-scripts", "0"))
	assert.False(t, e.D.Debug.DenyScriptsDisabled)
}

func TestDebugKnobs(t *testing.T) {
	e := newDebugEnv(t, "yes")
	for _, v := range []string{"0", "1b", "3gb", "1024", "4293918720"} {
		assert.Equal(t, replyOK, e.run("DEBUG", "QUICKLIST-PACKED-THRESHOLD", v), v)
	}
	for _, v := range []string{"4gb", "4293918721", "-1", "abc", "1xb"} {
		assert.Equal(t, replyErr("ERR argument must be a memory value bigger than 1 and smaller than 4gb"), e.run("DEBUG", "QUICKLIST-PACKED-THRESHOLD", v), v)
	}
	for _, v := range []string{"never", "RESET", "100", "-5"} {
		assert.Equal(t, replyOK, e.run("DEBUG", "REPLYBUFFER", "peak-reset-time", v), v)
	}
	assert.Equal(t, replyErr(engine.ErrNotInteger), e.run("DEBUG", "REPLYBUFFER", "PEAK-RESET-TIME", "soon"))
	assert.Equal(t, replyOK, e.run("DEBUG", "REPLYBUFFER", "resizing", "0"))
	for _, v := range []string{"0", "0.001", "-1", "abc", "inf", "nan", "1e300", "0x"} {
		assert.Equal(t, replyOK, e.run("DEBUG", "SLEEP", v), v)
	}
	assert.Equal(t, 0.25, strtodPrefix([]byte(" 0.25s")))
	assert.Equal(t, 16.0, strtodPrefix([]byte("0x10")))

	// SET-SKIP-CHECKSUM-VALIDATION: RESTORE takes a payload whose CRC is
	// wrong once the check is off.
	e.run("SET", "k", "v")
	payload := []byte(e.run("DUMP", "k"))
	payload = payload[strings.Index(string(payload), "\r\n")+2 : len(payload)-2]
	binary.LittleEndian.PutUint64(payload[len(payload)-8:], 12345)
	assert.Equal(t, replyErr(engine.ErrBadDump), e.run("RESTORE", "k2", "0", string(payload)))
	assert.Equal(t, replyOK, e.run("DEBUG", "SET-SKIP-CHECKSUM-VALIDATION", "1"))
	assert.Equal(t, replyOK, e.run("RESTORE", "k2", "0", string(payload)))
	assert.Equal(t, replyBulk("v"), e.run("GET", "k2"))
	_, err := rdb.RestoreFunctions(payload, true)
	assert.ErrorIs(t, err, rdb.ErrFunctionType, "past the footer when the CRC is not checked")
	assert.Equal(t, replyOK, e.run("DEBUG", "SET-SKIP-CHECKSUM-VALIDATION", "0"))
	assert.Equal(t, replyErr(engine.ErrBadDump), e.run("RESTORE", "k3", "0", string(payload)))
}

// SET-DISABLE-DENY-SCRIPTS lets scripts call the noscript commands that
// can run in the middle of one; the others stay refused.
func TestDebugDisableDenyScripts(t *testing.T) {
	e := newDebugEnv(t, "yes")
	call := func(args string) string {
		return e.run("EVAL", "return redis.pcall("+args+")", "0")
	}
	denied := "-ERR This Redis command is not allowed from script"
	require.True(t, strings.HasPrefix(call("'client', 'id'"), denied))
	require.Equal(t, replyOK, e.run("DEBUG", "SET-DISABLE-DENY-SCRIPTS", "1"))
	assert.True(t, strings.HasPrefix(call("'client', 'id'"), ":"), "the script's client's ID")
	assert.Equal(t, "$11\r\nHello World\r\n", call("'debug', 'protocol', 'string'"))
	assert.Equal(t, replyOK, call("'config', 'set', 'maxmemory', '0'"))
	for _, args := range []string{
		"'save'", "'shutdown'", "'multi'", "'exec'", "'watch', 'k'", "'blpop', 'k', '0'", "'subscribe', 'c'",
		"'monitor'", "'wait', '0', '0'", "'eval', 'return 1', '0'", "'fcall', 'f', '0'", "'script', 'flush'",
		"'function', 'flush'", "'script', 'kill'", "'hello'", "'auth', 'x'",
	} {
		assert.True(t, strings.HasPrefix(call(args), denied), "%s: %q", args, call(args))
	}
	require.Equal(t, replyOK, e.run("DEBUG", "SET-DISABLE-DENY-SCRIPTS", "0"))
	assert.True(t, strings.HasPrefix(call("'client', 'id'"), denied))
}
