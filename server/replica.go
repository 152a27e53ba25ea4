package server

import (
	"bufio"
	"bytes"
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
	"github.com/zredis/zredis/resp"
)

// The replica side of replication (replication.c: replicationSetMaster,
// connectWithMaster, syncWithMaster, readSyncBulkPayload,
// replicationSendAck). One goroutine, owned by the server through
// replicaLink.stop/done, keeps the link to the master: it connects, runs
// the handshake in Redis's order, full-syncs or continues, and applies
// the master's command stream, counting its bytes as the replication
// offset. The keyspace's replica rule (SetReplica) keeps keys past their
// deadline until the master's DEL: a replica sends no expiry message.

// replicaLink is the link to the master.
type replicaLink struct {
	s    *Server
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
func (l *replicaLink) owned() bool { return !l.stopped.Load() && l.s.replica == l }

// masterLinkUp reports whether the link is up (master_link_status:up).
// Under the lock.
func (l *replicaLink) up() bool { return l.state == "connected" }

// startReplication makes the server a replica of host:port: writes are
// refused to normal clients, keys stop expiring here, and the link
// goroutine starts. Under the keyspace lock; a previous link must have
// been stopped.
func (s *Server) startReplication(host string, port int) {
	l := &replicaLink{s: s, host: host, port: port, stop: make(chan struct{}), done: make(chan struct{}),
		state: "connect"}
	s.replica = l
	s.log.SetRole('S')
	s.ks.SetReplica(true)
	s.updateReplicaRules()
	s.disconnectBlockedClients()
	// A replica's stream is its master's, proxied by the link: its own
	// commands (a writable replica's) are not propagated. Its replicas
	// stay: they may continue once this server continues its master's
	// stream, or are dropped when it cannot (a new ID, a full sync).
	s.repl.Detach()
	s.links.Add(1)
	go func() {
		defer s.links.Done()
		l.run()
	}()
}

// ReplicaOf is REPLICAOF host port, or REPLICAOF NO ONE with host "".
// It never waits: a dropped link's goroutine ends on its own, changing
// nothing once dropped (owned), and shutdown waits for it. So REPLICAOF
// also runs inside MULTI. Under the lock.
func (s *Server) ReplicaOf(host string, port int, who string) (reply string) {
	if host == "" {
		if s.replica == nil {
			return "OK"
		}
		s.unsetMaster()
		s.log.Noticef("MASTER MODE enabled (user request from '%s')", who)
		return "OK"
	}
	if l := s.replica; l != nil && strings.EqualFold(l.host, host) && l.port == port {
		s.log.Noticef("REPLICAOF would result into synchronization with the master we are already connected with. No operation performed.")
		return "OK Already connected to specified master"
	}
	s.setMaster(host, port)
	s.log.Noticef("REPLICAOF %s:%d enabled (user request from '%s')", host, port, who)
	return "OK"
}

// unsetMaster makes a replica a master (replicationUnsetMaster). Under
// the lock.
func (s *Server) unsetMaster() {
	s.log.SetRole('M')
	s.stopReplication()
	if s.cachedMaster {
		s.log.Noticef("Discarding previously cached master state.")
	}
	// A master now, whose history continues the one it followed.
	s.repl.Promote()
	s.cachedMaster = true
	s.replDownSince = 0 // ready for a next time as a replica
	s.ks.SetReplica(false)
	s.updateReplicaRules()
	s.cfg.SetReplicaOf("", 0)
}

// setMaster makes the server a replica of host:port, or of another
// master (replicationSetMaster). Under the lock.
func (s *Server) setMaster(host string, port int) {
	if s.replica == nil {
		// A master's data set is its own history, which a master that
		// was its replica can continue (replicationCacheMasterUsingMyself);
		// that master's stream starts with a SELECT.
		s.log.SetRole('S')
		s.cachedMaster, s.cachedMasterDB = true, 0
		s.log.Noticef("Before turning into a replica, using my own master parameters to synthesize a cached master: I may be able to synchronize with the new master with just a partial transfer.")
	}
	s.stopReplication()
	s.cfg.SetReplicaOf(host, port)
	if !s.closing {
		s.startReplication(host, port)
	}
}

// watchReplicaConfig follows the directives a replica's refusals depend
// on.
func (s *Server) watchReplicaConfig() {
	for _, name := range []string{"replica-read-only", "replica-serve-stale-data"} {
		s.cfg.OnChange(name, func(string) error { s.updateReplicaRules(); return nil })
	}
}

// updateReplicaRules tells the dispatcher what a replica refuses to
// normal clients: writes while replica-read-only is yes (-READONLY), and
// commands not flagged stale while the link is down and
// replica-serve-stale-data is no (-MASTERDOWN). Under the lock.
func (s *Server) updateReplicaRules() {
	l := s.replica
	s.disp.ReadOnlyReplica.Store(l != nil && s.cfg.Bool("replica-read-only"))
	s.disp.StaleRefused.Store(l != nil && !l.up() && !s.cfg.Bool("replica-serve-stale-data"))
}

// stopReplication drops the link: from now on its goroutine changes
// nothing and ends (shutdown waits for it, s.links); where the stream
// stopped is kept for a partial resync with the next master. Under the
// lock.
func (s *Server) stopReplication() {
	l := s.replica
	if l == nil {
		return
	}
	s.replica = nil
	l.stopped.Store(true)
	if l.master != nil {
		s.cacheMaster(l)
		s.replDownSince = time.Now().Unix()
	}
	l.master = nil
	l.pendingMulti = nil
	if l.state == "sync" {
		s.disp.Loading.Store(false)
	}
	s.updateReplicaRules()
	close(l.stop)
	l.wmu.Lock()
	if l.conn != nil {
		l.conn.Close()
	}
	l.wmu.Unlock()
}

// run keeps the link up until stopped: a failed or broken session is
// retried after a second, as Redis's replicationCron reconnects.
func (l *replicaLink) run() {
	defer close(l.done)
	log := l.s.log
	for {
		log.Noticef("Connecting to MASTER %s:%d", l.host, l.port)
		err := l.session()
		l.s.ks.Exec(func() {
			if !l.owned() {
				return
			}
			if l.state == "connected" {
				// A failed sync leaves it as it was, as Redis's.
				l.s.replDownSince = time.Now().Unix()
			}
			if l.state == "sync" {
				l.s.disp.Loading.Store(false)
			}
			if l.master != nil {
				l.s.cacheMaster(l)
			}
			l.state = "connect"
			l.master = nil
			l.pendingMulti = nil
			l.s.updateReplicaRules()
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
func (l *replicaLink) session() error {
	cfg := l.s.cfg
	timeout := time.Duration(cfg.Int("repl-timeout")) * time.Second
	l.s.ks.Exec(func() {
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
	l.s.log.Noticef("MASTER <-> REPLICA sync started")
	l.s.ks.Exec(func() {
		if l.owned() {
			l.state = "handshake" // as ROLE shows it
		}
	})
	in := &replInput{r: conn, s: l.s} // replication input once PSYNC is answered
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
	l.s.log.Noticef("Master replied to PING, replication can continue...")
	if pass := cfg.String("masterauth"); pass != "" {
		args := []string{"AUTH", pass}
		if user := cfg.String("masteruser"); user != "" {
			args = []string{"AUTH", user, pass}
		}
		if reply, err = ask(args...); err != nil || strings.HasPrefix(reply, "-") {
			return linkError("Unable to AUTH to MASTER: " + reply)
		}
	}
	port := l.s.replicaListeningPort()
	if reply, err = ask("REPLCONF", "listening-port", strconv.Itoa(port)); err != nil {
		return linkError(fmt.Sprintf("Error condition on socket for SYNC: %v", err))
	} else if strings.HasPrefix(reply, "-") {
		l.s.log.Noticef("(Non critical) Master does not understand REPLCONF listening-port: %s", reply)
	}
	if ip := cfg.String("replica-announce-ip"); ip != "" {
		if reply, err = ask("REPLCONF", "ip-address", ip); err == nil && strings.HasPrefix(reply, "-") {
			l.s.log.Noticef("(Non critical) Master does not understand REPLCONF ip-address: %s", reply)
		}
	}
	if reply, err = ask("REPLCONF", "capa", "eof", "capa", "psync2"); err != nil {
		return linkError(fmt.Sprintf("Error condition on socket for SYNC: %v", err))
	} else if strings.HasPrefix(reply, "-") {
		l.s.log.Noticef("(Non critical) Master does not understand REPLCONF capa: %s", reply)
	}

	var replid string
	var offset int64
	failover := false
	l.s.ks.Exec(func() {
		if l.s.cachedMaster {
			replid, offset = l.s.repl.Stream().ID, l.s.repl.Stream().Offset()
		}
		failover = l.owned() && l.s.repl.FailoverInProgress()
	})
	psync := []string{"PSYNC", "?", "-1"}
	if replid != "" {
		psync = []string{"PSYNC", replid, strconv.FormatInt(offset+1, 10)}
		l.s.log.Noticef("Trying a partial resynchronization (request %s:%d).", replid, offset+1)
	} else {
		l.s.log.Noticef("Partial resynchronization not possible (no cached master)")
	}
	if failover {
		// This master hands its role to the replica it connects to.
		psync = append(psync, "FAILOVER")
	}
	conn.SetDeadline(time.Now().Add(timeout))
	if _, err := conn.Write(encodeCommand(psync...)); err != nil {
		if failover {
			l.s.log.Warningf("Unable to send PSYNC to master: %v", err)
			l.s.ks.Exec(func() {
				if l.owned() {
					l.s.repl.EndFailover("Write error to failover target")
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
		l.s.log.Noticef("Full resync from master: %s:%d", f[1], off)
		l.s.ks.Exec(func() {
			if l.owned() && l.s.cachedMaster {
				// The data set is no longer a history a master knows.
				l.s.cachedMaster = false
				l.s.log.Noticef("Discarding previously cached master state.")
			}
		})
		if err := l.fullSync(conn, br, f[1], off, timeout); err != nil {
			return err
		}
	case strings.HasPrefix(reply, "+CONTINUE"):
		f := strings.Fields(reply)
		owned := true
		l.s.ks.Exec(func() {
			if owned = l.owned(); !owned {
				return
			}
			l.s.log.Noticef("Successful partial resynchronization with master.")
			st := l.s.repl.Stream()
			if len(f) == 2 && len(f[1]) == 40 && f[1] != st.ID {
				// The master continues the stream under a new ID (it was
				// promoted): this server's replicas continue through ID2,
				// once told by a reconnection.
				l.s.log.Warningf("Master replication ID changed to %s", f[1])
				st.Rename(f[1])
				l.s.repl.DisconnectReplicas()
			}
			// Restarted, a replica has the history but no backlog yet.
			st.EnsureBacklog(int(l.s.cfg.Int("repl-backlog-size")))
			l.state = "connected"
			l.s.replDownSince = 0
			l.lastIOms = time.Now().UnixMilli()
			l.master = l.newMasterClient()
			l.master.DB = l.s.cachedMasterDB
			l.s.updateReplicaRules()
		})
		if !owned {
			return nil
		}
		l.s.log.Noticef("MASTER <-> REPLICA sync: Master accepted a Partial Resynchronization.")
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
func (l *replicaLink) failoverAnswered(reply string, err error) bool {
	ok := err == nil && (strings.HasPrefix(reply, "+CONTINUE") || strings.HasPrefix(reply, "+FULLRESYNC"))
	switch {
	case ok:
	case err != nil:
		l.s.log.Warningf("Master did not reply to PSYNC, will try later")
	case strings.HasPrefix(reply, "-NOMASTERLINK") || strings.HasPrefix(reply, "-LOADING"):
		l.s.log.Noticef("Master is currently unable to PSYNC but should be in the future: %s", reply)
	case strings.HasPrefix(reply, "-ERR"):
		l.s.log.Noticef("Master does not support PSYNC or is in error state (reply: %s)", reply)
	default:
		l.s.log.Warningf("Unexpected reply to PSYNC from master: %s", reply)
	}
	owned := true
	l.s.ks.Exec(func() {
		if owned = l.owned(); owned {
			l.s.repl.FailoverAnswered(ok)
		}
	})
	return ok && owned
}

// fullSync reads the RDB payload ("$<len>" or "$EOF:<mark>", after any
// newlines the master sends while it prepares), writes it to a temporary
// file in dir, and loads it in place of the data set: the old data goes
// without expiry messages, clients get -LOADING meanwhile.
func (l *replicaLink) fullSync(conn net.Conn, br *bufio.Reader, replid string, offset int64, timeout time.Duration) error {
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
		l.s.log.Noticef("MASTER <-> REPLICA sync: receiving streamed RDB from master with EOF to disk")
	} else {
		n, err := strconv.ParseInt(header[1:], 10, 64)
		if err != nil || n < 0 {
			return linkError("Bad protocol from MASTER: bulk length '" + header + "'")
		}
		size = n
		l.s.log.Noticef("MASTER <-> REPLICA sync: receiving %d bytes from master to disk", size)
	}
	owned := true
	l.s.ks.Exec(func() {
		if owned = l.owned(); owned {
			l.state = "sync"
			l.syncSize, l.syncRead, l.syncLastMs = size, 0, time.Now().UnixMilli()
			l.lastIOms = l.syncLastMs
		}
	})
	if !owned {
		return nil
	}
	tmp := filepath.Join(l.s.cfg.String("dir"), fmt.Sprintf("temp-%d.%d.rdb", time.Now().Unix(), os.Getpid()))
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
	if err := os.Rename(tmp, l.s.rdbPath()); err != nil {
		return linkError(fmt.Sprintf("Failed trying to rename the temp DB into %s in MASTER <-> REPLICA synchronization: %v", filepath.Base(l.s.rdbPath()), err))
	}
	l.s.ks.Exec(func() {
		if owned = l.owned(); owned {
			// A new history (replicationAttachToNewMaster): this server's
			// replicas sync again, and cannot continue the old one.
			l.s.cachedMaster = false
			l.s.repl.DisconnectReplicas()
			l.s.repl.Stream().DropBacklog()
			l.s.log.Noticef("MASTER <-> REPLICA sync: Flushing old data")
			l.s.disp.Loading.Store(true)
			l.s.ks.FlushAll()
			l.s.disp.Functions.Flush()
		}
	})
	if !owned {
		return nil
	}
	l.s.log.Noticef("MASTER <-> REPLICA sync: Loading DB in memory")
	info, err := l.s.loadRDBAbortable(f, l.stopped.Load)
	var expired int64
	l.s.ks.Exec(func() {
		expired = l.s.rdb.loadedExpired
		if owned = l.owned(); owned || l.s.replica == nil {
			l.s.disp.Loading.Store(false)
		}
		if err != nil || !owned {
			// What was loaded is part of a data set: gone.
			l.s.ks.FlushAll()
			l.s.disp.Functions.Flush()
		}
	})
	if !owned {
		l.s.log.Noticef("MASTER <-> REPLICA sync: the link was dropped while loading; the partial data set was discarded")
		return nil
	}
	if err != nil {
		return linkError(fmt.Sprintf("Failed trying to load the MASTER synchronization DB from disk, check server logs: %v", err))
	}
	l.s.log.Noticef("Done loading RDB, keys loaded: %d, keys expired: %d.", info.Keys, expired)
	if mark != nil {
		// The master learns at once that this replica is online.
		l.sendAck(offset)
	}
	l.s.ks.Exec(func() {
		if !l.owned() {
			return
		}
		// The master's history, from its offset on.
		l.s.repl.Stream().Follow(replid, offset, int(l.s.cfg.Int("repl-backlog-size")))
		l.s.cachedMaster = true
		l.state = "connected"
		l.s.replDownSince = 0
		l.lastIOms = time.Now().UnixMilli()
		l.master = l.newMasterClient()
		l.master.DB = streamDB(info.Aux, l.s.ks.NumDBs())
		l.s.updateReplicaRules()
		if l.s.cfg.Bool("appendonly") {
			// The AOF does not hold the new data set: rewrite it
			// (restartAOFAfterSYNC), or schedule it after one running.
			if l.s.aof.rewriting {
				l.s.aof.scheduled = true
			} else {
				l.s.startAOFRewrite()
			}
		}
	})
	l.s.log.Noticef("MASTER <-> REPLICA sync: Finished with success")
	return nil
}

// readPayload copies the RDB payload to f: size bytes, or up to the EOF
// mark, which is cut off.
func (l *replicaLink) readPayload(conn net.Conn, br *bufio.Reader, f *os.File, size int64, mark []byte, timeout time.Duration) error {
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
			l.s.ks.Exec(func() {
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
func (l *replicaLink) newMasterClient() *engine.Client {
	s := l.s
	s.nextID++
	now := time.Now().UnixMilli()
	cl := &engine.Client{ID: s.nextID, Addr: net.JoinHostPort(l.host, strconv.Itoa(l.port)), Created: now,
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
func (l *replicaLink) stream(conn net.Conn, br *bufio.Reader, timeout time.Duration) error {
	// The master's stream is not a client's query: no buffer limit.
	rd := resp.NewReader(br, resp.Limits{MaxBulkLen: l.s.cfg.Int("proto-max-bulk-len"), MaxQueryBuf: 1 << 62})
	rd.SetAuthenticated(true)
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
func (l *replicaLink) apply(batch [][][]byte) {
	var acks []int64
	var offloads []func()
	l.s.ks.Exec(func() {
		cl := l.master
		if cl == nil || !l.owned() {
			return
		}
		m := l.s.repl
		l.lastIOms = time.Now().UnixMilli()
		cl.LastInteraction.Store(l.lastIOms)
		l.s.disp.BeginBatch(cl)
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
			if offload := l.s.disp.Exec(cl, args); offload != nil {
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

// cacheMaster keeps what a partial resync with the next master needs
// when the link to a master it was streaming from goes
// (replicationCacheMaster): the stream's history is the server's, the
// database the stream was in is the master client's. Under the lock.
func (s *Server) cacheMaster(l *replicaLink) {
	s.log.Noticef("Connection with master lost.")
	s.log.Noticef("Caching the disconnected master state.")
	s.cachedMasterDB = l.master.DB
}

// replyError handles an error the master's stream got here, as Redis's
// afterErrorReply: logged as CRITICAL with the latest bytes of the
// backlog, counted, and, on a read-only replica with
// propagation-error-behavior panic or panic-on-replicas, the end of the
// process: its data set is no longer its master's. Under the lock.
func (l *replicaLink) replyError(cl *engine.Client, args [][]byte, reply []byte) {
	s := l.s
	name := s.unexpectedError(cl, args, reply, "replica", "master")
	if bl := s.repl.Stream().Backlog(); bl != nil && bl.HistLen() > 0 {
		from := max(bl.First(), bl.End()-255)
		s.log.Warningf("Latest backlog is: '%s'", config.Repr(string(bl.AppendFrom(nil, from))))
	}
	if s.cfg.Bool("replica-read-only") && s.cfg.Int("propagation-error-behavior") != 0 {
		s.serverPanic(fmt.Sprintf("This replica panicked sending an error to its master after processing the command '%s'", name))
	}
}

// ackLoop sends REPLCONF ACK every second (replicationCron) until done.
func (l *replicaLink) ackLoop(done chan struct{}) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
			var off int64
			l.s.ks.Exec(func() { off = l.s.repl.Stream().Offset() })
			l.sendAck(off)
		}
	}
}

// sendAck tells the master how far the stream was applied.
func (l *replicaLink) sendAck(offset int64) {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	if l.conn == nil {
		return
	}
	l.conn.SetWriteDeadline(time.Now().Add(time.Second))
	n, _ := l.conn.Write(encodeCommand("REPLCONF", "ACK", strconv.FormatInt(offset, 10)))
	l.s.stats.NetOut.Add(int64(n)) // the master's client is not a replica: ordinary output
}

// encodeCommand writes args as a RESP multibulk.
func encodeCommand(args ...string) []byte {
	argv := make([][]byte, len(args))
	for i, a := range args {
		argv[i] = []byte(a)
	}
	return resp.AppendCommand(nil, argv...)
}

// infoReplicaLink writes INFO replication's fields of a replica, as 7.0
// lists them. Under the lock.
func (s *Server) infoReplicaLink(b []byte, l *replicaLink) []byte {
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
	if l.master != nil || s.cachedMaster {
		off = s.repl.Stream().Offset()
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
		if s.replDownSince != 0 {
			down = time.Now().Unix() - s.replDownSince
		}
		b = engine.InfoInt(b, "master_link_down_since_seconds", down)
	}
	b = engine.InfoInt(b, "slave_priority", s.cfg.Int("replica-priority"))
	b = engine.InfoInt(b, "slave_read_only", boolInt(s.cfg.Bool("replica-read-only")))
	b = engine.InfoInt(b, "replica_announced", boolInt(s.cfg.Bool("replica-announced")))
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
