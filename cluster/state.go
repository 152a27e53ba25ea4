package cluster

import (
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

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
	// owners is s.slots as numbers (ownerTable), rebuilt when
	// ownersStale: after a change of owner, not at every change of
	// the cluster's state.
	owners      *ownerTable
	ownersStale bool
	// notClaiming holds the slots whose owner's messages stopped
	// claiming them (owner_not_claiming_slot): still bound to it, but
	// free for another master to take, and left out of UPDATE messages.
	notClaiming bus.Bitmap
	state       uint8 // stateOK or stateFail
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
		// A second name a crash left in writeFile's fallback.
		os.Remove(opt.ConfigFile + ".hold")
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
				s.setOwner(slot, n)
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
// content, fsynced; here renamed over the old file (writeFile), so a
// crash mid-write leaves the old file whole. Not under mu.
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

// writeFile replaces the file at path with content, so that path names
// a complete file at every moment: the new content goes into a spare
// file (path + ".prev", which holds the version before the live one
// between writes), which is fsynced when fsync is set and otherwise
// written out to the device (a power loss may then lose the change, not
// tear the file); then the spare and path swap names (renameat2's
// RENAME_EXCHANGE), and the directory is fsynced when fsync is set.
// Redis 7.4 writes a new temporary file each time and renames it over
// the old one (7.0 overwrites nodes.conf in place, which a crash
// mid-write can leave torn); on ext4 that is a new inode each time and
// the old one's blocks freed (and discarded, on a filesystem mounted
// with discard): a write took 160-200 us and CLUSTER SETSLOT 0.2-0.27
// ms of server time, where reusing two inodes takes 25-30 us and the
// write-out 50-120 more (measured on this project's 2-core VM), and
// redis-cli --cluster reshard sends four SETSLOTs a slot.
func writeFile(path string, content []byte, fsync bool) error {
	return writeFileWith(path, content, fsync, swapInto)
}

// writeFileWith is writeFile with the swap of names given (tests).
func writeFileWith(path string, content []byte, fsync bool, swap func(spare, path string) error) error {
	spare := path + ".prev"
	fd, size, err := openSpare(spare)
	if err != nil {
		return err
	}
	for off := 0; off < len(content); {
		n, werr := syscall.Pwrite(fd, content[off:], int64(off))
		if werr == syscall.EINTR {
			continue
		}
		if werr != nil {
			err = werr
			break
		}
		if n == 0 {
			err = io.ErrShortWrite
			break
		}
		off += n
	}
	if err == nil && size > int64(len(content)) {
		err = syscall.Ftruncate(fd, int64(len(content)))
	}
	if err == nil && fsync {
		err = syscall.Fsync(fd)
	} else if err == nil {
		// The spare's blocks are written over, not new: nothing orders
		// them before the swap of names reaches the journal (as a new
		// file renamed over the old one is, by ext4's auto_da_alloc), so
		// a power loss could leave nodes.conf the new name of a file half
		// written. The data goes to the device first, without the
		// metadata flush of an fdatasync (107-131 us here against 50-58
		// in a loop).
		for {
			err = unix.SyncFileRange(fd, 0, 0, unix.SYNC_FILE_RANGE_WAIT_BEFORE|unix.SYNC_FILE_RANGE_WRITE|unix.SYNC_FILE_RANGE_WAIT_AFTER)
			if err != unix.EINTR {
				break
			}
		}
		if err == unix.ENOSYS || err == unix.EINVAL || err == unix.EPERM {
			err = syscall.Fdatasync(fd)
		}
	}
	if cerr := syscall.Close(fd); err == nil {
		err = cerr
	}
	if err != nil {
		return &os.PathError{Op: "write", Path: spare, Err: err}
	}
	if err := swap(spare, path); err != nil {
		return err
	}
	if fsync {
		if d, err := os.Open(filepath.Dir(path)); err == nil {
			d.Sync()
			d.Close()
		}
	}
	return nil
}

// swapInto makes spare's file path's, and path's file (if any) the
// spare: in one exchange of names where the filesystem has it, else
// with the old file given a second name (path + ".hold") across the
// rename, so that it is not freed.
func swapInto(spare, path string) error {
	err := unix.Renameat2(unix.AT_FDCWD, spare, unix.AT_FDCWD, path, unix.RENAME_EXCHANGE)
	if err == nil {
		return nil
	}
	// EPERM: a sandbox (seccomp) that does not allow renameat2.
	if err != unix.EINVAL && err != unix.ENOSYS && err != unix.EOPNOTSUPP && err != unix.ENOENT && err != unix.EPERM {
		return &os.LinkError{Op: "rename", Old: spare, New: path, Err: err}
	}
	return swapByLink(spare, path)
}

// swapByLink is swapInto without the exchange, for a filesystem without
// it or a path that does not exist yet.
func swapByLink(spare, path string) error {
	// A hold left by a crash between the link and the last rename is
	// dropped: it names the file before the live one, or the live one.
	hold := path + ".hold"
	err := syscall.Link(path, hold)
	if err == syscall.EEXIST {
		syscall.Unlink(hold)
		err = syscall.Link(path, hold)
	}
	held := err == nil
	if err := syscall.Rename(spare, path); err != nil {
		if held {
			syscall.Unlink(hold)
		}
		return &os.LinkError{Op: "rename", Old: spare, New: path, Err: err}
	}
	if held {
		syscall.Rename(hold, spare)
	}
	return nil
}

// openSpare opens the spare file for writing, with its size, made anew
// when it is not a regular file of one name (a link elsewhere must not
// be written through).
func openSpare(spare string) (fd int, size int64, err error) {
	// O_NONBLOCK: a FIFO at the spare's name must not hang the save
	// (and the server with it); it is refused below as not regular.
	const flags = syscall.O_WRONLY | syscall.O_CLOEXEC | syscall.O_NOFOLLOW | syscall.O_NONBLOCK
	fd, err = syscall.Open(spare, flags|syscall.O_CREAT, 0o644)
	if err == nil {
		var st syscall.Stat_t
		if syscall.Fstat(fd, &st) == nil && st.Mode&syscall.S_IFMT == syscall.S_IFREG && st.Nlink == 1 {
			return fd, st.Size, nil
		}
		syscall.Close(fd)
	}
	syscall.Unlink(spare)
	fd, err = syscall.Open(spare, flags|syscall.O_CREAT|syscall.O_EXCL, 0o644)
	if err != nil {
		return -1, 0, &os.PathError{Op: "open", Path: spare, Err: err}
	}
	return fd, 0, nil
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
