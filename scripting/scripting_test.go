package scripting

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	lua "github.com/yuin/gopher-lua"

	"github.com/zredis/zredis/engine"
)

// Unit tests of the VM's environment and the libraries, without a
// dispatcher: Lua code runs as a script would (the scripts' globals,
// the error handler), and its result is read as a Lua value. The EVAL
// family through the dispatcher is tested in commands/scripting_test.go,
// and against redis-server in tests/scripting_test.go.

// runLua runs src as a script body and returns its result as a string
// (tostring of it), or the error message the handler made.
func runLua(t *testing.T, e *Engine, src string) (string, string) {
	t.Helper()
	fn, err := e.L.Load(strings.NewReader(src), "user_script")
	require.NoError(t, err, src)
	fn.Env = e.env
	e.L.Push(fn)
	if err := e.L.PCall(0, 1, e.errh); err != nil {
		ae := err.(*lua.ApiError)
		e.L.SetTop(0)
		if tb, ok := ae.Object.(*lua.LTable); ok {
			return "", luaToString(tb.RawGetString("err"))
		}
		return "", ae.Object.String()
	}
	v := e.L.Get(-1)
	e.L.SetTop(0)
	return luaToString(v), ""
}

func newTestEngine(t *testing.T) *Engine {
	e := New(Options{Version: "7.0.15"})
	t.Cleanup(e.Close)
	return e
}

func TestLuaValues(t *testing.T) {
	e := newTestEngine(t)
	for _, tc := range []struct{ src, want, err string }{
		{src: "return 1 + 1", want: "2"},
		{src: "return tostring(1/3)", want: "0.33333333333333"},
		{src: "return tostring(1e20)", want: "1e+20"},
		{src: "return tostring(-0.5)", want: "-0.5"},
		{src: "return tostring(2^53)", want: "9.007199254741e+15"},
		{src: "return _VERSION", want: "Lua 5.1"},
		{src: "return redis.REDIS_VERSION", want: "7.0.15"},
		{src: "return redis.REDIS_VERSION_NUM", want: "458767"},
		{src: "return redis.sha1hex('')", want: "da39a3ee5e6b4b0d3255bfef95601890afd80709"},
		{src: "return type(redis.status_reply('x'))", want: "table"},
		{src: "return redis.error_reply('x').err", want: "ERR x"},
		{src: "return redis.error_reply('-WRONG x').err", want: "WRONG x"},
		{src: "return redis.replicate_commands()", want: "true"},
		{src: "return select(2, pcall(error, {err='E x'}))", want: "E x"},
		{src: "return loadstring('return 7')()", want: "7"},
		{src: "return #KEYS", err: "ERR user_script:1: Script attempted to access nonexistent global variable 'KEYS'"},
		{src: "x = 1", err: "ERR user_script:1: Attempt to modify a readonly table"},
		{src: "return undefinedname", err: "ERR user_script:1: Script attempted to access nonexistent global variable 'undefinedname'"},
		{src: "rawset(_G, 'x', 1)", err: "ERR Attempt to modify a readonly table"},
		{src: "redis.x = 1", err: "ERR user_script:1: Attempt to modify a readonly table"},
		{src: "table.insert(string, 1)", err: "ERR Attempt to modify a readonly table"},
		{src: "setmetatable(math, {})", err: "ERR Attempt to modify a readonly table"},
		{src: "getmetatable('').__index = {}", err: "ERR user_script:1: Attempt to modify a readonly table"},
		{src: "getmetatable(_G).__newindex = nil", err: "ERR user_script:1: Attempt to modify a readonly table"},
		{src: "rawset(getmetatable(_G), '__index', nil)", err: "ERR Attempt to modify a readonly table"},
		{src: "return type(getmetatable(_G).__index)", want: "function"},
		{src: "loadstring('y = 2')()", err: "ERR [string \"y = 2\"]:1: Attempt to modify a readonly table"},
		{src: "return os", err: "ERR user_script:1: Script attempted to access nonexistent global variable 'os'"},
		{src: "return debug", err: "ERR user_script:1: Script attempted to access nonexistent global variable 'debug'"},
		{src: "return print", err: "ERR user_script:1: Script attempted to access nonexistent global variable 'print'"},
		{src: "error('boom')", err: "ERR user_script:1: boom"},
		{src: "local function f() return f() + 1 end return f()", err: "lua callstack overflow"},
		{src: "local co = coroutine.wrap(function(a) local b = coroutine.yield(a + 1) return b * 2 end) return co(1) + co(5)", want: "12"},
		{src: "local ok, v = coroutine.resume(coroutine.create(function() error('in') end)) return tostring(ok) .. v", want: "falseuser_script:1: in"},
	} {
		got, err := runLua(t, e, tc.src)
		assert.Equal(t, tc.err, err, tc.src)
		if tc.err == "" {
			assert.Equal(t, tc.want, got, tc.src)
		}
	}
	// Nested coroutines stop as Lua's C stack does (each level adds its
	// position, as in Redis).
	_, err := runLua(t, e, "local function f() return coroutine.wrap(f)() end return f()")
	assert.True(t, strings.HasPrefix(err, "ERR user_script:1: user_script:1: ") && strings.HasSuffix(err, "C stack overflow"), err)
	_, err = runLua(t, e, "return unpack({}, 1, 1e8)")
	assert.Equal(t, "ERR user_script:1: too many results to unpack", err)

	// The globals a script sees are exactly Redis 7.0's.
	got, _ := runLua(t, e, "local t={} for k in pairs(_G) do t[#t+1]=k end table.sort(t) return table.concat(t, ' ')")
	assert.Equal(t, "_G _VERSION __redis__err__handler assert bit cjson cmsgpack collectgarbage coroutine error gcinfo getmetatable ipairs load loadstring math next pairs pcall rawequal rawget rawset redis select setmetatable string struct table tonumber tostring type unpack xpcall", got)
}

// math.random is redisLrand48: these are redis-server 7.0's first values
// on a fresh start.
func TestMathRandom(t *testing.T) {
	e := newTestEngine(t)
	got, _ := runLua(t, e, "local a = math.random() return table.concat({math.random(100), math.random(5, 10), tostring(math.random())}, ' ')")
	assert.Equal(t, "85 7 0.44658343468168", got)
	got, _ = runLua(t, e, "math.randomseed(1) local a = math.random(1000) math.randomseed(1) return a == math.random(1000)")
	assert.Equal(t, "true", got)
}

func TestParseShebang(t *testing.T) {
	for _, tc := range []struct {
		body  string
		flags engine.ScriptFlags
		n     int
		err   string
	}{
		{"return 1", engine.ScriptCompat, 0, ""},
		{"#!lua\nreturn 1", 0, 5, ""},
		{"#!lua flags=no-writes,allow-oom\nreturn 1", engine.ScriptNoWrites | engine.ScriptAllowOOM, 31, ""},
		{"#!lua flags=\n", 0, 12, ""},
		{"#!lua", 0, 0, "ERR Invalid script shebang"},
		{"#!lua flags=x\n", 0, 0, "ERR Unexpected flag in script shebang: x"},
		{"#!lua name=x\n", 0, 0, "ERR Unknown lua shebang option: name=x"},
		{"#!js\n", 0, 0, "ERR Unexpected engine in script shebang: #!js"},
		{"#! \n", 0, 0, "ERR Unexpected engine in script shebang: #!"},
	} {
		flags, n, err := ParseShebang([]byte(tc.body))
		assert.Equal(t, tc.err, err, tc.body)
		if tc.err == "" {
			assert.Equal(t, tc.flags, flags, tc.body)
			assert.Equal(t, tc.n, n, tc.body)
		}
	}
}

func TestFormatNumbers(t *testing.T) {
	for _, tc := range []struct {
		f    float64
		want string
	}{
		{0, "0"}, {1, "1"}, {-1, "-1"}, {0.1, "0.1"}, {1.0 / 3, "0.33333333333333"},
		{1e14, "1e+14"}, {123456789012345, "1.2345678901234e+14"}, {99999999999999, "99999999999999"},
		{1e-5, "1e-05"}, {0.0001, "0.0001"}, {-2.5e-7, "-2.5e-07"}, {1e300, "1e+300"},
		{math.Copysign(0, -1), "-0"},
	} {
		assert.Equal(t, tc.want, fmtNumber(tc.f), "%v", tc.f)
	}
	assert.Equal(t, int64(-9223372036854775808), toInt64(1e300))
	assert.Equal(t, int64(3), toInt64(3.99))
	assert.Equal(t, int64(-3), toInt64(-3.99))
}

// tonumber converts as Redis's Lua 5.1 does, over glibc's strtod and
// strtoul (the expected values are redis-server 7.0.15's).
func TestTonumber(t *testing.T) {
	e := newTestEngine(t)
	maxValue := "17976931348623157" + strings.Repeat("0", 292) // ioredis's Number.MAX_VALUE
	for _, tc := range []struct{ arg, want string }{
		{"'1e3'", "1000"}, {"'1e308'", "1e+308"}, {"'1e400'", "inf"}, {"'-1e400'", "-inf"},
		{"'2e-3'", "0.002"}, {"'" + maxValue + "'", "1.7976931348623e+308"},
		{"'99999999999999999999'", "1e+20"}, {"' 12 '", "12"}, {"'\\t12\\n'", "12"},
		{"'\\v5\\f'", "5"}, {"'010'", "10"}, {"'1_0'", "nil"}, {"'0x10'", "16"},
		{"'-0x10'", "-16"}, {"'0X1f'", "31"}, {"'0x'", "nil"}, {"'0x1p4'", "16"},
		{"'0x1.8'", "1.5"}, {"'inf'", "inf"}, {"'-INF'", "-inf"}, {"'infinity'", "inf"},
		{"'nan'", "nan"}, {"'nan(123)'", "nan"}, {"'INFx'", "nil"}, {"'.5'", "0.5"},
		{"'5.'", "5"}, {"'.'", "nil"}, {"'1e'", "nil"}, {"'1e+'", "nil"}, {"'+3'", "3"},
		{"'++3'", "nil"}, {"''", "nil"}, {"'  '", "nil"}, {"'12a'", "nil"}, {"'1 2'", "nil"},
		{"'1e-400'", "0"}, {"'-0'", "-0"}, {"'0b11'", "nil"}, {"'0o7'", "nil"}, {"'12\\0ab'", "12"},
		{"12", "12"}, {"{}", "nil"}, {"nil", "nil"}, {"true", "nil"},
		{"'ff', 16", "255"}, {"'0x10', 16", "16"}, {"'z', 36", "35"}, {"'8', 8", "nil"},
		{"'  -7 ', 10", "-7"}, {"' 11 ', 2", "3"}, {"'-1', 16", "1.844674407371e+19"},
		{"'12', 2", "nil"}, {"'', 16", "nil"}, {"'7fffffffffffffffff', 16", "1.844674407371e+19"},
		{"'1e3', 16", "483"}, {"'1.5', 16", "nil"}, {"12, 16", "18"}, {"'10', '16'", "16"},
		{"'11', 2.9", "3"}, {"'1', 10.7", "1"}, {"'0x', 16", "nil"},
	} {
		got, err := runLua(t, e, "return tostring(tonumber("+tc.arg+"))")
		assert.Equal(t, "", err, tc.arg)
		assert.Equal(t, tc.want, got, tc.arg)
	}
	for _, tc := range []struct{ args, err string }{
		{"", "bad argument #1 to tonumber (value expected)"},
		{"'1', 99", "bad argument #2 to tonumber (base out of range)"},
		{"{}, 16", "bad argument #1 to tonumber (string expected, got table)"},
		{"'1', 'x'", "bad argument #2 to tonumber (number expected, got string)"},
	} {
		_, err := runLua(t, e, "return tonumber("+tc.args+")")
		assert.Contains(t, err, tc.err, tc.args)
	}
}

func TestLibraries(t *testing.T) {
	e := newTestEngine(t)
	for _, tc := range []struct{ src, want, err string }{
		// cjson
		{src: "return cjson.encode({1, 'a', true, cjson.null})", want: `[1,"a",true,null]`},
		{src: "return cjson.encode({})", want: `{}`},
		{src: "return cjson.encode({a={b=1}})", want: `{"a":{"b":1}}`},
		{src: "return cjson.encode('\"/\\n\\1')", want: `"\"\/\n\u0001"`},
		{src: "return cjson.encode({[1]=1, [3]=3})", want: `[1,null,3]`},
		{src: "return cjson.encode({[1]=1, [30]=3})", err: "Cannot serialise table: excessively sparse array"},
		{src: "return cjson.encode(0/0)", err: "Cannot serialise number: must not be NaN or Inf"},
		{src: "return cjson.encode(1.5)", want: "1.5"},
		{src: "local t = cjson.decode('{\"a\":[1,2.5,\"x\",null,false]}') return cjson.encode(t)", want: `{"a":[1,2.5,"x",null,false]}`},
		{src: "return cjson.decode('\"\\\\u00e9\"')", want: "é"},
		{src: "return cjson.decode('[1,')", err: "Expected value but found T_END at character 4"},
		{src: "return cjson.decode('{\"a\" 1}')", err: "Expected colon but found T_NUMBER at character 6"},
		// cmsgpack
		{src: "return cmsgpack.pack(1, -1, 200, 'ab', true, nil)", want: "\x01\xff\xcc\xc8\xa2ab\xc3\xc0"},
		{src: "return cmsgpack.pack({1, 2})", want: "\x92\x01\x02"},
		{src: "return cmsgpack.pack({a=1})", want: "\x81\xa1a\x01"},
		{src: "return cmsgpack.pack(1.5)", want: "\xca\x3f\xc0\x00\x00"},
		{src: "return cmsgpack.pack(0.1)", want: "\xcb\x3f\xb9\x99\x99\x99\x99\x99\x9a"},
		{src: "local a, b, c = cmsgpack.unpack(cmsgpack.pack(7, 'x', {1, {2}})) return a .. b .. c[2][1]", want: "7x2"},
		{src: "return cmsgpack.unpack('\\205\\1')", err: "Missing bytes in input."},
		{src: "return cmsgpack.unpack('\\193')", err: "Bad data format in input."},
		// bit
		{src: "return bit.band(0xff, 0x0f)", want: "15"},
		{src: "return bit.tohex(-1)", want: "ffffffff"},
		{src: "return bit.tohex(255, -4)", want: "00FF"},
		{src: "return bit.lshift(1, 31)", want: "-2147483648"},
		{src: "return bit.arshift(-256, 4)", want: "-16"},
		{src: "return bit.tobit(2^32 + 3)", want: "3"},
		{src: "return bit.bswap(0x12345678)", want: "2018915346"},
		{src: "return bit.rol(0x80000001, 1)", want: "3"},
		// struct
		{src: "return struct.pack('>I2', 258)", want: "\x01\x02"},
		{src: "return struct.pack('<i4', -2)", want: "\xfe\xff\xff\xff"},
		{src: "return struct.pack('!4 b i', 1, 2)", want: "\x01\x00\x00\x00\x02\x00\x00\x00"},
		{src: "return struct.pack('s', 'ab')", want: "ab\x00"},
		{src: "return struct.size('i h b d')", want: "15"},
		{src: "return select(2, struct.unpack('>h', '\\255\\254'))", want: "3"},
		{src: "return struct.unpack('>h', '\\255\\254')", want: "-2"},
		{src: "return struct.unpack('i', 'ab')", err: "data string too short"},
	} {
		got, err := runLua(t, e, tc.src)
		if tc.err != "" {
			assert.Contains(t, err, tc.err, tc.src)
			continue
		}
		assert.Equal(t, "", err, tc.src)
		assert.Equal(t, tc.want, got, tc.src)
	}
}

func TestChunkID(t *testing.T) {
	assert.Equal(t, `[string "x = 1"]`, chunkID("x = 1"))
	assert.Equal(t, `[string "a..."]`, chunkID("a\nb"))
	assert.Equal(t, `[string "`+strings.Repeat("x", 45)+`..."]`, chunkID(strings.Repeat("x", 50)))
	assert.Equal(t, "name", chunkID("=name"))
	assert.Equal(t, "file", chunkID("@file"))
}

func TestFlushResetsVM(t *testing.T) {
	e := newTestEngine(t)
	sha, msg := e.Load([]byte("return 1"))
	require.Empty(t, msg)
	require.True(t, e.Exists([]byte(strings.ToUpper(sha))))
	require.EqualValues(t, 1, e.Memory().Scripts)
	_, msg = e.Load([]byte("return +"))
	require.Contains(t, msg, "ERR Error compiling script (new function): ")
	e.Flush()
	require.False(t, e.Exists([]byte(sha)))
	require.Equal(t, engine.ScriptMemory{VMEval: engine.ScriptVMBaseBytes}, e.Memory())
}

func TestCompileErrors(t *testing.T) {
	e := newTestEngine(t)
	for _, tc := range []struct{ body, want string }{
		{"return 1 +", "ERR Error compiling script (new function): user_script:1: syntax error near '<eof>'"},
		{"return 'abc", "ERR Error compiling script (new function): user_script:1: unterminated string near '<eof>'"},
		{"#!lua\n\nreturn +", "ERR Error compiling script (new function): user_script:3: syntax error near '+'"},
	} {
		_, msg := e.Load([]byte(tc.body))
		assert.Equal(t, tc.want, msg, tc.body)
	}
}

// redis.call's arguments are copied into buffers reused from call to
// call: strings as they are, numbers as %.17g, each capped at its end;
// buffers grown past what a call needs kept are let go once the call is
// done, so that a large value a script wrote is not held.
func TestCallArgsBuffers(t *testing.T) {
	e := newTestEngine(t)
	L := e.L
	call := func(vals ...lua.LValue) [][]byte {
		L.SetTop(0)
		for _, v := range vals {
			L.Push(v)
		}
		args, msg := e.argsOf(L)
		require.Empty(t, msg)
		L.SetTop(0)
		return args
	}
	args := call(lua.LString("SET"), lua.LString(""), lua.LNumber(1.5))
	require.Equal(t, [][]byte{[]byte("SET"), {}, []byte("1.5")}, args)
	require.NotNil(t, args[1], "an empty argument is not a nil one")
	require.Equal(t, len(args[0]), cap(args[0]), "capped at its end")
	e.doneWithArgs()
	require.NotNil(t, e.argBytes, "small buffers are kept for the next call")

	big := strings.Repeat("x", maxKeptArgBytes+1)
	args = call(lua.LString("SET"), lua.LString("k"), lua.LString(big))
	require.Equal(t, big, string(args[2]))
	e.doneWithArgs()
	require.Nil(t, e.argBytes, "a large value is not held after its call")
	require.Nil(t, e.args)

	L.Push(lua.LTrue)
	_, msg := e.argsOf(L)
	require.Equal(t, "Lua redis lib command arguments must be strings or integers", msg)
	L.SetTop(0)
}

// The fields plainArray reads are where ltableLayout found them, and
// they tell a table made by newArray from one a script added to.
func TestLTableLayout(t *testing.T) {
	require.True(t, ltableLayout.ok, "gopher-lua's LTable has changed: KEYS and ARGV are never refilled")
	e := New(Options{})
	defer e.Close()
	arr := e.newArray([][]byte{[]byte("a"), []byte("b")})
	assert.True(t, plainArray(arr, 2))
	assert.False(t, plainArray(arr, 1))
	assert.True(t, plainArray(e.newArray(nil), 0))
	arr.RawSetString("x", lua.LNumber(1))
	arr.RawSetString("x", lua.LNil)
	assert.False(t, plainArray(arr, 2), "a key set and removed stays in the key list")
	padded := e.newArray([][]byte{[]byte("a")})
	padded.RawSetInt(100, lua.LNil)
	assert.False(t, plainArray(padded, 1), "nils padding the array")
}
