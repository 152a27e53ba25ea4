// Package persistence is zredis's persistence orchestration: when the
// data set is written to disk and read back, on top of the formats of
// its subpackages (rdb: RDB files; aof: the multi-part append only
// file). It owns:
//
//   - the RDB saves (save.go): SAVE, BGSAVE (scheduled after EXEC
//     inside a transaction), the save points of serverCron, the retry
//     delay after a failure, the final save of a shutdown, the file
//     written to a temporary name, fsynced and renamed;
//   - the AOF at run time (aof.go): the writer every change is
//     propagated to, CONFIG SET appendonly/appendfsync/aof-disable-auto-gc,
//     BGREWRITEAOF and the automatic rewrite on growth, the first base
//     after appendonly yes, the close at shutdown, the MISCONF refusals;
//   - loading at start-up (load.go): the AOF directory (migrating a
//     Redis 6 single file first) or the RDB file, a replica's full
//     synchronisation payload, and a shutdown interrupting either;
//   - INFO persistence (info.go).
//
// Every background write (a BGSAVE, a rewrite, the AOF's close) runs on
// a goroutine the Service owns; Wait waits for them, as a shutdown does
// before its final save. What the package needs of the server that hosts
// it is the Host interface (host.go); the keyspace, the dispatcher (to
// replay an AOF, to propagate to the AOF, its function libraries), the
// configuration, a Logger and the server's counters are passed to New.
// The server implements engine.Persistence with the Service.
package persistence
