package cluster

import (
	"bytes"
	"math/rand/v2"

	"github.com/zredis/zredis/cluster/bus"
)

// Replicas and failover (cluster.c's "SLAVE nodes handling", "CLUSTER
// slave failover", "CLUSTER slave migration" and "CLUSTER manual
// failover"): a node that replicates a master of the cluster, its
// election in the place of a failed master, CLUSTER FAILOVER on both
// sides, and the role the server is told to take.
//
// The node decides under mu; the server changes role (replicationSetMaster,
// replicationUnsetMaster, a manual failover's pause) with the keyspace
// lock held and mu released: roleStep runs inside Options.Exec, or in a
// command that holds the keyspace lock already. So a promotion, the slots
// it takes and the server turning master are one step for clients, and
// the lock order (keyspace, then mu) holds.

// Replication is what the node asks of the server's replication. Each
// method is called with the keyspace lock held and without the State's.
type Replication interface {
	// SetMaster makes the server a replica of host:port
	// (replicationSetMaster), dropping the link to a previous master.
	SetMaster(host string, port int)
	// UnsetMaster makes the server a master (replicationUnsetMaster):
	// REPLICAOF NO ONE's path, which turns the expiry stream on.
	UnsetMaster()
	// MasterDataAge is how long, in ms, the data set has gone without
	// its master's stream (clusterHandleSlaveFailover's data_age).
	MasterDataAge() int64
	// HoldWrites holds clients' writes while a replica of this master
	// takes over in a manual failover (on), or lets them run again: the
	// offset the master announces must stay.
	HoldWrites(on bool)
}

// noReplication is the replication of a node without a server (tests).
type noReplication struct{}

func (noReplication) SetMaster(string, int) {}
func (noReplication) UnsetMaster()          {}
func (noReplication) MasterDataAge() int64  { return 0 }
func (noReplication) HoldWrites(bool)       {}

// Timings of cluster.c, in ms.
const (
	mfTimeout         = 5000  // CLUSTER_MF_TIMEOUT: a manual failover's time
	migrationDelay    = 5000  // CLUSTER_SLAVE_MIGRATION_DELAY
	cantFailoverRelog = 10000 // CLUSTER_CANT_FAILOVER_RELOG_PERIOD
)

// Why a replica does not fail over (CLUSTER_CANT_FAILOVER_*), logged
// once per reason and period.
const (
	cantNone = iota
	cantDataAge
	cantWaitingDelay
	cantExpired
	cantWaitingVotes
)

// failoverState is the node's part in failovers. Under mu.
type failoverState struct {
	// An election as a replica (clusterHandleSlaveFailover): when it
	// may start or started (Unix ms), the votes counted, whether the
	// request went out, the rank, and the epoch of the request.
	authTime  int64
	authCount int
	authSent  bool
	authRank  int
	authEpoch uint64
	// cantReason and cantLogged (Unix ms) rate the "Currently unable to
	// failover" lines.
	cantReason int
	cantLogged int64

	// A manual failover in progress ends at mfEnd (Unix ms; 0: none). As
	// a replica: mfCanStart once its offset reached mfMasterOffset, its
	// paused master's (-1 until known). As a master: mfReplica is the
	// replica taking over, for which writes are held.
	mfEnd          int64
	mfCanStart     bool
	mfMasterOffset int64
	mfReplica      *Node
	// mfRequest is a replica's MFSTART, which roleStep answers: the
	// pause must be in force before the PING that gives the offset.
	mfRequest *Node

	// master is the master the server was last told to replicate
	// (masterOn), reconnect a SetMaster due even to the same one
	// (clusterSetMaster, the master's new address).
	masterOn   bool
	masterHost string
	masterPort int
	reconnect  bool
	// held: the server holds writes for mfReplica.
	held bool
	// promoted: this node took its master's slots; once the server is a
	// master, nodes.conf is written and every node gets a PONG.
	promoted bool
	// dirty: a message calls for roleStep at once (a vote, MFSTART, the
	// paused master's offset, a new master).
	dirty bool
	// serving: the server loaded its data set (ServeRoles): before it,
	// the node does not change the server's role.
	serving bool
}

// ServeRoles lets the node change the server's role, once its data set
// is loaded, as Redis's cron starts replicating only once it serves.
func (s *State) ServeRoles() {
	s.mu.Lock()
	s.fo.serving, s.fo.dirty = true, true
	s.mu.Unlock()
	s.opt.Exec(func() { s.roleStep(false) })
}

// needsRoleStep reports whether the cron must run roleStep: as a
// replica, during a manual failover, and while the server's role is not
// the node's. Under mu.
func (s *State) needsRoleStep() bool {
	fo := &s.fo
	return fo.serving && (s.cfg.Myself.Flags&bus.FlagReplica != 0 || fo.mfEnd != 0 || fo.dirty ||
		fo.masterOn || fo.held || fo.mfRequest != nil)
}

// roleStep runs what clusterCron and clusterBeforeSleep do for failovers
// (cron: a turn of the cron, with the timeouts and replica migration),
// then tells the server its role. With the keyspace lock held, not mu.
func (s *State) roleStep(cron bool) {
	age := s.opt.Replication.MasterDataAge()
	s.mu.Lock()
	if s.closed || !s.fo.serving {
		s.mu.Unlock()
		return
	}
	s.fo.dirty = false
	if cron {
		s.manualFailoverCheckTimeout()
	}
	if s.cfg.Myself.Flags&bus.FlagReplica != 0 {
		s.handleManualFailover()
		s.handleReplicaFailover(age)
		if cron {
			s.replicaMigrationIfNeeded()
		}
	}
	s.startManualFailoverAsMaster()
	s.applyRole()
}

// applyRole tells the server the role the node has, releasing mu first
// (held on entry): the master to replicate, or none; the writes held
// for a manual failover. After a promotion nodes.conf is written and
// every node gets a PONG (clusterFailoverReplaceYourMaster's last
// steps), once the server is a master. With the keyspace lock held.
func (s *State) applyRole() {
	fo := &s.fo
	if !fo.serving || s.closed {
		s.unlock()
		return
	}
	me := s.cfg.Myself
	set, unset := false, false
	var host string
	var port int
	if me.Flags&bus.FlagReplica != 0 {
		if m := s.cfg.Lookup(me.Master); m != nil && m.Flags&bus.FlagNoAddr == 0 && m.IP != "" && m.Port != 0 {
			if !fo.masterOn || fo.reconnect || fo.masterHost != m.IP || fo.masterPort != m.Port {
				set, host, port = true, m.IP, m.Port
				fo.masterOn, fo.masterHost, fo.masterPort, fo.reconnect = true, m.IP, m.Port, false
			}
		}
	} else if fo.masterOn {
		unset = true
		fo.masterOn, fo.reconnect = false, false
	}
	hold := fo.mfReplica != nil
	changeHold := hold != fo.held
	fo.held = hold
	promoted := fo.promoted
	fo.promoted = false
	s.unlock()

	r := s.opt.Replication
	if changeHold {
		r.HoldWrites(hold)
	}
	if unset {
		r.UnsetMaster()
	}
	if set {
		r.SetMaster(host, port)
	}
	if promoted {
		s.saveConfig()
		s.mu.Lock()
		s.broadcastPong(false)
		s.mu.Unlock()
	}
}

// broadcastPong sends a PONG to every node linked (clusterBroadcastPong),
// or only to the other replicas of this node's master.
func (s *State) broadcastPong(localReplicas bool) {
	me := s.cfg.Myself
	for _, n := range s.cfg.Nodes {
		if n.link == nil || n == me || n.Flags&bus.FlagHandshake != 0 {
			continue
		}
		if localReplicas && (n.Flags&bus.FlagReplica == 0 || n.Master.IsZero() || n.Master != me.Master) {
			continue
		}
		s.sendPing(n.link, bus.Pong)
	}
}

// setMaster makes this node a replica of n (clusterSetMaster): a master
// gives up the slots it was moving. The caller checked this node serves
// no slot. Under mu.
func (s *State) setMaster(n *Node) {
	me := s.cfg.Myself
	if me.Flags&bus.FlagMaster != 0 {
		me.Flags = me.Flags&^(bus.FlagMaster|bus.FlagMigrateTo) | bus.FlagReplica
		clear(s.cfg.Migrating)
		clear(s.cfg.Importing)
	}
	s.moveReplica(me, n)
	s.fo.reconnect = true
	s.resetManualFailover()
	s.todoSave, s.stateChanged, s.routesDirty = true, true, true
}

// replaceYourMaster makes this node, a replica that won an election or
// takes over, the master of its master's slots
// (clusterFailoverReplaceYourMaster); applyRole then turns the server
// master and tells every node. The caller gave it a new config epoch.
// Under mu.
func (s *State) replaceYourMaster() {
	me := s.cfg.Myself
	old := s.cfg.Lookup(me.Master)
	if me.Flags&bus.FlagMaster != 0 || old == nil {
		return
	}
	s.setAsMaster(me)
	slots := old.Slots
	for j := 0; j < Slots; j++ {
		if slots.Has(j) {
			s.delSlot(j)
			s.addSlot(me, j)
		}
	}
	s.updateState()
	s.todoSave, s.routesDirty = true, true
	s.fo.promoted = true
	s.resetManualFailover()
}

// resetManualFailover ends a manual failover on either side
// (resetManualFailover); a master's held writes are let go by applyRole.
// Under mu.
func (s *State) resetManualFailover() {
	fo := &s.fo
	fo.mfEnd, fo.mfCanStart, fo.mfReplica, fo.mfMasterOffset = 0, false, nil, -1
}

// manualFailoverCheckTimeout abandons a manual failover past its time.
// Under mu.
func (s *State) manualFailoverCheckTimeout() {
	if s.fo.mfEnd != 0 && s.fo.mfEnd < nowMs() {
		s.opt.Logf('#', "Manual failover timed out.")
		s.resetManualFailover()
	}
}

// handleManualFailover lets a replica's manual failover start once it
// applied its paused master's stream up to the offset the master gave
// (clusterHandleManualFailover). Under mu.
func (s *State) handleManualFailover() {
	fo := &s.fo
	if fo.mfEnd == 0 || fo.mfCanStart || fo.mfMasterOffset == -1 {
		return
	}
	if fo.mfMasterOffset == s.opt.Offset() {
		fo.mfCanStart = true
		s.opt.Logf('#', "All master replication stream processed, manual failover can start.")
	}
}

// startManualFailoverAsMaster answers a replica's MFSTART (the MFSTART
// branch of clusterProcessPacket): writes are held (applyRole, before
// the keyspace lock is released, so that the offset the PING gives
// stays), and the replica is pinged with the paused flag every turn of
// the cron until the failover ends. Under mu.
func (s *State) startManualFailoverAsMaster() {
	n := s.fo.mfRequest
	s.fo.mfRequest = nil
	me := s.cfg.Myself
	if n == nil || s.cfg.Lookup(n.Name) != n || n.Master != me.Name || me.Flags&bus.FlagMaster == 0 {
		return
	}
	s.resetManualFailover()
	s.fo.mfEnd = nowMs() + mfTimeout
	s.fo.mfReplica = n
	s.opt.Logf('#', "Manual failover requested by replica %.40s.", n.Name[:])
	l := n.link
	if l == nil {
		l = n.inLink
	}
	if l != nil {
		s.sendPing(l, bus.Ping)
	}
}

// handleReplicaFailover runs a replica's election in the place of its
// failed master, or of its master in a manual failover
// (clusterHandleSlaveFailover): after a delay that grows with its rank
// among the replicas, it asks the masters for their votes in a new
// epoch, and with a majority takes its master's slots. dataAge is
// Replication.MasterDataAge. Under mu.
func (s *State) handleReplicaFailover(dataAge int64) {
	fo := &s.fo
	me := s.cfg.Myself
	now := nowMs()
	authAge := now - fo.authTime
	needed := s.size/2 + 1
	manual := fo.mfEnd != 0 && fo.mfCanStart
	timeout := s.opt.NodeTimeout.Milliseconds()
	authTimeout := max(timeout*2, 2000)
	authRetry := authTimeout * 2

	master := s.cfg.Lookup(me.Master)
	if me.Flags&bus.FlagMaster != 0 || master == nil || (master.Flags&bus.FlagFail == 0 && !manual) ||
		(s.opt.ReplicaNoFailover && !manual) || master.numSlots() == 0 {
		fo.cantReason = cantNone
		return
	}

	// Being cut off from the master for the time it took to find it
	// failing is the baseline.
	if dataAge > timeout {
		dataAge -= timeout
	}
	if f := int64(s.opt.ReplicaValidityFactor); f != 0 && dataAge > s.opt.ReplPingPeriod.Milliseconds()+timeout*f && !manual {
		s.logCantFailover(cantDataAge, master)
		return
	}

	if authAge > authRetry {
		// A new election: 500 ms for the FAIL to spread, a random part
		// so that replicas do not start together, a second per replica
		// with a better offset; none for a manual failover.
		fo.authTime = now + 500 + rand.Int64N(500)
		fo.authCount, fo.authSent = 0, false
		fo.authRank = s.replicaRank(master)
		fo.authTime += int64(fo.authRank) * 1000
		if fo.mfEnd != 0 {
			fo.authTime, fo.authRank = now, 0
		}
		s.opt.Logf('#', "Start of election delayed for %d milliseconds (rank #%d, offset %d).",
			fo.authTime-now, fo.authRank, s.opt.Offset())
		// The other replicas learn this one's offset, and rank
		// themselves by it.
		s.broadcastPong(true)
		return
	}

	if !fo.authSent && fo.mfEnd == 0 {
		if rank := s.replicaRank(master); rank > fo.authRank {
			added := int64(rank-fo.authRank) * 1000
			fo.authTime += added
			fo.authRank = rank
			s.opt.Logf('#', "Replica rank updated to #%d, added %d milliseconds of delay.", rank, added)
		}
	}
	if now < fo.authTime {
		s.logCantFailover(cantWaitingDelay, master)
		return
	}
	if authAge > authTimeout {
		s.logCantFailover(cantExpired, master)
		return
	}

	if !fo.authSent {
		s.cfg.CurrentEpoch++
		fo.authEpoch = s.cfg.CurrentEpoch
		s.opt.Logf('#', "Starting a failover election for epoch %d.", s.cfg.CurrentEpoch)
		s.requestFailoverAuth()
		fo.authSent = true
		s.todoSave, s.stateChanged = true, true
		return
	}

	if fo.authCount >= needed {
		s.opt.Logf('#', "Failover election won: I'm the new master.")
		if me.ConfigEpoch < fo.authEpoch {
			me.ConfigEpoch = fo.authEpoch
			s.opt.Logf('#', "configEpoch set to %d after successful failover", me.ConfigEpoch)
		}
		s.replaceYourMaster()
		return
	}
	s.logCantFailover(cantWaitingVotes, master)
}

// requestFailoverAuth asks every node for its vote
// (clusterRequestFailoverAuth); only masters answer. A manual failover's
// request asks for a vote though the master is up. Under mu.
func (s *State) requestFailoverAuth() {
	h := s.header(bus.FailoverAuthRequest)
	if s.fo.mfEnd != 0 {
		h.MFlags[0] |= bus.MFlagForceAck
	}
	s.broadcast((&bus.Message{Header: h}).Append(nil))
}

// replicaRank is how many of master's other replicas that may fail over
// have a greater replication offset than this node (clusterGetSlaveRank).
// Under mu.
func (s *State) replicaRank(master *Node) int {
	mine := s.opt.Offset()
	rank := 0
	for _, r := range s.cfg.Replicas(master) {
		if r != s.cfg.Myself && r.Flags&bus.FlagNoFailover == 0 && r.ReplOffset > mine {
			rank++
		}
	}
	return rank
}

// logCantFailover logs why the replica does not fail over
// (clusterLogCantFailover): on a new reason or after a period, and only
// once the master failed longer ago than the node timeout and five
// seconds. Under mu.
func (s *State) logCantFailover(reason int, master *Node) {
	fo := &s.fo
	now := nowMs()
	if reason == fo.cantReason && now-fo.cantLogged < cantFailoverRelog {
		return
	}
	fo.cantReason = reason
	if master.Flags&bus.FlagFail != 0 && now-master.failTime < s.opt.NodeTimeout.Milliseconds()+5000 {
		return
	}
	msg := "Unknown reason code."
	switch reason {
	case cantDataAge:
		msg = "Disconnected from master for longer than allowed. Please check the 'cluster-replica-validity-factor' configuration option."
	case cantWaitingDelay:
		msg = "Waiting the delay before I can start a new failover."
	case cantExpired:
		msg = "Failover attempt expired."
	case cantWaitingVotes:
		msg = "Waiting for votes, but majority still not reached."
	}
	fo.cantLogged = now
	s.opt.Logf('#', "Currently unable to failover: %s", msg)
}

// okReplicas counts n's replicas not failing
// (clusterCountNonFailingSlaves). Under mu.
func (s *State) okReplicas(n *Node) int {
	c := 0
	for _, r := range s.cfg.Replicas(n) {
		if r.Flags&bus.FlagFail == 0 {
			c++
		}
	}
	return c
}

// replicaMigrationIfNeeded is clusterCron's test for replica migration:
// a master serving slots has no working replica though it had some, and
// this node's master has the most working replicas, two or more.
// Under mu.
func (s *State) replicaMigrationIfNeeded() {
	if !s.opt.AllowReplicaMigration {
		return
	}
	me := s.cfg.Myself
	orphaned, maxReplicas, mine := 0, 0, 0
	for _, n := range s.cfg.Nodes {
		if n.Flags&(bus.FlagMyself|bus.FlagNoAddr|bus.FlagHandshake) != 0 ||
			n.Flags&bus.FlagMaster == 0 || n.Flags&bus.FlagFail != 0 {
			continue
		}
		ok := s.okReplicas(n)
		if ok == 0 && n.numSlots() > 0 && n.Flags&bus.FlagMigrateTo != 0 {
			orphaned++
		}
		maxReplicas = max(maxReplicas, ok)
		if me.Master == n.Name {
			mine = ok
		}
	}
	if orphaned > 0 && maxReplicas >= 2 && mine == maxReplicas {
		s.handleReplicaMigration(maxReplicas)
	}
}

// handleReplicaMigration moves this replica to an orphaned master
// (clusterHandleSlaveMigration): when the cluster is ok, its master keeps
// more than cluster-migration-barrier working replicas, it has the
// smallest name among the replicas of the masters with the most, and
// the master has been orphaned for a while. Under mu.
func (s *State) handleReplicaMigration(maxReplicas int) {
	if s.state != stateOK {
		return
	}
	me := s.cfg.Myself
	mine := s.cfg.Lookup(me.Master)
	if mine == nil {
		return
	}
	ok := 0
	for _, r := range s.cfg.Replicas(mine) {
		if r.Flags&(bus.FlagFail|bus.FlagPFail) == 0 {
			ok++
		}
	}
	if ok <= s.opt.MigrationBarrier {
		return
	}
	now := nowMs()
	candidate := me
	var target *Node
	for _, n := range s.cfg.Nodes {
		okReplicas := 0
		orphaned := n.Flags&bus.FlagReplica == 0 && n.Flags&bus.FlagFail == 0 && n.Flags&bus.FlagMigrateTo != 0
		if n.Flags&bus.FlagMaster != 0 {
			okReplicas = s.okReplicas(n)
		}
		if okReplicas > 0 {
			orphaned = false
		}
		if orphaned {
			if target == nil && n.numSlots() > 0 {
				target = n
			}
			if n.orphanedTime == 0 {
				n.orphanedTime = now
			}
		} else {
			n.orphanedTime = 0
		}
		if okReplicas == maxReplicas {
			for _, r := range s.cfg.Replicas(n) {
				if bytes.Compare(r.Name[:], candidate.Name[:]) < 0 {
					candidate = r
				}
			}
		}
	}
	if target != nil && candidate == me && now-target.orphanedTime > migrationDelay {
		s.opt.Logf('#', "Migrating to orphaned master %.40s", target.Name[:])
		s.setMaster(target)
	}
}

// Replicate is CLUSTER REPLICATE: this node becomes a replica of the
// master named, or moves to it from another master (clusterSetMaster).
// keys is the number of keys in database 0: a master must have none,
// nor slots. It returns Redis's error text, "" when done. With the
// keyspace lock held.
func (s *State) Replicate(name []byte, keys int) string {
	s.mu.Lock()
	n := s.lookupArg(name)
	me := s.cfg.Myself
	refusal := ""
	switch {
	case n == nil:
		refusal = "Unknown node " + string(name)
	case n == me:
		refusal = "Can't replicate myself"
	case n.Flags&bus.FlagReplica != 0:
		refusal = "I can only replicate a master, not a replica."
	case me.Flags&bus.FlagMaster != 0 && (me.numSlots() != 0 || keys != 0):
		refusal = "To set a master the node must be empty and without assigned slots."
	}
	if refusal != "" {
		s.mu.Unlock()
		return refusal
	}
	s.setMaster(n)
	s.updateState()
	s.applyRole()
	s.saveConfig()
	return ""
}

// Failover is CLUSTER FAILOVER [FORCE|TAKEOVER] on a replica: a manual
// failover, in which the master holds its writes until this node applied
// them all and the masters vote though the master is up; with force, no
// wait for the master; with takeover, no vote either: a new config epoch
// taken without consensus. It returns Redis's error text, "" when
// started. With the keyspace lock held.
func (s *State) Failover(force, takeover bool) string {
	s.mu.Lock()
	me := s.cfg.Myself
	master := s.cfg.Lookup(me.Master)
	refusal := ""
	switch {
	case me.Flags&bus.FlagMaster != 0:
		refusal = "You should send CLUSTER FAILOVER to a replica"
	case master == nil:
		refusal = "I'm a replica but my master is unknown to me"
	case !force && (master.Flags&bus.FlagFail != 0 || master.link == nil):
		refusal = "Master is down or failed, please use CLUSTER FAILOVER FORCE"
	}
	if refusal != "" {
		s.mu.Unlock()
		return refusal
	}
	s.resetManualFailover()
	s.fo.mfEnd = nowMs() + mfTimeout
	switch {
	case takeover:
		s.opt.Logf('#', "Taking over the master (user request).")
		s.bumpEpoch()
		s.replaceYourMaster()
	case force:
		s.opt.Logf('#', "Forced failover user request accepted.")
		s.fo.mfCanStart = true
	default:
		s.opt.Logf('#', "Manual failover user request accepted.")
		master.link.send((&bus.Message{Header: s.header(bus.MFStart)}).Append(nil))
	}
	s.applyRole()
	return ""
}

// IsReplica reports whether this node is a replica in the cluster.
func (s *State) IsReplica() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cfg.Myself.Flags&bus.FlagReplica != 0
}

// updateMyselfFlags keeps this node's nofailover flag as
// cluster-replica-no-failover says (clusterUpdateMyselfFlags). Under mu.
func (s *State) updateMyselfFlags() {
	me := s.cfg.Myself
	old := me.Flags
	me.Flags &^= bus.FlagNoFailover
	if s.opt.ReplicaNoFailover {
		me.Flags |= bus.FlagNoFailover
	}
	if me.Flags != old {
		s.todoSave = true
	}
}
