package config

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"syscall"
	"unicode"

	"github.com/zredis/zredis/sds"
)

// The helpers in this file reproduce the byte-level behaviour of the C
// routines Redis uses to read configuration (sdssplitargs, sdscatrepr,
// string2ll, memtoull, strtoll, stringmatchlen). Exactness matters because
// the same inputs must be accepted or rejected, and echoed, as Redis does.

// SplitArgs splits a configuration line as Redis's sdssplitargs does (see
// package sds), after cutting it at a NUL byte as Redis's C string does.
// ok is false on unbalanced quotes, which Redis reports as "Unbalanced
// quotes in configuration line".
func SplitArgs(line string) (args []string, ok bool) {
	if i := strings.IndexByte(line, 0); i >= 0 {
		line = line[:i]
	}
	return sds.SplitArgs(line)
}

// Repr quotes s the way Redis's sdscatrepr does.
func Repr(s string) string { return sds.Repr(s) }

// trimSet trims the given bytes from both ends, like sdstrim.
func trimSet(s, cset string) string {
	return strings.Trim(s, cset)
}

// strtoll mirrors C strtoll: optional leading blanks and sign, then digits
// in the given base; it saturates on overflow. rest is what follows the
// digits (the C end pointer); an input without digits yields 0 and rest == s.
func strtoll(s string, base int) (v int64, rest string, overflow bool) {
	p := 0
	for p < len(s) && sds.IsSpace(s[p]) {
		p++
	}
	neg := false
	if p < len(s) && (s[p] == '+' || s[p] == '-') {
		neg = s[p] == '-'
		p++
	}
	start := p
	var u uint64
	limit := uint64(math.MaxInt64)
	if neg {
		limit++
	}
	for p < len(s) {
		c := s[p]
		var d int
		switch {
		case c >= '0' && c <= '9':
			d = int(c - '0')
		case c >= 'a' && c <= 'z':
			d = int(c-'a') + 10
		case c >= 'A' && c <= 'Z':
			d = int(c-'A') + 10
		default:
			d = 99
		}
		if d >= base {
			break
		}
		if !overflow {
			if u > (limit-uint64(d))/uint64(base) {
				overflow = true
			} else {
				u = u*uint64(base) + uint64(d)
			}
		}
		p++
	}
	if p == start {
		return 0, s, false
	}
	if overflow {
		if neg {
			return math.MinInt64, s[p:], true
		}
		return math.MaxInt64, s[p:], true
	}
	if neg {
		return int64(-u), s[p:], false
	}
	return int64(u), s[p:], false
}

// strtoull mirrors C strtoull for a string of decimal digits only (the way
// memtoull calls it): empty input is 0, overflow saturates.
func strtoullDigits(s string) uint64 {
	var u uint64
	for i := 0; i < len(s); i++ {
		d := uint64(s[i] - '0')
		if u > (math.MaxUint64-d)/10 {
			return math.MaxUint64
		}
		u = u*10 + d
	}
	return u
}

// Memtoull is Redis's memtoull (see memtoull), for a command that reads
// a memory size (DEBUG QUICKLIST-PACKED-THRESHOLD): ok is false where
// Redis sets *err.
func Memtoull(s string) (n uint64, ok bool) { return memtoull(s) }

// memtoull mirrors Redis's memtoull: digits followed by an optional unit
// (b, k=1000, kb=1024, m, mb, g, gb; case-insensitive). A leading '-' or any
// other suffix is an error. Overflow of the digits saturates and the unit
// multiplication wraps, exactly as in C.
func memtoull(s string) (uint64, bool) {
	if strings.IndexByte(s, 0) >= 0 {
		s = s[:strings.IndexByte(s, 0)]
	}
	if strings.HasPrefix(s, "-") {
		return 0, false
	}
	u := 0
	for u < len(s) && s[u] >= '0' && s[u] <= '9' {
		u++
	}
	var mul uint64
	switch strings.ToLower(s[u:]) {
	case "", "b":
		mul = 1
	case "k":
		mul = 1000
	case "kb":
		mul = 1024
	case "m":
		mul = 1000 * 1000
	case "mb":
		mul = 1024 * 1024
	case "g":
		mul = 1000 * 1000 * 1000
	case "gb":
		mul = 1024 * 1024 * 1024
	default:
		return 0, false
	}
	if u >= 128 {
		return 0, false
	}
	return strtoullDigits(s[:u]) * mul, true
}

// string2d mirrors Redis's string2d (strtod with no leading blank, full
// consumption, no NaN, no overflow).
func string2d(s string) (float64, bool) {
	if len(s) == 0 || sds.IsSpace(s[0]) {
		return 0, false
	}
	in := s
	body := strings.TrimLeft(s, "+-")
	if len(body) > 2 && (body[:2] == "0x" || body[:2] == "0X") && !strings.ContainsAny(body, "pP") {
		in = s + "p0"
	}
	f, err := strconv.ParseFloat(in, 64)
	if err != nil {
		var ne *strconv.NumError
		if errors.As(err, &ne) && ne.Err == strconv.ErrRange && f != 0 && !math.IsInf(f, 0) {
			return f, true
		}
		return 0, false
	}
	if math.IsNaN(f) || strings.ContainsRune(s, '_') {
		return 0, false
	}
	return f, true
}

// formatPercentile prints a double like Redis's "%f" followed by
// trimDoubleString (trailing zeros and a trailing dot removed).
func formatPercentile(f float64) string {
	s := strconv.FormatFloat(f, 'f', 6, 64)
	if strings.IndexByte(s, '.') >= 0 {
		s = strings.TrimRight(s, "0")
		s = strings.TrimSuffix(s, ".")
	}
	return s
}

// Strerror renders an error the way C's strerror renders its errno, for
// the messages other packages write as Redis does.
func Strerror(err error) string { return strerror(err) }

// strerror renders an error the way C's strerror renders its errno, which is
// what Redis prints ("No such file or directory").
func strerror(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return capitalize(errno.Error())
	}
	return capitalize(err.Error())
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	r := []rune(s)
	r[0] = unicode.ToUpper(r[0])
	return string(r)
}
