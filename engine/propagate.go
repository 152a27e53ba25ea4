package engine

import (
	"unsafe"

	"github.com/zredis/zredis/keyspace"
)

// Write propagation (Redis 7.0 server.c call, alsoPropagate,
// propagatePendingCommands; db.c propagateDeletion): what every change of
// the dataset hands to its consumers (the AOF; replicas), in the
// deterministic, absolute form redis-server 7.0 propagates it. The
// commands' rewrites are theirs (commands/propagate.go lists them); the
// stream is the engine's.
//
// Execution units. Everything propagated while one top-level command
// runs (a whole EXEC, the DELs of the keys it expired, its own form) is
// one unit, handed over when it ends; a unit of more than one command is
// wrapped in MULTI ... EXEC, as 7.0 does, so that a replica or an AOF
// replay applies it atomically. A transaction of one write therefore
// propagates that write alone, and a command that expired a key
// propagates MULTI, DEL, the command, EXEC. Serving each blocked client
// is a unit of its own, after the unit of the command that woke it. The expiry
// engine's deletions, outside any command, are handed over one by one.
// So are those of a command flagged TouchesArbitraryKeys (SCAN,
// RANDOMKEY) sent at top level: it may expire any number of keys it was
// not asked about, and Redis 7.0.15 does not wrap what it propagates
// (propagatePendingCommands checks the flag of the client's command, so
// the same command inside an EXEC or a script is wrapped with the rest).

// Targets. Redis propagates a command to the AOF and to replicas
// (PROPAGATE_AOF|PROPAGATE_REPL) when it changed the dataset, and to
// replicas only (PROPAGATE_REPL) when it asked for it with
// forceCommandPropagation(c, PROPAGATE_REPL) although it changed nothing:
// PUBLISH and SPUBLISH, so that a replica's subscribers get the master's
// messages (Ctx.ForceReplicaPropagation). So the stream's consumers are
// of two kinds: those attached with Attach (the AOF) get the changes of
// the dataset, those attached with AttachReplicas (the replication
// stream) get those and the replicas-only commands. MULTI and EXEC go to
// both, as Redis's propagatePendingCommands sends them: a unit of a
// PUBLISH and a SET reaches the AOF as MULTI, SET, EXEC. A replicas-only
// command is dropped at once while no consumer takes it, or while this
// server is itself a replica (shouldPropagate: a replica's replicas get
// its master's stream, not what it applies), so it never makes a unit
// of more than one command for the AOF alone.

// Propagator is one consumer of the stream: the AOF, the replication
// stream. Each keeps its own SELECT state: every command comes with its
// database, and a consumer emits SELECT when it differs from the previous
// command's it wrote (a rewritten AOF, a new replica, start from none).
type Propagator interface {
	// Propagate hands over one command to apply in database db. It is
	// called with the keyspace lock held, so it must not block for long
	// nor call back into the keyspace. argv is the Propagator's to keep:
	// nothing modifies it afterwards, and the Propagator must not modify
	// it either (elements may be shared constants, and every consumer
	// gets the same copy). MULTI and EXEC come through here too, with the
	// database of the first and of the last command of the unit they
	// wrap.
	Propagate(db int, argv [][]byte)
}

// propagation is a dispatcher's propagation stream. It is used under the
// keyspace lock.
type propagation struct {
	to       []consumer // the consumers; none: nothing is propagated
	replicas int        // how many of them take the replicas-only commands
	pending  []propOp   // the running unit's commands
	inUnit   bool       // a unit runs: buffer instead of handing over
	replaced bool       // the running command chose its form (Propagate, PreventPropagation)
	arena    argvArena  // where the propagated copies are made
	sent     int64      // commands handed over so far
	// except are the targets (ReplAOF, ReplReplica) the commands a
	// script calls are not propagated to (redis.set_repl); 0 outside
	// scripts. It applies to the commands' own forms, not to the DELs of
	// the keys they expire.
	except int
}

// consumer is one attached Propagator and its kind.
type consumer struct {
	p        Propagator
	replicas bool // attached with AttachReplicas
}

// propOp is one propagated command.
type propOp struct {
	db           int
	argv         [][]byte
	replicasOnly bool // PROPAGATE_REPL alone: not for the AOF
	aofOnly      bool // PROPAGATE_AOF alone: not for replicas (redis.set_repl)
}

// maxKeptPending bounds the unit buffer a dispatcher keeps between units.
const maxKeptPending = 1024

// Attach makes p receive every change from now on, after the consumers
// attached before it. Call it before serving clients or with the
// keyspace lock held, and once the data set is loaded: commands replayed
// from an AOF must not be propagated again. Attached while a unit runs
// (by a command), p receives that whole unit when it ends: a consumer
// that starts from a snapshot must attach between units. Attaching a
// consumer twice is harmless.
func (d *Dispatcher) Attach(p Propagator) { d.attach(p, false) }

// AttachReplicas is Attach for the replication stream: p also receives
// the commands propagated to replicas only (PUBLISH, SPUBLISH), which the
// consumers attached with Attach never see.
func (d *Dispatcher) AttachReplicas(p Propagator) { d.attach(p, true) }

func (d *Dispatcher) attach(p Propagator, replicas bool) {
	for _, x := range d.prop.to {
		if x.p == p {
			return
		}
	}
	d.prop.to = append(d.prop.to, consumer{p, replicas})
	if replicas {
		d.prop.replicas++
	}
}

// Detach stops p receiving changes; once no consumer is left, the stream
// stops and commands pay nothing for it. Under the keyspace lock, or
// before serving clients. A unit running while the last consumer leaves
// is dropped.
func (d *Dispatcher) Detach(p Propagator) {
	pr := &d.prop
	for i, x := range pr.to {
		if x.p == p {
			pr.to = append(pr.to[:i:i], pr.to[i+1:]...)
			if x.replicas {
				pr.replicas--
			}
			break
		}
	}
	if len(pr.to) == 0 {
		pr.to = nil
		clear(pr.pending)
		pr.pending = pr.pending[:0]
	}
}

// SuspendPropagation detaches every consumer of the propagation stream
// until resume is called, which attaches them again: DEBUG LOADAOF
// replays commands through the dispatcher that the AOF and the replicas
// already have. Under the keyspace lock, inside the command that resumes
// it before it returns.
func (d *Dispatcher) SuspendPropagation() (resume func()) {
	to, replicas := d.prop.to, d.prop.replicas
	d.prop.to, d.prop.replicas = nil, 0
	return func() { d.prop.to, d.prop.replicas = to, replicas }
}

// propagating returns the propagation stream, nil when it has no
// consumer.
func (d *Dispatcher) propagating() *propagation {
	if d.prop.to == nil {
		return nil
	}
	return &d.prop
}

// PropagateExpired is the expiry sink that propagates the deletion of a
// key whose deadline passed (db.c deleteExpiredKeyAndPropagate): inside a
// unit, before the command that met it; outside (the expiry engine) at
// once. Nothing happens while the stream has no consumer.
func (d *Dispatcher) PropagateExpired(ev keyspace.Expired) {
	p := d.propagating()
	if p == nil {
		return
	}
	// The arena copies the key; the view of the string is only read.
	argv := [2][]byte{DeleteName(d.Srv, "lazyfree-lazy-expire"), unsafe.Slice(unsafe.StringData(ev.Key), len(ev.Key))}
	p.add(propOp{db: ev.DB, argv: p.arena.copy(argv[:])})
}

// PropagateExpiredFields is the field funnel's sink that propagates the
// deletion of hash fields whose deadline passed: one HDEL key field per
// field, never a DEL, even when the hash went with its last field (t_hash.c
// propagateHashFieldDeletion), so that replicas and the AOF replay the
// same removals.
func (d *Dispatcher) PropagateExpiredFields(ev keyspace.ExpiredFields) {
	p := d.propagating()
	if p == nil {
		return
	}
	key := unsafe.Slice(unsafe.StringData(ev.Key), len(ev.Key))
	for i := 0; i < len(ev.Pairs); i += 2 {
		argv := [3][]byte{propHDEL, key, ev.Pairs[i]}
		p.add(propOp{db: ev.DB, argv: p.arena.copy(argv[:])})
	}
}

// PropagateWrite hands the stream a write the server made itself, not a
// command (the hash expire cycles'), in database db: inside a running
// unit (a command met an expired key) as part of it, outside one at once.
// argv is copied. Under the keyspace lock.
func (d *Dispatcher) PropagateWrite(db int, argv ...[]byte) {
	p := d.propagating()
	if p == nil {
		return
	}
	p.add(propOp{db: db, argv: p.arena.copy(argv)})
}

// PropagateUnit runs fn, whose PropagateWrite calls then form one unit
// (MULTI ... EXEC when more than one): when no unit runs (the expiry
// engine), so that a crash cannot leave half of fn's writes in the AOF;
// inside a running unit they are part of it.
func (d *Dispatcher) PropagateUnit(fn func()) {
	p := d.propagating()
	if p == nil || p.inUnit {
		fn()
		return
	}
	p.beginUnit()
	fn()
	p.endUnit(true)
}

// beginUnit starts an execution unit (a top-level command, or the
// serving of one blocked client).
func (p *propagation) beginUnit() { p.inUnit = true }

// endUnit hands the unit's commands over, wrapped in MULTI ... EXEC when
// there are more than one and wrap is set (propagatePendingCommands).
func (p *propagation) endUnit(wrap bool) {
	p.inUnit = false
	ops := p.pending
	switch {
	case len(ops) == 0:
	case len(ops) == 1 || !wrap:
		for _, op := range ops {
			p.send(op)
		}
	default:
		p.send(propOp{db: ops[0].db, argv: argvMULTI})
		for _, op := range ops {
			p.send(op)
		}
		p.send(propOp{db: ops[len(ops)-1].db, argv: argvEXEC})
	}
	clear(ops)
	p.pending = ops[:0]
	if cap(p.pending) > maxKeptPending {
		p.pending = nil
	}
}

// discardUnit drops what the running unit would propagate (a script
// that SHUTDOWN NOSAVE stopped).
func (p *propagation) discardUnit() {
	clear(p.pending)
	p.pending = p.pending[:0]
}

// send hands one command to every consumer it is for.
func (p *propagation) send(op propOp) {
	p.sent++
	for _, to := range p.to {
		if to.replicas && !op.aofOnly || !to.replicas && !op.replicasOnly {
			to.p.Propagate(op.db, op.argv)
		}
	}
}

// add propagates op, whose argv is owned by the propagation: kept for
// the end of the running unit, or handed over at once outside one.
func (p *propagation) add(op propOp) {
	if p.inUnit {
		p.pending = append(p.pending, op)
		return
	}
	p.send(op)
}

// beforeCall and afterCall bracket one command (Dispatcher.call): after
// it, a command that did not choose its propagated form propagates its
// arguments as they came, to every consumer when it changed the dataset,
// else to the replication stream alone when it asked for it
// (ForceReplicaPropagation) and this server feeds replicas.
func (p *propagation) beforeCall() { p.replaced = false }

func (p *propagation) afterCall(c *Ctx) {
	switch {
	case p.replaced:
	case c.dirty > 0:
		p.addCmd(c, c.DB.ID(), c.Args)
	case c.forceReplicas && p.replicas > 0 && !c.KS.IsReplica():
		p.add(propOp{db: c.DB.ID(), argv: p.arena.copy(c.Args), replicasOnly: true})
	}
}

// ForceReplicaPropagation makes the running command propagate its
// arguments to replicas, not to the AOF, although it changed nothing
// (Redis's forceCommandPropagation(c, PROPAGATE_REPL)): PUBLISH and
// SPUBLISH, which a replica runs to deliver the message to its own
// subscribers.
func (c *Ctx) ForceReplicaPropagation() { c.forceReplicas = true }

// Propagating reports whether the command's propagated form is wanted,
// for a handler that would spend work building it (SPOP's members).
func (c *Ctx) Propagating() bool { return c.D.propagating() != nil }

// Propagate sets what the running command propagates instead of its own
// arguments (Redis's rewriteClientCommandVector and alsoPropagate): each
// call adds one command, in the client's database, after whatever the
// command propagated before (the DELs of keys it expired). A command
// that calls it propagates only what it gave, whatever its dirty count.
// argv is copied: it may alias the client's read buffer or a value's
// storage.
func (c *Ctx) Propagate(argv ...[]byte) {
	p := c.D.propagating()
	if p == nil {
		return
	}
	p.replaced = true
	p.addCmd(c, c.DB.ID(), argv)
}

// addCmd propagates a command's own form (argv, copied here: it does not
// escape) to the targets the running script chose with redis.set_repl:
// all of them outside scripts. A target with no consumer (no AOF; no
// replication stream, or this server a replica) gets nothing, as Redis's
// shouldPropagate drops it before it joins the unit.
func (p *propagation) addCmd(c *Ctx, db int, argv [][]byte) {
	op := propOp{db: db}
	switch p.except {
	case 0:
	case ReplReplica:
		if len(p.to) == p.replicas {
			return
		}
		op.aofOnly = true
	case ReplAOF:
		if p.replicas == 0 || c.KS.IsReplica() {
			return
		}
		op.replicasOnly = true
	default:
		return
	}
	op.argv = p.arena.copy(argv)
	p.add(op)
}

// PreventPropagation makes the running command propagate nothing, for
// a command that counts a change (for WATCH) where Redis counts none
// (Redis's preventCommandPropagation serves the same end), and for EXEC,
// whose commands propagated themselves. Commands it gave with Propagate
// before stay given.
func (c *Ctx) PreventPropagation() {
	if p := c.D.propagating(); p != nil {
		p.replaced = true
	}
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

// The commands the stream itself makes. Shared: never modified.
var (
	argvMULTI  = [][]byte{[]byte("MULTI")} // whole commands, shared: a Propagator does not modify argv
	argvEXEC   = [][]byte{[]byte("EXEC")}
	propDEL    = []byte("DEL")
	propUNLINK = []byte("UNLINK")
	propHDEL   = []byte("HDEL")
)

// DeleteName is DEL, or UNLINK when the lazyfree directive (Redis's
// lazyfree_lazy_expire, lazyfree_lazy_user_del) is on: Redis propagates
// the deletion the way it made it.
func DeleteName(srv Server, directive string) []byte {
	if srv != nil && srv.Config().Bool(directive) {
		return propUNLINK
	}
	return propDEL
}
