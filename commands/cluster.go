package commands

import "github.com/zredis/zredis/engine"

// Cluster commands (cluster.c): CLUSTER and its subcommands, READONLY,
// READWRITE and ASKING, served by the cluster node (cluster.State) in
// cluster mode; without it each answers as a redis-server 7.0 started
// without cluster support. The handlers are in clusternode.go. Arity and unknown
// subcommands are checked by the dispatcher first, as processCommand
// does: `CLUSTER` alone is an arity error, `CLUSTER NOSUCH` an unknown
// subcommand, and only then does the command itself refuse (CLUSTER HELP
// included: Redis answers it from clusterCommand, after the check).
func init() {
	// Flags and ACL categories of Redis 7.0's src/commands/cluster-*.json.
	const (
		info  = engine.Stale                                        // the node's views
		admin = engine.Admin | engine.Stale | engine.NoAsyncLoading // changes to the cluster
		peek  = engine.Admin | engine.Stale                         // admin views of other nodes
		conn  = engine.Loading | engine.Stale | engine.Fast         // READONLY, READWRITE
		reset = engine.Admin | engine.NoScript | engine.Stale       // CLUSTER RESET
		help  = engine.Loading | engine.Stale                       // CLUSTER HELP
	)
	sub := func(name string, arity int, flags engine.Flag) *engine.Command {
		run := clusterHandlers[name]
		if run == nil {
			panic("commands: no handler for CLUSTER " + name)
		}
		return &engine.Command{Name: "cluster|" + name, Arity: arity, Flags: flags, Run: clusterOnly(run)}
	}
	register(
		&engine.Command{Name: "cluster", Arity: -2, Group: "cluster"},
		sub("addslots", -3, admin),
		sub("addslotsrange", -4, admin),
		sub("bumpepoch", 2, admin),
		sub("count-failure-reports", 3, peek),
		sub("countkeysinslot", 3, info),
		sub("delslots", -3, admin),
		sub("delslotsrange", -4, admin),
		sub("failover", -2, admin),
		sub("flushslots", 2, admin),
		sub("forget", 3, admin),
		sub("getkeysinslot", 4, info),
		sub("help", 2, help),
		sub("info", 2, info),
		sub("keyslot", 3, info),
		sub("links", 2, info),
		sub("meet", -4, admin),
		sub("myid", 2, info),
		sub("nodes", 2, info),
		sub("replicas", 3, peek),
		sub("replicate", 3, admin),
		sub("reset", -2, reset),
		sub("saveconfig", 2, admin),
		sub("set-config-epoch", 3, admin),
		sub("setslot", -4, admin),
		sub("shards", 2, info),
		sub("slaves", 3, peek),
		sub("slots", 2, info),

		&engine.Command{Name: "readonly", Arity: 1, Flags: conn, ACL: "@connection", Group: "cluster", Run: clusterOnly(readonlyCommand)},
		&engine.Command{Name: "readwrite", Arity: 1, Flags: conn, ACL: "@connection", Group: "cluster", Run: clusterOnly(readwriteCommand)},
		&engine.Command{Name: "asking", Arity: 1, Flags: engine.Fast, ACL: "@connection", Group: "cluster", Run: clusterOnly(askingCommand)},
	)
}

// errClusterDisabled is the refusal of every cluster command on a server
// without cluster support (clusterCommand, readonlyCommand,
// readwriteCommand, askingCommand).
const errClusterDisabled = "ERR This instance has cluster support disabled"

// clusterOnly runs a cluster command's handler in cluster mode; without
// it the command refuses, as on a server without cluster support.
func clusterOnly(run engine.Handler) engine.Handler {
	return func(c *engine.Ctx) {
		if c.D.Cluster == nil {
			c.Error(errClusterDisabled)
			return
		}
		run(c)
	}
}
