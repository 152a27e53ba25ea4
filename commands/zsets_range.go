package commands

import (
	"github.com/zredis/zredis/engine"
	"github.com/zredis/zredis/keyspace"
)

// Sorted set commands: ranges (Redis t_zset.c).
func init() {
	register(
		&engine.Command{Name: "zrange", Arity: -4, Flags: engine.ReadOnly, ACL: "@read @sortedset @slow", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "sorted-set", Run: zrangeCommand},
		&engine.Command{Name: "zrevrange", Arity: -4, Flags: engine.ReadOnly, ACL: "@read @sortedset @slow", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "sorted-set", Run: zrevrangeCommand},
		&engine.Command{Name: "zrangebyscore", Arity: -4, Flags: engine.ReadOnly, ACL: "@read @sortedset @slow", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "sorted-set", Run: zrangebyscoreCommand},
		&engine.Command{Name: "zrevrangebyscore", Arity: -4, Flags: engine.ReadOnly, ACL: "@read @sortedset @slow", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "sorted-set", Run: zrevrangebyscoreCommand},
		&engine.Command{Name: "zrangebylex", Arity: -4, Flags: engine.ReadOnly, ACL: "@read @sortedset @slow", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "sorted-set", Run: zrangebylexCommand},
		&engine.Command{Name: "zrevrangebylex", Arity: -4, Flags: engine.ReadOnly, ACL: "@read @sortedset @slow", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "sorted-set", Run: zrevrangebylexCommand},
		&engine.Command{Name: "zrangestore", Arity: -5, Flags: engine.Write | engine.DenyOOM, ACL: "@write @sortedset @slow", FirstKey: 1, LastKey: 2, KeyStep: 1, Group: "sorted-set", Run: zrangestoreCommand},
	)
}

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
		out.Set([]byte(m), s, false)
		return out.Len() < to-from
	})
	zsetStore(c, dst, out, "zrangestore")
	c.W.Int(int64(out.Len()))
}
