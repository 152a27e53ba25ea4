package engine

import "sync/atomic"

// Debug is what the server offers the DEBUG command (debug.c) beyond the
// dataset and the dispatcher: the subcommands that reach persistence,
// replication, the expiry timer and the server's periodic work. Its
// methods are called under the keyspace lock, from the DEBUG command.
type Debug interface {
	// Reload is DEBUG RELOAD: the RDB file saved (unless NoSave), the
	// dataset emptied (unless NoFlush) and the file loaded back, all
	// before it returns, as Redis blocks the server for it. It returns
	// "" or the error to reply.
	Reload(opts ReloadOptions) string
	// LoadAOF is DEBUG LOADAOF: the AOF written out, the dataset emptied
	// and the AOF directory replayed. It returns "" or the error to reply.
	LoadAOF() string
	// SetActiveExpire is DEBUG SET-ACTIVE-EXPIRE: off, keys past their
	// deadline stay until a command meets them.
	SetActiveExpire(on bool)
	// ChangeReplID is DEBUG CHANGE-REPL-ID: a new replication ID, and no
	// second one (changeReplicationId, clearReplicationId2).
	ChangeReplID()
	// PauseCron is DEBUG PAUSE-CRON: on, the server's periodic work
	// (serverCron's) is skipped until it is turned off.
	PauseCron(on bool)
}

// ReloadOptions are DEBUG RELOAD's options.
type ReloadOptions struct {
	// Merge (MERGE): a key (or function library) of the file replaces
	// the one in memory (RDBFLAGS_ALLOW_DUP); without it, one on both
	// sides fails the reload (Redis dies of it).
	Merge bool
	// NoFlush (NOFLUSH): the dataset is not emptied before the load.
	NoFlush bool
	// NoSave (NOSAVE): the file on disk is loaded as it is.
	NoSave bool
}

// DebugSwitches are the switches of DEBUG that the dispatcher and the
// commands read themselves (debug.c's server fields); the Dispatcher
// holds them, one set per server.
type DebugSwitches struct {
	// DenyScriptsDisabled is DEBUG SET-DISABLE-DENY-SCRIPTS: scripts may
	// call the commands flagged noscript (script_disable_deny_script),
	// those that can run inside one (mayRunDenied). Under the keyspace
	// lock.
	DenyScriptsDisabled bool
	// SkipChecksum is DEBUG SET-SKIP-CHECKSUM-VALIDATION: the CRC-64 of
	// a RESTORE payload or an RDB file loaded is not verified
	// (skip_checksum_validation). Atomic: a replica's full
	// synchronisation reads it without the lock.
	SkipChecksum atomic.Bool
}
