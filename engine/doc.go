// Package engine runs commands: the part of the server every command
// passes through, and what ACL, replication and scripting build on.
//
// It owns
//
//   - the command table type (Table, Command, Flag) — the families fill
//     one table (commands.Table), the dispatcher reads it;
//   - the Dispatcher, which checks a request in Redis's order (unknown
//     command, arity, subcommand, authentication, ACL, loading,
//     maxmemory, MISCONF), queues it inside MULTI or runs it, and accounts
//     for it; the Ctx a handler gets and the Client it runs for;
//   - the ACL (acl*.go): the users, their rules and selectors, the check
//     of a command's name, keys and channels, the ACL log and file;
//   - MULTI/EXEC/WATCH (multi.go), the blocked clients (blocking.go) and
//     the pub/sub registry (pubsub.go, notify.go);
//   - the run of a Lua script as one command (script.go): the checks
//     before it runs, and ScriptCall, through which the commands a
//     script calls are checked as Redis's scriptCall checks them and run
//     like any other (package scripting holds the VM);
//   - the propagation stream (propagate.go): every change in the
//     deterministic form Redis 7.0 propagates, grouped in execution units,
//     handed to any number of consumers (the AOF; a replication backlog);
//   - the records of calls: command counters, error counts, the slow log,
//     the latency monitor and histograms (record.go, slowlog.go,
//     latency.go, histogram.go), the process-memory probe (procmem.go);
//   - INFO assembly (info.go) and the one table of error texts (errors.go).
//
// Everything a server keeps per server hangs off its Dispatcher (Ctx.D)
// or its Server (Ctx.Srv): the package holds no mutable state of its own,
// so that two servers in one process share nothing.
//
// Arrows: engine imports keyspace, config, resp, sds and redisconv, and
// nothing above it. The command families (package commands) import the
// engine; the server (package server) implements engine.Server and drives
// a Dispatcher.
package engine
