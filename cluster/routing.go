package cluster

import (
	"strconv"

	"github.com/zredis/zredis/cluster/bus"
)

// Routes is what a command's redirection reads (getNodeByQuery): who
// serves each slot, the slots being moved, and whether the cluster is
// ok. It is rebuilt whole under mu whenever one of those changes, and
// read without a lock (State.Routes): commands read it at every call,
// while it changes only when the cluster's configuration does.
type Routes struct {
	OK bool
	// owners holds, for each slot, 1 + the index in nodes of the node
	// that serves it, 0 for none: numbers rather than pointers, so that
	// the table is 32 KB the collector does not scan, not 128 KB of
	// pointers it does. It is shared by the routings made while no slot
	// changes owner (ownerTable): a reshard's CLUSTER SETSLOTs make four
	// a slot, two of which only mark it as moving.
	owners *[Slots]uint16
	nodes  []*Route
	// Migrating and Importing are this node's slots on their way to, or
	// from, another node.
	Migrating map[int]*Route
	Importing map[int]*Route
	// MyMaster is the master this node replicates, zero for a master: a
	// READONLY client reads its slots here.
	MyMaster bus.Name
}

// Route is a node as a redirection names it.
type Route struct {
	Myself bool
	Name   bus.Name
	// Addr is "endpoint:port" (the preferred endpoint), PAddr the same
	// with the plaintext port of a TLS node, for a plaintext client.
	Addr, PAddr string
}

// Owner is the node that serves slot, nil for none.
func (rt *Routes) Owner(slot int) *Route { return rt.route(rt.owners[slot]) }

// Routes is the current routing.
func (s *State) Routes() *Routes { return s.routes.Load() }

// publishRoutes rebuilds the routing if something it holds changed.
// Under mu.
func (s *State) publishRoutes() {
	if !s.routesDirty && s.routes.Load() != nil {
		return
	}
	s.routesDirty = false
	rt := &Routes{OK: s.state == stateOK}
	t := s.ownerTable()
	rt.owners = &t.idx
	index := make(map[*Node]uint16, len(t.nodes))
	// indexOf is 1 + n's index in rt.nodes, where it is added the first
	// time; 0 for nil. The slots' owners come first, in the owner
	// table's order.
	indexOf := func(n *Node) uint16 {
		if n == nil {
			return 0
		}
		if i, ok := index[n]; ok {
			return i
		}
		ep, _ := preferredEndpoint(n, s.opt.Endpoint)
		if s.opt.Endpoint == EndpointUnknown {
			ep = "?"
		}
		r := &Route{Myself: n == s.cfg.Myself, Name: n.Name, Addr: ep + ":" + strconv.Itoa(n.Port)}
		r.PAddr = r.Addr
		if n.PPort != 0 {
			r.PAddr = ep + ":" + strconv.Itoa(n.PPort)
		}
		rt.nodes = append(rt.nodes, r)
		i := uint16(len(rt.nodes))
		index[n] = i
		return i
	}
	for _, n := range t.nodes {
		indexOf(n)
	}
	if me := s.cfg.Myself; me.Flags&bus.FlagReplica != 0 {
		rt.MyMaster = me.Master
	}
	if len(s.cfg.Migrating) > 0 {
		rt.Migrating = make(map[int]*Route, len(s.cfg.Migrating))
		for j, name := range s.cfg.Migrating {
			rt.Migrating[j] = rt.route(indexOf(s.cfg.Lookup(name)))
		}
	}
	if len(s.cfg.Importing) > 0 {
		rt.Importing = make(map[int]*Route, len(s.cfg.Importing))
		for j, name := range s.cfg.Importing {
			rt.Importing[j] = rt.route(indexOf(s.cfg.Lookup(name)))
		}
	}
	s.routes.Store(rt)
}

// ownerTable is s.slots as numbers: for each slot, 1 + the index in
// nodes of its owner, 0 for none, the owners numbered in the order of
// their first slot. Made anew, not changed, once published.
type ownerTable struct {
	idx     [Slots]uint16
	nodes   []*Node
	unowned int // slots without an owner
}

// ownerTable is the owner table of s.slots, rebuilt if a slot changed
// owner since it was made. Under mu.
func (s *State) ownerTable() *ownerTable {
	if s.owners != nil && !s.ownersStale {
		return s.owners
	}
	t := &ownerTable{}
	number := map[*Node]uint16{}
	// Slots come in runs of one owner: its number is found once a run.
	var last *Node
	var lastIdx uint16
	for j, n := range s.slots {
		if n != last || j == 0 {
			last, lastIdx = n, number[n]
			if n != nil && lastIdx == 0 {
				// Not more than 65,535 nodes serve slots: there are
				// 16,384.
				t.nodes = append(t.nodes, n)
				lastIdx = uint16(len(t.nodes))
				number[n] = lastIdx
			}
		}
		if n == nil {
			t.unowned++
		}
		t.idx[j] = lastIdx
	}
	s.owners, s.ownersStale = t, false
	return t
}

// route is the node at 1 + index i of rt.nodes, nil for 0.
func (rt *Routes) route(i uint16) *Route {
	if i == 0 {
		return nil
	}
	return rt.nodes[i-1]
}
