package engine

import (
	"errors"
	"maps"
	"sort"
	"strings"
)

// Flag is a command flag as COMMAND INFO names it.
type Flag uint32

// Command flags (server.h CMD_*). The order is the order COMMAND INFO
// lists them in.
const (
	Write Flag = 1 << iota
	ReadOnly
	DenyOOM
	Admin
	PubSub
	NoScript
	Blocking
	Loading
	Stale
	SkipMonitor
	SkipSlowlog
	Fast
	NoAuth
	MayReplicate
	NoMandatoryKeys
	NoAsyncLoading
	NoMulti
	AllowBusy
	MovableKeys
	// Asking is cluster.c's asking flag (RESTORE-ASKING): served by a
	// cluster node importing the key's slot; without cluster mode it has
	// no effect, but COMMAND shows it.
	Asking
	// TouchesArbitraryKeys is CMD_TOUCHES_ARBITRARY_KEYS (SCAN,
	// RANDOMKEY): the command may expire keys it was not given, so the
	// DELs it propagates for them are not wrapped in MULTI ... EXEC when
	// it runs at top level, as active expiry's are not
	// (propagatePendingCommands). COMMAND hides it, as Redis does: it is
	// not in flagNames.
	TouchesArbitraryKeys
)

var flagNames = []struct {
	f    Flag
	name string
}{
	{Write, "write"}, {ReadOnly, "readonly"}, {DenyOOM, "denyoom"},
	{Admin, "admin"}, {PubSub, "pubsub"}, {NoScript, "noscript"},
	{Blocking, "blocking"}, {Loading, "loading"}, {Stale, "stale"},
	{SkipMonitor, "skip_monitor"}, {SkipSlowlog, "skip_slowlog"},
	{Fast, "fast"}, {NoAuth, "no_auth"}, {MayReplicate, "may_replicate"},
	{NoMandatoryKeys, "no_mandatory_keys"}, {NoAsyncLoading, "no_async_loading"},
	{NoMulti, "no_multi"}, {MovableKeys, "movablekeys"}, {AllowBusy, "allow_busy"},
	{Asking, "asking"},
}

// Names lists the flag names in COMMAND INFO order.
func (f Flag) Names() []string {
	var out []string
	for _, fn := range flagNames {
		if f&fn.f != 0 {
			out = append(out, fn.name)
		}
	}
	return out
}

// Handler runs one command. It may assume the table's arity holds: the
// dispatcher has checked it.
type Handler func(c *Ctx)

// Command is one entry of the command table, with Redis's metadata.
type Command struct {
	Name  string // lower case; "container|sub" for subcommands
	Arity int    // argument count including the name; negative = at least -Arity
	Flags Flag
	// ACL lists the explicit ACL categories ("@string", ...); the ones
	// Redis derives from flags (@write, @read, @fast, @slow, @admin,
	// @dangerous, @pubsub, @blocking) are added by ACLCategories.
	ACL      string
	FirstKey int // position of the first key, 0 = no keys
	LastKey  int // position of the last key; negative counts from the end
	KeyStep  int
	Group    string // COMMAND DOCS group: string, generic, server, ...
	Run      Handler
	Subs     map[string]*Command // subcommands of a container command

	// Keys extracts key positions when FirstKey/LastKey cannot describe
	// them (movable keys); nil otherwise.
	Keys func(args [][]byte) []int

	// KeyFlags gives the access flags (RO/RW/OW/RM, access, update,
	// insert, delete) of the key at args[pos] when they depend on the
	// arguments, as for the key specs Redis marks variable_flags (SET
	// with or without GET); nil otherwise, and COMMAND GETKEYSANDFLAGS
	// reports the flags of Redis's key specs.
	KeyFlags func(args [][]byte, pos int) []string

	// FlagsFor, when set, gives the flags the dispatcher's checks apply
	// to this call (Redis's getCommandFlags): EVAL's depend on the flags
	// its script declares. nil: Flags.
	FlagsFor func(d *Dispatcher, cmd *Command, args [][]byte) Flag

	// Protected names the directive (enable-debug-command) that must
	// allow the command before it runs, as server.c's CMD_PROTECTED: the
	// dispatcher refuses it otherwise, right after the arity check (see
	// ProtectedAllowed). COMMAND does not show it, as Redis hides it.
	Protected string

	// Since is the Redis version that introduced a command later than
	// 7.0 ("7.4.0" for the hash field expiration, "8.0.0" for HGETEX,
	// HSETEX and HGETDEL): it is served, and COMMAND INFO and DOCS answer
	// for it by name from the table alone (the 7.0 metadata has no docs
	// or key specs for it), but the lists leave it out (Table.Listed).
	Since string

	// Extension marks a subcommand of a later Redis that zredis accepts
	// for the sake of newer clients (CLIENT SETINFO). It runs, but
	// SortedSubs, and so COMMAND, leave it out: introspection stays 7.0's.
	Extension bool

	// id indexes the dispatcher's per-command counters; given by
	// Table.Register, whose table the command then belongs to (owner).
	id    int
	owner *Table
}

// CommandStats are the per-command counters of INFO commandstats.
type CommandStats struct {
	Calls, Usec, RejectedCalls, FailedCalls int64
}

// FullName is the name COMMAND and errors use ("config|get").
func (cmd *Command) FullName() string { return cmd.Name }

// ACLCategories returns the explicit categories plus those Redis derives
// from the flags (server.c setImplicitACLCategories).
func (cmd *Command) ACLCategories() []string {
	var cats []string
	if cmd.ACL != "" {
		cats = strings.Fields(cmd.ACL)
	}
	has := func(c string) bool {
		for _, x := range cats {
			if x == c {
				return true
			}
		}
		return false
	}
	add := func(c string) {
		if !has(c) {
			cats = append(cats, c)
		}
	}
	if cmd.Flags&Write != 0 {
		add("@write")
	}
	if cmd.Flags&ReadOnly != 0 && !has("@scripting") {
		add("@read")
	}
	if cmd.Flags&Admin != 0 {
		add("@admin")
		add("@dangerous")
	}
	if cmd.Flags&PubSub != 0 {
		add("@pubsub")
	}
	if cmd.Flags&Fast != 0 {
		add("@fast")
	}
	if cmd.Flags&Blocking != 0 {
		add("@blocking")
	}
	if !has("@fast") {
		add("@slow")
	}
	return cats
}

// KeyPositions returns the argument positions that hold keys.
func (cmd *Command) KeyPositions(args [][]byte) []int {
	if cmd.Keys != nil {
		return cmd.Keys(args)
	}
	if cmd.FirstKey <= 0 {
		return nil
	}
	last := cmd.LastKey
	if last < 0 {
		last = len(args) + last
	}
	var pos []int
	for i := cmd.FirstKey; i <= last && i < len(args); i += cmd.KeyStep {
		pos = append(pos, i)
		if cmd.KeyStep <= 0 {
			break
		}
	}
	return pos
}

// ArityOK checks n arguments against the declared arity.
func (cmd *Command) ArityOK(n int) bool {
	if cmd.Arity >= 0 {
		return n == cmd.Arity
	}
	return n >= -cmd.Arity
}

// Table is a command table: the command families fill one at start-up
// (commands.Table), and COMMAND, dispatch, MULTI and key extraction all
// read it. It is not changed once serving starts; a server whose
// configuration renames commands runs a renamed copy (Renamed).
type Table struct {
	byName map[string]*Command
	n      int // commands and subcommands registered (the next id)
	// longest is the length of the longest name in byName: Lookup's
	// bound.
	longest int
	// orig is the table a renamed one was made from: ACL rules name
	// commands by their real names.
	orig *Table

	// KeyAccess returns the keys of cmd in args with the access the
	// command makes of each, for the ACL's key patterns; set by whoever
	// fills the table, which knows the key specifications.
	KeyAccess func(cmd *Command, args [][]byte) []KeyRef
	// Unserved lists the Redis commands the table lacks, which ACL rules
	// may name all the same; set by whoever fills the table.
	Unserved func() []UnservedCommand
}

// NewTable makes an empty table.
func NewTable() *Table { return &Table{byName: map[string]*Command{}} }

// Register adds commands to the table. Subcommand names are given as
// "container|sub" and are attached to their container, which must be
// registered first.
func (t *Table) Register(cmds ...*Command) {
	for _, cmd := range cmds {
		if cmd.owner != nil {
			// Its id is its place in its first table's counters.
			panic("engine: registered in two tables: " + cmd.Name)
		}
		cmd.owner = t
		cmd.id = t.n
		t.n++
		if i := strings.IndexByte(cmd.Name, '|'); i >= 0 {
			parent := t.byName[cmd.Name[:i]]
			if parent == nil {
				panic("engine: subcommand before its container: " + cmd.Name)
			}
			if parent.Subs == nil {
				parent.Subs = map[string]*Command{}
			}
			parent.Subs[cmd.Name[i+1:]] = cmd
			if cmd.Group == "" {
				cmd.Group = parent.Group
			}
			continue
		}
		if _, dup := t.byName[cmd.Name]; dup {
			panic("engine: registered twice: " + cmd.Name)
		}
		t.byName[cmd.Name] = cmd
		t.longest = max(t.longest, len(cmd.Name))
	}
}

// Lookup finds a command by name as Redis does (strcasecmp): ASCII
// letters match in either case, any other byte only itself. A name
// longer than every one in the table is none of them, and is not
// lowered: an abusive client's inline lines of tens of kilobytes were,
// by strings.ToLower, which wrote each byte that is not UTF-8 as three
// (22 MB of the 394 MB that make bench's abusive clients made the
// server allocate in 16 s). Names up to 32 bytes are lowered on the
// stack; only a longer one given by rename-command allocates.
func (t *Table) Lookup(name []byte) *Command {
	if len(name) > t.longest {
		return nil
	}
	var buf [32]byte
	if len(name) <= len(buf) {
		return t.byName[string(lowerASCII(buf[:], name))]
	}
	return t.byName[string(lowerASCII(make([]byte, len(name)), name))]
}

// lowerASCII writes name into dst, which is at least as long, with its
// ASCII letters lowered (as Redis's command lookups fold case: strcasecmp,
// tolower in the C locale), and returns that prefix of dst.
func lowerASCII[S []byte | string](dst []byte, name S) []byte {
	dst = dst[:len(name)]
	for i := 0; i < len(name); i++ {
		c := name[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst[i] = c
	}
	return dst
}

// All returns every top-level command, sorted by name.
// Listed is All without the commands later than 7.0 (Since): what
// COMMAND, COMMAND LIST, COUNT and DOCS and ACL CAT list, so that
// introspection stays 7.0's while the later commands are served (and
// answer COMMAND INFO and DOCS by name).
func (t *Table) Listed() []*Command {
	all := t.All()
	out := all[:0]
	for _, c := range all {
		if c.Since == "" {
			out = append(out, c)
		}
	}
	return out
}

func (t *Table) All() []*Command {
	out := make([]*Command, 0, len(t.byName))
	for _, c := range t.byName {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Renamed returns the table under the names redis.conf's rename-command
// lines give, in their order: each pair renames From to To, or removes
// From when To is empty. The commands are the same: they keep their full
// names (COMMAND INFO, INFO commandstats) and their counters, as Redis's
// renamed commands do. Names match case-insensitively; subcommands cannot
// be renamed. Nothing changes when renames is empty.
func (t *Table) Renamed(renames [][2]string) (*Table, error) {
	if len(renames) == 0 {
		return t, nil
	}
	r := &Table{byName: maps.Clone(t.byName), n: t.n, orig: t, KeyAccess: t.KeyAccess, Unserved: t.Unserved}
	for _, rn := range renames {
		from := string(lowerASCII(make([]byte, len(rn[0])), rn[0]))
		cmd := r.byName[from]
		if cmd == nil {
			return nil, errors.New("No such command in rename-command")
		}
		delete(r.byName, from)
		if rn[1] == "" {
			continue
		}
		to := string(lowerASCII(make([]byte, len(rn[1])), rn[1]))
		if r.byName[to] != nil {
			return nil, errors.New("Target command name already exists")
		}
		r.byName[to] = cmd
	}
	for name := range r.byName {
		r.longest = max(r.longest, len(name))
	}
	return r, nil
}

// Each calls fn for every command in name order, each container followed
// by all its subcommands (extensions included) in name order, as INFO
// commandstats lists them.
func (t *Table) Each(fn func(cmd *Command)) {
	for _, cmd := range t.All() {
		fn(cmd)
		for _, sub := range cmd.AllSubs() {
			fn(sub)
		}
	}
}

// Remove takes a top-level command out of the table, for a test that
// registered a command of its own.
func (t *Table) Remove(name string) { delete(t.byName, name) }

// size is the number of commands and subcommands registered.
func (t *Table) size() int { return t.n }

// SortedSubs returns a container's subcommands sorted by name, without
// the extensions: what COMMAND shows.
func (cmd *Command) SortedSubs() []*Command { return cmd.sortedSubs(false) }

// AllSubs returns a container's subcommands sorted by name, extensions
// included: they are counted like any other.
func (cmd *Command) AllSubs() []*Command { return cmd.sortedSubs(true) }

func (cmd *Command) sortedSubs(extensions bool) []*Command {
	out := make([]*Command, 0, len(cmd.Subs))
	for _, c := range cmd.Subs {
		if extensions || !c.Extension {
			out = append(out, c)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
