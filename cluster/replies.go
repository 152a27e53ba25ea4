package cluster

import (
	"github.com/zredis/zredis/cluster/bus"
	"github.com/zredis/zredis/resp"
)

// Endpoint is what a node is shown by to clients (the directive
// cluster-preferred-endpoint-type).
type Endpoint int

const (
	EndpointIP       Endpoint = iota // "ip"
	EndpointHostname                 // "hostname": "?" for a node without one
	EndpointUnknown                  // "unknown-endpoint": null
)

// preferredEndpoint is what n is shown by: its IP, its hostname ("?"
// when it has none), or, for unknown-endpoint, nothing (false).
func preferredEndpoint(n *Node, ep Endpoint) (string, bool) {
	switch ep {
	case EndpointIP:
		return n.IP, true
	case EndpointHostname:
		if n.Hostname != "" {
			return n.Hostname, true
		}
		return "?", true
	}
	return "", false
}

// Replicas are the replicas of master, in the order they became known
// (Redis's master->slaves).
func (c *Config) Replicas(master *Node) []*Node {
	var rs []*Node
	for _, n := range c.Nodes {
		if n.Flags&bus.FlagReplica != 0 && n.Master == master.Name {
			rs = append(rs, n)
		}
	}
	return rs
}

// SlotOwners is the master serving each slot (nil for none), from the
// masters' slot bitmaps (Redis's server.cluster->slots).
func (c *Config) SlotOwners() *[Slots]*Node {
	var owners [Slots]*Node
	for _, n := range c.Nodes {
		if n.Flags&bus.FlagMaster == 0 {
			continue
		}
		for s := 0; s < Slots; s++ {
			if n.Slots[s>>3] == 0 {
				s |= 7
				continue
			}
			if n.Slots.Has(s) {
				owners[s] = n
			}
		}
	}
	return &owners
}

// WriteSlots writes CLUSTER SLOTS (clusterReplyMultiBulkSlots): for each
// run of slots one master serves, the run, the master and those of its
// replicas available says are (Redis's isReplicaAvailable: not failed,
// with a replication offset). usePPort shows TLS nodes' plaintext
// ports (a plaintext client of a TLS cluster).
func (c *Config) WriteSlots(w *resp.Writer, ep Endpoint, usePPort bool, available func(*Node) bool) {
	owners := c.SlotOwners()
	mark := w.DeferArray()
	ranges := 0
	for start := 0; start < Slots; {
		n := owners[start]
		end := start
		for end+1 < Slots && owners[end+1] == n {
			end++
		}
		if n != nil {
			var replicas []*Node
			for _, r := range c.Replicas(n) {
				if available(r) {
					replicas = append(replicas, r)
				}
			}
			w.Array(3 + len(replicas))
			w.Int(int64(start))
			w.Int(int64(end))
			writeNode(w, n, ep, usePPort)
			for _, r := range replicas {
				writeNode(w, r, ep, usePPort)
			}
			ranges++
		}
		start = end + 1
	}
	w.FillArray(mark, ranges)
}

// writeNode writes a node of CLUSTER SLOTS (addNodeToNodeReply): its
// preferred endpoint, port, name, and a map of the other endpoints it
// has.
func writeNode(w *resp.Writer, n *Node, ep Endpoint, usePPort bool) {
	w.Array(4)
	if e, ok := preferredEndpoint(n, ep); ok {
		w.BulkString(e)
	} else {
		w.Null()
	}
	port := n.Port
	if usePPort && n.PPort != 0 {
		port = n.PPort
	}
	w.Int(int64(port))
	w.Bulk(n.Name[:])
	showIP := ep != EndpointIP
	showHost := ep != EndpointHostname && n.Hostname != ""
	fields := 0
	if showIP {
		fields++
	}
	if showHost {
		fields++
	}
	w.Map(fields)
	if showIP {
		w.BulkString("ip")
		w.BulkString(n.IP)
	}
	if showHost {
		w.BulkString("hostname")
		w.BulkString(n.Hostname)
	}
}

// WriteShards writes CLUSTER SHARDS (clusterReplyShards): a map per
// master, with its slot runs as start, end pairs, and its nodes (the
// master, then its replicas) with their endpoints, role, replication
// offset and health. tlsCluster: ports are the TLS ones, and the
// plaintext ones are shown as well.
func (c *Config) WriteShards(w *resp.Writer, ep Endpoint, tlsCluster bool) {
	owners := c.SlotOwners()
	shards := 0
	mark := w.DeferArray()
	for _, m := range c.Nodes {
		if m.Flags&bus.FlagMaster == 0 {
			continue
		}
		shards++
		w.Map(2)
		w.BulkString("slots")
		runs := w.DeferArray()
		n := 0
		for start := 0; start < Slots; start++ {
			if owners[start] != m {
				continue
			}
			end := start
			for end+1 < Slots && owners[end+1] == m {
				end++
			}
			w.Int(int64(start))
			w.Int(int64(end))
			n += 2
			start = end
		}
		w.FillArray(runs, n)
		w.BulkString("nodes")
		replicas := c.Replicas(m)
		w.Array(1 + len(replicas))
		writeShardNode(w, m, ep, tlsCluster)
		for _, r := range replicas {
			writeShardNode(w, r, ep, tlsCluster)
		}
	}
	w.FillArray(mark, shards)
}

// writeShardNode writes one node of a shard (addNodeDetailsToShardReply).
func writeShardNode(w *resp.Writer, n *Node, ep Endpoint, tlsCluster bool) {
	plain, tls := n.Port, 0
	if tlsCluster {
		plain, tls = n.PPort, n.Port
	}
	fields := 6 // id, ip, endpoint, role, replication-offset, health
	if plain != 0 {
		fields++
	}
	if tls != 0 {
		fields++
	}
	if n.Hostname != "" {
		fields++
	}
	w.Map(fields)
	w.BulkString("id")
	w.Bulk(n.Name[:])
	if plain != 0 {
		w.BulkString("port")
		w.Int(int64(plain))
	}
	if tls != 0 {
		w.BulkString("tls-port")
		w.Int(int64(tls))
	}
	w.BulkString("ip")
	w.BulkString(n.IP)
	w.BulkString("endpoint")
	e, _ := preferredEndpoint(n, ep) // "" for unknown-endpoint, as getPreferredEndpoint
	w.BulkString(e)
	if n.Hostname != "" {
		w.BulkString("hostname")
		w.BulkString(n.Hostname)
	}
	replica := n.Flags&bus.FlagReplica != 0
	w.BulkString("role")
	if replica {
		w.BulkString("replica")
	} else {
		w.BulkString("master")
	}
	w.BulkString("replication-offset")
	w.Int(n.ReplOffset)
	w.BulkString("health")
	switch {
	case n.Flags&bus.FlagFail != 0:
		w.BulkString("fail")
	case replica && n.ReplOffset == 0:
		w.BulkString("loading")
	default:
		w.BulkString("online")
	}
}
