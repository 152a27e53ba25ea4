package scripting

import (
	"math"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"

	"github.com/zredis/zredis/engine"
)

// Conversions between RESP and Lua, as Redis 7.0's script_lua.c
// (redisProtocolToLuaType, luaReplyToRedisReply), RESP2.

// respToLua converts one RESP2 reply at the start of b into a Lua value
// and returns it with the bytes it took: integer -> number, bulk ->
// string, null bulk and null array -> false, array -> table, status ->
// {ok=...}, error -> {err=...} (the error was counted by the command
// that answered it: ignore_error_stats_update).
func respToLua(L *lua.LState, b []byte) (lua.LValue, int) {
	if len(b) == 0 {
		return lua.LNil, 0
	}
	end := strings.Index(string(b), "\r\n")
	if end < 0 {
		return lua.LNil, len(b)
	}
	line := b[1:end]
	n := end + 2
	switch b[0] {
	case ':':
		v, _ := strconv.ParseInt(string(line), 10, 64)
		return lua.LNumber(v), n
	case '$':
		l, _ := strconv.Atoi(string(line))
		if l < 0 {
			return lua.LFalse, n
		}
		return lua.LString(b[n : n+l]), n + l + 2
	case '+':
		t := L.CreateTable(0, 1)
		t.RawSetString("ok", lua.LString(line))
		return t, n
	case '-':
		t := newErrorTable(L, "-"+string(line))
		t.RawSetString("ignore_error_stats_update", lua.LTrue)
		return t, n
	case '*':
		cnt, _ := strconv.Atoi(string(line))
		if cnt < 0 {
			return lua.LFalse, n
		}
		t := L.CreateTable(cnt, 0)
		for i := 1; i <= cnt; i++ {
			v, used := respToLua(L, b[n:])
			n += used
			t.RawSetInt(i, v)
		}
		return t, n
	}
	return lua.LNil, len(b)
}

// reply writes a script's result to the caller as Redis converts it
// (luaReplyToRedisReply): string -> bulk, number -> integer (truncated),
// true -> 1, false and nil -> null, a table with err -> error, with ok ->
// status, with double / big_number / verbatim_string / map / set -> those
// (RESP2 forms), any other table -> array up to its first nil.
func (e *Engine) reply(c *engine.Ctx, v lua.LValue, depth int) {
	w := c.W
	if depth > replyMaxDepth {
		c.Error("ERR reached lua stack limit")
		return
	}
	switch v := v.(type) {
	case lua.LString:
		w.Bulk([]byte(v))
	case lua.LBool:
		if v {
			w.Int(1)
		} else {
			w.Null()
		}
	case lua.LNumber:
		w.Int(toInt64(float64(v)))
	case *lua.LTable:
		if t := e.realTable(v); t != v {
			v = t
		}
		if m := v.RawGetString("err"); m.Type() == lua.LTString {
			msg := cString(string(m.(lua.LString)))
			if lua.LVAsBool(v.RawGetString("ignore_error_stats_update")) {
				c.ErrorNoStats(msg)
			} else {
				c.Error(msg)
			}
			return
		}
		if m := v.RawGetString("ok"); m.Type() == lua.LTString {
			w.Simple(strings.NewReplacer("\r", " ", "\n", " ").Replace(cString(string(m.(lua.LString)))))
			return
		}
		if m := v.RawGetString("double"); m.Type() == lua.LTNumber {
			w.Double(float64(m.(lua.LNumber)))
			return
		}
		if m := v.RawGetString("big_number"); m.Type() == lua.LTString {
			w.Bulk([]byte(strings.NewReplacer("\r", " ", "\n", " ").Replace(string(m.(lua.LString)))))
			return
		}
		if m, ok := v.RawGetString("verbatim_string").(*lua.LTable); ok {
			f, s := m.RawGetString("format"), m.RawGetString("string")
			if f.Type() == lua.LTString && s.Type() == lua.LTString {
				w.Bulk([]byte(s.(lua.LString)))
				return
			}
		}
		if m, ok := v.RawGetString("map").(*lua.LTable); ok {
			n := 0
			eachPair(m, func(_, _ lua.LValue) { n++ })
			w.Map(n)
			eachPair(m, func(k, val lua.LValue) {
				e.reply(c, k, depth+1)
				e.reply(c, val, depth+1)
			})
			return
		}
		if m, ok := v.RawGetString("set").(*lua.LTable); ok {
			n := 0
			eachPair(m, func(_, _ lua.LValue) { n++ })
			w.Set(n)
			eachPair(m, func(k, _ lua.LValue) { e.reply(c, k, depth+1) })
			return
		}
		mark := w.DeferArray()
		n := 0
		for {
			el := v.RawGetInt(n + 1)
			if el == lua.LNil {
				break
			}
			e.reply(c, el, depth+1)
			n++
		}
		w.FillArray(mark, n)
	default:
		w.Null()
	}
}

// cString is s as C reads it (sdsnew of lua_tostring): up to its first
// NUL byte.
func cString(s string) string {
	if i := strings.IndexByte(s, 0); i >= 0 {
		return s[:i]
	}
	return s
}

// realTable is the table a read-only view shows, or t.
func (e *Engine) realTable(t *lua.LTable) *lua.LTable {
	if r, ok := e.readonly[t]; ok {
		return r
	}
	return t
}

// toInt64 is C's (long long) conversion of a double as x86-64 makes it:
// truncation, and the "integer indefinite" value for what does not fit.
func toInt64(f float64) int64 {
	if math.IsNaN(f) || f >= 9223372036854775808.0 || f < -9223372036854775808.0 {
		return math.MinInt64
	}
	return int64(f)
}

// fmtNumber formats a Lua number as Lua 5.1's tostring does ("%.14g").
func fmtNumber(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		if math.Signbit(f) {
			return "-nan"
		}
		return "nan"
	}
	if f == math.Trunc(f) && math.Abs(f) < 1e14 {
		return strconv.FormatInt(int64(f), 10)
	}
	return formatG(f, 14)
}

// formatG is C's %.<prec>g.
func formatG(f float64, prec int) string {
	if f == 0 {
		if math.Signbit(f) {
			return "-0"
		}
		return "0"
	}
	exp := 0
	s := strconv.FormatFloat(f, 'e', prec-1, 64)
	if i := strings.IndexByte(s, 'e'); i >= 0 {
		exp, _ = strconv.Atoi(s[i+1:])
	}
	if exp < -4 || exp >= prec {
		mant, ex, _ := strings.Cut(s, "e")
		if strings.Contains(mant, ".") {
			mant = strings.TrimRight(strings.TrimRight(mant, "0"), ".")
		}
		sign := ex[0]
		digits := strings.TrimLeft(ex[1:], "0")
		for len(digits) < 2 {
			digits = "0" + digits
		}
		return mant + "e" + string(sign) + digits
	}
	out := strconv.FormatFloat(f, 'f', prec-1-exp, 64)
	if strings.Contains(out, ".") {
		out = strings.TrimRight(strings.TrimRight(out, "0"), ".")
	}
	return out
}

// luaToString is lua_tostring for strings and numbers; other values are
// shown as gopher-lua names them.
func luaToString(v lua.LValue) string {
	switch v := v.(type) {
	case lua.LString:
		return string(v)
	case lua.LNumber:
		return fmtNumber(float64(v))
	case nil:
		return "nil"
	}
	return v.String()
}

// isStringish is lua_isstring: a string or a number.
func isStringish(v lua.LValue) bool {
	t := v.Type()
	return t == lua.LTString || t == lua.LTNumber
}

// luaToNumber is lua_tonumber: a number, a string holding one, else 0.
func luaToNumber(v lua.LValue) float64 {
	switch v := v.(type) {
	case lua.LNumber:
		return float64(v)
	case lua.LString:
		if n, err := parseLuaNumber(string(v)); err == nil {
			return float64(n)
		}
	}
	return 0
}

// parseLuaNumber converts a string as Lua's lua_str2number (decimal or
// hexadecimal, surrounding blanks allowed).
func parseLuaNumber(s string) (lua.LNumber, error) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X") {
		u, err := strconv.ParseUint(s[2:], 16, 64)
		return lua.LNumber(u), err
	}
	f, err := strconv.ParseFloat(s, 64)
	return lua.LNumber(f), err
}

func floor(f float64) float64 { return math.Floor(f) }

// eachPair calls fn for every key and value of t in the order Next gives
// them (the array part, then the other keys in the order they were set),
// not in ForEach's, which follows Go's map order and changes from run to
// run: a script's map or set reply and its cmsgpack.pack output are the
// same every time.
func eachPair(t *lua.LTable, fn func(k, v lua.LValue)) {
	for k, v := t.Next(lua.LNil); k != lua.LNil; k, v = t.Next(k) {
		fn(k, v)
	}
}
