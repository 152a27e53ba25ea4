package engine

import (
	"crypto/tls"
	"net"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"time"

	"github.com/zredis/zredis/cluster"
	"github.com/zredis/zredis/keyspace"
)

// Dispatcher runs commands from the table. One serves the whole server
// and holds everything per-server the command path keeps: command
// counters, the blocked clients, the propagation stream. Make one with
// NewDispatcher; Exec is called with the keyspace lock held.
type Dispatcher struct {
	KS    *keyspace.Keyspace
	Srv   Server
	Table *Table
	// ACL is the server's users, checked on every dispatch.
	ACL *ACL

	// ReadOnlyReplica and StaleRefused are set by the server while it
	// replicates a master (replicaRefuses).
	ReadOnlyReplica, StaleRefused atomic.Bool

	// Hooks run after every executed command, under the lock (slow log,
	// latency, MONITOR). Set before serving clients.
	AfterCall []func(c *Ctx, dur time.Duration)

	// Loading is set while the dataset loads: commands without the
	// loading flag are refused with LOADING.
	Loading atomic.Bool

	// MinReplicas is min-replicas-to-write when min-replicas-max-lag is
	// not 0, else 0; GoodReplicas is the number of replicas online whose
	// last acknowledgement is at most min-replicas-max-lag seconds old
	// (Redis's repl_good_slaves_count). The server keeps both current; a
	// master with fewer good replicas than MinReplicas refuses writes
	// with NOREPLICAS.
	MinReplicas  atomic.Int64
	GoodReplicas atomic.Int64

	// Cluster is the cluster node in cluster mode (nil without), whose
	// routing every command with keys is checked against
	// (clusterRedirect); ClusterOpts the directives it reads.
	Cluster     *cluster.State
	ClusterOpts ClusterOptions

	// MigrateTLS, when set, is the TLS configuration MIGRATE connects
	// with: with tls-cluster yes, as Redis (server.tls_cluster), ok is
	// true and conf the client configuration (nil if TLS is not
	// configured, which refuses the connection rather than make it in
	// plaintext); with tls-cluster no, ok is false.
	MigrateTLS func() (conf *tls.Config, ok bool)
	// Migrate is MIGRATE's cache of connections to its targets.
	Migrate MigrateSockets

	// StreamOffset, when set, is the replication offset (Redis's
	// master_repl_offset), read under the lock after a command that
	// propagated something to record the client's WOff.
	StreamOffset func() int64

	// prop is the propagation stream, which hands changes to its
	// consumers: the AOF, replicas (propagate.go, Attach).
	prop propagation

	// OnPanic, when set, receives a panic recovered from a command's
	// handler with the goroutine's stack, for the log.
	OnPanic func(cmd string, recovered any, stack []byte)

	// Abort, when set, is Redis's serverPanic: it logs msg as the reason
	// of a bug report and ends the process, without returning. Unset (a
	// test), the command that called for it is not run.
	Abort func(msg string)
	// diskErrLogMs is when "Replica is applying a command even though it
	// is unable to write to disk." was last logged (Unix ms).
	diskErrLogMs int64

	// Tracking is client-side caching's registry (tracking.go); nil in
	// tests that do not need it.
	Tracking *Tracking

	// OnEvicted, when set, receives every evicted key, removed and
	// detached, after its keyspace event and propagation (the expiry
	// stream sends it). Under the keyspace lock.
	OnEvicted func(ev keyspace.Evicted)

	// EvictionsPaused, when set, reports (under the lock) that no key may
	// be evicted now: CLIENT PAUSE or a shutdown's final save holds the
	// dataset still.
	EvictionsPaused func() bool

	// evict is the maxmemory configuration (maxmemory.go); MaxMemory 0
	// leaves eviction off and costs the command path one comparison.
	evict keyspace.EvictLimits

	// blocked is the registry of blocked clients (blocking.go).
	blocked blockReg

	// cmdStats are the per-command counters (INFO commandstats), indexed
	// by Command.id.
	cmdStats []CommandStats

	// Debug holds the switches DEBUG sets that the engine and the
	// commands read (SET-DISABLE-DENY-SCRIPTS,
	// SET-SKIP-CHECKSUM-VALIDATION).
	Debug DebugSwitches

	// Scripts is the server's Lua scripting (package scripting), made by
	// the scripting family when a script is first loaded; nil until then.
	Scripts ScriptEngine
	// Functions is the server's function libraries, set when the server
	// is made (nil in tests of the engine alone).
	Functions FunctionLibraries
	// script is the run of the script that runs now, nil when none does;
	// busyScript is the same run once it passed busy-reply-threshold.
	script, busyScript *ScriptRun
	// scriptInterrupt stops the running script (SetScriptInterrupt).
	scriptInterrupt atomic.Pointer[func()]
	// preOOM records whether memory was over maxmemory, with nothing left
	// to evict, before the running command (Redis's
	// pre_command_oom_state): a script checks it before its first write.
	preOOM bool
}

// NewDispatcher makes the dispatcher of a server that runs the commands
// of table on ks.
func NewDispatcher(ks *keyspace.Keyspace, srv Server, table *Table) *Dispatcher {
	d := &Dispatcher{KS: ks, Srv: srv, Table: table, ACL: NewACL(table), cmdStats: make([]CommandStats, table.size())}
	ks.SetAddedHook(d.keyAdded)
	return d
}

// CommandStats returns cmd's counters (read under the keyspace lock).
func (d *Dispatcher) CommandStats(cmd *Command) *CommandStats {
	if cmd.id >= len(d.cmdStats) {
		// Registered after the dispatcher was made (a test's command).
		d.cmdStats = append(d.cmdStats, make([]CommandStats, cmd.id+1-len(d.cmdStats))...)
	}
	return &d.cmdStats[cmd.id]
}

// ResetCommandStats zeroes every command's counters (CONFIG RESETSTAT).
func (d *Dispatcher) ResetCommandStats() { clear(d.cmdStats) }

// Exec looks up, checks and runs one command for cl, writing the reply to
// cl.W. It returns work the command left to run after the lock is
// released (see Ctx.Offload), or nil.
//
// The checks happen here and only here, in Redis's order
// (processCommand): unknown command, arity, container subcommand,
// authentication, loading, maxmemory (evictions, then OOM), MISCONF.
// Inside MULTI, a request rejected by them flags the transaction, and
// one that passes is queued instead of run (see Dispatcher.queue).
func (d *Dispatcher) Exec(cl *Client, args [][]byte) func() {
	c := &cl.ctx
	*c = Ctx{Args: args, Client: cl, W: cl.W, KS: d.KS, Srv: d.Srv, D: d, ownArgs: cl.OwnsArgs}
	if t := d.Tracking; t != nil {
		t.current = cl
		if t.maxKeys != 0 && int64(len(t.keys)) > t.maxKeys {
			t.LimitKeys()
		}
		defer func() { t.current = nil }()
	}
	cmd, rejected, denial, pos := d.resolve(cl, args)
	if cmd == nil {
		flagTransaction(cl)
		c.Error(errUnknownCommand(args))
		return nil
	}
	if rejected != "" {
		if denial != Allowed {
			c.Cmd = cmd
			d.logDenial(c, denial, logContext(cl), cmd, args, pos, "")
		}
		d.CommandStats(cmd).RejectedCalls++
		rejectCommand(c, cmd, rejected)
		return nil
	}
	// The checks below read the call's flags: a script's declared ones
	// for EVAL (a copy of the command carries them), the table's else.
	chk := cmd
	if cmd.FlagsFor != nil {
		if f := d.CallFlags(cmd, args); f != cmd.Flags {
			cp := *cmd
			cp.Flags = f
			chk = &cp
		}
	}
	if d.Cluster != nil {
		if redirect := d.clusterRedirect(cl, cmd, args); redirect != "" {
			// EXEC's transaction is dropped, any other command's
			// flagged, and the redirection is the reply either way.
			if cmd.Name == "exec" {
				discardTransaction(cl)
			} else {
				flagTransaction(cl)
			}
			d.CommandStats(cmd).RejectedCalls++
			c.Error(redirect)
			return nil
		}
	}
	if cl.Monitor && chk.Flags&(Write|ReadOnly|MayReplicate) != 0 {
		// A MONITOR client is a replica to Redis, exempt from CLIENT
		// PAUSE: it may not touch the keyspace (processCommand).
		d.CommandStats(cmd).RejectedCalls++
		rejectCommand(c, cmd, ErrReplicaKeyspace)
		return nil
	}
	if d.Loading.Load() && chk.Flags&Loading == 0 && !cl.Replaying {
		flagTransaction(cl)
		c.Error(ErrLoading)
		return nil
	}
	// The master's stream is never refused for memory (its writes are
	// the master's, already made) nor for a failed save (obey_client):
	// a replica that cannot persist it stops instead (masterDiskError).
	if d.evict.MaxMemory != 0 && !cl.Replaying && !cl.Master && d.busyScript == nil && d.oomRefused(cl, chk) {
		d.CommandStats(cmd).RejectedCalls++
		rejectCommand(c, cmd, ErrOOM)
		return nil
	}
	if refused := d.writeRefused(cl, chk); refused != "" && !cl.Replaying {
		if !cl.Master {
			flagTransaction(cl)
			c.Error(refused)
			return nil
		}
		if !d.masterDiskError(chk) {
			return nil
		}
	}
	if refused := d.replicaRefuses(cl, chk); refused != "" {
		d.CommandStats(cmd).RejectedCalls++
		rejectCommand(c, cmd, refused)
		return nil
	}
	if d.tooFewReplicas(cl, chk) {
		d.CommandStats(cmd).RejectedCalls++
		rejectCommand(c, cmd, ErrNoReplicas)
		return nil
	}
	if d.busyScript != nil {
		return d.execWhileBusy(c, cmd, chk)
	}
	c.Cmd = cmd
	if cl.InMulti && d.queue(c) {
		return nil
	}
	c.DB = d.KS.DB(cl.DB)
	// One monotonic clock read per command gives both this command's
	// duration and the next one's start; the wall-clock time snapshot is
	// derived from the batch's start (see BeginBatch).
	if cl.batchStart.IsZero() {
		d.BeginBatch(cl)
	}
	startOff := cl.batchOff
	d.KS.BeginCommandAt(cl.batchStartMs+int64(startOff/time.Millisecond), cl.NoTouch)
	d.KS.SetObeying(cl.Master)
	// The command (a whole EXEC) is one propagation unit; the clients it
	// unblocks are served after it, each a unit of its own.
	p := d.propagating()
	var sent int64
	if p != nil {
		sent = p.sent
		p.beginUnit()
	}
	if d.Tracking != nil {
		d.Tracking.executing = true
	}
	offload := d.call(c, startOff)
	if d.Tracking != nil {
		d.Tracking.executing = false
	}
	if p != nil {
		p.endUnit(cmd.Flags&TouchesArbitraryKeys == 0)
		if p.sent != sent && d.StreamOffset != nil {
			cl.WOff = d.StreamOffset()
		}
	}
	if ct := cl.Tracking; ct != nil {
		// CLIENT CACHING holds for the next command or transaction
		// (resetClient).
		if ct.Caching && !cl.InMulti && !strings.HasPrefix(cmd.Name, "client|") {
			ct.Caching = false
		}
	}
	// ASKING holds for one command, or for a transaction (resetClient).
	if cl.Asking && !cl.InMulti && cmd.Name != "asking" {
		cl.Asking = false
	}
	d.serveReady()
	return offload
}

// execWhileBusy runs a command sent while a script is past
// busy-reply-threshold (from ScriptTick, under the lock the script
// holds): -BUSY unless the command is flagged allow-busy (SCRIPT KILL,
// FUNCTION KILL, SHUTDOWN, MULTI, AUTH ...), which runs without a time
// snapshot, propagation unit or unblocked clients of its own, since the
// script's are in use (processCommand's isInsideYieldingLongCommand).
func (d *Dispatcher) execWhileBusy(c *Ctx, cmd, chk *Command) func() {
	cl := c.Client
	if chk.Flags&AllowBusy == 0 {
		d.CommandStats(cmd).RejectedCalls++
		rejectCommand(c, cmd, d.BusyScript())
		return nil
	}
	c.Cmd = cmd
	if cl.InMulti && d.queue(c) {
		return nil
	}
	c.DB = d.KS.DB(cl.DB)
	start := time.Now()
	d.run(c)
	st := d.CommandStats(cmd)
	st.Calls++
	st.Usec += time.Since(start).Microseconds()
	if c.failed {
		st.FailedCalls++
	}
	d.Srv.Stats().TotalCommands++
	cl.LastCmd = cmd.Name
	return c.offload
}

// CallFlags are the flags of cmd for a call with args: those FlagsFor
// gives when the command has it (EVAL: its script's), else the table's.
// CLIENT PAUSE reads them as the dispatcher's checks do.
func (d *Dispatcher) CallFlags(cmd *Command, args [][]byte) Flag {
	if cmd.FlagsFor == nil {
		return cmd.Flags
	}
	return cmd.FlagsFor(d, cmd, args)
}

// writeRefused is the MISCONF error when the dataset cannot be persisted
// (stop-writes-on-bgsave-error) and cmd would write: a write command, an
// EXEC of queued writes, or PING (as processCommand counts it, so that a
// monitoring client notices), else "".
func (d *Dispatcher) writeRefused(cl *Client, cmd *Command) string {
	writes := cmd.Flags&Write != 0 || cmd.Name == "ping" ||
		cmd.Name == "exec" && cl.InMulti && cl.QueuedFlags()&Write != 0
	if !writes {
		return ""
	}
	return d.Srv.Persistence().WritesRefused()
}

// masterDiskError is processCommand's rule for a command of the master's
// stream that writes (or PING) while writes are refused for a disk error
// (MISCONF): the replica cannot persist what its master sends. Unless
// replica-ignore-disk-write-errors is yes, it panics ("Replica was unable
// to write command to disk."), rather than keep in memory what is not on
// its disk; with it yes, or for the master's PING, the command runs and
// the log says so at most every 10 seconds. It reports whether the
// command runs.
func (d *Dispatcher) masterDiskError(cmd *Command) bool {
	if cmd.Name != "ping" && !d.Srv.Config().Bool("replica-ignore-disk-write-errors") {
		if d.Abort != nil {
			d.Abort("Replica was unable to write command to disk.")
		}
		return false
	}
	if now := time.Now().UnixMilli(); now > d.diskErrLogMs+10000 {
		d.diskErrLogMs = now
		d.Srv.Warning("Replica is applying a command even though it is unable to write to disk.")
	}
	return true
}

// RefusesAtOnce reports whether cmd would be refused by one of the
// checks processCommand makes before it holds a command for a pause
// (-READONLY, -MASTERDOWN, -MISCONF, -NOREPLICAS): such a command is
// answered at once, paused or not. Under the keyspace lock.
func (d *Dispatcher) RefusesAtOnce(cl *Client, cmd *Command) bool {
	return d.replicaRefuses(cl, cmd) != "" || d.writeRefused(cl, cmd) != "" || d.tooFewReplicas(cl, cmd)
}

// replicaRefuses is what a replica answers a normal client (processCommand):
// -READONLY for a write (a write command, or an EXEC of queued writes)
// while replica-read-only is yes, -MASTERDOWN for a command not flagged
// stale while the link to the master is down and replica-serve-stale-data
// is no; "" otherwise. The master's own commands always run.
func (d *Dispatcher) replicaRefuses(cl *Client, cmd *Command) string {
	if cl.Master || cl.Replaying {
		return ""
	}
	if d.ReadOnlyReplica.Load() && (cmd.Flags&Write != 0 || cmd.Name == "exec" && cl.InMulti && cl.QueuedFlags()&Write != 0) {
		return ErrReadOnlyReplica
	}
	if d.StaleRefused.Load() && (cmd.Flags&Stale == 0 || cmd.Name == "exec" && cl.QueuedLack(Stale)) {
		return ErrMasterDown
	}
	return ""
}

// tooFewReplicas reports whether cmd would write (a write command or an
// EXEC of queued writes) while min-replicas-to-write asks for more good
// replicas than there are (checkGoodReplicasStatus); a replica is never
// refused.
func (d *Dispatcher) tooFewReplicas(cl *Client, cmd *Command) bool {
	if d.MinReplicas.Load() <= 0 || cl.Replaying {
		return false
	}
	writes := cmd.Flags&Write != 0 || cmd.Name == "exec" && cl.InMulti && cl.QueuedFlags()&Write != 0
	return writes && !d.KS.IsReplica() && d.GoodReplicas.Load() < d.MinReplicas.Load()
}

// call runs c.Cmd, whose time snapshot is taken, and accounts for it
// (command stats, AfterCall hooks); startOff is its start as an offset
// into the client's batch. EXEC runs its queued commands through it.
func (d *Dispatcher) call(c *Ctx, startOff time.Duration) func() {
	cl := c.Client
	cmd := c.Cmd
	p := d.propagating()
	if p != nil {
		p.beforeCall()
	}
	d.run(c)
	if p != nil {
		p.afterCall(c)
	}
	d.KS.EndCommand(c.dirty > 0)
	if t := d.Tracking; t != nil && len(t.clients) != 0 {
		caller := c
		if cl.Script && d.script != nil {
			caller = d.script.caller
		}
		t.AfterCommand(c, caller)
	}
	endOff := time.Since(cl.batchStart)
	cl.batchOff = endOff
	dur := endOff - startOff
	st := d.CommandStats(cmd)
	st.Calls++
	st.Usec += dur.Microseconds()
	if c.failed {
		st.FailedCalls++
	}
	d.Srv.Stats().TotalCommands++
	cl.LastCmd = cmd.Name
	if cl.Blocked {
		noteBlocked(c, dur)
	}
	for _, h := range d.AfterCall {
		h(c, dur)
	}
	return c.offload
}

// run calls the handler of c.Cmd through protect.
func (d *Dispatcher) run(c *Ctx) { d.protect(c, c.Cmd.Run) }

// protect calls fn(c), a command's handler or a blocked client's pop. A
// panic in it (a bug) does not take the server down with every client's
// connection and whatever was not yet saved: it is logged with its stack,
// the reply fn wrote so far is replaced with an error, and serving goes
// on. What fn changed before it panicked stays, as a command that failed
// half-way through would leave it.
func (d *Dispatcher) protect(c *Ctx, fn func(*Ctx)) {
	mark := c.W.Mark()
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		if d.OnPanic != nil {
			d.OnPanic(c.Cmd.Name, r, debug.Stack())
		}
		c.W.Truncate(mark)
		c.offload = nil
		// Its arguments as they came are not what it did: the AOF and
		// replicas get nothing of it (the log says so).
		c.PreventPropagation()
		c.Error(ErrInternal(c.Cmd.Name))
	}()
	fn(c)
}

// Resolve finds the command args would run and applies the checks that
// reject a request before it runs, in Redis's order (processCommand):
// unknown command (nil), arity, container subcommand, authentication,
// RESP2's subscribed mode. rejected is the error reply, "" when the
// command may run; cmd is then the command (or container) the rejection
// is counted against.
func (d *Dispatcher) Resolve(cl *Client, args [][]byte) (cmd *Command, rejected string) {
	cmd, rejected, _, _ = d.resolve(cl, args)
	return cmd, rejected
}

// resolve is Resolve, and when the ACL refuses the command, why and the
// position of the key or channel it refused.
func (d *Dispatcher) resolve(cl *Client, args [][]byte) (cmd *Command, rejected string, denial Denial, pos int) {
	cmd = d.Table.Lookup(args[0])
	if cmd == nil {
		return nil, "", Allowed, 0
	}
	if !cmd.ArityOK(len(args)) {
		return cmd, ErrWrongArgs(cmd.Name), Allowed, 0
	}
	if cmd.Subs != nil && len(args) >= 2 {
		sub := Lookup2(cmd, args[1])
		if sub == nil {
			return cmd, ErrUnknownSubcommand(string(args[1]), strings.ToUpper(cmd.Name)), Allowed, 0
		}
		if !sub.ArityOK(len(args)) {
			return sub, ErrWrongArgs(sub.Name), Allowed, 0
		}
		cmd = sub
	}
	// Before authentication, as processCommand checks CMD_PROTECTED.
	if cmd.Protected != "" && !cl.Replaying && !ProtectedAllowed(d.Srv.Config().String(cmd.Protected), cl) {
		return cmd, ErrProtectedCommand(cmd.Name, cmd.Protected), Allowed, 0
	}
	if cmd.Flags&NoAuth == 0 && d.AuthRequired(cl) {
		return cmd, ErrNoAuth, Allowed, 0
	}
	if cl.InMulti && cmd.Flags&NoMulti != 0 {
		return cmd, ErrNotInMulti, Allowed, 0
	}
	if denial, pos = d.ACL.Check(cl.User, cmd, args); denial != Allowed {
		return cmd, ErrACLDenied(denial, cmd.Name), denial, pos
	}
	// A RESP2 connection with subscriptions carries pushed messages: only
	// the commands whose replies its reader expects may run.
	if cl.Subscribed() && cl.W.Proto() == 2 && !allowedSubscribed(cmd) {
		return cmd, ErrSubscribedContext(cmd.Name), Allowed, 0
	}
	return cmd, "", Allowed, 0
}

// ProtectedAllowed is server.c's allowProtectedAction: whether a
// directive of enable-debug-command's kind, set to value (no, yes,
// local), lets cl run what it protects. "local" allows the unix socket
// and the loopback addresses 127.0.0.1 and ::1 (islocalClient), no other.
func ProtectedAllowed(value string, cl *Client) bool {
	switch value {
	case "yes":
		return true
	case "local":
		if cl.UnixSocket {
			return true
		}
		host, _, err := net.SplitHostPort(cl.Addr)
		return err == nil && (host == "127.0.0.1" || host == "::1")
	}
	return false
}

// AuthRequired reports whether cl must authenticate before running
// commands (server.c authRequired): it has not, and the default user has
// a password or is off.
func (d *Dispatcher) AuthRequired(cl *Client) bool {
	return !cl.Authed && d.ACL.AuthRequired()
}

// NewClientAuth sets up a new connection's user: the default one, and
// authenticated when it needs no password (createClient).
func (d *Dispatcher) NewClientAuth(cl *Client) {
	cl.User = d.ACL.Default
	cl.Authed = !d.ACL.AuthRequired()
}

// logContext is where a denial happened, as ACL LOG says.
func logContext(cl *Client) string {
	if cl.InMulti {
		return "multi"
	}
	return "toplevel"
}

// BeginBatch reads the clock for a run of commands executed back to back
// under one acquisition of the keyspace lock, and notes it as the
// client's last interaction (its commands have just been read): one
// clock read serves both, where a second for the interaction alone cost
// about 0.6% of the server's CPU at pipeline 1. Call it after taking the
// lock: time spent waiting for the lock must not count as a command's.
func (d *Dispatcher) BeginBatch(cl *Client) {
	cl.batchStart = time.Now()
	cl.batchStartMs = cl.batchStart.UnixMilli()
	cl.batchOff = 0
	cl.LastInteraction.Store(cl.batchStartMs)
}

// Prefetch starts loading the keyspace memory that the commands of a
// pipelined batch will look up first (keyspace.DB.Prefetch), in the
// client's database: argument 1 of each, which is the first key of
// nearly every command that has one, or argument 3 of a script's call
// (EVAL, EVALSHA, FCALL and their _RO forms: after the script and
// numkeys), and every key of MSET, MSETNX, MGET, DEL, UNLINK, EXISTS
// and TOUCH (up to prefetchMaxKeys in all). A guess is enough: for a
// command whose argument is not a key it costs a hash and a line loaded
// for nothing, and it saves looking each command up in the table twice.
// A lone command of one key gains nothing from it; one of several keys
// does (an MSET of ten 1 KiB values is a batch of its own). It returns
// how many of cmds it covered, at least one: the caller prefetches from
// the next. Under the keyspace lock.
func (d *Dispatcher) Prefetch(cl *Client, cmds [][][]byte) int {
	var keys [prefetchMaxKeys][]byte
	n := 0
	covered := 0
	for _, args := range cmds {
		if n == len(keys) {
			break
		}
		covered++
		switch {
		case len(args) > 3 && callsScript(args[0]):
			keys[n] = args[3]
			n++
		case len(args) > 2 && keysEvery(args[0]) > 0:
			step := keysEvery(args[0])
			for i := 1; i < len(args) && n < len(keys); i += step {
				keys[n] = args[i]
				n++
			}
		case len(args) > 1:
			keys[n] = args[1]
			n++
		}
	}
	if n > 1 {
		d.KS.DB(cl.DB).Prefetch(keys[:n])
	}
	// Then the elements, when the commands read or write fields of one
	// hash or members of one set or sorted set: make bench's HSET, SADD
	// and ZADD, a mail queue's message hashes.
	var elems [keyspace.PrefetchKeys][]byte
	var key []byte
	n = 0
	for _, args := range cmds {
		if n == len(elems) || len(args) < 3 {
			break
		}
		at := elementArg(args[0], len(args))
		if at == 0 || len(args[at]) > prefetchMaxElement {
			break
		}
		if n == 0 {
			key = args[1]
		} else if string(args[1]) != string(key) {
			break
		}
		elems[n] = args[at]
		n++
	}
	if n > 1 {
		d.KS.DB(cl.DB).PrefetchElements(key, elems[:n])
	}
	return max(covered, 1)
}

// prefetchMaxElement bounds the length of an element Prefetch loads:
// the lookup hashes it again, and past a few kilobytes the second hash
// costs more than the misses it saves (a 1 KiB member's hash was 6-7%
// of SADD's samples).
const prefetchMaxElement = 4 << 10

// prefetchMaxKeys bounds the keys one Prefetch loads: a pipelined
// window of MSETs of ten keys each would otherwise load more than the
// first level of cache holds before the first command runs.
const prefetchMaxKeys = 4 * keyspace.PrefetchKeys

// keysEvery is 1 for the commands whose arguments are all keys (MGET,
// DEL, UNLINK, EXISTS, TOUCH), 2 for those of keys and values in turn
// (MSET, MSETNX), 0 for the others: Prefetch loads every key of the
// first two kinds.
func keysEvery(name []byte) int {
	if len(name) < 3 || len(name) > 6 {
		return 0
	}
	switch name[0] | 0x20 {
	case 'm':
		if EqualFold(name, "mset") || EqualFold(name, "msetnx") {
			return 2
		}
		if EqualFold(name, "mget") {
			return 1
		}
	case 'd', 'u', 'e', 't':
		if EqualFold(name, "del") || EqualFold(name, "unlink") || EqualFold(name, "exists") || EqualFold(name, "touch") {
			return 1
		}
	}
	return 0
}

// elementArg is the index of the argument of a command of argc
// arguments named name that is an element of a collection it looks up,
// or 0 for a command of another kind:
//   - 2, a field, for HSET, HGET, HSETNX, HINCRBY, HEXISTS, HDEL,
//     HSTRLEN, HMGET and HMSET (their first field);
//   - 2, a member, for SADD, SREM, SISMEMBER and SMISMEMBER, and for
//     ZSCORE, ZMSCORE, ZRANK, ZREVRANK and ZREM (their first member);
//   - the last, a member, for ZADD and ZINCRBY, whose member follows
//     options and a score (ZADD's last pair).
func elementArg(name []byte, argc int) int {
	if len(name) < 4 || len(name) > 10 {
		return 0
	}
	switch name[0] | 0x20 {
	case 'h':
		if EqualFold(name, "hset") || EqualFold(name, "hget") || EqualFold(name, "hsetnx") || EqualFold(name, "hincrby") ||
			EqualFold(name, "hexists") || EqualFold(name, "hdel") || EqualFold(name, "hstrlen") || EqualFold(name, "hmget") ||
			EqualFold(name, "hmset") {
			return 2
		}
	case 's':
		if EqualFold(name, "sadd") || EqualFold(name, "srem") || EqualFold(name, "sismember") || EqualFold(name, "smismember") {
			return 2
		}
	case 'z':
		if EqualFold(name, "zadd") || EqualFold(name, "zincrby") {
			return argc - 1
		}
		if EqualFold(name, "zscore") || EqualFold(name, "zmscore") || EqualFold(name, "zrank") || EqualFold(name, "zrevrank") ||
			EqualFold(name, "zrem") {
			return 2
		}
	}
	return 0
}

// callsScript reports whether name is EVAL, EVALSHA, FCALL or one of
// their _RO forms, whose first key is argument 3.
func callsScript(name []byte) bool {
	if len(name) < 4 || len(name) > 10 {
		return false
	}
	switch name[0] | 0x20 {
	case 'e':
		return EqualFold(name, "evalsha") || EqualFold(name, "eval") || EqualFold(name, "evalsha_ro") || EqualFold(name, "eval_ro")
	case 'f':
		return EqualFold(name, "fcall") || EqualFold(name, "fcall_ro")
	}
	return false
}

// Lookup2 finds a subcommand of container cmd, case-insensitively.
func Lookup2(cmd *Command, name []byte) *Command {
	if len(name) > 64 {
		return nil
	}
	var buf [64]byte
	return cmd.Subs[string(lowerASCII(buf[:], name))]
}
