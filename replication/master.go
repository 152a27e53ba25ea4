package replication

import (
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/zredis/zredis/config"
	"github.com/zredis/zredis/engine"
	"github.com/zredis/zredis/keyspace"
)

// zredis as a master of replicas (Redis 7.0 replication.c, master side).
//
// The replication stream is one more consumer of the engine's
// propagation stream (Master.Propagate), attached when the first
// replica connects and the backlog is created, detached when the backlog
// is freed after repl-backlog-ttl without replicas: a server that never
// had a replica propagates nothing for it, and master_repl_offset stays
// 0, as in Redis. Every command goes to the backlog and, encoded once, to
// each replica: an online replica gets it in its outbox (the way Pub/Sub
// messages go, under the replica class of client-output-buffer-limit); a
// replica being synchronised gets it in a buffer of its own that is sent
// after the RDB payload.
//
// A full synchronisation takes a snapshot of the keyspace (no fork) at
// the stream's current offset, under the lock and between execution
// units, so the RDB holds exactly the stream up to that offset and the
// replica's buffer everything after it. The RDB is encoded on a
// goroutine: to a temporary file in dir that is then sent with a
// `$<length>` header (disk-based, as Redis's BGSAVE for replication), or
// straight to the replicas' sockets between `$EOF:<mark>` and the mark
// (diskless, for replicas that said `capa eof`, with
// repl-diskless-sync yes; repl-diskless-sync-delay lets more replicas
// join the same snapshot). The payload goes through the replica's event
// loop one chunk at a time, the next once the socket took the previous
// (Conn.Send), so a slow replica costs one chunk of memory.

// Replica states (SLAVE_STATE_*).
const (
	replWaitStart      = iota // waiting for its RDB to start (diskless delay)
	replWaitBgsave            // its RDB is being made
	replSendBulk              // its RDB file is being sent
	replOnline                // it receives the stream
	replRDBTransmitted        // rdb-only: the RDB was sent, the connection closes
)

// payloadChunk is how much of an RDB payload is handed to a replica's
// socket at a time.
const payloadChunk = 256 << 10

// replica is what a master knows of one replica connection. The
// REPLCONF fields are set before SYNC; the rest once it is a replica.
// Under the keyspace lock.
type replica struct {
	c          Conn
	port       int64  // REPLCONF listening-port
	addr       string // REPLCONF ip-address ("": the peer's address)
	capaEOF    bool
	capaPSync2 bool
	// capaFieldTTL: a zredis replica, which keeps hash field deadlines
	// (fieldttl.go).
	capaFieldTTL bool
	rdbOnly      bool // REPLCONF rdb-only 1: an RDB and nothing more
	req          rdbReq

	state    int
	preSync  bool // it used SYNC: no PSYNC reply, no REPLCONF ACK expected
	diskless bool // its RDB goes straight to its socket
	ackOff   int64
	aofOff   int64
	ackTime  int64     // Unix s of the last ACK (or of going online)
	waitFrom time.Time // when it started waiting for its RDB

	// buffering: the stream is kept in pending instead of sent (during
	// the synchronisation, and after a diskless one until the first ACK:
	// startOnAck). softSince applies the soft output limit to pending.
	buffering  bool
	pending    []byte
	softSince  int64
	startOnAck bool
	// ackedEarly: an ACK came once the replica had read its diskless
	// payload but before the sync was seen done (syncDone), which then
	// starts the stream at once: a replica may send one ACK only
	// (redis-cli --replica), as Redis's ACK handler first checks whether
	// the transfer ended (checkChildrenDone).
	ackedEarly bool
}

// rdbReq is what a replica leaves out of its RDB (SLAVE_REQ_*), set by
// REPLCONF rdb-filter-only: redis-cli --replica asks for neither keys nor
// functions, --functions-rdb for the functions only. A filtered RDB is
// always sent diskless (startBgsaveForReplication), never through a file,
// and only replicas with the same requirements share one.
type rdbReq uint8

const (
	reqExcludeData      rdbReq = 1 << iota // no keys
	reqExcludeFunctions                    // no function libraries
)

// Master is a server's replication as a master: its stream, its
// replicas, the WAIT clients, a FAILOVER in progress. It implements
// engine.Replication and engine.Propagator. Under the keyspace lock,
// except the goroutines sending RDB payloads, which WaitTransfers waits
// for.
type Master struct {
	host  Host
	ks    *keyspace.Keyspace
	cfg   *config.Config
	log   Logger
	stats *engine.ServerStats

	stream *Stream
	// conns are the records of the connections that declared something
	// with REPLCONF or asked to sync, by client ID, until they close
	// (RemoveReplica).
	conns    map[int64]*replica
	replicas []*replica // server.slaves, in the order they asked to sync
	// noReplicasSince is when the last replica left (repl-backlog-ttl).
	noReplicasSince time.Time
	waiters         []*ackWaiter // WAIT clients
	failover        failoverState
	// clusterMF: a cluster replica's manual failover holds the writes
	// (CLUSTER FAILOVER, cluster->mf_end on the master).
	clusterMF     bool
	getAckPending bool // a WAIT's GETACK waits for the end of a pause
	shutdown      shutdownWait
	cronLoops     int64
	syncs         sync.WaitGroup // the goroutines sending RDB payloads
}

// NewMaster makes the replication of a server that has never had a
// replica: a new history, no backlog, nothing propagated.
func NewMaster(host Host, ks *keyspace.Keyspace, cfg *config.Config, log Logger, stats *engine.ServerStats) *Master {
	return &Master{host: host, ks: ks, cfg: cfg, log: log, stats: stats,
		stream: NewStream(), conns: map[int64]*replica{}, noReplicasSince: time.Now()}
}

// SetClusterManualFailover records that a cluster replica's manual
// failover holds this master's writes (on) or no longer does: no
// replication PING meanwhile, whose bytes would move the offset the
// replica was given on the bus. Under the lock.
func (m *Master) SetClusterManualFailover(on bool) { m.clusterMF = on }

// Stream is the replication stream: its IDs, offset and backlog.
func (m *Master) Stream() *Stream { return m.stream }

// Count is the number of replicas (connected_slaves).
func (m *Master) Count() int { return len(m.replicas) }

// WaitTransfers waits for the goroutines sending RDB payloads, once the
// replicas' connections are closed.
func (m *Master) WaitTransfers() { m.syncs.Wait() }

// DisconnectReplicas drops every replica (disconnectSlaves): a server
// that starts following a master changes its history, its replicas must
// sync again. Under the lock.
func (m *Master) DisconnectReplicas() {
	for _, r := range append([]*replica(nil), m.replicas...) {
		if cl := r.c.Client(); cl.Kill != nil {
			cl.Kill()
		}
	}
}

// record returns the connection's replica record, made on first use
// (REPLCONF before SYNC); nil for a client without a connection.
func (m *Master) record(cl *engine.Client) *replica {
	if r := m.conns[cl.ID]; r != nil {
		return r
	}
	c := m.host.Conn(cl)
	if c == nil {
		return nil
	}
	r := &replica{c: c}
	m.conns[cl.ID] = r
	return r
}

// name is replicationGetSlaveName: ip:port, the port being the one the
// replica listens on.
func (r *replica) name() string {
	ip := r.ip()
	if r.port != 0 {
		return net.JoinHostPort(ip, strconv.FormatInt(r.port, 10))
	}
	return ip + ":<unknown-replica-port>"
}

// ip is the replica's address as INFO and ROLE show it.
func (r *replica) ip() string {
	if r.addr != "" {
		return r.addr
	}
	addr := r.c.Client().Addr
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	return host
}

// stateName is replstateToString.
func (r *replica) stateName() string {
	switch r.state {
	case replWaitStart, replWaitBgsave:
		return "wait_bgsave"
	case replSendBulk:
		return "send_bulk"
	case replOnline:
		return "online"
	case replRDBTransmitted:
		return "rdb_transmitted"
	}
	return ""
}

// gone reports whether the replica's connection is closing.
func (r *replica) gone() bool { return r.c.Closing() }

// replicating reports whether this server is itself a replica.
func (m *Master) replicating() bool {
	_, ok := m.host.Link()
	return ok
}

// ---- the stream -----------------------------------------------------------

// Propagate implements engine.Propagator: the command goes to the
// backlog and to every replica. Under the lock.
// A replica propagates nothing of its own: its stream is its master's
// (Proxy), and a writable replica's writes stay local.
func (m *Master) Propagate(db int, argv [][]byte) {
	if !m.replicating() {
		m.feed(m.stream.Feed(db, argv))
	}
}

// feedCommand writes a command of the replication itself (PING, REPLCONF
// GETACK) in whatever database is selected; a replica's replicas get its
// master's instead.
func (m *Master) feedCommand(argv ...[]byte) {
	if !m.replicating() {
		m.feed(m.stream.Feed(-1, argv))
	}
}

// Proxy passes on bytes of the master's stream that this replica applied
// (replicationFeedStreamFromMasterStream): to the backlog and to its
// own replicas, verbatim, so that their offsets are the master's.
func (m *Master) Proxy(p []byte) {
	m.stream.Proxy(p)
	if m.stream.Backlog() != nil {
		m.feed(p)
	}
}

// feed hands the bytes just written to the stream to the replicas that
// take the stream: buffered while they are synchronised, queued for the
// socket once online. rdb-only replicas and those still waiting for their
// snapshot get nothing (their stream starts at the snapshot's offset).
func (m *Master) feed(frame []byte) {
	if len(frame) == 0 {
		return
	}
	for _, r := range m.replicas {
		switch {
		case r.state == replWaitStart || r.rdbOnly || r.gone():
		case r.buffering:
			r.pending = append(r.pending, frame...)
			m.checkPending(r)
		default:
			r.c.Push(frame)
		}
	}
}

// checkPending applies the replica class of client-output-buffer-limit
// to what a replica being synchronised has accumulated, as Redis counts
// it in the replica's output buffer.
func (m *Master) checkPending(r *replica) {
	if m.host.ReplicaOutputLimitReached(uint64(len(r.pending)), &r.softSince) {
		r.pending = nil
		r.c.CloseOverLimit()
	}
}

// startStream sends a replica what was buffered for it and streams to it
// from now on.
func (m *Master) startStream(r *replica) {
	r.buffering, r.startOnAck = false, false
	if len(r.pending) > 0 {
		r.c.Push(r.pending)
	}
	r.pending = nil
}

// Resume makes a restarted master's stream continue the history of its
// RDB file (see Stream.Restart), with a backlog attached to the
// propagation stream. Before clients are served.
func (m *Master) Resume(id string, offset int64) {
	m.stream.Restart(id, offset, int(m.cfg.Int("repl-backlog-size")))
	m.noReplicasSince = time.Now()
	m.attach()
}

// attach makes the replication stream a consumer of the propagation
// stream, with the commands for replicas only (PUBLISH).
func (m *Master) attach() { m.host.AttachReplicas(m) }

// Detach stops the replication stream's feed from the propagation
// stream: a replica's stream is its master's. Under the lock.
func (m *Master) Detach() { m.host.Detach(m) }

// Promote makes the stream of a replica that becomes a master continue
// the history it followed (shiftReplicationId): its replicas and its old
// master's other replicas continue with it through ID2 and the backlog.
// Its replicas are told of the new ID by a reconnection
// (disconnectSlaves), and the next command it propagates selects its
// database. Under the lock.
func (m *Master) Promote() {
	st := m.stream
	st.Shift()
	m.log.Warningf("Setting secondary replication ID to %s, valid up to offset: %d. New replication ID is %s", st.ID2, st.SecondOff, st.ID)
	m.DisconnectReplicas()
	m.noReplicasSince = time.Now()
	if st.Backlog() != nil {
		m.attach()
	}
}

// createBacklog makes the backlog and attaches the stream, for the first
// replica: a new replication ID, as Redis starts a new history.
func (m *Master) createBacklog() {
	m.stream.CreateBacklog(int(m.cfg.Int("repl-backlog-size")))
	m.attach()
	m.log.Noticef("Replication backlog created, my new replication IDs are '%s' and '%s'", m.stream.ID, m.stream.ID2)
}

// ---- SYNC, PSYNC, REPLCONF ------------------------------------------------

// Sync implements engine.Replication (syncCommand).
func (m *Master) Sync(c *engine.Ctx, psync bool, replid string, offset int64) {
	r := m.record(c.Client)
	if r == nil {
		return
	}
	m.log.Noticef("Replica %s asks for synchronization", r.name())
	if m.refuseSync(c, r) {
		return
	}
	if psync {
		if m.tryPartial(c, r, replid, offset) {
			m.stats.SyncPartialOK++
			return
		}
		if !strings.HasPrefix(replid, "?") {
			m.stats.SyncPartialErr++
		}
	} else {
		r.preSync = true
	}
	m.stats.SyncFull++
	if m.cfg.Bool("repl-disable-tcp-nodelay") {
		// Fewer, larger packets to the replica.
		r.c.DisableNoDelay()
	}
	r.state, r.waitFrom = replWaitStart, time.Now()
	c.Client.Replica = true
	m.add(r)
	if m.stream.Backlog() == nil {
		m.createBacklog()
	}
	// A replica that used SYNC (redis-cli --rdb) gets a payload with its
	// length even if it said capa eof: the stream follows the payload at
	// once, and a reader looking for the EOF mark at the end of what it
	// read could miss it. A filtered RDB (redis-cli --replica,
	// --functions-rdb) is diskless whatever the configuration and the
	// command, as in Redis 7.0, which never writes one where its RDB file
	// goes (SYNC refused the filtered replicas without capa eof); as
	// after any diskless sync, the stream waits for the first ACK.
	diskless := m.cfg.Bool("repl-diskless-sync")
	if r.capaEOF && (diskless && !r.preSync || r.req != 0) {
		r.diskless = true
		if diskless && m.cfg.Int("repl-diskless-sync-delay") > 0 {
			// More replicas may join the same snapshot; the cron starts it.
			m.log.Noticef("Delay next BGSAVE for diskless SYNC")
			return
		}
	}
	m.startSync([]*replica{r}, r.diskless, c)
}

// MasterLinkDown implements engine.Replication.
func (m *Master) MasterLinkDown() bool {
	l, ok := m.host.Link()
	return ok && !l.Up
}

// tryPartial is masterTryPartialResynchronization: it continues the
// replica's stream from offset when replid is this history's (or the
// previous one's, up to where it was valid) and the backlog still holds
// the stream from there.
func (m *Master) tryPartial(c *engine.Ctx, r *replica, replid string, offset int64) bool {
	st := m.stream
	if !strings.EqualFold(replid, st.ID) && (!strings.EqualFold(replid, st.ID2) || offset > st.SecondOff) {
		switch {
		case strings.HasPrefix(replid, "?"):
			m.log.Noticef("Full resync requested by replica %s", r.name())
		case !strings.EqualFold(replid, st.ID) && !strings.EqualFold(replid, st.ID2):
			m.log.Noticef("Partial resynchronization not accepted: Replication ID mismatch (Replica asked for '%s', my replication IDs are '%s' and '%s')", replid, st.ID, st.ID2)
		default:
			m.log.Noticef("Partial resynchronization not accepted: Requested offset for second ID was %d, but I can reply up to %d", offset, st.SecondOff)
		}
		return false
	}
	if !st.CanContinue(replid, offset) {
		m.log.Noticef("Unable to partial resync with replica %s for lack of backlog (Replica request was: %d).", r.name(), offset)
		if offset > st.Offset() {
			m.log.Warningf("Warning: replica %s tried to PSYNC with an offset that is greater than the master replication offset.", r.name())
		}
		return false
	}
	c.Client.Replica = true
	r.state, r.ackTime = replOnline, time.Now().Unix()
	m.add(r)
	if r.capaPSync2 {
		c.W.Raw([]byte("+CONTINUE " + st.ID + "\r\n"))
	} else {
		c.W.Raw([]byte("+CONTINUE\r\n"))
	}
	before := c.W.Len()
	c.W.Raw(st.Backlog().AppendFrom(nil, offset))
	m.log.Noticef("Partial resynchronization request from %s accepted. Sending %d bytes of backlog starting from offset %d.", r.name(), c.W.Len()-before, offset)
	m.refreshGood()
	return true
}

// add makes r one of the replicas.
func (m *Master) add(r *replica) {
	for _, x := range m.replicas {
		if x == r {
			return
		}
	}
	m.replicas = append(m.replicas, r)
}

// RemoveReplica forgets the replica record of a client whose connection
// is closing. Under the lock (the host's drop).
func (m *Master) RemoveReplica(cl *engine.Client) {
	r := m.conns[cl.ID]
	delete(m.conns, cl.ID)
	if r == nil || !cl.Replica {
		return
	}
	for i, x := range m.replicas {
		if x == r {
			m.replicas = append(m.replicas[:i:i], m.replicas[i+1:]...)
			m.log.Noticef("Connection with replica %s lost.", r.name())
			break
		}
	}
	r.pending = nil
	if len(m.replicas) == 0 {
		m.noReplicasSince = time.Now()
	}
	m.refreshGood()
}

// SetListeningPort implements engine.Replication.
func (m *Master) SetListeningPort(cl *engine.Client, port int64) {
	if r := m.record(cl); r != nil {
		r.port = port
	}
}

// SetAddress implements engine.Replication.
func (m *Master) SetAddress(cl *engine.Client, ip string) {
	if r := m.record(cl); r != nil {
		r.addr = ip
	}
}

// AddCapa implements engine.Replication; unknown capabilities are
// ignored, as Redis ignores them.
func (m *Master) AddCapa(cl *engine.Client, capa string) {
	r := m.record(cl)
	if r == nil {
		return
	}
	switch capa {
	case "eof":
		r.capaEOF = true
	case "psync2":
		r.capaPSync2 = true
	case capaFieldTTL:
		r.capaFieldTTL = true
	}
}

// SetRDBFilter implements engine.Replication: every part of the RDB is
// left out but the functions, if asked for.
func (m *Master) SetRDBFilter(cl *engine.Client, functions bool) {
	if r := m.record(cl); r != nil {
		r.req = reqExcludeData | reqExcludeFunctions
		if functions {
			r.req &^= reqExcludeFunctions
		}
	}
}

// FilterNeedsEOF implements engine.Replication.
func (m *Master) FilterNeedsEOF(cl *engine.Client) bool {
	r := m.conns[cl.ID]
	return r != nil && r.req != 0 && !r.capaEOF
}

// SetRDBOnly implements engine.Replication.
func (m *Master) SetRDBOnly(cl *engine.Client, on bool) {
	if r := m.record(cl); r != nil {
		r.rdbOnly = on
	}
}

// Ack implements engine.Replication (REPLCONF ACK): the replica applied
// the stream up to offset. After a diskless synchronisation the first
// ACK also starts its stream: the replica found the end of the RDB.
func (m *Master) Ack(cl *engine.Client, offset, aofOffset int64) {
	r := m.conns[cl.ID]
	if r == nil {
		return
	}
	r.ackOff = max(r.ackOff, offset)
	r.aofOff = max(r.aofOff, aofOffset)
	r.ackTime = time.Now().Unix()
	if r.startOnAck && r.state == replOnline {
		m.startStream(r)
	}
	if r.diskless && r.state == replWaitBgsave {
		r.ackedEarly = true
	}
	m.refreshGood()
	m.serveWaiters()
	m.updateFailover()
	if m.shutdown.waiting {
		m.shutdown.wakeUp()
	}
}
