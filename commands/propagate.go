package commands

import (
	"strconv"
	"sync"
	"sync/atomic"
	"unsafe"

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

// Propagator receives the dataset's changes in execution order.
type Propagator interface {
	// Propagate hands over one command to apply in database db. It is
	// called with the keyspace lock held, so it must not block for long
	// nor call back into the keyspace. argv is the Propagator's to keep:
	// nothing modifies it afterwards, and the Propagator must not modify
	// it either (elements may be shared constants). MULTI and EXEC come
	// through here too, with the database of the first and of the last
	// command of the unit they wrap.
	Propagate(db int, argv [][]byte)
}

// propagation is a dispatcher's propagation state. It is used under the
// keyspace lock.
type propagation struct {
	to       Propagator // nil: nothing is propagated
	pending  []propOp   // the running unit's commands
	inUnit   bool       // a unit runs: buffer instead of handing over
	replaced bool       // the running command chose its form (Propagate, PreventPropagation)
	arena    argvArena  // where the propagated copies are made
}

// propOp is one propagated command.
type propOp struct {
	db   int
	argv [][]byte
}

// maxKeptPending bounds the unit buffer a dispatcher keeps between units.
const maxKeptPending = 1024

// Ctx.Propagate finds its dispatcher's propagation through the keyspace
// (a handler's context carries no dispatcher); propagatorsOn lets every
// call skip the lookup while no keyspace has a propagator.
var (
	propagations  sync.Map // *keyspace.Keyspace -> *propagation
	propagatorsOn atomic.Int64
)

// SetPropagator makes p receive every change from now on; nil stops
// propagation. Call it before serving clients or with the keyspace lock
// held, and once the data set is loaded: commands replayed from an AOF
// must not be propagated again. Expired keys reach the stream through
// PropagateExpired, which the server registers as an expiry sink.
func (d *Dispatcher) SetPropagator(p Propagator) {
	pr := &d.prop
	switch {
	case pr.to == nil && p != nil:
		propagations.Store(d.KS, pr)
		propagatorsOn.Add(1)
	case pr.to != nil && p == nil:
		propagations.Delete(d.KS)
		propagatorsOn.Add(-1)
		clear(pr.pending)
		pr.pending = pr.pending[:0]
	}
	pr.to = p
}

// propagating returns the propagation state, nil when nothing is
// propagated.
func (d *Dispatcher) propagating() *propagation {
	if d.prop.to == nil {
		return nil
	}
	return &d.prop
}

// PropagateExpired is the expiry sink that propagates the deletion of a
// key whose deadline passed (db.c deleteExpiredKeyAndPropagate): inside a
// unit, before the command that met it; outside (the expiry engine) at
// once. Nothing happens while no propagator is set.
func (d *Dispatcher) PropagateExpired(ev keyspace.Expired) {
	p := d.propagating()
	if p == nil {
		return
	}
	// The arena copies the key; the view of the string is only read.
	argv := [2][]byte{deleteName(d.Srv, "lazyfree-lazy-expire"), unsafe.Slice(unsafe.StringData(ev.Key), len(ev.Key))}
	p.add(ev.DB, p.arena.copy(argv[:]))
}

// beginUnit starts an execution unit (a top-level command, or the
// serving of one blocked client).
func (p *propagation) beginUnit() { p.inUnit = true }

// endUnit hands the unit's commands over, wrapped in MULTI ... EXEC when
// there are more than one (propagatePendingCommands).
func (p *propagation) endUnit() {
	p.inUnit = false
	ops := p.pending
	if to := p.to; to != nil {
		switch len(ops) {
		case 0:
		case 1:
			to.Propagate(ops[0].db, ops[0].argv)
		default:
			to.Propagate(ops[0].db, argvMULTI)
			for _, op := range ops {
				to.Propagate(op.db, op.argv)
			}
			to.Propagate(ops[len(ops)-1].db, argvEXEC)
		}
	}
	clear(ops)
	p.pending = ops[:0]
	if cap(p.pending) > maxKeptPending {
		p.pending = nil
	}
}

// add propagates argv, owned by the propagation, in database db: kept
// for the end of the running unit, or handed over at once outside one.
func (p *propagation) add(db int, argv [][]byte) {
	if p.inUnit {
		p.pending = append(p.pending, propOp{db, argv})
		return
	}
	if p.to != nil {
		p.to.Propagate(db, argv)
	}
}

// beforeCall and afterCall bracket one command (Dispatcher.call): after
// it, a command that changed the dataset and did not choose its
// propagated form propagates its arguments as they came. EXEC never
// propagates itself: its commands did (call's "we never propagate EXEC
// explicitly").
func (p *propagation) beforeCall() { p.replaced = false }

func (p *propagation) afterCall(c *Ctx) {
	if p.replaced || c.dirty <= 0 || c.Cmd.Name == "exec" {
		return
	}
	p.add(c.DB.ID(), p.arena.copy(c.Args))
}

// Propagating reports whether the command's propagated form is wanted,
// for a handler that would spend work building it (SPOP's members).
func (c *Ctx) Propagating() bool { return propagationOf(c.KS) != nil }

// Propagate sets what the running command propagates instead of its own
// arguments (Redis's rewriteClientCommandVector and alsoPropagate): each
// call adds one command, in the client's database, after whatever the
// command propagated before (the DELs of keys it expired). A command
// that calls it propagates only what it gave, whatever its dirty count.
// argv is copied: it may alias the client's read buffer or a value's
// storage.
func (c *Ctx) Propagate(argv ...[]byte) {
	p := propagationOf(c.KS)
	if p == nil {
		return
	}
	p.replaced = true
	p.add(c.DB.ID(), p.arena.copy(argv))
}

// PreventPropagation makes the running command propagate nothing, for
// a command that counts a change (for WATCH) where Redis counts none
// (Redis's preventCommandPropagation serves the same end). Commands it
// gave with Propagate before stay given.
func (c *Ctx) PreventPropagation() {
	if p := propagationOf(c.KS); p != nil {
		p.replaced = true
	}
}

func propagationOf(ks *keyspace.Keyspace) *propagation {
	if propagatorsOn.Load() == 0 {
		return nil
	}
	v, ok := propagations.Load(ks)
	if !ok {
		return nil
	}
	return v.(*propagation)
}

// argvArena makes the copies of propagated commands without an
// allocation per command: it carves them from chunks that are only ever
// appended to, so a copy handed out is never written again and the
// Propagator may keep it; the GC frees a chunk once nothing refers to
// it. Large commands get their own allocation, so that keeping one does
// not pin a chunk much larger than itself. Used under the keyspace lock.
type argvArena struct {
	data []byte   // the current data chunk
	hdrs [][]byte // the current chunk of argument headers
}

const (
	arenaDataChunk = 32 << 10
	arenaHdrChunk  = 512
	arenaMaxCopy   = arenaDataChunk / 8 // larger commands: their own allocation
)

// copy returns a copy of argv.
func (a *argvArena) copy(argv [][]byte) [][]byte {
	n := 0
	for _, x := range argv {
		n += len(x)
	}
	if n > arenaMaxCopy || len(argv) > arenaHdrChunk/8 {
		return copyArgv(argv)
	}
	if cap(a.data)-len(a.data) < n {
		a.data = make([]byte, 0, arenaDataChunk)
	}
	if cap(a.hdrs)-len(a.hdrs) < len(argv) {
		a.hdrs = make([][]byte, 0, arenaHdrChunk)
	}
	h := len(a.hdrs)
	a.hdrs = a.hdrs[:h+len(argv)]
	out := a.hdrs[h : h+len(argv) : h+len(argv)]
	for i, x := range argv {
		start := len(a.data)
		a.data = append(a.data, x...)
		out[i] = a.data[start:len(a.data):len(a.data)]
	}
	return out
}

// copyArgv copies argv into one buffer of its own.
func copyArgv(argv [][]byte) [][]byte {
	n := 0
	for _, a := range argv {
		n += len(a)
	}
	buf := make([]byte, 0, n)
	out := make([][]byte, len(argv))
	for i, a := range argv {
		buf = append(buf, a...)
		out[i] = buf[len(buf)-len(a) : len(buf) : len(buf)]
	}
	return out
}

// The names Redis's rewrites use (its shared objects: upper case, but
// "left" and "right" lower case). Shared: never modified.
var (
	propMULTI     = []byte("MULTI")
	propEXEC      = []byte("EXEC")
	argvMULTI     = [][]byte{propMULTI} // whole commands, shared: a Propagator does not modify argv
	argvEXEC      = [][]byte{propEXEC}
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

// deleteName is DEL, or UNLINK when the lazyfree directive (Redis's
// lazyfree_lazy_expire, lazyfree_lazy_user_del) is on: Redis propagates
// the deletion the way it made it.
func deleteName(srv Server, directive string) []byte {
	if srv != nil && srv.Config().Bool(directive) {
		return propUNLINK
	}
	return propDEL
}

// propagateDelete propagates the deletion of key, made as the lazyfree
// directive says.
func propagateDelete(c *Ctx, key []byte, directive string) {
	if c.Propagating() {
		c.Propagate(deleteName(c.Srv, directive), key)
	}
}

// propagatePop propagates a pop as name key count (LPOP, RPOP, ZPOPMIN,
// ZPOPMAX with the number of elements popped).
func propagatePop(c *Ctx, name, key []byte, count int) {
	if !c.Propagating() {
		return
	}
	var tmp [20]byte
	c.Propagate(name, key, strconv.AppendInt(tmp[:0], int64(count), 10))
}

// propagatePexpireat propagates PEXPIREAT key at.
func propagatePexpireat(c *Ctx, key []byte, at int64) {
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
func propagateSet(c *Ctx, o setOptions, key, val []byte, deadline int64) {
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
			if j >= 3 && EqualFold(a, "get") {
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
func propagateExpire(c *Ctx, when int64) {
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
func propagateSpop(c *Ctx, key []byte, m keyspace.Member) {
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
func propagateBlmove(c *Ctx, src, dst []byte, from, to bool) {
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
func propagateRestore(c *Ctx, deadline int64, absTTL bool) {
	if deadline == 0 || absTTL || !c.Propagating() {
		return
	}
	argv := make([][]byte, 0, len(c.Args)+1)
	argv = append(argv, c.Args...)
	var tmp [20]byte
	argv[2] = strconv.AppendInt(tmp[:0], deadline, 10)
	c.Propagate(append(argv, propABSTTL)...)
}
