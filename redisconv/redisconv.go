// Package redisconv holds Redis's strict number conversions (util.c), the
// one implementation every package that reads numbers as Redis does uses:
// the request reader, configuration, commands, the keyspace's encodings
// and the RDB format.
package redisconv

import "math"

// ParseInt parses b as Redis's string2ll: the exact decimal form of an
// int64, at most 20 bytes, an optional '-', no '+', no leading zeros, no
// "-0", no spaces, no overflow. It is what decides that a string "is an
// integer" everywhere in Redis (replies, encodings, INCR).
func ParseInt[T string | []byte](b T) (int64, bool) {
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
	v := uint64(b[i] - '0')
	for i++; i < n; i++ {
		c := b[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if v > math.MaxUint64/10 {
			return 0, false
		}
		v *= 10
		if v > math.MaxUint64-d {
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
	if v > math.MaxInt64 {
		return 0, false
	}
	return int64(v), true
}
