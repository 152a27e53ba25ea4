package scripting

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	lua "github.com/yuin/gopher-lua"
)

// The cjson library (Lua CJSON 2.1.0 as Redis ships it,
// deps/lua/src/lua_cjson.c): cjson.encode, cjson.decode, cjson.null and
// the configuration functions. Numbers are written as "%.14g"; an empty
// table is "{}"; a table whose keys are all positive integers is an
// array (holes as null) unless excessively sparse; NaN and Inf, and
// functions, are refused. Object members come in the table's iteration
// order, which is gopher-lua's (insertion order), not C Lua's hash
// order.

// cjsonConfig is the state of cjson's configuration functions.
type cjsonConfig struct {
	sparseConvert        bool
	sparseRatio          int
	sparseSafe           int
	encodeMaxDepth       int
	decodeMaxDepth       int
	precision            int
	encodeInvalidNumbers int // 0 off, 1 on, 2 null
	decodeInvalidNumbers bool
	keepBuffer           bool
}

func defaultCjson() cjsonConfig {
	return cjsonConfig{sparseRatio: 2, sparseSafe: 10, encodeMaxDepth: 1000, decodeMaxDepth: 1000,
		precision: 14, decodeInvalidNumbers: true, keepBuffer: true}
}

func (e *Engine) openCjson(L *lua.LState) int {
	e.cjson = defaultCjson()
	e.cjsonNull = L.NewUserData()
	cfg := &e.cjson
	t := L.SetFuncs(L.NewTable(), map[string]lua.LGFunction{
		"encode": e.cjsonEncode,
		"decode": e.cjsonDecode,
		"encode_sparse_array": func(L *lua.LState) int {
			if L.GetTop() >= 1 && L.Get(1) != lua.LNil {
				cfg.sparseConvert = cjsonBool(L, 1)
			}
			if L.GetTop() >= 2 && L.Get(2) != lua.LNil {
				cfg.sparseRatio = cjsonInt(L, 2, 0, math.MaxInt32)
			}
			if L.GetTop() >= 3 && L.Get(3) != lua.LNil {
				cfg.sparseSafe = cjsonInt(L, 3, 0, math.MaxInt32)
			}
			L.Push(lua.LBool(cfg.sparseConvert))
			L.Push(lua.LNumber(cfg.sparseRatio))
			L.Push(lua.LNumber(cfg.sparseSafe))
			return 3
		},
		"encode_max_depth": func(L *lua.LState) int {
			if L.GetTop() >= 1 && L.Get(1) != lua.LNil {
				cfg.encodeMaxDepth = cjsonInt(L, 1, 1, math.MaxInt32)
			}
			L.Push(lua.LNumber(cfg.encodeMaxDepth))
			return 1
		},
		"decode_max_depth": func(L *lua.LState) int {
			if L.GetTop() >= 1 && L.Get(1) != lua.LNil {
				cfg.decodeMaxDepth = cjsonInt(L, 1, 1, math.MaxInt32)
			}
			L.Push(lua.LNumber(cfg.decodeMaxDepth))
			return 1
		},
		"encode_number_precision": func(L *lua.LState) int {
			if L.GetTop() >= 1 && L.Get(1) != lua.LNil {
				cfg.precision = cjsonInt(L, 1, 1, 14)
			}
			L.Push(lua.LNumber(cfg.precision))
			return 1
		},
		"encode_keep_buffer": func(L *lua.LState) int {
			if L.GetTop() >= 1 && L.Get(1) != lua.LNil {
				cfg.keepBuffer = cjsonBool(L, 1)
			}
			L.Push(lua.LBool(cfg.keepBuffer))
			return 1
		},
		"encode_invalid_numbers": func(L *lua.LState) int {
			if L.GetTop() >= 1 && L.Get(1) != lua.LNil {
				if s, ok := L.Get(1).(lua.LString); ok && s == "null" {
					cfg.encodeInvalidNumbers = 2
				} else if cjsonBool(L, 1) {
					cfg.encodeInvalidNumbers = 1
				} else {
					cfg.encodeInvalidNumbers = 0
				}
			}
			if cfg.encodeInvalidNumbers == 2 {
				L.Push(lua.LString("null"))
			} else {
				L.Push(lua.LBool(cfg.encodeInvalidNumbers == 1))
			}
			return 1
		},
		"decode_invalid_numbers": func(L *lua.LState) int {
			if L.GetTop() >= 1 && L.Get(1) != lua.LNil {
				cfg.decodeInvalidNumbers = cjsonBool(L, 1)
			}
			L.Push(lua.LBool(cfg.decodeInvalidNumbers))
			return 1
		},
	})
	t.RawSetString("null", e.cjsonNull)
	t.RawSetString("_NAME", lua.LString("cjson"))
	t.RawSetString("_VERSION", lua.LString("2.1.0"))
	L.SetGlobal("cjson", t)
	L.Push(t)
	return 1
}

// cjsonBool reads a configuration boolean: a boolean, or "on"/"off".
func cjsonBool(L *lua.LState, i int) bool {
	switch v := L.Get(i).(type) {
	case lua.LBool:
		return bool(v)
	case lua.LString:
		switch v {
		case "on":
			return true
		case "off":
			return false
		}
	}
	L.ArgError(i, "invalid option")
	return false
}

func cjsonInt(L *lua.LState, i, lo, hi int) int {
	n := L.CheckInt(i)
	if n < lo || n > hi {
		L.ArgError(i, "expected integer between "+strconv.Itoa(lo)+" and "+strconv.Itoa(hi))
	}
	return n
}

func (e *Engine) cjsonEncode(L *lua.LState) int {
	if L.GetTop() != 1 {
		L.ArgError(1, "expected 1 argument")
	}
	var b strings.Builder
	e.jsonAppend(L, &b, L.Get(1), 0)
	L.Push(lua.LString(b.String()))
	return 1
}

func (e *Engine) jsonAppend(L *lua.LState, b *strings.Builder, v lua.LValue, depth int) {
	switch v := v.(type) {
	case lua.LString:
		jsonAppendString(b, string(v))
	case lua.LNumber:
		e.jsonAppendNumber(L, b, float64(v))
	case lua.LBool:
		if v {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case *lua.LTable:
		depth++
		if depth > e.cjson.encodeMaxDepth {
			L.RaiseError("Cannot serialise, excessive nesting (%d)", depth)
		}
		v = e.realTable(v)
		if n := e.jsonArrayLen(L, v); n > 0 {
			b.WriteByte('[')
			for i := 1; i <= n; i++ {
				if i > 1 {
					b.WriteByte(',')
				}
				e.jsonAppend(L, b, v.RawGetInt(i), depth)
			}
			b.WriteByte(']')
			return
		}
		b.WriteByte('{')
		first := true
		k, val := v.Next(lua.LNil)
		for k != lua.LNil {
			if !first {
				b.WriteByte(',')
			}
			first = false
			switch kk := k.(type) {
			case lua.LNumber:
				b.WriteByte('"')
				e.jsonAppendNumber(L, b, float64(kk))
				b.WriteString("\":")
			case lua.LString:
				jsonAppendString(b, string(kk))
				b.WriteByte(':')
			default:
				L.RaiseError("Cannot serialise %s: table key must be a number or string", k.Type().String())
			}
			e.jsonAppend(L, b, val, depth)
			k, val = v.Next(k)
		}
		b.WriteByte('}')
	case *lua.LNilType:
		b.WriteString("null")
	case *lua.LUserData:
		if v == e.cjsonNull {
			b.WriteString("null")
			return
		}
		L.RaiseError("Cannot serialise userdata: type not supported")
	default:
		L.RaiseError("Cannot serialise %s: type not supported", v.Type().String())
	}
}

// jsonArrayLen is lua_array_length: the largest index when every key is
// a positive integer, -1 for an object.
func (e *Engine) jsonArrayLen(L *lua.LState, t *lua.LTable) int {
	max, items := 0, 0
	isArray := true
	eachPair(t, func(k, _ lua.LValue) {
		if !isArray {
			return
		}
		if n, ok := k.(lua.LNumber); ok && n != 0 {
			f := float64(n)
			if math.Floor(f) == f && f >= 1 {
				if f > float64(max) {
					max = int(f)
				}
				items++
				return
			}
		}
		isArray = false
	})
	if !isArray {
		return -1
	}
	cfg := &e.cjson
	if cfg.sparseRatio > 0 && max > items*cfg.sparseRatio && max > cfg.sparseSafe {
		if !cfg.sparseConvert {
			L.RaiseError("Cannot serialise table: excessively sparse array")
		}
		return -1
	}
	return max
}

func (e *Engine) jsonAppendNumber(L *lua.LState, b *strings.Builder, f float64) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		switch e.cjson.encodeInvalidNumbers {
		case 0:
			L.RaiseError("Cannot serialise number: must not be NaN or Inf")
		case 2:
			b.WriteString("null")
			return
		}
		if math.IsNaN(f) {
			b.WriteString("nan")
			return
		}
	}
	p := e.cjson.precision
	if f == math.Trunc(f) && math.Abs(f) < math.Pow10(p) {
		b.WriteString(strconv.FormatInt(int64(f), 10))
		return
	}
	if math.IsInf(f, 1) {
		b.WriteString("inf")
		return
	}
	if math.IsInf(f, -1) {
		b.WriteString("-inf")
		return
	}
	b.WriteString(formatG(f, p))
}

func jsonAppendString(b *strings.Builder, s string) {
	const hex = "0123456789abcdef"
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			b.WriteString("\\\"")
		case c == '\\':
			b.WriteString("\\\\")
		case c == '/':
			b.WriteString("\\/")
		case c == '\b':
			b.WriteString("\\b")
		case c == '\t':
			b.WriteString("\\t")
		case c == '\n':
			b.WriteString("\\n")
		case c == '\f':
			b.WriteString("\\f")
		case c == '\r':
			b.WriteString("\\r")
		case c < 0x20 || c == 0x7f:
			b.WriteString("\\u00")
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
}

// ---- decoding -------------------------------------------------------------

type jsonTok int

const (
	tObjBegin jsonTok = iota
	tObjEnd
	tArrBegin
	tArrEnd
	tString
	tNumber
	tBoolean
	tNull
	tColon
	tComma
	tEnd
	tWhitespace
	tError
	tUnknown
)

var jsonTokNames = []string{"T_OBJ_BEGIN", "T_OBJ_END", "T_ARR_BEGIN", "T_ARR_END", "T_STRING",
	"T_NUMBER", "T_BOOLEAN", "T_NULL", "T_COLON", "T_COMMA", "T_END", "T_WHITESPACE", "T_ERROR", "T_UNKNOWN"}

type jsonToken struct {
	typ   jsonTok
	index int
	str   string
	num   float64
	b     bool
	err   string
}

type jsonParser struct {
	e     *Engine
	L     *lua.LState
	data  string
	pos   int
	depth int
}

func (e *Engine) cjsonDecode(L *lua.LState) int {
	if L.GetTop() != 1 {
		L.ArgError(1, "expected 1 argument")
	}
	s := L.CheckString(1)
	if len(s) >= 2 && (s[0] == 0 || s[1] == 0) {
		L.RaiseError("JSON parser does not support UTF-16 or UTF-32")
	}
	p := &jsonParser{e: e, L: L, data: s}
	var tok jsonToken
	p.next(&tok)
	v := p.value(&tok)
	p.next(&tok)
	if tok.typ != tEnd {
		p.fail("the end", &tok)
	}
	L.Push(v)
	return 1
}

func (p *jsonParser) fail(exp string, tok *jsonToken) {
	found := jsonTokNames[tok.typ]
	if tok.typ == tError {
		found = tok.err
	}
	p.L.RaiseError("Expected %s but found %s at character %d", exp, found, tok.index+1)
}

func (p *jsonParser) at(i int) byte {
	if i < len(p.data) {
		return p.data[i]
	}
	return 0
}

func (p *jsonParser) next(tok *jsonToken) {
	for {
		c := p.at(p.pos)
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			p.pos++
			continue
		}
		break
	}
	*tok = jsonToken{index: p.pos}
	c := p.at(p.pos)
	single := map[byte]jsonTok{'{': tObjBegin, '}': tObjEnd, '[': tArrBegin, ']': tArrEnd, ':': tColon, ',': tComma}
	if t, ok := single[c]; ok {
		tok.typ = t
		p.pos++
		return
	}
	rest := p.data[min(p.pos, len(p.data)):]
	switch {
	case c == 0:
		tok.typ = tEnd
	case c == '"':
		p.stringToken(tok)
	case c == '-' || '0' <= c && c <= '9':
		if !p.e.cjson.decodeInvalidNumbers && p.invalidNumber() {
			tok.typ, tok.err = tError, "invalid number"
			return
		}
		p.numberToken(tok)
	case strings.HasPrefix(rest, "true"):
		tok.typ, tok.b = tBoolean, true
		p.pos += 4
	case strings.HasPrefix(rest, "false"):
		tok.typ, tok.b = tBoolean, false
		p.pos += 5
	case strings.HasPrefix(rest, "null"):
		tok.typ = tNull
		p.pos += 4
	case p.e.cjson.decodeInvalidNumbers && p.invalidNumber():
		p.numberToken(tok)
	default:
		tok.typ, tok.err = tError, "invalid token"
	}
}

func (p *jsonParser) invalidNumber() bool {
	i := p.pos
	if p.at(i) == '+' {
		return true
	}
	if p.at(i) == '-' {
		i++
	}
	if p.at(i) == '0' {
		c2 := p.at(i + 1)
		return c2|0x20 == 'x' || '0' <= c2 && c2 <= '9'
	}
	if p.at(i) <= '9' {
		return false
	}
	r := strings.ToLower(p.data[i:min(i+3, len(p.data))])
	return r == "inf" || r == "nan"
}

// numberToken reads the longest prefix strtod accepts.
func (p *jsonParser) numberToken(tok *jsonToken) {
	s := p.data[p.pos:]
	n := strtodPrefix(s)
	if n == 0 {
		tok.typ, tok.err = tError, "invalid number"
		return
	}
	tok.typ = tNumber
	tok.num = parseStrtod(s[:n])
	p.pos += n
}

// strtodPrefix is the length of the longest prefix of s that C's strtod
// converts.
func strtodPrefix(s string) int {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	low := strings.ToLower(s[i:min(i+8, len(s))])
	if strings.HasPrefix(low, "infinity") {
		return i + 8
	}
	if strings.HasPrefix(low, "inf") || strings.HasPrefix(low, "nan") {
		return i + 3
	}
	if strings.HasPrefix(low, "0x") {
		j := i + 2
		for j < len(s) && strings.IndexByte("0123456789abcdefABCDEF", s[j]) >= 0 {
			j++
		}
		if j > i+2 {
			return j
		}
		return i + 1
	}
	digits := 0
	j := i
	for j < len(s) && isDigit(s[j]) {
		j++
		digits++
	}
	if j < len(s) && s[j] == '.' {
		j++
		for j < len(s) && isDigit(s[j]) {
			j++
			digits++
		}
	}
	if digits == 0 {
		return 0
	}
	if j < len(s) && (s[j] == 'e' || s[j] == 'E') {
		k := j + 1
		if k < len(s) && (s[k] == '+' || s[k] == '-') {
			k++
		}
		if k < len(s) && isDigit(s[k]) {
			for k < len(s) && isDigit(s[k]) {
				k++
			}
			j = k
		}
	}
	return j
}

func parseStrtod(s string) float64 {
	neg := strings.HasPrefix(s, "-")
	body := strings.TrimLeft(s, "+-")
	low := strings.ToLower(body)
	var f float64
	switch {
	case strings.HasPrefix(low, "inf"):
		f = math.Inf(1)
	case strings.HasPrefix(low, "nan"):
		f = math.NaN()
	case strings.HasPrefix(low, "0x"):
		u, _ := strconv.ParseUint(body[2:], 16, 64)
		f = float64(u)
	default:
		f, _ = strconv.ParseFloat(body, 64)
	}
	if neg {
		f = -f
	}
	return f
}

func (p *jsonParser) stringToken(tok *jsonToken) {
	var b strings.Builder
	p.pos++ // the quote
	for {
		c := p.at(p.pos)
		if p.pos >= len(p.data) || c == 0 {
			tok.typ, tok.err, tok.index = tError, "unexpected end of string", p.pos
			return
		}
		if c == '"' {
			p.pos++
			break
		}
		if c != '\\' {
			b.WriteByte(c)
			p.pos++
			continue
		}
		esc := p.at(p.pos + 1)
		switch esc {
		case '"', '\\', '/':
			b.WriteByte(esc)
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			n := p.unicodeEscape(&b)
			if n < 0 {
				tok.typ, tok.err, tok.index = tError, "invalid unicode escape code", p.pos
				return
			}
			p.pos += n
			continue
		default:
			tok.typ, tok.err, tok.index = tError, "invalid escape code", p.pos
			return
		}
		p.pos += 2
	}
	tok.typ = tString
	tok.str = b.String()
}

func hex4(s string) (rune, bool) {
	if len(s) < 4 {
		return 0, false
	}
	v, err := strconv.ParseUint(s[:4], 16, 32)
	return rune(v), err == nil
}

// unicodeEscape decodes \uXXXX (and a surrogate pair) at p.pos into b
// as UTF-8, returning the bytes consumed, -1 when invalid.
func (p *jsonParser) unicodeEscape(b *strings.Builder) int {
	s := p.data[p.pos:]
	r, ok := hex4(s[2:])
	if !ok {
		return -1
	}
	n := 6
	if r >= 0xdc00 && r <= 0xdfff {
		return -1
	}
	if r >= 0xd800 && r <= 0xdbff {
		if len(s) < 12 || s[6] != '\\' || s[7] != 'u' {
			return -1
		}
		lo, ok := hex4(s[8:])
		if !ok || lo < 0xdc00 || lo > 0xdfff {
			return -1
		}
		r = (r&0x3ff)<<10 | lo&0x3ff + 0x10000
		n = 12
	}
	var buf [4]byte
	b.Write(buf[:utf8.EncodeRune(buf[:], r)])
	return n
}

func (p *jsonParser) descend() {
	p.depth++
	if p.depth > p.e.cjson.decodeMaxDepth {
		p.L.RaiseError("Found too many nested data structures (%d) at character %d", p.depth, p.pos)
	}
}

func (p *jsonParser) value(tok *jsonToken) lua.LValue {
	switch tok.typ {
	case tString:
		return lua.LString(tok.str)
	case tNumber:
		return lua.LNumber(tok.num)
	case tBoolean:
		return lua.LBool(tok.b)
	case tObjBegin:
		return p.object()
	case tArrBegin:
		return p.array()
	case tNull:
		return p.e.cjsonNull
	}
	p.fail("value", tok)
	return lua.LNil
}

func (p *jsonParser) object() lua.LValue {
	p.descend()
	t := p.L.NewTable()
	var tok jsonToken
	p.next(&tok)
	if tok.typ == tObjEnd {
		p.depth--
		return t
	}
	for {
		if tok.typ != tString {
			p.fail("object key string", &tok)
		}
		key := tok.str
		p.next(&tok)
		if tok.typ != tColon {
			p.fail("colon", &tok)
		}
		p.next(&tok)
		t.RawSetString(key, p.value(&tok))
		p.next(&tok)
		if tok.typ == tObjEnd {
			p.depth--
			return t
		}
		if tok.typ != tComma {
			p.fail("comma or object end", &tok)
		}
		p.next(&tok)
	}
}

func (p *jsonParser) array() lua.LValue {
	p.descend()
	t := p.L.NewTable()
	var tok jsonToken
	p.next(&tok)
	if tok.typ == tArrEnd {
		p.depth--
		return t
	}
	for i := 1; ; i++ {
		t.RawSetInt(i, p.value(&tok))
		p.next(&tok)
		if tok.typ == tArrEnd {
			p.depth--
			return t
		}
		if tok.typ != tComma {
			p.fail("comma or array end", &tok)
		}
		p.next(&tok)
	}
}
