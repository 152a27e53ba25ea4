package engine

import "time"

// Replication is what the server offers the replication commands (SYNC,
// PSYNC, REPLCONF, WAIT, ROLE) as a master of replicas. Its methods are
// called under the keyspace lock, from the command running for the
// client they name.
type Replication interface {
	// Sync is SYNC (psync false) or PSYNC replid offset: the client
	// becomes a replica, continuing from offset or synchronised in full.
	// It writes the command's reply, if any.
	Sync(c *Ctx, psync bool, replid string, offset int64)
	// SetListeningPort, SetAddress, AddCapa and SetRDBOnly record what
	// REPLCONF listening-port, ip-address, capa and rdb-only declare.
	SetListeningPort(cl *Client, port int64)
	SetAddress(cl *Client, ip string)
	AddCapa(cl *Client, capa string)
	SetRDBOnly(cl *Client, on bool)
	// SetRDBFilter records REPLCONF rdb-filter-only: the RDB of the
	// client's full synchronisation holds no keys, and the functions only
	// when functions is true.
	SetRDBFilter(cl *Client, functions bool)
	// FilterNeedsEOF reports whether the client asked for a filtered RDB
	// (REPLCONF rdb-filter-only) without declaring capa eof: a filtered
	// RDB is only ever sent diskless, so SYNC refuses it.
	FilterNeedsEOF(cl *Client) bool
	// Ack is REPLCONF ACK offset [FACK aofOffset] from a replica
	// (aofOffset -1 when not given); it is ignored from another client.
	Ack(cl *Client, offset, aofOffset int64)
	// Wait is WAIT numreplicas timeout (0: forever): it answers the
	// number of replicas that acknowledged the client's last write, at
	// once or once enough have, or when the timeout passes.
	Wait(c *Ctx, numReplicas int64, timeout time.Duration)
	// Role writes ROLE's reply.
	Role(c *Ctx)
	// MasterLinkDown reports whether this server is a replica whose link
	// with its master is not up: it cannot serve replicas of its own.
	MasterLinkDown() bool
	// Failover is FAILOVER [TO host port [FORCE]] [TIMEOUT ms], its
	// arguments parsed: it starts a coordinated failover, or writes why
	// not.
	Failover(c *Ctx, opts FailoverOptions)
	// AbortFailover is FAILOVER ABORT.
	AbortFailover(c *Ctx)
	// FailingOver reports whether a FAILOVER is in progress.
	FailingOver() bool
	// FieldTTLRefusal is the error a command that sets a hash field's
	// deadline gets while a replica that cannot keep one is attached,
	// "" when none is.
	FieldTTLRefusal() string
	// FailoverRequest is a PSYNC replid offset FAILOVER from this
	// replica's master, which hands over its role: this server becomes a
	// master if replid is its own, and answers false with an error
	// written otherwise.
	FailoverRequest(c *Ctx, replid string) bool
}

// FailoverOptions are FAILOVER's arguments.
type FailoverOptions struct {
	HasHost   bool // TO host port: the target replica; else the first one caught up
	Host      string
	Port      int
	Force     bool  // fail over at the timeout even if not caught up
	TimeoutMs int64 // 0: none
}
