package commands

import (
	"strings"

	"github.com/zredis/zredis/keyspace"
)

// Transactions: MULTI EXEC DISCARD WATCH UNWATCH (Redis multi.c). The
// queue lives with the client; the watched keys live in the keyspace
// (keyspace/watch.go), which every change of a key signals.
func init() {
	const tx = NoScript | Loading | Stale | Fast | AllowBusy
	register(
		&Command{Name: "multi", Arity: 1, Flags: tx, ACL: "@fast @transaction", Group: "transactions", Run: multiCommand},
		&Command{Name: "exec", Arity: 1, Flags: NoScript | Loading | Stale | SkipSlowlog, ACL: "@slow @transaction", Group: "transactions", Run: execCommand},
		&Command{Name: "discard", Arity: 1, Flags: tx, ACL: "@fast @transaction", Group: "transactions", Run: discardCommand},
		&Command{Name: "watch", Arity: -2, Flags: tx, ACL: "@fast @transaction", FirstKey: 1, LastKey: -1, KeyStep: 1, Group: "transactions", Run: watchCommand},
		&Command{Name: "unwatch", Arity: 1, Flags: tx, ACL: "@fast @transaction", Group: "transactions", Run: unwatchCommand},
	)
	onReset(func(c *Ctx) { discardTransaction(c.Client) })
}

// Error texts of this family (multi.c, server.c).
const (
	errMultiNested      = "ERR MULTI calls can not be nested"
	errExecWithoutMulti = "ERR EXEC without MULTI"
	errDiscardNoMulti   = "ERR DISCARD without MULTI"
	errWatchInMulti     = "ERR WATCH inside MULTI is not allowed"
	errNotInMulti       = "ERR Command not allowed inside a transaction"
	errExecAbort        = "EXECABORT Transaction discarded because of previous errors."
	errExecAbortBecause = "EXECABORT Transaction discarded because of: "
)

// txState is a client's transaction: the commands queued since MULTI and
// the keys it WATCHes.
type txState struct {
	queue     []queued
	dirtyExec bool // a command was rejected while queueing: EXEC aborts
	watch     *keyspace.Watch
	disp      *Dispatcher // runs the queue; set while in MULTI
}

// maxKeptQueue bounds the queue capacity a client keeps between
// transactions.
const maxKeptQueue = 1024

// queued is one command waiting for EXEC: its arguments are copied out of
// the connection's read buffer, into one allocation.
type queued struct {
	cmd  *Command
	args [][]byte
}

// QueuedFlags is the union of the flags of the commands cl has queued
// since MULTI, 0 outside MULTI. CLIENT PAUSE WRITE holds an EXEC whose
// queue writes, as Redis holds it by the transaction's command flags.
func (cl *Client) QueuedFlags() Flag {
	var f Flag
	if cl.InMulti && cl.tx != nil {
		for _, q := range cl.tx.queue {
			f |= q.cmd.Flags
		}
	}
	return f
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
		msg = errExecAbortBecause + strings.TrimPrefix(msg, "ERR ")
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
	tx.disp = d
	if cmd.Flags&NoMulti != 0 {
		cmd.stats.RejectedCalls++
		rejectCommand(c, cmd, errNotInMulti)
		return true
	}
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
		tx.queue = append(tx.queue, queued{cmd: cmd, args: args})
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
	tx.disp = nil
	tx.watch.Clear()
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

func multiCommand(c *Ctx) {
	cl := c.Client
	if cl.InMulti {
		c.Error(errMultiNested)
		return
	}
	txOf(c)
	cl.InMulti = true
	cl.MultiLen = 0
	c.W.OK()
}

func discardCommand(c *Ctx) {
	if !c.Client.InMulti {
		c.Error(errDiscardNoMulti)
		return
	}
	discardTransaction(c.Client)
	c.W.OK()
}

// execCommand runs the queued commands one after the other, under the
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
func execCommand(c *Ctx) {
	cl := c.Client
	if !cl.InMulti {
		c.Error(errExecWithoutMulti)
		return
	}
	tx := cl.tx
	if tx.dirtyExec {
		discardTransaction(cl)
		c.Error(errExecAbort)
		return
	}
	if tx.watch.Broken() {
		discardTransaction(cl)
		c.W.NullArray()
		return
	}
	tx.watch.Clear()
	d := tx.disp
	queue := tx.queue
	c.W.Array(len(queue))
	for i := range queue {
		q := &queue[i]
		ic := Ctx{Args: q.args, Cmd: q.cmd, Client: cl, W: cl.W, KS: c.KS, DB: c.KS.DB(cl.DB), Srv: c.Srv}
		if offload := d.call(&ic, cl.batchOff); offload != nil {
			offload()
		}
	}
	discardTransaction(cl)
}

// ---- WATCH UNWATCH --------------------------------------------------------

func watchCommand(c *Ctx) {
	if c.Client.InMulti {
		c.Error(errWatchInMulti)
		return
	}
	w := txOf(c).watch
	for _, key := range c.Args[1:] {
		w.Add(c.DB, key)
	}
	c.W.OK()
}

func unwatchCommand(c *Ctx) {
	if tx := c.Client.tx; tx != nil {
		tx.watch.Clear()
	}
	c.W.OK()
}
