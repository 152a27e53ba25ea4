package commands

import "github.com/zredis/zredis/engine"

// Transactions: MULTI EXEC DISCARD WATCH UNWATCH (Redis multi.c). Queueing
// and running a transaction is the engine's (engine/multi.go): the
// dispatcher queues what a client sends inside MULTI, and EXEC runs the
// queue through it.
func init() {
	const tx = engine.NoScript | engine.Loading | engine.Stale | engine.Fast | engine.AllowBusy
	register(
		&engine.Command{Name: "multi", Arity: 1, Flags: tx, ACL: "@fast @transaction", Group: "transactions", Run: engine.MultiCommand},
		&engine.Command{Name: "exec", Arity: 1, Flags: engine.NoScript | engine.Loading | engine.Stale | engine.SkipSlowlog, ACL: "@slow @transaction", Group: "transactions", Run: engine.ExecCommand},
		&engine.Command{Name: "discard", Arity: 1, Flags: tx, ACL: "@fast @transaction", Group: "transactions", Run: engine.DiscardCommand},
		&engine.Command{Name: "watch", Arity: -2, Flags: tx, ACL: "@fast @transaction", FirstKey: 1, LastKey: -1, KeyStep: 1, Group: "transactions", Run: engine.WatchCommand},
		&engine.Command{Name: "unwatch", Arity: 1, Flags: tx, ACL: "@fast @transaction", Group: "transactions", Run: engine.UnwatchCommand},
	)
}
