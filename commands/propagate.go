package commands

import (
	"strconv"

	"github.com/zredis/zredis/engine"
)

// Write propagation (Redis 7.0 server.c call, alsoPropagate,
// propagatePendingCommands; db.c propagateDeletion): what every change of
// the dataset hands to the AOF and to replicas, in the deterministic,
// absolute form redis-server 7.0 propagates it: the commands' side.
//
// After a command that changed the dataset (its dirty count is positive)
// the dispatcher propagates the command's arguments as they came, unless
// the command chose its propagated form with Ctx.Propagate: one or more
// commands instead of the original. The rewrites are Redis's, each made
// by the handler that knows the result, in its family's file (under
// "propagated forms"; the helpers several families share are below):
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
// The stream itself (execution units wrapped in MULTI ... EXEC, the
// consumers and their SELECT state) is the engine's: engine/propagate.go.
//
// PUBLISH and SPUBLISH change nothing but propagate as they came to
// replicas only, not to the AOF (Ctx.ForceReplicaPropagation), so that a
// replica's subscribers get the master's messages.

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

// listPopName is LPOP or RPOP.
func listPopName(front bool) []byte {
	if front {
		return propLPOP
	}
	return propRPOP
}

// zpopName is ZPOPMIN or ZPOPMAX.
func zpopName(max bool) []byte {
	if max {
		return propZPOPMAX
	}
	return propZPOPMIN
}
