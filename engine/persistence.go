package engine

import "github.com/zredis/zredis/keyspace"

// Persistence is what the server offers the persistence commands. Its
// methods are called under the keyspace lock, except the work Save
// returns.
type Persistence interface {
	// Save prepares a foreground save of snap (taken by the caller under
	// the lock) and returns the work that writes it, to run without the
	// lock; or an error reply when a save cannot start now.
	Save(snap *keyspace.Snapshot) (write func() error, refused string)
	// BGSave starts a background save and returns the reply: a status, or
	// an error starting with "ERR". Inside EXEC (inTx) it schedules the
	// save for after the transaction, as Redis does, so that the file
	// never holds half of one.
	BGSave(inTx bool) string
	// LastSave is the Unix time of the last successful save.
	LastSave() int64
	// RewriteAOF starts a background AOF rewrite (BGREWRITEAOF), or
	// schedules it inside EXEC, and returns the reply: a status, or an
	// error starting with "ERR".
	RewriteAOF(inTx bool) string
	// WritesRefused is the error reply for commands that write while the
	// last background save failed and stop-writes-on-bgsave-error is on
	// (MISCONF), or "".
	WritesRefused() string
}
