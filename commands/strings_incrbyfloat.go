package commands

import (
	"math/big"
	"runtime"

	"github.com/zredis/zredis/config"
	"github.com/zredis/zredis/engine"
	"github.com/zredis/zredis/keyspace"
)

// String commands: INCRBYFLOAT (Redis t_string.c).
func init() {
	register(
		&engine.Command{Name: "incrbyfloat", Arity: 3, Flags: engine.Write | engine.DenyOOM | engine.Fast, ACL: "@write @string @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "string", Run: incrbyfloatCommand},
	)
}

// INCRBYFLOAT key increment. The sum is computed as redis-server computes
// it, in C's long double (see parseLongDouble), and stored as its
// "human" decimal form, which is also the reply (always a bulk string).
// An existing key keeps its TTL.
func incrbyfloatCommand(c *engine.Ctx) {
	key := c.Args[1]
	e := c.DB.LookupWrite(key)
	value := new(big.Float).SetPrec(ldPrec)
	if e != nil {
		if e.Type() != keyspace.TypeString {
			c.Error(engine.ErrWrongType)
			return
		}
		var ok bool
		if value, ok = parseLongDouble(e.Str()); !ok {
			c.Error(engine.ErrNotFloat)
			return
		}
	}
	incr, ok := parseLongDouble(c.Args[2])
	if !ok {
		c.Error(engine.ErrNotFloat)
		return
	}
	if value.IsInf() || incr.IsInf() {
		c.Error(engine.ErrIncrFloatNaN)
		return
	}
	sum := new(big.Float).SetPrec(ldPrec).Add(value, incr)
	if ldOverflows(sum) {
		c.Error(engine.ErrIncrFloatNaN)
		return
	}
	var out []byte
	if e != nil {
		out = formatLongDouble(reuseBuf(e.Str(), 24), sum)
		e.SetStr(out)
		e.MarkNoInt() // createStringObject: embstr or raw, never int
		c.W.Bulk(out)
	} else {
		out = formatLongDouble(nil, sum)
		ne := keyspace.NewString(out, 0)
		ne.MarkNoInt()
		c.DB.Put(key, ne)
		c.Notify(config.NotifyNew, "new", key)
		c.W.Bulk(out)
	}
	c.Dirty(1)
	// Propagated as the result, which replays exactly on any machine.
	c.Propagate(propSET, key, out, propKEEPTTL)
	c.Notify(config.NotifyString, "incrbyfloat", key)
}

// C's long double, emulated. INCRBYFLOAT parses with strtold, adds once
// and prints with "%.17Lf" (util.c string2ld, ld2string LD_STR_HUMAN),
// which is why 10.5+0.1 gives "10.6" where float64 arithmetic would print
// 10.59999999999999964. big.Float at the long double's significand
// precision rounds each step to nearest-even as the FPU does, and its
// 'f' formatting is exact with ties to even as glibc's printf; the
// exponent range, far wider in big.Float, is checked by hand. Subnormal
// long doubles (below 1e-4931) are kept at full precision: they print as
// 0 either way.

// ldPrec is the significand precision of long double where redis-server
// runs: the x87 80-bit format on amd64 and 386, IEEE binary128 on the
// other 64-bit Linux platforms (arm64, s390x, riscv64, ppc64le with an
// IEEE long double).
var ldPrec = func() uint {
	switch runtime.GOARCH {
	case "amd64", "386":
		return 64
	}
	return 113
}()

const (
	ldMaxExp = 16384  // every finite long double is below 2^ldMaxExp
	ldMinExp = -16381 // the smallest normal long double is 2^(ldMinExp-1)

	// maxLongDoubleChars bounds string2ld's input (MAX_LONG_DOUBLE_CHARS).
	maxLongDoubleChars = 5 * 1024
)

// ldOverflows reports whether a finite f lies beyond long double's
// range (where the FPU gives ±inf and strtold ±HUGE_VALL).
func ldOverflows(f *big.Float) bool {
	return !f.IsInf() && f.Sign() != 0 && f.MantExp(nil) > ldMaxExp
}

// ldUnderflows reports whether f is below half the smallest subnormal
// long double, where strtold returns zero (with ERANGE).
func ldUnderflows(f *big.Float) bool {
	return !f.IsInf() && f.Sign() != 0 && f.MantExp(nil) < ldMinExp-int(ldPrec)
}

// parseLongDouble parses b as string2ld does: strtold's syntax (decimal
// with an optional exponent, hexadecimal such as 0x1.8p3, inf and
// infinity in any case, an optional sign), with nothing before or after
// it, and NaN, overflow and underflow to zero refused. The result is
// correctly rounded to ldPrec bits, as glibc's strtold rounds.
func parseLongDouble(b []byte) (*big.Float, bool) {
	if len(b) == 0 || len(b) >= maxLongDoubleChars {
		return nil, false
	}
	s := b
	neg := false
	if s[0] == '+' || s[0] == '-' {
		neg = s[0] == '-'
		s = s[1:]
	}
	f := new(big.Float).SetPrec(ldPrec)
	var ok bool
	switch {
	case engine.EqualFold(s, "inf") || engine.EqualFold(s, "infinity"):
		f.SetInf(neg)
		return f, true
	case len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'):
		ok = parseHexLongDouble(f, s[2:])
	default:
		ok = parseDecLongDouble(f, s)
	}
	if !ok || ldOverflows(f) || ldUnderflows(f) {
		return nil, false
	}
	if neg {
		f.Neg(f)
	}
	return f, true
}

func isDecDigit(c byte) bool { return '0' <= c && c <= '9' }

func isHexDigit(c byte) bool {
	return isDecDigit(c) || ('a' <= c|0x20 && c|0x20 <= 'f')
}

// scanLongDouble splits a strtold mantissa and exponent: digits with an
// optional point, then expChar ('e' or 'p', any case) with an optional
// sign and decimal digits. It returns the mantissa's digits without the
// point, how many of them follow the point, and the exponent (saturated
// far beyond any long double). ok is false unless all of s is consumed.
func scanLongDouble(s []byte, isDig func(byte) bool, expChar byte) (digits []byte, frac, exp int, ok bool) {
	digits = make([]byte, 0, len(s))
	i := 0
	for ; i < len(s) && isDig(s[i]); i++ {
		digits = append(digits, s[i])
	}
	if i < len(s) && s[i] == '.' {
		for i++; i < len(s) && isDig(s[i]); i++ {
			digits = append(digits, s[i])
			frac++
		}
	}
	if len(digits) == 0 {
		return nil, 0, 0, false
	}
	if i < len(s) && s[i]|0x20 == expChar {
		i++
		eneg := false
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			eneg = s[i] == '-'
			i++
		}
		if i == len(s) || !isDecDigit(s[i]) {
			return nil, 0, 0, false
		}
		for ; i < len(s) && isDecDigit(s[i]); i++ {
			if exp < 1<<24 {
				exp = exp*10 + int(s[i]-'0')
			}
		}
		if eneg {
			exp = -exp
		}
	}
	return digits, frac, exp, i == len(s)
}

// parseDecLongDouble sets f to the decimal s (without sign).
func parseDecLongDouble(f *big.Float, s []byte) bool {
	digits, frac, exp, ok := scanLongDouble(s, isDecDigit, 'e')
	if !ok {
		return false
	}
	for len(digits) > 0 && digits[0] == '0' {
		digits = digits[1:]
	}
	if len(digits) == 0 {
		f.SetInt64(0)
		return true
	}
	e10 := exp - frac
	// The value lies in [10^(mag-1), 10^mag). Long doubles span about
	// 1e-4966 (binary128's smallest subnormal) to 1.2e4932: far outside,
	// answer without computing 10^e10.
	mag := len(digits) + e10
	if mag > 4934 || mag < -4970 {
		return false
	}
	m, _ := new(big.Int).SetString(string(digits), 10)
	if e10 >= 0 {
		m.Mul(m, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(e10)), nil))
		f.SetInt(m)
	} else {
		d := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-e10)), nil)
		f.SetRat(new(big.Rat).SetFrac(m, d))
	}
	return true
}

// parseHexLongDouble sets f to the hexadecimal s (after "0x"), whose
// exponent is binary.
func parseHexLongDouble(f *big.Float, s []byte) bool {
	digits, frac, exp, ok := scanLongDouble(s, isHexDigit, 'p')
	if !ok {
		return false
	}
	m, _ := new(big.Int).SetString(string(digits), 16)
	if m.Sign() == 0 {
		f.SetInt64(0)
		return true
	}
	shift := exp - 4*frac
	if bits := m.BitLen() + shift; bits > ldMaxExp+1 || bits < ldMinExp-int(ldPrec)-1 {
		return false
	}
	f.SetInt(m)
	f.SetMantExp(f, shift)
	return true
}

// formatLongDouble appends f as "%.17Lf" with the trailing zeros and a
// trailing point removed, and "-0" printed as "0" (ld2string,
// LD_STR_HUMAN). f is finite.
func formatLongDouble(dst []byte, f *big.Float) []byte {
	start := len(dst)
	dst = f.Append(dst, 'f', 17) // always has a point
	n := len(dst)
	for dst[n-1] == '0' {
		n--
	}
	if dst[n-1] == '.' {
		n--
	}
	dst = dst[:n]
	if string(dst[start:]) == "-0" {
		dst = append(dst[:start], '0')
	}
	return dst
}
