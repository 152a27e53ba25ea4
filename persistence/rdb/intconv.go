package rdb

import "strconv"

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
