package engine

import (
	"strings"

	"github.com/zredis/zredis/keyspace"
)

// Transactions: MULTI EXEC DISCARD WATCH UNWATCH (Redis multi.c). The
// queue lives with the client; the watched keys live in the keyspace
// (keyspace/watch.go), which every change of a key signals. The
// dispatcher queues what a client sends inside MULTI (Dispatcher.queue);
// the command table (commands/transactions.go) runs the handlers below.

// txState is a client's transaction: the commands queued since MULTI and
// the keys it WATCHes.
type txState struct {
	queue     []queued
	dirtyExec bool // a command was rejected while queueing: EXEC aborts
	watch     *keyspace.Watch
}

// maxKeptQueue bounds the queue capacity a client keeps between
// transactions.
const maxKeptQueue = 1024

// queued is one command waiting for EXEC: its arguments are copied out of
// the connection's read buffer, into one allocation.
type queued struct {
	cmd  *Command
	args [][]byte
	// flags are the call's (getCommandFlags: an EVAL's are its
	// script's), which MULTI accumulates for EXEC's checks.
	flags Flag
}

// QueuedFlags is the union of the flags of the commands cl has queued
// since MULTI, 0 outside MULTI. CLIENT PAUSE WRITE holds an EXEC whose
// queue writes, as Redis holds it by the transaction's command flags.
func (cl *Client) QueuedFlags() Flag {
	var f Flag
	if cl.InMulti && cl.tx != nil {
		for _, q := range cl.tx.queue {
			f |= q.flags
		}
	}
	return f
}

// QueuedLack reports whether a command cl has queued lacks flag f (an
// empty queue lacks nothing): Redis's cmd_inv_flags.
func (cl *Client) QueuedLack(f Flag) bool {
	if cl.InMulti && cl.tx != nil {
		for _, q := range cl.tx.queue {
			if q.flags&f == 0 {
				return true
			}
		}
	}
	return false
}

// txOf returns cl's transaction state, made on first use.
func txOf(c *Ctx) *txState {
	cl := c.Client
	if cl.tx == nil {
		cl.tx = &txState{watch: c.KS.NewWatch()}
	}
	return cl.tx
}

// flagTransaction marks the transaction as failed when a command is
// rejected before being queued (unknown, wrong arity, not authenticated,
// not allowed in MULTI): EXEC will answer EXECABORT.
func flagTransaction(cl *Client) {
	if cl.InMulti {
		cl.tx.dirtyExec = true
	}
}

// rejectCommand answers a request refused before running (Redis's
// rejectCommand): inside MULTI it flags the transaction, and a refused
// EXEC answers EXECABORT with the reason, MULTI or not, ending the
// transaction if there is one.
func rejectCommand(c *Ctx, cmd *Command, msg string) {
	flagTransaction(c.Client)
	if cmd.Name == "exec" {
		discardTransaction(c.Client)
		msg = ErrExecAbortBecause + strings.TrimPrefix(msg, "ERR ")
	}
	c.Error(msg)
}

// runsInMulti reports whether cmd runs at once inside MULTI instead of
// being queued (processCommand's exceptions).
func runsInMulti(cmd *Command) bool {
	switch cmd.Name {
	case "exec", "discard", "multi", "watch", "quit", "reset":
		return true
	}
	return false
}

// queue handles a request that passed the dispatcher's checks while cl
// is in MULTI. It reports true when the request was answered here: a
// no_multi command is refused (flagging the transaction), any other
// command but EXEC DISCARD MULTI WATCH QUIT RESET is queued and answered
// +QUEUED. As Redis, a transaction already flagged queues nothing more
// but still answers +QUEUED.
func (d *Dispatcher) queue(c *Ctx) bool {
	cl := c.Client
	cmd := c.Cmd
	tx := cl.tx
	if runsInMulti(cmd) {
		return false
	}
	cl.LastCmd = cmd.Name
	if !tx.dirtyExec {
		n := 0
		for _, a := range c.Args {
			n += len(a)
		}
		buf := make([]byte, 0, n)
		args := make([][]byte, len(c.Args))
		for i, a := range c.Args {
			buf = append(buf, a...)
			args[i] = buf[len(buf)-len(a) : len(buf) : len(buf)]
		}
		tx.queue = append(tx.queue, queued{cmd: cmd, args: args, flags: d.CallFlags(cmd, args)})
		cl.MultiLen = len(tx.queue)
	}
	c.W.Simple("QUEUED")
	return true
}

// discardTransaction leaves MULTI, dropping the queue, and unwatches
// every key (DISCARD, EXEC, RESET, the client's end).
func discardTransaction(cl *Client) {
	cl.InMulti = false
	cl.MultiLen = 0
	tx := cl.tx
	if tx == nil {
		return
	}
	clear(tx.queue)
	tx.queue = tx.queue[:0]
	if cap(tx.queue) > maxKeptQueue {
		tx.queue = nil // a huge transaction does not pin its queue
	}
	tx.dirtyExec = false
	tx.watch.Clear()
}

// ResetClient clears what the engine keeps for cl (its MULTI queue, its
// WATCHed keys, its subscriptions), as RESET's clearClientConnectionState
// does. Under the keyspace lock.
func (d *Dispatcher) ResetClient(cl *Client) {
	discardTransaction(cl)
	d.Srv.PubSub().Release(cl)
}

// ReleaseClient frees what the transaction family keeps for a client
// that is gone (its queue and its watched keys) and takes it off the
// waiter lists of the blocking commands. Call it under the
// keyspace lock; calling it twice is harmless.
func ReleaseClient(cl *Client) {
	releaseBlocked(cl)
	discardTransaction(cl)
	cl.tx = nil
}

// ---- MULTI EXEC DISCARD ---------------------------------------------------

func MultiCommand(c *Ctx) {
	cl := c.Client
	if cl.InMulti {
		c.Error(ErrMultiNested)
		return
	}
	txOf(c)
	cl.InMulti = true
	cl.MultiLen = 0
	c.W.OK()
}

func DiscardCommand(c *Ctx) {
	if !c.Client.InMulti {
		c.Error(ErrDiscardNoMulti)
		return
	}
	discardTransaction(c.Client)
	c.W.OK()
}

// ExecCommand runs the queued commands one after the other, under the
// keyspace lock the dispatcher holds for EXEC, and answers their replies
// as one array; a command that fails at run time (WRONGTYPE) answers its
// error in place and the others still run. It answers EXECABORT when a
// command was rejected while queueing, and the null array when a watched
// key was touched (or expired) since WATCH.
//
// The queued commands see EXEC's time snapshot (as Redis freezes the time
// for the whole transaction), run with the client's database at their
// turn (a queued SELECT applies to the commands after it), and go through
// the dispatcher's accounting one by one: command stats, slow log and
// MONITOR see each of them. Work a command would offload past the lock
// (KEYS) runs in place: nothing may release the lock mid-EXEC.
func ExecCommand(c *Ctx) {
	cl := c.Client
	if !cl.InMulti {
		c.Error(ErrExecWithoutMulti)
		return
	}
	tx := cl.tx
	if tx.dirtyExec {
		discardTransaction(cl)
		c.Error(ErrExecAbort)
		return
	}
	if tx.watch.Broken() {
		discardTransaction(cl)
		c.W.NullArray()
		return
	}
	tx.watch.Clear()
	d := c.D
	queue := tx.queue
	c.W.Array(len(queue))
	for i := range queue {
		q := &queue[i]
		ic := Ctx{Args: q.args, Cmd: q.cmd, Client: cl, W: cl.W, KS: c.KS, DB: c.KS.DB(cl.DB), Srv: c.Srv, D: d}
		// The rules may have changed since the command was queued.
		if denial, pos := d.ACL.Check(cl.User, q.cmd, q.args); denial != Allowed {
			d.logDenial(c, denial, "multi", q.cmd, q.args, pos, "")
			c.Error(ErrNoPermInExec(denial))
			continue
		}
		if offload := d.call(&ic, cl.batchOff); offload != nil {
			offload()
		}
	}
	discardTransaction(cl)
	// The queued commands propagated themselves; EXEC adds nothing
	// (call's "we never propagate EXEC explicitly").
	c.PreventPropagation()
}

// ---- WATCH UNWATCH --------------------------------------------------------

func WatchCommand(c *Ctx) {
	if c.Client.InMulti {
		c.Error(ErrWatchInMulti)
		return
	}
	w := txOf(c).watch
	for _, key := range c.Args[1:] {
		w.Add(c.DB, key)
	}
	c.W.OK()
}

func UnwatchCommand(c *Ctx) {
	if tx := c.Client.tx; tx != nil {
		tx.watch.Clear()
	}
	c.W.OK()
}
