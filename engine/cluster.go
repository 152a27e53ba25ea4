package engine

import (
	"bytes"
	"strconv"

	"github.com/zredis/zredis/cluster"
)

// Cluster mode's redirections (cluster.c's getNodeByQuery and
// clusterRedirectClient): a command whose keys this node does not serve
// is answered with where they are, before it runs.

// The redirections' errors.
const (
	ErrCrossSlot      = "CROSSSLOT Keys in request don't hash to the same slot"
	ErrTryAgain       = "TRYAGAIN Multiple keys request during rehashing of slot"
	ErrClusterDown    = "CLUSTERDOWN The cluster is down"
	ErrClusterDownRO  = "CLUSTERDOWN The cluster is down and only accepts read commands"
	ErrClusterUnbound = "CLUSTERDOWN Hash slot not served"
)

// ClusterOptions are the cluster-* directives a redirection reads.
type ClusterOptions struct {
	AllowReadsWhenDown       bool // cluster-allow-reads-when-down
	AllowPubsubShardWhenDown bool // cluster-allow-pubsubshard-when-down
	TLS                      bool // tls-cluster: nodes are known by their TLS ports
}

// PlainOfTLSCluster reports whether cl is a plaintext client of a TLS
// cluster, which is shown the nodes' plaintext ports (Redis's use_pport).
func (d *Dispatcher) PlainOfTLSCluster(cl *Client) bool {
	return d.ClusterOpts.TLS && !cl.TLS
}

// clusterRedirect answers, in cluster mode, a command that this node may
// not run here (processCommand's cluster check): "" when it runs, else
// the error. The master's stream and the AOF's replay obey whatever
// they are sent (mustObeyClient); commands without keys run anywhere,
// EXEC checks what it queued.
func (d *Dispatcher) clusterRedirect(cl *Client, cmd *Command, args [][]byte) string {
	if cl.Master || cl.Replaying {
		return ""
	}
	exec := cmd.Name == "exec"
	if !exec && cmd.Flags&MovableKeys == 0 && cmd.FirstKey <= 0 && cmd.Keys == nil {
		return ""
	}
	q := slotQuery{d: d, rt: d.Cluster.Routes(), slot: -1,
		pubsubShard: cmd.Name == "ssubscribe" || cmd.Name == "sunsubscribe" || cmd.Name == "spublish"}
	if exec {
		if !cl.InMulti {
			return ""
		}
		for _, c := range cl.tx.queue {
			if e := q.command(c.cmd, c.args); e != "" {
				return e
			}
		}
	} else if e := q.command(cmd, args); e != "" {
		return e
	}
	rt, slot := q.rt, q.slot
	if q.owner == nil {
		return ""
	}
	if !rt.OK {
		switch {
		case q.pubsubShard:
			if !d.ClusterOpts.AllowPubsubShardWhenDown {
				return ErrClusterDown
			}
		case !d.ClusterOpts.AllowReadsWhenDown:
			return ErrClusterDown
		case q.writes:
			return ErrClusterDownRO
		}
	}
	if (q.migrating || q.importing) && cmd.Name == "migrate" {
		return ""
	}
	if q.migrating && q.missing > 0 {
		if q.existing > 0 {
			return ErrTryAgain
		}
		return "ASK " + strconv.Itoa(slot) + " " + d.routeAddr(rt.Migrating[slot], cl)
	}
	if q.importing && (cl.Asking || cmd.Flags&Asking != 0) {
		if q.multipleKeys && q.missing > 0 {
			return ErrTryAgain
		}
		return ""
	}
	// A replica serves reads of its master's slots to a READONLY client
	// (and shard channels to anyone).
	if (cl.ReadOnlyCluster || q.pubsubShard) && !q.writes && !rt.MyMaster.IsZero() && q.owner.Name == rt.MyMaster {
		return ""
	}
	if q.owner.Myself {
		return ""
	}
	return "MOVED " + strconv.Itoa(slot) + " " + d.routeAddr(q.owner, cl)
}

// slotQuery is what getNodeByQuery learns of a command's keys (a
// transaction's: of every queued command's): their one slot, its owner
// and migration, and how many of the keys are here. It lives on the
// stack: the check allocates nothing for a command with fixed key
// positions.
type slotQuery struct {
	d                    *Dispatcher
	rt                   *cluster.Routes
	first                []byte
	slot                 int
	owner                *cluster.Route
	pubsubShard          bool
	writes, multipleKeys bool
	migrating, importing bool
	missing, existing    int
}

// command takes in cmd's keys, as getKeysFromCommand finds them (first,
// last and step, or the command's own key finder; shard channels
// included): "" or the error that ends the check.
func (q *slotQuery) command(cmd *Command, args [][]byte) string {
	if cmd.Flags&Write != 0 {
		q.writes = true
	}
	if cmd.Keys != nil {
		for _, p := range cmd.Keys(args) {
			if e := q.key(args[p]); e != "" {
				return e
			}
		}
		return ""
	}
	if cmd.FirstKey <= 0 {
		return ""
	}
	last := cmd.LastKey
	if last < 0 {
		last = len(args) + last
	}
	for i := cmd.FirstKey; i <= last && i < len(args); i += cmd.KeyStep {
		if e := q.key(args[i]); e != "" {
			return e
		}
		if cmd.KeyStep <= 0 {
			break
		}
	}
	return ""
}

func (q *slotQuery) key(key []byte) string {
	s := cluster.KeySlot(key)
	if q.first == nil {
		q.first, q.slot = key, s
		q.owner = q.rt.Owner(s)
		if q.owner == nil {
			return ErrClusterUnbound
		}
		if q.owner.Myself && q.rt.Migrating[s] != nil {
			q.migrating = true
		} else if q.rt.Importing[s] != nil {
			q.importing = true
		}
	} else if !bytes.Equal(q.first, key) {
		if s != q.slot {
			return ErrCrossSlot
		}
		q.multipleKeys = true
	}
	// A key past its deadline is missing, as lookupKeyReadWithFlags
	// (which expires it) finds it in getNodeByQuery.
	if (q.migrating || q.importing) && !q.pubsubShard {
		if !q.d.KS.DB(0).Exists(key) {
			q.missing++
		} else {
			q.existing++
		}
	}
	return ""
}

// routeAddr is where a redirection sends cl: a plaintext client of a
// TLS cluster gets the plaintext port.
func (d *Dispatcher) routeAddr(r *cluster.Route, cl *Client) string {
	if d.PlainOfTLSCluster(cl) {
		return r.PAddr
	}
	return r.Addr
}
