package server

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/zredis/zredis/config"
	"github.com/zredis/zredis/engine"
	"github.com/zredis/zredis/keyspace"
	"github.com/zredis/zredis/replication"
)

// zredis as a master of replicas (Redis 7.0 replication.c, master side).
//
// The replication stream is one more consumer of the engine's
// propagation stream (replMaster.Propagate), attached when the first
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
// (netloop's OnDrained), so a slow replica costs one chunk of memory.

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
	c          *conn
	port       int64  // REPLCONF listening-port
	addr       string // REPLCONF ip-address ("": the peer's address)
	capaEOF    bool
	capaPSync2 bool
	rdbOnly    bool // REPLCONF rdb-only 1: an RDB and nothing more
	req        rdbReq

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

// replMaster is the server's replication as a master. Under the keyspace
// lock, except syncs.
type replMaster struct {
	s        *Server
	stream   *replication.Stream
	replicas []*replica // server.slaves, in the order they asked to sync
	// noReplicasSince is when the last replica left (repl-backlog-ttl).
	noReplicasSince time.Time
	waiters         []*ackWaiter // WAIT clients
	failover        failoverState
	getAckPending   bool // a WAIT's GETACK waits for the end of a pause
	cronLoops       int64
	syncs           sync.WaitGroup // the goroutines sending RDB payloads
}

// ackWaiter is one client blocked in WAIT.
type ackWaiter struct {
	cl       *engine.Client
	offset   int64
	n        int64
	done     chan struct{}
	finished bool
}

func (m *replMaster) init(s *Server) {
	m.s = s
	m.stream = replication.NewStream()
	m.noReplicasSince = time.Now()
	s.disp.StreamOffset = m.stream.Offset
}

// disconnectReplicas drops every replica (disconnectSlaves): a server
// that starts following a master changes its history, its replicas must
// sync again. Under the lock.
func (m *replMaster) disconnectReplicas() {
	for _, r := range append([]*replica(nil), m.replicas...) {
		if r.c.cl.Kill != nil {
			r.c.cl.Kill()
		}
	}
}

// Replication implements engine.Server.
func (s *Server) Replication() engine.Replication { return &s.repl }

// replica returns the connection's replica record, made on first use
// (REPLCONF before SYNC).
func (c *conn) replica() *replica {
	if c.repl == nil {
		c.repl = &replica{c: c}
	}
	return c.repl
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
	host, _, err := net.SplitHostPort(r.c.cl.Addr)
	if err != nil {
		return r.c.cl.Addr
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
func (r *replica) gone() bool { return r.c.killed || r.c.overLimit.Load() }

// ---- the stream -----------------------------------------------------------

// Propagate implements engine.Propagator: the command goes to the
// backlog and to every replica. Under the lock.
// A replica propagates nothing of its own: its stream is its master's
// (proxy), and a writable replica's writes stay local.
func (m *replMaster) Propagate(db int, argv [][]byte) {
	if m.s.replica == nil {
		m.feed(m.stream.Feed(db, argv))
	}
}

// feedCommand writes a command of the replication itself (PING, REPLCONF
// GETACK) in whatever database is selected; a replica's replicas get its
// master's instead.
func (m *replMaster) feedCommand(argv ...[]byte) {
	if m.s.replica == nil {
		m.feed(m.stream.Feed(-1, argv))
	}
}

// proxy passes on bytes of the master's stream that this replica applied
// (replicationFeedStreamFromMasterStream): to the backlog and to its
// own replicas, verbatim, so that their offsets are the master's.
func (m *replMaster) proxy(p []byte) {
	m.stream.Proxy(p)
	if m.stream.Backlog() != nil {
		m.feed(p)
	}
}

// feed hands the bytes just written to the stream to the replicas that
// take the stream: buffered while they are synchronised, queued for the
// socket once online. rdb-only replicas and those still waiting for their
// snapshot get nothing (their stream starts at the snapshot's offset).
func (m *replMaster) feed(frame []byte) {
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
			r.c.pushOut(frame)
		}
	}
}

// checkPending applies the replica class of client-output-buffer-limit
// to what a replica being synchronised has accumulated, as Redis counts
// it in the replica's output buffer.
func (m *replMaster) checkPending(r *replica) {
	l := &m.s.outLimits.Load()[config.ClientReplica]
	if limited(l) && reached(l, uint64(len(r.pending)), &r.softSince, time.Now) {
		r.pending = nil
		r.c.closeOverLimit(0, true)
	}
}

// startStream sends a replica what was buffered for it and streams to it
// from now on.
func (m *replMaster) startStream(r *replica) {
	r.buffering, r.startOnAck = false, false
	if len(r.pending) > 0 {
		r.c.pushOut(r.pending)
	}
	r.pending = nil
}

// resume makes a restarted master's stream continue the history of its
// RDB file (see Stream.Restart), with a backlog attached to the
// propagation stream. Before clients are served.
func (m *replMaster) resume(id string, offset int64) {
	m.stream.Restart(id, offset, int(m.s.cfg.Int("repl-backlog-size")))
	m.noReplicasSince = time.Now()
	m.attach()
}

// attach makes the replication stream a consumer of the propagation
// stream, with the commands for replicas only (PUBLISH).
func (m *replMaster) attach() { m.s.disp.AttachReplicas(m) }

// createBacklog makes the backlog and attaches the stream, for the first
// replica: a new replication ID, as Redis starts a new history.
func (m *replMaster) createBacklog() {
	m.stream.CreateBacklog(int(m.s.cfg.Int("repl-backlog-size")))
	m.attach()
	m.s.log.Noticef("Replication backlog created, my new replication IDs are '%s' and '%s'", m.stream.ID, m.stream.ID2)
}

// ---- SYNC, PSYNC, REPLCONF ------------------------------------------------

// Sync implements engine.Replication (syncCommand).
func (m *replMaster) Sync(c *engine.Ctx, psync bool, replid string, offset int64) {
	s := m.s
	cn := s.clients[c.Client.ID]
	if cn == nil || cn.killed {
		return
	}
	r := cn.replica()
	s.log.Noticef("Replica %s asks for synchronization", r.name())
	if psync {
		if m.tryPartial(c, r, replid, offset) {
			s.stats.SyncPartialOK++
			return
		}
		if !strings.HasPrefix(replid, "?") {
			s.stats.SyncPartialErr++
		}
	} else {
		r.preSync = true
	}
	s.stats.SyncFull++
	if s.cfg.Bool("repl-disable-tcp-nodelay") {
		// Fewer, larger packets to the replica; not critical if it fails
		// (a unix socket).
		syscall.SetsockoptInt(cn.fd, syscall.IPPROTO_TCP, syscall.TCP_NODELAY, 0)
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
	diskless := s.cfg.Bool("repl-diskless-sync")
	if r.capaEOF && (diskless && !r.preSync || r.req != 0) {
		r.diskless = true
		if diskless && s.cfg.Int("repl-diskless-sync-delay") > 0 {
			// More replicas may join the same snapshot; the cron starts it.
			s.log.Noticef("Delay next BGSAVE for diskless SYNC")
			return
		}
	}
	m.startSync([]*replica{r}, r.diskless, c)
}

// MasterLinkDown implements engine.Replication.
func (m *replMaster) MasterLinkDown() bool {
	return m.s.replica != nil && !m.s.replica.up()
}

// tryPartial is masterTryPartialResynchronization: it continues the
// replica's stream from offset when replid is this history's (or the
// previous one's, up to where it was valid) and the backlog still holds
// the stream from there.
func (m *replMaster) tryPartial(c *engine.Ctx, r *replica, replid string, offset int64) bool {
	s, st := m.s, m.stream
	if !strings.EqualFold(replid, st.ID) && (!strings.EqualFold(replid, st.ID2) || offset > st.SecondOff) {
		switch {
		case strings.HasPrefix(replid, "?"):
			s.log.Noticef("Full resync requested by replica %s", r.name())
		case !strings.EqualFold(replid, st.ID) && !strings.EqualFold(replid, st.ID2):
			s.log.Noticef("Partial resynchronization not accepted: Replication ID mismatch (Replica asked for '%s', my replication IDs are '%s' and '%s')", replid, st.ID, st.ID2)
		default:
			s.log.Noticef("Partial resynchronization not accepted: Requested offset for second ID was %d, but I can reply up to %d", offset, st.SecondOff)
		}
		return false
	}
	if !st.CanContinue(replid, offset) {
		s.log.Noticef("Unable to partial resync with replica %s for lack of backlog (Replica request was: %d).", r.name(), offset)
		if offset > st.Offset() {
			s.log.Warningf("Warning: replica %s tried to PSYNC with an offset that is greater than the master replication offset.", r.name())
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
	s.log.Noticef("Partial resynchronization request from %s accepted. Sending %d bytes of backlog starting from offset %d.", r.name(), c.W.Len()-before, offset)
	m.refreshGood()
	return true
}

// add makes r one of the replicas.
func (m *replMaster) add(r *replica) {
	for _, x := range m.replicas {
		if x == r {
			return
		}
	}
	m.replicas = append(m.replicas, r)
}

// removeReplica forgets the replica of a connection that is closing.
// Under the lock (Server.drop).
func (m *replMaster) removeReplica(cn *conn) {
	r := cn.repl
	if r == nil || !cn.cl.Replica {
		return
	}
	for i, x := range m.replicas {
		if x == r {
			m.replicas = append(m.replicas[:i:i], m.replicas[i+1:]...)
			m.s.log.Noticef("Connection with replica %s lost.", r.name())
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
func (m *replMaster) SetListeningPort(cl *engine.Client, port int64) {
	if cn := m.s.clients[cl.ID]; cn != nil {
		cn.replica().port = port
	}
}

// SetAddress implements engine.Replication.
func (m *replMaster) SetAddress(cl *engine.Client, ip string) {
	if cn := m.s.clients[cl.ID]; cn != nil {
		cn.replica().addr = ip
	}
}

// AddCapa implements engine.Replication; unknown capabilities are
// ignored, as Redis ignores them.
func (m *replMaster) AddCapa(cl *engine.Client, capa string) {
	cn := m.s.clients[cl.ID]
	if cn == nil {
		return
	}
	switch capa {
	case "eof":
		cn.replica().capaEOF = true
	case "psync2":
		cn.replica().capaPSync2 = true
	}
}

// SetRDBFilter implements engine.Replication: every part of the RDB is
// left out but the functions, if asked for.
func (m *replMaster) SetRDBFilter(cl *engine.Client, functions bool) {
	if cn := m.s.clients[cl.ID]; cn != nil {
		r := cn.replica()
		r.req = reqExcludeData | reqExcludeFunctions
		if functions {
			r.req &^= reqExcludeFunctions
		}
	}
}

// FilterNeedsEOF implements engine.Replication.
func (m *replMaster) FilterNeedsEOF(cl *engine.Client) bool {
	cn := m.s.clients[cl.ID]
	return cn != nil && cn.repl != nil && cn.repl.req != 0 && !cn.repl.capaEOF
}

// SetRDBOnly implements engine.Replication.
func (m *replMaster) SetRDBOnly(cl *engine.Client, on bool) {
	if cn := m.s.clients[cl.ID]; cn != nil {
		cn.replica().rdbOnly = on
	}
}

// Ack implements engine.Replication (REPLCONF ACK): the replica applied
// the stream up to offset. After a diskless synchronisation the first
// ACK also starts its stream: the replica found the end of the RDB.
func (m *replMaster) Ack(cl *engine.Client, offset, aofOffset int64) {
	cn := m.s.clients[cl.ID]
	if cn == nil || cn.repl == nil {
		return
	}
	r := cn.repl
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
	m.s.shutdownAcked()
}

// ---- full synchronisation -------------------------------------------------

// startSync takes the snapshot that rs (replicas waiting for an RDB,
// all with the same rdbReq) synchronise from, tells them its offset
// (+FULLRESYNC, in c's reply when the PSYNC command itself starts it,
// else through their loops), and starts the goroutine that sends it. An
// RDB without keys needs no snapshot. Under the lock, between execution
// units.
func (m *replMaster) startSync(rs []*replica, diskless bool, c *engine.Ctx) {
	s := m.s
	var snap *keyspace.Snapshot
	if rs[0].req&reqExcludeData == 0 {
		snap = s.ks.Snapshot()
	}
	var functions []string
	if rs[0].req&reqExcludeFunctions == 0 {
		functions = s.disp.Functions.Codes()
	}
	off := m.stream.Offset()
	// The RDB says where the stream goes on (repl-stream-db): a
	// replica's stream is its master's, which selects no database again.
	aux := s.replSaveInfo()
	// A master's replicas' database is unknown: its next command selects
	// one.
	m.stream.ResetSelect()
	for _, r := range rs {
		r.state = replWaitBgsave
		r.diskless = diskless
		r.buffering = !r.rdbOnly
		r.pending = nil
		r.ackedEarly = false
		if r.preSync {
			continue
		}
		line := []byte("+FULLRESYNC " + m.stream.ID + " " + strconv.FormatInt(off, 10) + "\r\n")
		if c != nil && c.Client == r.c.cl {
			c.W.Raw(line)
		} else {
			r.c.writeLater(line)
		}
	}
	target := "disk"
	if diskless {
		target = "replicas sockets"
	}
	s.log.Noticef("Starting BGSAVE for SYNC with target: %s", target)
	m.syncs.Add(1)
	go func() {
		defer m.syncs.Done()
		if snap != nil {
			defer snap.Release()
		}
		if diskless {
			m.sendDiskless(rs, snap, functions, aux)
		} else {
			m.sendDisk(rs[0], snap, functions, aux)
		}
	}()
}

// errNoReplicas ends the encoding of a diskless payload whose replicas
// all went away.
var errNoReplicas = errors.New("no replica left to send the RDB to")

// sendDisk writes the snapshot to a temporary file in dir, then sends it
// to r with a `$<length>` header (snap nil: an RDB without keys). Without
// the lock.
func (m *replMaster) sendDisk(r *replica, snap *keyspace.Snapshot, functions []string, aux [][2]string) {
	s := m.s
	dir := s.cfg.String("dir")
	path := filepath.Join(dir, fmt.Sprintf("temp-repl-%d-%d.rdb", os.Getpid(), time.Now().UnixNano()))
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_RDWR, 0o600)
	if err == nil {
		defer os.Remove(path)
		defer f.Close()
		err = s.encodeRDB(f, snap, functions, aux)
	}
	var size int64
	if err == nil {
		size, err = f.Seek(0, io.SeekCurrent)
	}
	if err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	ok := true
	s.ks.Exec(func() {
		if err != nil {
			s.log.Warningf("Background RDB for replica %s failed: %v", r.name(), err)
			if !r.gone() {
				s.drop(r.c)
			}
			ok = false
			return
		}
		s.log.Noticef("Background saving terminated with success")
		if r.gone() {
			ok = false
			return
		}
		r.state = replSendBulk
	})
	if !ok {
		return
	}
	if !r.c.sendAndWait([]byte("$" + strconv.FormatInt(size, 10) + "\r\n")) {
		return
	}
	buf := make([]byte, payloadChunk)
	for {
		n, rerr := f.Read(buf)
		if n > 0 && !r.c.sendAndWait(buf[:n]) {
			return
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			s.ks.Exec(func() {
				s.log.Warningf("Reading the RDB sent to replica %s: %v", r.name(), rerr)
				s.drop(r.c)
			})
			return
		}
	}
	s.ks.Exec(func() { m.syncDone(r) })
}

// sendDiskless encodes the snapshot straight to the replicas' sockets,
// between `$EOF:<mark>` and the mark (snap nil: an RDB without keys).
// Without the lock.
func (m *replMaster) sendDiskless(rs []*replica, snap *keyspace.Snapshot, functions []string, aux [][2]string) {
	s := m.s
	mark := replication.NewID()
	out := &fanout{m: m, rs: rs}
	bw := bufio.NewWriterSize(out, payloadChunk)
	bw.WriteString("$EOF:" + mark + "\r\n")
	err := s.encodeSnapshot(bw, snap, functions, false, aux)
	if err == nil {
		bw.WriteString(mark)
		err = bw.Flush()
	}
	s.ks.Exec(func() {
		if err != nil && !errors.Is(err, errNoReplicas) {
			s.log.Warningf("Diskless RDB transfer failed: %v", err)
		}
		if err == nil {
			s.log.Noticef("Diskless rdb transfer, done reading from pipe, %d replicas still up.", out.alive())
		}
		for _, r := range rs {
			if err != nil {
				if !r.gone() {
					s.drop(r.c)
				}
				continue
			}
			m.syncDone(r)
		}
	})
}

// fanout writes a diskless payload to every replica of a sync that is
// still connected, waiting for the slowest.
type fanout struct {
	m  *replMaster
	rs []*replica
}

func (f *fanout) Write(p []byte) (int, error) {
	// The loops take their own copy: the encoder reuses p once this
	// returns, and a replica that went away is not waited for.
	p = append([]byte(nil), p...)
	waits := make([]chan struct{}, len(f.rs))
	sent := 0
	for i, r := range f.rs {
		if f.isGone(r) {
			continue
		}
		waits[i] = r.c.send(p)
		sent++
	}
	if sent == 0 {
		return 0, errNoReplicas
	}
	for i, w := range waits {
		if w != nil {
			select {
			case <-w:
			case <-f.rs[i].c.gone:
			}
		}
	}
	return len(p), nil
}

func (f *fanout) isGone(r *replica) bool {
	select {
	case <-r.c.gone:
		return true
	default:
		return r.c.overLimit.Load()
	}
}

func (f *fanout) alive() int {
	n := 0
	for _, r := range f.rs {
		if !f.isGone(r) {
			n++
		}
	}
	return n
}

// syncDone puts a replica whose RDB was sent online (replicaPutOnline):
// an rdb-only one is closed instead once its output is written. After a
// disk-based sync its buffered stream follows at once; after a diskless
// one, at its first ACK (at once if that ACK came already). Under the
// lock.
func (m *replMaster) syncDone(r *replica) {
	s := m.s
	if r.gone() {
		return
	}
	if r.rdbOnly {
		r.state = replRDBTransmitted
		s.log.Noticef("RDB transfer completed, rdb only replica (%s) should be disconnected asap", r.name())
		r.c.closeAfterFlush()
		return
	}
	r.state, r.ackTime = replOnline, time.Now().Unix()
	s.log.Noticef("Synchronization with replica %s succeeded", r.name())
	if r.diskless && !r.ackedEarly {
		r.startOnAck = true
	} else {
		m.startStream(r)
	}
	m.refreshGood()
	m.serveWaiters()
}

// ---- WAIT and the good replicas ---------------------------------------------

// countAcks is replicationCountAcksByOffset: the online replicas that
// acknowledged offset.
func (m *replMaster) countAcks(offset int64) int64 {
	var n int64
	for _, r := range m.replicas {
		if r.state == replOnline && r.ackOff >= offset {
			n++
		}
	}
	return n
}

// refreshGood is refreshGoodSlavesCount: the online replicas whose last
// ACK is at most min-replicas-max-lag seconds old, for
// min-replicas-to-write.
func (m *replMaster) refreshGood() {
	lag := m.s.cfg.Int("min-replicas-max-lag")
	if m.s.cfg.Int("min-replicas-to-write") == 0 || lag == 0 {
		m.s.disp.GoodReplicas.Store(0)
		return
	}
	now := time.Now().Unix()
	var good int64
	for _, r := range m.replicas {
		if r.state == replOnline && now-r.ackTime <= lag {
			good++
		}
	}
	m.s.disp.GoodReplicas.Store(good)
}

// Wait implements engine.Replication (waitCommand): the client blocks
// until numReplicas replicas acknowledged its last write, or the timeout
// passes (0: never), and is answered the count. The replicas are asked
// for an ACK at once (REPLCONF GETACK).
func (m *replMaster) Wait(c *engine.Ctx, numReplicas int64, timeout time.Duration) {
	cl := c.Client
	acks := m.countAcks(cl.WOff)
	if acks >= numReplicas || cl.InMulti {
		c.W.Int(acks)
		return
	}
	w := &ackWaiter{cl: cl, offset: cl.WOff, n: numReplicas, done: make(chan struct{})}
	m.waiters = append(m.waiters, w)
	cl.Blocked = true
	cl.Unblock = func(errMsg string) bool {
		if w.finished {
			return false
		}
		if errMsg != "" {
			cl.W.Error(errMsg)
		} else {
			cl.W.Int(m.countAcks(w.offset))
		}
		m.finishWaiter(w)
		return true
	}
	m.askAcks()
	ks := m.s.ks
	c.Offload(func() {
		var expired <-chan time.Time
		if timeout > 0 {
			t := time.NewTimer(timeout)
			defer t.Stop()
			expired = t.C
		}
		hangup := time.NewTicker(100 * time.Millisecond)
		defer hangup.Stop()
		for {
			select {
			case <-w.done:
				return
			case <-expired:
				ks.Exec(func() {
					if !w.finished {
						cl.W.Int(m.countAcks(w.offset))
						m.finishWaiter(w)
					}
				})
				return
			case <-hangup.C:
				ks.Exec(func() {
					if !w.finished && cl.PeerClosed != nil && cl.PeerClosed() && cl.Kill != nil {
						cl.Kill()
					}
				})
			}
		}
	})
}

// serveWaiters answers the WAIT clients whose replicas now acknowledged
// enough (processClientsWaitingReplicas). Under the lock.
func (m *replMaster) serveWaiters() {
	for _, w := range append([]*ackWaiter(nil), m.waiters...) {
		if w.finished {
			continue
		}
		if n := m.countAcks(w.offset); n >= w.n {
			w.cl.W.Int(n)
			m.finishWaiter(w)
		}
	}
}

// finishWaiter unblocks a WAIT client. Under the lock.
func (m *replMaster) finishWaiter(w *ackWaiter) {
	if w.finished {
		return
	}
	w.finished = true
	for i, x := range m.waiters {
		if x == w {
			m.waiters = append(m.waiters[:i:i], m.waiters[i+1:]...)
			break
		}
	}
	w.cl.Blocked = false
	w.cl.Unblock = nil
	close(w.done)
}

// releaseWaiter forgets the WAIT of a client that is gone. Under the lock.
func (m *replMaster) releaseWaiter(cl *engine.Client) {
	for _, w := range m.waiters {
		if w.cl == cl {
			m.finishWaiter(w)
			return
		}
	}
}

// ---- ROLE, INFO, cron -------------------------------------------------------

// Role implements engine.Replication: master, the offset, and the online
// replicas as [ip, port, acknowledged offset].
func (m *replMaster) Role(c *engine.Ctx) {
	if l := m.s.replica; l != nil {
		// A replica: its master, the link's state and the offset applied.
		off := int64(-1)
		if l.master != nil {
			off = m.stream.Offset()
		}
		c.W.Array(5)
		c.W.BulkString("slave")
		c.W.BulkString(l.host)
		c.W.Int(int64(l.port))
		c.W.BulkString(l.state)
		c.W.Int(off)
		return
	}
	var online []*replica
	for _, r := range m.replicas {
		if r.state == replOnline {
			online = append(online, r)
		}
	}
	c.W.Array(3)
	c.W.BulkString("master")
	c.W.Int(m.stream.Offset())
	c.W.Array(len(online))
	for _, r := range online {
		c.W.Array(3)
		c.W.BulkString(r.ip())
		c.W.BulkString(strconv.FormatInt(r.port, 10))
		c.W.BulkString(strconv.FormatInt(r.ackOff, 10))
	}
}

// info appends INFO replication's master fields after role.
func (m *replMaster) info(b []byte) []byte {
	s := m.s
	b = engine.InfoInt(b, "connected_slaves", int64(len(m.replicas)))
	if s.cfg.Int("min-replicas-to-write") != 0 && s.cfg.Int("min-replicas-max-lag") != 0 {
		b = engine.InfoInt(b, "min_slaves_good_slaves", s.disp.GoodReplicas.Load())
	}
	now := time.Now().Unix()
	id := 0
	for _, r := range m.replicas {
		state := r.stateName()
		if state == "" {
			continue
		}
		var lag int64
		if r.state == replOnline {
			lag = now - r.ackTime
		}
		b = fmt.Appendf(b, "slave%d:ip=%s,port=%d,state=%s,offset=%d,lag=%d\r\n", id, r.ip(), r.port, state, r.ackOff, lag)
		id++
	}
	st := m.stream
	b = engine.InfoStr(b, "master_failover_state", m.failover.name())
	b = engine.InfoStr(b, "master_replid", st.ID)
	b = engine.InfoStr(b, "master_replid2", st.ID2)
	b = engine.InfoInt(b, "master_repl_offset", st.Offset())
	b = engine.InfoInt(b, "second_repl_offset", st.SecondOff)
	bl := st.Backlog()
	b = engine.InfoInt(b, "repl_backlog_active", boolInt(bl != nil))
	b = engine.InfoInt(b, "repl_backlog_size", s.cfg.Int("repl-backlog-size"))
	var first, hist int64
	if bl != nil {
		first, hist = bl.First(), bl.HistLen()
	}
	b = engine.InfoInt(b, "repl_backlog_first_byte_offset", first)
	b = engine.InfoInt(b, "repl_backlog_histlen", hist)
	return b
}

// resizeBacklog applies CONFIG SET repl-backlog-size. Under the lock.
func (m *replMaster) resizeBacklog() {
	if bl := m.stream.Backlog(); bl != nil {
		bl.Resize(int(m.s.cfg.Int("repl-backlog-size")))
	}
}

// cron is the master's part of replicationCron, every 100 ms: once a
// second the PING every repl-ping-replica-period seconds, the newlines
// that keep replicas waiting for their RDB from timing out, the
// disconnection of replicas silent for repl-timeout, and the freeing of
// the backlog after repl-backlog-ttl without replicas; every time, the
// start of the delayed diskless synchronisations. Under the lock.
func (m *replMaster) cron(now time.Time, second bool) {
	s := m.s
	if second {
		m.cronLoops++
		// No PING during a FAILOVER with a TIMEOUT while writes are held:
		// it would move the offset its target must reach.
		failingOver := m.failover.endMs != 0 && s.pause.active(now.UnixMilli())
		if period := s.cfg.Int("repl-ping-replica-period"); period > 0 && m.cronLoops%period == 0 && len(m.replicas) > 0 && !failingOver {
			m.feedCommand([]byte("ping")) // shared.ping: lower case, as redis-cli --replica shows it
		}
		timeout := s.cfg.Int("repl-timeout")
		for _, r := range append([]*replica(nil), m.replicas...) {
			switch {
			case r.gone():
			case r.state == replWaitStart || r.state == replWaitBgsave && !r.diskless:
				r.c.writeLater([]byte("\n"))
			case r.state == replOnline && !r.preSync && now.Unix()-r.ackTime > timeout:
				s.log.Warningf("Disconnecting timedout replica (streaming sync): %s", r.name())
				s.drop(r.c)
			}
		}
		ttl := s.cfg.Int("repl-backlog-ttl")
		// A replica keeps its backlog: it serves its replicas, and the
		// old master's, once promoted.
		if s.replica == nil && len(m.replicas) == 0 && ttl > 0 && m.stream.Backlog() != nil && int64(now.Sub(m.noReplicasSince).Seconds()) > ttl {
			m.stream.FreeBacklog()
			s.disp.Detach(m)
			s.log.Noticef("Replication backlog freed after %d seconds without connected replicas.", ttl)
		}
		m.refreshGood()
	}
	m.startPendingSyncs(now)
	if m.getAckPending {
		m.askAcks()
	}
	m.updateFailover()
}

// askAcks asks the replicas for an ACK (REPLCONF GETACK), for WAIT; not
// while clients are paused, when it would move the offset a FAILOVER or a
// shutdown waits for, but once the pause ends (the cron), as Redis's
// beforeSleep. Under the lock.
func (m *replMaster) askAcks() {
	if m.s.pause.active(m.s.ks.Clock().NowMs()) {
		m.getAckPending = true
		return
	}
	m.getAckPending = false
	m.feedCommand([]byte("REPLCONF"), []byte("GETACK"), []byte("*"))
}

// startPendingSyncs starts one diskless synchronisation for the replicas
// waiting for one with the requirements of the first of them
// (shouldStartChildReplication), once one has waited
// repl-diskless-sync-delay seconds or repl-diskless-sync-max-replicas are
// waiting; the others wait for the next.
func (m *replMaster) startPendingSyncs(now time.Time) {
	var waiting []*replica
	var longest time.Duration
	for _, r := range m.replicas {
		if r.state == replWaitStart && !r.gone() && (len(waiting) == 0 || r.req == waiting[0].req) {
			waiting = append(waiting, r)
			longest = max(longest, now.Sub(r.waitFrom))
		}
	}
	if len(waiting) == 0 {
		return
	}
	delay := time.Duration(m.s.cfg.Int("repl-diskless-sync-delay")) * time.Second
	most := m.s.cfg.Int("repl-diskless-sync-max-replicas")
	if longest >= delay || most > 0 && int64(len(waiting)) >= most {
		m.startSync(waiting, true, nil)
	}
}

// ---- the replica's connection -------------------------------------------

// writeLater writes b to the socket from the connection's loop, after
// what the loop is doing now (the replies of the running batch).
func (c *conn) writeLater(b []byte) {
	c.loop.Submit(func() {
		if c.lc != nil && !c.lc.IsClosed() {
			c.lc.Write(b)
		}
	})
}

// send writes b to the socket from the connection's loop and returns a
// channel closed once the socket took all of it, or the connection
// closed. b is copied before the channel is closed.
func (c *conn) send(b []byte) chan struct{} {
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

// sendAndWait is send, waiting; false when the connection is gone.
func (c *conn) sendAndWait(b []byte) bool {
	select {
	case <-c.send(b):
	case <-c.gone:
		return false
	}
	select {
	case <-c.gone:
		return false
	default:
		return !c.overLimit.Load()
	}
}

// closeAfterFlush closes the connection once its output is written.
func (c *conn) closeAfterFlush() {
	c.loop.Submit(func() {
		if c.lc != nil && !c.lc.IsClosed() {
			c.flushPubSub()
			c.lc.CloseAfterFlush()
		}
	})
}
