package commands

import (
	"math"

	"github.com/zredis/zredis/config"
	"github.com/zredis/zredis/engine"
	"github.com/zredis/zredis/keyspace"
)

// Sorted set commands: ZADD and ZINCRBY (Redis t_zset.c).
func init() {
	register(
		&engine.Command{Name: "zadd", Arity: -4, Flags: engine.Write | engine.DenyOOM | engine.Fast, ACL: "@write @sortedset @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "sorted-set", Run: zaddCommand},
		&engine.Command{Name: "zincrby", Arity: 4, Flags: engine.Write | engine.DenyOOM | engine.Fast, ACL: "@write @sortedset @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "sorted-set", Run: zincrbyCommand},
	)
}

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
	overwrite := !c.DB.SnapshotLive()
	for j := 0; j < pairs; j++ {
		member := c.Args[idx+2*j+1]
		res, newScore := zsetAdd(z, member, scores[j], flags, maxEntries, maxValue, overwrite)
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
// overwrite: no snapshot is live (ZSet.Set).
func zsetAdd(z *keyspace.ZSet, member []byte, score float64, flags zaddFlags, maxEntries, maxValue int, overwrite bool) (zaddRes, float64) {
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
			z.Set(member, score, overwrite)
			return zaddResUpdated, score
		}
		return zaddResUnchanged, score
	}
	if flags&zaddXX != 0 {
		return zaddResNop, 0
	}
	z.Grow(len(member), maxEntries, maxValue)
	z.Set(member, score, false)
	return zaddResAdded, score
}
