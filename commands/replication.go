package commands

import (
	"bytes"
	"strconv"
	"strings"
	"time"

	"github.com/zredis/zredis/engine"
	"github.com/zredis/zredis/sds"
)

// Replication commands (replication.c): SYNC and PSYNC, by which a
// replica asks for the stream; REPLCONF, by which it describes itself and
// acknowledges what it applied; WAIT and ROLE; REPLICAOF, which makes the
// server a replica. The stream, the backlog, the replicas and the link to
// a master are the server's (engine.Replication, engine.Server.ReplicaOf);
// these handlers parse and check the arguments.
func init() {
	const internal = engine.Admin | engine.NoScript | engine.NoAsyncLoading | engine.NoMulti
	register(
		&engine.Command{Name: "sync", Arity: 1, Flags: internal, Group: "server", Run: syncCommand},
		&engine.Command{Name: "psync", Arity: -3, Flags: internal, Group: "server", Run: syncCommand},
		&engine.Command{Name: "replconf", Arity: -1, Flags: engine.Admin | engine.NoScript | engine.Loading | engine.Stale | engine.AllowBusy, Group: "server", Run: replconfCommand},
		&engine.Command{Name: "wait", Arity: 3, Flags: engine.NoScript, ACL: "@connection", Group: "generic", Run: waitCommand},
		&engine.Command{Name: "failover", Arity: -1, Flags: engine.Admin | engine.NoScript | engine.Stale, Group: "server", Run: failoverCommand},
		&engine.Command{Name: "role", Arity: 1, Flags: engine.NoScript | engine.Loading | engine.Stale | engine.Fast, ACL: "@admin @dangerous", Group: "server", Run: roleCommand},
	)
	// The replica side: the link to a master is the server's
	// (engine.Server.ReplicaOf).
	const replicaof = engine.Admin | engine.NoScript | engine.Stale | engine.NoAsyncLoading
	register(
		&engine.Command{Name: "replicaof", Arity: 3, Flags: replicaof, Group: "server", Run: replicaofCommand},
		&engine.Command{Name: "slaveof", Arity: 3, Flags: replicaof, Group: "server", Run: replicaofCommand},
	)
}

// errSyncReplica is SYNC's refusal on a replica whose link with its
// master is not up: a connected replica serves its own replicas its
// master's stream.
const errSyncReplica = "NOMASTERLINK Can't SYNC while not connected with my master"

// syncCommand is SYNC and PSYNC replid offset (syncCommand).
func syncCommand(c *engine.Ctx) {
	if c.Client.Replica {
		return // already a replica: ignored, no reply
	}
	r := c.Srv.Replication()
	if c.Cmd.Name == "psync" && len(c.Args) > 3 && engine.EqualFold(c.Args[3], "failover") &&
		!r.FailoverRequest(c, string(c.Args[1])) {
		return
	}
	if r.FailingOver() {
		c.Error("NOMASTERLINK Can't SYNC while failing over")
		return
	}
	if r.MasterLinkDown() {
		c.Error(errSyncReplica)
		return
	}
	if c.W.Len() > 0 {
		c.Error("ERR SYNC and PSYNC are invalid with pending output")
		return
	}
	if r.FilterNeedsEOF(c.Client) {
		c.Error("ERR Filtered replica requires EOF capability")
		return
	}
	psync := c.Cmd.Name == "psync"
	var replid string
	var offset int64
	if psync {
		replid = string(c.Args[1])
		var ok bool
		if offset, ok = engine.ParseInt(c.Args[2]); !ok {
			c.Error(engine.ErrNotInteger)
			return
		}
	}
	c.Srv.Replication().Sync(c, psync, replid, offset)
}

// replconfCommand is REPLCONF option value [option value ...]
// (replconfCommand): options apply in order; ACK and GETACK end the
// command without a reply.
func replconfCommand(c *engine.Ctx) {
	if len(c.Args)%2 == 0 {
		c.Error(engine.ErrSyntax)
		return
	}
	r := c.Srv.Replication()
	cl := c.Client
	for j := 1; j < len(c.Args); j += 2 {
		opt, val := c.Args[j], c.Args[j+1]
		switch {
		case engine.EqualFold(opt, "listening-port"):
			port, ok := engine.ParseInt(val)
			if !ok {
				c.Error(engine.ErrNotInteger)
				return
			}
			r.SetListeningPort(cl, port)
		case engine.EqualFold(opt, "ip-address"):
			if len(val) >= 256 { // NET_HOST_STR_LEN
				c.Error("ERR REPLCONF ip-address provided by replica instance is too long: " + strconv.Itoa(len(val)) + " bytes")
				return
			}
			r.SetAddress(cl, string(val))
		case engine.EqualFold(opt, "capa"):
			r.AddCapa(cl, strings.ToLower(string(val)))
		case engine.EqualFold(opt, "ack"):
			if !cl.Replica {
				return
			}
			offset, ok := engine.ParseInt(val)
			if !ok {
				return
			}
			aof := int64(-1)
			if len(c.Args) > j+3 && engine.EqualFold(c.Args[j+2], "fack") {
				if aof, ok = engine.ParseInt(c.Args[j+3]); !ok {
					return
				}
			}
			r.Ack(cl, offset, aof)
			return // no reply
		case engine.EqualFold(opt, "getack"):
			return // only a replica answers it, with an ACK to its master
		case engine.EqualFold(opt, "rdb-only"):
			v, ok := engine.ParseInt(val)
			if !ok {
				c.Error(engine.ErrNotInteger)
				return
			}
			if v < 0 || v > 1 {
				c.Error("ERR value is out of range, value must between 0 and 1")
				return
			}
			r.SetRDBOnly(cl, v == 1)
		case engine.EqualFold(opt, "rdb-filter-only"):
			if !replconfRDBFilter(c, r, val) {
				return
			}
		default:
			c.Error("ERR Unrecognized REPLCONF option: " + string(opt))
			return
		}
	}
	c.W.OK()
}

// replconfRDBFilter is REPLCONF rdb-filter-only <filters>: a list split
// as sdssplitargs splits it, "" for an RDB without keys, "functions" for
// one with the functions only; no other filter exists. As in Redis, a
// list with an unknown filter is refused but still applied up to it.
// Redis reads the value and prints the filter as C strings: both end at
// a NUL byte.
func replconfRDBFilter(c *engine.Ctx, r engine.Replication, val []byte) bool {
	filters, ok := sds.SplitArgs(cString(val))
	if !ok {
		c.Error("ERR Missing rdb-filter-only values")
		return false
	}
	functions := false
	for _, f := range filters {
		if !engine.EqualFold([]byte(f), "functions") { // strcasecmp: ASCII only
			r.SetRDBFilter(c.Client, functions)
			c.Error("ERR Unsupported rdb-filter-only option: " + cString([]byte(f)))
			return false
		}
		functions = true
	}
	r.SetRDBFilter(c.Client, functions)
	return true
}

// cString is b up to its first NUL byte, as C reads it.
func cString(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// waitCommand is WAIT numreplicas timeout (waitCommand).
func waitCommand(c *engine.Ctx) {
	if c.KS.IsReplica() {
		c.Error("ERR WAIT cannot be used with replica instances. Please also note that since Redis 4.0 if a replica is configured to be writable (which is not the default) writes to replicas are just local and are not propagated.")
		return
	}
	n, ok := engine.ParseInt(c.Args[1])
	if !ok {
		c.Error(engine.ErrNotInteger)
		return
	}
	ms, ok := parseMsTimeout(c, c.Args[2])
	if !ok {
		return
	}
	c.Srv.Replication().Wait(c, n, time.Duration(ms)*time.Millisecond)
}

// roleCommand is ROLE.
func roleCommand(c *engine.Ctx) { c.Srv.Replication().Role(c) }

// failoverCommand is FAILOVER [TO host port [FORCE]] [ABORT] [TIMEOUT
// ms] (failoverCommand): each option once, in any order.
func failoverCommand(c *engine.Ctx) {
	if c.D.Cluster != nil {
		c.Error("ERR FAILOVER not allowed in cluster mode. Use CLUSTER FAILOVER command instead.")
		return
	}
	r := c.Srv.Replication()
	if len(c.Args) == 2 && engine.EqualFold(c.Args[1], "abort") {
		r.AbortFailover(c)
		return
	}
	var opts engine.FailoverOptions
	var timeoutMs int64
	hasHost := false
	for j := 1; j < len(c.Args); j++ {
		arg := c.Args[j]
		switch {
		case engine.EqualFold(arg, "timeout") && j+1 < len(c.Args) && timeoutMs == 0:
			ms, ok := engine.ParseInt(c.Args[j+1])
			if !ok {
				c.Error(engine.ErrNotInteger)
				return
			}
			if ms <= 0 {
				c.Error("ERR FAILOVER timeout must be greater than 0")
				return
			}
			timeoutMs = ms
			j++
		case engine.EqualFold(arg, "to") && j+2 < len(c.Args) && !hasHost:
			port, ok := engine.ParseInt(c.Args[j+2])
			if !ok {
				c.Error(engine.ErrNotInteger)
				return
			}
			opts.Host, opts.Port, opts.HasHost, hasHost = string(c.Args[j+1]), int(port), true, true
			j += 2
		case engine.EqualFold(arg, "force") && !opts.Force:
			opts.Force = true
		default:
			c.Error(engine.ErrSyntax)
			return
		}
	}
	opts.TimeoutMs = timeoutMs
	r.Failover(c, opts)
}

// replicaofCommand is REPLICAOF host port | NO ONE (and SLAVEOF).
func replicaofCommand(c *engine.Ctx) {
	if c.D.Cluster != nil {
		c.Error("ERR REPLICAOF not allowed in cluster mode.")
		return
	}
	if c.Srv.Replication().FailingOver() {
		c.Error("ERR REPLICAOF not allowed while failing over.")
		return
	}
	var host string
	var port int
	if !(engine.EqualFold(c.Args[1], "no") && engine.EqualFold(c.Args[2], "one")) {
		n, ok := engine.ParseInt(c.Args[2])
		if !ok || n < 0 || n > 65535 {
			c.Error("ERR Invalid master port")
			return
		}
		host, port = string(c.Args[1]), int(n)
	}
	who := string(engine.AppendClientInfo(nil, c, c.Client, c.KS.Now(), 0))
	c.W.Simple(c.Srv.ReplicaOf(host, port, who))
}
