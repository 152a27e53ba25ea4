package cluster

import (
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zredis/zredis/cluster/bus"
)

// Options are what a node is started with: the cluster-* directives and
// the server's own ports.
type Options struct {
	// ConfigFile is cluster-config-file; "" keeps the configuration in
	// memory only (tests).
	ConfigFile string
	// BindIP is the address the bus listens on (the first of bind).
	BindIP string
	// Port is the client port; BusPort the bus's (cluster-port, or
	// Port+10000).
	Port, BusPort int
	// AnnounceIP, AnnouncePort, AnnounceBusPort and AnnounceHostname are
	// the cluster-announce-* directives: what the node tells the others
	// (0 and "": its own).
	AnnounceIP       string
	AnnouncePort     int
	AnnounceBusPort  int
	AnnounceHostname string
	// NodeTimeout is cluster-node-timeout.
	NodeTimeout time.Duration
	// RequireFullCoverage is cluster-require-full-coverage.
	RequireFullCoverage bool
	// Endpoint is cluster-preferred-endpoint-type.
	Endpoint Endpoint
	// TLS is tls-cluster: the bus speaks TLS, with the configurations
	// TLSServer and TLSClient return (nil: not configured), and the
	// client port this node announces is TLSPort (or
	// AnnounceTLSPort, cluster-announce-tls-port), Port being its
	// plaintext one.
	TLS                      bool
	TLSPort, AnnounceTLSPort int
	TLSServer, TLSClient     func() *tls.Config
	// ReplicaValidityFactor, ReplicaNoFailover, AllowReplicaMigration
	// and MigrationBarrier are cluster-replica-validity-factor,
	// cluster-replica-no-failover, cluster-allow-replica-migration and
	// cluster-migration-barrier; ReplPingPeriod is
	// repl-ping-replica-period, part of the data age a replica may fail
	// over with.
	ReplicaValidityFactor int
	ReplicaNoFailover     bool
	AllowReplicaMigration bool
	MigrationBarrier      int
	ReplPingPeriod        time.Duration
	// Offset is the node's replication offset, which its messages carry:
	// master_repl_offset for a master, the offset of the stream it
	// applied for a replica. Called under the State's lock: it must not
	// take the keyspace's.
	Offset func() int64
	// Exec runs f with the keyspace lock held, so that a change of role
	// (becoming a replica, a promotion, a manual failover's pause) is
	// atomic with respect to clients' commands. The State calls it
	// without its own lock.
	Exec func(f func())
	// Replication is the server's replication, which the node drives as
	// a replica or a master of the cluster.
	Replication Replication
	// OnPublish delivers a message another node published (PUBLISH, or
	// SPUBLISH in this node's shard) to this node's subscribers. It is
	// called without the State's lock; channel and message are valid
	// during the call only.
	OnPublish func(channel, message []byte, shard bool)
	// OnSlotsLost deletes this node's keys in slots another master took
	// over with a newer configuration (a failover while this node was
	// cut off), as Redis deletes the keys of its dirty slots; called
	// without the State's lock.
	OnSlotsLost func(slots []int)
	// Logf writes a log line at the level Redis logs it ('.' verbose,
	// '-' notice, '#' warning: Redis's LL_* marks).
	Logf func(level byte, format string, args ...any)
}

// State is a running cluster node (clusterState): what it knows of the
// cluster, its links to the other nodes' buses, and the cron that
// pings them and detects failures. Its fields are guarded by mu: the
// links' readers, the cron and the server's commands take it; no I/O is
// done under it (messages go to the links' queues, the nodes.conf write
// takes a copy).
type State struct {
	opt Options

	mu    sync.Mutex
	cfg   *Config
	slots [Slots]*Node // the master serving each slot
	state uint8        // stateOK or stateFail
	// size is the number of masters serving slots as of the last
	// updateState (server.cluster->size: 1 until then), the base of the
	// failure quorum.
	size int
	// firstUpdate and minoritySince time clusterUpdateState's delays:
	// a master waits before its first ok, and before an ok again after
	// it found itself in a minority.
	firstUpdate, minoritySince int64
	// todoSave: nodes.conf is to be written (clusterDoBeforeSleep's
	// CLUSTER_TODO_SAVE_CONFIG); the cron writes it.
	todoSave bool
	// syncedEpochs is epochsSignature as of the last fsynced write.
	syncedEpochs uint64
	// stateChanged: a change may change the cluster's state.
	stateChanged bool
	// lostSlots are slots this node lost to a newer configuration, whose
	// keys are still to be deleted (OnSlotsLost).
	lostSlots []int
	// votes are the replicas granted a vote, sent once nodes.conf has
	// it (sendVotes).
	votes []*Node
	// fo is the failover state: elections as a replica, manual
	// failovers on both sides, and the role the server is told to take.
	fo failoverState
	// routes is what redirections read (Routes); routesDirty: a change
	// since it was built.
	routes      atomic.Pointer[Routes]
	routesDirty bool
	// writeTimeout is opt.NodeTimeout for the links' writers, which
	// run off mu.
	writeTimeout atomic.Int64
	// blacklist holds the nodes CLUSTER FORGET dropped, until when
	// (Unix ms) gossip may not add them again.
	blacklist map[bus.Name]int64
	// sent and received count messages by type, linksOverLimit the
	// links freed for a full queue (CLUSTER INFO).
	sent, received [bus.TypeCount]int64
	linksOverLimit int64

	ln     net.Listener
	saveMu sync.Mutex // one nodes.conf write at a time
	stop   chan struct{}
	wg     sync.WaitGroup // the accept loop, the cron, the links' goroutines, dials
	links  map[*link]struct{}
	closed bool
}

const (
	stateOK   uint8 = 0
	stateFail uint8 = 1
)

// New makes the node: from nodes.conf when the file has a configuration,
// else a new one, with a random name, saved at once (clusterInit). It
// does not listen yet (Start).
func New(opt Options) (*State, error) {
	if opt.NodeTimeout <= 0 {
		opt.NodeTimeout = 15 * time.Second
	}
	if opt.Logf == nil {
		opt.Logf = func(byte, string, ...any) {}
	}
	if opt.Offset == nil {
		opt.Offset = func() int64 { return 0 }
	}
	if opt.Exec == nil {
		opt.Exec = func(f func()) { f() }
	}
	if opt.Replication == nil {
		opt.Replication = noReplication{}
	}
	if opt.OnPublish == nil {
		opt.OnPublish = func([]byte, []byte, bool) {}
	}
	if opt.OnSlotsLost == nil {
		opt.OnSlotsLost = func([]int) {}
	}
	s := &State{opt: opt, stop: make(chan struct{}), links: map[*link]struct{}{}, state: stateFail, size: 1}
	s.writeTimeout.Store(int64(opt.NodeTimeout))
	s.fo.mfMasterOffset = -1
	var cfg *Config
	if opt.ConfigFile != "" {
		data, err := os.ReadFile(opt.ConfigFile)
		if err != nil && !os.IsNotExist(err) {
			return nil, fmt.Errorf("Loading the cluster node config from %s: %v", opt.ConfigFile, err)
		}
		if cfg, err = ParseNodesConf(data, nowMs()); err != nil {
			return nil, err
		}
	}
	if cfg == nil {
		myself := &Node{Name: randomName(), Flags: bus.FlagMyself | bus.FlagMaster}
		cfg = &Config{Nodes: []*Node{myself}, Myself: myself, Migrating: map[int]bus.Name{}, Importing: map[int]bus.Name{}}
		opt.Logf('-', "No cluster configuration found, I'm %s", myself.Name[:])
		s.todoSave = true
	} else {
		opt.Logf('-', "Node configuration loaded, I'm %.6s", cfg.Myself.Name[:])
	}
	s.cfg = cfg
	// A replica in nodes.conf holds its master's data: the server is
	// told its master once it serves (ServeRoles), and told to be a
	// master if it is promoted or reset before.
	s.fo.masterOn = cfg.Myself.Flags&bus.FlagReplica != 0
	for _, n := range cfg.Nodes {
		n.ctime = nowMs()
		if n.Flags&bus.FlagMaster == 0 {
			continue
		}
		for slot := 0; slot < Slots; slot++ {
			if n.Slots.Has(slot) {
				s.slots[slot] = n
			}
		}
	}
	s.applyAnnounced()
	s.updateState()
	s.publishRoutes()
	if s.todoSave {
		if err := s.saveConfig(); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// applyAnnounced sets what this node tells the others of itself (the
// cluster-announce-* directives, deriveAnnouncedPorts): a TLS bus's
// nodes announce their TLS port, and their plaintext one beside it.
func (s *State) applyAnnounced() {
	me := s.cfg.Myself
	me.Port, me.PPort = s.opt.Port, 0
	if s.opt.TLS {
		me.Port, me.PPort = s.opt.TLSPort, s.opt.Port
	}
	if s.opt.TLS && s.opt.AnnounceTLSPort != 0 {
		me.Port, me.PPort = s.opt.AnnounceTLSPort, s.opt.AnnouncePort
	} else if s.opt.AnnouncePort != 0 {
		me.Port = s.opt.AnnouncePort
	}
	me.CPort = s.opt.BusPort
	if s.opt.AnnounceBusPort != 0 {
		me.CPort = s.opt.AnnounceBusPort
	}
	if s.opt.AnnounceIP != "" {
		me.IP = s.opt.AnnounceIP
	}
	me.Hostname = s.opt.AnnounceHostname
}

// randomName is a new node name: 40 random hex digits
// (getRandomHexChars).
func randomName() (n bus.Name) {
	var b [bus.NameLen / 2]byte
	rand.Read(b[:])
	hex.Encode(n[:], b[:])
	return n
}

func nowMs() int64 { return time.Now().UnixMilli() }

// Start listens on the bus port and starts the cron. It returns once the
// port is bound.
func (s *State) Start() error {
	addr := net.JoinHostPort(s.opt.BindIP, fmt.Sprint(s.opt.BusPort))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("Could not bind the cluster bus to %s: %v", addr, err)
	}
	s.ln = ln
	s.wg.Add(2)
	go s.acceptLoop()
	go s.cronLoop()
	return nil
}

// Stop closes the bus and every link, stops the cron, and waits for all
// of the node's goroutines; then writes nodes.conf if it changed.
func (s *State) Stop() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	close(s.stop)
	if s.ln != nil {
		s.ln.Close()
	}
	for l := range s.links {
		l.close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	s.mu.Lock()
	save := s.todoSave
	s.mu.Unlock()
	if save {
		s.saveConfig()
	}
}

// Myself is this node's name.
func (s *State) Myself() bus.Name {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cfg.Myself.Name
}

// NodesConf is what nodes.conf would hold now.
func (s *State) NodesConf() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cfg.NodesConf()
}

// unlock publishes what changed in the routing, then releases mu.
func (s *State) unlock() {
	s.publishRoutes()
	s.mu.Unlock()
}

// saveConfig writes nodes.conf as clusterSaveConfig does: the whole
// content, fsynced; here to a temporary file renamed over the old one,
// so a crash mid-write leaves the old file whole. Not under mu.
func (s *State) saveConfig() error { return s.saveConfigSync(true) }

// saveConfigSync is saveConfig, with the fsyncs only when fsync is set:
// Redis fsyncs nodes.conf only for the changes that must survive a
// power loss (CLUSTER_TODO_FSYNC_CONFIG: epochs, votes), not for each
// CLUSTER SETSLOT of a reshard, which sends four per slot moved.
func (s *State) saveConfigSync(fsync bool) error {
	if s.opt.ConfigFile == "" {
		s.mu.Lock()
		s.todoSave = false
		s.mu.Unlock()
		return nil
	}
	s.saveMu.Lock()
	defer s.saveMu.Unlock()
	s.mu.Lock()
	content := s.cfg.NodesConf()
	s.todoSave = false
	// Whatever SETSLOT's write carries along is fsynced if Redis would
	// have: an epoch learned or taken, or a vote waiting to be sent
	// once it is on disk.
	epochs := s.epochsSignature()
	if epochs != s.syncedEpochs || len(s.votes) > 0 {
		fsync = true
	}
	s.mu.Unlock()
	err := writeFile(s.opt.ConfigFile, content, fsync)
	if err == nil && fsync {
		s.mu.Lock()
		s.syncedEpochs = epochs
		s.mu.Unlock()
	}
	if err != nil {
		s.opt.Logf('#', "Could not save the cluster configuration: %v", err)
		s.mu.Lock()
		s.todoSave = true
		s.mu.Unlock()
	}
	return err
}

// epochsSignature sums up the epochs nodes.conf holds (the current and
// last vote epochs, every node's config epoch): what Redis fsyncs the
// file for when it changes (CLUSTER_TODO_FSYNC_CONFIG). Under mu.
func (s *State) epochsSignature() uint64 {
	h := s.cfg.CurrentEpoch*0x9e3779b97f4a7c15 ^ s.cfg.LastVoteEpoch
	for _, n := range s.cfg.Nodes {
		h = (h^n.ConfigEpoch)*0x100000001b3 + 1
	}
	return h
}

// writeFile replaces the file at path with content: written to a
// temporary file renamed over it, fsynced (file and directory) when
// fsync is set.
func writeFile(path string, content []byte, fsync bool) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".nodes-*.tmp")
	if err != nil {
		return err
	}
	_, err = tmp.Write(content)
	if err == nil && fsync {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if !fsync {
		return nil
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// SetOptions changes the options CONFIG SET may change at run time
// (cluster-node-timeout, cluster-require-full-coverage, the
// cluster-announce-* directives, cluster-preferred-endpoint-type): what
// this node tells the others, and shows, changes at once.
func (s *State) SetOptions(change func(*Options)) {
	s.mu.Lock()
	change(&s.opt)
	if s.opt.NodeTimeout <= 0 {
		s.opt.NodeTimeout = time.Millisecond
	}
	s.writeTimeout.Store(int64(s.opt.NodeTimeout))
	s.applyAnnounced()
	s.routesDirty, s.stateChanged, s.todoSave = true, true, true
	s.updateState()
	s.unlock()
}
