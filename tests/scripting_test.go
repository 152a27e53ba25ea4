package tests

import (
	"fmt"
	"os"
	"os/exec"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zredis/zredis/internal/testsupport"
)

// Differential tests of Lua scripting (eval.c, script_lua.c, script.c):
// EVAL, EVALSHA, their _RO forms and SCRIPT, the Redis Lua environment,
// the conversions between RESP and Lua, the libraries cjson, cmsgpack,
// bit and struct, errors (those raised through redis.call are Redis's
// texts, compared byte for byte), ACL from scripts, and the propagation
// of a script's effects, compared with redis-server 7.0. Errors whose
// text is the Lua VM's own (a runtime error in Lua code, a compile
// error) are compared by their first line's code only.

// scriptCases are EVAL-family commands compared byte for byte.
var scriptCases = [][]string{
	// Replies: RESP <-> Lua conversions both ways.
	{"EVAL", "return 1", "0"},
	{"EVAL", "return 3.99", "0"},
	{"EVAL", "return -3.99", "0"},
	{"EVAL", "return 'hello'", "0"},
	{"EVAL", "return true", "0"},
	{"EVAL", "return false", "0"},
	{"EVAL", "return nil", "0"},
	{"EVAL", "return {1,2,3,'a',{4,5},true,false,nil,7}", "0"},
	{"EVAL", "return {}", "0"},
	{"EVAL", "return {ok='fine'}", "0"},
	{"EVAL", "return {ok='two\\r\\nlines'}", "0"},
	{"EVAL", "return {err='My Error'}", "0"},
	{"EVAL", "return {err='NOCODE'}", "0"},
	{"EVAL", "return {double=3.5}", "0"},
	{"EVAL", "return {big_number='123456789012345678901234567890'}", "0"},
	{"EVAL", "return {map={}}", "0"},
	{"EVAL", "return redis.error_reply('MY bad')", "0"},
	{"EVAL", "return redis.error_reply('bad')", "0"},
	{"EVAL", "return redis.error_reply('-X y')", "0"},
	{"EVAL", "return redis.status_reply('OK2')", "0"},
	{"EVAL", "return redis.error_reply(1)", "0"},
	{"EVAL", "return redis.status_reply()", "0"},
	{"EVAL", "return 9007199254740993", "0"},
	{"EVAL", "return 1e300", "0"},
	{"EVAL", "return 0/0", "0"},
	{"EVAL", "return {KEYS[1], KEYS[2], ARGV[1], ARGV[2], #KEYS, #ARGV}", "2", "k1", "k2", "a1", "a2"},
	{"EVAL", "return KEYS", "0"},
	{"EVAL", "return ARGV", "0", "x", "y"},
	{"EVAL", "return redis.call('set', KEYS[1], ARGV[1])", "1", "k", "v"},
	{"EVAL", "return redis.call('get', KEYS[1])", "1", "k"},
	{"EVAL", "return redis.call('get', 'missing')", "0"},
	{"EVAL", "return type(redis.call('get', 'missing'))", "0"},
	{"EVAL", "return redis.call('incr', 'n')", "0"},
	{"EVAL", "return redis.call('incrbyfloat', 'f', 1.5)", "0"},
	{"EVAL", "return redis.call('set', 'n2', 3.0)", "0"},
	{"EVAL", "return redis.call('set', 'n3', 0.1)", "0"},
	{"EVAL", "return redis.call('get', 'n3')", "0"},
	{"EVAL", "redis.call('rpush', 'l', 'a', 'b', 'c'); return redis.call('lrange', 'l', 0, -1)", "0"},
	{"EVAL", "return redis.call('lpop', 'nolist')", "0"},
	{"EVAL", "return redis.call('blpop', 'nolist', 0)", "0"},
	{"EVAL", "return redis.call('blmpop', 0, 1, 'nolist', 'left')", "0"},
	{"EVAL", "return redis.call('bzmpop', 0, 1, 'nozset', 'min')", "0"},
	{"EVAL", "redis.call('rpush', 'bl', 'x', 'y'); return redis.call('blmpop', 0, 1, 'bl', 'right', 'count', 5)", "0"},
	{"EVAL", "return redis.call('ping')", "0"},
	{"EVAL", "return redis.call('ping', 'x')", "0"},
	{"EVAL", "return redis.call('hgetall', 'nohash')", "0"},
	{"EVAL", "return redis.pcall('incr', 'k')", "0"},
	{"EVAL", "local r = redis.pcall('incr', 'k'); return type(r) .. ':' .. r.err", "0"},
	{"EVAL", "local t = redis.call('set', 'x', 'y'); return t.ok", "0"},
	{"EVAL", "return {pcall(redis.call, 'nosuch')}", "0"},
	{"EVAL", "return pcall(function() error({err='T'}) end)", "0"},
	{"EVAL", "return redis.call('select', 5)", "0"},
	{"EVAL", "redis.call('select', 5); redis.call('set', 'indb5', 1); return redis.call('dbsize')", "0"},
	{"EXISTS", "indb5"},
	{"SELECT", "5"},
	{"EXISTS", "indb5"},
	{"SELECT", "0"},

	// The environment.
	{"EVAL", "local t={} for k,v in pairs(_G) do t[#t+1]=k end table.sort(t) return t", "0"},
	{"EVAL", "local t={} for k,v in pairs(redis) do t[#t+1]=k end table.sort(t) return t", "0"},
	{"EVAL", "return _VERSION", "0"},
	{"EVAL", "return redis.REDIS_VERSION", "0"},
	{"EVAL", "return redis.REDIS_VERSION_NUM", "0"},
	{"EVAL", "return {redis.LOG_DEBUG, redis.LOG_VERBOSE, redis.LOG_NOTICE, redis.LOG_WARNING}", "0"},
	{"EVAL", "return {redis.REPL_NONE, redis.REPL_AOF, redis.REPL_SLAVE, redis.REPL_REPLICA, redis.REPL_ALL}", "0"},
	{"EVAL", "return redis.replicate_commands()", "0"},
	{"EVAL", "return redis.breakpoint()", "0"},
	{"EVAL", "return redis.debug('x')", "0"},
	{"EVAL", "return redis.sha1hex('')", "0"},
	{"EVAL", "return redis.sha1hex('Pizza & Mandolino')", "0"},
	{"EVAL", "return redis.sha1hex()", "0"},
	{"EVAL", "redis.log(redis.LOG_WARNING, 'from a script', 1, 2)", "0"},
	{"EVAL", "redis.log(redis.LOG_DEBUG, 'quiet')", "0"},
	{"EVAL", "redis.log(1)", "0"},
	{"EVAL", "redis.log('x', 'y')", "0"},
	{"EVAL", "redis.log(9, 'y')", "0"},
	{"EVAL", "redis.setresp(2); return redis.call('hgetall', 'nohash')", "0"},
	{"EVAL", "redis.setresp(4)", "0"},
	{"EVAL", "redis.setresp()", "0"},
	{"EVAL", "redis.set_repl(redis.REPL_ALL); return 1", "0"},
	{"EVAL", "redis.set_repl(9)", "0"},
	{"EVAL", "redis.set_repl()", "0"},
	{"EVAL", "return redis.acl_check_cmd('set', 'a', 'b')", "0"},
	{"EVAL", "return redis.acl_check_cmd('nosuch')", "0"},
	{"EVAL", "return redis.acl_check_cmd()", "0"},
	{"EVAL", "return tostring(1e20) .. ' ' .. tostring(0.1) .. ' ' .. tostring(1/3)", "0"},
	{"EVAL", "return loadstring('return 5')()", "0"},
	{"EVAL", "return getmetatable(redis)", "0"},
	{"EVAL", "return rawequal(getmetatable('').__index, string)", "0"},
	{"EVAL", "return ('abc'):upper()", "0"},
	{"EVAL", "return string.format('%d %s %5.2f', 3, 'x', 2.5)", "0"},
	{"EVAL", "return table.concat({1, 2, 3}, ',')", "0"},
	{"EVAL", "local t = {3, 1, 2}; table.sort(t); return t", "0"},
	{"EVAL", "return coroutine.wrap(function() return 7 end)()", "0"},
	{"EVAL", "return select('#', 1, 2, 3)", "0"},
	{"EVAL", "return math.floor(2.5) + math.max(1, 9)", "0"},
	{"EVAL", "KEYS[1] = 'changed'; return KEYS[1]", "1", "k"},
	{"EVAL", "return arg", "0"},
	{"EVAL", "local function f(...) return arg.n end return f(1, 2)", "0"},
	{"EVAL", "local function f(...) return select('#', ...) end return f(1, 2, 3)", "0"},

	// Protected globals.
	{"EVAL", "x = 5", "0"},
	{"EVAL", "return y", "0"},
	{"EVAL", "redis.call = nil", "0"},
	{"EVAL", "rawset(_G, 'a', 1)", "0"},
	{"EVAL", "string.x = 1", "0"},
	{"EVAL", "local t = cjson; t.encode = nil", "0"},
	{"EVAL", "getmetatable('').__index = nil", "0"},
	{"EVAL", "setmetatable(_G, nil)", "0"},
	{"EVAL", "getmetatable(_G).__newindex = nil", "0"},
	{"EVAL", "rawset(getmetatable(_G), '__index', nil)", "0"},
	{"EVAL", "return type(getmetatable(_G).__index)", "0"},
	{"EVAL", "local mt = getmetatable(''); mt.__index = nil", "0"},
	{"EVAL", "_G.x = 1", "0"},
	{"EVAL", "return rawget(_G, 'nothing')", "0"},
	{"EVAL", "return rawget(redis, 'call') ~= nil", "0"},
	{"EVAL", "table.insert(math, 1)", "0"},
	{"EVAL", "return type(debug)", "0"},
	{"EVAL", "return type(os)", "0"},
	{"EVAL", "return type(io)", "0"},
	{"EVAL", "return type(require)", "0"},
	{"EVAL", "return type(dofile)", "0"},
	{"EVAL", "return type(print)", "0"},
	{"EVAL", "return type(newproxy)", "0"},
	{"EVAL", "function f() end", "0"},
	{"EVAL", "loadstring('zz = 1')()", "0"},

	// Errors through redis.call: Redis's texts.
	{"EVAL", "return redis.call('nosuch')", "0"},
	{"EVAL", "return redis.call('set', 'k')", "0"},
	{"EVAL", "return redis.call()", "0"},
	{"EVAL", "return redis.pcall()", "0"},
	{"EVAL", "return redis.call('get', {})", "0"},
	{"EVAL", "return redis.call('get', nil)", "0"},
	{"EVAL", "return redis.call('eval', 'return 1', 0)", "0"},
	{"EVAL", "return redis.call('multi')", "0"},
	{"EVAL", "return redis.call('client', 'list')", "0"},
	{"EVAL", "return redis.call('script', 'nosuch')", "0"},
	{"EVAL", "return redis.call('config', 'nosuch')", "0"},
	{"SET", "s", "foo"},
	{"EVAL", "return redis.call('incr', 's')", "0"},
	{"EVAL", "return redis.call('lpush', 's', 'x')", "0"},
	{"EVAL", "return redis.pcall('lpush', 's', 'x')", "0"},
	{"EVAL", "error('boom')", "0"},
	{"EVAL", "error({err='X boom'})", "0"},
	{"EVAL", "error()", "0"},
	{"EVAL", "error(nil)", "0"},
	{"EVAL", "error('x', 0)", "0"},
	{"EVAL", "error('x', 2)", "0"},
	{"EVAL", "local function f() error('deep', 2) end\nf()", "0"},
	{"EVAL", "error({err=5})", "0"},
	{"EVAL", "return {err=5}", "0"},
	{"EVAL", "return {pcall(error, 'x', 0)}", "0"},
	{"EVAL", "\n\nreturn redis.call('nosuch')", "0"},
	{"EVAL_RO", "return redis.call('set', 'a', 'b')", "0"},
	{"EVAL_RO", "return redis.call('get', 'a')", "0"},
	{"EVAL_RO", "return redis.call('publish', 'ch', 'm')", "0"},
	{"EVAL", "#!lua flags=no-writes\nreturn redis.call('set','a','b')", "0"},
	{"EVAL", "#!lua flags=no-writes\nreturn redis.call('get','a')", "0"},
	{"EVAL", "#!lua\nreturn redis.call('set','a','b')", "0"},
	{"EVAL_RO", "#!lua\nreturn 1", "0"},
	{"EVAL_RO", "#!lua flags=no-writes\nreturn 1", "0"},
	{"EVAL", "#!lua flags=allow-oom,allow-stale,no-cluster,allow-cross-slot-keys\nreturn 1", "0"},
	{"EVAL", "#!lua flags=foo\nreturn 1", "0"},
	{"EVAL", "#!lua name=x\nreturn 1", "0"},
	{"EVAL", "#!python\nreturn 1", "0"},
	{"EVAL", "#!lua", "0"},
	{"EVAL", "#!\nreturn 1", "0"},
	{"EVAL", "#!lua flags=\nreturn 1", "0"},

	// Arguments.
	{"EVAL", "return 1", "2", "a"},
	{"EVAL", "return 1", "-1"},
	{"EVAL", "return 1", "x"},
	{"EVAL", "return 1", "99999999999999999999"},
	{"EVAL", "return 1"},
	{"EVALSHA", "ffffffffffffffffffffffffffffffffffffffff", "0"},
	{"EVALSHA", "abc", "0"},
	{"EVALSHA", "abc", "x"},
	{"EVALSHA_RO", "ffffffffffffffffffffffffffffffffffffffff", "0"},
	{"SCRIPT", "LOAD", "return 'loaded'"},
	{"EVALSHA", "b534286061d4b9e4026607613b95c06c06015ae8", "0"},
	{"EVALSHA", "B534286061D4B9E4026607613B95C06C06015AE8", "0"},
	{"EVALSHA_RO", "b534286061d4b9e4026607613b95c06c06015ae8", "0"},
	{"SCRIPT", "EXISTS", "b534286061d4b9e4026607613b95c06c06015ae8", "B534286061D4B9E4026607613B95C06C06015AE8", "nope"},
	{"SCRIPT", "LOAD", "#!lua flags=bad\nreturn 1"},
	{"SCRIPT", "LOAD", "#!lua flags=no-writes\nreturn redis.call('set','x','y')"},
	{"EVALSHA", "43f5fe910d84b5ee2ef496f122831920e4095915", "0"},
	{"SCRIPT", "FLUSH"},
	{"SCRIPT", "EXISTS", "b534286061d4b9e4026607613b95c06c06015ae8"},
	{"EVALSHA", "b534286061d4b9e4026607613b95c06c06015ae8", "0"},
	{"SCRIPT", "FLUSH", "SYNC"},
	{"SCRIPT", "FLUSH", "async"},
	{"SCRIPT", "FLUSH", "now"},
	{"SCRIPT", "FLUSH", "sync", "x"},
	{"SCRIPT", "KILL"},
	{"SCRIPT", "KILL", "x"},
	{"SCRIPT", "DEBUG", "no"},
	{"SCRIPT", "DEBUG", "maybe"},
	{"SCRIPT", "HELP"},
	{"SCRIPT", "NOSUCH"},
	{"SCRIPT"},
	{"SCRIPT", "EXISTS"},
	{"SCRIPT", "LOAD"},

	// Library functions take a string holding a number where Lua 5.1
	// reads a number: ARGV is always strings.
	{"EVAL", "math.randomseed(ARGV[1]); return tostring(math.random())", "0", "10"},
	{"EVAL", "return {string.sub('abcdef', ARGV[1], ARGV[2]), string.byte('abc', ARGV[1]), string.char(ARGV[3]), string.rep('ab', ARGV[1])}", "0", "2", "3", "65"},
	{"EVAL", "return {table.concat({'a', 'b', 'c'}, ',', ARGV[1]), select(ARGV[1], 'x', 'y', 'z'), select('#', 1, 2), math.max(ARGV[1], '7'), math.floor(' 0x10 ')}", "0", "2"},
	{"EVAL", "local t = {} table.insert(t, ARGV[1]) table.insert(t, '1', 'x') table.remove(t, '2') return {t[1], #t, unpack({'a', 'b', 'c'}, '2', '3')}", "0", "5"},
	{"EVAL", "return {string.find('a.b', '.', '2', true), string.match('abc', '%a', '3'), string.format('%s', '1e2'), string.gsub('aaa', 'a', 'b', '2')}", "0"},
	// A table that refers to itself, packed to cmsgpack's nesting bound
	// (Redis's scripting.tcl): keys in the order they were set.
	{"EVAL", "local a = {x=nil,y=5} local b = {x=a} a['x'] = b local encoded = cmsgpack.pack(a) local h = '' for i = 1, #encoded do h = h .. string.format('%02x', string.byte(encoded, i)) end return {h, #encoded}", "0"},

	// Transactions: EVAL inside MULTI runs at EXEC.
	{"MULTI"},
	{"EVAL", "return redis.call('incr', 'tx')", "0"},
	{"EVAL", "return redis.call('blmpop', 0, 1, 'nolist', 'left')", "0"},
	{"EVAL", "return redis.call('nosuch')", "0"},
	{"EXEC"},
	{"MULTI"},
	{"SCRIPT", "KILL"},
	{"EXEC"},

	// tonumber is Lua 5.1's (strtod): exponents, hexadecimal, inf and
	// nan, and integers past 64 bits, which ioredis sends for JavaScript
	// numbers past 2^53 (BullMQ's promoteJobs passes Number.MAX_VALUE);
	// with a base, strtoul.
	{"EVAL", "return {tostring(tonumber('1e3')), tostring(tonumber('-2E-3')), tostring(tonumber('1e400')), tostring(tonumber(' -0x1F ')), tostring(tonumber('0x1.8p1')), tostring(tonumber('.5')), tostring(tonumber('5.')), tostring(tonumber('-INF')), tostring(tonumber('nan')), tostring(tonumber('12\\0ab')), tostring(tonumber('-0'))}", "0"},
	{"EVAL", "local z = 0; return tostring(-z)", "0"},
	{"EVAL", "return {tostring(tonumber('1e')), tostring(tonumber('0x')), tostring(tonumber('1_0')), tostring(tonumber('0b1')), tostring(tonumber('')), tostring(tonumber('1 2')), tostring(tonumber('++1')), tostring(tonumber({})), tostring(tonumber(nil))}", "0"},
	{"EVAL", "return {tostring(tonumber(ARGV[1])), redis.call('zrangebyscore', 'nozset', 0, tonumber(ARGV[1]), 'LIMIT', 0, 10)}", "0", "17976931348623157" + strings.Repeat("0", 292)},
	{"EVAL", "return {tostring(tonumber('ff', 16)), tostring(tonumber(' 0x10 ', 16)), tostring(tonumber('z', 36)), tostring(tonumber('-1', 16)), tostring(tonumber('8', 8)), tostring(tonumber(12, 16)), tostring(tonumber('11', '2')), tostring(tonumber('11', 2.9)), tostring(tonumber('1', 10.5))}", "0"},

	// Time is frozen while the script runs: a key set with a 1 ms TTL is
	// still there at its end.
	{"EVAL", "redis.call('set', 'frozen', 'v', 'px', 1); local x = 0; for i = 1, 2000000 do x = x + i end; return redis.call('exists', 'frozen')", "0"},
}

func TestScriptDifferential(t *testing.T) {
	d := NewDiff(t)
	for _, c := range scriptCases {
		d.Do(c...)
	}
}

// Errors are counted once in INFO errorstats: an error a command called
// from a script answered is not counted again as the script's reply.
func TestScriptErrorStats(t *testing.T) {
	d := NewDiff(t)
	d.DoBoth("CONFIG", "RESETSTAT")
	d.DoBoth("SET", "s", "x")
	for _, c := range [][]string{
		{"EVAL", "return redis.call('nosuch')", "0"},
		{"EVAL", "return redis.call('incr', 's')", "0"},
		{"EVAL", "return redis.pcall('incr', 's')", "0"},
		{"EVAL", "local r = redis.pcall('incr', 's') return 1", "0"},
		{"EVAL", "return {err='MINE here'}", "0"},
		{"EVAL", "return redis.error_reply('OTHER x')", "0"},
		{"EVAL", "error('x')", "0"},
		{"EVAL_RO", "return redis.call('set', 'a', 1)", "0"},
		{"EVALSHA", "ffffffffffffffffffffffffffffffffffffffff", "0"},
		{"EVAL", "return 1", "-1"},
	} {
		d.Do(c...)
	}
	d.Do("INFO", "errorstats")
	// The commands scripts called are counted as any other, refusals
	// as rejected calls, errors as failed ones.
	z, r := commandCounts(d.Z.Do("INFO", "commandstats")), commandCounts(d.R.Do("INFO", "commandstats"))
	diffCases.Add(1)
	if z != r {
		t.Errorf("INFO commandstats (calls, rejected, failed):\n zredis: %s\n  redis: %s", z, r)
	}
}

// commandCounts is INFO commandstats without the times.
func commandCounts(info string) string {
	var out []string
	for _, line := range strings.Split(info, "\r\n") {
		name, fields, ok := strings.Cut(line, ":")
		if !ok || !strings.HasPrefix(name, "cmdstat_") || name == "cmdstat_info" || name == "cmdstat_config|resetstat" {
			continue
		}
		var keep []string
		for _, f := range strings.Split(fields, ",") {
			if !strings.HasPrefix(f, "usec") {
				keep = append(keep, f)
			}
		}
		out = append(out, name+":"+strings.Join(keep, ","))
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

// Errors raised by the Lua VM itself (a runtime error in Lua code, a
// compile error): the text is gopher-lua's, so only the error code and
// the script's name and line after it are compared.
func TestScriptVMErrors(t *testing.T) {
	d := NewDiff(t)
	for _, src := range []string{
		"return 1 +",
		"return nil + 1",
		"local t = nil; return t.x",
		"return #nil",
		"return ('x'):bad()",
		"return string.rep('x', -1) .. nil",
		"return tonumber('1', 99)",
		"return tonumber({}, 16)",
		"return tonumber('1', 'x')",
		"return tonumber()",
		"@local function f() return f() + 1 end return f()",
	} {
		// "@": the call depth's bound is gopher-lua's, which cannot say
		// where it was reached: the error code alone is compared.
		whereToo := !strings.HasPrefix(src, "@")
		src = strings.TrimPrefix(src, "@")
		z, r := d.Z.Do("EVAL", src, "0"), d.R.Do("EVAL", src, "0")
		diffCases.Add(1)
		if z[0] != '-' || r[0] != '-' || strings.Fields(z)[0] != strings.Fields(r)[0] {
			t.Errorf("%q:\n zredis: %q\n  redis: %q", src, z, r)
			continue
		}
		if zi, ri := strings.Index(z, " script: "), strings.Index(r, " script: "); whereToo && ((zi < 0) != (ri < 0) || zi >= 0 && z[zi:] != r[ri:]) {
			t.Errorf("%q: where it happened:\n zredis: %q\n  redis: %q", src, z, r)
		}
	}
	// The server is fine afterwards.
	d.Do("EVAL", "return redis.call('ping')", "0")
}

// The libraries: cjson, cmsgpack, bit and struct, as Redis's C ones.
func TestScriptLibraries(t *testing.T) {
	d := NewDiff(t)
	for _, src := range []string{
		// cjson
		"return cjson.encode({1,2,3,{a=1}})",
		"return cjson.encode({})",
		"return cjson.encode({{}, {{}}})",
		"return cjson.encode(0.1)",
		"return cjson.encode(1/3)",
		"return cjson.encode(1e20)",
		"return cjson.encode(-0.0000001)",
		"return cjson.encode(123456789012345)",
		"return cjson.encode('a\"b\\\\c/d\\n\\t\\1\\127é')",
		"return cjson.encode({[1]=1, [2]=2, [4]=4})",
		"return cjson.encode({[1]=1, [20]=2})",
		"return cjson.encode({a={b={c='d'}}})",
		"return cjson.encode({true, false, cjson.null})",
		"return cjson.encode(0/0)",
		"return cjson.encode(1/0)",
		"return cjson.encode(print)",
		"return cjson.encode({[true]=1})",
		"return cjson.encode()",
		"return cjson.decode('[1,2,{\"a\":[true,null]}]')[3].a[1]",
		"return cjson.decode('{\"a\":\"b\"}').a",
		"return cjson.decode('\"\\\\u00e9\\\\ud83d\\\\ude00\\\\n\"')",
		"return cjson.decode('[1.5, -2, 1e3, 0.1]')",
		"return cjson.decode('1e400')",
		"return type(cjson.decode('null'))",
		"return cjson.decode('null') == cjson.null",
		"return cjson.decode('[]')",
		"return cjson.decode('')",
		"return cjson.decode('[1,]')",
		"return cjson.decode('{1:2}')",
		"return cjson.decode('{\"a\" 2}')",
		"return cjson.decode('[1 2]')",
		"return cjson.decode('nul')",
		"return cjson.decode('\"abc')",
		"return cjson.decode('\"\\\\q\"')",
		"return cjson.decode('[1] x')",
		"return cjson.decode(string.rep('[', 1001) .. string.rep(']', 1001))",
		"return cjson.decode(string.rep('[', 100000))",
		"local t = {} for i = 1, 100000 do t = {t} end return cjson.encode(t)",
		"return unpack({}, 1, 1e8)",
		"return {unpack({1, 2, 3}, 2)}",
		"local function f() return coroutine.wrap(f)() end return f()",
		"return cjson.encode(cjson.decode('{\"k\":[1,\"two\",{\"three\":3}]}'))",
		"return {cjson.encode_max_depth(), cjson.decode_max_depth(), cjson.encode_number_precision()}",
		"return {cjson.encode_sparse_array()}",
		// cmsgpack
		"return cmsgpack.pack({1,2,3})",
		"return cmsgpack.pack(1, -1, 127, 128, 255, 256, 65535, 65536, 4294967295, 4294967296, -32, -33, -128, -129, -32768, -32769, -2147483648, -2147483649)",
		"return cmsgpack.pack(1.5, 0.1, 1e300, -2.25)",
		"return cmsgpack.pack('', 'abc', string.rep('x', 31), string.rep('y', 32), string.rep('z', 256), string.rep('w', 65536))",
		"return cmsgpack.pack(true, false, nil)",
		"return cmsgpack.pack({a=1})",
		"return cmsgpack.pack({}, {{}}, {1, nil, 3})",
		"return cmsgpack.pack(string.rep('x', 20):byte(1, 16))",
		"local t = {} for i = 1, 20 do t[i] = i end return cmsgpack.pack(t)",
		"local t = {} t = {t} for i = 1, 20 do t = {t} end return cmsgpack.pack(t)",
		"return {cmsgpack.unpack(cmsgpack.pack(1, 'two', {3, 4}, true))}",
		"return cmsgpack.unpack(cmsgpack.pack({a='b'})).a",
		"return cmsgpack.unpack(cmsgpack.pack(0.5, -0.25))",
		"return {cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3))}",
		"return {cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3), 2)}",
		"return {cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3), 2)}",
		"return {cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3), 2, 1)}",
		"return cmsgpack.unpack('\\196')",
		"return cmsgpack.unpack('\\193')",
		"return cmsgpack.unpack('\\205\\1')",
		"return cmsgpack.pack()",
		// bit
		"return {bit.band(0xff, 0x0f), bit.bor(1, 2, 4), bit.bxor(5, 3), bit.bnot(0), bit.tobit(2^32 + 5)}",
		"return {bit.lshift(1, 31), bit.rshift(-1, 28), bit.arshift(-256, 4), bit.rol(0x12345678, 8), bit.ror(0x12345678, 8)}",
		"return {bit.tohex(255), bit.tohex(255, 2), bit.tohex(-1, -4), bit.tohex(1, 20), bit.bswap(0x12345678)}",
		"return bit.tobit(1.5) .. ' ' .. bit.tobit(2.5) .. ' ' .. bit.tobit(-1.5)",
		"return bit.band()",
		"return bit.band('x')",
		"return bit.band('12', 4)",
		// struct
		"return struct.pack('>I2', 258)",
		"return struct.pack('<i4 >h b B', -5, 1000, -1, 255)",
		"return struct.pack('!4 b i', 1, 2)",
		"return struct.pack('s c3 c0', 'ab', 'xyz', 'tail')",
		"return struct.pack('d f', 1.5, 0.25)",
		"return struct.pack('l L T', -1, 2, 3)",
		"return {struct.unpack('<i4', struct.pack('<i4', -5))}",
		"return {struct.unpack('>I2 s', struct.pack('>I2 s', 513, 'hi'))}",
		"return {struct.unpack('b c0', struct.pack('b', 3) .. 'abcdef')}",
		"return {struct.unpack('d', struct.pack('d', 1.5))}",
		"return {struct.unpack('i', 'abcdefgh', 5)}",
		"return {struct.size('i h b d'), struct.size('!8 b d'), struct.size('c10')}",
		"return struct.size('s')",
		"return struct.pack('q', 1)",
		"return struct.pack('i33', 1)",
		"return struct.pack('!3 i', 1)",
		"return struct.unpack('i', 'ab')",
		"return struct.unpack('s', 'ab')",
		"return struct.unpack('i', 'abcd', 0)",
	} {
		z, r := d.Z.Do("EVAL", src, "0"), d.R.Do("EVAL", src, "0")
		diffCases.Add(1)
		if z == r {
			continue
		}
		// An error raised by the library: Redis's message after the VM's
		// position; the library's text itself must match.
		if z[0] == '-' && r[0] == '-' && libErrorText(z) == libErrorText(r) {
			continue
		}
		t.Errorf("%q:\n zredis: %q\n  redis: %q", src, z, r)
	}
}

// libErrorText is the text of a library's error: after "user_script:N: "
// and before " script: ", with Lua's "bad argument #i to 'f'" prefix
// reduced to its reason.
func libErrorText(reply string) string {
	s := reply
	if i := strings.Index(s, ": "); i >= 0 && strings.Contains(s[:i], "user_script") {
		s = s[i+2:]
	}
	if i := strings.Index(s, " script: "); i >= 0 {
		s = s[:i]
	}
	if i := strings.Index(s, "("); i >= 0 && strings.HasPrefix(s, "bad argument") {
		s = s[i:]
	}
	return s
}

// math.random is Redis's redisLrand48 from its initial state: a fresh
// server gives the same sequence as a fresh redis-server, across scripts,
// and math.randomseed restarts it.
func TestScriptRandomSequence(t *testing.T) {
	RequireRedis(t)
	z, r := Dial(t, StartZredis(t).Addr), Dial(t, StartRedis(t).Addr)
	for _, src := range []string{
		"return {tostring(math.random()), math.random(100), math.random(5, 10)}",
		"local t = {} for i = 1, 10 do t[i] = math.random(1000000) end return t",
		"math.randomseed(42); return {tostring(math.random()), math.random(7)}",
		"return math.random(0)",
		"return math.random(3, 1)",
		"return math.random(1, 2, 3)",
	} {
		zr, rr := z.Do("EVAL", src, "0"), r.Do("EVAL", src, "0")
		diffCases.Add(1)
		if zr != rr && libErrorText(zr) != libErrorText(rr) {
			t.Errorf("%q:\n zredis: %q\n  redis: %q", src, zr, rr)
		}
	}
}

// MONITOR shows EVAL, then the commands its script calls, from the
// "lua" client.
func TestScriptMonitor(t *testing.T) {
	d := NewDiff(t)
	zm, rm := Dial(t, shared.z.Addr), Dial(t, shared.r.Addr)
	for _, m := range []*Conn{zm, rm} {
		m.Do("MONITOR")
	}
	d.Do("EVAL", "redis.call('set', KEYS[1], ARGV[1]); return redis.call('get', KEYS[1])", "1", "mk", "mv")
	d.Do("EVALSHA", "abc", "0")
	for i := 0; i < 4; i++ {
		z, r := zm.Read(), rm.Read()
		diffCases.Add(1)
		if monitorTail(z) != monitorTail(r) {
			t.Errorf("MONITOR line %d:\n zredis: %q\n  redis: %q", i, z, r)
		}
	}
}

// monitorTail is a MONITOR line without its time and client address,
// but with the client's kind: "lua" or a network client.
func monitorTail(line string) string {
	i := strings.Index(line, "]")
	if i < 0 {
		return line
	}
	who := "client"
	if strings.Contains(line[:i], " lua") {
		who = "lua"
	}
	return who + line[i:]
}

// Over maxmemory, the checks before a script runs read the flags its
// shebang declares (evalGetCommandFlags), and a script without shebang
// is refused at its first deny-oom command.
func TestScriptOOM(t *testing.T) {
	RequireRedis(t)
	z, r := Dial(t, StartZredis(t).Addr), Dial(t, StartRedis(t).Addr)
	for _, c := range []*Conn{z, r} {
		c.Do("SET", "big", strings.Repeat("x", 100000))
		c.Do("CONFIG", "SET", "maxmemory", "1")
	}
	for _, src := range []string{
		"return redis.call('set', 'a', 1)",
		"return redis.call('get', 'big') ~= nil",
		"redis.call('del', 'nothing'); return redis.call('set', 'a', 1)",
		"#!lua\nreturn 1",
		"#!lua flags=allow-oom\nreturn redis.call('set', 'a', 1)",
		"#!lua flags=no-writes\nreturn redis.call('exists', 'a')",
		"#!lua flags=no-writes\nreturn redis.call('set', 'a', 1)",
	} {
		for _, cmd := range []string{"EVAL", "EVAL_RO"} {
			zr, rr := z.Do(cmd, src, "0"), r.Do(cmd, src, "0")
			diffCases.Add(1)
			if zr != rr {
				t.Errorf("%s %q:\n zredis: %q\n  redis: %q", cmd, src, zr, rr)
			}
		}
	}
	for _, c := range []*Conn{z, r} {
		c.Do("CONFIG", "SET", "maxmemory", "0")
	}
}

// On a read-only replica, scripts read; a write from a script, or a
// script that declares it may write, is refused with 7.0's texts; with
// replica-serve-stale-data no and the link down, only allow-stale
// scripts run.
func TestScriptOnReadOnlyReplica(t *testing.T) {
	RequireRedis(t)
	z, r := Dial(t, StartZredis(t).Addr), Dial(t, StartRedis(t).Addr)
	nowhere := strconv.Itoa(FreePort(t))
	for _, c := range []*Conn{z, r} {
		c.Do("SET", "k", "v")
		c.Do("REPLICAOF", "127.0.0.1", nowhere)
	}
	cases := [][]string{
		{"EVAL", "return redis.call('get', 'k')", "0"},
		{"EVAL", "return redis.call('set', 'k', 'w')", "0"},
		{"EVAL_RO", "return redis.call('get', 'k')", "0"},
		{"EVAL_RO", "return redis.call('set', 'k', 'w')", "0"},
		{"EVAL", "#!lua\nreturn 1", "0"},
		{"EVAL", "#!lua flags=no-writes\nreturn redis.call('get', 'k')", "0"},
		{"EVAL_RO", "#!lua flags=no-writes\nreturn redis.call('get', 'k')", "0"},
		{"SCRIPT", "LOAD", "return redis.call('get', 'k')"},
		{"EVALSHA_RO", "2845dc5d9bfb60b33a15b681dee13ea33da18095", "0"},
	}
	compare := func() {
		for _, c := range cases {
			zr, rr := z.Do(c...), r.Do(c...)
			diffCases.Add(1)
			if zr != rr {
				t.Errorf("%q:\n zredis: %q\n  redis: %q", c, zr, rr)
			}
		}
	}
	compare()
	for _, c := range []*Conn{z, r} {
		c.Do("CONFIG", "SET", "replica-serve-stale-data", "no")
	}
	cases = [][]string{
		{"EVAL", "return 1", "0"},
		{"EVAL", "#!lua flags=no-writes\nreturn 1", "0"},
		{"EVAL", "#!lua flags=no-writes,allow-stale\nreturn redis.call('get', 'k')", "0"},
		{"EVAL", "#!lua flags=no-writes,allow-stale\nreturn redis.call('ping')", "0"},
		{"EVAL_RO", "#!lua flags=no-writes,allow-stale\nreturn 1", "0"},
	}
	compare()
	for _, c := range []*Conn{z, r} {
		c.Do("REPLICAOF", "NO", "ONE")
	}
}

// ACL applies to the commands a script calls, with 7.0's texts, and to
// the keys EVAL declares.
func TestScriptACL(t *testing.T) {
	d := NewDiff(t)
	d.DoBoth("ACL", "DELUSER", "scripter")
	d.Do("ACL", "SETUSER", "scripter", "on", ">pw", "~k*", "+@all", "-flushall", "-hset", "+client|id")
	d.Do("AUTH", "scripter", "pw")
	for _, c := range [][]string{
		{"EVAL", "return redis.call('set', 'k1', 'v')", "0"},
		{"EVAL", "return redis.call('set', 'other', 'v')", "0"},
		{"EVAL", "return redis.call('hset', 'k2', 'f', 'v')", "0"},
		{"EVAL", "return redis.pcall('hset', 'k2', 'f', 'v')", "0"},
		{"EVAL", "return redis.call('flushall')", "0"},
		{"EVAL", "return redis.acl_check_cmd('hset', 'k2', 'f', 'v')", "0"},
		{"EVAL", "return redis.acl_check_cmd('set', 'other', 'v')", "0"},
		{"EVAL", "return redis.acl_check_cmd('set', 'k9', 'v')", "0"},
		{"EVAL", "return 1", "1", "other"},
		{"EVAL", "return 1", "1", "k1"},
	} {
		d.Do(c...)
	}
	d.Do("AUTH", "default", "")
	d.DoBoth("AUTH", "default", "x")
	// The denials are in the ACL log, in the lua context.
	z, r := Dial(t, shared.z.Addr), Dial(t, shared.r.Addr)
	for _, c := range []*Conn{z, r} {
		if log := c.Do("ACL", "LOG"); !strings.Contains(log, "\r\nlua\r\n") {
			t.Errorf("ACL LOG has no lua entry: %q", log)
		}
		c.Do("ACL", "LOG", "RESET")
		c.Do("ACL", "DELUSER", "scripter")
	}
}

// A script's writes reach the AOF as their effects, wrapped in MULTI ...
// EXEC when more than one; EVAL, SCRIPT LOAD and SCRIPT FLUSH never do.
func TestScriptPropagationAOF(t *testing.T) {
	RequireRedis(t)
	args := []string{"--appendonly", "yes", "--appendfsync", "always"}
	r := newAOFProp(t, StartRedis(t, args...))
	z := newAOFProp(t, StartZredis(t, args...))
	for i, step := range [][]string{
		{"set", "start", "1"},
		{"eval", "return redis.call('set', KEYS[1], ARGV[1])", "1", "k", "v"},
		{"eval", "redis.call('set', 'a', 1); redis.call('incr', 'a'); return redis.call('get', 'a')", "0"},
		{"eval", "return redis.call('get', 'a')", "0"},
		{"eval", "redis.call('set', 'e', 1, 'ex', 100); redis.call('expire', 'a', 50); return 1", "0"},
		{"script", "load", "return redis.call('incr', 'loaded')"},
		{"evalsha", "5943ee4581c10f3f8872b3f8718ccb27c394c5bf", "0"},
		{"script", "load", "return redis.call('incr', 'viasha')"},
		{"script", "flush"},
		{"eval", "redis.call('select', 3); redis.call('set', 'x', 1); return 1", "0"},
		{"eval", "redis.set_repl(redis.REPL_NONE); redis.call('set', 'hidden', 1); return 1", "0"},
		{"eval", "redis.set_repl(redis.REPL_AOF); redis.call('set', 'aofonly', 1); redis.set_repl(redis.REPL_REPLICA); redis.call('set', 'replonly', 1); return 1", "0"},
		{"eval", "redis.call('sadd', 's', 'a', 'b', 'c'); return redis.call('spop', 's') ~= nil", "0"},
		{"eval", "redis.call('set', 'x', 'y'); return redis.call('nosuch')", "0"},
		{"eval", "return redis.call('del', 'nothing')", "0"},
		{"multi"}, {"eval", "return redis.call('incr', 'm')", "0"}, {"set", "after", "1"}, {"exec"},
	} {
		name := fmt.Sprintf("step %d %q", i, step)
		rr, zr := r.main.Do(step...), z.main.Do(step...)
		if rr != zr && !strings.Contains(step[len(step)-2], "spop") {
			t.Fatalf("%s: replies differ: redis %q, zredis %q", name, rr, zr)
		}
		ra, za := r.appended(), z.appended()
		if !testsupport.SamePropagation(ra, za) {
			t.Fatalf("%s:\nredis-server AOF: %q\nzredis AOF:       %q", name, ra, za)
		}
	}
}

// A redis-server replica of zredis applies a script's effects: the data
// is the same on both sides, and the replica never sees EVAL (its own
// script cache stays empty).
func TestScriptReplicatedToRedisServer(t *testing.T) {
	RequireRedis(t)
	zp := StartZredis(t)
	rp := StartRedis(t)
	m, rep := Dial(t, zp.Addr), Dial(t, rp.Addr)
	m.Do("EVAL", "redis.call('set', 'before', 1); return 1", "0")
	rep.Do("REPLICAOF", "127.0.0.1", strconv.Itoa(zp.Port))
	waitFor(t, func() bool { return strings.Contains(rep.Do("INFO", "replication"), "master_link_status:up") })
	sha := bulkText(m.Do("SCRIPT", "LOAD", "redis.call('rpush', KEYS[1], ARGV[1]); redis.call('incr', 'n'); return redis.call('llen', KEYS[1])"))
	for i := 0; i < 5; i++ {
		m.Do("EVALSHA", sha, "1", "list", strconv.Itoa(i))
	}
	m.Do("EVAL", "redis.call('hset', 'h', 'f', 'v'); redis.call('pexpire', 'h', 100000); return 1", "0")
	m.Do("EVAL", "redis.set_repl(redis.REPL_NONE); redis.call('set', 'local', 1); return 1", "0")
	m.Do("SET", "last", "1")
	waitFor(t, func() bool { return rep.Do("EXISTS", "last") == ":1\r\n" })
	for _, c := range [][]string{
		{"LRANGE", "list", "0", "-1"}, {"GET", "n"}, {"HGETALL", "h"}, {"GET", "before"},
	} {
		if a, b := m.Do(c...), rep.Do(c...); a != b {
			t.Errorf("%q: master %q, replica %q", c, a, b)
		}
	}
	if got := rep.Do("EXISTS", "local"); got != ":0\r\n" {
		t.Errorf("a REPL_NONE write reached the replica: %q", got)
	}
	if ttl := rep.Do("PTTL", "h"); !strings.HasPrefix(ttl, ":") || ttl == ":-1\r\n" {
		t.Errorf("the replica lost the script's PEXPIRE: %q", ttl)
	}
	if got := rep.Do("SCRIPT", "EXISTS", sha); got != "*1\r\n:0\r\n" {
		t.Errorf("SCRIPT LOAD reached the replica: %q", got)
	}
	rep.Do("REPLICAOF", "NO", "ONE")
}

// INFO memory counts the cached scripts and estimates their memory;
// SCRIPT FLUSH empties the cache.
func TestScriptInfoMemory(t *testing.T) {
	c := Dial(t, StartZredis(t).Addr)
	field := func(name string) int64 {
		info := c.Do("INFO", "memory")
		for _, line := range strings.Split(info, "\r\n") {
			if v, ok := strings.CutPrefix(line, name+":"); ok {
				n, _ := strconv.ParseInt(v, 10, 64)
				return n
			}
		}
		t.Fatalf("INFO memory has no %s", name)
		return 0
	}
	if n := field("number_of_cached_scripts"); n != 0 {
		t.Fatalf("number_of_cached_scripts %d at start", n)
	}
	vm0 := field("used_memory_vm_eval")
	if vm0 <= 0 || field("used_memory_lua") != vm0 {
		t.Fatalf("used_memory_vm_eval %d, used_memory_lua %d", vm0, field("used_memory_lua"))
	}
	for i := 0; i < 10; i++ {
		c.Do("SCRIPT", "LOAD", fmt.Sprintf("return %d", i))
	}
	c.Do("EVAL", "return 'x'", "0")
	if n := field("number_of_cached_scripts"); n != 11 {
		t.Errorf("number_of_cached_scripts %d, want 11", n)
	}
	if m := field("used_memory_scripts_eval"); m <= 11*40 {
		t.Errorf("used_memory_scripts_eval %d for 11 scripts", m)
	}
	if field("used_memory_scripts") != field("used_memory_scripts_eval") {
		t.Errorf("used_memory_scripts is not the eval scripts' figure")
	}
	c.Do("SCRIPT", "FLUSH")
	if n, m := field("number_of_cached_scripts"), field("used_memory_scripts_eval"); n != 0 || m != 0 {
		t.Errorf("after SCRIPT FLUSH: %d scripts, %d bytes", n, m)
	}
}

// Bad input leaves the server serving and the data consistent: deep
// recursion, a huge table, an unconvertible result, a cyclic table.
func TestScriptBadInput(t *testing.T) {
	p := StartZredis(t)
	c := Dial(t, p.Addr)
	for _, src := range []string{
		"local function f(n) return f(n + 1) + 1 end return f(1)",
		"local function f() return {f()} end return f()",
		"local t = {} for i = 1, 200000 do t[i] = string.rep('x', 100) .. i end return #t",
		"local t = {} t[1] = t return t",
		"return function() end",
		"return coroutine.create(function() end)",
		"return {1, function() end, 3}",
		"error(setmetatable({}, {__tostring = function() return 'meta' end}))",
		"error({})",
		"error(nil)",
		"return pcall(error)",
		"return xpcall(function() error('x') end, function(e) return 'handled ' .. e end)",
		"return string.rep('x', 10, 'y')",
		"local t = setmetatable({}, {__index = function(t, k) return t[k] end}) return t.x",
		"local function f() return pcall(f) end return f()",
		"local function f() return coroutine.wrap(f)() end return f()",
		"return unpack({}, 1, 1e8)",
		"local t = {} for i = 1, 100000 do t = {t} end return cjson.encode(t)",
		"return cjson.decode(string.rep('[', 100000))",
		"return cmsgpack.unpack(string.rep('\\145', 100000))",
		"return struct.pack(string.rep('i', 100000))",
		"return redis.call(unpack({'echo', 'x'}))",
		"return table.concat({}, ',', 1, 1e8)",
		"return ('x'):rep(3):byte(1, -1)",
		"return string.format('%d %s', 1e300, {})",
		"return tostring(nil) .. tostring(print)",
	} {
		got := c.Do("EVAL", src, "0")
		if got == "" {
			t.Errorf("%q: no reply", src)
		}
	}
	if got := c.Do("SET", "alive", "1"); got != "+OK\r\n" {
		t.Fatalf("server not serving after bad scripts: %q", got)
	}
	// A script that fails half-way keeps what it wrote, as Redis does.
	c.Do("EVAL", "redis.call('set', 'half', 1); error('stop')", "0")
	if got := c.Do("GET", "half"); got != "$1\r\n1\r\n" {
		t.Errorf("GET half = %q", got)
	}
}

// waitBusy sends PING on c until the server answers -BUSY: the script
// that another client started passed busy-reply-threshold.
func waitBusy(t *testing.T, c *Conn) {
	t.Helper()
	if !pollUntil(30*time.Second, func() bool { return strings.HasPrefix(c.Do("PING"), "-BUSY") }) {
		t.Fatal("the server never answered -BUSY")
	}
}

// A script past busy-reply-threshold, as Redis 7.0 runs it: other clients
// (one connected before it, one after) get -BUSY but for the allow-busy
// commands, SCRIPT KILL stops a script that did not write and its client
// gets the error, one that wrote cannot be killed, and SHUTDOWN NOSAVE
// stops the server without keeping what the script wrote (the AOF does
// not have it after a restart). The replies are redis-server's.
func TestScriptBusy(t *testing.T) {
	RequireRedis(t)
	const loop = "local i = 0 while true do i = i + 1 end"
	replies := map[string][]string{}
	// With four event loops, the clients of the other loops are served
	// while the script yields the lock.
	for _, name := range []string{"redis", "zredis", "zredis io-threads 4"} {
		dir := t.TempDir()
		args := []string{"--busy-reply-threshold", "100", "--appendonly", "yes", "--appendfsync", "always", "--dir", dir}
		kind := name
		if kind, _, _ = strings.Cut(name, " "); kind != name {
			args = append(args, "--io-threads", "4")
		}
		p := StartServer(t, kind, args...)
		var got []string
		before := Dial(t, p.Addr)
		before.Do("SET", "kept", "1")
		runner := Dial(t, p.Addr)
		runner.Send(Encode("EVAL", loop, "0"))
		waitBusy(t, before)
		after := Dial(t, p.Addr)
		for _, cmd := range [][]string{
			{"PING"}, {"GET", "kept"}, {"SHUTDOWN"}, {"SHUTDOWN", "SAVE"}, {"NOSUCH"},
			{"MULTI"}, {"GET", "kept"}, {"EXEC"},
		} {
			got = append(got, after.Do(cmd...))
		}
		got = append(got, before.Do("SCRIPT", "KILL"), runner.Read(), before.Do("PING"), before.Do("SCRIPT", "KILL"))

		// A script that wrote cannot be killed.
		runner.Send(Encode("EVAL", "redis.call('set', 'partial', 1) "+loop, "0"))
		waitBusy(t, after)
		got = append(got, after.Do("SCRIPT", "KILL"), after.Do("EXISTS", "partial"))
		if kind == "zredis" {
			waitOutput(t, p, "Slow script detected: still in execution after")
			waitOutput(t, p, "Lua script killed by user with SCRIPT KILL.")
		}
		after.Send(Encode("SHUTDOWN", "NOSAVE"))
		if _, ok := p.Wait(30 * time.Second); !ok {
			t.Fatalf("%s: SHUTDOWN NOSAVE did not stop the server under a busy script:\n%s", name, p.Output())
		}
		// What the script wrote before the shutdown is not in the AOF.
		p = StartServer(t, kind, args...)
		c := Dial(t, p.Addr)
		got = append(got, c.Do("EXISTS", "partial"), c.Do("GET", "kept"))
		replies[name] = got
	}
	for _, name := range []string{"zredis", "zredis io-threads 4"} {
		if !reflect.DeepEqual(replies["redis"], replies[name]) {
			t.Errorf("replies differ:\nredis  %q\n%s %q", replies["redis"], name, replies[name])
		}
	}
}

// Busy scripts in the corners redis-server's suite and a review found:
// a script run on the connection's worker (after a pipelined KEYS), a
// write sent while CLIENT PAUSE WRITE holds writes (-BUSY first).
func TestScriptBusyEdges(t *testing.T) {
	RequireRedis(t)
	const loop = "local i = 0 while true do i = i + 1 end"
	replies := map[string][]string{}
	for _, name := range []string{"redis", "zredis"} {
		p := StartServer(t, name, "--busy-reply-threshold", "100")
		var got []string
		a, b := Dial(t, p.Addr), Dial(t, p.Addr)
		a.Send(append(Encode("KEYS", "nomatch*"), Encode("EVAL", loop, "0")...))
		waitBusy(t, b)
		got = append(got, Dial(t, p.Addr).Do("GET", "x"), b.Do("SCRIPT", "KILL"), a.Read(), a.Read(), b.Do("PING"))

		got = append(got, b.Do("CLIENT", "PAUSE", "20000", "WRITE"))
		a.Send(Encode("EVAL_RO", loop, "0"))
		waitBusy(t, b)
		got = append(got, Dial(t, p.Addr).Do("SET", "k", "v"), b.Do("SCRIPT", "KILL"), a.Read(), b.Do("CLIENT", "UNPAUSE"))
		replies[name] = got
	}
	if !reflect.DeepEqual(replies["redis"], replies["zredis"]) {
		t.Errorf("replies differ:\nredis  %q\nzredis %q", replies["redis"], replies["zredis"])
	}
}

// A script that never ends holds the keyspace lock, but not the process:
// SIGTERM stops it (its client gets an error) and the server shuts down
// as usual, with its final save.
func TestScriptLoopForeverStoppedBySIGTERM(t *testing.T) {
	p := StartZredis(t, "--save", "3600 1")
	c := Dial(t, p.Addr)
	c.Do("SET", "kept", "1")
	c.Send(Encode("EVAL", "redis.call('set', 'inloop', 1); redis.log(redis.LOG_WARNING, 'entering the loop'); while true do pcall(function() end) end", "0"))
	waitOutput(t, p, "entering the loop")
	if err := p.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	reply, err := c.ReadErr(20 * time.Second)
	if err == nil && !strings.HasPrefix(reply, "-ERR Script interrupted") {
		t.Errorf("the looping script's reply: %q", reply)
	}
	if _, ok := p.Wait(20 * time.Second); !ok {
		t.Fatalf("zredis did not exit after SIGTERM with a looping script:\n%s", p.Output())
	}
	waitOutput(t, p, "DB saved on disk")
}

// redis-py's Lock (acquire, extend, release: EVALSHA of its scripts, with
// EVAL after NOSCRIPT) works against zredis.
func TestScriptRedisPyLock(t *testing.T) {
	python := testsupport.RequirePython(t, "redis")
	p := StartZredis(t)
	prog := `
import sys, redis
r = redis.Redis(host="127.0.0.1", port=int(sys.argv[1]))
lock = r.lock("resource", timeout=10)
assert lock.acquire(blocking=False), "acquire"
other = r.lock("resource", timeout=10)
assert not other.acquire(blocking=False), "second acquire must fail"
assert lock.owned(), "owned"
lock.extend(5)
ttl = r.pttl("resource")
assert 10000 < ttl <= 15000, "extend: pttl %d" % ttl
lock.reacquire()
ttl = r.pttl("resource")
assert 9000 < ttl <= 10000, "reacquire: pttl %d" % ttl
lock.release()
assert r.get("resource") is None, "released"
stolen = r.lock("resource3", timeout=10)
assert stolen.acquire(blocking=False)
r.set("resource3", "someone else")
for op in (lambda: stolen.extend(1), stolen.release):
    try:
        op()
        raise SystemExit("a lock another holds must not be released nor extended")
    except redis.exceptions.LockNotOwnedError:
        pass
r.script_flush()
with r.lock("resource2", timeout=5) as l:
    assert r.get("resource2") is not None
assert r.get("resource2") is None
print("ok")
`
	f, err := os.CreateTemp(t.TempDir(), "lock*.py")
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(prog)
	f.Close()
	out, err := exec.Command(python, f.Name(), strconv.Itoa(p.Port)).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "ok") {
		t.Fatalf("redis-py Lock: %v\n%s", err, out)
	}
}

// bulkText is the text of a bulk string reply.
func bulkText(raw string) string {
	parts := strings.SplitN(raw, "\r\n", 3)
	if len(parts) < 2 || !strings.HasPrefix(raw, "$") {
		return raw
	}
	return parts[1]
}

// redis.setresp(3): redis.call's RESP3 replies as Lua sees them (map,
// set, double, null, boolean tables and values), what a script returns
// of each RESP3 form, and booleans by the script's protocol; the same in
// the RESP3 pass, where the caller speaks RESP3. Maps and sets hold one
// element: Lua's iteration order is its own.
func TestScriptSetRespDiff(t *testing.T) {
	d := NewDiff(t)
	d.DoBoth("HSET", "h", "a", "1")
	d.DoBoth("SADD", "s", "x")
	d.DoBoth("ZADD", "z", "1.5", "m")
	for _, script := range []string{
		"redis.setresp(3); return redis.call('HGETALL', 'h')",
		"redis.setresp(3); return redis.call('SMEMBERS', 's')",
		"redis.setresp(3); return redis.call('ZSCORE', 'z', 'm')",
		"redis.setresp(3); return redis.call('GET', 'nokey')",
		"redis.setresp(3); return type(redis.call('GET', 'nokey'))",
		"redis.setresp(3); return redis.call('HGETALL', 'h').map.a",
		"redis.setresp(3); return tostring(redis.call('SMEMBERS', 's').set.x)",
		"redis.setresp(3); return tostring(redis.call('ZSCORE', 'z', 'm').double)",
		"redis.setresp(3); return redis.call('ZADD', 'z', 'INCR', '1', 'm')",
		"redis.setresp(3); return redis.pcall('LPUSH', 'h', 'x')",
		"redis.setresp(3); return redis.call('PING')",
		"redis.setresp(3); return redis.call('EXISTS', 'h') == 1",
		"redis.setresp(2); return redis.call('HGETALL', 'h')",
		"redis.setresp(2); return redis.call('GET', 'nokey')",
		"return {double=3.25}",
		"return {big_number='123456789012345678901234567890'}",
		"return {verbatim_string={format='txt', string='hi'}}",
		"return {map={a=1}}",
		"return {set={a=true}}",
		"return true", "return false",
		"redis.setresp(3); return true", "redis.setresp(3); return false",
		"redis.setresp(3); return {true, false, {map={k=false}}}",
		"redis.setresp(4)", "redis.setresp()", "redis.setresp('3'); return redis.call('HGETALL', 'h')",
	} {
		d.Do("EVAL", script, "0")
	}
	d.Do("FUNCTION", "LOAD", "#!lua name=resplib\nredis.register_function('r3', function() redis.setresp(3); return redis.call('HGETALL', 'h') end)")
	d.Do("FCALL", "r3", "0")
	d.DoBoth("FUNCTION", "DELETE", "resplib")
}
