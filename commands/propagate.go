package commands

import (
	"strconv"

	"github.com/zredis/zredis/engine"
	"github.com/zredis/zredis/keyspace"
)

// Write propagation (Redis 7.0 server.c call, alsoPropagate,
// propagatePendingCommands; db.c propagateDeletion): what every change of
// the dataset hands to the AOF and to replicas, in the deterministic,
// absolute form redis-server 7.0 propagates it.
//
// After a command that changed the dataset (its dirty count is positive)
// the dispatcher propagates the command's arguments as they came, unless
// the command chose its propagated form with Ctx.Propagate: one or more
// commands instead of the original. The rewrites are Redis's, each made
// by the handler that knows the result:
//
//	SET ... EX|PX|EXAT|PXAT, SETEX, PSETEX  SET key value PXAT <ms>
//	SET ... GET (no expire)             the same without GET
//	GETSET                              SET key value
//	GETEX EX|PX|EXAT|PXAT               PEXPIREAT key <ms>
//	GETEX PERSIST                       PERSIST key
//	GETDEL                              DEL key (UNLINK with lazyfree-lazy-user-del)
//	EXPIRE PEXPIRE EXPIREAT             PEXPIREAT key <ms> [options as given]
//	any expire already past             DEL key (UNLINK with lazyfree-lazy-expire)
//	INCRBYFLOAT                         SET key <result> KEEPTTL
//	HINCRBYFLOAT                        HSET key field <result>
//	SPOP key                            SREM key member
//	SPOP key count                      SREM key member, one per member popped,
//	                                    or DEL key when the whole set goes
//	LMPOP, BLMPOP                       LPOP|RPOP key <popped>
//	BLPOP, BRPOP                        LPOP|RPOP key
//	BLMOVE, BRPOPLPUSH                  LMOVE ..., RPOPLPUSH src dst
//	ZMPOP, BZMPOP                       ZPOPMIN|ZPOPMAX key <popped>
//	BZPOPMIN, BZPOPMAX                  ZPOPMIN|ZPOPMAX key
//	LTRIM that trims nothing            nothing (Redis counts no change)
//
// Every other write propagates as it came (MOVE, COPY, RENAME, SWAPDB,
// FLUSHDB and FLUSHALL included); a write that changed nothing (dirty
// count 0: SETNX on an existing key, DEL of a missing one, EXPIRE NX on a
// volatile key) propagates nothing. The differential test in
// propagate_test.go holds all of this against redis-server 7.0's AOF.
//
// A blocked client served later propagates the same non-blocking form.
// A key removed because its deadline passed (lazily, by the command that
// met it, or by the expiry engine) propagates DEL key, or UNLINK with
// lazyfree-lazy-expire, in its database, from the keyspace's expired-key
// funnel.
//
// Execution units. Everything propagated while one top-level command
// runs (a whole EXEC, the DELs of the keys it expired, its own form) is
// one unit, handed over when it ends; a unit of more than one command is
// wrapped in MULTI ... EXEC, as 7.0 does, so that a replica or an AOF
// replay applies it atomically. A transaction of one write therefore
// propagates that write alone, and a command that expired a key
// propagates MULTI, DEL, the command, EXEC. Serving each blocked client
// is a unit of its own, after the unit of the command that woke it. The
// expiry engine's deletions, outside any command, are handed over one by
// one.
//
// Not propagated: PUBLISH, which 7.0 sends to replicas only (not to the
// AOF); a replication link will have to forward it itself. SELECT is the
// consumer's: every command comes with its database, and the consumer
// emits SELECT when it differs from the previous one's.

// The names Redis's rewrites use (its shared objects: upper case, but
// "left" and "right" lower case). Shared: never modified.
var (
	propDEL       = []byte("DEL")
	propUNLINK    = []byte("UNLINK")
	propSET       = []byte("SET")
	propPXAT      = []byte("PXAT")
	propKEEPTTL   = []byte("KEEPTTL")
	propABSTTL    = []byte("ABSTTL")
	propPEXPIREAT = []byte("PEXPIREAT")
	propPERSIST   = []byte("PERSIST")
	propHSET      = []byte("HSET")
	propSREM      = []byte("SREM")
	propLPOP      = []byte("LPOP")
	propRPOP      = []byte("RPOP")
	propLMOVE     = []byte("LMOVE")
	propRPOPLPUSH = []byte("RPOPLPUSH")
	propZPOPMIN   = []byte("ZPOPMIN")
	propZPOPMAX   = []byte("ZPOPMAX")
	propLeft      = []byte("left")
	propRight     = []byte("right")
)

// propagateDelete propagates the deletion of key, made as the lazyfree
// directive says.
func propagateDelete(c *engine.Ctx, key []byte, directive string) {
	if c.Propagating() {
		c.Propagate(engine.DeleteName(c.Srv, directive), key)
	}
}

// propagatePop propagates a pop as name key count (LPOP, RPOP, ZPOPMIN,
// ZPOPMAX with the number of elements popped).
func propagatePop(c *engine.Ctx, name, key []byte, count int) {
	if !c.Propagating() {
		return
	}
	var tmp [20]byte
	c.Propagate(name, key, strconv.AppendInt(tmp[:0], int64(count), 10))
}

// propagatePexpireat propagates PEXPIREAT key at.
func propagatePexpireat(c *engine.Ctx, key []byte, at int64) {
	if !c.Propagating() {
		return
	}
	var tmp [20]byte
	c.Propagate(propPEXPIREAT, key, strconv.AppendInt(tmp[:0], at, 10))
}

// listPopName is LPOP or RPOP.
func listPopName(front bool) []byte {
	if front {
		return propLPOP
	}
	return propRPOP
}

// listEndName is "left" or "right", as Redis names a list end.
func listEndName(front bool) []byte {
	if front {
		return propLeft
	}
	return propRight
}

// zpopName is ZPOPMIN or ZPOPMAX.
func zpopName(max bool) []byte {
	if max {
		return propZPOPMAX
	}
	return propZPOPMIN
}

// propagateSet is the propagated form of a SET that set its key
// (t_string.c setGenericCommand): with an expire, SET key value PXAT
// <deadline> whatever the options; with GET and no expire, the command
// without its GET arguments; otherwise the command as it came.
func propagateSet(c *engine.Ctx, o setOptions, key, val []byte, deadline int64) {
	if o.expire == nil && o.flags&setGet == 0 || !c.Propagating() {
		return // as it came (the dispatcher's part), or nothing wanted
	}
	switch {
	case o.expire != nil:
		var tmp [20]byte
		c.Propagate(propSET, key, val, propPXAT, strconv.AppendInt(tmp[:0], deadline, 10))
	case o.flags&setGet != 0:
		argv := make([][]byte, 0, len(c.Args))
		for j, a := range c.Args {
			if j >= 3 && engine.EqualFold(a, "get") {
				continue
			}
			argv = append(argv, a)
		}
		c.Propagate(argv...)
	}
}

// propagateExpire is the propagated form of EXPIRE, PEXPIRE and EXPIREAT
// that set a deadline (expire.c expireGenericCommand): PEXPIREAT key
// <deadline> followed by the options as given; PEXPIREAT propagates as
// it came.
func propagateExpire(c *engine.Ctx, when int64) {
	if c.Cmd.Name == "pexpireat" || !c.Propagating() {
		return
	}
	var tmp [20]byte
	argv := make([][]byte, 0, len(c.Args))
	argv = append(argv, propPEXPIREAT, c.Args[1], strconv.AppendInt(tmp[:0], when, 10))
	c.Propagate(append(argv, c.Args[3:]...)...)
}

// propagateSpop propagates one member popped by SPOP as SREM key member
// (t_set.c): one SREM per member, in the order of the reply.
func propagateSpop(c *engine.Ctx, key []byte, m keyspace.Member) {
	if !c.Propagating() {
		return
	}
	var tmp [20]byte
	c.Propagate(propSREM, key, m.Bytes(tmp[:0]))
}

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

// propagateRestore is the propagated form of a RESTORE that stored its
// key with a deadline (cluster.c restoreCommand): a relative TTL becomes
// the absolute deadline, with ABSTTL added at the end; an ABSTTL one
// propagates as it came. A RESTORE whose deadline had already passed
// stores nothing and propagates DEL key when REPLACE deleted the key
// (whatever lazyfree says), nothing otherwise: c.Propagate(propDEL, key).
func propagateRestore(c *engine.Ctx, deadline int64, absTTL bool) {
	if deadline == 0 || absTTL || !c.Propagating() {
		return
	}
	argv := make([][]byte, 0, len(c.Args)+1)
	argv = append(argv, c.Args...)
	var tmp [20]byte
	argv[2] = strconv.AppendInt(tmp[:0], deadline, 10)
	c.Propagate(append(argv, propABSTTL)...)
}
