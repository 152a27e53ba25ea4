package commands

import (
	"github.com/zredis/zredis/config"
	"github.com/zredis/zredis/engine"
	"github.com/zredis/zredis/keyspace"
)

// Sorted set commands: point reads and removal (Redis t_zset.c).
func init() {
	register(
		&engine.Command{Name: "zrem", Arity: -3, Flags: engine.Write | engine.Fast, ACL: "@write @sortedset @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "sorted-set", Run: zremCommand},
		&engine.Command{Name: "zscore", Arity: 3, Flags: engine.ReadOnly | engine.Fast, ACL: "@read @sortedset @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "sorted-set", Run: zscoreCommand},
		&engine.Command{Name: "zmscore", Arity: -3, Flags: engine.ReadOnly | engine.Fast, ACL: "@read @sortedset @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "sorted-set", Run: zmscoreCommand},
		&engine.Command{Name: "zcard", Arity: 2, Flags: engine.ReadOnly | engine.Fast, ACL: "@read @sortedset @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "sorted-set", Run: zcardCommand},
		&engine.Command{Name: "zcount", Arity: 4, Flags: engine.ReadOnly | engine.Fast, ACL: "@read @sortedset @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "sorted-set", Run: zcountCommand},
		&engine.Command{Name: "zlexcount", Arity: 4, Flags: engine.ReadOnly | engine.Fast, ACL: "@read @sortedset @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "sorted-set", Run: zlexcountCommand},
		&engine.Command{Name: "zrank", Arity: 3, Flags: engine.ReadOnly | engine.Fast, ACL: "@read @sortedset @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "sorted-set", Run: zrankCommand},
		&engine.Command{Name: "zrevrank", Arity: 3, Flags: engine.ReadOnly | engine.Fast, ACL: "@read @sortedset @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "sorted-set", Run: zrevrankCommand},
	)
}

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
