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
	OK    bool
	Slots [Slots]*Route
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

// Routes is the current routing.
func (s *State) Routes() *Routes { return s.routes.Load() }

// publishRoutes rebuilds the routing if something it holds changed.
// Under mu.
func (s *State) publishRoutes() {
	if !s.routesDirty && s.routes.Load() != nil {
		return
	}
	s.routesDirty = false
	byNode := map[*Node]*Route{}
	routeOf := func(n *Node) *Route {
		if n == nil {
			return nil
		}
		if r, ok := byNode[n]; ok {
			return r
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
		byNode[n] = r
		return r
	}
	rt := &Routes{OK: s.state == stateOK, Migrating: map[int]*Route{}, Importing: map[int]*Route{}}
	if me := s.cfg.Myself; me.Flags&bus.FlagReplica != 0 {
		rt.MyMaster = me.Master
	}
	for j, n := range s.slots {
		rt.Slots[j] = routeOf(n)
	}
	for j, name := range s.cfg.Migrating {
		rt.Migrating[j] = routeOf(s.cfg.Lookup(name))
	}
	for j, name := range s.cfg.Importing {
		rt.Importing[j] = routeOf(s.cfg.Lookup(name))
	}
	s.routes.Store(rt)
}
