package commands

import (
	"crypto/rand"
	"encoding/hex"
	"slices"
	"strings"
	"time"

	"github.com/zredis/zredis/commands/metadata"
	"github.com/zredis/zredis/engine"
)

// ACL (Redis acl.c): the users and their rules live in the engine
// (engine.ACL), which checks every command; these are the subcommands
// that show and change them, with redis-server 7.0's replies.
func init() {
	const read = engine.NoScript | engine.Loading | engine.Stale
	const admin = engine.Admin | read
	register(
		&engine.Command{Name: "acl", Arity: -2, ACL: "@slow", Group: "server"},
		&engine.Command{Name: "acl|cat", Arity: -2, Flags: read, ACL: "@slow", Run: aclCatCommand},
		&engine.Command{Name: "acl|deluser", Arity: -3, Flags: admin, Run: aclDeluserCommand},
		&engine.Command{Name: "acl|dryrun", Arity: -4, Flags: admin, Run: aclDryrunCommand},
		&engine.Command{Name: "acl|genpass", Arity: -2, Flags: read, ACL: "@slow", Run: aclGenpassCommand},
		&engine.Command{Name: "acl|getuser", Arity: 3, Flags: admin, Run: aclGetuserCommand},
		&engine.Command{Name: "acl|help", Arity: 2, Flags: engine.Loading | engine.Stale, ACL: "@slow", Run: aclHelpCommand},
		&engine.Command{Name: "acl|list", Arity: 2, Flags: admin, Run: aclListCommand},
		&engine.Command{Name: "acl|load", Arity: 2, Flags: admin, Run: aclLoadCommand},
		&engine.Command{Name: "acl|log", Arity: -2, Flags: admin, Run: aclLogCommand},
		&engine.Command{Name: "acl|save", Arity: 2, Flags: admin, Run: aclSaveCommand},
		&engine.Command{Name: "acl|setuser", Arity: -3, Flags: admin, Run: aclSetuserCommand},
		&engine.Command{Name: "acl|users", Arity: 2, Flags: admin, Run: aclUsersCommand},
		&engine.Command{Name: "acl|whoami", Arity: 2, Flags: read, ACL: "@slow", Run: aclWhoamiCommand},
	)
}

// aclCatCommand is ACL CAT [category]: the categories, or the commands
// (subcommands by their full name) of one, as the table declares them.
func aclCatCommand(c *engine.Ctx) {
	if len(c.Args) > 3 {
		c.Error(engine.ErrSubcommandSyntax(string(c.Args[1]), "ACL"))
		return
	}
	if len(c.Args) == 2 {
		c.W.Array(len(engine.ACLCategoryNames))
		for _, cat := range engine.ACLCategoryNames {
			c.W.BulkString(cat)
		}
		return
	}
	want := "@" + strings.ToLower(string(c.Args[2]))
	if !slices.Contains(engine.ACLCategoryNames, want[1:]) {
		c.Error("ERR Unknown category '" + string(c.Args[2]) + "'")
		return
	}
	var names []string
	c.D.Table.Each(func(cmd *engine.Command) {
		if !cmd.Extension && cmd.Since == "" && slices.Contains(cmd.ACLCategories(), want) {
			names = append(names, cmd.Name)
		}
	})
	c.W.Array(len(names))
	for _, n := range names {
		c.W.BulkString(n)
	}
}

// aclGenpassCommand is ACL GENPASS [bits]: a random password of bits
// (256 by default, at most 4096) as hex digits, rounded up.
func aclGenpassCommand(c *engine.Ctx) {
	bits := int64(256)
	if len(c.Args) > 3 {
		c.Error(engine.ErrSubcommandSyntax(string(c.Args[1]), "ACL"))
		return
	}
	if len(c.Args) == 3 {
		n, ok := engine.ParseInt(c.Args[2])
		if !ok {
			c.Error(engine.ErrNotInteger)
			return
		}
		if n <= 0 || n > 4096 {
			c.Error("ERR ACL GENPASS argument must be the number of bits for the output password, a positive number up to 4096")
			return
		}
		bits = n
	}
	chars := (bits + 3) / 4
	buf := make([]byte, (chars+1)/2)
	rand.Read(buf)
	c.W.BulkString(hex.EncodeToString(buf)[:chars])
}

func aclWhoamiCommand(c *engine.Ctx) {
	if c.Client.User == nil {
		c.W.BulkString("default")
		return
	}
	c.W.BulkString(c.Client.User.Name)
}

func aclUsersCommand(c *engine.Ctx) {
	users := c.D.ACL.Users()
	c.W.Array(len(users))
	for _, u := range users {
		c.W.BulkString(u.Name)
	}
}

// aclListCommand is ACL LIST: every user as an ACL file line.
func aclListCommand(c *engine.Ctx) {
	users := c.D.ACL.Users()
	c.W.Array(len(users))
	for _, u := range users {
		c.W.BulkString("user " + u.Name + " " + c.D.ACL.Describe(u))
	}
}

// aclGetuserCommand is ACL GETUSER name: the user's flags, password
// hashes, root selector and other selectors; a null reply when there is
// no such user.
func aclGetuserCommand(c *engine.Ctx) {
	u := c.D.ACL.User(string(c.Args[2]))
	if u == nil {
		c.W.Null()
		return
	}
	sels := c.D.ACL.Selectors(u)
	selector := func(f engine.SelectorFields) {
		c.W.BulkString("commands")
		c.W.BulkString(f.Commands)
		c.W.BulkString("keys")
		c.W.BulkString(f.Keys)
		c.W.BulkString("channels")
		c.W.BulkString(f.Channels)
	}
	c.W.Map(6)
	c.W.BulkString("flags")
	flags := u.Flags()
	c.W.Set(len(flags))
	for _, f := range flags {
		c.W.BulkString(f)
	}
	c.W.BulkString("passwords")
	pw := u.Passwords()
	c.W.Array(len(pw))
	for _, p := range pw {
		c.W.BulkString(p)
	}
	selector(sels[0])
	c.W.BulkString("selectors")
	c.W.Array(len(sels) - 1)
	for _, f := range sels[1:] {
		c.W.Map(3)
		selector(f)
	}
}

// aclSetuserCommand is ACL SETUSER name rule...: every argument after the
// subcommand is redacted from MONITOR and the slow log first, since rules
// carry passwords. The rules apply all or none.
func aclSetuserCommand(c *engine.Ctx) {
	name := string(c.Args[2])
	args := make([]string, len(c.Args))
	for i, a := range c.Args {
		args[i] = string(a)
	}
	for j := 2; j < len(c.Args); j++ {
		c.Redact(j)
	}
	if strings.ContainsAny(name, " \t\n\v\f\r\x00") {
		c.Error(engine.ErrACLUserSpaces)
		return
	}
	rules, at, ok := engine.MergeSelectorArgs(args[3:])
	if !ok {
		c.Error("ERR Unmatched parenthesis in acl selector starting at '" + args[3+at] + "'.")
		return
	}
	if bad, err := c.D.ACL.SetUserRules(c.Srv, c.Client, name, rules); err != nil {
		c.Error("ERR Error in ACL SETUSER modifier '" + bad + "': " + err.Error())
		return
	}
	c.W.OK()
}

// aclDeluserCommand is ACL DELUSER name...: the number of users deleted;
// their clients are disconnected. The default user cannot be.
func aclDeluserCommand(c *engine.Ctx) {
	for _, name := range c.Args[2:] {
		if string(name) == "default" {
			c.Error(engine.ErrACLDefaultUndeletable)
			return
		}
	}
	n := 0
	for _, name := range c.Args[2:] {
		if c.D.ACL.DeleteUser(c.Srv, c.Client, string(name)) {
			n++
		}
	}
	c.W.Int(int64(n))
}

// aclLoadCommand is ACL LOAD: the users of the aclfile replace all
// others, or nothing changes.
func aclLoadCommand(c *engine.Ctx) {
	file := c.Config().String("aclfile")
	if file == "" {
		c.Error(engine.ErrACLNoFile)
		return
	}
	if errs := c.D.ACL.LoadFile(c.Srv, c.Client, file); errs != "" {
		c.Error("ERR " + errs)
		return
	}
	c.W.OK()
}

// aclSaveCommand is ACL SAVE: every user written to the aclfile.
func aclSaveCommand(c *engine.Ctx) {
	file := c.Config().String("aclfile")
	if file == "" {
		c.Error(engine.ErrACLNoFile)
		return
	}
	if err := c.D.ACL.SaveFile(file); err != nil {
		c.Srv.Warning(err.Error())
		c.Error(engine.ErrACLSave)
		return
	}
	c.W.OK()
}

// aclLogCommand is ACL LOG [count | RESET]: the latest denials, ten by
// default, newest first.
func aclLogCommand(c *engine.Ctx) {
	if len(c.Args) > 3 {
		c.Error(engine.ErrSubcommandSyntax(string(c.Args[1]), "ACL"))
		return
	}
	count := int64(10)
	if len(c.Args) == 3 {
		if engine.EqualFold(c.Args[2], "reset") {
			c.D.ACL.ResetLog()
			c.W.OK()
			return
		}
		n, ok := engine.ParseInt(c.Args[2])
		if !ok {
			c.Error(engine.ErrNotInteger)
			return
		}
		count = max(n, 0)
	}
	entries := c.D.ACL.Log(int(min(count, 1<<30)))
	now := time.Now().UnixMilli()
	c.W.Array(len(entries))
	for _, e := range entries {
		c.W.Map(7)
		c.W.BulkString("count")
		c.W.Int(e.Count)
		c.W.BulkString("reason")
		c.W.BulkString(e.Reason.ReasonName())
		c.W.BulkString("context")
		c.W.BulkString(e.Context)
		c.W.BulkString("object")
		c.W.BulkString(e.Object)
		c.W.BulkString("username")
		c.W.BulkString(e.Username)
		c.W.BulkString("age-seconds")
		c.W.Double(float64(now-e.CtimeMs) / 1000)
		c.W.BulkString("client-info")
		c.W.BulkString(e.ClientInfo)
	}
}

// aclDryrunCommand is ACL DRYRUN user command [arg ...]: whether the user
// could run the command, and if not, why, as a bulk string.
func aclDryrunCommand(c *engine.Ctx) {
	u := c.D.ACL.User(string(c.Args[2]))
	if u == nil {
		c.Error("ERR User '" + string(c.Args[2]) + "' not found")
		return
	}
	args := c.Args[3:]
	cmd := c.D.Table.Lookup(args[0])
	if cmd != nil && cmd.Subs != nil && len(args) >= 2 {
		cmd = engine.Lookup2(cmd, args[1])
	}
	if cmd == nil {
		c.Error("ERR Command '" + string(args[0]) + "' not found")
		return
	}
	if !cmd.ArityOK(len(args)) {
		c.Error(engine.ErrWrongArgs(cmd.Name))
		return
	}
	switch d, pos := c.D.ACL.Check(u, cmd, args); d {
	case engine.Allowed:
		c.W.OK()
	case engine.DeniedCommand:
		c.W.BulkString("This user has no permissions to run the '" + cmd.Name + "' command")
	case engine.DeniedKey:
		c.W.BulkString("This user has no permissions to access the '" + string(args[pos]) + "' key")
	default:
		c.W.BulkString("This user has no permissions to access the '" + string(args[pos]) + "' channel")
	}
}

var aclHelpLines = []string{
	"CAT [<category>]",
	"    List all commands that belong to <category>, or all command categories",
	"    when no category is specified.",
	"DELUSER <username> [<username> ...]",
	"    Delete a list of users.",
	"DRYRUN <username> <command> [<arg> ...]",
	"    Returns whether the user can execute the given command without executing the command.",
	"GETUSER <username>",
	"    Get the user's details.",
	"GENPASS [<bits>]",
	"    Generate a secure 256-bit user password. The optional `bits` argument can",
	"    be used to specify a different size.",
	"LIST",
	"    Show users details in config file format.",
	"LOAD",
	"    Reload users from the ACL file.",
	"LOG [<count> | RESET]",
	"    Show the ACL log entries.",
	"SAVE",
	"    Save the current config to the ACL file.",
	"SETUSER <username> <attribute> [<attribute> ...]",
	"    Create or modify a user with the specified attributes.",
	"USERS",
	"    List all the registered usernames.",
	"WHOAMI",
	"    Return the current connection username.",
}

func aclHelpCommand(c *engine.Ctx) { c.ReplyHelp(aclHelpLines) }

// unservedCommands are the commands and subcommands of Redis 7.0 that
// the table lacks, with their ACL categories, from the metadata taken
// from redis-server: ACL rules written for it ("-debug", "+@geo") load
// and read back the same.
func unservedCommands(t *engine.Table) []engine.UnservedCommand {
	var out []engine.UnservedCommand
	for _, name := range metadata.Load().Names() {
		if lookupFull(t, name) == nil {
			out = append(out, engine.UnservedCommand{Name: name, Categories: metadata.Get(name).ACL})
		}
	}
	return out
}

// lookupFull finds a command or subcommand by its full name.
func lookupFull(t *engine.Table, name string) *engine.Command {
	container, sub, isSub := strings.Cut(name, "|")
	cmd := t.Lookup([]byte(container))
	if cmd == nil || !isSub {
		return cmd
	}
	return engine.Lookup2(cmd, []byte(sub))
}

// keyAccess returns the keys of cmd in args with the access the command
// makes of each, for ACL key patterns (acl.c ACLSelectorCheckKey): read
// for a key spec flagged access, write for insert, update or delete. The
// flags are the command's KeyFlags when it has one, else those of Redis's
// key specifications; a key neither describes needs both.
func keyAccess(cmd *engine.Command, args [][]byte) []engine.KeyRef {
	pos, flags := keysWithFlags(cmd, args)
	out := make([]engine.KeyRef, 0, len(pos))
	for i, p := range pos {
		r := engine.KeyRef{Pos: p}
		if flags[i] == nil {
			r.Read, r.Write = true, true
		}
		for _, f := range flags[i] {
			switch f {
			case "access":
				r.Read = true
			case "insert", "update", "delete":
				r.Write = true
			}
		}
		out = append(out, r)
	}
	return out
}

// keysWithFlags returns the key positions of cmd in args and each key's
// flags (nil where nothing describes them). A command whose every key
// spec is not_key has none.
func keysWithFlags(cmd *engine.Command, args [][]byte) ([]int, [][]string) {
	if onlyNotKeys(cmd) {
		return nil, nil
	}
	pos := cmd.KeyPositions(args)
	if len(pos) == 0 {
		return nil, nil
	}
	var specFlags map[int][]string
	var meta *metadata.Entry
	if cmd.KeyFlags == nil {
		if meta = metadata.Get(cmd.Name); meta != nil {
			specFlags = keySpecFlags(meta.Specs, args)
		}
	}
	flags := make([][]string, len(pos))
	for i, p := range pos {
		if cmd.KeyFlags != nil {
			flags[i] = cmd.KeyFlags(args, p)
		} else if f, ok := specFlags[p]; ok {
			flags[i] = f
		} else if meta != nil && len(meta.Specs) == 1 {
			flags[i] = meta.Specs[0].Flags
		}
	}
	return pos, flags
}
