package commands

import (
	"github.com/zredis/zredis/config"
	"github.com/zredis/zredis/engine"
	"github.com/zredis/zredis/keyspace"
)

// Sorted set commands: pops (Redis t_zset.c).
func init() {
	register(
		&engine.Command{Name: "zpopmin", Arity: -2, Flags: engine.Write | engine.Fast, ACL: "@write @sortedset @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "sorted-set", Run: zpopminCommand},
		&engine.Command{Name: "zpopmax", Arity: -2, Flags: engine.Write | engine.Fast, ACL: "@write @sortedset @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "sorted-set", Run: zpopmaxCommand},
		&engine.Command{Name: "zmpop", Arity: -4, Flags: engine.Write | engine.MovableKeys, ACL: "@write @sortedset @slow", Group: "sorted-set", Run: zmpopCommand, Keys: numkeysKeys(1)},
	)
}

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
