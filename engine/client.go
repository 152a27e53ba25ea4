package engine

import (
	"sync/atomic"
	"time"

	"github.com/zredis/zredis/resp"
)

// OutputFigures is a client's output as CLIENT LIST shows it: Buf bytes
// in what stands for Redis's static reply buffer (obl), Mem bytes in
// Blocks blocks beyond it (omem, oll). Output buffer limits count Mem.
// Writing is set while the socket has not taken all that was written to
// it (events=rw: Redis has a write handler installed).
type OutputFigures struct {
	Buf, Blocks, Mem int64
	Writing          bool
}

// Client is one connection's state as commands see it. The server owns
// the connection; fields below are read and written only with the
// keyspace lock held (commands run under it), except the atomics, which
// the connection's goroutine updates as it reads and writes.
type Client struct {
	ID      int64
	Addr    string // peer address, host:port
	LAddr   string // local address
	FD      int
	Created int64 // Unix ms

	Name    string
	LibName string
	LibVer  string
	DB      int
	// User is the ACL user the client runs as: the default user until it
	// authenticates as another. Authed tells whether it authenticated
	// (or connected while the default user needed no password).
	User   *User
	Authed bool
	// Replaying marks the client that replays the AOF at start-up: it
	// runs while the dataset loads.
	Replaying bool
	NoEvict   bool
	NoTouch   bool
	// Master marks the client a replica applies its master's stream as
	// (flag M): it may write on a read-only replica.
	Master bool
	// UnixSocket marks a client connected through the unix socket (flag
	// U; its address is the socket's path).
	UnixSocket bool
	LastCmd    string
	Monitor    bool
	// Replica marks a replica's connection, once it sent SYNC or PSYNC
	// (flag S; client type replica, its output limits those of the
	// replica class).
	Replica bool
	// WOff is the replication offset right after the client's last
	// command that was propagated, which WAIT waits for replicas to
	// acknowledge (Redis's woff).
	WOff int64

	// Asking is set by ASKING for the next command (CLIENT_ASKING);
	// ReadOnlyCluster by READONLY (CLIENT_READONLY).
	Asking, ReadOnlyCluster bool
	// TLS marks a client of the TLS port.
	TLS bool

	// W receives the replies; the connection flushes it after a batch.
	W *resp.Writer
	// OwnsArgs: the commands' arguments come from a resp.Reader, whose
	// big arguments (resp.IsOwned) a command may keep rather than copy.
	OwnsArgs bool
	// KeptArgBytes counts the bytes of such arguments commands kept since
	// the connection last looked (the others are garbage once the batch
	// ran). Loop.
	KeptArgBytes int64

	// CloseAfterReply asks the connection to close once the pending
	// replies are written (QUIT, a protocol error, CLIENT KILL of self).
	CloseAfterReply bool

	// Kill drops the connection at once: it leaves the client list and
	// runs nothing more (CLIENT KILL). Set by the server; called with the
	// keyspace lock held.
	Kill func()

	// CLIENT REPLY: ReplyOff drops every reply; ReplySkip drops the reply
	// of the command being run; ReplySkipNext turns into ReplySkip for the
	// next command. The connection applies them after each command, but
	// not to what it pushed (Redis's CLIENT_PUSHING): the confirmations
	// of SUBSCRIBE and its kin, which Pushed holds a copy of, also inside
	// an EXEC whose reply is dropped.
	ReplyOff, ReplySkip, ReplySkipNext bool
	Pushed                             []byte

	// State other families keep, which CLIENT LIST shows and the idle
	// timeout reads.
	Subs, PSubs, SSubs int  // pub/sub subscriptions (flag P)
	InMulti            bool // inside MULTI (flag x)
	MultiLen           int  // commands queued in MULTI (multi=)
	Blocked            bool // waiting in a blocking command (flag b)
	// BlockedTimeout: the blocking command waits with a timeout. Redis
	// puts only those clients in its timeout table (INFO's
	// clients_in_timeout_table), not one waiting forever.
	BlockedTimeout bool
	// Paused marks a client whose next command CLIENT PAUSE holds back:
	// Redis blocks it (BLOCKED_POSTPONE), so it shows flag b and counts
	// in blocked_clients, not in the timeout table. PausedArgs is that
	// command, whose arguments CLIENT LIST's argv-mem counts. Set by the
	// server, under the lock.
	Paused     bool
	PausedArgs [][]byte
	// DenyBlocking makes a blocking command answer at once, as it does
	// inside MULTI (CLIENT_DENY_BLOCKING): the client scripts run their
	// commands as.
	DenyBlocking bool
	// Tracking is CLIENT TRACKING's state; nil until first turned on.
	Tracking *ClientTracking
	// Script marks the client a script's commands run as (Redis's
	// CLIENT_SCRIPT): SORT orders a set it would otherwise leave unsorted.
	Script bool
	// tx is the MULTI queue and the WATCHed keys (transactions.go); nil
	// until the client first sends MULTI or WATCH.
	tx *txState
	// Unblock ends a blocking command early, with the reply a timeout
	// gives when errMsg is "" (CLIENT UNBLOCK), with the error errMsg
	// otherwise; it reports whether the client was blocked. Set by the
	// blocking commands, nil when the client cannot be unblocked.
	Unblock func(errMsg string) bool
	// PeerClosed reports whether the peer hung up, for a client whose
	// connection is detached from its loop (blocked); nil when unknown.
	// Called under the keyspace lock.
	PeerClosed func() bool
	// WhileBlocked serves the other clients of this client's connection
	// loop while a script it runs is past busy-reply-threshold (they get
	// -BUSY, or SCRIPT KILL and SHUTDOWN NOSAVE run): the loop is the
	// script's goroutine. Set by the server; nil for clients without a
	// connection. Called under the keyspace lock.
	WhileBlocked func()
	// blockWait is the client's entry in the waiter lists while Blocked.
	blockWait *waiter
	// blocked is the call the client is blocked in, kept by call for
	// its accounting when it completes (record.go unblocked).
	blocked blockedCall

	ctx Ctx // reused for every command of this client

	// The clock of the current run of commands (Dispatcher.BeginBatch).
	batchStart   time.Time
	batchStartMs int64
	batchOff     time.Duration

	// Output reports the client's output as CLIENT LIST shows it;
	// writer is the length of its reply writer when the caller may read
	// it (the client itself running a command), 0 otherwise. Set by the
	// server once the connection is on its loop; nil: no output held.
	// Called under the keyspace lock.
	Output func(writer int) OutputFigures

	LastInteraction atomic.Int64 // Unix ms of the last read or command
	QueryBuf        atomic.Int64 // bytes read and not yet parsed
	QueryBufAlloc   atomic.Int64 // bytes the query buffer has allocated (0: released)
	NetIn           atomic.Int64
	NetOut          atomic.Int64
	Commands        atomic.Int64
}

// Ctx is the context of the client's last command, for tests and for a
// hook that looks at what ran.
func (cl *Client) Ctx() *Ctx { return &cl.ctx }
