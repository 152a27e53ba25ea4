package server

// Network counters (INFO stats): Redis 7.0 counts the replication
// traffic apart from the rest (networking.c, replication.c), and so do
// these helpers. A master counts as replication output what it writes to
// a replica's connection once the replica asked to sync (the stream, the
// RDB payload, the backlog of a partial resync; getClientType(c) ==
// CLIENT_TYPE_SLAVE in writeToClient); a replica counts as replication
// input what it reads from its master after the reply to PSYNC (the
// payload, with its `$` line, and the stream). The rest of the link is
// ordinary traffic: what a replica's connection sent (REPLCONF ACK) is
// input on the master, the ACKs a replica writes are output on it; the
// handshake is counted on neither side. One difference: the master's
// reply to PSYNC (+FULLRESYNC, +CONTINUE), which Redis writes past its
// counters, counts here as replication output (it goes out with the
// replica's other output); the newlines that keep a replica waiting for
// its RDB count nowhere, as in Redis. The replica's side is counted by
// replication.Link.

// countOut counts n bytes handed to the connection's socket: in its own
// counter, and in the server's, replication output for a replica's
// connection. On the connection's loop (or its worker while detached),
// where the flags it reads are set.
func (c *conn) countOut(n int64) {
	c.cl.NetOut.Add(n)
	if c.cl.Replica && !c.cl.Monitor {
		c.s.stats.ReplNetOut.Add(n)
	} else {
		c.s.stats.NetOut.Add(n)
	}
}
