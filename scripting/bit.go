package scripting

import (
	"math"

	lua "github.com/yuin/gopher-lua"
)

// The bit library (LuaBitOp 1.0, deps/lua/src/lua_bit.c): 32-bit
// operations on Lua numbers, results as signed 32-bit numbers.

func openBit(L *lua.LState) int {
	t := L.SetFuncs(L.NewTable(), map[string]lua.LGFunction{
		"tobit":   func(L *lua.LState) int { return bret(L, barg(L, 1)) },
		"bnot":    func(L *lua.LState) int { return bret(L, ^barg(L, 1)) },
		"band":    bitOp(func(a, b uint32) uint32 { return a & b }),
		"bor":     bitOp(func(a, b uint32) uint32 { return a | b }),
		"bxor":    bitOp(func(a, b uint32) uint32 { return a ^ b }),
		"lshift":  bitShift(func(b, n uint32) uint32 { return b << n }),
		"rshift":  bitShift(func(b, n uint32) uint32 { return b >> n }),
		"arshift": bitShift(func(b, n uint32) uint32 { return uint32(int32(b) >> n) }),
		"rol":     bitShift(func(b, n uint32) uint32 { return b<<n | b>>((32-n)&31) }),
		"ror":     bitShift(func(b, n uint32) uint32 { return b<<((32-n)&31) | b>>n }),
		"bswap": func(L *lua.LState) int {
			b := barg(L, 1)
			return bret(L, b>>24|(b>>8)&0xff00|(b&0xff00)<<8|b<<24)
		},
		"tohex": bitTohex,
	})
	L.SetGlobal("bit", t)
	L.Push(t)
	return 1
}

// barg converts argument i as LuaBitOp does: the number plus 2^52+2^51,
// whose low 32 bits are the integer nearest to it, modulo 2^32; a value
// that is not a number is refused.
func barg(L *lua.LState, i int) uint32 {
	v := L.Get(i)
	var n float64
	switch x := v.(type) {
	case lua.LNumber:
		n = float64(x)
	case lua.LString:
		f, err := parseLuaNumber(string(x))
		if err != nil {
			L.ArgError(i, "number expected, got string")
		}
		n = float64(f)
	default:
		got := v.Type().String()
		if i > L.GetTop() {
			got = "no value"
		}
		L.ArgError(i, "number expected, got "+got)
	}
	n += 6755399441055744.0
	return uint32(math.Float64bits(n))
}

func bret(L *lua.LState, b uint32) int {
	L.Push(lua.LNumber(int32(b)))
	return 1
}

func bitOp(op func(a, b uint32) uint32) lua.LGFunction {
	return func(L *lua.LState) int {
		b := barg(L, 1)
		for i := L.GetTop(); i > 1; i-- {
			b = op(b, barg(L, i))
		}
		return bret(L, b)
	}
}

func bitShift(op func(b, n uint32) uint32) lua.LGFunction {
	return func(L *lua.LState) int {
		b := barg(L, 1)
		n := barg(L, 2) & 31
		return bret(L, op(b, n))
	}
}

func bitTohex(L *lua.LState) int {
	b := barg(L, 1)
	n := int32(8)
	if L.GetTop() >= 2 {
		n = int32(barg(L, 2))
	}
	digits := "0123456789abcdef"
	if n < 0 {
		n = -n
		digits = "0123456789ABCDEF"
	}
	if n > 8 {
		n = 8
	}
	buf := make([]byte, n)
	for i := int(n) - 1; i >= 0; i-- {
		buf[i] = digits[b&15]
		b >>= 4
	}
	L.Push(lua.LString(buf))
	return 1
}
