package commands

import "github.com/zredis/zredis/keyspace"

// Persistence commands (rdb.c: SAVE, BGSAVE, LASTSAVE). The server does
// the saving; these parse, ask and reply.
func init() {
	const adm = Admin | NoScript | NoAsyncLoading
	register(
		&Command{Name: "save", Arity: 1, Flags: adm | NoMulti, ACL: "@admin @dangerous", Group: "server", Run: saveCommand},
		&Command{Name: "bgsave", Arity: -1, Flags: adm, ACL: "@admin @dangerous", Group: "server", Run: bgsaveCommand},
		&Command{Name: "lastsave", Arity: 1, Flags: Loading | Stale | Fast, ACL: "@admin @dangerous", Group: "server", Run: lastsaveCommand},
		&Command{Name: "bgrewriteaof", Arity: 1, Flags: adm, ACL: "@admin @dangerous", Group: "server", Run: bgrewriteaofCommand},
	)
}

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

// saveCommand is SAVE: the dataset as of now, written before the reply.
// Unlike Redis, which blocks every client for the whole save, only the
// caller waits: the file is written from a snapshot without the lock
// (SAVE is refused inside MULTI, so it never runs under EXEC's lock, which
// the streaming snapshot's reader takes shard by shard).
func saveCommand(c *Ctx) {
	snap := c.KS.Snapshot()
	write, refused := c.Srv.Persistence().Save(snap)
	if refused != "" {
		snap.ReleaseLocked()
		c.Error(refused)
		return
	}
	w := c.W
	c.Offload(func() {
		if err := write(); err != nil {
			w.Error("ERR")
			return
		}
		w.OK()
	})
}

// bgsaveCommand is BGSAVE [SCHEDULE].
// bgsaveCommand is BGSAVE [SCHEDULE]. With no fork there is no child
// process for a save to wait for, so SCHEDULE only matters where Redis
// would wait: nowhere but inside EXEC, where every BGSAVE is scheduled.
func bgsaveCommand(c *Ctx) {
	if len(c.Args) > 1 && (len(c.Args) > 2 || !EqualFold(c.Args[1], "schedule")) {
		c.Error(ErrSyntax)
		return
	}
	reply := c.Srv.Persistence().BGSave(c.Client.InMulti)
	if len(reply) >= 3 && reply[:3] == "ERR" {
		c.Error(reply)
		return
	}
	c.W.Simple(reply)
}

func lastsaveCommand(c *Ctx) { c.W.Int(c.Srv.Persistence().LastSave()) }

func bgrewriteaofCommand(c *Ctx) {
	reply := c.Srv.Persistence().RewriteAOF(c.Client.InMulti)
	if len(reply) >= 3 && reply[:3] == "ERR" {
		c.Error(reply)
		return
	}
	c.W.Simple(reply)
}
