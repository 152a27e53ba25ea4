package commands

import "github.com/zredis/zredis/engine"

// Persistence commands (rdb.c: SAVE, BGSAVE, LASTSAVE). The server does
// the saving; these parse, ask and reply.
func init() {
	const adm = engine.Admin | engine.NoScript | engine.NoAsyncLoading
	register(
		&engine.Command{Name: "save", Arity: 1, Flags: adm | engine.NoMulti, ACL: "@admin @dangerous", Group: "server", Run: saveCommand},
		&engine.Command{Name: "bgsave", Arity: -1, Flags: adm, ACL: "@admin @dangerous", Group: "server", Run: bgsaveCommand},
		&engine.Command{Name: "lastsave", Arity: 1, Flags: engine.Loading | engine.Stale | engine.Fast, ACL: "@admin @dangerous", Group: "server", Run: lastsaveCommand},
		&engine.Command{Name: "bgrewriteaof", Arity: 1, Flags: adm, ACL: "@admin @dangerous", Group: "server", Run: bgrewriteaofCommand},
	)
}

// saveCommand is SAVE: the dataset as of now, written before the reply.
// Unlike Redis, which blocks every client for the whole save, only the
// caller waits: the file is written from a snapshot without the lock
// (SAVE is refused inside MULTI, so it never runs under EXEC's lock, which
// the streaming snapshot's reader takes shard by shard).
func saveCommand(c *engine.Ctx) {
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
func bgsaveCommand(c *engine.Ctx) {
	if len(c.Args) > 1 && (len(c.Args) > 2 || !engine.EqualFold(c.Args[1], "schedule")) {
		c.Error(engine.ErrSyntax)
		return
	}
	reply := c.Srv.Persistence().BGSave(c.Client.InMulti)
	if len(reply) >= 3 && reply[:3] == "ERR" {
		c.Error(reply)
		return
	}
	c.W.Simple(reply)
}

func lastsaveCommand(c *engine.Ctx) { c.W.Int(c.Srv.Persistence().LastSave()) }

func bgrewriteaofCommand(c *engine.Ctx) {
	reply := c.Srv.Persistence().RewriteAOF(c.Client.InMulti)
	if len(reply) >= 3 && reply[:3] == "ERR" {
		c.Error(reply)
		return
	}
	c.W.Simple(reply)
}
