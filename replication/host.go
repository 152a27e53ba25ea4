package replication

import (
	"crypto/tls"
	"io"

	"github.com/zredis/zredis/engine"
	"github.com/zredis/zredis/keyspace"
)

// Host is what a Master needs of the server that runs it. Every method
// is called with the keyspace lock held, except WriteRDB.
type Host interface {
	// Conn is the connection of client cl, nil when it has none (the
	// link to this server's own master) or when it is closing.
	Conn(cl *engine.Client) Conn
	// Link is this server's own link to a master, ok false while this
	// server is a master.
	Link() (l LinkStatus, ok bool)
	// SetMaster makes this server a replica of host:port (a FAILOVER
	// handing its role over); UnsetMaster makes it a master again.
	SetMaster(host string, port int)
	UnsetMaster()

	// AttachReplicas and Detach make the master a consumer of the
	// propagation stream, with the commands for replicas only, and stop
	// it (the dispatcher's).
	AttachReplicas(p engine.Propagator)
	Detach(p engine.Propagator)
	// SetGoodReplicas tells the dispatcher how many replicas count for
	// min-replicas-to-write; GoodReplicas is the figure it holds.
	SetGoodReplicas(n int64)
	GoodReplicas() int64

	// SaveInfo is the aux fields an RDB written now carries for
	// replication (repl-stream-db, repl-id, repl-offset), nil for none.
	SaveInfo() [][2]string
	// FunctionCodes is the function libraries an RDB holds.
	FunctionCodes() []string
	// WriteRDB writes snap (nil: no keys), with functions and aux, as an
	// RDB stream to w. Without the lock.
	WriteRDB(w io.Writer, snap *keyspace.Snapshot, functions []string, aux [][2]string) error

	// Paused reports whether clients' writes are paused at nowMs (CLIENT
	// PAUSE, a FAILOVER, a shutdown's wait): the stream's offset must
	// stay.
	Paused(nowMs int64) bool
	// HoldWritesForFailover holds clients' writes while a FAILOVER waits
	// for its target (on), or lets them run (off).
	HoldWritesForFailover(on bool)
	// ReplicaOutputLimitReached applies the replica class of
	// client-output-buffer-limit to used bytes held for a replica,
	// softSince being when it went past the soft limit (0: not past it).
	ReplicaOutputLimitReached(used uint64, softSince *int64) bool
}

// LinkStatus is what ROLE and INFO show of this server's link to its
// master.
type LinkStatus struct {
	Host  string
	Port  int
	State string // connect, connecting, handshake, sync, connected
	// Up: the link is connected (master_link_status:up).
	Up bool
	// Streaming: the master's stream is being applied (a master client
	// exists): the offset is the stream's.
	Streaming bool
}

// LinkHost is what a Link (the replica side) needs of the server that
// runs it, beyond the keyspace, the dispatcher and the configuration it
// is given. Every method is called with the keyspace lock held, except
// LoadRDB and TLSClientConfig.
type LinkHost interface {
	// SetRole sets the role the log lines show: 'M' master, 'S' replica.
	SetRole(role byte)
	// Closing reports whether the server is shutting down: no new link.
	Closing() bool
	// DisconnectBlockedClients ends every blocking command with an error
	// and closes its connection (a server becoming a replica).
	DisconnectBlockedClients()
	// NewClientID is the ID of a new client (the master's).
	NewClientID() int64
	// BigValueArriving is the hook of the master's stream reader
	// (resp.Reader.SetBigHook): an argument of resp.BigValue or more is
	// about to be allocated.
	BigValueArriving()
	// TLSClientConfig is the TLS configuration of the link to a master
	// with tls-replication yes, nil when TLS is not configured.
	TLSClientConfig() *tls.Config
	// RDBPath is the RDB file (dir and dbfilename) that a full
	// synchronisation's payload replaces.
	RDBPath() string
	// LoadRDB loads an RDB stream into the keyspace, stopping when
	// aborted reports true; it returns the keys loaded and the file's
	// aux fields. Without the lock.
	LoadRDB(r io.Reader, aborted func() bool) (keys int, aux [][2]string, err error)
	// LoadedExpired is the keys the last load found expired.
	LoadedExpired() int64
	// RewriteAOFAfterSync rewrites the AOF, which does not hold the
	// data set a full synchronisation loaded (restartAOFAfterSYNC), or
	// schedules it after a rewrite running.
	RewriteAOFAfterSync()
	// UnexpectedError logs and counts an error reply that a command of
	// the master's stream got, and returns the command's name.
	UnexpectedError(cl *engine.Client, args [][]byte, reply []byte, from, to string) (name string)
	// Panic ends the process at once, as Redis's serverPanic, reporting
	// its caller's place.
	Panic(msg string)
}

// Conn is a replica's connection, as its host serves it.
type Conn interface {
	// Client is the connection's client.
	Client() *engine.Client
	// Closing reports whether the connection was dropped or is closing
	// for its output limits. Under the lock.
	Closing() bool
	// Done is closed once the connection is dropped; OverLimit reports
	// whether it is closing for its output limits. Without the lock.
	Done() <-chan struct{}
	OverLimit() bool
	// Push queues stream bytes for the socket, as Pub/Sub messages are
	// queued, under the replica's output limits. Under the lock.
	Push(frame []byte)
	// CloseOverLimit closes the connection for its output limits. Under
	// the lock.
	CloseOverLimit()
	// WriteLater writes b to the socket after the replies being written.
	WriteLater(b []byte)
	// Send writes b to the socket; the channel is closed once the socket
	// took all of it, or the connection closed. b may be reused then.
	Send(b []byte) <-chan struct{}
	// CloseAfterFlush closes the connection once its output is written.
	CloseAfterFlush()
	// Drop closes the connection at once. Under the lock.
	Drop()
	// DisableNoDelay turns TCP_NODELAY off (repl-disable-tcp-nodelay).
	DisableNoDelay()
}

// Logger is where the master logs, as redis-server's log.
type Logger interface {
	Noticef(format string, args ...any)
	Warningf(format string, args ...any)
}
