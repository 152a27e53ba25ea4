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
}

// clusterRedirect answers, in cluster mode, a command that this node may
// not run here (processCommand's cluster check): "" when it runs, else
// the error. The master's stream and the AOF's replay obey whatever
// they are sent (mustObeyClient); commands without keys run anywhere,
// EXEC checks what it queued.
func (d *Dispatcher) clusterRedirect(cl *Client, cmd *Command, args [][]byte) string {
	st := d.Cluster
	if cl.Master || cl.Replaying {
		return ""
	}
	exec := cmd.Name == "exec"
	if !exec && cmd.Flags&MovableKeys == 0 && cmd.FirstKey <= 0 && cmd.Keys == nil {
		return ""
	}
	rt := st.Routes()
	var first []byte
	slot := -1
	multipleKeys := false
	var owner *cluster.Route
	migrating, importing := false, false
	missing, existing := 0, 0
	pubsubShard := cmd.Name == "ssubscribe" || cmd.Name == "sunsubscribe" || cmd.Name == "spublish"
	writes := false
	check := func(cmd *Command, args [][]byte) string {
		if cmd.Flags&Write != 0 {
			writes = true
		}
		for _, k := range d.Table.keyRefs(cmd, args) {
			key := args[k.Pos]
			s := cluster.KeySlot(key)
			if first == nil {
				first, slot = key, s
				owner = rt.Slots[s]
				if owner == nil {
					return ErrClusterUnbound
				}
				if owner.Myself && rt.Migrating[s] != nil {
					migrating = true
				} else if rt.Importing[s] != nil {
					importing = true
				}
			} else if !bytes.Equal(first, key) {
				if s != slot {
					return ErrCrossSlot
				}
				multipleKeys = true
			}
			if (migrating || importing) && !pubsubShard {
				if d.KS.DB(0).Peek(key) == nil {
					missing++
				} else {
					existing++
				}
			}
		}
		return ""
	}
	if exec {
		if !cl.InMulti {
			return ""
		}
		for _, q := range cl.tx.queue {
			if e := check(q.cmd, q.args); e != "" {
				return e
			}
		}
	} else if e := check(cmd, args); e != "" {
		return e
	}
	if owner == nil {
		return ""
	}
	if !rt.OK {
		switch {
		case pubsubShard:
			if !d.ClusterOpts.AllowPubsubShardWhenDown {
				return ErrClusterDown
			}
		case !d.ClusterOpts.AllowReadsWhenDown:
			return ErrClusterDown
		case writes:
			return ErrClusterDownRO
		}
	}
	if (migrating || importing) && cmd.Name == "migrate" {
		return ""
	}
	if migrating && missing > 0 {
		if existing > 0 {
			return ErrTryAgain
		}
		return "ASK " + strconv.Itoa(slot) + " " + routeAddr(rt.Migrating[slot], cl)
	}
	if importing && (cl.Asking || cmd.Flags&Asking != 0) {
		if multipleKeys && missing > 0 {
			return ErrTryAgain
		}
		return ""
	}
	// A replica serves reads of its master's slots to a READONLY client
	// (and shard channels to anyone).
	if (cl.ReadOnlyCluster || pubsubShard) && !writes && !rt.MyMaster.IsZero() && owner.Name == rt.MyMaster {
		return ""
	}
	if owner.Myself {
		return ""
	}
	return "MOVED " + strconv.Itoa(slot) + " " + routeAddr(owner, cl)
}

// routeAddr is where a redirection sends cl: a plaintext client of a
// TLS cluster gets the plaintext port.
func routeAddr(r *cluster.Route, cl *Client) string {
	if cl.PlainOfTLSCluster {
		return r.PAddr
	}
	return r.Addr
}
