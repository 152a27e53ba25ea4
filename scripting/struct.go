package scripting

import (
	"encoding/binary"
	"math"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// The struct library (Roberto Ierusalimschy's lua_struct.c, as Redis
// ships it): struct.pack, struct.unpack and struct.size over a format of
// '<' '>' '!n' 'b' 'B' 'h' 'H' 'l' 'L' 'T' 'i[n]' 'I[n]' 'x' 'f' 'd' 's'
// 'c[n]', with the sizes of x86-64 (short 2, int 4, long and size_t 8)
// and native little-endian order.

const (
	structMaxIntSize = 32
	structMaxAlign   = 8
)

func openStruct(L *lua.LState) int {
	t := L.SetFuncs(L.NewTable(), map[string]lua.LGFunction{
		"pack":   structPack,
		"unpack": structUnpack,
		"size":   structSize,
	})
	L.SetGlobal("struct", t)
	L.Push(t)
	return 1
}

type structHeader struct {
	little bool
	align  int
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func structGetnum(L *lua.LState, fmt string, i *int, df int) int {
	if *i >= len(fmt) || !isDigit(fmt[*i]) {
		return df
	}
	a := 0
	for *i < len(fmt) && isDigit(fmt[*i]) {
		d := int(fmt[*i] - '0')
		if a > math.MaxInt32/10 || a*10 > math.MaxInt32-d {
			L.RaiseError("integral size overflow")
		}
		a = a*10 + d
		*i++
	}
	return a
}

func structOptsize(L *lua.LState, opt byte, fmt string, i *int) int {
	switch opt {
	case 'B', 'b':
		return 1
	case 'H', 'h':
		return 2
	case 'L', 'l', 'T':
		return 8
	case 'f':
		return 4
	case 'd':
		return 8
	case 'x':
		return 1
	case 'c':
		return structGetnum(L, fmt, i, 1)
	case 'i', 'I':
		sz := structGetnum(L, fmt, i, 4)
		if sz > structMaxIntSize {
			L.RaiseError("integral size %d is larger than limit of %d", sz, structMaxIntSize)
		}
		return sz
	}
	return 0
}

func structToAlign(n int, h *structHeader, opt byte, size int) int {
	if size == 0 || opt == 'c' {
		return 0
	}
	if size > h.align {
		size = h.align
	}
	return (size - (n & (size - 1))) & (size - 1)
}

func structControl(L *lua.LState, opt byte, fmt string, i *int, h *structHeader) {
	switch opt {
	case ' ':
	case '>':
		h.little = false
	case '<':
		h.little = true
	case '!':
		a := structGetnum(L, fmt, i, structMaxAlign)
		if a&(a-1) != 0 || a == 0 {
			L.RaiseError("alignment %d is not a power of 2", a)
		}
		h.align = a
	default:
		L.ArgError(1, "invalid format option '"+string(opt)+"'")
	}
}

func structPack(L *lua.LState) int {
	fmt := L.CheckString(1)
	h := structHeader{little: true, align: 1}
	arg := 2
	var b []byte
	for i := 0; i < len(fmt); {
		opt := fmt[i]
		i++
		size := structOptsize(L, opt, fmt, &i)
		for n := structToAlign(len(b), &h, opt, size); n > 0; n-- {
			b = append(b, 0)
		}
		switch opt {
		case 'b', 'B', 'h', 'H', 'l', 'L', 'T', 'i', 'I':
			n := float64(L.CheckNumber(arg))
			arg++
			var v uint64
			if n < 0 {
				v = uint64(toInt64(n))
			} else {
				v = toUint64(n)
			}
			buf := make([]byte, size)
			if h.little {
				for k := 0; k < size; k++ {
					buf[k] = byte(v)
					v >>= 8
				}
			} else {
				for k := size - 1; k >= 0; k-- {
					buf[k] = byte(v)
					v >>= 8
				}
			}
			b = append(b, buf...)
		case 'x':
			b = append(b, 0)
		case 'f':
			f := math.Float32bits(float32(L.CheckNumber(arg)))
			arg++
			if h.little {
				b = binary.LittleEndian.AppendUint32(b, f)
			} else {
				b = binary.BigEndian.AppendUint32(b, f)
			}
		case 'd':
			d := math.Float64bits(float64(L.CheckNumber(arg)))
			arg++
			if h.little {
				b = binary.LittleEndian.AppendUint64(b, d)
			} else {
				b = binary.BigEndian.AppendUint64(b, d)
			}
		case 'c', 's':
			s := L.CheckString(arg)
			arg++
			if size == 0 {
				size = len(s)
			}
			if len(s) < size {
				L.ArgError(arg, "string too short")
			}
			b = append(b, s[:size]...)
			if opt == 's' {
				b = append(b, 0)
			}
		default:
			structControl(L, opt, fmt, &i, &h)
		}
	}
	L.Push(lua.LString(b))
	return 1
}

// toUint64 is C's (unsigned long) conversion of a non-negative double.
func toUint64(f float64) uint64 {
	if f >= 18446744073709551616.0 || math.IsNaN(f) {
		return 0
	}
	return uint64(f)
}

func structGetInteger(b []byte, little, signed bool, size int) float64 {
	var l uint64
	if !little {
		for k := 0; k < size; k++ {
			l = l<<8 | uint64(b[k])
		}
	} else {
		for k := size - 1; k >= 0; k-- {
			l = l<<8 | uint64(b[k])
		}
	}
	if !signed {
		return float64(l)
	}
	if size*8-1 < 64 {
		mask := ^uint64(0) << uint(size*8-1)
		if l&mask != 0 {
			l |= mask
		}
	}
	return float64(int64(l))
}

func structUnpack(L *lua.LState) int {
	fmt := L.CheckString(1)
	data := L.CheckString(2)
	ld := len(data)
	pos := L.OptInt(3, 1)
	if pos <= 0 {
		L.ArgError(3, "offset must be 1 or greater")
	}
	pos--
	n := 0
	h := structHeader{little: true, align: 1}
	for i := 0; i < len(fmt); {
		opt := fmt[i]
		i++
		size := structOptsize(L, opt, fmt, &i)
		pos += structToAlign(pos, &h, opt, size)
		if !(size <= ld && pos <= ld-size) {
			L.ArgError(2, "data string too short")
		}
		switch opt {
		case 'b', 'B', 'h', 'H', 'l', 'L', 'T', 'i', 'I':
			signed := opt >= 'a'
			L.Push(lua.LNumber(structGetInteger([]byte(data[pos:pos+size]), h.little, signed, size)))
			n++
		case 'x':
		case 'f':
			var u uint32
			if h.little {
				u = binary.LittleEndian.Uint32([]byte(data[pos : pos+4]))
			} else {
				u = binary.BigEndian.Uint32([]byte(data[pos : pos+4]))
			}
			L.Push(lua.LNumber(math.Float32frombits(u)))
			n++
		case 'd':
			var u uint64
			if h.little {
				u = binary.LittleEndian.Uint64([]byte(data[pos : pos+8]))
			} else {
				u = binary.BigEndian.Uint64([]byte(data[pos : pos+8]))
			}
			L.Push(lua.LNumber(math.Float64frombits(u)))
			n++
		case 'c':
			if size == 0 {
				if n == 0 || L.Get(-1).Type() != lua.LTNumber {
					L.RaiseError("format 'c0' needs a previous size")
				}
				size = int(L.Get(-1).(lua.LNumber))
				L.Pop(1)
				n--
				if !(size <= ld && pos <= ld-size) {
					L.ArgError(2, "data string too short")
				}
			}
			L.Push(lua.LString(data[pos : pos+size]))
			n++
		case 's':
			e := strings.IndexByte(data[pos:], 0)
			if e < 0 {
				L.RaiseError("unfinished string in data")
			}
			size = e + 1
			L.Push(lua.LString(data[pos : pos+e]))
			n++
		default:
			structControl(L, opt, fmt, &i, &h)
		}
		pos += size
	}
	L.Push(lua.LNumber(pos + 1))
	return n + 1
}

func structSize(L *lua.LState) int {
	fmt := L.CheckString(1)
	h := structHeader{little: true, align: 1}
	pos := 0
	for i := 0; i < len(fmt); {
		opt := fmt[i]
		i++
		size := structOptsize(L, opt, fmt, &i)
		pos += structToAlign(pos, &h, opt, size)
		if opt == 's' {
			L.ArgError(1, "option 's' has no fixed size")
		} else if opt == 'c' && size == 0 {
			L.ArgError(1, "option 'c0' has no fixed size")
		}
		if !isAlnum(opt) {
			structControl(L, opt, fmt, &i, &h)
		}
		pos += size
	}
	L.Push(lua.LNumber(pos))
	return 1
}

func isAlnum(c byte) bool {
	return isDigit(c) || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}
