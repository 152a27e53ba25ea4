package engine

import (
	"fmt"
	"strings"
	"time"

	"github.com/zredis/zredis/cluster"
	"github.com/zredis/zredis/config"
	"github.com/zredis/zredis/resp"
)

var busyReplyThreshold = config.KeyOf("busy-reply-threshold")

// Scripts (Redis 7.0 script.c): what the engine gives the Lua scripting of
// package scripting. A script runs inside the command that started it
// (EVAL, EVALSHA, their _RO forms), under the keyspace lock, as one
// execution unit: the commands it calls go through ScriptCall, which
// checks them as scriptCall does (command, arity, noscript, stale, ACL,
// writes, OOM) and runs them through the dispatcher's call, so that
// command stats, the slow log, MONITOR, keyspace events, WATCH and the
// propagation stream see them as any other command. Their effects are
// what is propagated, inside the caller's unit (MULTI ... EXEC when more
// than one); the script's command itself never is. The time snapshot is
// the caller's: time is frozen while the script runs.

// ScriptFlags are the flags a script declares in its shebang
// (script.h SCRIPT_FLAG_*).
type ScriptFlags uint8

const (
	ScriptNoWrites ScriptFlags = 1 << iota
	ScriptAllowOOM
	ScriptAllowStale
	ScriptNoCluster
	ScriptAllowCrossSlot
	// ScriptCompat is a script without shebang (EVAL_COMPAT_MODE): it
	// declares nothing, and the checks before it runs are the old ones.
	ScriptCompat
)

// Propagation targets of redis.set_repl (PROPAGATE_AOF, PROPAGATE_REPL).
const (
	ReplNone    = 0
	ReplAOF     = 1
	ReplReplica = 2
	ReplAll     = ReplAOF | ReplReplica
)

// ScriptRun is one run of a script (Redis's scriptRunCtx): its caller,
// the client its commands run as (the "lua" client: the caller's user and
// database, no connection), and what the run allows. Make it with
// Dispatcher.BeginScript; it may be reused for later runs.
type ScriptRun struct {
	caller *Ctx
	client Client
	w      *resp.Writer
	call   Ctx // the context of the command the script calls, reused

	readOnly   bool // EVAL_RO, or the no-writes flag
	allowOOM   bool
	oomAtStart bool // memory was over maxmemory when the script started
	writeDirty bool // the script called a write command
	repl       int  // redis.set_repl
	// In cluster mode, slot is the hash slot of the keys the script
	// declared or first touched (-1: none yet), which every command it
	// calls must keep to unless crossSlot (allow-cross-slot-keys).
	slot      int
	crossSlot bool

	// Name is what the log and SCRIPT KILL call the script (its SHA1, a
	// function's name); Function is true for FCALL's, false for EVAL's.
	Name     string
	Function bool

	// The watch on the run's length (ScriptTick): its start, the
	// busy-reply-threshold it started under, whether it passed it
	// (SCRIPT_TIMEDOUT), when it last served the other clients, and
	// whether SCRIPT KILL or FUNCTION KILL asked it to stop.
	start      time.Time
	busyAfter  time.Duration
	timedOut   bool
	lastServed time.Time
	killed     bool
	// discard drops the effects of the run instead of propagating them:
	// SHUTDOWN NOSAVE stopped it, and what it wrote is not to be kept.
	discard bool
}

// Caller is the context of the command that runs the script.
func (r *ScriptRun) Caller() *Ctx { return r.caller }

// SetRepl sets where the effects of the commands called from now on are
// propagated (redis.set_repl): ReplAll, ReplAOF, ReplReplica or ReplNone.
func (r *ScriptRun) SetRepl(flags int) { r.repl = flags }

// SetResp is redis.setresp: the protocol (2 or 3) in which the script's
// redis.call replies come to it, and which decides how its booleans
// reach the caller. Every run starts with 2.
func (r *ScriptRun) SetResp(proto int) { r.w.SetProto(proto) }

// Resp is the protocol SetResp set.
func (r *ScriptRun) Resp() int { return r.w.Proto() }

// Errors of scriptPrepareForRun and scriptCall, with 7.0's texts.
const (
	ErrScriptUnknownCommand = "ERR Unknown Redis command called from script"
	ErrScriptArity          = "ERR Wrong number of args calling Redis command from script"
	ErrScriptNoScript       = "ERR This Redis command is not allowed from script"
	ErrScriptStale          = "ERR Can not execute the command on a stale replica"
	ErrScriptWriteInRO      = "ERR Write commands are not allowed from read-only scripts."
	ErrScriptNoCluster      = "ERR Can not run script on cluster, 'no-cluster' flag is set."
	ErrScriptROWithWrite    = "ERR Can not execute a script with write flag using *_ro command."
	ErrScriptROReplica      = "READONLY Can not run script with write flag on readonly replica"
	ErrScriptMasterDown     = "MASTERDOWN Link with MASTER is down, replica-serve-stale-data is set to 'no' and 'allow-stale' flag is not set on the script."
	ErrScriptOOM            = "OOM allow-oom flag is not set on the script, can not run it when used memory > 'maxmemory'"
	ErrScriptMisconfRDB     = "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk. Writable scripts are blocked. Use 'no-writes' flag for read only scripts."
	ErrScriptMisconfAOF     = "MISCONF Redis is configured to persist data to AOF, but it's currently unable to persist to disk. Writable scripts are blocked. Use 'no-writes' flag for read only scripts. AOF error: "
	ErrNotBusy              = "NOTBUSY No scripts in execution right now."
	ErrBusyEval             = "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."
	ErrBusyFunction         = "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE."
	ErrUnkillableMaster     = "UNKILLABLE The busy script was sent by a master instance in the context of replication and cannot be killed."
	ErrUnkillableWrites     = "UNKILLABLE Sorry the script already executed write commands against the dataset. You can either wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command."
)

// How often a script past busy-reply-threshold lets the other clients in:
// Redis serves them at every hook call (each 100,000 Lua instructions).
const scriptServeEvery = 2 * time.Millisecond

// BeginScript prepares run for a script with flags, run by the command
// of c (ro: EVAL_RO or EVALSHA_RO), as scriptPrepareForRun: it returns
// the error to answer when the script may not run (a shebang script
// that may write on a read-only replica, through *_RO, while writes are
// refused, or over maxmemory without allow-oom; a stale replica), else
// "" and the run is ready for ScriptCall until EndScript.
func (d *Dispatcher) BeginScript(c *Ctx, run *ScriptRun, flags ScriptFlags, ro bool) string {
	cl := c.Client
	obey := cl.Master || cl.Replaying
	stale := d.StaleRefused.Load()
	oom := d.evict.MaxMemory != 0 && d.preOOM
	if flags&ScriptCompat == 0 {
		if d.Cluster != nil && flags&ScriptNoCluster != 0 {
			return ErrScriptNoCluster
		}
		if stale && flags&ScriptAllowStale == 0 {
			return ErrScriptMasterDown
		}
		if flags&ScriptNoWrites == 0 {
			if d.ReadOnlyReplica.Load() && !obey {
				return ErrScriptROReplica
			}
			if msg := d.Srv.Persistence().WritesRefused(); msg != "" && !obey {
				if strings.HasPrefix(msg, "MISCONF Errors writing to the AOF file: ") {
					return ErrScriptMisconfAOF + strings.TrimPrefix(msg, "MISCONF Errors writing to the AOF file: ")
				}
				return ErrScriptMisconfRDB
			}
			if ro {
				return ErrScriptROWithWrite
			}
			if d.MinReplicas.Load() > 0 && !d.KS.IsReplica() && d.GoodReplicas.Load() < d.MinReplicas.Load() {
				return ErrNoReplicas
			}
		}
		if oom && !obey && flags&(ScriptAllowOOM|ScriptNoWrites) == 0 {
			return ErrScriptOOM
		}
	} else if stale {
		return ErrMasterDown
	}
	run.slot, run.crossSlot = -1, flags&ScriptAllowCrossSlot != 0
	if d.Cluster != nil && c.Cmd != nil {
		if keys := d.Table.keyRefs(c.Cmd, c.Args); len(keys) > 0 {
			run.slot = cluster.KeySlot(c.Args[keys[0].Pos])
		}
	}
	if run.w == nil {
		run.w = resp.NewWriter()
	}
	run.w.SetProto(2)
	run.caller = c
	run.client = Client{
		Addr: "lua", User: cl.User, Authed: true, DB: cl.DB, Master: cl.Master, Replaying: cl.Replaying,
		DenyBlocking: true, Script: true, W: run.w, batchStart: cl.batchStart, batchStartMs: cl.batchStartMs, batchOff: cl.batchOff,
	}
	run.readOnly = ro || flags&ScriptCompat == 0 && flags&ScriptNoWrites != 0
	run.allowOOM = flags&ScriptCompat == 0 && flags&ScriptAllowOOM != 0
	run.oomAtStart = oom
	run.writeDirty = false
	run.repl = ReplAll
	// The run starts with its command, whose start the client's batch
	// clock holds: no clock read of its own.
	run.start = cl.batchStart.Add(cl.batchOff)
	run.busyAfter = time.Duration(d.Srv.Config().IntOf(busyReplyThreshold)) * time.Millisecond
	run.timedOut, run.killed, run.discard = false, false, false
	d.script = run
	return ""
}

// EndScript ends the run: the command that ran the script propagates
// nothing of its own (its commands propagated their effects).
func (d *Dispatcher) EndScript(run *ScriptRun) {
	d.script = nil
	if run.timedOut {
		run.timedOut = false
		d.busyScript = nil
		d.KS.EndYield()
	}
	if run.discard {
		if p := d.propagating(); p != nil {
			p.discardUnit()
		}
	}
	run.caller.PreventPropagation()
	run.caller.Client.batchOff = run.client.batchOff
	run.w.Reset()
	run.caller = nil
	run.client = Client{}
	run.call = Ctx{}
}

// ScriptCall runs one command a script called (scriptCall) and returns
// its reply, RESP2-encoded (valid until the next call), or, when the
// command was refused before running, the error as a Lua error table
// holds it ("ERR Unknown Redis command called from script"): the
// refusal is counted in the error stats and against the command's
// rejected calls, as Redis counts it.
func (d *Dispatcher) ScriptCall(run *ScriptRun, args [][]byte) (reply []byte, refused string) {
	cmd := d.Table.Lookup(args[0])
	if cmd != nil && cmd.Subs != nil && len(args) >= 2 {
		cmd = Lookup2(cmd, args[1])
	}
	refused = d.scriptRefuses(run, cmd, args)
	if refused != "" {
		run.caller.countError(refused)
		if cmd != nil {
			d.CommandStats(cmd).RejectedCalls++
		}
		return nil, refused
	}
	if cmd.Flags&Write != 0 {
		run.writeDirty = true
	}
	cl := &run.client
	run.w.Reset()
	// One context serves every call of the run (a called command cannot
	// run a script in turn): a new one per call was an allocation.
	ic := &run.call
	*ic = Ctx{Args: args, Cmd: cmd, Client: cl, W: run.w, KS: d.KS, DB: d.KS.DB(cl.DB), Srv: d.Srv, D: d}
	p := d.propagating()
	if p != nil {
		p.except = ReplAll &^ run.repl
	}
	offload := d.call(ic, cl.batchOff)
	if p != nil {
		p.except = 0
	}
	if offload != nil {
		// Nothing may release the lock mid-script: a long read runs
		// in place, as inside EXEC.
		offload()
	}
	return run.w.Bytes(), ""
}

// mayRunDenied reports whether a script may call cmd, flagged noscript,
// once DEBUG SET-DISABLE-DENY-SCRIPTS allows those (Redis's tests call
// CLIENT LIST or DEBUG from scripts that way). Redis then lets any run,
// and crashes on some (a script calling EVAL); here the ones that cannot
// run in the middle of a script stay refused: those that cannot run
// inside EXEC either (SAVE, SHUTDOWN, SYNC: no-multi; MULTI, EXEC, WATCH
// and the other commands of the transaction itself), that block or wait
// (BLPOP, WAIT), that turn the connection into a subscriber or a
// monitor, that act on a script while it runs (allow-busy: SCRIPT KILL,
// FUNCTION KILL), and the scripting commands themselves (EVAL, FCALL,
// SCRIPT, FUNCTION).
func mayRunDenied(cmd *Command) bool {
	if cmd.Flags&(NoMulti|Blocking|PubSub|AllowBusy) != 0 || runsInMulti(cmd) || cmd.Group == "scripting" {
		return false
	}
	return cmd.Name != "monitor" && cmd.Name != "wait"
}

// scriptRefuses applies scriptCall's checks to cmd (nil: unknown) and
// returns the refusal, or "".
func (d *Dispatcher) scriptRefuses(run *ScriptRun, cmd *Command, args [][]byte) string {
	if cmd == nil {
		return ErrScriptUnknownCommand
	}
	if !cmd.ArityOK(len(args)) {
		return ErrScriptArity
	}
	if cmd.Flags&NoScript != 0 && !(d.Debug.DenyScriptsDisabled && mayRunDenied(cmd)) {
		return ErrScriptNoScript
	}
	if d.StaleRefused.Load() && cmd.Flags&Stale == 0 {
		return ErrScriptStale
	}
	caller := run.caller
	if denial, pos := d.ACL.Check(run.client.User, cmd, args); denial != Allowed {
		d.logDenial(caller, denial, "lua", cmd, args, pos, "")
		return "ERR The user executing the script " + aclErrorMessage(denial)
	}
	if run.readOnly && (cmd.Flags&(Write|MayReplicate) != 0 || hiddenMayReplicate(cmd)) {
		return ErrScriptWriteInRO
	}
	obey := run.client.Master || run.client.Replaying
	if cmd.Flags&Write != 0 && !run.writeDirty {
		if d.ReadOnlyReplica.Load() && !obey {
			return ErrReadOnlyReplica
		}
		if msg := d.Srv.Persistence().WritesRefused(); msg != "" {
			return msg
		}
		if d.MinReplicas.Load() > 0 && !d.KS.IsReplica() && d.GoodReplicas.Load() < d.MinReplicas.Load() {
			return ErrNoReplicas
		}
	}
	if !run.allowOOM && d.evict.MaxMemory != 0 && !obey && !run.writeDirty && run.oomAtStart && cmd.Flags&DenyOOM != 0 {
		return ErrOOM
	}
	if d.Cluster != nil && !obey {
		return d.scriptClusterRefuses(run, cmd, args)
	}
	return ""
}

// scriptClusterRefuses is scriptVerifyClusterState: in cluster mode a
// script's command may touch only keys this node serves, in one slot
// (the declared keys' or the first touched), unless the script allows
// cross-slot keys.
func (d *Dispatcher) scriptClusterRefuses(run *ScriptRun, cmd *Command, args [][]byte) string {
	run.client.Asking = run.caller.Client.Asking
	run.client.ReadOnlyCluster = run.caller.Client.ReadOnlyCluster
	switch d.clusterRedirect(&run.client, cmd, args) {
	case "":
	case ErrClusterDownRO:
		return "ERR Script attempted to execute a write command while the cluster is down and readonly"
	case ErrClusterDown:
		return "ERR Script attempted to execute a command while the cluster is down"
	default:
		return "ERR Script attempted to access a non local key in a cluster node"
	}
	keys := d.Table.keyRefs(cmd, args)
	if len(keys) == 0 || run.crossSlot {
		return ""
	}
	slot := cluster.KeySlot(args[keys[0].Pos])
	if run.slot == -1 {
		run.slot = slot
	} else if run.slot != slot {
		return "ERR Script attempted to access keys that do not hash to the same slot"
	}
	return ""
}

// hiddenMayReplicate reports the commands Redis 7.0 flags may_replicate
// without showing it in COMMAND (server.c: "Hidden on purpose"), which a
// read-only script may not call: PUBLISH, SPUBLISH, PFCOUNT.
func hiddenMayReplicate(cmd *Command) bool {
	switch cmd.Name {
	case "publish", "spublish", "pfcount":
		return true
	}
	return false
}

// aclErrorMessage is acl.c getAclErrorMessage.
func aclErrorMessage(d Denial) string {
	switch d {
	case DeniedCommand:
		return "can't run this command or subcommand"
	case DeniedKey:
		return "can't access at least one of the keys mentioned in the command arguments"
	case DeniedChannel:
		return "can't publish to the channel mentioned in the command"
	}
	return "lacking the permissions for the command"
}

// ScriptMemory are the figures of INFO memory about scripts (Redis's
// evalMemory, evalScriptsMemory, and the functions' to come).
type ScriptMemory struct {
	VMEval      int64 // used_memory_vm_eval (and used_memory_lua)
	ScriptsEval int64 // used_memory_scripts_eval
	Scripts     int64 // number_of_cached_scripts
}

// ScriptEngine is the server's scripting (package scripting) as the
// engine knows it: made on first use by the scripting family and kept
// on the dispatcher (Dispatcher.Scripts).
type ScriptEngine interface {
	// Memory reports the figures of INFO memory. Under the keyspace lock.
	Memory() ScriptMemory
}

// FunctionLibraries is the server's function libraries (package
// scripting) as the server needs them, beyond the FUNCTION family: to
// save and load them with the dataset, to flush them before a full
// synchronisation, for INFO and to stop a running function. Set on the
// dispatcher (Dispatcher.Functions) when the server is made. Under the
// keyspace lock, but Interrupt.
type FunctionLibraries interface {
	// Codes are the libraries' codes, in name order.
	Codes() []string
	// Load loads one library (FUNCTION LOAD) and returns its name or
	// the error to reply.
	Load(code string, replace bool, timeout time.Duration) (name, errMsg string)
	// Flush drops every library.
	Flush()
	// Counts are number_of_libraries and number_of_functions.
	Counts() (libs, funcs int)
	// Memory is used_memory_vm_functions and used_memory_functions.
	Memory() (vm, overhead int64)
	// Interrupt stops the running function (any goroutine).
	Interrupt()
}

// ScriptVMBaseBytes is what a fresh Lua VM counts in used_memory_lua: 32
// KB, as redis-server 7.0 reports its fresh Lua state.
const ScriptVMBaseBytes = 32 << 10

// ScriptMemory returns the scripting figures of INFO memory; before the
// first script, those of a fresh VM and an empty cache. Under the
// keyspace lock.
func (d *Dispatcher) ScriptMemory() ScriptMemory {
	if d.Scripts == nil {
		return ScriptMemory{VMEval: ScriptVMBaseBytes}
	}
	return d.Scripts.Memory()
}

// ScriptTick watches the length of a run; the scripting engine calls it
// as the script runs (every thousand or so Lua instructions), as Redis's
// Lua hook calls scriptInterrupt. Past busy-reply-threshold the run is
// timed out: the log says so once, the other clients get -BUSY for what
// they send (Exec), and every few milliseconds they are served: those of
// the caller's connection loop from here, the others by yielding the
// keyspace lock to them, so that SCRIPT KILL, FUNCTION KILL and SHUTDOWN
// NOSAVE can reach the script. It reports whether the
// script is to stop (SCRIPT KILL). Under the keyspace lock.
func (d *Dispatcher) ScriptTick(run *ScriptRun) (killed bool) {
	if !run.timedOut {
		elapsed := time.Since(run.start)
		if elapsed < run.busyAfter {
			return false
		}
		kill := "SCRIPT KILL"
		if run.Function {
			kill = "FUNCTION KILL"
		}
		d.Srv.Warning(fmt.Sprintf("Slow script detected: still in execution after %d milliseconds. You can try killing the script using the %s command. Script name is: %s.",
			elapsed.Milliseconds(), kill, run.Name))
		run.timedOut = true
		d.busyScript = run
	} else if time.Since(run.lastServed) < scriptServeEvery {
		return run.killed
	}
	if serve := run.caller.Client.WhileBlocked; serve != nil {
		serve()
	}
	d.KS.Yield()
	run.lastServed = time.Now()
	return run.killed
}

// KillScript is SCRIPT KILL (eval) and FUNCTION KILL (scriptKill): the
// running script stops at its next instruction, unless it runs for the
// master or already wrote. Called while a timed-out script serves the
// other clients (ScriptTick).
func (d *Dispatcher) KillScript(c *Ctx, eval bool) {
	run := d.script
	switch {
	case run == nil:
		c.Error(ErrNotBusy)
	case run.caller.Client.Master || run.caller.Client.Replaying:
		c.Error(ErrUnkillableMaster)
	case run.writeDirty:
		c.Error(ErrUnkillableWrites)
	case eval && run.Function:
		c.Error(ErrBusyFunction)
	case !eval && !run.Function:
		c.Error(ErrBusyEval)
	default:
		run.killed = true
		c.W.OK()
	}
}

// RunningScript is the run of the script or function that runs now:
// one past busy-reply-threshold, since nothing else runs meanwhile.
func (d *Dispatcher) RunningScript() (*ScriptRun, bool) {
	return d.script, d.script != nil
}

// Elapsed is how long the run has been going.
func (r *ScriptRun) Elapsed() time.Duration { return time.Since(r.start) }

// BusyScript is the error a command not flagged allow-busy gets while a
// script is past busy-reply-threshold, "" when none is. Under the lock.
func (d *Dispatcher) BusyScript() string {
	switch {
	case d.busyScript == nil:
		return ""
	case d.busyScript.Function:
		return ErrBusyFunction
	default:
		return ErrBusyEval
	}
}

// StopScriptForShutdown makes SHUTDOWN NOSAVE the way out of a timed-out
// script, as in Redis: the script stops at its next instruction, and
// what it wrote is neither propagated nor kept in the AOF (the server
// exits without saving).
func (d *Dispatcher) StopScriptForShutdown() {
	if d.busyScript != nil {
		d.busyScript.discard = true
		d.InterruptScript()
	}
}

// SetScriptInterrupt registers fn, which stops the running script (the
// scripting engine's Interrupt); InterruptScript calls it from any
// goroutine.
func (d *Dispatcher) SetScriptInterrupt(fn func()) { d.scriptInterrupt.Store(&fn) }

// InterruptScript stops the script that runs now, if any: the server
// calls it when a signal asks it to shut down, so that a script looping
// forever under the keyspace lock cannot keep the shutdown from taking
// it. Safe from any goroutine.
func (d *Dispatcher) InterruptScript() {
	if fn := d.scriptInterrupt.Load(); fn != nil {
		(*fn)()
	}
	if d.Functions != nil {
		d.Functions.Interrupt()
	}
}

// LevelLogger is implemented by a Server that logs at Redis's levels
// (0 debug, 1 verbose, 2 notice, 3 warning), for redis.log.
type LevelLogger interface {
	LogLevel(level int, msg string)
}

// ACLCheckCommand reports whether user may run args (redis.acl_check_cmd);
// known is false when args names no command (nor subcommand).
func (d *Dispatcher) ACLCheckCommand(user *User, args [][]byte) (ok, known bool) {
	cmd := d.Table.Lookup(args[0])
	if cmd != nil && cmd.Subs != nil && len(args) >= 2 {
		cmd = Lookup2(cmd, args[1])
	}
	if cmd == nil {
		return false, false
	}
	denial, _ := d.ACL.Check(user, cmd, args)
	return denial == Allowed, true
}
