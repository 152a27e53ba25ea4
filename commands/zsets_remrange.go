package commands

import (
	"github.com/zredis/zredis/config"
	"github.com/zredis/zredis/engine"
	"github.com/zredis/zredis/keyspace"
)

// Sorted set commands: range removal (Redis t_zset.c).
func init() {
	register(
		&engine.Command{Name: "zremrangebyscore", Arity: 4, Flags: engine.Write, ACL: "@write @sortedset @slow", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "sorted-set", Run: zremrangebyscoreCommand},
		&engine.Command{Name: "zremrangebyrank", Arity: 4, Flags: engine.Write, ACL: "@write @sortedset @slow", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "sorted-set", Run: zremrangebyrankCommand},
		&engine.Command{Name: "zremrangebylex", Arity: 4, Flags: engine.Write, ACL: "@write @sortedset @slow", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "sorted-set", Run: zremrangebylexCommand},
	)
}

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
