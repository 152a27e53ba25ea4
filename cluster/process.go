package cluster

import (
	"bytes"
	"net"
	"net/netip"

	"github.com/zredis/zredis/cluster/bus"
)

// process handles one message a link read (clusterProcessPacket). It
// reports whether the message is one published elsewhere for this
// node's subscribers, which the caller delivers off the lock. Under mu.
func (s *State) process(l *link, m *bus.Message) (deliver bool) {
	now := nowMs()
	h := &m.Header
	if h.Type.Known() {
		s.received[h.Type]++
	}
	me := s.cfg.Myself
	sender := s.senderOf(l, h)
	if sender != nil {
		sender.dataReceived = now
	}
	if sender != nil && sender.Flags&bus.FlagHandshake == 0 {
		if h.CurrentEpoch > s.cfg.CurrentEpoch {
			s.cfg.CurrentEpoch = h.CurrentEpoch
		}
		if h.ConfigEpoch > sender.ConfigEpoch {
			sender.ConfigEpoch = h.ConfigEpoch
			s.todoSave = true
		}
		sender.ReplOffset = int64(h.Offset)
		// A replica in a manual failover learns the offset its master
		// paused at.
		if fo := &s.fo; fo.mfEnd != 0 && me.Flags&bus.FlagReplica != 0 && me.Master == sender.Name &&
			h.MFlags[0]&bus.MFlagPaused != 0 && fo.mfMasterOffset == -1 {
			fo.mfMasterOffset = sender.ReplOffset
			fo.dirty = true
			s.opt.Logf('#', "Received replication offset for paused master manual failover: %d", fo.mfMasterOffset)
		}
	}

	switch h.Type {
	case bus.Ping, bus.Meet:
		// A MEET tells this node the address the others reach it by
		// (or a PING while it has none).
		if (h.Type == bus.Meet || me.IP == "") && s.opt.AnnounceIP == "" {
			if ip := hostOf(l.conn.LocalAddr()); ip != "" && ip != me.IP {
				me.IP = ip
				s.opt.Logf('#', "IP address for this node updated to %s", ip)
				s.todoSave = true
			}
		}
		if sender == nil && h.Type == bus.Meet {
			n := &Node{Name: randomName(), Flags: bus.FlagHandshake, ctime: now,
				IP: s.ipOf(l, h.IP), Port: int(h.Port), PPort: int(h.PPort), CPort: int(h.CPort)}
			s.cfg.Nodes = append(s.cfg.Nodes, n)
			s.todoSave = true
			// The MEET's gossip is trusted: the sender was told to
			// meet this node.
			s.processGossip(l, m, nil)
		}
		s.sendPing(l, bus.Pong)
	}

	switch h.Type {
	case bus.Ping, bus.Pong, bus.Meet:
		if !l.inbound {
			n := l.node
			if n.Flags&bus.FlagHandshake != 0 {
				if sender != nil {
					// A node met twice: the known one keeps its name.
					s.opt.Logf('.', "Handshake: we already know node %.40s, updating the address if needed.", sender.Name[:])
					s.updateAddress(sender, l, h)
					s.delNode(n)
					return
				}
				n.Name = h.Sender
				n.Flags &^= bus.FlagHandshake
				n.Flags |= h.Flags & (bus.FlagMaster | bus.FlagReplica)
				s.todoSave = true
			} else if n.Name != h.Sender {
				n.Flags |= bus.FlagNoAddr
				n.IP, n.Port, n.PPort, n.CPort = "", 0, 0, 0
				s.freeLink(l)
				s.todoSave = true
				return
			}
		}
		if sender != nil {
			sender.Flags = sender.Flags&^bus.FlagNoFailover | h.Flags&bus.FlagNoFailover
		}
		if sender != nil && h.Type == bus.Ping && sender.Flags&bus.FlagHandshake == 0 {
			s.updateAddress(sender, l, h)
		}
		if !l.inbound && h.Type == bus.Pong {
			n := l.node
			n.PongReceived, n.PingSent = now, 0
			if n.Flags&bus.FlagPFail != 0 {
				n.Flags &^= bus.FlagPFail
				s.todoSave, s.stateChanged = true, true
			} else if n.Flags&bus.FlagFail != 0 {
				s.clearFailureIfNeeded(n)
			}
		}
		if sender != nil {
			if h.ReplicaOf.IsZero() {
				s.setAsMaster(sender)
			} else {
				if sender.Flags&bus.FlagMaster != 0 {
					s.delNodeSlots(sender)
					sender.Flags &^= bus.FlagMaster | bus.FlagMigrateTo
					sender.Flags |= bus.FlagReplica
					s.todoSave, s.stateChanged = true, true
				}
				if master := s.cfg.Lookup(h.ReplicaOf); master != nil && sender.Master != master.Name {
					s.moveReplica(sender, master)
					s.todoSave = true
				}
			}
		}
		var senderMaster *Node
		dirty := false
		if sender != nil {
			senderMaster = sender
			if sender.Flags&bus.FlagMaster == 0 {
				senderMaster = s.cfg.Lookup(sender.Master)
			}
			if senderMaster != nil {
				dirty = senderMaster.Slots != h.Slots
			}
		}
		if sender != nil && sender.Flags&bus.FlagMaster != 0 && dirty {
			s.updateSlotsConfigWith(sender, h.ConfigEpoch, &h.Slots)
		}
		if sender != nil && dirty {
			// The sender claims slots a newer configuration gave to
			// another node: it is told (clusterSendUpdate).
			for j := 0; j < Slots; j++ {
				if !h.Slots.Has(j) || s.slots[j] == sender || s.unclaimed(j) {
					continue
				}
				if owner := s.slots[j]; owner.ConfigEpoch > h.ConfigEpoch {
					s.opt.Logf('.', "Node %.40s has old slots configuration, sending an UPDATE message about %.40s", sender.Name[:], owner.Name[:])
					if sender.link != nil {
						// Not the slots the owner stopped claiming: that
						// it still serves them is not known.
						slots := owner.Slots
						for i := range slots {
							slots[i] &^= s.notClaiming[i]
						}
						sender.link.send((&bus.Message{Header: s.header(bus.Update), UpdateEpoch: owner.ConfigEpoch,
							UpdateNode: owner.Name, UpdateSlots: slots}).Append(nil))
					}
					break
				}
			}
		}
		if sender != nil && me.Flags&bus.FlagMaster != 0 && sender.Flags&bus.FlagMaster != 0 && h.ConfigEpoch == me.ConfigEpoch {
			s.handleEpochCollision(sender)
		}
		if sender != nil {
			s.processGossip(l, m, sender)
			if m.Hostname != sender.Hostname {
				sender.Hostname = m.Hostname
				s.todoSave, s.routesDirty = true, true
			}
		}

	case bus.Fail:
		if sender == nil {
			s.opt.Logf('-', "Ignoring FAIL message from unknown node %.40s about %.40s", h.Sender[:], m.About[:])
			return
		}
		if n := s.cfg.Lookup(m.About); n != nil && n.Flags&(bus.FlagFail|bus.FlagMyself) == 0 {
			s.opt.Logf('-', "FAIL message received from %.40s about %.40s", h.Sender[:], m.About[:])
			n.Flags = n.Flags&^bus.FlagPFail | bus.FlagFail
			n.failTime = now
			s.todoSave, s.stateChanged = true, true
		}

	case bus.Update:
		if sender == nil {
			return
		}
		n := s.cfg.Lookup(m.UpdateNode)
		if n == nil || n.ConfigEpoch >= m.UpdateEpoch {
			return
		}
		if n.Flags&bus.FlagReplica != 0 {
			s.setAsMaster(n)
		}
		n.ConfigEpoch = m.UpdateEpoch
		s.todoSave = true
		s.updateSlotsConfigWith(n, m.UpdateEpoch, &m.UpdateSlots)

	case bus.FailoverAuthRequest:
		if sender != nil {
			s.voteIfNeeded(sender, h)
		}

	case bus.FailoverAuthAck:
		// A vote counts from a master serving slots, in the epoch of
		// this node's election or later.
		if sender != nil && sender.Flags&bus.FlagMaster != 0 && sender.numSlots() > 0 && h.CurrentEpoch >= s.fo.authEpoch {
			s.fo.authCount++
			s.fo.dirty = true
		}

	case bus.MFStart:
		// A replica of this master asks for a manual failover; roleStep
		// holds the writes, then gives the offset.
		if sender != nil && sender.Flags&bus.FlagReplica != 0 && sender.Master == me.Name {
			s.fo.mfRequest = sender
			s.fo.dirty = true
		}

	case bus.Publish, bus.PublishShard:
		return sender != nil // Redis drops what an unknown node sends

	case bus.Module:
		// Not acted on: a zredis node has no module to hand it to.

	default:
		s.opt.Logf('#', "Received unknown packet type: %d", h.Type)
	}
	return false
}

// senderOf is the node that sent a message on l (getNodeFromLinkAndMsg):
// an outbound link's node once its handshake is over, else the node the
// header names, which an inbound link is then bound to.
func (s *State) senderOf(l *link, h *bus.Header) *Node {
	if l.node != nil && l.node.Flags&bus.FlagHandshake == 0 {
		return l.node
	}
	n := s.cfg.Lookup(h.Sender)
	if n != nil && l.inbound && l.node == nil {
		if n.inLink != nil && n.inLink != l {
			s.freeLink(n.inLink)
		}
		n.inLink, l.node = l, n
	}
	return n
}

// ipOf is the address of a message's sender: the one it announces, else
// the link's peer (nodeIp2String).
func (s *State) ipOf(l *link, announced string) string {
	if announced != "" {
		return announced
	}
	return hostOf(l.conn.RemoteAddr())
}

func hostOf(a net.Addr) string {
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return ""
	}
	return host
}

// updateAddress takes a node's new address from a message on an inbound
// link (nodeUpdateAddressIfNeeded): its outbound link is then remade.
func (s *State) updateAddress(n *Node, l *link, h *bus.Header) {
	if n == s.cfg.Myself || l == n.link {
		return
	}
	ip := s.ipOf(l, h.IP)
	if n.IP == ip && n.Port == int(h.Port) && n.CPort == int(h.CPort) && n.PPort == int(h.PPort) {
		return
	}
	n.IP, n.Port, n.CPort, n.PPort = ip, int(h.Port), int(h.CPort), int(h.PPort)
	if n.link != nil {
		s.freeLink(n.link)
	}
	n.Flags &^= bus.FlagNoAddr
	s.opt.Logf('#', "Address updated for node %.40s, now %s:%d", n.Name[:], ip, n.Port)
	if me := s.cfg.Myself; me.Flags&bus.FlagReplica != 0 && me.Master == n.Name {
		s.fo.reconnect, s.fo.dirty = true, true // replicationSetMaster to the new address
	}
	s.routesDirty = true
	s.todoSave, s.stateChanged = true, true
}

// processGossip reads a PING, PONG or MEET's gossip entries
// (clusterProcessGossipSection): failure reports from masters, pong
// times, addresses, and the nodes this node did not know.
func (s *State) processGossip(l *link, m *bus.Message, sender *Node) {
	now := nowMs()
	me := s.cfg.Myself
	for i := range m.Gossip {
		g := &m.Gossip[i]
		n := s.cfg.Lookup(g.Name)
		if n == nil {
			if sender != nil && g.Flags&bus.FlagNoAddr == 0 && validName(string(g.Name[:])) && !s.blacklisted(g.Name) {
				s.cfg.Nodes = append(s.cfg.Nodes, &Node{Name: g.Name, Flags: g.Flags &^ bus.FlagMyself, ctime: now,
					IP: g.IP, Port: int(g.Port), PPort: int(g.PPort), CPort: int(g.CPort)})
			}
			continue
		}
		if sender != nil && sender.Flags&bus.FlagMaster != 0 && n != me {
			if g.Flags&(bus.FlagFail|bus.FlagPFail) != 0 {
				if n.reports == nil {
					n.reports = map[bus.Name]int64{}
				}
				if _, had := n.reports[sender.Name]; !had {
					s.opt.Logf('.', "Node %.40s reported node %.40s as not reachable.", sender.Name[:], n.Name[:])
				}
				n.reports[sender.Name] = now
				s.markFailingIfNeeded(n)
			} else if _, had := n.reports[sender.Name]; had {
				delete(n.reports, sender.Name)
				s.opt.Logf('.', "Node %.40s reported node %.40s is back online.", sender.Name[:], n.Name[:])
			}
		}
		if g.Flags&(bus.FlagFail|bus.FlagPFail) == 0 && n.PingSent == 0 && s.failureReports(n) == 0 {
			if pong := int64(g.PongReceived) * 1000; pong <= now+500 && pong > n.PongReceived {
				n.PongReceived = pong
			}
		}
		if n.Flags&(bus.FlagFail|bus.FlagPFail) != 0 && g.Flags&(bus.FlagNoAddr|bus.FlagFail|bus.FlagPFail) == 0 &&
			(n.IP != g.IP || n.Port != int(g.Port) || n.CPort != int(g.CPort)) {
			if n.link != nil {
				s.freeLink(n.link)
			}
			n.IP, n.Port, n.PPort, n.CPort = g.IP, int(g.Port), int(g.PPort), int(g.CPort)
			n.Flags &^= bus.FlagNoAddr
		}
	}
}

// failureReports counts the reports on n still valid: made within twice
// the node timeout (clusterNodeCleanupFailureReports).
func (s *State) failureReports(n *Node) int {
	maxAge := 2 * s.opt.NodeTimeout.Milliseconds()
	now := nowMs()
	for name, at := range n.reports {
		if now-at > maxAge {
			delete(n.reports, name)
		}
	}
	return len(n.reports)
}

// markFailingIfNeeded turns a node this node cannot reach into a failed
// one once a majority of the masters serving slots agrees
// (markNodeAsFailingIfNeeded), and tells every node.
func (s *State) markFailingIfNeeded(n *Node) {
	if n.Flags&bus.FlagPFail == 0 || n.Flags&bus.FlagFail != 0 {
		return
	}
	failures := s.failureReports(n)
	if s.cfg.Myself.Flags&bus.FlagMaster != 0 {
		failures++
	}
	if failures < s.size/2+1 {
		return
	}
	s.opt.Logf('-', "Marking node %.40s as failing (quorum reached).", n.Name[:])
	n.Flags = n.Flags&^bus.FlagPFail | bus.FlagFail
	n.failTime = nowMs()
	msg := (&bus.Message{Header: s.header(bus.Fail), About: n.Name}).Append(nil)
	s.broadcast(msg)
	s.todoSave, s.stateChanged = true, true
}

// clearFailureIfNeeded lifts a failure mark from a node reachable again
// (clearNodeFailureIfNeeded): at once for a replica or a master without
// slots; for a master with slots, only when nobody took them over in
// twice the node timeout.
func (s *State) clearFailureIfNeeded(n *Node) {
	if n.Flags&bus.FlagReplica != 0 || n.numSlots() == 0 {
		what := "master without slots"
		if n.Flags&bus.FlagReplica != 0 {
			what = "replica"
		}
		s.opt.Logf('-', "Clear FAIL state for node %.40s: %s is reachable again.", n.Name[:], what)
		n.Flags &^= bus.FlagFail
		s.todoSave, s.stateChanged = true, true
	}
	if n.Flags&bus.FlagMaster != 0 && n.numSlots() > 0 && nowMs()-n.failTime > 2*s.opt.NodeTimeout.Milliseconds() {
		s.opt.Logf('-', "Clear FAIL state for node %.40s: is reachable again and nobody is serving its slots after some time.", n.Name[:])
		n.Flags &^= bus.FlagFail
		s.todoSave, s.stateChanged = true, true
	}
}

// numSlots is how many slots n claims.
func (n *Node) numSlots() int { return n.Slots.Count() }

// setAsMaster records that n is a master (clusterSetNodeAsMaster): a
// replica that took over is marked as a master replicas may migrate to,
// and its former master, left without replicas, no longer is.
func (s *State) setAsMaster(n *Node) {
	if n.Flags&bus.FlagMaster != 0 {
		return
	}
	old := s.cfg.Lookup(n.Master)
	if !n.Master.IsZero() && n != s.cfg.Myself {
		n.Flags |= bus.FlagMigrateTo
	}
	n.Flags = n.Flags&^bus.FlagReplica | bus.FlagMaster
	n.Master = bus.Name{}
	if old != nil && len(s.cfg.Replicas(old)) == 0 {
		old.Flags &^= bus.FlagMigrateTo // clusterNodeRemoveSlave
	}
	s.todoSave, s.stateChanged, s.routesDirty = true, true, true
}

// moveReplica records that replica r now replicates master
// (clusterNodeRemoveSlave, clusterNodeAddSlave): a master with replicas
// is one replicas may migrate to once it has none working, a master left
// without any is not. Under mu.
func (s *State) moveReplica(r, master *Node) {
	if old := s.cfg.Lookup(r.Master); old != nil && old != master {
		r.Master = bus.Name{}
		if len(s.cfg.Replicas(old)) == 0 {
			old.Flags &^= bus.FlagMigrateTo
		}
	}
	r.Master = master.Name
	master.Flags |= bus.FlagMigrateTo
}

// mastersHaveReplicas reports whether some master has a replica
// (clusterMastersHaveSlaves). Under mu.
func (s *State) mastersHaveReplicas() bool {
	for _, n := range s.cfg.Nodes {
		if n.Flags&bus.FlagReplica != 0 && !n.Master.IsZero() {
			if m := s.cfg.Lookup(n.Master); m != nil && m.Flags&bus.FlagReplica == 0 {
				return true
			}
		}
	}
	return false
}

// addSlot gives slot to n (clusterAddSlot); false if it has an owner. A
// master's first slot makes it one replicas may migrate to, when other
// masters have replicas (clusterNodeSetSlotBit).
func (s *State) addSlot(n *Node, slot int) bool {
	if s.slots[slot] != nil {
		return false
	}
	if n.Slots == (bus.Bitmap{}) && s.mastersHaveReplicas() {
		n.Flags |= bus.FlagMigrateTo
	}
	n.Slots.Set(slot)
	s.setOwner(slot, n)
	return true
}

// unclaimed reports whether slot has no owner, or one that stopped
// claiming it (isSlotUnclaimed).
func (s *State) unclaimed(slot int) bool {
	return s.slots[slot] == nil || s.notClaiming.Has(slot)
}

// setOwner records n (nil: none) as the master serving slot. Every
// change of s.slots goes through it: the routing and the owner table
// are rebuilt from it.
func (s *State) setOwner(slot int, n *Node) {
	s.slots[slot] = n
	s.routesDirty, s.ownersStale = true, true
}

// delSlot takes slot from its owner (clusterDelSlot).
func (s *State) delSlot(slot int) bool {
	n := s.slots[slot]
	if n == nil {
		return false
	}
	n.Slots.Clear(slot)
	s.setOwner(slot, nil)
	return true
}

// delNodeSlots takes every slot from n (clusterDelNodeSlots).
func (s *State) delNodeSlots(n *Node) {
	for j := 0; j < Slots; j++ {
		if s.slots[j] == n {
			s.delSlot(j)
		}
	}
}

// delNode forgets n (clusterDelNode): its slots, the failure reports it
// made, its links.
func (s *State) delNode(n *Node) {
	for j := 0; j < Slots; j++ {
		if s.slots[j] == n {
			s.setOwner(j, nil)
		}
	}
	// A slot moving to or from a forgotten node is not moving any more.
	for j, name := range s.cfg.Migrating {
		if name == n.Name {
			delete(s.cfg.Migrating, j)
			s.routesDirty = true
		}
	}
	for j, name := range s.cfg.Importing {
		if name == n.Name {
			delete(s.cfg.Importing, j)
			s.routesDirty = true
		}
	}
	for _, o := range s.cfg.Nodes {
		delete(o.reports, n.Name)
	}
	if n.link != nil {
		s.freeLink(n.link)
	}
	if n.inLink != nil {
		s.freeLink(n.inLink)
	}
	for i, o := range s.cfg.Nodes {
		if o == n {
			s.cfg.Nodes = append(s.cfg.Nodes[:i], s.cfg.Nodes[i+1:]...)
			break
		}
	}
	if m := s.cfg.Lookup(n.Master); m != nil && n.Flags&bus.FlagReplica != 0 && len(s.cfg.Replicas(m)) == 0 {
		m.Flags &^= bus.FlagMigrateTo
	}
	s.todoSave, s.stateChanged = true, true
}

// updateSlotsConfigWith takes the slots sender claims with a config epoch
// newer than their owner's (clusterUpdateSlotsConfigWith). When this
// node's master (or this node, a master) lost its last slot to sender,
// this node becomes a replica of sender: a master failed over while it
// was cut off follows the replica that replaced it, and a replica follows
// its master's slots. Otherwise a master gives up the slots it lost, and
// their keys (lostSlots).
func (s *State) updateSlotsConfigWith(sender *Node, epoch uint64, slots *bus.Bitmap) {
	me := s.cfg.Myself
	if sender == me {
		s.opt.Logf('#', "Discarding UPDATE message about myself.")
		return
	}
	curMaster := me
	if me.Flags&bus.FlagMaster == 0 {
		curMaster = s.cfg.Lookup(me.Master)
	}
	var newMaster *Node
	var dirty []int
	senderSlots, migrated := 0, 0
	for j := 0; j < Slots; j++ {
		if !slots.Has(j) {
			if s.slots[j] == sender {
				// The owner stopped claiming the slot: it stays bound
				// (clients are redirected, not refused) but another
				// master may take it whatever its epoch.
				s.notClaiming.Set(j)
			}
			continue
		}
		senderSlots++
		if s.slots[j] == sender {
			s.notClaiming.Clear(j)
			continue
		}
		if _, importing := s.cfg.Importing[j]; importing {
			continue
		}
		if owner := s.slots[j]; s.unclaimed(j) || owner.ConfigEpoch < epoch {
			if owner == me {
				dirty = append(dirty, j)
			}
			if owner != nil && owner == curMaster {
				newMaster = sender
				migrated++
			}
			s.delSlot(j)
			s.addSlot(sender, j)
			s.notClaiming.Clear(j)
			s.todoSave, s.stateChanged = true, true
		}
	}
	switch {
	case newMaster != nil && curMaster.numSlots() == 0 && (s.opt.AllowReplicaMigration || senderSlots == migrated):
		s.opt.Logf('#', "Configuration change detected. Reconfiguring myself as a replica of %.40s", sender.Name[:])
		s.setMaster(sender)
	case me.Flags&bus.FlagReplica != 0 && s.grandMaster() != nil:
		// A replica whose master became a replica follows the master
		// above it.
		gm := s.grandMaster()
		s.opt.Logf('#', "I'm a sub-replica! Reconfiguring myself as a replica of grandmaster %.40s", gm.Name[:])
		s.setMaster(gm)
	default:
		s.lostSlots = append(s.lostSlots, dirty...)
	}
}

// grandMaster is the master of this replica's master when its master is
// a replica of another node than this one, else nil. Under mu.
func (s *State) grandMaster() *Node {
	m := s.cfg.Lookup(s.cfg.Myself.Master)
	if m == nil || m.Flags&bus.FlagReplica == 0 || m.Master.IsZero() || m.Master == s.cfg.Myself.Name {
		return nil
	}
	return s.cfg.Lookup(m.Master)
}

// handleEpochCollision gives this node a new config epoch when another
// master has the same one and a smaller name
// (clusterHandleConfigEpochCollision), so that every master ends with a
// config epoch of its own.
func (s *State) handleEpochCollision(sender *Node) {
	me := s.cfg.Myself
	if sender.ConfigEpoch != me.ConfigEpoch || sender.Flags&bus.FlagMaster == 0 || me.Flags&bus.FlagMaster == 0 {
		return
	}
	if bytes.Compare(sender.Name[:], me.Name[:]) <= 0 {
		return
	}
	s.cfg.CurrentEpoch++
	me.ConfigEpoch = s.cfg.CurrentEpoch
	s.todoSave = true
	s.opt.Logf('.', "WARNING: configEpoch collision with node %.40s (%s). configEpoch set to %d", sender.Name[:], sender.IP, me.ConfigEpoch)
}

// Delays of updateState (CLUSTER_WRITABLE_DELAY, CLUSTER_MIN_REJOIN_DELAY,
// CLUSTER_MAX_REJOIN_DELAY), in ms.
const (
	writableDelay  = 2000
	minRejoinDelay = 500
	maxRejoinDelay = 5000
)

// updateState recomputes the cluster's state (clusterUpdateState): ok
// when every slot is served by a master that is not failing (with
// cluster-require-full-coverage) and this node is in the majority of the
// masters.
func (s *State) updateState() {
	s.stateChanged = false
	now := nowMs()
	if s.firstUpdate == 0 {
		s.firstUpdate = now
	}
	me := s.cfg.Myself
	if me.Flags&bus.FlagMaster != 0 && s.state == stateFail && now-s.firstUpdate < writableDelay {
		return // CLUSTER_WRITABLE_DELAY: a master just started waits for the others' view
	}
	next := stateOK
	if s.opt.RequireFullCoverage {
		t := s.ownerTable()
		if t.unowned > 0 {
			next = stateFail
		}
		for _, n := range t.nodes {
			if n.Flags&bus.FlagFail != 0 {
				next = stateFail
			}
		}
	}
	size, reachable := 0, 0
	for _, n := range s.cfg.Nodes {
		if n.Flags&bus.FlagMaster != 0 && n.numSlots() > 0 {
			size++
			if n.Flags&(bus.FlagFail|bus.FlagPFail) == 0 {
				reachable++
			}
		}
	}
	s.size = size
	if reachable < size/2+1 {
		next = stateFail
		s.minoritySince = now
	}
	if next != s.state {
		// A master back from a minority partition waits before it
		// accepts writes again, so its clients see the failover the
		// majority may have done.
		rejoin := min(max(s.opt.NodeTimeout.Milliseconds(), minRejoinDelay), maxRejoinDelay)
		if next == stateOK && me.Flags&bus.FlagMaster != 0 && now-s.minoritySince < rejoin {
			return
		}
		word := "ok"
		if next == stateFail {
			word = "fail"
		}
		s.opt.Logf('#', "Cluster state changed: %s", word)
		s.state = next
		s.routesDirty = true
	}
}

// header is this node's message header of type t
// (clusterBuildMessageHdr): a replica sends its master's slots and
// config epoch.
func (s *State) header(t bus.Type) bus.Header {
	me := s.cfg.Myself
	h := bus.Header{Type: t, Sender: me.Name, Flags: me.Flags, State: s.state,
		Port: uint16(me.Port), CPort: uint16(me.CPort), PPort: uint16(me.PPort),
		CurrentEpoch: s.cfg.CurrentEpoch, ConfigEpoch: me.ConfigEpoch, Offset: uint64(s.opt.Offset())}
	if me.Flags&bus.FlagMaster != 0 && s.fo.mfEnd != 0 {
		h.MFlags[0] |= bus.MFlagPaused // the offset is the one writes are held at
	}
	master := me
	if me.Flags&bus.FlagReplica != 0 {
		h.ReplicaOf = me.Master
		if m := s.cfg.Lookup(me.Master); m != nil {
			master = m
		}
	}
	h.Slots = master.Slots
	h.ConfigEpoch = master.ConfigEpoch
	if s.opt.AnnounceIP != "" {
		h.IP = s.opt.AnnounceIP
	}
	return h
}

// sendPing sends a PING, PONG or MEET on l with gossip about a tenth of
// the nodes (at least three) and every node failing as this node sees
// it (clusterSendPing).
func (s *State) sendPing(l *link, t bus.Type) {
	if !l.inbound && t == bus.Ping {
		l.node.PingSent = nowMs()
	}
	m := &bus.Message{Header: s.header(t), Hostname: s.cfg.Myself.Hostname}
	wanted := max(len(s.cfg.Nodes)/10, 3)
	var pfail []*Node
	for _, i := range randPerm(len(s.cfg.Nodes)) {
		n := s.cfg.Nodes[i]
		if n.Flags&bus.FlagPFail != 0 {
			if n.Flags&(bus.FlagHandshake|bus.FlagNoAddr) == 0 {
				pfail = append(pfail, n)
			}
			continue
		}
		if len(m.Gossip) >= wanted || n == s.cfg.Myself || n.Flags&(bus.FlagHandshake|bus.FlagNoAddr) != 0 ||
			(n.link == nil && n.numSlots() == 0) {
			continue
		}
		m.Gossip = append(m.Gossip, gossipOf(n))
	}
	for _, n := range pfail {
		m.Gossip = append(m.Gossip, gossipOf(n))
	}
	l.send(m.Append(nil))
}

func gossipOf(n *Node) bus.Gossip {
	return bus.Gossip{Name: n.Name, PingSent: uint32(n.PingSent / 1000), PongReceived: uint32(n.PongReceived / 1000),
		IP: n.IP, Port: uint16(n.Port), CPort: uint16(n.CPort), PPort: uint16(n.PPort), Flags: n.Flags}
}

// broadcast sends msg to every node this node is linked to, and not in
// handshake (clusterBroadcastMessage).
func (s *State) broadcast(msg []byte) {
	for _, n := range s.cfg.Nodes {
		if n.link != nil && n.Flags&(bus.FlagMyself|bus.FlagHandshake) == 0 {
			n.link.send(msg)
		}
	}
}

// StateOK reports whether the cluster's state is ok as this node sees it.
func (s *State) StateOK() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state == stateOK
}

// voteIfNeeded grants a replica's request to be elected in its failed
// master's place (clusterSendFailoverAuthIfNeeded): this node, a master
// serving slots, votes once per epoch, not for a master, not while the
// master is up (unless the request forces it: a manual failover), not
// twice for one master within twice the node timeout, and not when the
// replica's configuration is older than a slot's owner's.
func (s *State) voteIfNeeded(n *Node, req *bus.Header) {
	me := s.cfg.Myself
	if me.Flags&bus.FlagMaster == 0 || me.numSlots() == 0 {
		return
	}
	if req.CurrentEpoch < s.cfg.CurrentEpoch {
		s.opt.Logf('#', "Failover auth denied to %.40s: reqEpoch (%d) < curEpoch(%d)", n.Name[:], req.CurrentEpoch, s.cfg.CurrentEpoch)
		return
	}
	if s.cfg.LastVoteEpoch == s.cfg.CurrentEpoch {
		s.opt.Logf('#', "Failover auth denied to %.40s: already voted for epoch %d", n.Name[:], s.cfg.CurrentEpoch)
		return
	}
	master := s.cfg.Lookup(n.Master)
	force := req.MFlags[0]&bus.MFlagForceAck != 0
	switch {
	case n.Flags&bus.FlagMaster != 0:
		s.opt.Logf('#', "Failover auth denied to %.40s: it is a master node", n.Name[:])
		return
	case master == nil:
		s.opt.Logf('#', "Failover auth denied to %.40s: I don't know its master", n.Name[:])
		return
	case master.Flags&bus.FlagFail == 0 && !force:
		s.opt.Logf('#', "Failover auth denied to %.40s: its master is up", n.Name[:])
		return
	}
	window := 2 * s.opt.NodeTimeout.Milliseconds()
	if since := nowMs() - master.votedTime; since < window {
		s.opt.Logf('#', "Failover auth denied to %.40s: can't vote about this master before %d milliseconds", n.Name[:], window-since)
		return
	}
	for j := 0; j < Slots; j++ {
		if !req.Slots.Has(j) || s.unclaimed(j) || s.slots[j].ConfigEpoch <= req.ConfigEpoch {
			continue
		}
		s.opt.Logf('#', "Failover auth denied to %.40s: slot %d epoch (%d) > reqEpoch (%d)", n.Name[:], j, s.slots[j].ConfigEpoch, req.ConfigEpoch)
		return
	}
	s.cfg.LastVoteEpoch = s.cfg.CurrentEpoch
	master.votedTime = nowMs()
	s.todoSave = true
	// The vote goes out once nodes.conf has it (the cron's write), as
	// Redis writes it before the next turn of its loop sends the ACK: a
	// node restarted after a crash must not vote twice in one epoch.
	s.votes = append(s.votes, n)
	s.opt.Logf('#', "Failover auth granted to %.40s for epoch %d", n.Name[:], s.cfg.CurrentEpoch)
}

// normalizeIP is an address as Redis keeps it after inet_pton and
// inet_ntop; false for one that is not an IP address.
func normalizeIP(ip string) (string, bool) {
	a, err := netip.ParseAddr(ip)
	if err != nil || a.Zone() != "" {
		return "", false
	}
	return a.Unmap().String(), true
}

// Publish sends a message published on this node to the others
// (clusterPropagatePublish): to every node, or for SPUBLISH to the nodes
// of this node's shard (clusterPropagatePublishShard).
func (s *State) Publish(channel, message []byte, shard bool) {
	t := bus.Publish
	if shard {
		t = bus.PublishShard
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	msg := (&bus.Message{Header: s.header(t), Channel: channel, Payload: message}).Append(nil)
	if !shard {
		s.broadcast(msg)
		return
	}
	me := s.cfg.Myself
	master := me
	if me.Flags&bus.FlagReplica != 0 {
		if master = s.cfg.Lookup(me.Master); master == nil {
			return
		}
	}
	for _, n := range append(s.cfg.Replicas(master), master) {
		if n != me && n.link != nil && n.Flags&bus.FlagHandshake == 0 {
			n.link.send(msg)
		}
	}
}
