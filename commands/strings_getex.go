package commands

import (
	"github.com/zredis/zredis/config"
	"github.com/zredis/zredis/engine"
	"github.com/zredis/zredis/keyspace"
)

// String commands: GETDEL and GETEX (Redis t_string.c).
func init() {
	register(
		// GETDEL and GETEX write (they delete the key or change its TTL):
		// write, not readonly, and no denyoom since they never grow memory.
		&engine.Command{Name: "getdel", Arity: 2, Flags: engine.Write | engine.Fast, ACL: "@write @string @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "string", Run: getdelCommand},
		&engine.Command{Name: "getex", Arity: -2, Flags: engine.Write | engine.Fast, ACL: "@write @string @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "string", Run: getexCommand},
	)
}

// GETDEL key: GET, then delete the key when it held a string.
func getdelCommand(c *engine.Ctx) {
	if !getGeneric(c, c.Args[1]) {
		return
	}
	if c.DB.DeleteAs(c.Args[1], keyspace.FreeUserDel) {
		c.Dirty(1)
		propagateDelete(c, c.Args[1], "lazyfree-lazy-user-del") // DEL or UNLINK
		c.Notify(config.NotifyGeneric, "del", c.Args[1])
	}
}

// GETEX key [EX s|PX ms|EXAT ts|PXAT ms-ts|PERSIST] (t_string.c
// getexCommand). Without options it is GET and leaves the TTL alone. The
// expire argument is validated only once the key is known to hold a
// string, and the value is replied before the key changes. An absolute
// deadline already past deletes the key on a master, an explicit deletion
// that Redis propagates as DEL and that is no expiry; a replica stores the
// past deadline and waits for its master's DEL.
func getexCommand(c *engine.Ctx) {
	o, ok := parseSetOptions(c.Args, 2, true)
	if !ok {
		c.Error(engine.ErrSyntax)
		return
	}
	key := c.Args[1]
	e := c.DB.Lookup(key)
	if e == nil {
		c.W.Null()
		return
	}
	if e.Type() != keyspace.TypeString {
		c.Error(engine.ErrWrongType)
		return
	}
	var at int64
	if o.expire != nil {
		if at, ok = expireAt(c, o.expire, o.flags); !ok {
			return
		}
	}
	replyStr(c, e)
	switch {
	case o.flags&(setEXAT|setPXAT) != 0 && at <= c.KS.Now() && !c.KS.IsReplica():
		c.DB.DeleteAs(key, keyspace.FreeExpire)
		c.Dirty(1)
		propagateDelete(c, key, "lazyfree-lazy-expire") // DEL or UNLINK
		c.Notify(config.NotifyGeneric, "del", key)
	case o.expire != nil:
		c.DB.SetExpire(key, at)
		c.Dirty(1)
		propagatePexpireat(c, key, at) // absolute
		c.Notify(config.NotifyGeneric, "expire", key)
	case o.flags&setPersist != 0:
		if c.DB.Persist(key) {
			c.Dirty(1)
			c.Propagate(propPERSIST, key)
			c.Notify(config.NotifyGeneric, "persist", key)
		}
	}
}
