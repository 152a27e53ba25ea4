package commands

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"

	"github.com/zredis/zredis/engine"
)

// ACL (Redis acl.c) for the one user zredis has: "default", whose password
// is requirepass (nopass when it is empty) and who may run every command
// on every key and channel. The subcommands that read the users answer as
// redis-server 7.0 answers for that user; those that would create, change,
// delete or load users, or read the ACL log, answer an error saying so:
// nothing is accepted that would not be enforced.
func init() {
	const read = engine.NoScript | engine.Loading | engine.Stale
	const admin = engine.Admin | read
	register(
		&engine.Command{Name: "acl", Arity: -2, ACL: "@slow", Group: "server"},
		&engine.Command{Name: "acl|cat", Arity: -2, Flags: read, ACL: "@slow", Run: aclCatCommand},
		&engine.Command{Name: "acl|deluser", Arity: -3, Flags: admin, Run: aclNotSupported},
		&engine.Command{Name: "acl|dryrun", Arity: -4, Flags: admin, Run: aclDryrunCommand},
		&engine.Command{Name: "acl|genpass", Arity: -2, Flags: read, ACL: "@slow", Run: aclGenpassCommand},
		&engine.Command{Name: "acl|getuser", Arity: 3, Flags: admin, Run: aclGetuserCommand},
		&engine.Command{Name: "acl|help", Arity: 2, Flags: engine.Loading | engine.Stale, ACL: "@slow", Run: aclHelpCommand},
		&engine.Command{Name: "acl|list", Arity: 2, Flags: admin, Run: aclListCommand},
		&engine.Command{Name: "acl|load", Arity: 2, Flags: admin, Run: aclNotSupported},
		&engine.Command{Name: "acl|log", Arity: -2, Flags: admin, Run: aclNotSupported},
		&engine.Command{Name: "acl|save", Arity: 2, Flags: admin, Run: aclNotSupported},
		&engine.Command{Name: "acl|setuser", Arity: -3, Flags: admin, Run: aclNotSupported},
		&engine.Command{Name: "acl|users", Arity: 2, Flags: admin, Run: aclUsersCommand},
		&engine.Command{Name: "acl|whoami", Arity: 2, Flags: read, ACL: "@slow", Run: aclWhoamiCommand},
	)
}

// aclCategories are Redis 7.0's ACL categories, in ACL CAT's order.
var aclCategories = []string{"keyspace", "read", "write", "set", "sortedset", "list", "hash", "string",
	"bitmap", "hyperloglog", "geo", "stream", "pubsub", "admin", "fast", "slow", "blocking", "dangerous",
	"connection", "transaction", "scripting"}

// aclNotSupported answers the subcommands that manage users or read the
// ACL log, which zredis does not have yet.
func aclNotSupported(c *engine.Ctx) {
	c.Error("ERR ACL " + strings.ToUpper(string(c.Args[1])) + " is not supported yet: zredis has only the default user, whose password is requirepass")
}

// aclCatCommand is ACL CAT [category]: the categories, or the commands
// (subcommands by their full name) of one, as the table declares them.
func aclCatCommand(c *engine.Ctx) {
	if len(c.Args) > 3 {
		c.Error(engine.ErrSubcommandSyntax(string(c.Args[1]), "ACL"))
		return
	}
	if len(c.Args) == 2 {
		c.W.Array(len(aclCategories))
		for _, cat := range aclCategories {
			c.W.BulkString(cat)
		}
		return
	}
	want := "@" + strings.ToLower(string(c.Args[2]))
	if !slices.Contains(aclCategories, want[1:]) {
		c.Error("ERR Unknown category '" + string(c.Args[2]) + "'")
		return
	}
	var names []string
	c.D.Table.Each(func(cmd *engine.Command) {
		if !cmd.Extension && slices.Contains(cmd.ACLCategories(), want) {
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
		if !ok || n <= 0 || n > 4096 {
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

func aclWhoamiCommand(c *engine.Ctx) { c.W.BulkString("default") }

func aclUsersCommand(c *engine.Ctx) {
	c.W.Array(1)
	c.W.BulkString("default")
}

// defaultPassword is the default user's password hash as ACL shows it
// (sha256 in hex), "" for nopass.
func defaultPassword(c *engine.Ctx) string {
	pass := c.Config().String("requirepass")
	if pass == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(pass))
	return hex.EncodeToString(sum[:])
}

// aclListCommand is ACL LIST: the default user as an ACL file line.
func aclListCommand(c *engine.Ctx) {
	line := "user default on nopass ~* &* +@all"
	if h := defaultPassword(c); h != "" {
		line = "user default on #" + h + " ~* &* +@all"
	}
	c.W.Array(1)
	c.W.BulkString(line)
}

// aclGetuserCommand is ACL GETUSER name: the default user's flags,
// password hashes and permissions; a null reply for any other name.
func aclGetuserCommand(c *engine.Ctx) {
	if string(c.Args[2]) != "default" {
		c.W.Null()
		return
	}
	h := defaultPassword(c)
	c.W.Map(6)
	c.W.BulkString("flags")
	if h == "" {
		c.W.Array(2)
		c.W.BulkString("on")
		c.W.BulkString("nopass")
	} else {
		c.W.Array(1)
		c.W.BulkString("on")
	}
	c.W.BulkString("passwords")
	if h == "" {
		c.W.Array(0)
	} else {
		c.W.Array(1)
		c.W.BulkString(h)
	}
	c.W.BulkString("commands")
	c.W.BulkString("+@all")
	c.W.BulkString("keys")
	c.W.BulkString("~*")
	c.W.BulkString("channels")
	c.W.BulkString("&*")
	c.W.BulkString("selectors")
	c.W.Array(0)
}

// aclDryrunCommand is ACL DRYRUN user command [arg ...]: whether the user
// could run the command. The default user may run every command.
func aclDryrunCommand(c *engine.Ctx) {
	if string(c.Args[2]) != "default" {
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
	c.W.OK()
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
