package commands

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"

	"github.com/zredis/zredis/config"
	"github.com/zredis/zredis/engine"
	"github.com/zredis/zredis/keyspace"
	"github.com/zredis/zredis/resp"
	"github.com/zredis/zredis/sds"
)

// Sorted set commands (Redis t_zset.c).
func init() {
	register(
		&engine.Command{Name: "zadd", Arity: -4, Flags: engine.Write | engine.DenyOOM | engine.Fast, ACL: "@write @sortedset @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "sorted-set", Run: zaddCommand},
		&engine.Command{Name: "zincrby", Arity: 4, Flags: engine.Write | engine.DenyOOM | engine.Fast, ACL: "@write @sortedset @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "sorted-set", Run: zincrbyCommand},
		&engine.Command{Name: "zrem", Arity: -3, Flags: engine.Write | engine.Fast, ACL: "@write @sortedset @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "sorted-set", Run: zremCommand},
		&engine.Command{Name: "zscore", Arity: 3, Flags: engine.ReadOnly | engine.Fast, ACL: "@read @sortedset @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "sorted-set", Run: zscoreCommand},
		&engine.Command{Name: "zmscore", Arity: -3, Flags: engine.ReadOnly | engine.Fast, ACL: "@read @sortedset @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "sorted-set", Run: zmscoreCommand},
		&engine.Command{Name: "zcard", Arity: 2, Flags: engine.ReadOnly | engine.Fast, ACL: "@read @sortedset @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "sorted-set", Run: zcardCommand},
		&engine.Command{Name: "zcount", Arity: 4, Flags: engine.ReadOnly | engine.Fast, ACL: "@read @sortedset @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "sorted-set", Run: zcountCommand},
		&engine.Command{Name: "zlexcount", Arity: 4, Flags: engine.ReadOnly | engine.Fast, ACL: "@read @sortedset @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "sorted-set", Run: zlexcountCommand},
		&engine.Command{Name: "zrange", Arity: -4, Flags: engine.ReadOnly, ACL: "@read @sortedset @slow", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "sorted-set", Run: zrangeCommand},
		&engine.Command{Name: "zrevrange", Arity: -4, Flags: engine.ReadOnly, ACL: "@read @sortedset @slow", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "sorted-set", Run: zrevrangeCommand},
		&engine.Command{Name: "zrangebyscore", Arity: -4, Flags: engine.ReadOnly, ACL: "@read @sortedset @slow", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "sorted-set", Run: zrangebyscoreCommand},
		&engine.Command{Name: "zrevrangebyscore", Arity: -4, Flags: engine.ReadOnly, ACL: "@read @sortedset @slow", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "sorted-set", Run: zrevrangebyscoreCommand},
		&engine.Command{Name: "zrangebylex", Arity: -4, Flags: engine.ReadOnly, ACL: "@read @sortedset @slow", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "sorted-set", Run: zrangebylexCommand},
		&engine.Command{Name: "zrevrangebylex", Arity: -4, Flags: engine.ReadOnly, ACL: "@read @sortedset @slow", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "sorted-set", Run: zrevrangebylexCommand},
		&engine.Command{Name: "zrangestore", Arity: -5, Flags: engine.Write | engine.DenyOOM, ACL: "@write @sortedset @slow", FirstKey: 1, LastKey: 2, KeyStep: 1, Group: "sorted-set", Run: zrangestoreCommand},
		&engine.Command{Name: "zrank", Arity: 3, Flags: engine.ReadOnly | engine.Fast, ACL: "@read @sortedset @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "sorted-set", Run: zrankCommand},
		&engine.Command{Name: "zrevrank", Arity: 3, Flags: engine.ReadOnly | engine.Fast, ACL: "@read @sortedset @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "sorted-set", Run: zrevrankCommand},
		&engine.Command{Name: "zremrangebyscore", Arity: 4, Flags: engine.Write, ACL: "@write @sortedset @slow", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "sorted-set", Run: zremrangebyscoreCommand},
		&engine.Command{Name: "zremrangebyrank", Arity: 4, Flags: engine.Write, ACL: "@write @sortedset @slow", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "sorted-set", Run: zremrangebyrankCommand},
		&engine.Command{Name: "zremrangebylex", Arity: 4, Flags: engine.Write, ACL: "@write @sortedset @slow", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "sorted-set", Run: zremrangebylexCommand},
		&engine.Command{Name: "zpopmin", Arity: -2, Flags: engine.Write | engine.Fast, ACL: "@write @sortedset @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "sorted-set", Run: zpopminCommand},
		&engine.Command{Name: "zpopmax", Arity: -2, Flags: engine.Write | engine.Fast, ACL: "@write @sortedset @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "sorted-set", Run: zpopmaxCommand},
		&engine.Command{Name: "zmpop", Arity: -4, Flags: engine.Write | engine.MovableKeys, ACL: "@write @sortedset @slow", Group: "sorted-set", Run: zmpopCommand, Keys: numkeysKeys(1)},
		&engine.Command{Name: "zrandmember", Arity: -2, Flags: engine.ReadOnly, ACL: "@read @sortedset @slow", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "sorted-set", Run: zrandmemberCommand},
		&engine.Command{Name: "zunion", Arity: -3, Flags: engine.ReadOnly | engine.MovableKeys, ACL: "@read @sortedset @slow", Group: "sorted-set", Run: zunionCommand, Keys: numkeysKeys(1)},
		&engine.Command{Name: "zinter", Arity: -3, Flags: engine.ReadOnly | engine.MovableKeys, ACL: "@read @sortedset @slow", Group: "sorted-set", Run: zinterCommand, Keys: numkeysKeys(1)},
		&engine.Command{Name: "zdiff", Arity: -3, Flags: engine.ReadOnly | engine.MovableKeys, ACL: "@read @sortedset @slow", Group: "sorted-set", Run: zdiffCommand, Keys: numkeysKeys(1)},
		&engine.Command{Name: "zintercard", Arity: -3, Flags: engine.ReadOnly | engine.MovableKeys, ACL: "@read @sortedset @slow", Group: "sorted-set", Run: zintercardCommand, Keys: numkeysKeys(1)},
		&engine.Command{Name: "zunionstore", Arity: -4, Flags: engine.Write | engine.DenyOOM | engine.MovableKeys, ACL: "@write @sortedset @slow", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "sorted-set", Run: zunionstoreCommand, Keys: storeKeys},
		&engine.Command{Name: "zinterstore", Arity: -4, Flags: engine.Write | engine.DenyOOM | engine.MovableKeys, ACL: "@write @sortedset @slow", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "sorted-set", Run: zinterstoreCommand, Keys: storeKeys},
		&engine.Command{Name: "zdiffstore", Arity: -4, Flags: engine.Write | engine.DenyOOM | engine.MovableKeys, ACL: "@write @sortedset @slow", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "sorted-set", Run: zdiffstoreCommand, Keys: storeKeys},
		&engine.Command{Name: "zscan", Arity: -3, Flags: engine.ReadOnly, ACL: "@read @sortedset @slow", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "sorted-set", Run: zscanCommand},
	)
}

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
	return int(cfg.Int("zset-max-listpack-entries")), int(cfg.Int("zset-max-listpack-value"))
}

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

// ---- ZADD / ZINCRBY ---------------------------------------------------------------

// zaddFlags are ZADD's options (t_zset.c ZADD_IN_*).
type zaddFlags uint8

const (
	zaddNX zaddFlags = 1 << iota
	zaddXX
	zaddGT
	zaddLT
	zaddIncr
	zaddCH
)

func zaddCommand(c *engine.Ctx)    { zaddGeneric(c, 0) }
func zincrbyCommand(c *engine.Ctx) { zaddGeneric(c, zaddIncr) }

// zaddGeneric is ZADD and ZINCRBY (zaddGenericCommand): options, then
// score-member pairs, all scores parsed before anything changes.
func zaddGeneric(c *engine.Ctx, flags zaddFlags) {
	key := c.Args[1]
	idx := 2
options:
	for ; idx < len(c.Args); idx++ {
		a := c.Args[idx]
		switch {
		case engine.EqualFold(a, "nx"):
			flags |= zaddNX
		case engine.EqualFold(a, "xx"):
			flags |= zaddXX
		case engine.EqualFold(a, "ch"):
			flags |= zaddCH
		case engine.EqualFold(a, "incr"):
			flags |= zaddIncr
		case engine.EqualFold(a, "gt"):
			flags |= zaddGT
		case engine.EqualFold(a, "lt"):
			flags |= zaddLT
		default:
			break options
		}
	}
	rest := len(c.Args) - idx
	if rest == 0 || rest%2 != 0 {
		c.Error(engine.ErrSyntax)
		return
	}
	pairs := rest / 2
	switch {
	case flags&zaddNX != 0 && flags&zaddXX != 0:
		c.Error(engine.ErrZAddXXNX)
		return
	case flags&zaddNX != 0 && flags&(zaddGT|zaddLT) != 0, flags&zaddGT != 0 && flags&zaddLT != 0:
		c.Error(engine.ErrZAddGTLTNX)
		return
	case flags&zaddIncr != 0 && pairs > 1:
		c.Error(engine.ErrZAddIncrPair)
		return
	}
	var one [1]float64
	scores := one[:0]
	if pairs > 1 {
		scores = make([]float64, 0, pairs)
	}
	for j := 0; j < pairs; j++ {
		f, ok := parseScore(c.Args[idx+2*j])
		if !ok {
			c.Error(engine.ErrNotFloat)
			return
		}
		scores = append(scores, f)
	}

	z, ok := zsetWrite(c, key)
	if !ok {
		return
	}
	incr := flags&zaddIncr != 0
	maxEntries, maxValue := zsetLimits(c)
	var added, updated, processed int
	var score float64
	if z == nil {
		if flags&zaddXX != 0 {
			zaddReply(c, incr, flags, processed, score, added, updated)
			return
		}
		z = keyspace.NewZSet()
		if maxEntries == 0 || maxValue < len(c.Args[idx+1]) {
			z.MarkBig()
		}
		c.DB.PutObject(key, z)
		c.Notify(config.NotifyNew, "new", key)
	}
	for j := 0; j < pairs; j++ {
		member := c.Args[idx+2*j+1]
		res, newScore := zsetAdd(z, member, scores[j], flags, maxEntries, maxValue)
		if res == zaddResNaN {
			if z.Len() == 0 {
				c.DB.Delete(key)
			}
			c.Dirty(added + updated)
			c.Error(engine.ErrZScoreNaN)
			zaddNotify(c, key, incr, added+updated)
			return
		}
		switch res {
		case zaddResAdded:
			added++
		case zaddResUpdated:
			updated++
		}
		if res != zaddResNop {
			processed++
		}
		score = newScore
	}
	c.Dirty(added + updated)
	if added > 0 {
		c.KeyReady(key)
	}
	zaddReply(c, incr, flags, processed, score, added, updated)
	zaddNotify(c, key, incr, added+updated)
}

// zaddNotify sends ZADD's event ("zincr" for INCR and ZINCRBY) when a
// member was added or its score changed: a score set to its current
// value, or refused by NX, XX, GT or LT, sends nothing.
func zaddNotify(c *engine.Ctx, key []byte, incr bool, changed int) {
	if changed == 0 {
		return
	}
	if incr {
		c.Notify(config.NotifyZSet, "zincr", key)
	} else {
		c.Notify(config.NotifyZSet, "zadd", key)
	}
}

func zaddReply(c *engine.Ctx, incr bool, flags zaddFlags, processed int, score float64, added, updated int) {
	switch {
	case incr && processed > 0:
		c.W.Double(score)
	case incr:
		c.W.Null()
	case flags&zaddCH != 0:
		c.W.Int(int64(added + updated))
	default:
		c.W.Int(int64(added))
	}
}

// zaddRes is what zsetAdd did.
type zaddRes uint8

const (
	zaddResUnchanged zaddRes = iota // processed, score unchanged
	zaddResAdded
	zaddResUpdated
	zaddResNop // refused by NX, XX, GT or LT
	zaddResNaN
)

// zsetAdd adds or updates one member under ZADD's flags (t_zset.c
// zsetAdd) and returns the outcome and the member's resulting score.
func zsetAdd(z *keyspace.ZSet, member []byte, score float64, flags zaddFlags, maxEntries, maxValue int) (zaddRes, float64) {
	cur, exists := z.Score(member)
	if exists {
		if flags&zaddNX != 0 {
			return zaddResNop, 0
		}
		if flags&zaddIncr != 0 {
			score += cur
			if math.IsNaN(score) {
				return zaddResNaN, 0
			}
		}
		if flags&zaddLT != 0 && score >= cur || flags&zaddGT != 0 && score <= cur {
			return zaddResNop, 0
		}
		if score != cur {
			z.Set(member, score)
			return zaddResUpdated, score
		}
		return zaddResUnchanged, score
	}
	if flags&zaddXX != 0 {
		return zaddResNop, 0
	}
	z.Grow(len(member), maxEntries, maxValue)
	z.Set(member, score)
	return zaddResAdded, score
}

// ---- point reads and removal ------------------------------------------------------

func zremCommand(c *engine.Ctx) {
	key := c.Args[1]
	z, ok := zsetWrite(c, key)
	if !ok {
		return
	}
	if z == nil {
		c.W.Int(0)
		return
	}
	deleted := 0
	for _, m := range c.Args[2:] {
		if z.Remove(m) {
			deleted++
			if z.Len() == 0 {
				break
			}
		}
	}
	if deleted > 0 {
		c.Notify(config.NotifyZSet, "zrem", key)
		zsetDeleteIfEmpty(c, key, z)
	}
	c.Dirty(deleted)
	c.W.Int(int64(deleted))
}

// zsetDeleteIfEmpty removes key once its sorted set is empty, with the
// "del" event that follows the command's own.
func zsetDeleteIfEmpty(c *engine.Ctx, key []byte, z *keyspace.ZSet) {
	if z.Len() == 0 {
		c.DB.Delete(key)
		c.Notify(config.NotifyGeneric, "del", key)
	}
}

// zsetStore stores the sorted set result under dst for the STORE
// commands (setKey): "new" when dst did not exist, then event.
func zsetStore(c *engine.Ctx, dst []byte, result *keyspace.ZSet, event string) {
	existed := c.DB.Exists(dst)
	c.DB.PutObject(dst, result)
	if !existed {
		c.Notify(config.NotifyNew, "new", dst)
	}
	c.Notify(config.NotifyZSet, event, dst)
	c.KeyReady(dst)
	c.Dirty(1)
}

// zsetStoreEmpty is a STORE command's empty result: dst is deleted, with
// a "del" event if there was a key to delete.
func zsetStoreEmpty(c *engine.Ctx, dst []byte) {
	if c.DB.Delete(dst) {
		c.Dirty(1)
		c.Notify(config.NotifyGeneric, "del", dst)
	}
}

func zscoreCommand(c *engine.Ctx) {
	z, ok := zsetRead(c, c.Args[1])
	if !ok {
		return
	}
	if z == nil {
		c.W.Null()
		return
	}
	s, found := z.Score(c.Args[2])
	if !found {
		c.W.Null()
		return
	}
	c.W.Double(s)
}

func zmscoreCommand(c *engine.Ctx) {
	z, ok := zsetRead(c, c.Args[1])
	if !ok {
		return
	}
	c.W.Array(len(c.Args) - 2)
	for _, m := range c.Args[2:] {
		if z == nil {
			c.W.Null()
			continue
		}
		if s, found := z.Score(m); found {
			c.W.Double(s)
		} else {
			c.W.Null()
		}
	}
}

func zcardCommand(c *engine.Ctx) {
	z, ok := zsetRead(c, c.Args[1])
	if !ok {
		return
	}
	if z == nil {
		c.W.Int(0)
		return
	}
	c.W.Int(int64(z.Len()))
}

func zcountCommand(c *engine.Ctx) {
	r, ok := parseScoreRange(c.Args[2], c.Args[3])
	if !ok {
		c.Error(engine.ErrZMinMaxFloat)
		return
	}
	z, ok := zsetRead(c, c.Args[1])
	if !ok {
		return
	}
	if z == nil {
		c.W.Int(0)
		return
	}
	start, end := z.ScoreBounds(r)
	c.W.Int(int64(max(end-start, 0)))
}

func zlexcountCommand(c *engine.Ctx) {
	lo, hi, ok := parseLexRange(c.Args[2], c.Args[3])
	if !ok {
		c.Error(engine.ErrZMinMaxLex)
		return
	}
	z, ok := zsetRead(c, c.Args[1])
	if !ok {
		return
	}
	if z == nil {
		c.W.Int(0)
		return
	}
	start, end := z.LexBounds(lo, hi)
	c.W.Int(int64(max(end-start, 0)))
}

func zrankCommand(c *engine.Ctx)    { zrankGeneric(c, false) }
func zrevrankCommand(c *engine.Ctx) { zrankGeneric(c, true) }

func zrankGeneric(c *engine.Ctx, rev bool) {
	z, ok := zsetRead(c, c.Args[1])
	if !ok {
		return
	}
	if z == nil {
		c.W.Null()
		return
	}
	r, found := z.Rank(c.Args[2])
	if !found {
		c.W.Null()
		return
	}
	if rev {
		r = z.Len() - 1 - r
	}
	c.W.Int(int64(r))
}

// ---- ranges ----------------------------------------------------------------

// zrangeType is how a range is given (t_zset.c zrange_type).
type zrangeType uint8

const (
	zrangeAuto zrangeType = iota
	zrangeRank
	zrangeScore
	zrangeLex
)

// zrangeDir is the direction of a range (zrange_direction).
type zrangeDir uint8

const (
	zrangeDirAuto zrangeDir = iota
	zrangeForward
	zrangeReverse
)

func zrangeCommand(c *engine.Ctx)      { zrangeGeneric(c, 1, false, zrangeAuto, zrangeDirAuto) }
func zrevrangeCommand(c *engine.Ctx)   { zrangeGeneric(c, 1, false, zrangeRank, zrangeReverse) }
func zrangestoreCommand(c *engine.Ctx) { zrangeGeneric(c, 2, true, zrangeAuto, zrangeDirAuto) }
func zrangebyscoreCommand(c *engine.Ctx) {
	zrangeGeneric(c, 1, false, zrangeScore, zrangeForward)
}
func zrevrangebyscoreCommand(c *engine.Ctx) {
	zrangeGeneric(c, 1, false, zrangeScore, zrangeReverse)
}
func zrangebylexCommand(c *engine.Ctx)    { zrangeGeneric(c, 1, false, zrangeLex, zrangeForward) }
func zrevrangebylexCommand(c *engine.Ctx) { zrangeGeneric(c, 1, false, zrangeLex, zrangeReverse) }

// zrangeGeneric is the ZRANGE family (zrangeGenericCommand): the source
// key at argStart, then min, max and options; store writes the result to
// Args[1] (ZRANGESTORE) instead of replying with it.
func zrangeGeneric(c *engine.Ctx, argStart int, store bool, typ zrangeType, dir zrangeDir) {
	minIdx, maxIdx := argStart+1, argStart+2
	withScores := false
	offset, limit := int64(0), int64(-1)
	for j := argStart + 3; j < len(c.Args); j++ {
		a := c.Args[j]
		left := len(c.Args) - j - 1
		switch {
		case !store && engine.EqualFold(a, "withscores"):
			withScores = true
		case engine.EqualFold(a, "limit") && left >= 2:
			var ok bool
			if offset, ok = c.IntArg(j + 1); !ok {
				return
			}
			if limit, ok = c.IntArg(j + 2); !ok {
				return
			}
			j += 2
		case dir == zrangeDirAuto && engine.EqualFold(a, "rev"):
			dir = zrangeReverse
		case typ == zrangeAuto && engine.EqualFold(a, "bylex"):
			typ = zrangeLex
		case typ == zrangeAuto && engine.EqualFold(a, "byscore"):
			typ = zrangeScore
		default:
			c.Error(engine.ErrSyntax)
			return
		}
	}
	if dir == zrangeDirAuto {
		dir = zrangeForward
	}
	if typ == zrangeAuto {
		typ = zrangeRank
	}
	if limit != -1 && typ == zrangeRank {
		c.Error(engine.ErrZLimitRank)
		return
	}
	if withScores && typ == zrangeLex {
		c.Error(engine.ErrZWithscoresLex)
		return
	}
	rev := dir == zrangeReverse
	if rev && typ != zrangeRank {
		minIdx, maxIdx = maxIdx, minIdx
	}

	var start, end int64
	var sr keyspace.ScoreRange
	var lo, hi keyspace.LexBound
	switch typ {
	case zrangeRank:
		var ok bool
		if start, ok = c.IntArg(minIdx); !ok {
			return
		}
		if end, ok = c.IntArg(maxIdx); !ok {
			return
		}
	case zrangeScore:
		var ok bool
		if sr, ok = parseScoreRange(c.Args[minIdx], c.Args[maxIdx]); !ok {
			c.Error(engine.ErrZMinMaxFloat)
			return
		}
	case zrangeLex:
		var ok bool
		if lo, hi, ok = parseLexRange(c.Args[minIdx], c.Args[maxIdx]); !ok {
			c.Error(engine.ErrZMinMaxLex)
			return
		}
	}

	z, ok := zsetRead(c, c.Args[argStart])
	if !ok {
		return
	}
	if z != nil && typ == zrangeScore && !rev && !store && offset >= 0 {
		zrangeScoreForward(c, z, sr, offset, limit, withScores)
		return
	}
	// Positions [from, to) in ascending order, then walked upwards or
	// downwards.
	var from, to int
	if z != nil {
		n := int64(z.Len())
		switch typ {
		case zrangeRank:
			if start < 0 {
				start += n
			}
			if end < 0 {
				end += n
			}
			start = max(start, 0)
			if start <= end && start < n {
				end = min(end, n-1)
				if rev {
					from, to = int(n-1-end), int(n-start)
				} else {
					from, to = int(start), int(end+1)
				}
			}
		case zrangeScore, zrangeLex:
			if typ == zrangeScore {
				from, to = z.ScoreBounds(sr)
			} else {
				from, to = z.LexBounds(lo, hi)
			}
			switch {
			case from >= to || offset < 0 || offset >= int64(to-from):
				from, to = 0, 0
			case rev:
				to -= int(offset)
				if limit >= 0 && int64(to-from) > limit {
					from = to - int(limit)
				}
			default:
				from += int(offset)
				if limit >= 0 && int64(to-from) > limit {
					to = from + int(limit)
				}
			}
		}
	}
	count := to - from

	if store {
		zrangeStore(c, z, from, to)
		return
	}
	if z == nil {
		c.W.Array(0)
		return
	}
	withScores = withScores && typ != zrangeLex
	scoredHeader(c, count, withScores)
	if count == 0 {
		return
	}
	left := count
	emit := func(m string, s float64) bool {
		writeScored(c, m, s, withScores)
		left--
		return left > 0
	}
	if rev {
		z.Descend(to-1, emit)
	} else {
		z.Ascend(from, emit)
	}
}

// zrangeScoreForward answers an ascending score range (ZRANGEBYSCORE,
// ZRANGE BYSCORE) by walking from the range's start, skipping offset
// items: no rank is computed, so a LIMIT on a large set costs one
// descent of the tree, as Redis's skiplist walk does.
func zrangeScoreForward(c *engine.Ctx, z *keyspace.ZSet, sr keyspace.ScoreRange, offset, limit int64, withScores bool) {
	mark := c.W.DeferArray()
	n := 0
	if limit != 0 {
		z.AscendScores(sr, func(m string, s float64) bool {
			if offset > 0 {
				offset--
				return true
			}
			writeScored(c, m, s, withScores)
			n++
			return limit < 0 || int64(n) < limit
		})
	}
	if withScores && c.W.Proto() == 2 {
		n *= 2
	}
	c.W.FillArray(mark, n)
}

// zrangeStore stores positions [from, to) of src at Args[1] as a new
// sorted set (zrangeResultFinalizeStore), deleting it when empty.
func zrangeStore(c *engine.Ctx, src *keyspace.ZSet, from, to int) {
	dst := c.Args[1]
	if to <= from {
		c.W.Int(0)
		zsetStoreEmpty(c, dst)
		return
	}
	// Built as Redis builds it (zsetTypeCreate with the length as a hint,
	// then zsetAdd), so that the encoding and the zero scores match.
	maxEntries, maxValue := zsetLimits(c)
	out := keyspace.NewZSet()
	if to-from > maxEntries {
		out.MarkBig()
	}
	src.Ascend(from, func(m string, s float64) bool {
		out.Grow(len(m), maxEntries, maxValue)
		out.Set([]byte(m), s)
		return out.Len() < to-from
	})
	zsetStore(c, dst, out, "zrangestore")
	c.W.Int(int64(out.Len()))
}

// ---- range removal ------------------------------------------------------------

func zremrangebyrankCommand(c *engine.Ctx)  { zremrangeGeneric(c, zrangeRank) }
func zremrangebyscoreCommand(c *engine.Ctx) { zremrangeGeneric(c, zrangeScore) }
func zremrangebylexCommand(c *engine.Ctx)   { zremrangeGeneric(c, zrangeLex) }

// zremrangeEvents are zremrangeGeneric's events, by zrangeType.
var zremrangeEvents = map[zrangeType]string{
	zrangeRank:  "zremrangebyrank",
	zrangeScore: "zremrangebyscore",
	zrangeLex:   "zremrangebylex",
}

// zremrangeGeneric is ZREMRANGEBYRANK/SCORE/LEX (zremrangeGenericCommand):
// its event when a member went, then "del" when the key went with them.
func zremrangeGeneric(c *engine.Ctx, typ zrangeType) {
	key := c.Args[1]
	var start, end int64
	var sr keyspace.ScoreRange
	var lo, hi keyspace.LexBound
	var ok bool
	switch typ {
	case zrangeRank:
		if start, ok = c.IntArg(2); !ok {
			return
		}
		if end, ok = c.IntArg(3); !ok {
			return
		}
	case zrangeScore:
		if sr, ok = parseScoreRange(c.Args[2], c.Args[3]); !ok {
			c.Error(engine.ErrZMinMaxFloat)
			return
		}
	case zrangeLex:
		if lo, hi, ok = parseLexRange(c.Args[2], c.Args[3]); !ok {
			c.Error(engine.ErrZMinMaxLex)
			return
		}
	}
	z, ok := zsetWrite(c, key)
	if !ok {
		return
	}
	if z == nil {
		c.W.Int(0)
		return
	}
	var from, to int
	switch typ {
	case zrangeRank:
		n := int64(z.Len())
		if start < 0 {
			start += n
		}
		if end < 0 {
			end += n
		}
		start = max(start, 0)
		if start > end || start >= n {
			c.W.Int(0)
			return
		}
		end = min(end, n-1)
		from, to = int(start), int(end+1)
	case zrangeScore:
		from, to = z.ScoreBounds(sr)
	case zrangeLex:
		from, to = z.LexBounds(lo, hi)
	}
	deleted := 0
	if from < to {
		deleted = z.DeleteRange(from, to)
	}
	if deleted > 0 {
		c.Notify(config.NotifyZSet, zremrangeEvents[typ], key)
		zsetDeleteIfEmpty(c, key, z)
	}
	c.Dirty(deleted)
	c.W.Int(int64(deleted))
}

// ---- pops -------------------------------------------------------------------

func zpopminCommand(c *engine.Ctx) { zpopMinMax(c, false) }
func zpopmaxCommand(c *engine.Ctx) { zpopMinMax(c, true) }

// zpopMinMax is ZPOPMIN/ZPOPMAX key [count] (zpopMinMaxCommand).
func zpopMinMax(c *engine.Ctx, max bool) {
	if len(c.Args) > 3 {
		c.Error(engine.ErrSyntax)
		return
	}
	count := int64(-1)
	if len(c.Args) == 3 {
		n, ok := engine.ParseInt(c.Args[2])
		if !ok || n < 0 {
			c.Error(engine.ErrCountPositive)
			return
		}
		count = n
	}
	nested := c.W.Proto() > 2 && count != -1
	zpopGeneric(c, c.Args[1:2], max, false, count, nested, false)
}

// zpopGeneric pops up to count members (count -1: one, flat) from the
// first non-empty key of keys (genericZpopCommand). emitKey prefixes the
// reply with the key (ZMPOP); nilWhenEmpty answers a null array when no
// key exists. A pop sends one "zpopmin" or "zpopmax" event, then "del"
// when the key went; served blocked clients send the same. It returns
// the key popped from and how many members it popped, for the callers
// that propagate the pop as ZPOPMIN or ZPOPMAX.
func zpopGeneric(c *engine.Ctx, keys [][]byte, max, emitKey bool, count int64, nested, nilWhenEmpty bool) (key []byte, popped int) {
	var z *keyspace.ZSet
	for _, k := range keys {
		var ok bool
		z, ok = zsetWrite(c, k)
		if !ok {
			return nil, 0
		}
		if z != nil {
			key = k
			break
		}
	}
	if z == nil {
		if nilWhenEmpty {
			c.W.NullArray()
		} else {
			c.W.Array(0)
		}
		return nil, 0
	}
	if count == 0 {
		c.W.Array(0)
		return key, 0
	}
	if count == -1 {
		count = 1
	}
	n := int(min(count, int64(z.Len())))
	switch {
	case !nested && !emitKey:
		c.W.Array(2 * n)
	case nested && !emitKey:
		c.W.Array(n)
	case !nested && emitKey:
		c.W.Array(2*n + 1)
		c.W.Bulk(key)
	default:
		c.W.Array(2)
		c.W.Bulk(key)
		c.W.Array(n)
	}
	for i := 0; i < n; i++ {
		m, s, _ := z.Pop(max)
		if nested {
			c.W.Array(2)
		}
		c.W.BulkString(m)
		c.W.Double(s)
	}
	if max {
		c.Notify(config.NotifyZSet, "zpopmax", key)
	} else {
		c.Notify(config.NotifyZSet, "zpopmin", key)
	}
	zsetDeleteIfEmpty(c, key, z)
	c.Dirty(n)
	return key, n
}

// zmpopCommand is ZMPOP numkeys key [key ...] MIN|MAX [COUNT count].
func zmpopCommand(c *engine.Ctx) {
	numkeys, ok := engine.ParseInt(c.Args[1])
	if !ok || numkeys < 1 {
		c.Error(engine.ErrNumkeysPositive)
		return
	}
	if numkeys >= int64(len(c.Args)) {
		c.Error(engine.ErrSyntax)
		return
	}
	whereIdx := 1 + numkeys + 1
	if whereIdx >= int64(len(c.Args)) {
		c.Error(engine.ErrSyntax)
		return
	}
	var max bool
	switch w := c.Args[whereIdx]; {
	case engine.EqualFold(w, "min"):
	case engine.EqualFold(w, "max"):
		max = true
	default:
		c.Error(engine.ErrSyntax)
		return
	}
	count, ok := parseMpopCount(c, int(whereIdx)+1)
	if !ok {
		return
	}
	if key, n := zpopGeneric(c, c.Args[2:whereIdx], max, true, count, true, true); n > 0 {
		propagatePop(c, zpopName(max), key, n) // ZPOPMIN|ZPOPMAX key n
	}
}

// ---- ZSCAN ------------------------------------------------------------------

// zscanCommand is ZSCAN key cursor [MATCH pattern] [COUNT count]. A
// small (listpack) set is returned whole with cursor 0, as Redis does. A
// large one is walked in the order of its members' hash positions and the
// cursor is the position reached (ZSet.Scan), so a member present for the
// whole scan is returned at least once while the set grows or shrinks.
func zscanCommand(c *engine.Ctx) {
	cursor, z, o, ok := beginScan(c, zsetRead)
	if !ok {
		return
	}
	var out [][]byte
	next := z.Scan(cursor, int(o.count), func(m []byte, s float64) {
		if o.pattern == nil || sds.Match(o.pattern, m, false) {
			out = append(out, m, resp.AppendDouble(nil, s))
		}
	})
	writeScanReply(c, next, out)
}

// ---- ZRANDMEMBER ---------------------------------------------------------------

// zrandmemberCommand is ZRANDMEMBER key [count [WITHSCORES]]
// (zrandmemberCommand, zrandmemberWithCountCommand). A negative count
// may repeat members; a positive one returns distinct members, the whole
// set in descending order when it asks for at least all of them.
func zrandmemberCommand(c *engine.Ctx) {
	if len(c.Args) == 2 {
		z, ok := zsetRead(c, c.Args[1])
		if !ok {
			return
		}
		if z == nil {
			c.W.Null()
			return
		}
		m, _ := z.At(rand.IntN(z.Len()))
		c.W.BulkString(m)
		return
	}
	l, ok := engine.ParseInt(c.Args[2])
	if !ok {
		c.Error(engine.ErrNotInteger)
		return
	}
	if l == math.MinInt64 {
		c.Error(engine.ErrLongRange)
		return
	}
	withScores := false
	if len(c.Args) > 4 || len(c.Args) == 4 && !engine.EqualFold(c.Args[3], "withscores") {
		c.Error(engine.ErrSyntax)
		return
	}
	if len(c.Args) == 4 {
		withScores = true
		if l < -math.MaxInt64/2 || l > math.MaxInt64/2 {
			c.Error(engine.ErrValueOutOfRange)
			return
		}
	}
	z, ok := zsetRead(c, c.Args[1])
	if !ok {
		return
	}
	if z == nil || l == 0 {
		c.W.Array(0)
		return
	}
	size := z.Len()
	if l < 0 || l == 1 {
		count := int(min(-l, math.MaxInt32))
		if l == 1 {
			count = 1
		}
		scoredHeader(c, count, withScores)
		for i := 0; i < count; i++ {
			m, s := z.At(rand.IntN(size))
			writeScored(c, m, s, withScores)
		}
		return
	}
	if l >= int64(size) {
		// Redis's set iterator (zuiNext) walks from the tail.
		scoredHeader(c, size, withScores)
		z.Descend(size-1, func(m string, s float64) bool {
			writeScored(c, m, s, withScores)
			return true
		})
		return
	}
	// Distinct positions by a partial Fisher-Yates shuffle over a sparse
	// permutation: O(count) time and space.
	count := int(l)
	swapped := make(map[int]int, count)
	at := func(i int) int {
		if v, ok := swapped[i]; ok {
			return v
		}
		return i
	}
	scoredHeader(c, count, withScores)
	for i := 0; i < count; i++ {
		j := i + rand.IntN(size-i)
		pos := at(j)
		swapped[j] = at(i)
		m, s := z.At(pos)
		writeScored(c, m, s, withScores)
	}
}

// ---- ZUNION / ZINTER / ZDIFF ------------------------------------------------------

// zsetOp is the operation of zunionInterDiffGeneric.
type zsetOp uint8

const (
	zopUnion zsetOp = iota
	zopInter
	zopDiff
)

// zsetOpStoreEvents are the STORE forms' events, by operation.
var zsetOpStoreEvents = [...]string{
	zopUnion: "zunionstore",
	zopInter: "zinterstore",
	zopDiff:  "zdiffstore",
}

// zaggregate is AGGREGATE's function.
type zaggregate uint8

const (
	zaggSum zaggregate = iota
	zaggMin
	zaggMax
)

// zunionInterAggregate folds val into *target (t_zset.c): a sum that is
// NaN (inf + -inf) becomes 0.
func zunionInterAggregate(target *float64, val float64, agg zaggregate) {
	switch agg {
	case zaggSum:
		*target += val
		if math.IsNaN(*target) {
			*target = 0
		}
	case zaggMin:
		if val < *target {
			*target = val
		}
	case zaggMax:
		if val > *target {
			*target = val
		}
	}
}

// zsrc is one input of the set operations: a sorted set, a plain set
// (every member scores 1) or nothing (a missing key).
type zsrc struct {
	z      *keyspace.ZSet
	s      *keyspace.Set
	weight float64
}

func (x *zsrc) len() int {
	switch {
	case x.z != nil:
		return x.z.Len()
	case x.s != nil:
		return x.s.Len()
	}
	return 0
}

func (x *zsrc) each(fn func(m string, score float64) bool) {
	switch {
	case x.z != nil:
		x.z.Ascend(0, fn)
	case x.s != nil:
		x.s.Each(func(m keyspace.Member) bool { return fn(m.String(), 1) })
	}
}

func (x *zsrc) find(m string) (float64, bool) {
	switch {
	case x.z != nil:
		return x.z.Score([]byte(m))
	case x.s != nil:
		if x.s.Has([]byte(m)) {
			return 1, true
		}
	}
	return 0, false
}

func zunionCommand(c *engine.Ctx)      { zsetOpGeneric(c, false, 1, zopUnion, false) }
func zinterCommand(c *engine.Ctx)      { zsetOpGeneric(c, false, 1, zopInter, false) }
func zdiffCommand(c *engine.Ctx)       { zsetOpGeneric(c, false, 1, zopDiff, false) }
func zintercardCommand(c *engine.Ctx)  { zsetOpGeneric(c, false, 1, zopInter, true) }
func zunionstoreCommand(c *engine.Ctx) { zsetOpGeneric(c, true, 2, zopUnion, false) }
func zinterstoreCommand(c *engine.Ctx) { zsetOpGeneric(c, true, 2, zopInter, false) }
func zdiffstoreCommand(c *engine.Ctx)  { zsetOpGeneric(c, true, 2, zopDiff, false) }

// zsetOpGeneric is zunionInterDiffGenericCommand: numkeys at numkeysIdx,
// the keys (sorted sets or sets), then WEIGHTS, AGGREGATE, WITHSCORES or
// (ZINTERCARD) LIMIT. store writes the result to Args[1].
func zsetOpGeneric(c *engine.Ctx, store bool, numkeysIdx int, op zsetOp, cardOnly bool) {
	setnum, ok := c.IntArg(numkeysIdx)
	if !ok {
		return
	}
	if setnum < 1 {
		c.Error(engine.ErrAtLeastOneKey(c.Cmd.FullName()))
		return
	}
	if setnum > int64(len(c.Args)-numkeysIdx-1) {
		c.Error(engine.ErrSyntax)
		return
	}
	n := int(setnum)
	src := make([]zsrc, n)
	j := numkeysIdx + 1
	for i := 0; i < n; i, j = i+1, j+1 {
		src[i].weight = 1
		e := c.DB.Lookup(c.Args[j])
		if e == nil {
			continue
		}
		switch e.Type() {
		case keyspace.TypeZSet:
			src[i].z = e.Obj().(*keyspace.ZSet)
		case keyspace.TypeSet:
			src[i].s = e.Obj().(*keyspace.Set)
		default:
			c.Error(engine.ErrWrongType)
			return
		}
	}
	agg := zaggSum
	withScores := false
	limit := int64(0)
	for j < len(c.Args) {
		remaining := len(c.Args) - j
		a := c.Args[j]
		switch {
		case op != zopDiff && !cardOnly && remaining >= n+1 && engine.EqualFold(a, "weights"):
			j++
			for i := 0; i < n; i, j = i+1, j+1 {
				w, ok := parseScore(c.Args[j])
				if !ok {
					c.Error(engine.ErrZWeightFloat)
					return
				}
				src[i].weight = w
			}
		case op != zopDiff && !cardOnly && remaining >= 2 && engine.EqualFold(a, "aggregate"):
			switch b := c.Args[j+1]; {
			case engine.EqualFold(b, "sum"):
				agg = zaggSum
			case engine.EqualFold(b, "min"):
				agg = zaggMin
			case engine.EqualFold(b, "max"):
				agg = zaggMax
			default:
				c.Error(engine.ErrSyntax)
				return
			}
			j += 2
		case !store && !cardOnly && engine.EqualFold(a, "withscores"):
			withScores = true
			j++
		case cardOnly && remaining >= 2 && engine.EqualFold(a, "limit"):
			l, ok := engine.ParseInt(c.Args[j+1])
			if !ok || l < 0 {
				c.Error(engine.ErrLimitNegative)
				return
			}
			limit = l
			j += 2
		default:
			c.Error(engine.ErrSyntax)
			return
		}
	}

	dst := keyspace.NewZSet()
	dst.MarkBig()
	cardinality := int64(0)
	switch op {
	case zopInter:
		slices.SortStableFunc(src, func(a, b zsrc) int { return a.len() - b.len() })
		if src[0].len() == 0 {
			break
		}
		src[0].each(func(m string, s float64) bool {
			score := src[0].weight * s
			if math.IsNaN(score) {
				score = 0
			}
			k := 1
			for ; k < n; k++ {
				v, found := src[k].find(m)
				if !found {
					break
				}
				zunionInterAggregate(&score, v*src[k].weight, agg)
			}
			if k < n {
				return true
			}
			if cardOnly {
				cardinality++
				return limit == 0 || cardinality < limit
			}
			dst.Set([]byte(m), score)
			return true
		})
	case zopUnion:
		slices.SortStableFunc(src, func(a, b zsrc) int { return a.len() - b.len() })
		acc := make(map[string]float64, src[n-1].len())
		var order []string
		for i := range src {
			src[i].each(func(m string, s float64) bool {
				score := src[i].weight * s
				if math.IsNaN(score) {
					score = 0
				}
				if cur, found := acc[m]; found {
					zunionInterAggregate(&cur, score, agg)
					acc[m] = cur
				} else {
					acc[m] = score
					order = append(order, m)
				}
				return true
			})
		}
		for _, m := range order {
			dst.Set([]byte(m), acc[m])
		}
	case zopDiff:
		if src[0].len() == 0 {
			break
		}
		src[0].each(func(m string, s float64) bool {
			for k := 1; k < n; k++ {
				if _, found := src[k].find(m); found {
					return true
				}
			}
			dst.Set([]byte(m), s)
			return true
		})
	}

	switch {
	case store:
		key := c.Args[1]
		if dst.Len() == 0 {
			c.W.Int(0)
			zsetStoreEmpty(c, key)
			return
		}
		maxEntries, maxValue := zsetLimits(c)
		dst.Fit(maxEntries, maxValue)
		zsetStore(c, key, dst, zsetOpStoreEvents[op])
		c.W.Int(int64(dst.Len()))
	case cardOnly:
		c.W.Int(cardinality)
	default:
		scoredHeader(c, dst.Len(), withScores)
		dst.Ascend(0, func(m string, s float64) bool {
			writeScored(c, m, s, withScores)
			return true
		})
	}
}
