package commands

import (
	"strings"
	"sync/atomic"
	"time"

	"github.com/zredis/zredis/keyspace"
)

// Dispatcher runs commands from the table. One serves the whole server;
// Exec is called with the keyspace lock held.
type Dispatcher struct {
	KS  *keyspace.Keyspace
	Srv Server

	// Hooks run after every executed command, under the lock (slow log,
	// latency, MONITOR). Set before serving clients.
	AfterCall []func(c *Ctx, dur time.Duration)

	// Loading is set while the dataset loads: commands without the
	// loading flag are refused with LOADING.
	Loading atomic.Bool

	// prop hands changes to the AOF and replicas (propagate.go,
	// SetPropagator).
	prop propagation
}

// Exec looks up, checks and runs one command for cl, writing the reply to
// cl.W. It returns work the command left to run after the lock is
// released (see Ctx.Offload), or nil.
//
// The checks happen here and only here, in Redis's order
// (processCommand): unknown command, arity, container subcommand,
// authentication. Inside MULTI, a request rejected by them flags the
// transaction, and one that passes is queued instead of run (see
// Dispatcher.queue).
func (d *Dispatcher) Exec(cl *Client, args [][]byte) func() {
	c := &cl.ctx
	*c = Ctx{Args: args, Client: cl, W: cl.W, KS: d.KS, Srv: d.Srv, ownArgs: cl.OwnsArgs}
	cmd, rejected := Resolve(cl, args)
	if cmd == nil {
		flagTransaction(cl)
		c.Error(errUnknownCommand(args))
		return nil
	}
	if rejected != "" {
		cmd.stats.RejectedCalls++
		rejectCommand(c, cmd, rejected)
		return nil
	}
	if d.Loading.Load() && cmd.Flags&Loading == 0 && !cl.Replaying {
		flagTransaction(cl)
		c.Error(ErrLoading)
		return nil
	}
	if refused := d.writeRefused(cl, cmd); refused != "" && !cl.Replaying {
		flagTransaction(cl)
		c.Error(refused)
		return nil
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
	// The command (a whole EXEC) is one propagation unit; the clients it
	// unblocks are served after it, each a unit of its own.
	p := d.propagating()
	if p != nil {
		p.beginUnit()
	}
	offload := d.call(c, startOff)
	if p != nil {
		p.endUnit()
	}
	serveReady(d)
	return offload
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
	cmd.Run(c)
	if p != nil {
		p.afterCall(c)
	}
	d.KS.EndCommand(c.dirty > 0)
	endOff := time.Since(cl.batchStart)
	cl.batchOff = endOff
	dur := endOff - startOff
	cmd.stats.Calls++
	cmd.stats.Usec += dur.Microseconds()
	if c.failed {
		cmd.stats.FailedCalls++
	}
	d.Srv.Stats().TotalCommands++
	cl.LastCmd = cmd.Name
	for _, h := range d.AfterCall {
		h(c, dur)
	}
	return c.offload
}

// Resolve finds the command args would run and applies the checks that
// reject a request before it runs, in Redis's order (processCommand):
// unknown command (nil), arity, container subcommand, authentication,
// RESP2's subscribed mode. rejected is the error reply, "" when the
// command may run; cmd is then the command (or container) the rejection
// is counted against.
func Resolve(cl *Client, args [][]byte) (cmd *Command, rejected string) {
	cmd = Lookup(args[0])
	if cmd == nil {
		return nil, ""
	}
	if !cmd.arityOK(len(args)) {
		return cmd, ErrWrongArgs(cmd.Name)
	}
	if cmd.Subs != nil && len(args) >= 2 {
		sub := Lookup2(cmd, args[1])
		if sub == nil {
			return cmd, ErrUnknownSubcommand(string(args[1]), strings.ToUpper(cmd.Name))
		}
		if !sub.arityOK(len(args)) {
			return sub, ErrWrongArgs(sub.Name)
		}
		cmd = sub
	}
	if !cl.Authed && cmd.Flags&NoAuth == 0 {
		return cmd, ErrNoAuth
	}
	// A RESP2 connection with subscriptions carries pushed messages: only
	// the commands whose replies its reader expects may run.
	if subscribed(cl) && cl.W.Proto() == 2 && !allowedSubscribed(cmd) {
		return cmd, errSubscribedContext(cmd.Name)
	}
	return cmd, ""
}

// BeginBatch reads the clock for a run of commands executed back to back
// under one acquisition of the keyspace lock. Call it after taking the
// lock: time spent waiting for the lock must not count as a command's.
func (d *Dispatcher) BeginBatch(cl *Client) {
	cl.batchStart = time.Now()
	cl.batchStartMs = cl.batchStart.UnixMilli()
	cl.batchOff = 0
}

// Lookup2 finds a subcommand of container cmd, case-insensitively.
func Lookup2(cmd *Command, name []byte) *Command {
	if len(name) > 64 {
		return nil
	}
	var buf [64]byte
	for i, ch := range name {
		if 'A' <= ch && ch <= 'Z' {
			ch += 'a' - 'A'
		}
		buf[i] = ch
	}
	return cmd.Subs[string(buf[:len(name)])]
}
