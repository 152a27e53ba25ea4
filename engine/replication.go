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
}
