package commands

import (
	"strconv"
	"strings"

	"github.com/zredis/zredis/cluster"
	"github.com/zredis/zredis/engine"
	"github.com/zredis/zredis/redisconv"
)

// The CLUSTER subcommands a cluster node serves (clusterCommand), by
// name: every one of Redis 7.0's.
var clusterHandlers = map[string]engine.Handler{
	"addslots":              clusterAddSlots,
	"delslots":              clusterAddSlots,
	"addslotsrange":         clusterAddSlotsRange,
	"delslotsrange":         clusterAddSlotsRange,
	"failover":              clusterFailover,
	"bumpepoch":             clusterBumpEpoch,
	"count-failure-reports": clusterCountFailureReports,
	"countkeysinslot":       clusterCountKeysInSlot,
	"getkeysinslot":         clusterGetKeysInSlot,
	"flushslots":            clusterFlushSlots,
	"forget":                clusterForget,
	"help":                  func(c *engine.Ctx) { c.ReplyHelp(clusterHelpLines) },
	"info":                  func(c *engine.Ctx) { c.W.Verbatim(c.D.Cluster.Info()) },
	"keyslot":               func(c *engine.Ctx) { c.W.Int(int64(cluster.KeySlot(c.Args[2]))) },
	"links":                 func(c *engine.Ctx) { c.D.Cluster.WriteLinks(c.W) },
	"meet":                  clusterMeet,
	"myid":                  func(c *engine.Ctx) { me := c.D.Cluster.Myself(); c.W.Bulk(me[:]) },
	"nodes":                 func(c *engine.Ctx) { c.W.Verbatim(string(c.D.Cluster.Nodes(c.D.PlainOfTLSCluster(c.Client)))) },
	"replicas":              clusterReplicas,
	"replicate":             clusterReplicate,
	"reset":                 clusterReset,
	"slaves":                clusterReplicas,
	"saveconfig":            clusterSaveConfig,
	"set-config-epoch":      clusterSetConfigEpoch,
	"setslot":               clusterSetSlot,
	"shards":                func(c *engine.Ctx) { c.D.Cluster.WriteShards(c.W) },
	"slots":                 func(c *engine.Ctx) { c.D.Cluster.WriteSlots(c.W, c.D.PlainOfTLSCluster(c.Client)) },
}

// errSlotRange is getSlotOrReply's refusal.
const errSlotRange = "ERR Invalid or out of range slot"

// slotArg is getSlotOrReply: a slot number, or -1.
func slotArg(b []byte) int {
	n, ok := redisconv.ParseInt(b)
	if !ok || n < 0 || n >= cluster.Slots {
		return -1
	}
	return int(n)
}

// CLUSTER ADDSLOTS / DELSLOTS slot [slot ...]: every argument is read
// before any is checked, as Redis does.
func clusterAddSlots(c *engine.Ctx) {
	del := strings.EqualFold(string(c.Args[1]), "delslots")
	ranges := make([]cluster.SlotRange, 0, len(c.Args)-2)
	for _, a := range c.Args[2:] {
		s := slotArg(a)
		if s < 0 {
			c.Error(errSlotRange)
			return
		}
		ranges = append(ranges, cluster.SlotRange{Start: s, End: s})
	}
	if e := c.D.Cluster.CheckSlots(del, ranges); e != "" {
		c.Error("ERR " + e)
		return
	}
	c.D.Cluster.UpdateSlots(del, ranges)
	c.W.OK()
}

// CLUSTER ADDSLOTSRANGE / DELSLOTSRANGE start end [start end ...]: each
// pair is read and checked before the next, as Redis does.
func clusterAddSlotsRange(c *engine.Ctx) {
	if len(c.Args)%2 == 1 {
		c.Error(engine.ErrWrongArgs(c.Cmd.Name))
		return
	}
	del := strings.EqualFold(string(c.Args[1]), "delslotsrange")
	var ranges []cluster.SlotRange
	for j := 2; j < len(c.Args); j += 2 {
		start, end := slotArg(c.Args[j]), -1
		if start >= 0 {
			end = slotArg(c.Args[j+1])
		}
		if start < 0 || end < 0 {
			c.Error(errSlotRange)
			return
		}
		if start > end {
			c.Error("ERR start slot number " + strconv.Itoa(start) + " is greater than end slot number " + strconv.Itoa(end))
			return
		}
		ranges = append(ranges, cluster.SlotRange{Start: start, End: end})
		if e := c.D.Cluster.CheckSlots(del, ranges); e != "" {
			c.Error("ERR " + e)
			return
		}
	}
	c.D.Cluster.UpdateSlots(del, ranges)
	c.W.OK()
}

func clusterBumpEpoch(c *engine.Ctx) {
	word, epoch := c.D.Cluster.BumpEpoch()
	c.W.Simple(word + " " + strconv.FormatUint(epoch, 10))
}

func clusterCountFailureReports(c *engine.Ctx) {
	n, e := c.D.Cluster.CountFailureReports(c.Args[2])
	if e != "" {
		c.Error("ERR " + e)
		return
	}
	c.W.Int(int64(n))
}

func clusterCountKeysInSlot(c *engine.Ctx) {
	slot, ok := redisconv.ParseInt(c.Args[2])
	if !ok {
		c.Error(engine.ErrNotInteger)
		return
	}
	if slot < 0 || slot >= cluster.Slots {
		c.Error("ERR Invalid slot")
		return
	}
	c.W.Int(int64(c.KS.DB(0).CountKeysInSlot(int(slot))))
}

func clusterGetKeysInSlot(c *engine.Ctx) {
	slot, ok := redisconv.ParseInt(c.Args[2])
	if !ok {
		c.Error(engine.ErrNotInteger)
		return
	}
	count, ok := redisconv.ParseInt(c.Args[3])
	if !ok {
		c.Error(engine.ErrNotInteger)
		return
	}
	if slot < 0 || slot >= cluster.Slots || count < 0 {
		c.Error("ERR Invalid slot or number of keys")
		return
	}
	keys := c.KS.DB(0).KeysInSlot(int(slot), int(min(count, 1<<31)))
	c.W.Array(len(keys))
	for _, k := range keys {
		c.W.BulkString(k)
	}
}

func clusterFlushSlots(c *engine.Ctx) {
	if c.KS.DB(0).Len() != 0 {
		c.Error("ERR DB must be empty to perform CLUSTER FLUSHSLOTS.")
		return
	}
	c.D.Cluster.FlushSlots()
	c.W.OK()
}

func clusterForget(c *engine.Ctx) {
	if e := c.D.Cluster.Forget(c.Args[2]); e != "" {
		c.Error("ERR " + e)
		return
	}
	c.W.OK()
}

// CLUSTER MEET ip port [bus-port]
func clusterMeet(c *engine.Ctx) {
	if len(c.Args) > 5 {
		c.Error(engine.ErrSubcommandSyntax(string(c.Args[1]), "CLUSTER"))
		return
	}
	port, ok := redisconv.ParseInt(c.Args[3])
	if !ok {
		c.Error("ERR Invalid TCP base port specified: " + string(c.Args[3]))
		return
	}
	cport := port + 10000 // CLUSTER_PORT_INCR
	if len(c.Args) == 5 {
		if cport, ok = redisconv.ParseInt(c.Args[4]); !ok {
			c.Error("ERR Invalid TCP bus port specified: " + string(c.Args[4]))
			return
		}
	}
	if !c.D.Cluster.Meet(string(c.Args[2]), port, cport) {
		c.Error("ERR Invalid node address specified: " + string(c.Args[2]) + ":" + string(c.Args[3]))
		return
	}
	c.W.OK()
}

func clusterReplicas(c *engine.Ctx) {
	lines, e := c.D.Cluster.Replicas(c.Args[2], c.D.PlainOfTLSCluster(c.Client))
	if e != "" {
		c.Error("ERR " + e)
		return
	}
	c.W.Array(len(lines))
	for _, l := range lines {
		c.W.BulkString(l)
	}
}

// CLUSTER RESET [HARD|SOFT]
func clusterReset(c *engine.Ctx) {
	if len(c.Args) > 3 {
		c.Error(engine.ErrSubcommandSyntax(string(c.Args[1]), "CLUSTER"))
		return
	}
	hard := false
	if len(c.Args) == 3 {
		switch {
		case engine.EqualFold(c.Args[2], "hard"):
			hard = true
		case engine.EqualFold(c.Args[2], "soft"):
		default:
			c.Error(engine.ErrSyntax)
			return
		}
	}
	// A replica may hold its master's keys; a master must be empty.
	if !c.D.Cluster.IsReplica() && c.KS.DB(0).Len() != 0 {
		c.Error("ERR CLUSTER RESET can't be called with master nodes containing keys")
		return
	}
	if c.D.Cluster.Reset(hard) {
		c.KS.FlushAll() // the replica turned master forgets its master's data (emptyData)
	}
	c.W.OK()
}

// CLUSTER REPLICATE node-id
func clusterReplicate(c *engine.Ctx) {
	if e := c.D.Cluster.Replicate(c.Args[2], c.KS.DB(0).Len()); e != "" {
		c.Error("ERR " + e)
		return
	}
	c.W.OK()
}

// CLUSTER FAILOVER [FORCE|TAKEOVER]
func clusterFailover(c *engine.Ctx) {
	if len(c.Args) > 3 {
		c.Error(engine.ErrSubcommandSyntax(string(c.Args[1]), "CLUSTER"))
		return
	}
	force, takeover := false, false
	if len(c.Args) == 3 {
		switch {
		case engine.EqualFold(c.Args[2], "force"):
			force = true
		case engine.EqualFold(c.Args[2], "takeover"):
			force, takeover = true, true
		default:
			c.Error(engine.ErrSyntax)
			return
		}
	}
	if e := c.D.Cluster.Failover(force, takeover); e != "" {
		c.Error("ERR " + e)
		return
	}
	c.W.OK()
}

func clusterSaveConfig(c *engine.Ctx) {
	if e := c.D.Cluster.SaveConfig(); e != "" {
		c.Error("ERR " + e)
		return
	}
	c.W.OK()
}

func clusterSetConfigEpoch(c *engine.Ctx) {
	epoch, ok := redisconv.ParseInt(c.Args[2])
	if !ok {
		c.Error(engine.ErrNotInteger)
		return
	}
	if e := c.D.Cluster.SetConfigEpoch(epoch); e != "" {
		c.Error("ERR " + e)
		return
	}
	c.W.OK()
}

// CLUSTER SETSLOT <slot> IMPORTING <node-id> | MIGRATING <node-id> |
// STABLE | NODE <node-id>: the action and its argument count are read
// as Redis reads them (a wrong count is an invalid action); the keys of
// the slot are counted here, where the keyspace is, for NODE's check.
func clusterSetSlot(c *engine.Ctx) {
	action := cluster.SetSlotInvalid
	switch a := c.Args[3]; {
	case engine.EqualFold(a, "migrating") && len(c.Args) == 5:
		action = cluster.SetSlotMigrating
	case engine.EqualFold(a, "importing") && len(c.Args) == 5:
		action = cluster.SetSlotImporting
	case engine.EqualFold(a, "stable") && len(c.Args) == 4:
		action = cluster.SetSlotStable
	case engine.EqualFold(a, "node") && len(c.Args) == 5:
		action = cluster.SetSlotNode
	}
	slot := slotArg(c.Args[2])
	var name []byte
	keys := 0
	if len(c.Args) == 5 {
		name = c.Args[4]
	}
	if slot >= 0 && action == cluster.SetSlotNode {
		keys = c.KS.DB(0).CountKeysInSlot(slot)
	}
	if e := c.D.Cluster.SetSlot(slot, action, name, keys); e != "" {
		c.Error("ERR " + e)
		return
	}
	c.W.OK()
}

// ASKING: the next command may touch a slot this node is importing.
func askingCommand(c *engine.Ctx) {
	c.Client.Asking = true
	c.W.OK()
}

// READONLY: a replica serves reads of its master's slots to this client.
func readonlyCommand(c *engine.Ctx) {
	c.Client.ReadOnlyCluster = true
	c.W.OK()
}

// READWRITE ends READONLY.
func readwriteCommand(c *engine.Ctx) {
	c.Client.ReadOnlyCluster = false
	c.W.OK()
}

// clusterHelpLines is CLUSTER HELP (clusterCommand's help).
var clusterHelpLines = []string{
	"ADDSLOTS <slot> [<slot> ...]",
	"    Assign slots to current node.",
	"ADDSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]",
	"    Assign slots which are between <start-slot> and <end-slot> to current node.",
	"BUMPEPOCH",
	"    Advance the cluster config epoch.",
	"COUNT-FAILURE-REPORTS <node-id>",
	"    Return number of failure reports for <node-id>.",
	"COUNTKEYSINSLOT <slot>",
	"    Return the number of keys in <slot>.",
	"DELSLOTS <slot> [<slot> ...]",
	"    Delete slots information from current node.",
	"DELSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]",
	"    Delete slots information which are between <start-slot> and <end-slot> from current node.",
	"FAILOVER [FORCE|TAKEOVER]",
	"    Promote current replica node to being a master.",
	"FORGET <node-id>",
	"    Remove a node from the cluster.",
	"GETKEYSINSLOT <slot> <count>",
	"    Return key names stored by current node in a slot.",
	"FLUSHSLOTS",
	"    Delete current node own slots information.",
	"INFO",
	"    Return information about the cluster.",
	"KEYSLOT <key>",
	"    Return the hash slot for <key>.",
	"MEET <ip> <port> [<bus-port>]",
	"    Connect nodes into a working cluster.",
	"MYID",
	"    Return the node id.",
	"NODES",
	"    Return cluster configuration seen by node. Output format:",
	"    <id> <ip:port> <flags> <master> <pings> <pongs> <epoch> <link> <slot> ...",
	"REPLICATE <node-id>",
	"    Configure current node as replica to <node-id>.",
	"RESET [HARD|SOFT]",
	"    Reset current node (default: soft).",
	"SET-CONFIG-EPOCH <epoch>",
	"    Set config epoch of current node.",
	"SETSLOT <slot> (IMPORTING <node-id>|MIGRATING <node-id>|STABLE|NODE <node-id>)",
	"    Set slot state.",
	"REPLICAS <node-id>",
	"    Return <node-id> replicas.",
	"SAVECONFIG",
	"    Force saving cluster configuration on disk.",
	"SLOTS",
	"    Return information about slots range mappings. Each range is made of:",
	"    start, end, master and replicas IP addresses, ports and ids",
	"SHARDS",
	"    Return information about slot range mappings and the nodes associated with them.",
	"LINKS",
	"    Return information about all network links between this node and its peers.",
	"    Output format is an array where each array element is a map containing attributes of a link",
}
