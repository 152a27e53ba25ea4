package scripting

import (
	"encoding/binary"
	"math"

	lua "github.com/yuin/gopher-lua"
)

// The cmsgpack library (lua-cmsgpack 0.4.0, deps/lua/src/lua_cmsgpack.c):
// MessagePack encoding of Lua values. Numbers that hold an int64 are
// packed as the smallest integer, others as float 32 when exact, else
// float 64; a table whose keys are exactly 1..n is an array, any other
// a map; tables nested deeper than 16 levels are packed as nil.

const cmsgpackMaxNesting = 16

func (e *Engine) openCmsgpack(L *lua.LState) int {
	t := L.SetFuncs(L.NewTable(), map[string]lua.LGFunction{
		"pack":       mpPack,
		"unpack":     func(L *lua.LState) int { return mpUnpackFull(L, 0, 0) },
		"unpack_one": func(L *lua.LState) int { off := L.OptInt64(2, 0); L.SetTop(1); return mpUnpackFull(L, 1, off) },
		"unpack_limit": func(L *lua.LState) int {
			lim := L.CheckInt64(2)
			off := L.OptInt64(3, 0)
			L.SetTop(1)
			return mpUnpackFull(L, lim, off)
		},
	})
	t.RawSetString("_NAME", lua.LString("cmsgpack"))
	t.RawSetString("_VERSION", lua.LString("lua-cmsgpack 0.4.0"))
	t.RawSetString("_COPYRIGHT", lua.LString("Copyright (C) 2012, Salvatore Sanfilippo"))
	t.RawSetString("_DESCRIPTION", lua.LString("MessagePack C implementation for Lua"))
	L.SetGlobal("cmsgpack", t)
	L.Push(t)
	return 1
}

func mpPack(L *lua.LState) int {
	n := L.GetTop()
	if n == 0 {
		L.ArgError(0, "MessagePack pack needs input.")
	}
	var b []byte
	for i := 1; i <= n; i++ {
		b = mpEncode(b, L.Get(i), 0)
	}
	L.Push(lua.LString(b))
	return 1
}

func mpEncode(b []byte, v lua.LValue, level int) []byte {
	switch v := v.(type) {
	case lua.LString:
		return mpEncodeBytes(b, string(v))
	case lua.LBool:
		if v {
			return append(b, 0xc3)
		}
		return append(b, 0xc2)
	case lua.LNumber:
		n := float64(v)
		if !math.IsInf(n, 0) && !math.IsNaN(n) && n >= -9223372036854775808.0 && n < 9223372036854775808.0 && float64(int64(n)) == n {
			return mpEncodeInt(b, int64(n))
		}
		if f := float32(n); float64(f) == n {
			b = append(b, 0xca)
			return binary.BigEndian.AppendUint32(b, math.Float32bits(f))
		}
		b = append(b, 0xcb)
		return binary.BigEndian.AppendUint64(b, math.Float64bits(n))
	case *lua.LTable:
		if level == cmsgpackMaxNesting {
			return append(b, 0xc0)
		}
		if n, ok := mpArrayLen(v); ok {
			b = mpHeader(b, n, 0x90, 0xdc, 0xdd)
			for i := 1; i <= n; i++ {
				b = mpEncode(b, v.RawGetInt(i), level+1)
			}
			return b
		}
		n := 0
		eachPair(v, func(_, _ lua.LValue) { n++ })
		b = mpHeader(b, n, 0x80, 0xde, 0xdf)
		eachPair(v, func(k, val lua.LValue) {
			b = mpEncode(b, k, level+1)
			b = mpEncode(b, val, level+1)
		})
		return b
	}
	return append(b, 0xc0)
}

// mpArrayLen is table_is_an_array: every key a positive integer (that
// fits an int), as many keys as the largest.
func mpArrayLen(t *lua.LTable) (int, bool) {
	count, max := 0, 0
	ok := true
	eachPair(t, func(k, _ lua.LValue) {
		n, isNum := k.(lua.LNumber)
		if !isNum || n <= 0 || float64(int32(n)) != float64(n) {
			ok = false
			return
		}
		if int(n) > max {
			max = int(n)
		}
		count++
	})
	return count, ok && count == max
}

func mpHeader(b []byte, n int, fix, m16, m32 byte) []byte {
	switch {
	case n <= 15:
		return append(b, fix|byte(n))
	case n <= 0xffff:
		return binary.BigEndian.AppendUint16(append(b, m16), uint16(n))
	}
	return binary.BigEndian.AppendUint32(append(b, m32), uint32(n))
}

func mpEncodeBytes(b []byte, s string) []byte {
	n := len(s)
	switch {
	case n < 32:
		b = append(b, 0xa0|byte(n))
	case n <= 0xff:
		b = append(b, 0xd9, byte(n))
	case n <= 0xffff:
		b = binary.BigEndian.AppendUint16(append(b, 0xda), uint16(n))
	default:
		b = binary.BigEndian.AppendUint32(append(b, 0xdb), uint32(n))
	}
	return append(b, s...)
}

func mpEncodeInt(b []byte, n int64) []byte {
	if n >= 0 {
		switch {
		case n <= 127:
			return append(b, byte(n))
		case n <= 0xff:
			return append(b, 0xcc, byte(n))
		case n <= 0xffff:
			return binary.BigEndian.AppendUint16(append(b, 0xcd), uint16(n))
		case n <= 0xffffffff:
			return binary.BigEndian.AppendUint32(append(b, 0xce), uint32(n))
		}
		return binary.BigEndian.AppendUint64(append(b, 0xcf), uint64(n))
	}
	switch {
	case n >= -32:
		return append(b, byte(int8(n)))
	case n >= -128:
		return append(b, 0xd0, byte(n))
	case n >= -32768:
		return binary.BigEndian.AppendUint16(append(b, 0xd1), uint16(n))
	case n >= -2147483648:
		return binary.BigEndian.AppendUint32(append(b, 0xd2), uint32(n))
	}
	return binary.BigEndian.AppendUint64(append(b, 0xd3), uint64(n))
}

// mpDecoder reads MessagePack; err is set to errEOF or errBad.
type mpDecoder struct {
	p   []byte
	err string
}

const (
	mpErrEOF = "Missing bytes in input."
	mpErrBad = "Bad data format in input."
)

func (d *mpDecoder) need(n int) bool {
	if len(d.p) < n {
		d.err = mpErrEOF
		return false
	}
	return true
}

func (d *mpDecoder) decode(L *lua.LState) lua.LValue {
	if !d.need(1) {
		return lua.LNil
	}
	c := d.p[0]
	be := binary.BigEndian
	fixed := func(n int) []byte {
		if !d.need(1 + n) {
			return nil
		}
		v := d.p[1 : 1+n]
		d.p = d.p[1+n:]
		return v
	}
	str := func(hdr, n int) lua.LValue {
		if !d.need(hdr + n) {
			return lua.LNil
		}
		s := lua.LString(d.p[hdr : hdr+n])
		d.p = d.p[hdr+n:]
		return s
	}
	switch {
	case c <= 0x7f:
		d.p = d.p[1:]
		return lua.LNumber(c)
	case c >= 0xe0:
		d.p = d.p[1:]
		return lua.LNumber(int8(c))
	case c&0xe0 == 0xa0:
		return str(1, int(c&0x1f))
	case c&0xf0 == 0x90:
		d.p = d.p[1:]
		return d.array(L, int(c&0xf))
	case c&0xf0 == 0x80:
		d.p = d.p[1:]
		return d.hash(L, int(c&0xf))
	}
	switch c {
	case 0xcc:
		if v := fixed(1); v != nil {
			return lua.LNumber(v[0])
		}
	case 0xd0:
		if v := fixed(1); v != nil {
			return lua.LNumber(int8(v[0]))
		}
	case 0xcd:
		if v := fixed(2); v != nil {
			return lua.LNumber(be.Uint16(v))
		}
	case 0xd1:
		if v := fixed(2); v != nil {
			return lua.LNumber(int16(be.Uint16(v)))
		}
	case 0xce:
		if v := fixed(4); v != nil {
			return lua.LNumber(be.Uint32(v))
		}
	case 0xd2:
		if v := fixed(4); v != nil {
			return lua.LNumber(int32(be.Uint32(v)))
		}
	case 0xcf:
		if v := fixed(8); v != nil {
			return lua.LNumber(int64(be.Uint64(v)))
		}
	case 0xd3:
		if v := fixed(8); v != nil {
			return lua.LNumber(int64(be.Uint64(v)))
		}
	case 0xc0:
		d.p = d.p[1:]
		return lua.LNil
	case 0xc3:
		d.p = d.p[1:]
		return lua.LTrue
	case 0xc2:
		d.p = d.p[1:]
		return lua.LFalse
	case 0xca:
		if v := fixed(4); v != nil {
			return lua.LNumber(math.Float32frombits(be.Uint32(v)))
		}
	case 0xcb:
		if v := fixed(8); v != nil {
			return lua.LNumber(math.Float64frombits(be.Uint64(v)))
		}
	case 0xd9:
		if d.need(2) {
			return str(2, int(d.p[1]))
		}
	case 0xda:
		if d.need(3) {
			return str(3, int(be.Uint16(d.p[1:])))
		}
	case 0xdb:
		if d.need(5) {
			return str(5, int(be.Uint32(d.p[1:])))
		}
	case 0xdc:
		if v := fixed(2); v != nil {
			return d.array(L, int(be.Uint16(v)))
		}
	case 0xdd:
		if v := fixed(4); v != nil {
			return d.array(L, int(be.Uint32(v)))
		}
	case 0xde:
		if v := fixed(2); v != nil {
			return d.hash(L, int(be.Uint16(v)))
		}
	case 0xdf:
		if v := fixed(4); v != nil {
			return d.hash(L, int(be.Uint32(v)))
		}
	default:
		d.err = mpErrBad
	}
	return lua.LNil
}

func (d *mpDecoder) array(L *lua.LState, n int) lua.LValue {
	t := L.CreateTable(min(n, 1024), 0)
	for i := 1; i <= n; i++ {
		v := d.decode(L)
		if d.err != "" {
			return t
		}
		t.RawSetInt(i, v)
	}
	return t
}

func (d *mpDecoder) hash(L *lua.LState, n int) lua.LValue {
	t := L.NewTable()
	for i := 0; i < n; i++ {
		k := d.decode(L)
		if d.err != "" {
			return t
		}
		v := d.decode(L)
		if d.err != "" {
			return t
		}
		if k == lua.LNil {
			L.RaiseError("table index is nil")
		}
		t.RawSet(k, v)
	}
	return t
}

// mpUnpackFull is mp_unpack_full: every value (limit and offset 0), or
// at most limit values from offset, then the offset to go on from (-1
// at the end).
func mpUnpackFull(L *lua.LState, limit, offset int64) int {
	s := L.CheckString(1)
	decodeAll := limit == 0 && offset == 0
	if offset < 0 || limit < 0 {
		L.RaiseError("Invalid request to unpack with offset of %d and limit of %d.", int(offset), len(s))
	} else if offset > int64(len(s)) {
		L.RaiseError("Start offset %d greater than input length %d.", int(offset), len(s))
	}
	if decodeAll {
		limit = math.MaxInt32
	}
	d := mpDecoder{p: []byte(s[offset:])}
	var out []lua.LValue
	for cnt := int64(0); len(d.p) > 0 && cnt < limit; cnt++ {
		v := d.decode(L)
		if d.err != "" {
			L.RaiseError("%s", d.err)
		}
		out = append(out, v)
	}
	if !decodeAll {
		next := int64(len(s) - len(d.p))
		if len(d.p) == 0 {
			next = -1
		}
		L.Push(lua.LNumber(next))
	}
	for _, v := range out {
		L.Push(v)
	}
	if !decodeAll {
		return len(out) + 1
	}
	return len(out)
}
