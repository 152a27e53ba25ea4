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
// lags).
//
// The package keeps no global state. A Master reaches its server only
// through Host (host.go): the replica connections, the propagation
// stream, RDB writing, pauses, and this server's own link to a master,
// which is still kept by package server (the replica side).
package replication
