package scripting

import (
	"errors"
	"math"
	"math/bits"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"

	"github.com/zredis/zredis/engine"
)

// Conversions between RESP and Lua, as Redis 7.0's script_lua.c
// (redisProtocolToLuaType, luaReplyToRedisReply).

// respToLua converts one reply at the start of b into a Lua value and
// returns it with the bytes it took: integer -> number, bulk -> string,
// null bulk and null array -> false, array -> table, status ->
// {ok=...}, error -> {err=...} (the error was counted by the command
// that answered it: ignore_error_stats_update). The RESP3 types, which
// come after redis.setresp(3): null -> nil, boolean -> boolean, double
// -> {double=n}, big number -> {big_number=s}, verbatim string ->
// {verbatim_string={format=f, string=s}}, map -> {map={k=v...}}, set ->
// {set={member=true...}}; an attribute is skipped, its reply kept.
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
	case '_':
		return lua.LNil, n
	case '#':
		return lua.LBool(len(line) > 0 && line[0] == 't'), n
	case ',':
		f, _ := str2d(string(line))
		return singleField(L, "double", lua.LNumber(f)), n
	case '(':
		return singleField(L, "big_number", lua.LString(line)), n
	case '=':
		l, _ := strconv.Atoi(string(line))
		body := b[n : n+l]
		v := L.CreateTable(0, 2)
		if len(body) >= 4 {
			v.RawSetString("string", lua.LString(body[4:]))
			v.RawSetString("format", lua.LString(body[:3]))
		}
		return singleField(L, "verbatim_string", v), n + l + 2
	case '%', '~':
		cnt, _ := strconv.Atoi(string(line))
		m := L.CreateTable(0, cnt)
		for i := 0; i < cnt; i++ {
			k, used := respToLua(L, b[n:])
			n += used
			val := lua.LValue(lua.LTrue)
			if b[0] == '%' {
				val, used = respToLua(L, b[n:])
				n += used
			}
			// A nil key (a RESP3 null member) cannot index a table.
			if k != lua.LNil {
				m.RawSet(k, val)
			}
		}
		if b[0] == '%' {
			return singleField(L, "map", m), n
		}
		return singleField(L, "set", m), n
	case '|':
		cnt, _ := strconv.Atoi(string(line))
		for i := 0; i < 2*cnt; i++ {
			n += skipReply(b[n:])
		}
		v, used := respToLua(L, b[n:])
		return v, n + used
	}
	return lua.LNil, len(b)
}

// singleField is the table {name=v}.
func singleField(L *lua.LState, name string, v lua.LValue) *lua.LTable {
	t := L.CreateTable(0, 1)
	t.RawSetString(name, v)
	return t
}

// skipReply is the length of the reply at the start of b, which the
// server wrote itself and is therefore well formed.
func skipReply(b []byte) int {
	end := strings.Index(string(b), "\r\n")
	if end < 0 {
		return len(b)
	}
	line := b[1:end]
	n := end + 2
	cnt, _ := strconv.Atoi(string(line))
	switch b[0] {
	case '$', '=', '!':
		if cnt < 0 {
			return n
		}
		return n + cnt + 2
	case '*', '~', '>':
	case '%', '|':
		cnt *= 2
	default:
		return n
	}
	for i := 0; i < cnt; i++ {
		n += skipReply(b[n:])
	}
	return n
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
		// A script in RESP3 (redis.setresp(3)) returns booleans; in
		// RESP2, true is 1 and false the caller's null.
		switch {
		case e.run.Resp() == 3:
			w.Bool(bool(v))
		case bool(v):
			w.Int(1)
		default:
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
			w.BigNumber(strings.NewReplacer("\r", " ", "\n", " ").Replace(string(m.(lua.LString))))
			return
		}
		if m, ok := v.RawGetString("verbatim_string").(*lua.LTable); ok {
			f, s := m.RawGetString("format"), m.RawGetString("string")
			if f.Type() == lua.LTString && s.Type() == lua.LTString {
				w.VerbatimFormat(cString(string(f.(lua.LString))), string(s.(lua.LString)))
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
	// The integer shortcut would print -0 as "0": formatG keeps its sign.
	if f == math.Trunc(f) && math.Abs(f) < 1e14 && f != 0 {
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

// errNotNumber is parseLuaNumber's answer for a string that holds no
// number.
var errNotNumber = errors.New("not a number")

// parseLuaNumber converts a string as Lua's luaO_str2d (lua_isnumber,
// lua_tonumber, tonumber): see str2d.
func parseLuaNumber(s string) (lua.LNumber, error) {
	f, ok := str2d(s)
	if !ok {
		return 0, errNotNumber
	}
	return lua.LNumber(f), nil
}

// cSpace is C's isspace in the C locale, which Lua's conversions use.
func cSpace(c byte) bool {
	return c == ' ' || (c >= '\t' && c <= '\r')
}

// str2d is Lua 5.1's luaO_str2d over glibc's strtod, which Redis's Lua
// uses (lua_str2number): blanks around, a sign, then decimal digits
// with an optional point and exponent ("1e3", "5.", ".5"), a
// hexadecimal number ("0x1f", "-0x10", "0x1.8p4"), "inf", "infinity" or
// "nan" (any case); a number too large for a double is an infinity.
// gopher-lua's tonumber, which reads a string without a point as a
// 64-bit integer only, answers nil for "1e3" and for a long integer such
// as the digits of 1.7976931348623157e308 (how ioredis sends JavaScript's
// Number.MAX_VALUE: BullMQ's promoteJobs), where Lua answers a number.
// The string ends at its first NUL byte, as for Lua's C functions.
func str2d(s string) (float64, bool) {
	if i := strings.IndexByte(s, 0); i >= 0 {
		s = s[:i]
	}
	i := 0
	for i < len(s) && cSpace(s[i]) {
		i++
	}
	start := i
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	neg := i > start && s[start] == '-'
	var f float64
	switch rest := s[i:]; {
	case hasPrefixFold(rest, "infinity"):
		f, i = math.Inf(1), i+len("infinity")
	case hasPrefixFold(rest, "inf"):
		f, i = math.Inf(1), i+len("inf")
	case hasPrefixFold(rest, "nan"):
		f, i = math.NaN(), i+len("nan")
		// strtod takes "nan(chars)" whole, and "nan" alone otherwise.
		if j := i; j < len(s) && s[j] == '(' {
			j++
			for j < len(s) && (isAlnum(s[j]) || s[j] == '_') {
				j++
			}
			if j < len(s) && s[j] == ')' {
				i = j + 1
			}
		}
	case hasPrefixFold(rest, "0x") && hexMantissa(s[i+2:]) > 0:
		m := hexMantissa(s[i+2:])
		lit := "0x" + s[i+2:i+2+m]
		i += 2 + m
		e := exponent(s[i:], 'p')
		if e > 0 {
			lit += s[i : i+e]
		} else {
			lit += "p0" // Go's hexadecimal literals need an exponent
		}
		i += e
		f, _ = strconv.ParseFloat(lit, 64)
	default:
		m := decMantissa(s[i:])
		if m == 0 {
			return 0, false // strtod converts nothing
		}
		m += exponent(s[i+m:], 'e')
		// Out of range, ParseFloat answers an infinity (or zero) with
		// ErrRange, as strtod answers HUGE_VAL with ERANGE, which Lua
		// does not look at.
		f, _ = strconv.ParseFloat(s[i:i+m], 64)
		i += m
	}
	if neg {
		f = -f
	}
	// luaO_str2d: what follows may only be blanks. (Its retry with
	// strtoul when strtod stops at an 'x' cannot succeed with glibc,
	// whose strtod reads hexadecimal itself.)
	for i < len(s) && cSpace(s[i]) {
		i++
	}
	return f, i == len(s)
}

// hasPrefixFold is strings.HasPrefix ignoring ASCII case.
func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// decMantissa is the length of the decimal digits, with at most one
// point, at the start of s; 0 when they hold no digit.
func decMantissa(s string) int {
	return mantissa(s, func(c byte) bool { return c >= '0' && c <= '9' })
}

// hexMantissa is decMantissa for hexadecimal digits.
func hexMantissa(s string) int {
	return mantissa(s, func(c byte) bool {
		return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
	})
}

func mantissa(s string, digit func(byte) bool) int {
	i, digits, point := 0, 0, false
	for i < len(s) {
		switch {
		case digit(s[i]):
			digits++
		case s[i] == '.' && !point:
			point = true
		default:
			if digits == 0 {
				return 0
			}
			return i
		}
		i++
	}
	if digits == 0 {
		return 0
	}
	return i
}

// exponent is the length of the exponent (mark, in either case, an
// optional sign and digits) at the start of s; 0 when there is none, as
// strtod leaves an "e" without digits unread.
func exponent(s string, mark byte) int {
	if len(s) == 0 || (s[0]|0x20) != mark {
		return 0
	}
	i := 1
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	j := i
	for j < len(s) && s[j] >= '0' && s[j] <= '9' {
		j++
	}
	if j == i {
		return 0
	}
	return j
}

// strtoul is C's strtoul as glibc has it, for tonumber with a base:
// blanks, a sign, for base 16 an optional 0x, then digits of the base; a
// value past 64 bits is ULONG_MAX, and "-n" is 2^64-n. ok is false when
// no digit was read, n the length read.
func strtoul(s string, base int) (v uint64, n int, ok bool) {
	i := 0
	for i < len(s) && cSpace(s[i]) {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	if base == 16 && i+2 < len(s) && s[i] == '0' && (s[i+1]|0x20) == 'x' && digitValue(s[i+2]) < 16 {
		i += 2
	}
	overflow := false
	start := i
	for ; i < len(s); i++ {
		d := digitValue(s[i])
		if d >= base {
			break
		}
		hi, lo := bits.Mul64(v, uint64(base))
		lo, carry := bits.Add64(lo, uint64(d), 0)
		if hi != 0 || carry != 0 {
			overflow = true
		}
		v = lo
	}
	if i == start {
		return 0, 0, false
	}
	switch {
	case overflow:
		v = math.MaxUint64
	case neg:
		v = -v
	}
	return v, i, true
}

// digitValue is the value of c as a digit of a base up to 36 (36 when
// it is none).
func digitValue(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'z':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'Z':
		return int(c-'A') + 10
	}
	return 36
}

// luaTonumber is Lua 5.1's tonumber (luaB_tonumber), which gopher-lua's
// does not follow: base 10 converts a string as luaO_str2d (str2d);
// another base (2 to 36, also given as a numeric string, truncated)
// reads the first argument, a string or a number, with strtoul.
func luaTonumber(L *lua.LState) int {
	base := 10
	switch b := L.Get(2).(type) {
	case *lua.LNilType:
	case lua.LNumber:
		base = clampBase(float64(b))
	case lua.LString:
		f, ok := str2d(string(b))
		if !ok {
			L.TypeError(2, lua.LTNumber)
		}
		base = clampBase(f)
	default:
		L.TypeError(2, lua.LTNumber)
	}
	if base == 10 {
		switch v := L.CheckAny(1).(type) {
		case lua.LNumber:
			L.Push(v)
		case lua.LString:
			if f, ok := str2d(string(v)); ok {
				L.Push(lua.LNumber(f))
			} else {
				L.Push(lua.LNil)
			}
		default:
			L.Push(lua.LNil)
		}
		return 1
	}
	var s string
	switch v := L.Get(1).(type) {
	case lua.LString:
		s = string(v)
	case lua.LNumber:
		s = fmtNumber(float64(v)) // lua_tolstring: "%.14g"
	default:
		L.TypeError(1, lua.LTString)
	}
	if base < 2 || base > 36 {
		L.ArgError(2, "base out of range")
	}
	if i := strings.IndexByte(s, 0); i >= 0 {
		s = s[:i]
	}
	v, n, ok := strtoul(s, base)
	if ok {
		for n < len(s) && cSpace(s[n]) {
			n++
		}
	}
	if !ok || n != len(s) {
		L.Push(lua.LNil)
		return 1
	}
	L.Push(lua.LNumber(float64(v)))
	return 1
}

// clampBase is luaL_optint's truncation of a base; any value outside
// 2..36 becomes 0, which is out of range too.
func clampBase(f float64) int {
	f = math.Trunc(f)
	if !(f >= 2 && f <= 36) {
		return 0
	}
	return int(f)
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
