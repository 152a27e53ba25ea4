package rdb

import "strconv"

// parseInt parses b as Redis's string2ll / lpStringToInt64 accept it for
// encoding purposes: the exact decimal form of an int64 (no '+', no
// leading zeros, no "-0", no spaces), so that formatting the value
// gives b back.
func parseInt(b []byte) (int64, bool) {
	n := len(b)
	if n == 0 || n > 20 {
		return 0, false
	}
	if n == 1 && b[0] == '0' {
		return 0, true
	}
	i, neg := 0, false
	if b[0] == '-' {
		if n == 1 {
			return 0, false
		}
		neg, i = true, 1
	}
	if b[i] < '1' || b[i] > '9' {
		return 0, false
	}
	var v uint64
	for ; i < n; i++ {
		c := b[i]
		if c < '0' || c > '9' || v > (1<<64-1)/10 {
			return 0, false
		}
		d := uint64(c - '0')
		v *= 10
		if v > 1<<64-1-d {
			return 0, false
		}
		v += d
	}
	if neg {
		if v > 1<<63 {
			return 0, false
		}
		return int64(-v), true
	}
	if v > 1<<63-1 {
		return 0, false
	}
	return int64(v), true
}

// formatScore formats a sorted-set score as Redis's d2string does for
// the listpack encoding: integers in [-(2^52-1), 2^52) without a
// fraction, other values with %.17g, "inf", "-inf", "nan".
func formatScore(dst []byte, v float64) []byte {
	switch {
	case v != v:
		return append(dst, "nan"...)
	case v > maxFloat:
		return append(dst, "inf"...)
	case v < -maxFloat:
		return append(dst, "-inf"...)
	case v == 0:
		if 1/v < 0 {
			return append(dst, "-0"...)
		}
		return append(dst, '0')
	case v > -4503599627370495 && v < 4503599627370496 && v == float64(int64(v)):
		return strconv.AppendInt(dst, int64(v), 10)
	}
	return strconv.AppendFloat(dst, v, 'g', 17, 64)
}

const maxFloat = 1.7976931348623157e308
