package commands

import (
	"github.com/zredis/zredis/config"
	"github.com/zredis/zredis/engine"
	"github.com/zredis/zredis/keyspace"
)

// String commands: MGET, MSET and MSETNX (Redis t_string.c).
func init() {
	register(
		&engine.Command{Name: "mget", Arity: -2, Flags: engine.ReadOnly | engine.Fast, ACL: "@read @string @fast", FirstKey: 1, LastKey: -1, KeyStep: 1, Group: "string", Run: mgetCommand},
		&engine.Command{Name: "mset", Arity: -3, Flags: engine.Write | engine.DenyOOM, ACL: "@write @string @slow", FirstKey: 1, LastKey: -1, KeyStep: 2, Group: "string", Run: msetCommand},
		&engine.Command{Name: "msetnx", Arity: -3, Flags: engine.Write | engine.DenyOOM, ACL: "@write @string @slow", FirstKey: 1, LastKey: -1, KeyStep: 2, Group: "string", Run: msetnxCommand},
	)
}

// MGET key [key ...]: a null for every key that is missing or not a
// string (never WRONGTYPE).
func mgetCommand(c *engine.Ctx) {
	c.W.Array(len(c.Args) - 1)
	for _, key := range c.Args[1:] {
		e := c.DB.Lookup(key)
		if e == nil || e.Type() != keyspace.TypeString {
			c.W.Null()
			continue
		}
		replyStr(c, e)
	}
}

func msetCommand(c *engine.Ctx)   { msetGeneric(c, false) }
func msetnxCommand(c *engine.Ctx) { msetGeneric(c, true) }

// msetGeneric implements MSET and MSETNX (t_string.c msetGenericCommand):
// with nx nothing is set when any of the keys exists. Every pair counts as
// one change; a key set twice keeps the last value.
func msetGeneric(c *engine.Ctx, nx bool) {
	if len(c.Args)%2 == 0 {
		c.Error(engine.ErrWrongArgs(c.Cmd.Name))
		return
	}
	if nx {
		for j := 1; j < len(c.Args); j += 2 {
			if c.DB.Exists(c.Args[j]) {
				c.W.Int(0)
				return
			}
		}
	}
	notifyNew := c.Notifies(config.NotifyNew)
	for j := 1; j < len(c.Args); j += 2 {
		fresh := notifyNew && !c.DB.Exists(c.Args[j])
		setString(c, c.Args[j], c.Args[j+1], false, 0)
		if fresh {
			c.Notify(config.NotifyNew, "new", c.Args[j])
		}
		c.Notify(config.NotifyString, "set", c.Args[j])
	}
	c.Dirty((len(c.Args) - 1) / 2)
	if nx {
		c.W.Int(1)
	} else {
		c.W.OK()
	}
}
