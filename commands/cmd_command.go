package commands

import (
	"slices"
	"strings"

	"github.com/zredis/zredis/commands/metadata"
	"github.com/zredis/zredis/engine"
	"github.com/zredis/zredis/sds"
)

// The COMMAND family (server.c commandCommand and its subcommands).
//
// Name, arity, flags, key positions and ACL categories come from the
// command table; tips, key specifications and documentation come from
// the metadata generated from redis-server 7.0 (commands/metadata). Only
// what the table holds is listed: COMMAND, COMMAND COUNT and COMMAND LIST
// show the commands zredis implements, and COMMAND INFO/DOCS answer for a
// Redis command zredis lacks as Redis answers for an unknown name.
func init() {
	// Decoded here, at start-up, so a defective embedded file fails the
	// process before it serves anyone. The docs wait for COMMAND DOCS
	// (metadata.DocsOf); the package's tests decode them all.
	metadata.Load()
	const flags = engine.Loading | engine.Stale
	register(
		&engine.Command{Name: "command", Arity: -1, Flags: flags, ACL: "@connection", Group: "server", Run: commandCommand},
		&engine.Command{Name: "command|count", Arity: 2, Flags: flags, ACL: "@connection", Run: commandCountCommand},
		&engine.Command{Name: "command|docs", Arity: -2, Flags: flags, ACL: "@connection", Run: commandDocsCommand},
		&engine.Command{Name: "command|getkeys", Arity: -4, Flags: flags, ACL: "@connection", Run: commandGetKeysCommand},
		&engine.Command{Name: "command|getkeysandflags", Arity: -4, Flags: flags, ACL: "@connection", Run: commandGetKeysAndFlagsCommand},
		&engine.Command{Name: "command|help", Arity: 2, Flags: flags, ACL: "@connection", Run: commandHelpCommand},
		&engine.Command{Name: "command|info", Arity: -2, Flags: flags, ACL: "@connection", Run: commandInfoCommand},
		&engine.Command{Name: "command|list", Arity: -2, Flags: flags, ACL: "@connection", Run: commandListCommand},
	)
}

// ---- COMMAND, COMMAND INFO ----------------------------------------------

// commandCommand is COMMAND without arguments: the info of every command.
func commandCommand(c *engine.Ctx) {
	all := c.D.Table.Listed()
	c.W.Array(len(all))
	for _, cmd := range all {
		writeCommandInfo(c, cmd)
	}
}

// commandInfoCommand is COMMAND INFO [name ...]: a null for a name that is
// not a command.
func commandInfoCommand(c *engine.Ctx) {
	if len(c.Args) == 2 {
		commandCommand(c)
		return
	}
	c.W.Array(len(c.Args) - 2)
	for _, name := range c.Args[2:] {
		if cmd := lookupFullName(c.D.Table, name); cmd != nil {
			writeCommandInfo(c, cmd)
		} else {
			c.W.Null()
		}
	}
}

// writeCommandInfo writes the 10-element COMMAND INFO reply of cmd
// (server.c addReplyCommandInfo).
func writeCommandInfo(c *engine.Ctx, cmd *engine.Command) {
	w := c.W
	meta := metadata.Get(cmd.Name)
	w.Array(10)
	w.BulkString(cmd.Name)
	w.Int(int64(cmd.Arity))
	flags := cmd.Flags
	if cmd.Keys != nil {
		flags |= engine.MovableKeys
	}
	writeStatusSet(c, flags.Names())
	w.Int(int64(cmd.FirstKey))
	w.Int(int64(cmd.LastKey))
	w.Int(int64(cmd.KeyStep))
	writeStatusSet(c, orderedCategories(cmd))
	if meta != nil {
		w.Set(len(meta.Tips))
		for _, t := range meta.Tips {
			w.BulkString(t)
		}
		meta.KeySpecs.Write(w)
	} else {
		w.Set(0)
		w.Set(0)
	}
	subs := cmd.SortedSubs()
	if len(subs) == 0 {
		w.Set(0)
		return
	}
	w.Array(len(subs))
	for _, sub := range subs {
		writeCommandInfo(c, sub)
	}
}

func writeStatusSet(c *engine.Ctx, items []string) {
	c.W.Set(len(items))
	for _, s := range items {
		c.W.Simple(s)
	}
}

// orderedCategories returns cmd's ACL categories in the order Redis
// lists them (the order of ACL CAT), whatever order the table declares
// them in. A category Redis does not know goes last.
func orderedCategories(cmd *engine.Command) []string {
	cats := cmd.ACLCategories()
	order := metadata.Load().Categories
	out := make([]string, 0, len(cats))
	for _, o := range order {
		for _, cat := range cats {
			if len(cat) == len(o)+1 && cat[0] == '@' && cat[1:] == o {
				out = append(out, cat)
				break
			}
		}
	}
	for _, cat := range cats {
		if categoryIndex(cat) < 0 {
			out = append(out, cat)
		}
	}
	return out
}

// categoryIndex is the position of "@name" (or "name", any case) in ACL
// CAT's order, or -1.
func categoryIndex(cat string) int {
	cat = strings.TrimPrefix(cat, "@")
	for i, o := range metadata.Load().Categories {
		if strings.EqualFold(o, cat) {
			return i
		}
	}
	return -1
}

// lookupFullName finds a command of t by the name COMMAND INFO and DOCS take:
// "name" or "container|sub", case-insensitively (server.c
// lookupCommandBySds). Deeper names, a sub of a non-container and an
// Extension subcommand (not a 7.0 command) are nil.
func lookupFullName(t *engine.Table, name []byte) *engine.Command {
	i := -1
	for j, ch := range name {
		if ch == '|' {
			if i >= 0 {
				return nil
			}
			i = j
		}
	}
	if i < 0 {
		return t.Lookup(name)
	}
	parent := t.Lookup(name[:i])
	if parent == nil || len(parent.Subs) == 0 {
		return nil
	}
	return lookupSub(parent, name[i+1:])
}

// lookupSub is Lookup2 without the Extension subcommands, which
// introspection does not show.
func lookupSub(parent *engine.Command, name []byte) *engine.Command {
	if sub := engine.Lookup2(parent, name); sub != nil && !sub.Extension {
		return sub
	}
	return nil
}

// ---- COMMAND DOCS ------------------------------------------------------

// commandDocsCommand is COMMAND DOCS [name ...]: a map from name to docs,
// names that are not commands left out.
func commandDocsCommand(c *engine.Ctx) {
	var cmds []*engine.Command
	if len(c.Args) == 2 {
		cmds = c.D.Table.Listed()
	} else {
		cmds = make([]*engine.Command, 0, len(c.Args)-2)
		for _, name := range c.Args[2:] {
			if cmd := lookupFullName(c.D.Table, name); cmd != nil {
				cmds = append(cmds, cmd)
			}
		}
	}
	c.W.Map(len(cmds))
	for _, cmd := range cmds {
		c.W.BulkString(cmd.Name)
		writeCommandDocs(c, cmd)
	}
}

// writeCommandDocs writes cmd's docs map (server.c addReplyCommandDocs):
// Redis's pairs from the metadata, then the table's subcommands.
func writeCommandDocs(c *engine.Ctx, cmd *engine.Command) {
	w := c.W
	subs := cmd.SortedSubs()
	extra := 0
	if len(subs) > 0 {
		extra = 1
	}
	if docs := metadata.DocsOf(cmd.Name); docs != nil {
		w.Map(len(docs.Elems)/2 + extra)
		for i := range docs.Elems {
			docs.Elems[i].Write(w)
		}
	} else {
		// A command Redis 7.0 does not have: the three pairs Redis
		// always sends (no summary: its text would be Redis's own).
		w.Map(3 + extra)
		w.BulkString("summary")
		w.BulkString("")
		w.BulkString("since")
		w.BulkString(cmd.Since) // the Redis that added it, for a later command
		w.BulkString("group")
		w.BulkString(cmd.Group)
	}
	if len(subs) == 0 {
		return
	}
	w.BulkString("subcommands")
	w.Map(len(subs))
	for _, sub := range subs {
		w.BulkString(sub.Name)
		writeCommandDocs(c, sub)
	}
}

// ---- COMMAND COUNT, COMMAND LIST ---------------------------------------

func commandCountCommand(c *engine.Ctx) { c.W.Int(int64(len(c.D.Table.Listed()))) }

// commandListFilter is COMMAND LIST's FILTERBY clause.
type commandListFilter struct {
	kind byte // 0 none, 'm' module, 'a' aclcat, 'p' pattern
	arg  []byte
	cat  int // aclcat: index of the category, -1 when unknown
}

// keep reports whether cmd passes the filter (server.c
// shouldFilterFromCommandList).
func (f *commandListFilter) keep(cmd *engine.Command) bool {
	switch f.kind {
	case 'm':
		return false // zredis loads no modules
	case 'a':
		if f.cat < 0 {
			return false
		}
		for _, cat := range cmd.ACLCategories() {
			if categoryIndex(cat) == f.cat {
				return true
			}
		}
		return false
	case 'p':
		return sds.MatchString(f.arg, cmd.Name, true)
	}
	return true
}

// commandListCommand is COMMAND LIST [FILTERBY MODULE m|ACLCAT c|PATTERN p]:
// the names of every command and subcommand that pass the filter.
func commandListCommand(c *engine.Ctx) {
	var f commandListFilter
	for i := 2; i < len(c.Args); i++ {
		more := len(c.Args) - 1 - i
		if !engine.EqualFold(c.Args[i], "filterby") || more != 2 {
			c.Error(engine.ErrSyntax)
			return
		}
		switch kind := c.Args[i+1]; {
		case engine.EqualFold(kind, "module"):
			f.kind = 'm'
		case engine.EqualFold(kind, "aclcat"):
			f.kind = 'a'
		case engine.EqualFold(kind, "pattern"):
			f.kind = 'p'
		default:
			c.Error(engine.ErrSyntax)
			return
		}
		f.arg = c.Args[i+2]
		i += 2
	}
	if f.kind == 'a' {
		// ACL categories are named without '@' here (acl.c
		// ACLGetCommandCategoryFlagByName).
		f.cat = -1
		if len(f.arg) == 0 || f.arg[0] != '@' {
			f.cat = categoryIndex(string(f.arg))
		}
	}
	mark := c.W.DeferArray()
	n := 0
	for _, cmd := range c.D.Table.Listed() {
		if f.keep(cmd) {
			c.W.BulkString(cmd.Name)
			n++
		}
		for _, sub := range cmd.SortedSubs() {
			if f.keep(sub) {
				c.W.BulkString(sub.Name)
				n++
			}
		}
	}
	c.W.FillArray(mark, n)
}

// ---- COMMAND GETKEYS, COMMAND GETKEYSANDFLAGS --------------------------

func commandGetKeysCommand(c *engine.Ctx)         { getKeysGeneric(c, false) }
func commandGetKeysAndFlagsCommand(c *engine.Ctx) { getKeysGeneric(c, true) }

// getKeysGeneric extracts the keys of the command given as arguments
// without running it (server.c getKeysSubcommandImpl): the command is
// looked up (its subcommand when it is a container), then it must have
// key arguments, then its arity must hold. Key positions come from the
// table; withFlags adds each key's access flags: the command's KeyFlags
// when it has one (Redis's getkeys proc for variable_flags specs), else
// those of Redis's key specifications that find the key.
func getKeysGeneric(c *engine.Ctx, withFlags bool) {
	args := c.Args[2:]
	target := c.D.Table.Lookup(args[0])
	if target != nil && len(target.Subs) > 0 && len(args) >= 2 {
		target = lookupSub(target, args[1])
	}
	if target == nil {
		c.Error(engine.ErrGetKeysInvalidCommand)
		return
	}
	if target.FirstKey <= 0 && target.Keys == nil || onlyNotKeys(target) {
		c.Error(engine.ErrGetKeysNoKeys)
		return
	}
	if n := len(args); (target.Arity > 0 && target.Arity != n) || n < -target.Arity {
		c.Error(engine.ErrGetKeysArity)
		return
	}
	pos := target.KeyPositions(args)
	if len(pos) == 0 {
		if target.Flags&engine.NoMandatoryKeys != 0 {
			c.W.Array(0)
		} else {
			c.Error(engine.ErrGetKeysInvalidArgs)
		}
		return
	}
	var flags [][]string
	if withFlags {
		_, flags = keysWithFlags(target, args)
	}
	c.W.Array(len(pos))
	for i, p := range pos {
		if !withFlags {
			c.W.Bulk(args[p])
			continue
		}
		c.W.Array(2)
		c.W.Bulk(args[p])
		writeKeyFlags(c, flags[i])
	}
}

// onlyNotKeys reports whether every key specification of cmd is flagged
// not_key (SSUBSCRIBE, SUNSUBSCRIBE, SPUBLISH: a shard channel stands
// where a key would, for cluster routing): COMMAND INFO shows their
// positions, but COMMAND GETKEYS finds no key there (db.c
// getKeysUsingKeySpecs skips not_key specs by default).
func onlyNotKeys(cmd *engine.Command) bool {
	meta := metadata.Get(cmd.Name)
	if meta == nil || len(meta.Specs) == 0 {
		return false
	}
	for _, s := range meta.Specs {
		if !slices.Contains(s.Flags, "not_key") {
			return false
		}
	}
	return true
}

// writeKeyFlags writes a key's access flags, without the spec-level
// markers (incomplete, variable_flags) that describe the spec rather than
// the access.
func writeKeyFlags(c *engine.Ctx, flags []string) {
	n := 0
	for _, f := range flags {
		if f != "incomplete" && f != "variable_flags" {
			n++
		}
	}
	c.W.Set(n)
	for _, f := range flags {
		if f != "incomplete" && f != "variable_flags" {
			c.W.Simple(f)
		}
	}
}

// keySpecFlags evaluates Redis's key specifications over args (the
// command and its arguments) and returns the flags of every key position
// they find (db.c getKeysUsingKeySpecs with GET_KEYSPEC_RETURN_PARTIAL:
// a spec that does not apply is skipped).
func keySpecFlags(specs []metadata.KeySpec, args [][]byte) map[int][]string {
	argc := len(args)
	out := map[int][]string{}
	for i := range specs {
		s := &specs[i]
		first := 0
		switch s.BeginSearch {
		case "index":
			first = s.Index
		case "keyword":
			start, end := s.StartFrom, argc-1
			if s.StartFrom <= 0 {
				start, end = argc+s.StartFrom, 1
			}
			for j := start; j != end; {
				if j >= argc || j < 1 {
					break
				}
				if engine.EqualFold(args[j], strings.ToLower(s.Keyword)) {
					first = j + 1
					break
				}
				if start <= end {
					j++
				} else {
					j--
				}
			}
			if first == 0 {
				continue
			}
		default:
			continue
		}
		var last, step int
		switch s.FindKeys {
		case "range":
			step = s.KeyStep
			switch {
			case s.LastKey >= 0:
				last = first + s.LastKey
			case s.Limit == 0:
				last = argc + s.LastKey
			default:
				last = first + ((argc-first)/s.Limit + s.LastKey)
			}
		case "keynum":
			step = s.KeyStep
			idx := first + s.KeyNumIdx
			if idx >= argc {
				continue
			}
			n, ok := engine.ParseInt(args[idx])
			if !ok || n < 0 || n > int64(argc) {
				continue
			}
			first += s.FirstKey
			last = first + int(n) - 1
		default:
			continue
		}
		if last >= argc || last < first || first >= argc || step <= 0 {
			continue
		}
		for j := first; j <= last; j += step {
			if _, seen := out[j]; !seen {
				out[j] = s.Flags
			}
		}
	}
	return out
}

// ---- COMMAND HELP ------------------------------------------------------

var commandHelpLines = []string{
	"(no subcommand)",
	"    Return details about all Redis commands.",
	"COUNT",
	"    Return the total number of commands in this Redis server.",
	"LIST",
	"    Return a list of all commands in this Redis server.",
	"INFO [<command-name> ...]",
	"    Return details about multiple Redis commands.",
	"    If no command names are given, documentation details for all",
	"    commands are returned.",
	"DOCS [<command-name> ...]",
	"    Return documentation details about multiple Redis commands.",
	"    If no command names are given, documentation details for all",
	"    commands are returned.",
	"GETKEYS <full-command>",
	"    Return the keys from a full Redis command.",
	"GETKEYSANDFLAGS <full-command>",
	"    Return the keys and the access flags from a full Redis command.",
}

func commandHelpCommand(c *engine.Ctx) { c.ReplyHelp(commandHelpLines) }
