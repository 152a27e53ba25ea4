package server

import (
	"crypto/tls"
	"io"
	"syscall"
	"time"

	"github.com/zredis/zredis/config"
	"github.com/zredis/zredis/engine"
	"github.com/zredis/zredis/keyspace"
	"github.com/zredis/zredis/replication"
)

// replHost is the server as the host of its replication's master side
// (replication.Host): the replica connections, the dispatcher's
// propagation stream, RDB writing, pauses, and the link to this
// server's own master (s.link).
type replHost struct{ s *Server }

// Replication implements engine.Server.
func (s *Server) Replication() engine.Replication { return s.repl }

// Conn implements replication.Host.
func (h replHost) Conn(cl *engine.Client) replication.Conn {
	c := h.s.clients[cl.ID]
	if c == nil || c.killed {
		return nil
	}
	return replConn{c}
}

// Link implements replication.Host.
func (h replHost) Link() (replication.LinkStatus, bool) { return h.s.link.Status() }

// SetMaster implements replication.Host.
func (h replHost) SetMaster(host string, port int) { h.s.link.SetMaster(host, port) }

// UnsetMaster implements replication.Host.
func (h replHost) UnsetMaster() { h.s.link.UnsetMaster() }

// AttachReplicas implements replication.Host.
func (h replHost) AttachReplicas(p engine.Propagator) { h.s.disp.AttachReplicas(p) }

// Detach implements replication.Host.
func (h replHost) Detach(p engine.Propagator) { h.s.disp.Detach(p) }

// SetGoodReplicas implements replication.Host.
func (h replHost) SetGoodReplicas(n int64) { h.s.disp.GoodReplicas.Store(n) }

// GoodReplicas implements replication.Host.
func (h replHost) GoodReplicas() int64 { return h.s.disp.GoodReplicas.Load() }

// SaveInfo implements replication.Host.
func (h replHost) SaveInfo() [][2]string { return h.s.link.SaveInfo() }

// FunctionCodes implements replication.Host.
func (h replHost) FunctionCodes() []string { return h.s.disp.Functions.Codes() }

// WriteRDB implements replication.Host.
func (h replHost) WriteRDB(w io.Writer, snap *keyspace.Snapshot, functions []string, aux [][2]string) error {
	return h.s.persist.EncodeRDB(w, snap, functions, aux)
}

// Paused implements replication.Host.
func (h replHost) Paused(nowMs int64) bool { return h.s.pause.active(nowMs) }

// HoldWritesForFailover implements replication.Host.
func (h replHost) HoldWritesForFailover(on bool) { h.s.pauseWritesFor(pauseFailover, on) }

// ReplicaOutputLimitReached implements replication.Host.
func (h replHost) ReplicaOutputLimitReached(used uint64, softSince *int64) bool {
	l := &h.s.outLimits.Load()[config.ClientReplica]
	return limited(l) && reached(l, used, softSince, time.Now)
}

// replConn is a client connection as a replica's (replication.Conn).
type replConn struct{ c *conn }

// Client implements replication.Conn.
func (r replConn) Client() *engine.Client { return r.c.cl }

// Closing implements replication.Conn.
func (r replConn) Closing() bool { return r.c.killed || r.c.overLimit.Load() }

// Done implements replication.Conn.
func (r replConn) Done() <-chan struct{} { return r.c.gone }

// OverLimit implements replication.Conn.
func (r replConn) OverLimit() bool { return r.c.overLimit.Load() }

// Push implements replication.Conn.
func (r replConn) Push(frame []byte) { r.c.pushOut(frame, false) }

// CloseOverLimit implements replication.Conn.
func (r replConn) CloseOverLimit() { r.c.closeOverLimit(0, true) }

// Drop implements replication.Conn.
func (r replConn) Drop() { r.c.s.drop(r.c) }

// DisableNoDelay implements replication.Conn; not critical if it fails
// (a unix socket).
func (r replConn) DisableNoDelay() {
	syscall.SetsockoptInt(r.c.fd, syscall.IPPROTO_TCP, syscall.TCP_NODELAY, 0)
}

// WriteLater implements replication.Conn: b goes to the socket from the
// connection's loop, after what the loop is doing now (the replies of
// the running batch).
func (r replConn) WriteLater(b []byte) {
	c := r.c
	c.loop.Submit(func() {
		if c.lc != nil && !c.lc.IsClosed() {
			c.lc.Write(b)
		}
	})
}

// Send implements replication.Conn: b goes to the socket from the
// connection's loop, and the channel is closed once the socket took all
// of it, or the connection closed. b is copied before the channel is
// closed.
func (r replConn) Send(b []byte) <-chan struct{} {
	c := r.c
	done := make(chan struct{})
	c.loop.Submit(func() {
		if c.lc == nil || c.lc.IsClosed() {
			close(done)
			return
		}
		c.lc.Write(b)
		c.countOut(int64(len(b)))
		c.lc.OnDrained(func() { close(done) })
	})
	return done
}

// CloseAfterFlush implements replication.Conn: the connection closes
// once its output is written.
func (r replConn) CloseAfterFlush() {
	c := r.c
	c.loop.Submit(func() {
		if c.lc != nil && !c.lc.IsClosed() {
			c.flushPubSub()
			c.lc.CloseAfterFlush()
		}
	})
}

// ReplicaOf implements engine.Server.
func (s *Server) ReplicaOf(host string, port int, who string) (reply string) {
	return s.link.ReplicaOf(host, port, who)
}

// linkHost is the server as the host of its replication's replica side
// (replication.LinkHost).
type linkHost struct{ s *Server }

// SetRole implements replication.LinkHost.
func (h linkHost) SetRole(role byte) { h.s.log.SetRole(role) }

// Closing implements replication.LinkHost.
func (h linkHost) Closing() bool { return h.s.closing }

// DisconnectBlockedClients implements replication.LinkHost.
func (h linkHost) DisconnectBlockedClients() { h.s.disconnectBlockedClients() }

// NewClientID implements replication.LinkHost.
func (h linkHost) NewClientID() int64 {
	h.s.nextID++
	return h.s.nextID
}

// BigValueArriving implements replication.LinkHost: a replica receiving
// big values reads them under the collector's big floor, as a client's
// connection does.
func (h linkHost) BigValueArriving() { bigValueArriving() }

// TLSClientConfig implements replication.LinkHost.
func (h linkHost) TLSClientConfig() *tls.Config { return h.s.tlsClientConf.Load() }

// RDBPath implements replication.LinkHost.
func (h linkHost) RDBPath() string { return h.s.persist.RDBPath() }

// LoadRDB implements replication.LinkHost.
func (h linkHost) LoadRDB(r io.Reader, aborted func() bool) (int, [][2]string, error) {
	info, err := h.s.persist.LoadRDB(r, aborted)
	return info.Keys, info.Aux, err
}

// LoadedExpired implements replication.LinkHost.
func (h linkHost) LoadedExpired() int64 { return h.s.persist.LoadedExpired() }

// RewriteAOFAfterSync implements replication.LinkHost.
func (h linkHost) RewriteAOFAfterSync() { h.s.persist.RewriteAOFAfterSync() }

// UnexpectedError implements replication.LinkHost.
func (h linkHost) UnexpectedError(cl *engine.Client, args [][]byte, reply []byte, from, to string) string {
	return h.s.unexpectedError(cl, args, reply, from, to)
}

// Panic implements replication.LinkHost: the place reported is Panic's
// caller's.
func (h linkHost) Panic(msg string) { h.s.panicFrom(msg, 2) }

// errStateChanged is the reply of a client blocked on a server that
// becomes a replica.
const errStateChanged = "UNBLOCKED force unblock from blocking operation, instance state changed (master -> replica?)"

// disconnectBlockedClients ends every blocking command with an error and
// closes its connection (disconnectAllBlockedClients): a replica must not
// serve a BLPOP with what its master pushes, nor a WAIT it cannot count.
// Under the lock.
func (s *Server) disconnectBlockedClients() {
	for _, c := range s.clients {
		cl := c.cl
		if cl.Blocked && cl.Unblock != nil && cl.Unblock(errStateChanged) {
			cl.CloseAfterReply = true
		}
	}
}
