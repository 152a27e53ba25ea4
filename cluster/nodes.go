package cluster

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/zredis/zredis/cluster/bus"
	"github.com/zredis/zredis/sds"
)

// Node is one node of the cluster as this node knows it (clusterNode).
type Node struct {
	Name     bus.Name
	IP       string
	Port     int // client port (the TLS one when tls-cluster)
	CPort    int // cluster bus port
	PPort    int // plaintext client port of a TLS node; not in nodes.conf
	Hostname string
	Flags    uint16   // bus.Flag*
	Master   bus.Name // the master of a replica; zero for a master
	// PingSent and PongReceived are Unix milliseconds, 0 for none.
	PingSent, PongReceived int64
	ConfigEpoch            uint64
	Slots                  bus.Bitmap
	// Linked: this node has a link to it (or it is this node), which
	// CLUSTER NODES shows as "connected".
	Linked bool
	// ReplOffset is the replication offset its last message gave (this
	// node's own is set from Options.Offset when a reply shows it); not
	// in nodes.conf.
	ReplOffset int64

	// What a running node (State) keeps of it, not in nodes.conf.
	link         *link              // this node's link to it
	inLink       *link              // its link to this node
	ctime        int64              // when this node learned of it, Unix ms
	dataReceived int64              // its last message, Unix ms
	failTime     int64              // when it was marked failing, Unix ms
	reports      map[bus.Name]int64 // masters that report it failing, and when
	dialing      bool               // its outbound link is being made
	votedTime    int64              // when this node last voted for a replica of it, Unix ms
	orphanedTime int64              // since when it is a master without working replicas, Unix ms
}

// IsReplica reports whether n is a replica with a known master.
func (n *Node) IsReplica() bool { return n.Flags&bus.FlagReplica != 0 && !n.Master.IsZero() }

// Config is what nodes.conf holds: the nodes, which of them is this one,
// the epochs, and the slots this node is moving.
type Config struct {
	Nodes         []*Node // in the file's order
	Myself        *Node
	CurrentEpoch  uint64
	LastVoteEpoch uint64
	// Migrating and Importing are this node's slots on their way to, or
	// from, another node (by name).
	Migrating map[int]bus.Name
	Importing map[int]bus.Name
}

// Lookup is the node named name, or nil.
func (c *Config) Lookup(name bus.Name) *Node {
	for _, n := range c.Nodes {
		if n.Name == name {
			return n
		}
	}
	return nil
}

// lookupOrAdd is the node named name, added with no address when new
// (createClusterNode for a name a line mentions before its own line).
func (c *Config) lookupOrAdd(name bus.Name) *Node {
	if n := c.Lookup(name); n != nil {
		return n
	}
	n := &Node{Name: name}
	c.Nodes = append(c.Nodes, n)
	return n
}

// ErrCorrupted is nodes.conf's refusal: Redis logs "Unrecoverable error:
// corrupted cluster config file." and exits.
var ErrCorrupted = errors.New("Unrecoverable error: corrupted cluster config file.")

// nodeFlagNames are the flags as CLUSTER NODES names them, in its order
// (redisNodeFlagsTable).
var nodeFlagNames = []struct {
	flag uint16
	name string
}{
	{bus.FlagMyself, "myself"},
	{bus.FlagMaster, "master"},
	{bus.FlagReplica, "slave"},
	{bus.FlagPFail, "fail?"},
	{bus.FlagFail, "fail"},
	{bus.FlagHandshake, "handshake"},
	{bus.FlagNoAddr, "noaddr"},
	{bus.FlagNoFailover, "nofailover"},
}

// flagNamed is the flag CLUSTER NODES names name (in any case), 0 for
// "noflags"; false for a name it does not have.
func flagNamed(name string) (uint16, bool) {
	if strings.EqualFold(name, "noflags") {
		return 0, true
	}
	for _, f := range nodeFlagNames {
		if strings.EqualFold(name, f.name) {
			return f.flag, true
		}
	}
	return 0, false
}

// validName is verifyClusterNodeId: 40 characters of a-z and 0-9.
func validName(s string) bool {
	if len(s) != bus.NameLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

func nameOf(s string) (n bus.Name) {
	copy(n[:], s)
	return n
}

// atoi is C's atoi: the leading digits, after an optional sign; 0 for
// none.
func atoi(s string) int {
	i, neg := 0, false
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		neg = s[i] == '-'
		i++
	}
	n := 0
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9' && n < 1<<40; i++ {
		n = n*10 + int(s[i]-'0')
	}
	if neg {
		return -n
	}
	return n
}

// ParseNodesConf reads a nodes.conf as clusterLoadConfig does, nowMs
// standing for the load's time: a node's nonzero ping and pong times
// become it, and a replica's config epoch 0. Link states are not read
// (links are made afresh). A file that does not name this node
// ("myself"), or a line Redis cannot read, is ErrCorrupted; so is an
// unknown flag, on which Redis panics. An empty file is no
// configuration (nil, nil): the node starts a new one.
func ParseNodesConf(data []byte, nowMs int64) (*Config, error) {
	c := &Config{Migrating: map[int]bus.Name{}, Importing: map[int]bus.Name{}}
	empty := true
	for _, line := range strings.Split(string(data), "\n") {
		if line == "" {
			continue
		}
		empty = false
		argv, ok := sds.SplitArgs(line)
		if !ok || len(argv) == 0 {
			return nil, ErrCorrupted
		}
		if strings.EqualFold(argv[0], "vars") {
			if len(argv)%2 == 0 {
				return nil, ErrCorrupted
			}
			for j := 1; j < len(argv); j += 2 {
				switch {
				case strings.EqualFold(argv[j], "currentEpoch"):
					c.CurrentEpoch, _ = strconv.ParseUint(argv[j+1], 10, 64)
				case strings.EqualFold(argv[j], "lastVoteEpoch"):
					c.LastVoteEpoch, _ = strconv.ParseUint(argv[j+1], 10, 64)
				}
				// Redis logs "Skipping unknown cluster config variable"
				// for another; the caller does not need it.
			}
			continue
		}
		if len(argv) < 8 || !validName(argv[0]) {
			return nil, ErrCorrupted
		}
		n := c.lookupOrAdd(nameOf(argv[0]))

		// ip:port[@cport][,hostname]
		addr := argv[1]
		n.Hostname = ""
		if i := strings.IndexByte(addr, ','); i >= 0 {
			addr, n.Hostname = addr[:i], addr[i+1:]
		}
		i := strings.LastIndexByte(addr, ':')
		if i < 0 {
			return nil, ErrCorrupted
		}
		n.IP = addr[:i]
		port, busPort, hasBus := strings.Cut(addr[i+1:], "@")
		n.Port = atoi(port)
		if hasBus {
			n.CPort = atoi(busPort)
		} else {
			n.CPort = n.Port + 10000 // CLUSTER_PORT_INCR, before 4.0's files had "@"
		}

		for _, f := range strings.Split(argv[2], ",") {
			flag, ok := flagNamed(f)
			if !ok {
				return nil, fmt.Errorf("%w (unknown flag %q)", ErrCorrupted, f)
			}
			if flag == bus.FlagMyself {
				if c.Myself != nil {
					return nil, ErrCorrupted // Redis asserts
				}
				c.Myself = n
				n.Linked = true
			}
			n.Flags |= flag
		}

		if !strings.HasPrefix(argv[3], "-") {
			if !validName(argv[3]) {
				return nil, ErrCorrupted
			}
			n.Master = c.lookupOrAdd(nameOf(argv[3])).Name
		}
		if atoi(argv[4]) != 0 {
			n.PingSent = nowMs
		}
		if atoi(argv[5]) != 0 {
			n.PongReceived = nowMs
		}
		if n.IsReplica() {
			n.ConfigEpoch = 0
		} else {
			n.ConfigEpoch, _ = strconv.ParseUint(leadingDigits(argv[6]), 10, 64)
		}

		for _, a := range argv[8:] {
			if strings.HasPrefix(a, "[") {
				// [slot->-name] migrating, [slot-<-name] importing.
				dash := strings.IndexByte(a, '-')
				if dash < 0 || dash+3 > len(a) {
					return nil, ErrCorrupted
				}
				slot := atoi(a[1:dash])
				if slot < 0 || slot >= Slots {
					return nil, ErrCorrupted
				}
				rest := a[dash+3:]
				end := strings.IndexByte(rest, ']')
				if end < 0 || !validName(rest[:end]) {
					return nil, ErrCorrupted
				}
				other := c.lookupOrAdd(nameOf(rest[:end])).Name
				if a[dash+1] == '>' {
					c.Migrating[slot] = other
				} else {
					c.Importing[slot] = other
				}
				continue
			}
			start, stop := 0, 0
			if lo, hi, ok := strings.Cut(a, "-"); ok {
				start, stop = atoi(lo), atoi(hi)
			} else {
				start = atoi(a)
				stop = start
			}
			if start < 0 || start >= Slots || stop < 0 || stop >= Slots {
				return nil, ErrCorrupted
			}
			for s := start; s <= stop; s++ {
				n.Slots.Set(s)
			}
		}
	}
	if empty {
		return nil, nil
	}
	if c.Myself == nil {
		return nil, ErrCorrupted
	}
	// A file edited by hand: the current epoch is at least every node's.
	for _, n := range c.Nodes {
		c.CurrentEpoch = max(c.CurrentEpoch, n.ConfigEpoch)
	}
	return c, nil
}

// leadingDigits is s up to its first non-digit (strtoull's reach).
func leadingDigits(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return s[:i]
		}
	}
	return s
}

// AppendNode appends n's line of CLUSTER NODES, without its newline
// (clusterGenNodeDescription); usePPort shows a TLS node's plaintext
// port.
func (c *Config) AppendNode(b []byte, n *Node, usePPort bool) []byte {
	port := n.Port
	if usePPort && n.PPort != 0 {
		port = n.PPort
	}
	b = append(b, n.Name[:]...)
	b = append(b, ' ')
	b = append(b, n.IP...)
	b = append(b, ':')
	b = strconv.AppendInt(b, int64(port), 10)
	b = append(b, '@')
	b = strconv.AppendInt(b, int64(n.CPort), 10)
	if n.Hostname != "" {
		b = append(b, ',')
		b = append(b, n.Hostname...)
	}
	b = append(b, ' ')
	flagsAt := len(b)
	for _, f := range nodeFlagNames {
		if n.Flags&f.flag != 0 {
			if len(b) > flagsAt {
				b = append(b, ',')
			}
			b = append(b, f.name...)
		}
	}
	if len(b) == flagsAt {
		b = append(b, "noflags"...)
	}
	b = append(b, ' ')
	epoch := n.ConfigEpoch
	if n.Master.IsZero() {
		b = append(b, '-')
	} else {
		b = append(b, n.Master[:]...)
		if m := c.Lookup(n.Master); m != nil && n.Flags&bus.FlagReplica != 0 {
			epoch = m.ConfigEpoch
		}
	}
	b = append(b, ' ')
	b = strconv.AppendInt(b, n.PingSent, 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, n.PongReceived, 10)
	b = append(b, ' ')
	b = strconv.AppendUint(b, epoch, 10)
	if n.Linked || n.Flags&bus.FlagMyself != 0 {
		b = append(b, " connected"...)
	} else {
		b = append(b, " disconnected"...)
	}
	b = appendSlotRanges(b, &n.Slots)
	if n.Flags&bus.FlagMyself != 0 && len(c.Migrating)+len(c.Importing) > 0 {
		// The slots moving, in order, a migration before an import of
		// the same slot. Built without an allocation per slot: a
		// reshard writes this line four times per slot moved, on a
		// heap that may hold millions of keys for the GC to scan.
		marked := make([]int, 0, len(c.Migrating)+len(c.Importing))
		for s := range c.Migrating {
			marked = append(marked, s)
		}
		for s := range c.Importing {
			if _, ok := c.Migrating[s]; !ok {
				marked = append(marked, s)
			}
		}
		slices.Sort(marked)
		for _, s := range marked {
			b = append(b, " ["...)
			b = strconv.AppendInt(b, int64(s), 10)
			if to, ok := c.Migrating[s]; ok {
				b = append(b, "->-"...)
				b = append(b, to[:]...)
			} else {
				from := c.Importing[s]
				b = append(b, "-<-"...)
				b = append(b, from[:]...)
			}
			b = append(b, ']')
		}
	}
	return b
}

// appendSlotRanges appends " start-end" for each run of set slots, " s"
// for a run of one.
func appendSlotRanges(b []byte, slots *bus.Bitmap) []byte {
	for s := slots.Next(0, true); s < Slots; s = slots.Next(s, true) {
		e := slots.Next(s, false) - 1
		b = append(b, ' ')
		b = strconv.AppendInt(b, int64(s), 10)
		if e > s {
			b = append(b, '-')
			b = strconv.AppendInt(b, int64(e), 10)
		}
		s = e + 1
	}
	return b
}

// AppendNodes appends CLUSTER NODES: a line per node, those with a flag
// of skip left out (clusterGenNodesDescription).
func (c *Config) AppendNodes(b []byte, skip uint16, usePPort bool) []byte {
	for _, n := range c.Nodes {
		if n.Flags&skip != 0 {
			continue
		}
		b = c.AppendNode(b, n, usePPort)
		b = append(b, '\n')
	}
	return b
}

// NodesConf is the content of nodes.conf (clusterSaveConfig): CLUSTER
// NODES without the nodes in handshake, then the epochs.
func (c *Config) NodesConf() []byte {
	b := c.AppendNodes(nil, bus.FlagHandshake, false)
	return fmt.Appendf(b, "vars currentEpoch %d lastVoteEpoch %d\n", c.CurrentEpoch, c.LastVoteEpoch)
}
