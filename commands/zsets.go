package commands

import (
	"errors"
	"math"
	"strconv"

	"github.com/zredis/zredis/config"
	"github.com/zredis/zredis/engine"
	"github.com/zredis/zredis/keyspace"
	"github.com/zredis/zredis/sds"
)

// The sorted-set family (Redis t_zset.c) is one file per group of
// commands, zsets_*.go, each registering its commands at its top; this
// file holds what they share: key extraction, argument parsing, and the
// writing of scored replies.

// numkeysKeys extracts the keys of a command whose argument at position
// idx is the number of keys that follow it (ZMPOP, ZUNION, ...).
func numkeysKeys(idx int) func(args [][]byte) []int {
	return func(args [][]byte) []int {
		if idx >= len(args) {
			return nil
		}
		n, ok := engine.ParseInt(args[idx])
		if !ok || n < 1 || n > int64(len(args)-idx-1) {
			return nil
		}
		keys := make([]int, n)
		for i := range keys {
			keys[i] = idx + 1 + i
		}
		return keys
	}
}

// storeKeys extracts the keys of ZUNIONSTORE-like commands: the
// destination, then numkeys keys after the count at position 2. A bad
// count yields no keys at all, as in Redis (no destination either).
func storeKeys(args [][]byte) []int {
	keys := numkeysKeys(2)(args)
	if keys == nil {
		return nil
	}
	return append([]int{1}, keys...)
}

// ---- helpers ---------------------------------------------------------------

// zsetLimits are zset-max-listpack-entries and zset-max-listpack-value.
func zsetLimits(c *engine.Ctx) (entries, value int) {
	cfg := c.Config()
	return int(cfg.IntOf(zsetMaxListpackEntries)), int(cfg.IntOf(zsetMaxListpackValue))
}

var (
	zsetMaxListpackEntries = config.KeyOf("zset-max-listpack-entries")
	zsetMaxListpackValue   = config.KeyOf("zset-max-listpack-value")
)

// zsetOf returns the sorted set in e, nil when e is nil; ok=false means
// e holds another type and WRONGTYPE was written.
func zsetOf(c *engine.Ctx, e *keyspace.Entry) (*keyspace.ZSet, bool) {
	if e == nil {
		return nil, true
	}
	if e.Type() != keyspace.TypeZSet {
		c.Error(engine.ErrWrongType)
		return nil, false
	}
	return e.Obj().(*keyspace.ZSet), true
}

// zsetRead looks key up for reading: never modify what it returns.
func zsetRead(c *engine.Ctx, key []byte) (*keyspace.ZSet, bool) { return zsetOf(c, c.DB.Lookup(key)) }

// zsetWrite looks key up for an in-place change.
func zsetWrite(c *engine.Ctx, key []byte) (*keyspace.ZSet, bool) {
	return zsetOf(c, c.DB.LookupWrite(key))
}

// strtod parses b as C's strtod would consume it entirely, including hex
// floats without a binary exponent ("0x10"), which Go's parser refuses.
// rangeErr reports overflow (±Inf) or underflow to zero, as ERANGE.
func strtod(b []byte) (f float64, rangeErr, ok bool) {
	s := string(b)
	for _, c := range b {
		if c == '_' {
			return 0, false, false
		}
	}
	body := s
	if len(body) > 0 && (body[0] == '+' || body[0] == '-') {
		body = body[1:]
	}
	if len(body) > 2 && body[0] == '0' && (body[1] == 'x' || body[1] == 'X') {
		hasExp := false
		for i := 2; i < len(body); i++ {
			if body[i] == 'p' || body[i] == 'P' {
				hasExp = true
			}
		}
		if !hasExp {
			s += "p0"
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		var ne *strconv.NumError
		if errors.As(err, &ne) && ne.Err == strconv.ErrRange {
			return f, true, true
		}
		return 0, false, false
	}
	if f == 0 && mantissaNonZero(body) {
		return f, true, true
	}
	return f, false, true
}

// mantissaNonZero reports whether a decimal or hex literal has a nonzero
// digit before its exponent (a zero result then means underflow).
func mantissaNonZero(s string) bool {
	hex := len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')
	if hex {
		s = s[2:]
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if hex && (c == 'p' || c == 'P') || !hex && (c == 'e' || c == 'E') {
			return false
		}
		if c >= '1' && c <= '9' || hex && (c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return true
		}
	}
	return false
}

// parseScore parses a score as getDoubleFromObject does: no leading
// space, nothing trailing, no NaN, no overflow, no underflow to zero.
func parseScore(b []byte) (float64, bool) {
	if len(b) == 0 || sds.IsSpace(b[0]) {
		return 0, false
	}
	f, rangeErr, ok := strtod(b)
	if !ok || rangeErr || math.IsNaN(f) {
		return 0, false
	}
	return f, true
}

// parseRangeFloat parses one end of a score range as zslParseRange does
// with strtod: leading space skipped, "" is 0, overflow saturates, NaN
// refused.
func parseRangeFloat(b []byte) (float64, bool) {
	if len(b) == 0 {
		return 0, true
	}
	i := 0
	for i < len(b) && sds.IsSpace(b[i]) {
		i++
	}
	if i == len(b) {
		return 0, false
	}
	f, _, ok := strtod(b[i:])
	if !ok || math.IsNaN(f) {
		return 0, false
	}
	return f, true
}

// parseScoreRange parses ZRANGEBYSCORE's min and max ("(" = exclusive).
func parseScoreRange(min, max []byte) (keyspace.ScoreRange, bool) {
	var r keyspace.ScoreRange
	var ok bool
	if len(min) > 0 && min[0] == '(' {
		r.MinEx = true
		min = min[1:]
	}
	if r.Min, ok = parseRangeFloat(min); !ok {
		return r, false
	}
	if len(max) > 0 && max[0] == '(' {
		r.MaxEx = true
		max = max[1:]
	}
	if r.Max, ok = parseRangeFloat(max); !ok {
		return r, false
	}
	return r, true
}

// parseLexBound parses one end of a lexicographic range ("-", "+",
// "[member", "(member"). The member is copied.
func parseLexBound(b []byte) (keyspace.LexBound, bool) {
	if len(b) == 0 {
		return keyspace.LexBound{}, false
	}
	switch b[0] {
	case '+':
		return keyspace.LexBound{PosInf: true, Ex: true}, len(b) == 1
	case '-':
		return keyspace.LexBound{NegInf: true, Ex: true}, len(b) == 1
	case '(':
		return keyspace.LexBound{Value: string(b[1:]), Ex: true}, true
	case '[':
		return keyspace.LexBound{Value: string(b[1:])}, true
	}
	return keyspace.LexBound{}, false
}

func parseLexRange(min, max []byte) (lo, hi keyspace.LexBound, ok bool) {
	if lo, ok = parseLexBound(min); !ok {
		return
	}
	hi, ok = parseLexBound(max)
	return
}

// writeScored writes one member and, when withScores, its score; in
// RESP3 the pair is an array of two (zrangeResultEmitCBufferForClient).
func writeScored(c *engine.Ctx, member string, score float64, withScores bool) {
	if withScores && c.W.Proto() > 2 {
		c.W.Array(2)
	}
	c.W.BulkString(member)
	if withScores {
		c.W.Double(score)
	}
}

// scoredHeader writes the array header of n members with or without
// scores.
func scoredHeader(c *engine.Ctx, n int, withScores bool) {
	if withScores && c.W.Proto() == 2 {
		n *= 2
	}
	c.W.Array(n)
}
