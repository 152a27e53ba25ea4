// Package replication is zredis's replication (Redis 7.0 replication.c).
//
// It owns the replication IDs and offsets and the encoding of the stream
// (Stream), the backlog of the stream's last bytes (Backlog), and the
// master side (Master): the replicas a server serves, PSYNC and SYNC,
// the full synchronisation's RDB transfer from a fork-less snapshot
// (disk-based or diskless), the feed of the propagation stream to the
// backlog and the replicas, REPLCONF ACK and WAIT, min-replicas-to-write's
// good replicas, ROLE and INFO replication's master fields, FAILOVER,
// and what a shutdown asks of the replicas (are they caught up, who
// lags); and the replica side (Link, link.go): REPLICAOF, the link to a
// master (the handshake, PSYNC, the full sync's RDB received and
// loaded, the master's stream applied and acknowledged), the cached
// master, INFO replication's replica fields and the replication aux
// fields of an RDB file.
//
// The package keeps no global state. A Master reaches its server only
// through Host, and a Link through LinkHost (host.go): the replica
// connections, the propagation stream, RDB writing and loading, pauses,
// the TLS client configuration, blocked clients.
package replication
