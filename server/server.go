// Package server accepts client connections, reads their requests, runs
// them through the command table and writes the replies. It wires the
// keyspace, the expiry feature and the configuration together.
package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/zredis/zredis/cluster"
	"github.com/zredis/zredis/commands"
	"github.com/zredis/zredis/config"
	"github.com/zredis/zredis/engine"
	"github.com/zredis/zredis/expiry"
	"github.com/zredis/zredis/keyspace"
	"github.com/zredis/zredis/netloop"
	"github.com/zredis/zredis/persistence"
	"github.com/zredis/zredis/replication"
	"github.com/zredis/zredis/resp"
	"github.com/zredis/zredis/sds"
)

// Version is zredis's own version.
const Version = "0.1.0"

// RedisVersion is the Redis version whose behaviour zredis reproduces;
// INFO reports it as redis_version because clients decide which
// commands they may send from it.
const RedisVersion = commands.RedisVersion

// Server is one zredis instance.
type Server struct {
	cfg   *config.Config
	runID string // run_id: this server's, made once in New
	log   *Logger
	ks    *keyspace.Keyspace
	disp  *engine.Dispatcher
	rel   *releaser // hands the memory of deleted large values back
	stats engine.ServerStats
	start time.Time

	// Guarded by the keyspace lock.
	clients  map[int64]*conn
	ring     clientRing // the clients in the cron's order (clientscron.go)
	nextID   int64
	closing  bool
	monitors []*conn
	pause    pauseState

	// listening holds the TCP listeners and their accept loops
	// (listen.go).
	listening listening
	loops     []*netloop.Loop
	// blockedLoop is the loop whose goroutine runs a script past
	// busy-reply-threshold and serves the loop's other clients meanwhile
	// (conn.serveWhileBlocked); nil otherwise. That goroutine holds the
	// keyspace lock: a connection of this loop runs its commands without
	// taking it.
	blockedLoop atomic.Pointer[netloop.Loop]
	nextLoop    int                  // accept: round-robin over loops
	conns       sync.WaitGroup       // registered connections, until their Closed
	workers     sync.WaitGroup       // connections' goroutines for suspended batches
	shutdown    chan shutdownRequest // SHUTDOWN and signals, to Run (shutdown.go)
	exiting     chan struct{}        // closed once Run stops taking shutdown requests
	signalled   atomic.Bool          // a signal's shutdown is pending or running (Signal)
	shut        shutdownState        // the SHUTDOWN clients blocked on its outcome (shutdown.go); lock

	pubsub    *engine.Subscriptions        // lock
	outLimits atomic.Pointer[outputLimits] // client-output-buffer-limit
	// peaks are the largest query and output buffers of the last
	// seconds, for INFO's client_recent_max_*; lock.
	peaks clientPeaks

	limits      atomic.Pointer[resp.Limits]
	idleTimeout atomic.Int64 // the timeout directive, seconds; 0 = never
	// cronPaused is DEBUG PAUSE-CRON: the cron skips its work.
	cronPaused atomic.Bool

	// held are, per event loop, the connections whose replies wait for
	// the AOF (held.go). Set in Run.
	held     map[*netloop.Loop]*heldReplies
	heldList []*heldReplies // the same, for the AOF flusher's progress hook
	// rounds are, per event loop, the connections whose replies wait for
	// the end of the round of events (round.go). Set in Run.
	rounds map[*netloop.Loop]*roundReplies
	// cluster is the cluster node in cluster mode, else nil.
	cluster *cluster.State
	// loopBufs is each loop's read buffer, which its connections share
	// (resp.LoopBuffers).
	loopBufs map[*netloop.Loop]*resp.LoopBuffers

	// persist is the persistence orchestration (package persistence):
	// RDB saves, the AOF, loading, INFO persistence; it reaches the
	// server through persistHost (persisthost.go).
	persist *persistence.Service
	// repl is replication's master side (package replication), which
	// reaches the server through replHost (replhost.go); lock.
	repl *replication.Master
	// link is replication's replica side: REPLICAOF, the link to this
	// server's master, the cached master.
	link *replication.Link

	// TLS clients (tls.go): the configuration new handshakes use, the
	// goroutines of the TLS connections, and what ends their handshakes
	// at shutdown.
	tlsConf    atomic.Pointer[tls.Config]
	tlsConns   sync.WaitGroup
	tlsStop    context.Context
	tlsStopNow context.CancelFunc

	// tlsClientConf is the TLS configuration of the link to a master
	// (tls-replication yes); nil until TLS is configured.
	tlsClientConf atomic.Pointer[tls.Config]

	// expiry is the expiry feature (package expiry): the timer that
	// expires keys at their deadlines, the stream that publishes them to
	// 0MQ listeners (opened in Run), the hash expire cycles, INFO expiry.
	expiry *expiry.Service

	// Supervisor is the process manager told of the shutdown and the
	// final save (systemd's sd_notify), set before Run; nil when the
	// server is not supervised.
	Supervisor Supervisor

	// Bound is closed once the listeners are bound (before the dataset
	// loads); Ready once the server accepts commands.
	Bound chan struct{}
	// Ready is closed once the dataset is loaded and commands are served.
	Ready chan struct{}
}

// Supervisor is what supervised (systemd, upstart) resolved to.
type Supervisor interface {
	// Supervised names it for INFO's process_supervised.
	Supervised() string
	// Notify sends sd_notify state lines ("STOPPING=1\n"); it must not
	// block for long, and may be called with the keyspace locked.
	Notify(state string)
}

// notify sends state to the supervisor, if any, as Redis's
// redisCommunicateSystemd.
func (s *Server) notify(state string) {
	if s.Supervisor != nil {
		s.Supervisor.Notify(state)
	}
}

// New builds a server from a loaded configuration. clock is the time
// source of the keyspace (nil: the system clock).
func New(cfg *config.Config, log *Logger, clock keyspace.Clock) *Server {
	if clock == nil {
		clock = keyspace.SystemClock{}
	}
	s := &Server{
		runID:    newRunID(),
		cfg:      cfg,
		log:      log,
		ks:       keyspace.New(int(cfg.Int("databases")), clock),
		clients:  map[int64]*conn{},
		shutdown: make(chan shutdownRequest),
		exiting:  make(chan struct{}),
		start:    time.Now(),
		Ready:    make(chan struct{}),
		Bound:    make(chan struct{}),
	}
	s.pause.wake = make(chan struct{})
	s.tlsStop, s.tlsStopNow = context.WithCancel(context.Background())
	s.stats.StartMs = s.start.UnixMilli()
	s.disp = engine.NewDispatcher(s.ks, s, renamedTable(cfg))
	// Function libraries are saved with the dataset: every snapshot
	// keeps their codes as of its instant.
	s.disp.Functions = commands.NewFunctions(s)
	s.ks.SetSnapshotExtra(func() any { return s.disp.Functions.Codes() })
	s.repl = replication.NewMaster(replHost{s}, s.ks, cfg, log, &s.stats)
	s.disp.StreamOffset = s.repl.Stream().Offset
	s.disp.MigrateTLS = func() (*tls.Config, bool) {
		if !s.cfg.Bool("tls-cluster") {
			return nil, false
		}
		return s.tlsClientConf.Load(), true
	}
	s.disp.AfterCall = append(s.disp.AfterCall, s.stats.AfterCall, s.feedMonitors)
	s.disp.EvictionsPaused = func() bool {
		// A replica leaves its keys to its master's DELs
		// (replica-ignore-maxmemory yes, the default), or it would drift.
		return s.pause.shutdown || !s.pause.none() && s.pause.active(s.ks.Clock().NowMs()) ||
			s.link.IsReplica() && s.cfg.Bool("replica-ignore-maxmemory")
	}
	s.disp.OnPanic = func(cmd string, r any, stack []byte) {
		s.log.Warningf("Panic running the '%s' command (recovered: the client gets an error and serving goes on; what it changed before the panic stays in memory and is not propagated to the AOF): %v\n%s", cmd, r, stack)
	}
	s.disp.Abort = s.serverPanic
	s.expiry = expiry.New(s.ks, cfg, log, s.disp)
	s.pubsub = engine.NewPubSub(cfg, &s.stats, s.deliverPubSub)
	s.disp.Tracking = engine.NewTracking(cfg, s.clientByID, s.deliverPubSub, func() { s.ks.SetTracker(s.disp.Tracking) })
	s.watchOutputLimits()
	s.rel = newReleaser(func() (used int64) {
		s.ks.Exec(func() { used = s.ks.UsedMemory() })
		return used
	})
	s.ks.SetFreedHook(s.rel.freed)
	s.ks.SetMissHook(func(db int, key []byte) {
		s.pubsub.Notify(db, config.NotifyKeyMiss, "keymiss", key)
	})
	// The expiry funnel's sinks, wired here only and always in this
	// order (the keyspace counts expired_keys itself): the keyspace
	// event, then the expiry stream (a no-op without endpoints; opened
	// in Run), then the DEL to the AOF (a no-op while nothing is
	// propagated). The message goes first: the expiry journal must hold
	// it before the AOF's flusher can take the DEL (aof.Companion).
	s.ks.AddExpiredSink(func(e keyspace.Expired) {
		if s.pubsub.Notifies(config.NotifyExpired) {
			s.pubsub.Notify(e.DB, config.NotifyExpired, "expired", []byte(e.Key))
		}
	})
	s.ks.AddExpiredSink(s.expiry.Expired)
	s.ks.AddExpiredSink(s.disp.PropagateExpired)
	// Hash fields expired on their own, in the same order: the events
	// (hexpired, and del when the hash went with them), the hash-fields
	// message, the HDELs.
	s.ks.AddExpiredFieldsSink(func(e keyspace.ExpiredFields) {
		if s.pubsub.Notifies(config.NotifyHash) {
			s.pubsub.Notify(e.DB, config.NotifyHash, "hexpired", []byte(e.Key))
		}
		if e.HashGone && s.pubsub.Notifies(config.NotifyGeneric) {
			s.pubsub.Notify(e.DB, config.NotifyGeneric, "del", []byte(e.Key))
		}
	})
	s.ks.AddExpiredFieldsSink(s.expiry.ExpiredFields)
	s.ks.AddExpiredFieldsSink(s.disp.PropagateExpiredFields)
	// An evicted key goes to the expiry stream before the dispatcher
	// propagates its DEL, as an expired one.
	s.disp.OnEvicted = s.expiry.Evicted
	// A replica (replicaof) never expires keys itself, so it sends no
	// expiry messages: the rule is the keyspace's (DB.live).
	_, _, replica := cfg.ReplicaOf()
	s.ks.SetReplica(replica)
	// A master's data set is its own history; a replica's is not one a
	// master knows until it synchronised.
	s.link = replication.NewLink(linkHost{s}, s.repl, s.ks, s.disp, cfg, log, &s.stats, replica)
	s.watchConfig()
	s.link.WatchConfig()
	s.persist = persistence.New(persistHost{s}, s.ks, s.disp, cfg, log, &s.stats, s.start)
	commands.TrackLFU(cfg, s.ks)
	commands.TrackLazyFree(cfg, s.ks)
	s.disp.WatchMaxmemory(cfg, s.setMemoryLimit)
	return s
}

// watchConfig applies the directives that change the running server,
// now and on every CONFIG SET (hooks run under the keyspace lock, inside
// the CONFIG SET command).
func (s *Server) watchConfig() {
	cfg := s.cfg
	s.updateLimits()
	cfg.OnChange("proto-max-bulk-len", func(string) error { s.updateLimits(); return nil })
	cfg.OnChange("client-query-buffer-limit", func(string) error { s.updateLimits(); return nil })
	cfg.OnChange("loglevel", func(v string) error { s.log.SetLevel(ParseLevel(v)); return nil })
	// bind and port take effect at once: new listeners, or the old ones
	// kept and an error when the new addresses cannot be bound.
	cfg.OnChange("bind", func(string) error { return s.rebind("bind") })
	cfg.OnChange("port", func(string) error { return s.rebind("port") })
	cfg.OnChange("tls-port", func(string) error { return s.rebind("tls-port") })
	// New TLS handshakes use the new files and settings: the clients'
	// the next link to a master's and the cluster bus's (tls-replication
	// and tls-cluster are read when a link connects).
	for _, name := range []string{"tls-cert-file", "tls-key-file", "tls-key-file-pass", "tls-ca-cert-file",
		"tls-ca-cert-dir", "tls-protocols", "tls-auth-clients", "tls-session-caching", "tls-replication", "tls-cluster",
		"tls-client-cert-file", "tls-client-key-file", "tls-client-key-file-pass"} {
		cfg.OnChange(name, func(string) error { return s.reconfigureTLS() })
	}
	// Before the dispatcher's hook evicts down to a lowered maxmemory
	// (updateMaxmemory's order).
	cfg.OnChange("maxmemory", func(string) error {
		if maxmem := cfg.Int("maxmemory"); maxmem > 0 {
			if used := s.ks.UsedMemory(); used > maxmem {
				s.log.Warningf("WARNING: the new maxmemory value set via CONFIG SET (%d) is smaller than the current memory usage (%d). This will result in key eviction and/or the inability to accept new write commands depending on the maxmemory-policy.", maxmem, used)
			}
		}
		return nil
	})

	s.stats.SlowLog.SlowerThan = cfg.Int("slowlog-log-slower-than")
	s.stats.SlowLog.MaxLen = int(cfg.Int("slowlog-max-len"))
	cfg.OnChange("slowlog-log-slower-than", func(string) error {
		s.stats.SlowLog.SlowerThan = cfg.Int("slowlog-log-slower-than")
		return nil
	})
	cfg.OnChange("slowlog-max-len", func(string) error {
		s.stats.SlowLog.MaxLen = int(cfg.Int("slowlog-max-len"))
		return nil
	})
	s.updateLatencyThreshold()
	cfg.OnChange("latency-monitor-threshold", func(string) error {
		s.updateLatencyThreshold()
		return nil
	})
	s.stats.LatencyTracking = cfg.Bool("latency-tracking")
	cfg.OnChange("latency-tracking", func(string) error {
		s.stats.LatencyTracking = cfg.Bool("latency-tracking")
		return nil
	})
	s.updateMinReplicas()
	cfg.OnChange("min-replicas-to-write", func(string) error { s.updateMinReplicas(); return nil })
	cfg.OnChange("min-replicas-max-lag", func(string) error { s.updateMinReplicas(); return nil })
	cfg.OnChange("repl-backlog-size", func(string) error { s.repl.ResizeBacklog(); return nil })
	s.idleTimeout.Store(cfg.Int("timeout"))
	cfg.OnChange("timeout", func(string) error {
		s.idleTimeout.Store(cfg.Int("timeout"))
		return nil
	})
	s.watchACL(cfg)
}

// updateLatencyThreshold applies latency-monitor-threshold to the
// commands' latency records and to expiry's ("expire-cycle",
// "expire-del"; keyspace.SetLatencyMonitor). Under the lock (or before
// serving).
func (s *Server) updateLatencyThreshold() {
	ms := s.cfg.Int("latency-monitor-threshold")
	s.stats.Latency.Threshold = ms
	s.ks.SetLatencyMonitor(ms, func(event string, took int64) {
		s.stats.Latency.Add(event, took, time.Now().Unix())
	})
}

// updateMinReplicas gives the dispatcher min-replicas-to-write, or 0 when
// min-replicas-max-lag is 0 (Redis then never refuses).
func (s *Server) updateMinReplicas() {
	n := s.cfg.Int("min-replicas-to-write")
	if s.cfg.Int("min-replicas-max-lag") == 0 {
		n = 0
	}
	s.disp.MinReplicas.Store(n)
	s.repl.RefreshGood()
}

func (s *Server) updateLimits() {
	s.limits.Store(&resp.Limits{
		MaxBulkLen:  s.cfg.Int("proto-max-bulk-len"),
		MaxQueryBuf: s.cfg.Int("client-query-buffer-limit"),
	})
}

// Keyspace is the server's keyspace (tests and tools).
func (s *Server) Keyspace() *keyspace.Keyspace { return s.ks }

// Run binds the configured addresses and serves until ctx is cancelled,
// Signal is called or a client sends SHUTDOWN. It returns nil after a
// clean stop: every connection has finished the batch it was running and
// written its replies.
func (s *Server) Run(ctx context.Context) error {
	if err := s.loadUsers(); err != nil {
		return err
	}
	if err := s.listen(); err != nil {
		return err
	}
	close(s.Bound)
	if err := s.startCluster(); err != nil {
		s.listening.closeAll()
		return err
	}
	if err := s.expiry.Open(); err != nil {
		s.listening.closeAll()
		s.stopCluster()
		return err
	}
	if j := s.expiry.Journal(); j != nil {
		s.persist.SetAOFCompanion(j)
	}
	s.expiry.SetHooks(expiry.Hooks{
		AfterPass:  s.persist.KickAOF,
		KeyReady:   s.disp.MarkKeyReady,
		ServeReady: s.disp.ServeReadyKeys,
	})
	s.held = map[*netloop.Loop]*heldReplies{}
	s.rounds = map[*netloop.Loop]*roundReplies{}
	s.loopBufs = map[*netloop.Loop]*resp.LoopBuffers{}
	var looping sync.WaitGroup
	// io-threads event loops run the client connections; Redis's default
	// of one serves a small machine best, where the clients share the
	// cores.
	for range max(1, int(s.cfg.Int("io-threads"))) {
		l, err := netloop.New()
		if err != nil {
			s.listening.closeAll()
			for _, l := range s.loops {
				l.Stop()
			}
			looping.Wait()
			return fmt.Errorf("creating event loop: %w", err)
		}
		s.loops = append(s.loops, l)
		h := newHeldReplies(s, l)
		s.held[l] = h
		s.loopBufs[l] = resp.NewLoopBuffers()
		s.heldList = append(s.heldList, h)
		l.AfterEvents = h.afterEvents
		r := &roundReplies{}
		s.rounds[l] = r
		l.AfterHandlers = r.afterHandlers
		looping.Add(1)
		go func() {
			defer looping.Done()
			l.Run()
		}()
	}
	// used_memory counts the dataset plus what the server holds before
	// any data: the Go heap now, before loading.
	s.stats.StartupMemory = engine.ReadMemory().Heap
	s.ks.Exec(func() { s.ks.SetOverhead(s.stats.StartupMemory) })
	s.log.Noticef("Server initialized")
	if mm := s.cfg.Int("maxmemory"); mm > 0 && mm < 1024*1024 {
		s.log.Warningf("WARNING: You specified a maxmemory value that is less than 1MB (current value is %d bytes). Are you sure this is what you really want?", mm)
	}
	s.listening.startAccepting(s)
	// Clients connected while the dataset loads get LOADING. It is loaded
	// before the expiry timer starts, so keys whose deadline passed while
	// the server was down expire right after, each with its expiry
	// message.
	s.disp.Loading.Store(true)
	loadErr, aborted := s.loadOrShutdown(ctx)
	s.disp.Loading.Store(false)

	var bg background
	if aborted {
		// Shut down without a save, as Redis while loading.
	} else if loadErr == nil {
		if s.cluster != nil {
			// A replica in nodes.conf replicates its master from now
			// on, before the expiry timer starts.
			s.cluster.ServeRoles()
		}
		bg.start(s)
		if host, port, ok := s.cfg.ReplicaOf(); ok {
			s.ks.Exec(func() { s.link.Start(host, port) })
		}
		if s.Addr() != nil {
			s.log.Noticef("Ready to accept connections tcp")
		}
		if path := s.cfg.String("unixsocket"); path != "" {
			s.log.Noticef("The server is now ready to accept connections at %s", path)
		}
		close(s.Ready)
		// A shutdown aborted while it waits for its replicas, or whose
		// final save fails, is cancelled: the server goes on serving
		// until one succeeds (or is forced).
		for !s.prepareShutdown(ctx, s.nextShutdown(ctx), &bg) {
		}
	} else {
		s.log.Warningf("%v", loadErr)
	}
	close(s.exiting)
	s.ks.Exec(func() {
		s.closing = true // no new link (REPLICAOF) from now on
		s.link.Stop()
	})
	s.link.Wait()

	// Stop accepting, let every connection finish the batch it is running
	// and write its replies, then close them.
	s.listening.stop(s.log)
	s.tlsStopNow() // handshakes in progress
	s.ks.Exec(func() {
		s.closing = true
		s.pause.release()
		for _, c := range s.clients {
			c.closeRead()
		}
	})
	done := make(chan struct{})
	go func() { s.conns.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		s.ks.Exec(func() {
			for _, c := range s.clients {
				c.closeNow()
			}
		})
		<-done
	}
	s.workers.Wait()
	s.disp.Migrate.CloseAll()
	s.stopCluster()
	s.repl.WaitTransfers() // RDB payloads for replicas: their connections are closed
	s.tlsConns.Wait()      // their connections are closed: the pumps end
	for _, l := range s.loops {
		l.Stop()
	}
	looping.Wait()
	bg.stop()
	s.persist.Wait() // a background save or AOF rewrite in progress
	s.persist.CloseAOF()
	if err := s.expiry.Close(); err != nil {
		s.log.Warningf("Closing the expiry stream: %v", err)
	}
	if loadErr != nil {
		return loadErr
	}
	s.log.Warningf("zredis is now ready to exit, bye bye...")
	return nil
}

func (s *Server) acceptLoop(ln net.Listener, handle func(net.Conn)) {
	var delay time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// Out of file descriptors and the like: back off, keep going.
			if delay == 0 {
				delay = 5 * time.Millisecond
			} else if delay < time.Second {
				delay *= 2
			}
			s.log.Warningf("Accepting client connection: %v", err)
			time.Sleep(delay)
			continue
		}
		delay = 0
		handle(nc)
	}
}

// accept registers a new connection, or refuses it when maxclients is
// reached, with Redis's error. A refused connection counts in
// rejected_connections, not in total_connections_received. The socket
// leaves the Go runtime's poller before the keyspace lock is taken:
// those system calls (dup, close, fcntl) under the lock held every
// client back for each connection accepted (other clients' PING p99
// was 9.4 ms against redis-server's 0.4 while 10,000 connected).
func (s *Server) accept(nc net.Conn) {
	setKeepAlive(nc, s.cfg.Int("tcp-keepalive"))
	peer := nc.RemoteAddr()
	fd, err := netloop.TakeFD(nc)
	if err != nil {
		s.log.Warningf("Accepting client connection: %v", err)
		return
	}
	var refused string // the error a refused connection gets before it is closed
	closing := false
	var c *conn
	// Also while a long script yields the lock: Redis takes in clients
	// then, and they get -BUSY.
	s.ks.LockOrBusy()
	func() {
		defer s.ks.Unlock()
		if s.closing {
			closing = true
			return
		}
		if int64(len(s.clients)) >= s.cfg.Int("maxclients") {
			s.stats.RejectedConnections++
			refused = engine.ErrMaxClients
			return
		}
		s.stats.TotalConnections++
		if s.protectedModeRefuses(peer) {
			s.stats.RejectedConnections++
			refused = engine.ErrProtectedMode
			return
		}
		s.nextLoop = (s.nextLoop + 1) % len(s.loops)
		c = newConn(s, nc, fd, s.loops[s.nextLoop])
		if bc, ok := nc.(bridgedConn); ok {
			c.onClose = bc.closeTLS
			c.cl.TLS = true
		}
		s.nextID++
		c.cl.ID = s.nextID
		s.disp.NewClientAuth(c.cl)
		s.clients[c.cl.ID] = c
		s.ring.add(c)
		s.conns.Add(1)
	}()
	if closing {
		syscall.Close(fd)
		return
	}
	if refused != "" {
		// A new socket's buffer takes the line: one write, not waited for.
		syscall.Write(fd, []byte("-"+refused+"\r\n"))
		syscall.Close(fd)
		return
	}
	c.loop.SubmitEarly(c.attach)
}

// protectedModeRefuses reports whether protected mode refuses a client
// connecting from peer: protected-mode yes, no password for the default
// user, and a peer other than 127.0.0.1 or ::1 (Redis compares the
// address text exactly; a unix socket is always local). Under the lock.
func (s *Server) protectedModeRefuses(peer net.Addr) bool {
	if !s.cfg.Bool("protected-mode") || !s.disp.ACL.DefaultNoPass() {
		return false
	}
	tcp, ok := peer.(*net.TCPAddr)
	if !ok {
		return false
	}
	ip := tcp.IP.String()
	return ip != "127.0.0.1" && ip != "::1"
}

// drop unregisters a connection and closes its socket: the client is gone
// at once for CLIENT LIST and the other commands, and its goroutine runs
// nothing more. Called with the keyspace lock held.
func (s *Server) drop(c *conn) {
	if !c.killed {
		c.killed = true
		close(c.gone)
	}
	if s.clients[c.cl.ID] == c {
		delete(s.clients, c.cl.ID)
		s.ring.remove(c)
	}
	engine.ReleaseClient(c.cl)    // its MULTI queue and WATCHed keys
	s.disp.Tracking.Disable(c.cl) // its client-side caching
	s.repl.RemoveReplica(c.cl)    // a replica leaves the replicas
	s.repl.ReleaseWaiter(c.cl)    // a client in WAIT stops waiting
	s.pubsub.Release(c.cl)        // its subscriptions
	c.closeNow()
}

// ---- engine.Server ------------------------------------------------------

// Config implements engine.Server.
func (s *Server) Config() *config.Config { return s.cfg }

// Stats implements engine.Server.
func (s *Server) Stats() *engine.ServerStats { return &s.stats }

// Clients implements engine.Server.
func (s *Server) Clients() []*engine.Client {
	out := make([]*engine.Client, 0, len(s.clients))
	for _, c := range s.clients {
		out = append(out, c.cl)
	}
	if m := s.link.MasterClient(); m != nil {
		out = append(out, m) // the link's client, flag M
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Monitor implements engine.Server: from now on the MONITOR feed goes
// to the connection through its outbox, as Pub/Sub messages do, in order
// with its replies and under its output limits (class normal, as Redis
// 7.0 classifies a MONITOR client).
func (s *Server) Monitor(cl *engine.Client) {
	c := s.clients[cl.ID]
	if c == nil {
		return
	}
	for _, m := range s.monitors {
		if m == c {
			return
		}
	}
	s.monitors = append(s.monitors, c)
}

// feedMonitors is the Dispatcher.AfterCall hook that shows a call to the
// MONITOR clients, with the arguments the client sent (not GEOADD's
// ZADD). Administrative commands are not shown, nor commands rejected
// before running (unknown, wrong arity, unauthenticated), as in Redis.
func (s *Server) feedMonitors(c *engine.Ctx, _ time.Duration) {
	if len(s.monitors) == 0 || c.Cmd.Flags&(engine.Admin|engine.SkipMonitor) != 0 {
		return
	}
	s.Feed(c.Client, c.OriginalArgs())
}

// Feed implements engine.Server: it sends one command to every MONITOR
// client in Redis's format, and forgets the clients that left MONITOR
// (RESET) or the server.
func (s *Server) Feed(cl *engine.Client, args [][]byte) {
	n := 0
	for _, m := range s.monitors {
		if m.cl.Monitor && !m.killed {
			s.monitors[n] = m
			n++
		}
	}
	clear(s.monitors[n:])
	s.monitors = s.monitors[:n]
	if n == 0 {
		return
	}
	addr := cl.Addr
	if cl.UnixSocket {
		addr = "unix:" + s.cfg.String("unixsocket") // as Redis's MONITOR names it
	}
	line := appendMonitorLine(make([]byte, 0, 128), time.Now(), cl.DB, addr, args)
	for _, m := range s.monitors {
		// A MONITOR line is a reply, which CLIENT REPLY OFF drops.
		if !m.cl.ReplyOff {
			m.pushOut(line, false)
		}
	}
}

// appendMonitorLine formats one MONITOR line:
// +<sec>.<usec> [<db> <addr>] "arg" "arg"...
func appendMonitorLine(line []byte, now time.Time, db int, addr string, args [][]byte) []byte {
	line = append(line, '+')
	line = strconv.AppendInt(line, now.Unix(), 10)
	line = append(line, '.')
	us := now.Nanosecond() / 1000
	for d := 100000; d > 1 && us < d; d /= 10 {
		line = append(line, '0')
	}
	line = strconv.AppendInt(line, int64(us), 10)
	line = append(line, " ["...)
	line = strconv.AppendInt(line, int64(db), 10)
	line = append(line, ' ')
	line = append(line, addr...)
	line = append(line, ']')
	for _, a := range args {
		line = append(line, ' ')
		line = sds.AppendRepr(line, a)
	}
	return append(line, '\r', '\n')
}

// Pause implements engine.Server.
func (s *Server) Pause(endMs int64, all bool) {
	s.pause.set(s.ks.Clock().NowMs(), endMs, all)
	// Nothing expires while clients are paused (Redis 7.0 pauses
	// expiry with writes): the data set stays still.
	s.ks.PauseExpiry(s.pause.expiryUntil())
}

// Unpause implements engine.Server. A shutdown's pause of writes goes
// on, as CLIENT UNPAUSE lifts only CLIENT PAUSE in Redis.
func (s *Server) Unpause() {
	s.pause.release()
	s.ks.PauseExpiry(s.pause.expiryUntil())
}

// pauseWritesFor holds or releases the writes of clients for one
// purpose (pauseState.writesHeld), with expiry. Under the lock.
func (s *Server) pauseWritesFor(purpose uint8, on bool) {
	s.pause.holdWrites(purpose, on)
	s.ks.PauseExpiry(s.pause.expiryUntil())
}

// renamedTable is the command table under the names the configuration's
// rename-command lines give. The configuration was checked against the
// table when it was loaded (main's LoadOptions.CommandExists); a rename
// that still fails stops the process rather than serve a command the
// configuration meant to hide.
func renamedTable(cfg *config.Config) *engine.Table {
	var renames [][2]string
	for _, r := range cfg.RenamedCommands() {
		renames = append(renames, [2]string{r.From, r.To})
	}
	t, err := commands.Table().Renamed(renames)
	if err != nil {
		fmt.Fprintf(os.Stderr, "FATAL CONFIG ERROR: rename-command: %v\n", err)
		os.Exit(1)
	}
	return t
}
