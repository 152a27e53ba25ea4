package commands

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zredis/zredis/engine"
	"github.com/zredis/zredis/scripting"
)

// The scripting family through the real dispatcher: replies, errors,
// propagation of effects, expiry inside a script, ACL, INFO figures.

func TestEvalReplies(t *testing.T) {
	e := newTestEnv(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"EVAL", "return 1", "0"}, ":1\r\n"},
		{[]string{"EVAL", "return {1, 'a', {true}, false}", "0"}, "*4\r\n:1\r\n$1\r\na\r\n*1\r\n:1\r\n$-1\r\n"},
		{[]string{"EVAL", "return redis.call('set', KEYS[1], ARGV[1])", "1", "k", "v"}, "+OK\r\n"},
		{[]string{"EVAL", "return redis.call('get', 'k')", "0"}, "$1\r\nv\r\n"},
		{[]string{"EVAL", "return redis.call('get', 'nokey')", "0"}, "$-1\r\n"},
		{[]string{"EVAL", "return redis.pcall('incr', 'k')", "0"}, "-ERR value is not an integer or out of range\r\n"},
		{[]string{"EVAL", "return redis.call('nosuch')", "0"}, "-ERR Unknown Redis command called from script script: 206396248e12c6e742fd7296250433c8d7343b74, on @user_script:1.\r\n"},
		{[]string{"EVAL", "return redis.call('blmpop', 0, 1, 'l', 'left')", "0"}, "$-1\r\n"},
		{[]string{"EVAL", "return 1", "2", "a"}, "-" + scripting.ErrNumkeysGreater + "\r\n"},
		{[]string{"EVAL", "return 1", "-1"}, "-" + scripting.ErrNumkeysNegative + "\r\n"},
		{[]string{"EVALSHA", "abc", "0"}, "-" + engine.ErrNoScript + "\r\n"},
		{[]string{"EVAL_RO", "return redis.call('del', 'k')", "0"}, "-ERR Write commands are not allowed from read-only scripts. script: 47b7443a0476c69075e4c3fdb47629aacc40bcfa, on @user_script:1.\r\n"},
		{[]string{"SCRIPT", "KILL"}, "-" + engine.ErrNotBusy + "\r\n"},
		{[]string{"SCRIPT", "DEBUG", "no"}, "+OK\r\n"},
		{[]string{"SCRIPT", "FLUSH", "x"}, "-" + scripting.ErrFlushMode + "\r\n"},
	} {
		require.Equal(t, tc.want, e.run(tc.args...), "%q", tc.args)
	}
}

// KEYS and ARGV are filled again for each run, and what a run did to
// them (new fields, a metatable, removed or added elements) is gone for
// the next; redis.call's arguments, whose buffers are reused from call
// to call, each keep their own bytes.
func TestEvalKeysArgvFreshEachRun(t *testing.T) {
	e := newTestEnv(t)
	const show = "local t = {} for k, v in pairs(KEYS) do t[#t+1] = 'K' .. k .. '=' .. v end " +
		"for k, v in pairs(ARGV) do t[#t+1] = 'A' .. k .. '=' .. v end " +
		"t[#t+1] = tostring(getmetatable(KEYS)) .. tostring(getmetatable(ARGV)) return table.concat(t, ',')"
	spoil := []string{
		"KEYS.x = 1 ARGV[5] = 'y'",
		"setmetatable(KEYS, {}) setmetatable(ARGV, {__index = function() return 'z' end})",
		"KEYS[1] = nil table.remove(ARGV)",
		"KEYS[3] = 'c' ARGV[1] = 7",
		"rawset(KEYS, 1.5, 'f')",
	}
	for _, sp := range spoil {
		require.Equal(t, "$-1\r\n", e.run("EVAL", sp+" return nil", "2", "k1", "k2", "a1"), sp)
		require.Equal(t, bulk("K1=k1,K2=k2,A1=a1,nilnil"),
			e.run("EVAL", show, "2", "k1", "k2", "a1"), "after %q", sp)
		require.Equal(t, bulk("K1=p,A1=q,A2=r,nilnil"), e.run("EVAL", show, "1", "p", "q", "r"), "after %q", sp)
	}
	require.Equal(t, bulk("nilnil"), e.run("EVAL", show, "0"))

	// The tables are refilled while a script leaves them as they were,
	// and replaced after one that added to them, even if it took the
	// addition back: gopher-lua would keep the key, or the padding.
	const ids = "return tostring(KEYS) .. ' ' .. tostring(ARGV)"
	first := e.run("EVAL", ids, "1", "k", "a")
	require.Equal(t, first, e.run("EVAL", ids, "1", "k2", "a2"), "refilled")
	for _, sp := range []string{
		"KEYS[ARGV[1]] = 1 KEYS[ARGV[1]] = nil",
		"ARGV[100000] = nil",
		"table.remove(KEYS)",
	} {
		require.Equal(t, "$-1\r\n", e.run("EVAL", sp+" return nil", "1", "k", "a"), sp)
		again := e.run("EVAL", ids, "1", "k", "a")
		require.NotEqual(t, first, again, "after %q", sp)
		first = again
		require.Equal(t, bulk("K1=k,A1=a,nilnil"), e.run("EVAL", show, "1", "k", "a"), "after %q", sp)
	}

	// The arguments of consecutive calls, of different lengths and of
	// numbers, land whole.
	require.Equal(t, "+OK\r\n", e.run("EVAL",
		"redis.call('set', KEYS[1], 'a-long-value-' .. ARGV[1]) redis.call('set', 'k2', 3.5) "+
			"redis.call('set', 'k3', '') redis.call('append', KEYS[1], '!') return redis.status_reply('OK')",
		"1", "k1", "x"))
	require.Equal(t, bulk("a-long-value-x!"), e.run("GET", "k1"))
	require.Equal(t, bulk("3.5"), e.run("GET", "k2"))
	require.Equal(t, bulk(""), e.run("GET", "k3"))
}

// bulk is s as a RESP2 bulk string.
func bulk(s string) string { return "$" + strconv.Itoa(len(s)) + "\r\n" + s + "\r\n" }

func TestEvalCacheAndInfo(t *testing.T) {
	e := newTestEnv(t)
	require.Equal(t, engine.ScriptMemory{VMEval: engine.ScriptVMBaseBytes}, e.D.ScriptMemory())
	require.Equal(t, "$40\r\ne0e1f9fabfc9d4800c877a703b823ac0578ff8db\r\n", e.run("SCRIPT", "LOAD", "return 1"))
	require.Equal(t, ":1\r\n", e.run("EVALSHA", "E0E1F9FABFC9D4800C877A703B823AC0578FF8DB", "0"))
	require.Equal(t, "*2\r\n:1\r\n:0\r\n", e.run("SCRIPT", "EXISTS", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", "x"))
	m := e.D.ScriptMemory()
	require.EqualValues(t, 1, m.Scripts)
	require.EqualValues(t, 136, m.ScriptsEval, "redis-server 7.0 reports 136 for this one script")
	require.Greater(t, m.VMEval, int64(engine.ScriptVMBaseBytes))
	require.Equal(t, "+OK\r\n", e.run("SCRIPT", "FLUSH", "ASYNC"))
	require.EqualValues(t, 0, e.D.ScriptMemory().Scripts)
	require.Equal(t, "-"+engine.ErrNoScript+"\r\n", e.run("EVALSHA", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", "0"))
}

func TestEvalPropagatesEffects(t *testing.T) {
	e, rec := newPropEnv(t)
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"EVAL", "return redis.call('set', 'a', 1)", "0"}, []string{"0:set a 1"}},
		{[]string{"EVAL", "redis.call('set', 'a', 1); return redis.call('incr', 'a')", "0"}, []string{"0:MULTI", "0:set a 1", "0:incr a", "0:EXEC"}},
		{[]string{"EVAL", "return redis.call('get', 'a')", "0"}, []string{}},
		{[]string{"SCRIPT", "LOAD", "return redis.call('incr', 'b')"}, []string{}},
		{[]string{"EVALSHA", "83e03e323b54c7658d445315218ada1159851571", "0"}, []string{"0:incr b"}},
		{[]string{"EVAL", "return redis.call('set', 'e', 1, 'ex', 10)", "0"}, []string{"0:SET e 1 PXAT " + at(10000)}},
		{[]string{"EVAL", "redis.call('select', 2); return redis.call('set', 'x', 1)", "0"}, []string{"2:set x 1"}},
		{[]string{"EVAL", "redis.set_repl(redis.REPL_NONE); return redis.call('set', 'h', 1)", "0"}, []string{}},
		{[]string{"EVAL", "redis.set_repl(redis.REPL_REPLICA); return redis.call('set', 'h', 1)", "0"}, []string{}},
		{[]string{"EVAL", "redis.set_repl(redis.REPL_AOF); return redis.call('set', 'h', 2)", "0"}, []string{"0:set h 2"}},
		{[]string{"EVAL", "redis.call('set', 'p', 1); error('x')", "0"}, []string{"0:set p 1"}},
		{[]string{"SCRIPT", "FLUSH"}, []string{}},
	} {
		e.run(tc.args...)
		require.Equal(t, tc.want, rec.take(), "%q", tc.args)
	}
}

func TestEvalTimeFrozenAndExpiry(t *testing.T) {
	e, rec := newPropEnv(t)
	e.run("SET", "x", "1", "PX", "10")
	rec.take()
	e.advance(20 * time.Millisecond)
	// The script finds x expired: the DEL goes before its own effects.
	require.Equal(t, ":0\r\n", e.run("EVAL", "redis.call('set', 'y', 1); return redis.call('exists', 'x')", "0"))
	require.Equal(t, []string{"0:MULTI", "0:set y 1", "0:DEL x", "0:EXEC"}, rec.take())
}

func TestEvalACL(t *testing.T) {
	e := newTestEnv(t)
	require.Equal(t, "+OK\r\n", e.run("ACL", "SETUSER", "u", "on", "nopass", "~k*", "+@all", "-hset"))
	require.Equal(t, "+OK\r\n", e.run("AUTH", "u", "x"))
	require.Equal(t, "+OK\r\n", e.run("EVAL", "return redis.call('set', 'k1', 1)", "0"))
	require.Contains(t, e.run("EVAL", "return redis.call('set', 'z', 1)", "0"),
		"-ERR The user executing the script can't access at least one of the keys mentioned in the command arguments script:")
	require.Contains(t, e.run("EVAL", "return redis.call('hset', 'k2', 'f', 1)", "0"),
		"-ERR The user executing the script can't run this command or subcommand script:")
	require.Equal(t, ":0\r\n", e.run("EVAL", "return redis.acl_check_cmd('hset', 'k2', 'f', 1) and 1 or 0", "0"))
}

func TestEvalOOM(t *testing.T) {
	e := newTestEnv(t)
	e.D.WatchMaxmemory(e.Srv.cfg, nil)
	e.run("SET", "big", string(make([]byte, 100000)))
	require.Equal(t, "+OK\r\n", e.run("CONFIG", "SET", "maxmemory", "1"))
	t.Cleanup(func() { e.run("CONFIG", "SET", "maxmemory", "0") })
	require.Contains(t, e.run("EVAL", "return redis.call('set', 'a', 1)", "0"), "-OOM command not allowed when used memory > 'maxmemory'. script:")
	// A script declaring flags is checked by the dispatcher with them.
	require.Equal(t, "-"+engine.ErrOOM+"\r\n", e.run("EVAL", "#!lua\nreturn redis.call('set', 'a', 1)", "0"))
	require.Equal(t, "-"+engine.ErrOOM+"\r\n", e.run("EVAL_RO", "#!lua\nreturn 1", "0"))
	require.Equal(t, "+OK\r\n", e.run("EVAL", "#!lua flags=allow-oom\nreturn redis.call('set', 'a', 1)", "0"))
	require.Equal(t, ":1\r\n", e.run("EVAL", "#!lua flags=no-writes\nreturn 1", "0"))
	require.Equal(t, ":1\r\n", e.run("EVAL", "return redis.call('exists', 'a')", "0"))
}

func TestEvalInMulti(t *testing.T) {
	e, rec := newPropEnv(t)
	e.run("MULTI")
	require.Equal(t, "+QUEUED\r\n", e.run("EVAL", "return redis.call('incr', 'c')", "0"))
	e.run("SET", "d", "1")
	require.Equal(t, "*2\r\n:1\r\n+OK\r\n", e.run("EXEC"))
	require.Equal(t, []string{"0:MULTI", "0:incr c", "0:SET d 1", "0:EXEC"}, rec.take())
}

// An EVAL's flags for the dispatcher's checks and CLIENT PAUSE are its
// script's (evalGetCommandFlags).
func TestEvalCallFlags(t *testing.T) {
	e := newTestEnv(t)
	eval := table.Lookup([]byte("eval"))
	evalRO := table.Lookup([]byte("eval_ro"))
	flags := func(cmd *engine.Command, args ...string) engine.Flag {
		b := make([][]byte, len(args))
		for i, a := range args {
			b[i] = []byte(a)
		}
		return e.D.CallFlags(cmd, b)
	}
	compat := flags(eval, "eval", "return 1", "0")
	require.NotZero(t, compat&engine.MayReplicate, "a script without shebang may write")
	require.Zero(t, compat&engine.Write)
	require.Zero(t, flags(evalRO, "eval_ro", "return 1", "0")&engine.MayReplicate)
	w := flags(eval, "eval", "#!lua\nreturn 1", "0")
	require.Equal(t, engine.Write|engine.DenyOOM, w&(engine.Write|engine.DenyOOM|engine.Stale|engine.MayReplicate))
	ro := flags(eval, "eval", "#!lua flags=no-writes,allow-stale\nreturn 1", "0")
	require.Equal(t, engine.Stale, ro&(engine.Write|engine.DenyOOM|engine.Stale|engine.MayReplicate))
	// EVALSHA of a cached script reads its flags.
	e.run("SCRIPT", "LOAD", "#!lua flags=allow-oom\nreturn 1")
	sha := scripting.Sha1Hex([]byte("#!lua flags=allow-oom\nreturn 1"))
	require.Equal(t, engine.Write, flags(table.Lookup([]byte("evalsha")), "evalsha", sha, "0")&(engine.Write|engine.DenyOOM))
	// A MONITOR client may not run a script that may write.
	e.Client.Monitor = true
	require.Equal(t, "-"+engine.ErrReplicaKeyspace+"\r\n", e.run("EVAL", "return 1", "0"))
	require.Equal(t, ":1\r\n", e.run("EVAL", "#!lua flags=no-writes\nreturn 1", "0"))
	e.Client.Monitor = false
}

// RESP3 callers get maps and sets as RESP3 types; false is RESP3's null.
func TestEvalRESP3Reply(t *testing.T) {
	e := newTestEnv(t)
	e.resp3()
	require.Equal(t, "%1\r\n$1\r\na\r\n:1\r\n", e.run("EVAL", "return {map={a=1}}", "0"))
	require.Equal(t, "~1\r\n$1\r\nx\r\n", e.run("EVAL", "return {set={x=true}}", "0"))
	require.Equal(t, "_\r\n", e.run("EVAL", "return false", "0"))
	require.Equal(t, ",1.5\r\n", e.run("EVAL", "return {double=1.5}", "0"))
	require.Equal(t, "+a\r\n", e.run("EVAL", "return {ok='a\\0b'}", "0"))
}

// BenchmarkDispatchEvalsha runs EVALSHA of redis-py Lock's release
// script (GET, compare, DEL) through the dispatcher, on a lock that is
// not held: one call from the script.
func BenchmarkDispatchEvalsha(b *testing.B) {
	const release = "local token = redis.call('get', KEYS[1]) if not token or token ~= ARGV[1] then return 0 end redis.call('del', KEYS[1]) return 1"
	e := newTestEnv(b)
	require.Equal(b, "$40\r\n"+scripting.Sha1Hex([]byte(release))+"\r\n", e.run("SCRIPT", "LOAD", release))
	args := [][]byte{[]byte("EVALSHA"), []byte(scripting.Sha1Hex([]byte(release))), []byte("1"), []byte("lock"), []byte("token")}
	e.KS.Lock()
	defer e.KS.Unlock()
	e.Client.W.Reset()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		e.D.Exec(e.Client, args)
		if i%64 == 0 {
			e.Client.W.Reset()
		}
	}
}
