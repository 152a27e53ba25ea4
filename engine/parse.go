package engine

import (
	"math"
	"strconv"

	"github.com/zredis/zredis/redisconv"
)

// ParseInt parses a signed 64-bit integer as strictly as Redis's
// string2ll (redisconv.ParseInt).
func ParseInt(b []byte) (int64, bool) { return redisconv.ParseInt(b) }

// ParseFloat parses a double as Redis's string2d/strtold-based parsers
// accept it: no leading space, nothing trailing, "inf"/"-inf" allowed, NaN
// refused.
func ParseFloat(b []byte) (float64, bool) {
	if len(b) == 0 || len(b) > 5000 {
		return 0, false
	}
	switch b[0] {
	case ' ', '\t', '\n', '\r', '\v', '\f':
		return 0, false
	}
	for _, c := range b {
		if c == '_' {
			return 0, false
		}
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			// strtold saturates to ±HUGE_VAL, which Redis then accepts as
			// ±inf for scores; a value that underflows to 0 is accepted too.
			return f, true
		}
		return 0, false
	}
	if math.IsNaN(f) {
		return 0, false
	}
	return f, true
}

// EqualFold reports whether b equals the lower-case ASCII word s,
// ignoring case, without allocating.
func EqualFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}

// IntArg parses args[i] as an integer, replying ErrNotInteger when it is
// not one. ok=false means the reply was written.
func (c *Ctx) IntArg(i int) (int64, bool) {
	n, ok := ParseInt(c.Args[i])
	if !ok {
		c.Error(ErrNotInteger)
	}
	return n, ok
}
