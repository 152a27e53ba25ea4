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
	// BGSave starts a background save (schedule: or schedules it once an
	// AOF rewrite ends) and returns the reply: a status, or an error
	// starting with "ERR".
	BGSave(schedule bool) string
	// LastSave is the Unix time of the last successful save.
	LastSave() int64
	// RewriteAOF starts a background AOF rewrite (BGREWRITEAOF) and
	// returns the reply: a status, or an error starting with "ERR".
	RewriteAOF() string
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
func bgsaveCommand(c *Ctx) {
	schedule := false
	if len(c.Args) > 1 {
		if len(c.Args) > 2 || !EqualFold(c.Args[1], "schedule") {
			c.Error(ErrSyntax)
			return
		}
		schedule = true
	}
	reply := c.Srv.Persistence().BGSave(schedule)
	if len(reply) >= 3 && reply[:3] == "ERR" {
		c.Error(reply)
		return
	}
	c.W.Simple(reply)
}

func lastsaveCommand(c *Ctx) { c.W.Int(c.Srv.Persistence().LastSave()) }

func bgrewriteaofCommand(c *Ctx) {
	reply := c.Srv.Persistence().RewriteAOF()
	if len(reply) >= 3 && reply[:3] == "ERR" {
		c.Error(reply)
		return
	}
	c.W.Simple(reply)
}
