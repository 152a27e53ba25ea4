package commands

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/zredis/zredis/engine"
	"github.com/zredis/zredis/keyspace"
)

// Blocking list and sorted-set commands (Redis t_list.c, t_zset.c): each
// parses its arguments and gives engine.BlockingPop the pop to make, which
// runs at once when a key holds data, or later when a push makes one
// ready (the engine's blocking layer, engine/blocking.go).
func init() {
	register(
		&engine.Command{Name: "blpop", Arity: -3, Flags: engine.Write | engine.NoScript | engine.Blocking, ACL: "@write @list @slow @blocking", FirstKey: 1, LastKey: -2, KeyStep: 1, Group: "list", Run: blpopCommand},
		&engine.Command{Name: "brpop", Arity: -3, Flags: engine.Write | engine.NoScript | engine.Blocking, ACL: "@write @list @slow @blocking", FirstKey: 1, LastKey: -2, KeyStep: 1, Group: "list", Run: brpopCommand},
		&engine.Command{Name: "brpoplpush", Arity: 4, Flags: engine.Write | engine.DenyOOM | engine.NoScript | engine.Blocking, ACL: "@write @list @slow @blocking", FirstKey: 1, LastKey: 2, KeyStep: 1, Group: "list", Run: brpoplpushCommand},
		&engine.Command{Name: "blmove", Arity: 6, Flags: engine.Write | engine.DenyOOM | engine.NoScript | engine.Blocking, ACL: "@write @list @slow @blocking", FirstKey: 1, LastKey: 2, KeyStep: 1, Group: "list", Run: blmoveCommand},
		&engine.Command{Name: "blmpop", Arity: -5, Flags: engine.Write | engine.Blocking | engine.MovableKeys, ACL: "@write @list @slow @blocking", Group: "list", Run: blmpopCommand, Keys: numkeysKeys(2)},
		&engine.Command{Name: "bzpopmin", Arity: -3, Flags: engine.Write | engine.Fast | engine.NoScript | engine.Blocking, ACL: "@write @sortedset @fast @blocking", FirstKey: 1, LastKey: -2, KeyStep: 1, Group: "sorted-set", Run: bzpopminCommand},
		&engine.Command{Name: "bzpopmax", Arity: -3, Flags: engine.Write | engine.Fast | engine.NoScript | engine.Blocking, ACL: "@write @sortedset @fast @blocking", FirstKey: 1, LastKey: -2, KeyStep: 1, Group: "sorted-set", Run: bzpopmaxCommand},
		&engine.Command{Name: "bzmpop", Arity: -5, Flags: engine.Write | engine.Blocking | engine.MovableKeys, ACL: "@write @sortedset @slow @blocking", Group: "sorted-set", Run: bzmpopCommand, Keys: numkeysKeys(2)},
	)
}

// hangupCheck is how often a blocked client's socket is checked for a
// hang-up, to free the client of one that went away while nothing was

// parseTimeout reads a blocking timeout in seconds as Redis's
// getTimeoutFromObjectOrReply does (UNIT_SECONDS): the milliseconds are
// truncated (so a timeout below 1 ms waits forever, like 0), and a value
// too large for a long long converts, as on x86, to a negative one. It
// returns the wait; ok=false means the error was written.
func parseTimeout(c *engine.Ctx, arg []byte) (time.Duration, bool) {
	f, ok := engine.ParseFloat(arg)
	if !ok {
		f, ok = parseHexFloat(arg)
	}
	if !ok || math.IsNaN(f) {
		c.Error(engine.ErrTimeoutNotFloat)
		return 0, false
	}
	v := f * 1000
	ms := int64(math.MinInt64)
	switch {
	case v > -(1<<63) && v < 1<<63:
		ms = int64(v)
	case f > 0 && f <= 9223372036854775.807:
		// Within a long long in Redis's long double arithmetic.
		ms = math.MaxInt64
	}
	if ms < 0 {
		c.Error(engine.ErrTimeoutNegative)
		return 0, false
	}
	if ms > int64(math.MaxInt64/time.Millisecond) {
		// Beyond what a Duration holds (about 292 years): forever.
		ms = 0
	}
	return time.Duration(ms) * time.Millisecond, true
}

// parseHexFloat accepts what strtold reads as a hexadecimal number
// without a binary exponent ("0x10", "-0x1.8"), which Go's parser
// refuses.
func parseHexFloat(b []byte) (float64, bool) {
	s := string(b)
	t := strings.TrimLeft(s, "+-")
	if len(t) < 3 || t[0] != '0' || (t[1] != 'x' && t[1] != 'X') || strings.ContainsAny(t, "pP_") {
		return 0, false
	}
	f, err := strconv.ParseFloat(s+"p0", 64)
	return f, err == nil
}

// ---- BLPOP BRPOP ------------------------------------------------------------

func blpopCommand(c *engine.Ctx) { bpopGeneric(c, true) }
func brpopCommand(c *engine.Ctx) { bpopGeneric(c, false) }

// bpopGeneric is B[LR]POP key [key ...] timeout: [key, element].
func bpopGeneric(c *engine.Ctx, front bool) {
	timeout, ok := parseTimeout(c, c.Args[len(c.Args)-1])
	if !ok {
		return
	}
	engine.BlockingPop(c, c.Args[1:len(c.Args)-1], keyspace.TypeList, timeout, false, func(c *engine.Ctx, key []byte) {
		l := c.DB.LookupWrite(key).Obj().(*keyspace.List)
		c.W.Array(2)
		c.W.Bulk(key)
		c.W.Bulk(l.Pop(front))
		c.Dirty(1)
		c.Propagate(listPopName(front), key) // LPOP|RPOP key
		listPopped(c, key, l, front)
	})
}

// ---- BLMOVE BRPOPLPUSH ------------------------------------------------------

// BLMOVE source destination LEFT|RIGHT LEFT|RIGHT timeout
func blmoveCommand(c *engine.Ctx) {
	from, ok := listEnd(c, c.Args[3])
	if !ok {
		return
	}
	to, ok := listEnd(c, c.Args[4])
	if !ok {
		return
	}
	blmoveGeneric(c, from, to, c.Args[5])
}

// BRPOPLPUSH source destination timeout
func brpoplpushCommand(c *engine.Ctx) { blmoveGeneric(c, false, true, c.Args[3]) }

func blmoveGeneric(c *engine.Ctx, from, to bool, timeoutArg []byte) {
	timeout, ok := parseTimeout(c, timeoutArg)
	if !ok {
		return
	}
	dst := append([]byte(nil), c.Args[2]...)
	engine.BlockingPop(c, c.Args[1:2], keyspace.TypeList, timeout, true, func(c *engine.Ctx, key []byte) {
		saved := c.Args
		c.Args = [][]byte{saved[0], key, dst}
		dirty := c.Changes()
		lmoveGeneric(c, from, to)
		c.Args = saved
		if c.Changes() > dirty {
			propagateBlmove(c, key, dst, from, to)
		}
	})
}

// ---- BLMPOP BZMPOP ----------------------------------------------------------

// mpopArgs parses "timeout numkeys key [key ...] <where> [COUNT count]"
// from argument 1 (lmpopGenericCommand, zmpopGenericCommand): the keys,
// the where argument, and the count (1 by default). ok=false means the
// error was written.
func mpopArgs(c *engine.Ctx) (keys [][]byte, where []byte, count int64, ok bool) {
	numkeys, ok := engine.ParseInt(c.Args[2])
	if !ok || numkeys < 1 {
		c.Error(engine.ErrNumkeysPositive)
		return nil, nil, 0, false
	}
	if numkeys > int64(len(c.Args)-4) {
		c.Error(engine.ErrSyntax)
		return nil, nil, 0, false
	}
	whereIdx := 3 + int(numkeys)
	if count, ok = parseMpopCount(c, whereIdx+1); !ok {
		return nil, nil, 0, false
	}
	return c.Args[3:whereIdx], c.Args[whereIdx], count, true
}

// BLMPOP timeout numkeys key [key ...] LEFT|RIGHT [COUNT count]
func blmpopCommand(c *engine.Ctx) {
	timeout, ok := parseTimeout(c, c.Args[1])
	if !ok {
		return
	}
	keys, where, count, ok := mpopArgs(c)
	if !ok {
		return
	}
	front := engine.EqualFold(where, "left")
	if !front && !engine.EqualFold(where, "right") {
		c.Error(engine.ErrSyntax)
		return
	}
	engine.BlockingPop(c, keys, keyspace.TypeList, timeout, false, func(c *engine.Ctx, key []byte) {
		l := c.DB.LookupWrite(key).Obj().(*keyspace.List)
		c.W.Array(2)
		c.W.Bulk(key)
		n := listPopReply(c, key, l, front, count)
		propagatePop(c, listPopName(front), key, n) // [LR]POP key n
	})
}

// BZMPOP timeout numkeys key [key ...] MIN|MAX [COUNT count]
func bzmpopCommand(c *engine.Ctx) {
	timeout, ok := parseTimeout(c, c.Args[1])
	if !ok {
		return
	}
	keys, where, count, ok := mpopArgs(c)
	if !ok {
		return
	}
	max := engine.EqualFold(where, "max")
	if !max && !engine.EqualFold(where, "min") {
		c.Error(engine.ErrSyntax)
		return
	}
	engine.BlockingPop(c, keys, keyspace.TypeZSet, timeout, false, func(c *engine.Ctx, key []byte) {
		if _, n := zpopGeneric(c, [][]byte{key}, max, true, count, true, true); n > 0 {
			propagatePop(c, zpopName(max), key, n) // ZPOPMIN|ZPOPMAX key n
		}
	})
}

// ---- BZPOPMIN BZPOPMAX ------------------------------------------------------

func bzpopminCommand(c *engine.Ctx) { bzpopGeneric(c, false) }
func bzpopmaxCommand(c *engine.Ctx) { bzpopGeneric(c, true) }

// bzpopGeneric is BZPOP(MIN|MAX) key [key ...] timeout: [key, member, score].
func bzpopGeneric(c *engine.Ctx, max bool) {
	timeout, ok := parseTimeout(c, c.Args[len(c.Args)-1])
	if !ok {
		return
	}
	engine.BlockingPop(c, c.Args[1:len(c.Args)-1], keyspace.TypeZSet, timeout, false, func(c *engine.Ctx, key []byte) {
		if _, n := zpopGeneric(c, [][]byte{key}, max, true, -1, false, true); n > 0 {
			c.Propagate(zpopName(max), key) // ZPOPMIN|ZPOPMAX key
		}
	})
}

// ---- propagated forms ------------------------------------------------------

// propagateBlmove is the propagated form of a BLMOVE or BRPOPLPUSH that
// moved an element: RPOPLPUSH src dst, or LMOVE src dst with the ends as
// given when it ran at once (t_list.c lmoveGenericCommand) and named
// "left" or "right" when it was served later (blocked.c).
func propagateBlmove(c *engine.Ctx, src, dst []byte, from, to bool) {
	switch {
	case c.Cmd.Name == "brpoplpush":
		c.Propagate(propRPOPLPUSH, src, dst)
	case len(c.Args) == 6: // BLMOVE src dst wherefrom whereto timeout
		c.Propagate(propLMOVE, src, dst, c.Args[3], c.Args[4])
	default:
		c.Propagate(propLMOVE, src, dst, listEndName(from), listEndName(to))
	}
}
