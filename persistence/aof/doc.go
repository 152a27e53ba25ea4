// Package aof is Redis 7.0's multi-part append-only file: the manifest, the
// base and incremental files, the writer with its fsync policies and group
// commit, the loader, the rewrite protocol and the checker behind
// zredis-check-aof.
//
// # Layout
//
// Everything lives in one directory (appenddirname, default
// "appendonlydir"); file names derive from appendfilename (the prefix,
// default "appendonly.aof") exactly as Redis 7.0 names them:
//
//	appendonly.aof.manifest        the manifest (see Manifest)
//	appendonly.aof.3.base.rdb      the base: a snapshot, RDB (aof-use-rdb-preamble yes)
//	appendonly.aof.3.base.aof      ... or as commands
//	appendonly.aof.7.incr.aof      commands appended since the base, in order
//
// A Redis 6 style single file (appendonly.aof, possibly starting with an RDB
// preamble) is read by LoadFile.
//
// # Durability
//
// Writer.Append only queues bytes (it runs under the server's keyspace lock);
// one goroutine writes whatever has accumulated and, under PolicyAlways,
// fsyncs it once for all the writers waiting on it (group commit).
// Writer.Wait returns when a command is written (and, under PolicyAlways,
// on disk). A crash loses, per policy: Always, nothing that Wait
// acknowledged; EverySec, the writes of about the last second (the
// background fsync runs once per second); No, whatever the kernel had not
// written back.
//
// # Crash safety
//
// The manifest is replaced atomically (temp file, fsync, rename, directory
// fsync), and a file is referenced by a manifest only once it exists; see
// Rewrite for why every intermediate state of a rewrite loads.
//
// RDB content is not this package's business: loading and writing it are
// callbacks (LoadOptions.LoadRDB, Rewrite.Commit's writer, CheckOptions.CheckRDB).
package aof
