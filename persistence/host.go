package persistence

import (
	"github.com/zredis/zredis/engine"
	"github.com/zredis/zredis/persistence/rdb"
)

// Host is what a Service needs of the server that runs it. Methods are
// called with the keyspace lock held unless noted.
type Host interface {
	// ReplInfo is the aux fields an RDB written now carries for
	// replication (repl-stream-db, repl-id, repl-offset), nil for none.
	ReplInfo() [][2]string
	// RestoreReplInfo hands the aux fields of the RDB file loaded at
	// start-up back to replication. Without the lock, before serving.
	RestoreReplInfo(aux [][2]string)
	// RDBLoadOptions is how values loaded from an RDB are encoded (the
	// *-max-listpack-* directives). Without the lock.
	RDBLoadOptions() rdb.LoadOptions
	// Closing reports whether the server is shutting down: the cron
	// starts no save and no rewrite then.
	Closing() bool
	// Notify tells the process supervisor, if any, of state (sd_notify
	// lines). It may be called with or without the lock.
	Notify(state string)
	// UnexpectedError logs and counts an error reply that a replayed
	// AOF command got (afterErrorReply), and returns the command's name.
	UnexpectedError(cl *engine.Client, argv [][]byte, reply []byte, from, to string) (name string)
	// AOFProgressed tells the host that the AOF wrote or fsynced more:
	// replies held for it may go out. On the AOF writer's flusher.
	AOFProgressed()
	// Fatalf logs and exits the process at once (an AOF that cannot be
	// written under appendfsync always). Without the lock.
	Fatalf(format string, args ...any)
}

// Logger is where the Service writes its log lines, in the server's log.
type Logger interface {
	Noticef(format string, args ...any)
	Warningf(format string, args ...any)
}
