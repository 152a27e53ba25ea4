package cluster

import (
	"fmt"
	"strings"
	"time"

	"github.com/zredis/zredis/cluster/bus"
	"github.com/zredis/zredis/resp"
)

// What the CLUSTER subcommands ask of the node: each method takes mu,
// and returns Redis's error text ("" when it succeeded) for the caller
// to reply with.

// blacklistTTL is how long a forgotten node is not re-added from gossip
// (CLUSTER_BLACKLIST_TTL).
const blacklistTTL = 60 * time.Second

// SlotRange is a run of slots, both ends included.
type SlotRange struct{ Start, End int }

// CheckSlots is checkSlotAssignmentsOrReply over ranges: for an ADDSLOTS
// every slot must be unowned, for a DELSLOTS owned, and none may appear
// twice.
func (s *State) CheckSlots(del bool, ranges []SlotRange) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var seen bus.Bitmap
	for _, r := range ranges {
		for j := r.Start; j <= r.End; j++ {
			if del && s.slots[j] == nil {
				return fmt.Sprintf("Slot %d is already unassigned", j)
			}
			if !del && s.slots[j] != nil {
				return fmt.Sprintf("Slot %d is already busy", j)
			}
			if seen.Has(j) {
				return fmt.Sprintf("Slot %d specified multiple times", j)
			}
			seen.Set(j)
		}
	}
	return ""
}

// UpdateSlots gives this node the slots of ranges, or takes them from
// their owners (clusterUpdateSlots), and writes nodes.conf.
func (s *State) UpdateSlots(del bool, ranges []SlotRange) {
	s.mu.Lock()
	for _, r := range ranges {
		for j := r.Start; j <= r.End; j++ {
			if del {
				s.delSlot(j)
				delete(s.cfg.Importing, j)
			} else {
				delete(s.cfg.Importing, j)
				s.addSlot(s.cfg.Myself, j)
			}
		}
	}
	s.todoSave, s.stateChanged = true, true
	s.updateState()
	s.unlock()
	s.saveConfig()
}

// AddSlots gives this node the slots, unowned (tests).
func (s *State) AddSlots(slots ...int) {
	ranges := make([]SlotRange, len(slots))
	for i, j := range slots {
		ranges[i] = SlotRange{j, j}
	}
	s.UpdateSlots(false, ranges)
}

// FlushSlots gives up every slot of this node (CLUSTER FLUSHSLOTS; the
// caller checked the database is empty).
func (s *State) FlushSlots() {
	s.mu.Lock()
	s.delNodeSlots(s.cfg.Myself)
	s.todoSave, s.stateChanged = true, true
	s.updateState()
	s.unlock()
	s.saveConfig()
}

// Meet starts a handshake with the node at ip:port, bus port cport
// (CLUSTER MEET, clusterStartHandshake); false for an address Redis
// refuses.
func (s *State) Meet(ip string, port, cport int64) bool {
	norm, ok := normalizeIP(ip)
	if !ok || port <= 0 || port > 65535 || cport <= 0 || cport > 65535 {
		return false
	}
	s.mu.Lock()
	defer s.unlock()
	for _, n := range s.cfg.Nodes {
		if n.Flags&bus.FlagHandshake != 0 && strings.EqualFold(n.IP, norm) && n.Port == int(port) && n.CPort == int(cport) {
			return true // in progress
		}
	}
	s.cfg.Nodes = append(s.cfg.Nodes, &Node{Name: randomName(), Flags: bus.FlagHandshake | bus.FlagMeet,
		IP: norm, Port: int(port), CPort: int(cport), ctime: nowMs()})
	return true
}

// SetConfigEpoch is CLUSTER SET-CONFIG-EPOCH: allowed only on a node that
// knows no other and has no config epoch yet.
func (s *State) SetConfigEpoch(e int64) string {
	s.mu.Lock()
	switch {
	case e < 0:
		s.mu.Unlock()
		return fmt.Sprintf("Invalid config epoch specified: %d", e)
	case len(s.cfg.Nodes) > 1:
		s.mu.Unlock()
		return "The user can assign a config epoch only when the node does not know any other node."
	case s.cfg.Myself.ConfigEpoch != 0:
		s.mu.Unlock()
		return "Node config epoch is already non-zero"
	}
	s.cfg.Myself.ConfigEpoch = uint64(e)
	s.opt.Logf('#', "configEpoch set to %d via CLUSTER SET-CONFIG-EPOCH", e)
	if s.cfg.CurrentEpoch < uint64(e) {
		s.cfg.CurrentEpoch = uint64(e)
	}
	s.todoSave, s.stateChanged = true, true
	s.unlock()
	s.saveConfig()
	return ""
}

// BumpEpoch is CLUSTER BUMPEPOCH (clusterBumpConfigEpochWithoutConsensus):
// a new config epoch unless this node's is already the greatest; the
// reply's word (BUMPED or STILL) and the epoch.
func (s *State) BumpEpoch() (string, uint64) {
	s.mu.Lock()
	word := "STILL"
	if s.bumpConfigEpochWithoutConsensus() {
		word = "BUMPED"
	}
	epoch := s.cfg.Myself.ConfigEpoch
	save := s.todoSave
	s.unlock()
	if save {
		s.saveConfig()
	}
	return word, epoch
}

// SaveConfig is CLUSTER SAVECONFIG.
func (s *State) SaveConfig() string {
	if err := s.saveConfig(); err != nil {
		return "error saving the cluster node config: " + err.Error()
	}
	return ""
}

// lookupArg is the node an argument names, as clusterLookupNode: nil
// for a name of the wrong length.
func (s *State) lookupArg(name []byte) *Node {
	if len(name) != bus.NameLen {
		return nil
	}
	var n bus.Name
	copy(n[:], name)
	return s.cfg.Lookup(n)
}

// Forget is CLUSTER FORGET: the node is dropped and not re-added from
// gossip for a minute.
func (s *State) Forget(name []byte) string {
	s.mu.Lock()
	n := s.lookupArg(name)
	switch {
	case n == nil:
		s.mu.Unlock()
		return "Unknown node " + string(name)
	case n == s.cfg.Myself:
		s.mu.Unlock()
		return "I tried hard but I can't forget myself..."
	case s.cfg.Myself.Flags&bus.FlagReplica != 0 && s.cfg.Myself.Master == n.Name:
		s.mu.Unlock()
		return "Can't forget my master!"
	}
	if s.blacklist == nil {
		s.blacklist = map[bus.Name]int64{}
	}
	s.blacklist[n.Name] = nowMs() + blacklistTTL.Milliseconds()
	s.delNode(n)
	s.updateState()
	s.unlock()
	s.saveConfig()
	return ""
}

// blacklisted reports whether a forgotten node's minute is not over.
// Under mu.
func (s *State) blacklisted(name bus.Name) bool {
	until, ok := s.blacklist[name]
	if ok && until < nowMs() {
		delete(s.blacklist, name)
		return false
	}
	return ok
}

// CountFailureReports is CLUSTER COUNT-FAILURE-REPORTS.
func (s *State) CountFailureReports(name []byte) (int, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.lookupArg(name)
	if n == nil {
		return 0, "Unknown node " + string(name)
	}
	return s.failureReports(n), ""
}

// Replicas is CLUSTER REPLICAS: the CLUSTER NODES lines of a master's
// replicas.
func (s *State) Replicas(name []byte, usePPort bool) ([]string, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.lookupArg(name)
	if n == nil {
		return nil, "Unknown node " + string(name)
	}
	if n.Flags&bus.FlagReplica != 0 {
		return nil, "The specified node is not a master"
	}
	var lines []string
	for _, r := range s.cfg.Replicas(n) {
		lines = append(lines, string(s.cfg.AppendNode(nil, r, usePPort)))
	}
	return lines, ""
}

// Nodes is CLUSTER NODES.
func (s *State) Nodes(usePPort bool) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cfg.AppendNodes(nil, 0, usePPort)
}

// ClusterNodes is CLUSTER NODES as a TLS client sees it.
func (s *State) ClusterNodes() []byte { return s.Nodes(false) }

// WriteSlots writes CLUSTER SLOTS.
func (s *State) WriteSlots(w *resp.Writer, usePPort bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cfg.WriteSlots(w, s.opt.Endpoint, usePPort, func(n *Node) bool {
		return n.Flags&bus.FlagFail == 0 && n.ReplOffset != 0
	})
}

// WriteShards writes CLUSTER SHARDS.
func (s *State) WriteShards(w *resp.Writer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cfg.WriteShards(w, s.opt.Endpoint, s.opt.TLS)
}

// Info is CLUSTER INFO's text.
func (s *State) Info() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	assigned, ok, pfail, fail := 0, 0, 0, 0
	for _, n := range s.slots {
		if n == nil {
			continue
		}
		assigned++
		switch {
		case n.Flags&bus.FlagFail != 0:
			fail++
		case n.Flags&bus.FlagPFail != 0:
			pfail++
		default:
			ok++
		}
	}
	me := s.cfg.Myself
	myEpoch := me.ConfigEpoch
	if me.Flags&bus.FlagReplica != 0 {
		if m := s.cfg.Lookup(me.Master); m != nil {
			myEpoch = m.ConfigEpoch
		}
	}
	state := "ok"
	if s.state == stateFail {
		state = "fail"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "cluster_state:%s\r\ncluster_slots_assigned:%d\r\ncluster_slots_ok:%d\r\ncluster_slots_pfail:%d\r\n"+
		"cluster_slots_fail:%d\r\ncluster_known_nodes:%d\r\ncluster_size:%d\r\ncluster_current_epoch:%d\r\ncluster_my_epoch:%d\r\n",
		state, assigned, ok, pfail, fail, len(s.cfg.Nodes), s.size, s.cfg.CurrentEpoch, myEpoch)
	var sent, received int64
	for t, n := range s.sent {
		if n != 0 {
			fmt.Fprintf(&b, "cluster_stats_messages_%s_sent:%d\r\n", bus.Type(t), n)
			sent += n
		}
	}
	fmt.Fprintf(&b, "cluster_stats_messages_sent:%d\r\n", sent)
	for t, n := range s.received {
		if n != 0 {
			fmt.Fprintf(&b, "cluster_stats_messages_%s_received:%d\r\n", bus.Type(t), n)
			received += n
		}
	}
	fmt.Fprintf(&b, "cluster_stats_messages_received:%d\r\n", received)
	fmt.Fprintf(&b, "total_cluster_links_buffer_limit_exceeded:%d\r\n", s.linksOverLimit)
	return b.String()
}

// WriteLinks writes CLUSTER LINKS (addReplyClusterLinksDescription): a
// map per link with a known node, outbound then inbound for each node.
// The send buffer is the messages queued on the link.
func (s *State) WriteLinks(w *resp.Writer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var links []*link
	for _, n := range s.cfg.Nodes {
		if n == s.cfg.Myself {
			continue
		}
		if n.link != nil {
			links = append(links, n.link)
		}
		if n.inLink != nil {
			links = append(links, n.inLink)
		}
	}
	w.Array(len(links))
	for _, l := range links {
		// The queue holds whole messages, mostly pings: the bytes are
		// estimated at a header each.
		queued := int64(len(l.out)) * bus.HeaderLen
		events := "r"
		if len(l.out) > 0 {
			events = "rw"
		}
		w.Map(6)
		w.BulkString("direction")
		w.BulkString(l.direction())
		w.BulkString("node")
		w.Bulk(l.node.Name[:])
		w.BulkString("create-time")
		w.Int(l.ctime)
		w.BulkString("events")
		w.BulkString(events)
		w.BulkString("send-buffer-allocated")
		w.Int(queued)
		w.BulkString("send-buffer-used")
		w.Int(queued)
	}
}

// Reset is CLUSTER RESET (clusterReset; the caller checked the database
// is empty): every slot given up, every other node forgotten, and for a
// hard reset the epochs back to 0 and a new name.
func (s *State) Reset(hard bool) {
	s.mu.Lock()
	for j := range s.slots {
		s.delSlot(j)
	}
	clear(s.cfg.Migrating)
	clear(s.cfg.Importing)
	me := s.cfg.Myself
	for _, n := range append([]*Node(nil), s.cfg.Nodes...) {
		if n != me {
			s.delNode(n)
		}
	}
	if hard {
		s.cfg.CurrentEpoch, s.cfg.LastVoteEpoch, me.ConfigEpoch = 0, 0, 0
		s.opt.Logf('#', "configEpoch set to 0 via CLUSTER RESET HARD")
		me.Name = randomName()
		s.opt.Logf('-', "Node hard reset, now I'm %.40s", me.Name[:])
	}
	s.todoSave, s.stateChanged, s.routesDirty = true, true, true
	s.updateState()
	s.unlock()
	s.saveConfig()
}
