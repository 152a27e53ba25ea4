package engine

import (
	"strings"
	"sync/atomic"

	"github.com/zredis/zredis/config"
	"github.com/zredis/zredis/keyspace"
	"github.com/zredis/zredis/resp"
)

// Server is what commands need from the server that runs them: the
// connection registry, configuration and life cycle. The server package
// implements it; the methods are called with the keyspace lock held.
type Server interface {
	Config() *config.Config
	// Clients lists the connected clients, ordered by ID.
	Clients() []*Client
	// Stats are the server-wide counters.
	Stats() *ServerStats
	// Shutdown asks the server to shut down. The returned wait is called
	// without the keyspace lock: it blocks until the lagging replicas
	// caught up (or shutdown-timeout passed) and the final save is done,
	// and returns "" when the server goes on to exit, else the error text
	// to reply (the shutdown was refused or cancelled, and the server
	// goes on serving).
	Shutdown(opts ShutdownOptions) (wait func() string)
	// AbortShutdown cancels a shutdown waiting for its replicas (or a
	// signal's shutdown not started yet) and reports whether there was
	// one (SHUTDOWN ABORT).
	AbortShutdown() bool
	// Info writes the server-owned INFO fields of a section (server,
	// clients, memory, persistence, replication, cpu) to b.
	Info(section string, b []byte) []byte
	// Monitor streams every command from now on to c, whose Monitor flag
	// the MONITOR command has set; the server forgets c once the flag is
	// cleared (RESET).
	Monitor(c *Client)
	// Feed hands a command to MONITOR clients.
	Feed(c *Client, args [][]byte)
	// Pause postpones clients' commands until endMs (Unix ms): every
	// command when all is set, otherwise those that write (CLIENT PAUSE).
	// A later pause extends, never shortens or narrows, the current one.
	Pause(endMs int64, all bool)
	// Unpause ends a pause and lets the postponed commands run.
	Unpause()
	// PubSub is the registry of subscriptions and the keyspace
	// notification switch (pubsub.go, notify.go).
	PubSub() *Subscriptions
	// Persistence saves and reports the dataset on disk (SAVE, BGSAVE,
	// LASTSAVE, stop-writes-on-bgsave-error).
	Persistence() Persistence
	// Replication serves the replication commands (replication.go).
	Replication() Replication
	// Debug serves the DEBUG subcommands that reach into the server
	// (debug.go).
	Debug() Debug
	// Warning writes a line to the server's log at the warning level.
	Warning(msg string)
	// ReplicaOf makes the server a replica of host:port, or a master
	// again when host is "" (REPLICAOF); who is the client as the log
	// names it. The reply is a status. It never waits, so it also runs
	// inside MULTI.
	ReplicaOf(host string, port int, who string) (reply string)
}

// ShutdownOptions are SHUTDOWN's modifiers.
type ShutdownOptions struct {
	Save, NoSave, Now, Force, Abort bool
}

// ServerStats are the counters INFO stats reads, and the server-wide
// records built from every call (slow log, latency events, latency
// histograms). They are updated under the keyspace lock, except the
// atomics.
type ServerStats struct {
	StartMs             int64
	TotalCommands       int64
	TotalErrorReplies   int64
	UnexpectedErrors    int64
	ErrorCounts         map[string]int64 // errorstats: prefix -> count
	RejectedConnections int64
	TotalConnections    int64
	EvictedKeys         int64 // kept by eviction
	EvictedClients      int64 // clients disconnected by maxmemory-clients
	Dirty               int64 // changes since the last save (rdb_changes_since_last_save)

	// Kept by the server's replication: full synchronisations, and
	// partial ones accepted and refused (sync_full, sync_partial_ok,
	// sync_partial_err).
	SyncFull, SyncPartialOK, SyncPartialErr int64

	// Kept by the pub/sub family for INFO stats.
	PubSubChannels, PubSubPatterns, PubSubShardChannels int64

	// Network and I/O counters, updated by the connections. NetIn and
	// NetOut leave out the replication traffic, counted apart as Redis
	// 7.0 counts it (stat_net_repl_input_bytes, ..._output_bytes): on a
	// replica, what it reads from its master (the RDB payload and the
	// stream); on a master, what it writes to its replicas' connections
	// once they asked to sync. INFO's totals add them up.
	NetIn, NetOut                   atomic.Int64
	ReplNetIn, ReplNetOut           atomic.Int64
	ReadsProcessed, WritesProcessed atomic.Int64

	// Instantaneous metrics, sampled by the server's cron (INFO stats):
	// the input and output rates of all traffic, and of replication's.
	InstOpsPerSec                         int64
	InstInputKbps, InstOutputKbps         float64
	InstReplInputKbps, InstReplOutputKbps float64
	PeakMemory                            int64 // used_memory_peak
	StartupMemory                         int64 // used_memory_startup, set once serving

	SlowLog SlowLog
	Latency LatencyMonitor
	// LatencyTracking mirrors latency-tracking: per-command latency
	// histograms (INFO latencystats, LATENCY HISTOGRAM).
	LatencyTracking bool
	// Histograms are the per-command latency histograms, made on a
	// command's first call while LatencyTracking is on.
	Histograms map[*Command]*Histogram
}

// Ctx is what a handler gets: its arguments, the client, the selected
// database and a reply writer.
type Ctx struct {
	Args   [][]byte
	Cmd    *Command
	Client *Client
	W      *resp.Writer
	KS     *keyspace.Keyspace
	DB     *keyspace.DB
	Srv    Server
	// D is the dispatcher running the command: the engine's per-server
	// state (blocked clients, propagation, counters) hangs off it.
	D *Dispatcher

	failed  bool
	dirty   int
	offload func()
	// forceReplicas: propagate to replicas although nothing changed
	// (ForceReplicaPropagation).
	forceReplicas bool
	// ownArgs: Args come straight from the client's request reader, so
	// a big one is the command's to keep (see OwnsArg).
	ownArgs bool
	// origArgs are the arguments as the client sent them once the
	// command replaced Args with its propagated form (RewriteArgs), nil
	// otherwise: only a rewrite keeps them, as Redis keeps
	// original_argv, so other commands pay nothing for it.
	origArgs [][]byte
}

// RewriteArgs replaces the command's arguments with argv, the form it
// propagates as they are (GEOADD's ZADD: Redis's replaceClientCommandVector).
// The slow log and MONITOR still show the arguments the client sent
// (OriginalArgs).
func (c *Ctx) RewriteArgs(argv [][]byte) {
	if c.origArgs == nil {
		c.origArgs = c.Args
	}
	c.Args = argv
}

// OriginalArgs are the arguments as the client sent them (redacted), what
// the slow log and MONITOR show (Redis's original_argv when set): Args
// unless the command rewrote them.
func (c *Ctx) OriginalArgs() [][]byte {
	if c.origArgs != nil {
		return c.origArgs
	}
	return c.Args
}

// Error writes an error reply and counts it in errorstats.
func (c *Ctx) Error(msg string) {
	c.failed = true
	c.W.Error(msg)
	c.countError(msg)
}

// ErrorNoStats writes an error reply already counted in the error stats:
// a script's error raised by a command it called, which counted it
// (Redis's ERR_REPLY_FLAG_NO_STATS_UPDATE). The command still counts as
// failed.
func (c *Ctx) ErrorNoStats(msg string) {
	c.failed = true
	c.W.Error(msg)
}

// MaxErrorCodes bounds the distinct error codes errorstats tracks, as
// Redis's ERROR_STATS_NUMBER does: codes are client-influenced (a script
// can raise any), so the table must not grow without limit.
const MaxErrorCodes = 128

func (c *Ctx) countError(msg string) {
	st := c.Srv.Stats()
	st.TotalErrorReplies++
	code := msg
	for i := 0; i < len(msg); i++ {
		if msg[i] == ' ' {
			code = msg[:i]
			break
		}
	}
	if st.ErrorCounts == nil {
		st.ErrorCounts = map[string]int64{}
	}
	if _, ok := st.ErrorCounts[code]; ok || len(st.ErrorCounts) < MaxErrorCodes {
		st.ErrorCounts[code]++
	}
}

// redactedArg replaces a secret argument once the handler is done with it.
var redactedArg = []byte("(redacted)")

// Redact hides argument i (a password) of the arguments the client sent
// from MONITOR and the slow log, as Redis's redactClientCommandArgument
// does. The handler must not read the argument afterwards.
func (c *Ctx) Redact(i int) { c.OriginalArgs()[i] = redactedArg }

// OwnsArg reports whether a, one of Args, is a big argument the request
// reader allocated for this command alone (resp.IsOwned), which the
// command may keep instead of copying.
func (c *Ctx) OwnsArg(a []byte) bool { return c.ownArgs && resp.IsOwned(a) }

// ErrorTo counts an error reply the command sent another client (CLIENT
// UNBLOCK ... ERROR's to the client it unblocks) in errorstats and, as
// Redis sees the error count grow during the call (call's
// incrCommandStatsOnError), as a failure of the command itself. The
// reply is the caller's to write.
func (c *Ctx) ErrorTo(msg string) {
	c.failed = true
	c.countError(msg)
}

// Failed reports whether the command answered an error.
func (c *Ctx) Failed() bool { return c.failed }

// Changes is the number of changes the running command has recorded so
// far (Dirty), for a command that runs another's body and must know
// whether it changed anything (BLMOVE).
func (c *Ctx) Changes() int { return c.dirty }

// Dirty records n changes to the dataset (rdb_changes_since_last_save,
// and what decides whether a command is propagated).
func (c *Ctx) Dirty(n int) { c.dirty += n }

// Offload asks the dispatcher to run fn after releasing the keyspace lock
// and before the client's next command runs, for a long read over a
// snapshot (KEYS). fn writes the reply.
func (c *Ctx) Offload(fn func()) { c.offload = fn }

// Config is the server configuration.
func (c *Ctx) Config() *config.Config { return c.Srv.Config() }

// ReplyHelp writes a container command's HELP as Redis's addReplyHelp: a
// header naming the command as typed (upper-cased), the lines, and the
// HELP entry, all status replies.
func (c *Ctx) ReplyHelp(lines []string) {
	c.W.Array(len(lines) + 3)
	c.W.Simple(strings.ToUpper(string(c.Args[0])) + " <subcommand> [<arg> [value] [opt] ...]. Subcommands are:")
	for _, l := range lines {
		c.W.Simple(l)
	}
	c.W.Simple("HELP")
	c.W.Simple("    Prints this help.")
}
