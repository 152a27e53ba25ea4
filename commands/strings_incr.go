package commands

import (
	"strconv"

	"github.com/zredis/zredis/config"
	"github.com/zredis/zredis/engine"
	"github.com/zredis/zredis/keyspace"
)

// String commands: INCR, DECR, INCRBY and DECRBY (Redis t_string.c).
func init() {
	register(
		&engine.Command{Name: "incr", Arity: 2, Flags: engine.Write | engine.DenyOOM | engine.Fast, ACL: "@write @string @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "string", Run: incrCommand},
		&engine.Command{Name: "decr", Arity: 2, Flags: engine.Write | engine.DenyOOM | engine.Fast, ACL: "@write @string @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "string", Run: decrCommand},
		&engine.Command{Name: "incrby", Arity: 3, Flags: engine.Write | engine.DenyOOM | engine.Fast, ACL: "@write @string @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "string", Run: incrbyCommand},
		&engine.Command{Name: "decrby", Arity: 3, Flags: engine.Write | engine.DenyOOM | engine.Fast, ACL: "@write @string @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "string", Run: decrbyCommand},
	)
}

const minInt64 = -1 << 63

func incrCommand(c *engine.Ctx) { incrDecr(c, 1) }
func decrCommand(c *engine.Ctx) { incrDecr(c, -1) }

func incrbyCommand(c *engine.Ctx) {
	if incr, ok := c.IntArg(2); ok {
		incrDecr(c, incr)
	}
}

func decrbyCommand(c *engine.Ctx) {
	decr, ok := c.IntArg(2)
	if !ok {
		return
	}
	if decr == minInt64 { // -decr does not exist
		c.Error(engine.ErrDecrOverflow)
		return
	}
	incrDecr(c, -decr)
}

// incrDecr adds incr to the integer at key, a missing key counting as 0
// (t_string.c incrDecrCommand). The value must parse strictly as an int64
// (no spaces, sign '+' or leading zeros) and the sum must not overflow.
// An existing key keeps its TTL, and the new number is formatted into the
// value's own buffer: INCR on a live counter allocates nothing.
func incrDecr(c *engine.Ctx, incr int64) {
	key := c.Args[1]
	e := c.DB.LookupWrite(key)
	var v int64
	if e != nil {
		if e.Type() != keyspace.TypeString {
			c.Error(engine.ErrWrongType)
			return
		}
		var ok bool
		if v, ok = engine.ParseInt(e.Str()); !ok {
			c.Error(engine.ErrNotInteger)
			return
		}
	}
	if (incr < 0 && v < 0 && incr < minInt64-v) || (incr > 0 && v > 0 && incr > maxInt64-v) {
		c.Error(engine.ErrOverflow)
		return
	}
	v += incr
	if e != nil {
		e.SetInt(v)
	} else {
		var tmp [20]byte
		c.DB.SetString(key, strconv.AppendInt(tmp[:0], v, 10), false, 0)
		c.Notify(config.NotifyNew, "new", key)
	}
	c.Dirty(1)
	c.Notify(config.NotifyString, "incrby", key)
	c.W.Int(v)
}

// reuseBuf returns b emptied when it can hold n bytes and is not
// oversized for them (a long string turned into a short number must not
// pin its memory), else a new buffer of capacity n.
func reuseBuf(b []byte, n int) []byte {
	if cap(b) >= n && cap(b) <= 2*n+64 {
		return b[:0]
	}
	return make([]byte, 0, n)
}
