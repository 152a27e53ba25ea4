package commands

import "github.com/zredis/zredis/engine"

// Replication commands (replication.c). The link to a master is the
// server's (engine.Server.ReplicaOf).
func init() {
	const flags = engine.Admin | engine.NoScript | engine.Stale | engine.NoAsyncLoading
	register(
		&engine.Command{Name: "replicaof", Arity: 3, Flags: flags, Group: "server", Run: replicaofCommand},
		&engine.Command{Name: "slaveof", Arity: 3, Flags: flags, Group: "server", Run: replicaofCommand},
	)
}

// replicaofCommand is REPLICAOF host port | NO ONE (and SLAVEOF).
func replicaofCommand(c *engine.Ctx) {
	var host string
	var port int
	if !(engine.EqualFold(c.Args[1], "no") && engine.EqualFold(c.Args[2], "one")) {
		n, ok := engine.ParseInt(c.Args[2])
		if !ok || n < 0 || n > 65535 {
			c.Error("ERR Invalid master port")
			return
		}
		host, port = string(c.Args[1]), int(n)
	}
	who := string(engine.AppendClientInfo(nil, c, c.Client, c.KS.Now(), 0))
	reply, wait := c.Srv.ReplicaOf(host, port, who)
	if wait == nil {
		c.W.Simple(reply)
		return
	}
	c.Offload(func() { wait() })
	c.W.Simple(reply)
}
