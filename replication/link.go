package replication

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zredis/zredis/config"
	"github.com/zredis/zredis/engine"
	"github.com/zredis/zredis/keyspace"
	"github.com/zredis/zredis/resp"
)

// Link is the replica side of replication (replication.c:
// replicationSetMaster, connectWithMaster, syncWithMaster,
// readSyncBulkPayload, replicationSendAck, replicationCacheMaster):
// REPLICAOF, this server's link to its master, and the cached master.
// One goroutine per link, owned by the Link (started by SetMaster,
// stopped by UnsetMaster or Stop, waited for by Wait), keeps the link to
// the master: it connects, runs the handshake in Redis's order,
// full-syncs or continues, and applies the master's command stream,
// counting its bytes as the replication offset. The keyspace's replica
// rule (SetReplica) keeps keys past their deadline until the master's
// DEL: a replica sends no expiry message.
type Link struct {
	host  LinkHost
	m     *Master
	ks    *keyspace.Keyspace
	disp  *engine.Dispatcher
	cfg   *config.Config
	log   Logger
	stats *engine.ServerStats

	// Under the keyspace lock.
	//
	// cur is the link to the master while this server replicates one,
	// nil otherwise.
	cur *link
	// cachedMaster reports whether the data set holds the replication
	// stream's history up to its offset (the Master's Stream), so that a
	// master may let this server continue it: PSYNC with its ID and
	// offset, as Redis's cached master. Only a server started as a
	// replica without that history, and one whose full synchronisation
	// failed, has none.
	cachedMaster bool
	// cachedMasterDB is the database the master's stream was in where the
	// last link stopped: a partial resync continues there, without a
	// SELECT.
	cachedMasterDB int
	// downSince is when (Unix s) the link to the master last went down
	// after being up, 0 when it never was since this server became a
	// replica (master_link_down_since_seconds -1), as Redis's
	// repl_down_since.
	downSince int64

	// links counts the link goroutines still running, dropped or not:
	// Wait waits for them.
	links sync.WaitGroup
}

// NewLink returns the replica side of a server whose master side is m.
// replica tells whether the server starts as a replica (replicaof): a
// master's data set is its own history, a replica's is not one a master
// knows until it synchronised.
func NewLink(host LinkHost, m *Master, ks *keyspace.Keyspace, disp *engine.Dispatcher, cfg *config.Config, log Logger, stats *engine.ServerStats, replica bool) *Link {
	return &Link{host: host, m: m, ks: ks, disp: disp, cfg: cfg, log: log, stats: stats, cachedMaster: !replica}
}

// link is the link to one master.
type link struct {
	r    *Link
	host string
	port int
	stop chan struct{}
	done chan struct{}

	// Under the keyspace lock.
	state      string // connect, connecting, handshake, sync, connected (ROLE's words; up only when connected)
	lastIOms   int64  // Unix ms of the last byte read from the master
	syncSize   int64  // full sync: payload size (-1 for an EOF-marked one)
	syncRead   int64  // full sync: bytes read so far
	syncLastMs int64  // full sync: Unix ms of the last payload byte
	master     *engine.Client

	wmu  sync.Mutex // serializes writes to conn (ACKs from the stream and the ticker)
	conn net.Conn

	// stopped is set (under the lock) when the server drops this link:
	// from then on the goroutine changes nothing (owned), and a load in
	// progress ends (aborted).
	stopped atomic.Bool
	// pendingMulti holds the stream of a transaction still queued: it
	// counts into the offset, and goes to the backlog and this server's
	// replicas, once its EXEC ran.
	pendingMulti []byte
	scratch      []byte // a command's stream, re-encoded (what the master wrote)
}

// owned reports whether the link is still the server's, under the lock:
// a stopped link's goroutine touches neither the data nor the state.
func (l *link) owned() bool { return !l.stopped.Load() && l.r.cur == l }

// masterLinkUp reports whether the link is up (master_link_status:up).
// Under the lock.
func (l *link) up() bool { return l.state == "connected" }

// Start makes the server a replica of host:port: writes are refused to
// normal clients, keys stop expiring here, and the link goroutine
// starts. Under the keyspace lock; a previous link must have been
// stopped.
func (r *Link) Start(host string, port int) {
	l := &link{r: r, host: host, port: port, stop: make(chan struct{}), done: make(chan struct{}),
		state: "connect"}
	r.cur = l
	r.host.SetRole('S')
	r.ks.SetReplica(true)
	r.updateRules()
	r.host.DisconnectBlockedClients()
	// A replica's stream is its master's, proxied by the link: its own
	// commands (a writable replica's) are not propagated. Its replicas
	// stay: they may continue once this server continues its master's
	// stream, or are dropped when it cannot (a new ID, a full sync).
	r.m.Detach()
	r.links.Add(1)
	go func() {
		defer r.links.Done()
		l.run()
	}()
}

// ReplicaOf is REPLICAOF host port, or REPLICAOF NO ONE with host "".
// It never waits: a dropped link's goroutine ends on its own, changing
// nothing once dropped (owned), and Wait waits for it. So REPLICAOF
// also runs inside MULTI. Under the lock.
func (r *Link) ReplicaOf(host string, port int, who string) (reply string) {
	if host == "" {
		if r.cur == nil {
			return "OK"
		}
		r.UnsetMaster()
		r.log.Noticef("MASTER MODE enabled (user request from '%s')", who)
		return "OK"
	}
	if l := r.cur; l != nil && strings.EqualFold(l.host, host) && l.port == port {
		r.log.Noticef("REPLICAOF would result into synchronization with the master we are already connected with. No operation performed.")
		return "OK Already connected to specified master"
	}
	r.SetMaster(host, port)
	r.log.Noticef("REPLICAOF %s:%d enabled (user request from '%s')", host, port, who)
	return "OK"
}

// UnsetMaster makes a replica a master (replicationUnsetMaster). Under
// the lock.
func (r *Link) UnsetMaster() {
	r.host.SetRole('M')
	r.Stop()
	if r.cachedMaster {
		r.log.Noticef("Discarding previously cached master state.")
	}
	// A master now, whose history continues the one it followed.
	r.m.Promote()
	r.cachedMaster = true
	r.downSince = 0 // ready for a next time as a replica
	r.ks.SetReplica(false)
	r.updateRules()
	r.cfg.SetReplicaOf("", 0)
}

// SetMaster makes the server a replica of host:port, or of another
// master (replicationSetMaster). Under the lock.
func (r *Link) SetMaster(host string, port int) {
	if r.cur == nil {
		// A master's data set is its own history, which a master that
		// was its replica can continue (replicationCacheMasterUsingMyself);
		// that master's stream starts with a SELECT.
		r.host.SetRole('S')
		r.cachedMaster, r.cachedMasterDB = true, 0
		r.log.Noticef("Before turning into a replica, using my own master parameters to synthesize a cached master: I may be able to synchronize with the new master with just a partial transfer.")
	}
	r.Stop()
	r.cfg.SetReplicaOf(host, port)
	if !r.host.Closing() {
		r.Start(host, port)
	}
}

// WatchConfig follows the directives a replica's refusals depend on.
func (r *Link) WatchConfig() {
	for _, name := range []string{"replica-read-only", "replica-serve-stale-data"} {
		r.cfg.OnChange(name, func(string) error { r.updateRules(); return nil })
	}
}

// updateRules tells the dispatcher what a replica refuses to
// normal clients: writes while replica-read-only is yes (-READONLY), and
// commands not flagged stale while the link is down and
// replica-serve-stale-data is no (-MASTERDOWN). Under the lock.
func (r *Link) updateRules() {
	l := r.cur
	r.disp.ReadOnlyReplica.Store(l != nil && r.cfg.Bool("replica-read-only"))
	r.disp.StaleRefused.Store(l != nil && !l.up() && !r.cfg.Bool("replica-serve-stale-data"))
}

// Stop drops the link: from now on its goroutine changes nothing and
// ends (Wait waits for it); where the stream stopped is kept for a
// partial resync with the next master. Under the lock.
func (r *Link) Stop() {
	l := r.cur
	if l == nil {
		return
	}
	r.cur = nil
	l.stopped.Store(true)
	if l.master != nil {
		r.cacheMaster(l)
		r.downSince = time.Now().Unix()
	}
	l.master = nil
	l.pendingMulti = nil
	if l.state == "sync" {
		r.disp.Loading.Store(false)
	}
	r.updateRules()
	close(l.stop)
	l.wmu.Lock()
	if l.conn != nil {
		l.conn.Close()
	}
	l.wmu.Unlock()
}

// run keeps the link up until stopped: a failed or broken session is
// retried after a second, as Redis's replicationCron reconnects.
func (l *link) run() {
	defer close(l.done)
	log := l.r.log
	for {
		log.Noticef("Connecting to MASTER %s:%d", l.host, l.port)
		err := l.session()
		l.r.ks.Exec(func() {
			if !l.owned() {
				return
			}
			if l.state == "connected" {
				// A failed sync leaves it as it was, as Redis's.
				l.r.downSince = time.Now().Unix()
			}
			if l.state == "sync" {
				l.r.disp.Loading.Store(false)
			}
			if l.master != nil {
				l.r.cacheMaster(l)
			}
			l.state = "connect"
			l.master = nil
			l.pendingMulti = nil
			l.r.updateRules()
		})
		select {
		case <-l.stop:
			return
		default:
		}
		if err != nil {
			log.Warningf("%v", err)
		}
		select {
		case <-l.stop:
			return
		case <-time.After(time.Second):
		}
	}
}

// linkError is a failure of the link, logged as Redis logs it.
type linkError string

func (e linkError) Error() string { return string(e) }

// session is one connection to the master: handshake, sync, stream.
func (l *link) session() error {
	cfg := l.r.cfg
	timeout := time.Duration(cfg.Int("repl-timeout")) * time.Second
	l.r.ks.Exec(func() {
		if l.owned() {
			l.state = "connecting"
		}
	})
	dialer := net.Dialer{Timeout: timeout}
	if src := cfg.String("bind-source-addr"); src != "" {
		dialer.LocalAddr = &net.TCPAddr{IP: net.ParseIP(src)}
	}
	conn, err := l.dialMaster(&dialer, net.JoinHostPort(l.host, strconv.Itoa(l.port)))
	if err != nil {
		return linkError(fmt.Sprintf("Error condition on socket for SYNC: %v", err))
	}
	l.wmu.Lock()
	select {
	case <-l.stop:
		l.wmu.Unlock()
		conn.Close()
		return nil
	default:
	}
	l.conn = conn
	l.wmu.Unlock()
	defer func() {
		l.wmu.Lock()
		conn.Close()
		l.conn = nil
		l.wmu.Unlock()
	}()
	l.r.log.Noticef("MASTER <-> REPLICA sync started")
	l.r.ks.Exec(func() {
		if l.owned() {
			l.state = "handshake" // as ROLE shows it
		}
	})
	in := &replInput{r: conn, stats: l.r.stats} // replication input once PSYNC is answered
	br := bufio.NewReaderSize(in, 64<<10)
	ask := func(args ...string) (string, error) {
		conn.SetDeadline(time.Now().Add(timeout))
		if _, err := conn.Write(encodeCommand(args...)); err != nil {
			return "", err
		}
		return readLine(br)
	}

	// PING: any answer but an unexpected error is fine (an auth error
	// is, AUTH comes next).
	reply, err := ask("PING")
	if err != nil {
		return linkError(fmt.Sprintf("Error condition on socket for SYNC: %v", err))
	}
	if strings.HasPrefix(reply, "-") && !strings.HasPrefix(reply, "-NOAUTH") && !strings.HasPrefix(reply, "-NOPERM") &&
		!strings.HasPrefix(reply, "-ERR operation not permitted") {
		return linkError("Error reply to PING from master: '" + reply + "'")
	}
	l.r.log.Noticef("Master replied to PING, replication can continue...")
	if pass := cfg.String("masterauth"); pass != "" {
		args := []string{"AUTH", pass}
		if user := cfg.String("masteruser"); user != "" {
			args = []string{"AUTH", user, pass}
		}
		if reply, err = ask(args...); err != nil || strings.HasPrefix(reply, "-") {
			return linkError("Unable to AUTH to MASTER: " + reply)
		}
	}
	port := l.r.listeningPort()
	if reply, err = ask("REPLCONF", "listening-port", strconv.Itoa(port)); err != nil {
		return linkError(fmt.Sprintf("Error condition on socket for SYNC: %v", err))
	} else if strings.HasPrefix(reply, "-") {
		l.r.log.Noticef("(Non critical) Master does not understand REPLCONF listening-port: %s", reply)
	}
	if ip := cfg.String("replica-announce-ip"); ip != "" {
		if reply, err = ask("REPLCONF", "ip-address", ip); err == nil && strings.HasPrefix(reply, "-") {
			l.r.log.Noticef("(Non critical) Master does not understand REPLCONF ip-address: %s", reply)
		}
	}
	if reply, err = ask("REPLCONF", "capa", "eof", "capa", "psync2", "capa", capaFieldTTL); err != nil {
		return linkError(fmt.Sprintf("Error condition on socket for SYNC: %v", err))
	} else if strings.HasPrefix(reply, "-") {
		l.r.log.Noticef("(Non critical) Master does not understand REPLCONF capa: %s", reply)
	}

	var replid string
	var offset int64
	failover := false
	l.r.ks.Exec(func() {
		if l.r.cachedMaster {
			replid, offset = l.r.m.Stream().ID, l.r.m.Stream().Offset()
		}
		failover = l.owned() && l.r.m.FailoverInProgress()
	})
	psync := []string{"PSYNC", "?", "-1"}
	if replid != "" {
		psync = []string{"PSYNC", replid, strconv.FormatInt(offset+1, 10)}
		l.r.log.Noticef("Trying a partial resynchronization (request %s:%d).", replid, offset+1)
	} else {
		l.r.log.Noticef("Partial resynchronization not possible (no cached master)")
	}
	if failover {
		// This master hands its role to the replica it connects to.
		psync = append(psync, "FAILOVER")
	}
	conn.SetDeadline(time.Now().Add(timeout))
	if _, err := conn.Write(encodeCommand(psync...)); err != nil {
		if failover {
			l.r.log.Warningf("Unable to send PSYNC to master: %v", err)
			l.r.ks.Exec(func() {
				if l.owned() {
					l.r.m.EndFailover("Write error to failover target")
				}
			})
		}
		return linkError(fmt.Sprintf("Error condition on socket for SYNC: %v", err))
	}
	reply, err = readLine(br)
	for err == nil && reply == "" {
		// A master preparing a diskless sync sends newlines meanwhile,
		// even before its reply to PSYNC.
		conn.SetReadDeadline(time.Now().Add(timeout))
		reply, err = readLine(br)
	}
	if failover && !l.failoverAnswered(reply, err) {
		return nil
	}
	if err != nil {
		return linkError(fmt.Sprintf("Error condition on socket for SYNC: %v", err))
	}
	in.start(br.Buffered())
	switch {
	case strings.HasPrefix(reply, "+FULLRESYNC"):
		f := strings.Fields(reply)
		if len(f) != 3 || len(f[1]) != 40 {
			return linkError("Master replied with wrong +FULLRESYNC syntax.")
		}
		off, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil {
			return linkError("Master replied with wrong +FULLRESYNC syntax.")
		}
		l.r.log.Noticef("Full resync from master: %s:%d", f[1], off)
		l.r.ks.Exec(func() {
			if l.owned() && l.r.cachedMaster {
				// The data set is no longer a history a master knows.
				l.r.cachedMaster = false
				l.r.log.Noticef("Discarding previously cached master state.")
			}
		})
		if err := l.fullSync(conn, br, f[1], off, timeout); err != nil {
			return err
		}
	case strings.HasPrefix(reply, "+CONTINUE"):
		f := strings.Fields(reply)
		owned := true
		l.r.ks.Exec(func() {
			if owned = l.owned(); !owned {
				return
			}
			l.r.log.Noticef("Successful partial resynchronization with master.")
			st := l.r.m.Stream()
			if len(f) == 2 && len(f[1]) == 40 && f[1] != st.ID {
				// The master continues the stream under a new ID (it was
				// promoted): this server's replicas continue through ID2,
				// once told by a reconnection.
				l.r.log.Warningf("Master replication ID changed to %s", f[1])
				st.Rename(f[1])
				l.r.m.DisconnectReplicas()
			}
			// Restarted, a replica has the history but no backlog yet.
			st.EnsureBacklog(int(l.r.cfg.Int("repl-backlog-size")))
			l.state = "connected"
			l.r.downSince = 0
			l.lastIOms = time.Now().UnixMilli()
			l.master = l.newMasterClient()
			l.master.DB = l.r.cachedMasterDB
			l.r.updateRules()
		})
		if !owned {
			return nil
		}
		l.r.log.Noticef("MASTER <-> REPLICA sync: Master accepted a Partial Resynchronization.")
	case strings.HasPrefix(reply, "-NOMASTERLINK") || strings.HasPrefix(reply, "-LOADING"):
		return linkError("Master is currently unable to PSYNC but should be in the future: " + reply)
	default:
		return linkError("Unexpected reply to PSYNC from master: " + reply)
	}
	return l.stream(conn, br, timeout)
}

// failoverAnswered settles a failover in progress once its target
// answered PSYNC ... FAILOVER (err: it did not): +CONTINUE or
// +FULLRESYNC completes it, anything else ends it with this server a
// master again, and the session then ends (false).
func (l *link) failoverAnswered(reply string, err error) bool {
	ok := err == nil && (strings.HasPrefix(reply, "+CONTINUE") || strings.HasPrefix(reply, "+FULLRESYNC"))
	switch {
	case ok:
	case err != nil:
		l.r.log.Warningf("Master did not reply to PSYNC, will try later")
	case strings.HasPrefix(reply, "-NOMASTERLINK") || strings.HasPrefix(reply, "-LOADING"):
		l.r.log.Noticef("Master is currently unable to PSYNC but should be in the future: %s", reply)
	case strings.HasPrefix(reply, "-ERR"):
		l.r.log.Noticef("Master does not support PSYNC or is in error state (reply: %s)", reply)
	default:
		l.r.log.Warningf("Unexpected reply to PSYNC from master: %s", reply)
	}
	owned := true
	l.r.ks.Exec(func() {
		if owned = l.owned(); owned {
			l.r.m.FailoverAnswered(ok)
		}
	})
	return ok && owned
}

// fullSync reads the RDB payload ("$<len>" or "$EOF:<mark>", after any
// newlines the master sends while it prepares), writes it to a temporary
// file in dir, and loads it in place of the data set: the old data goes
// without expiry messages, clients get -LOADING meanwhile.
func (l *link) fullSync(conn net.Conn, br *bufio.Reader, replid string, offset int64, timeout time.Duration) error {
	var header string
	for header == "" {
		// Newlines first: the master is alive, preparing the payload.
		conn.SetReadDeadline(time.Now().Add(timeout))
		line, err := readLine(br)
		if err != nil {
			return linkError(fmt.Sprintf("I/O error reading bulk count from MASTER: %v", err))
		}
		header = line
	}
	if strings.HasPrefix(header, "-") {
		return linkError("MASTER aborted replication with an error: " + header[1:])
	}
	if !strings.HasPrefix(header, "$") {
		return linkError("Bad protocol from MASTER, the first byte is not '$' (we received '" + header + "'), are you sure the host and port are right?")
	}
	var mark []byte
	size := int64(-1)
	if m, ok := strings.CutPrefix(header, "$EOF:"); ok {
		if len(m) != 40 {
			return linkError("Bad EOF mark from MASTER")
		}
		mark = []byte(m)
		l.r.log.Noticef("MASTER <-> REPLICA sync: receiving streamed RDB from master with EOF to disk")
	} else {
		n, err := strconv.ParseInt(header[1:], 10, 64)
		if err != nil || n < 0 {
			return linkError("Bad protocol from MASTER: bulk length '" + header + "'")
		}
		size = n
		l.r.log.Noticef("MASTER <-> REPLICA sync: receiving %d bytes from master to disk", size)
	}
	owned := true
	l.r.ks.Exec(func() {
		if owned = l.owned(); owned {
			l.state = "sync"
			l.syncSize, l.syncRead, l.syncLastMs = size, 0, time.Now().UnixMilli()
			l.lastIOms = l.syncLastMs
		}
	})
	if !owned {
		return nil
	}
	tmp := filepath.Join(l.r.cfg.String("dir"), fmt.Sprintf("temp-%d.%d.rdb", time.Now().Unix(), os.Getpid()))
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return linkError(fmt.Sprintf("Opening the temp file needed for MASTER <-> REPLICA synchronization: %v", err))
	}
	defer os.Remove(tmp)
	defer f.Close()
	if err := l.readPayload(conn, br, f, size, mark, timeout); err != nil {
		return err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return linkError(fmt.Sprintf("Failed trying to load the MASTER synchronization DB from disk: %v", err))
	}
	// The payload becomes the RDB file, as Redis renames it: a restart
	// loads this data set, not the one from before the sync.
	if err := os.Rename(tmp, l.r.host.RDBPath()); err != nil {
		return linkError(fmt.Sprintf("Failed trying to rename the temp DB into %s in MASTER <-> REPLICA synchronization: %v", filepath.Base(l.r.host.RDBPath()), err))
	}
	l.r.ks.Exec(func() {
		if owned = l.owned(); owned {
			// A new history (replicationAttachToNewMaster): this server's
			// replicas sync again, and cannot continue the old one.
			l.r.cachedMaster = false
			l.r.m.DisconnectReplicas()
			l.r.m.Stream().DropBacklog()
			l.r.log.Noticef("MASTER <-> REPLICA sync: Flushing old data")
			l.r.disp.Loading.Store(true)
			l.r.flushForSync()
		}
	})
	if !owned {
		return nil
	}
	l.r.log.Noticef("MASTER <-> REPLICA sync: Loading DB in memory")
	keys, aux, err := l.r.host.LoadRDB(f, l.stopped.Load)
	var expired int64
	l.r.ks.Exec(func() {
		expired = l.r.host.LoadedExpired()
		if owned = l.owned(); owned || l.r.cur == nil {
			l.r.disp.Loading.Store(false)
		}
		if err != nil || !owned {
			// What was loaded is part of a data set: gone.
			l.r.flushForSync()
		}
	})
	if !owned {
		l.r.log.Noticef("MASTER <-> REPLICA sync: the link was dropped while loading; the partial data set was discarded")
		return nil
	}
	if err != nil {
		return linkError(fmt.Sprintf("Failed trying to load the MASTER synchronization DB from disk, check server logs: %v", err))
	}
	l.r.log.Noticef("Done loading RDB, keys loaded: %d, keys expired: %d.", keys, expired)
	if mark != nil {
		// The master learns at once that this replica is online.
		l.sendAck(offset)
	}
	l.r.ks.Exec(func() {
		if !l.owned() {
			return
		}
		// The master's history, from its offset on.
		l.r.m.Stream().Follow(replid, offset, int(l.r.cfg.Int("repl-backlog-size")))
		l.r.cachedMaster = true
		l.state = "connected"
		l.r.downSince = 0
		l.lastIOms = time.Now().UnixMilli()
		l.master = l.newMasterClient()
		l.master.DB = streamDB(aux, l.r.ks.NumDBs())
		l.r.updateRules()
		if l.r.cfg.Bool("appendonly") {
			// The AOF does not hold the new data set: rewrite it
			// (restartAOFAfterSYNC), or schedule it after one running.
			l.r.host.RewriteAOFAfterSync()
		}
	})
	l.r.log.Noticef("MASTER <-> REPLICA sync: Finished with success")
	return nil
}

// readPayload copies the RDB payload to f: size bytes, or up to the EOF
// mark, which is cut off.
func (l *link) readPayload(conn net.Conn, br *bufio.Reader, f *os.File, size int64, mark []byte, timeout time.Duration) error {
	buf := make([]byte, 64<<10)
	var read int64
	var tail []byte // the last bytes written, to find the mark
	for size < 0 || read < size {
		conn.SetReadDeadline(time.Now().Add(timeout))
		want := len(buf)
		if size >= 0 && size-read < int64(want) {
			want = int(size - read)
		}
		n, err := br.Read(buf[:want])
		if n > 0 {
			if _, werr := f.Write(buf[:n]); werr != nil {
				return linkError(fmt.Sprintf("Write error writing to the DB on disk for MASTER <-> REPLICA synchronization: %v", werr))
			}
			read += int64(n)
			if mark != nil {
				tail = append(tail, buf[:n]...)
				if len(tail) > 2*len(mark) {
					tail = tail[len(tail)-len(mark):]
				}
				if len(tail) >= len(mark) && bytes.Equal(tail[len(tail)-len(mark):], mark) {
					if err := f.Truncate(read - int64(len(mark))); err != nil {
						return linkError(fmt.Sprintf("Error truncating the RDB file received from the master for SYNC: %v", err))
					}
					break
				}
			}
			l.r.ks.Exec(func() {
				l.syncRead, l.syncLastMs = read, time.Now().UnixMilli()
				l.lastIOms = l.syncLastMs
			})
		}
		if err != nil {
			return linkError(fmt.Sprintf("I/O error trying to sync with MASTER: %v", err))
		}
	}
	return nil
}

// newMasterClient is the client the master's commands run as: flag M,
// never refused as a replica's other clients are, replies dropped.
func (l *link) newMasterClient() *engine.Client {
	now := time.Now().UnixMilli()
	cl := &engine.Client{ID: l.r.host.NewClientID(), Addr: net.JoinHostPort(l.host, strconv.Itoa(l.port)), Created: now,
		Authed: true, Master: true, W: resp.NewWriter()}
	cl.LastInteraction.Store(now)
	// CLIENT KILL of the master client drops the link, which is then
	// reconnected (and continues where it stopped), as in Redis.
	cl.Kill = func() {
		l.wmu.Lock()
		if l.conn != nil {
			l.conn.Close()
		}
		l.wmu.Unlock()
	}
	return cl
}

// stream applies the master's commands, each under the keyspace lock as a
// client's, and counts their bytes into the offset. The master's PINGs
// keep the link alive; no byte for repl-timeout drops it. REPLCONF GETACK
// is answered with the offset before it, as Redis answers it.
func (l *link) stream(conn net.Conn, br *bufio.Reader, timeout time.Duration) error {
	// The master's stream is not a client's query: no buffer limit.
	rd := resp.NewReader(br, resp.Limits{MaxBulkLen: l.r.cfg.Int("proto-max-bulk-len"), MaxQueryBuf: 1 << 62})
	rd.SetAuthenticated(true)
	rd.SetBigHook(l.r.host.BigValueArriving)
	ackDone := make(chan struct{})
	defer close(ackDone)
	go l.ackLoop(ackDone)
	var batch [][][]byte
	for {
		conn.SetReadDeadline(time.Now().Add(timeout))
		var err error
		batch, err = rd.ReadBatch(batch[:0])
		if len(batch) > 0 {
			l.apply(batch)
		}
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				return linkError("MASTER timeout: no data nor PING received...")
			}
			return linkError(fmt.Sprintf("Connection with master lost: %v", err))
		}
		rd.Forget(batch)
	}
}

// apply runs a batch of the master's commands. A command's bytes count
// into the offset once it ran, and those of a transaction once its EXEC
// ran (Redis advances the applied offset outside MULTI only); with the
// offset, they go verbatim to the backlog and to this server's own
// replicas. Work a command leaves for after the lock runs after it.
func (l *link) apply(batch [][][]byte) {
	var acks []int64
	var offloads []func()
	l.r.ks.Exec(func() {
		cl := l.master
		if cl == nil || !l.owned() {
			return
		}
		m := l.r.m
		l.lastIOms = time.Now().UnixMilli()
		cl.LastInteraction.Store(l.lastIOms)
		l.r.disp.BeginBatch(cl)
		for _, args := range batch {
			// The bytes as the master wrote them, taken before the
			// command runs: running may redact its arguments.
			l.scratch = resp.AppendCommand(l.scratch[:0], args...)
			if cl.InMulti {
				// Queued, GETACK too, as Redis queues it: the whole
				// transaction counts once its EXEC ran.
				l.pendingMulti = append(l.pendingMulti, l.scratch...)
			}
			if len(args) >= 2 && engine.EqualFold(args[0], "replconf") && engine.EqualFold(args[1], "getack") && !cl.InMulti {
				// Answered with the offset before it, which it then
				// advances, as any command of the stream.
				acks = append(acks, m.Stream().Offset())
				m.Proxy(l.scratch)
				continue
			}
			inMulti := cl.InMulti
			if offload := l.r.disp.Exec(cl, args); offload != nil {
				offloads = append(offloads, offload)
			}
			if reply := cl.W.Bytes(); len(reply) > 0 && reply[0] == '-' {
				l.replyError(cl, args, reply)
			}
			cl.W.Reset()
			switch {
			case cl.InMulti:
				if !inMulti {
					l.pendingMulti = append(l.pendingMulti, l.scratch...) // MULTI itself
				}
			case inMulti:
				// EXEC or DISCARD: the transaction is applied.
				m.Proxy(l.pendingMulti)
				l.pendingMulti = l.pendingMulti[:0]
			default:
				m.Proxy(l.scratch)
			}
		}
		if cap(l.scratch) > 64<<10 {
			l.scratch = nil
		}
		if cap(l.pendingMulti) > 64<<10 && len(l.pendingMulti) == 0 {
			l.pendingMulti = nil
		}
	})
	for _, fn := range offloads {
		fn()
	}
	for _, off := range acks {
		l.sendAck(off)
	}
}

// streamDB is the database the master's stream continues in after its
// RDB: the file's repl-stream-db aux field, 0 without one or when this
// server has fewer databases (Redis's selectDb fails and leaves 0).
func streamDB(aux [][2]string, dbs int) int {
	for _, kv := range aux {
		if kv[0] == "repl-stream-db" {
			if db, err := strconv.Atoi(kv[1]); err == nil && db >= 0 && db < dbs {
				return db
			}
		}
	}
	return 0
}

// flushForSync empties the data set and the functions before a full
// synchronisation's load (emptyData), counting in lazyfreed_objects what
// Redis frees in the background with replica-lazy-flush: every key, the
// tracking table and the functions when large. Under the lock.
func (r *Link) flushForSync() {
	if r.cfg.Bool("replica-lazy-flush") {
		var n int
		for i := 0; i < r.ks.NumDBs(); i++ {
			n += r.ks.DB(i).Len()
		}
		if t := r.disp.Tracking; t != nil {
			n += t.FlushFreed()
		}
		if _, funcs := r.disp.Functions.Counts(); funcs > keyspace.LazyfreeThreshold {
			n += funcs
		}
		r.ks.LazyFreed(int64(n))
	}
	r.ks.FlushAll()
	r.disp.Functions.Flush()
}

// cacheMaster keeps what a partial resync with the next master needs
// when the link to a master it was streaming from goes
// (replicationCacheMaster): the stream's history is the server's, the
// database the stream was in is the master client's. Under the lock.
func (r *Link) cacheMaster(l *link) {
	r.log.Noticef("Connection with master lost.")
	r.log.Noticef("Caching the disconnected master state.")
	r.cachedMasterDB = l.master.DB
}

// replyError handles an error the master's stream got here, as Redis's
// afterErrorReply: logged as CRITICAL with the latest bytes of the
// backlog, counted, and, on a read-only replica with
// propagation-error-behavior panic or panic-on-replicas, the end of the
// process: its data set is no longer its master's. Under the lock.
func (l *link) replyError(cl *engine.Client, args [][]byte, reply []byte) {
	r := l.r
	name := r.host.UnexpectedError(cl, args, reply, "replica", "master")
	if bl := r.m.Stream().Backlog(); bl != nil && bl.HistLen() > 0 {
		from := max(bl.First(), bl.End()-255)
		r.log.Warningf("Latest backlog is: '%s'", config.Repr(string(bl.AppendFrom(nil, from))))
	}
	if r.cfg.Bool("replica-read-only") && r.cfg.Int("propagation-error-behavior") != 0 {
		r.host.Panic(fmt.Sprintf("This replica panicked sending an error to its master after processing the command '%s'", name))
	}
}

// ackLoop sends REPLCONF ACK every second (replicationCron) until done.
func (l *link) ackLoop(done chan struct{}) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
			var off int64
			l.r.ks.Exec(func() { off = l.r.m.Stream().Offset() })
			l.sendAck(off)
		}
	}
}

// sendAck tells the master how far the stream was applied.
func (l *link) sendAck(offset int64) {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	if l.conn == nil {
		return
	}
	l.conn.SetWriteDeadline(time.Now().Add(time.Second))
	n, _ := l.conn.Write(encodeCommand("REPLCONF", "ACK", strconv.FormatInt(offset, 10)))
	l.r.stats.NetOut.Add(int64(n)) // the master's client is not a replica: ordinary output
}

// encodeCommand writes args as a RESP multibulk.
func encodeCommand(args ...string) []byte {
	argv := make([][]byte, len(args))
	for i, a := range args {
		argv[i] = []byte(a)
	}
	return resp.AppendCommand(nil, argv...)
}

// AppendInfo writes INFO replication's fields of a replica, as 7.0
// lists them, nothing while this server is a master. Under the lock.
func (r *Link) AppendInfo(b []byte) []byte {
	l := r.cur
	if l == nil {
		return b
	}
	now := time.Now().UnixMilli()
	b = engine.InfoStr(b, "master_host", l.host)
	b = engine.InfoInt(b, "master_port", int64(l.port))
	status, lastIO := "down", int64(-1)
	if l.up() {
		status, lastIO = "up", (now-l.lastIOms)/1000
	}
	b = engine.InfoStr(b, "master_link_status", status)
	b = engine.InfoInt(b, "master_last_io_seconds_ago", lastIO)
	syncing := l.state == "sync"
	b = engine.InfoInt(b, "master_sync_in_progress", boolInt(syncing))
	off := int64(1)
	if l.master != nil || r.cachedMaster {
		off = r.m.Stream().Offset()
	}
	b = engine.InfoInt(b, "slave_read_repl_offset", off)
	b = engine.InfoInt(b, "slave_repl_offset", off)
	if syncing {
		left, perc := int64(-1), 0.0
		if l.syncSize >= 0 {
			left = l.syncSize - l.syncRead
			if l.syncSize > 0 {
				perc = float64(l.syncRead) * 100 / float64(l.syncSize)
			}
		}
		b = engine.InfoInt(b, "master_sync_total_bytes", l.syncSize)
		b = engine.InfoInt(b, "master_sync_read_bytes", l.syncRead)
		b = engine.InfoInt(b, "master_sync_left_bytes", left)
		b = engine.InfoStr(b, "master_sync_perc", strconv.FormatFloat(perc, 'f', 2, 64))
		b = engine.InfoInt(b, "master_sync_last_io_seconds_ago", (now-l.syncLastMs)/1000)
	}
	if !l.up() {
		down := int64(-1)
		if r.downSince != 0 {
			down = time.Now().Unix() - r.downSince
		}
		b = engine.InfoInt(b, "master_link_down_since_seconds", down)
	}
	b = engine.InfoInt(b, "slave_priority", r.cfg.Int("replica-priority"))
	b = engine.InfoInt(b, "slave_read_only", boolInt(r.cfg.Bool("replica-read-only")))
	b = engine.InfoInt(b, "replica_announced", boolInt(r.cfg.Bool("replica-announced")))
	return b
}

// maxLinkLine bounds a line of the handshake: a master's replies are a
// few dozen bytes, and a wrong endpoint must not make the server buffer
// without end.
const maxLinkLine = 4096

// readLine reads one CRLF- or LF-terminated line of at most maxLinkLine
// bytes, without its terminator.
func readLine(br *bufio.Reader) (string, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > maxLinkLine {
			return "", linkError("the master sent a line longer than 4096 bytes")
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			return "", err
		}
		return strings.TrimRight(string(line), "\r\n"), nil
	}
}

// Wait waits for the link goroutines, dropped or not, to end: after
// Stop, with no SetMaster since.
func (r *Link) Wait() { r.links.Wait() }

// Status is what ROLE and INFO show of the link, ok false while this
// server is a master. Under the lock.
func (r *Link) Status() (st LinkStatus, ok bool) {
	l := r.cur
	if l == nil {
		return LinkStatus{}, false
	}
	return LinkStatus{Host: l.host, Port: l.port, State: l.state, Up: l.up(), Streaming: l.master != nil}, true
}

// IsReplica reports whether this server replicates a master. Under the
// lock.
func (r *Link) IsReplica() bool { return r.cur != nil }

// MasterDataAge is how long, in ms, the data set has gone without its
// master's stream, as clusterHandleSlaveFailover's data_age: since the
// master's last byte while the link is up, else since the link went
// down; in whole seconds, as Redis counts them. A replica whose link was
// never up counts from the epoch (repl_down_since 0), too old to fail
// over. Under the lock.
func (r *Link) MasterDataAge(nowMs int64) int64 {
	if l := r.cur; l != nil && l.up() {
		return (nowMs/1000 - l.lastIOms/1000) * 1000
	}
	return (nowMs/1000 - r.downSince) * 1000
}

// Syncing reports whether a full synchronisation is loading its RDB.
// Under the lock.
func (r *Link) Syncing() bool { return r.cur != nil && r.cur.state == "sync" }

// MasterClient is the client the master's stream runs as, nil while
// none is applied. Under the lock.
func (r *Link) MasterClient() *engine.Client {
	if r.cur == nil {
		return nil
	}
	return r.cur.master
}

// SaveInfo is rdbPopulateSaveInfo: the aux fields with which a file
// written now lets a replica restarted from it continue its master's
// stream (repl-stream-db, repl-id, repl-offset), or nil when this server
// has no stream to continue (a master without a backlog, a replica
// that never synchronised). Under the lock, with the snapshot.
func (r *Link) SaveInfo() [][2]string {
	st := r.m.Stream()
	var db int
	switch l := r.cur; {
	case l == nil && st.Backlog() != nil:
		db = max(st.SelectedDB(), 0)
	case l != nil && l.master != nil:
		db = l.master.DB
	case l != nil && r.cachedMaster:
		db = r.cachedMasterDB
	default:
		return nil
	}
	return [][2]string{
		{"repl-stream-db", strconv.Itoa(db)},
		{"repl-id", st.ID},
		{"repl-offset", strconv.FormatInt(st.Offset(), 10)},
	}
}

// RestoreInfo continues, after a restart from an RDB file written with
// SaveInfo's fields, the stream it records (loadDataFromDisk): a replica
// offers it to its master, a master keeps it as its previous history
// (ID2) with a backlog from there, so that neither costs its replicas or
// itself a full sync. Before clients are served.
func (r *Link) RestoreInfo(aux [][2]string) {
	var id string
	off, db := int64(-1), -1
	for _, kv := range aux {
		switch kv[0] {
		case "repl-id":
			id = kv[1]
		case "repl-offset":
			if n, err := strconv.ParseInt(kv[1], 10, 64); err == nil {
				off = n
			}
		case "repl-stream-db":
			if n, err := strconv.Atoi(kv[1]); err == nil {
				db = n
			}
		}
	}
	if len(id) != 40 || off < 0 || db < 0 || db >= r.ks.NumDBs() {
		return
	}
	if _, _, replica := r.cfg.ReplicaOf(); !replica {
		r.m.Resume(id, off)
		return
	}
	r.m.Stream().Resume(id, off)
	r.cachedMaster, r.cachedMasterDB = true, db
	r.log.Noticef("Before turning into a replica, using my own master parameters to synthesize a cached master: I may be able to synchronize with the new master with just a partial transfer.")
}

// dialMaster connects the link to the master at addr: a TCP connection
// from dialer, and with tls-replication yes (read at each connection, as
// Redis's connectWithMaster chooses connCreateTLS) a TLS client
// connection over it, handshaken within the dialer's timeout or until
// the link is stopped. A failed handshake is returned as the error,
// which the link logs and retries as any failure to connect.
func (l *link) dialMaster(dialer *net.Dialer, addr string) (net.Conn, error) {
	raw, err := dialer.Dial("tcp", addr)
	if err != nil || !l.r.cfg.Bool("tls-replication") {
		return raw, err
	}
	conf := l.r.host.TLSClientConfig()
	if conf == nil {
		raw.Close()
		return nil, errors.New("TLS is not configured")
	}
	ctx, cancel := context.WithTimeout(context.Background(), dialer.Timeout)
	defer cancel()
	go func() {
		select {
		case <-l.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	tc := tls.Client(raw, conf)
	if err := tc.HandshakeContext(ctx); err != nil {
		raw.Close()
		return nil, err
	}
	return tc, nil
}

// listeningPort is the port a replica announces to its master (REPLCONF
// listening-port): replica-announce-port, else the TLS port when the
// link is TLS and there is one, else the port (Redis's syncWithMaster).
func (r *Link) listeningPort() int {
	if p := r.cfg.Int("replica-announce-port"); p != 0 {
		return int(p)
	}
	if p := r.cfg.Int("tls-port"); p != 0 && r.cfg.Bool("tls-replication") {
		return int(p)
	}
	return int(r.cfg.Int("port"))
}

// replInput is the reader under the link to the master: it counts what
// it reads as replication input (INFO stats' total_net_repl_input_bytes)
// once started, from the end of the master's reply to PSYNC on; the
// handshake is counted nowhere, as in Redis.
type replInput struct {
	r       io.Reader
	stats   *engine.ServerStats
	counted bool
}

func (in *replInput) Read(p []byte) (int, error) {
	n, err := in.r.Read(p)
	if in.counted && n > 0 {
		in.stats.ReplNetIn.Add(int64(n))
	}
	return n, err
}

// start counts from now on; buffered is what the reader above already
// read past the point where counting starts.
func (in *replInput) start(buffered int) {
	if !in.counted {
		in.counted = true
		in.stats.ReplNetIn.Add(int64(buffered))
	}
}

func boolInt(v bool) int64 {
	if v {
		return 1
	}
	return 0
}
