package engine

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"slices"
	"sort"
	"strings"

	"github.com/zredis/zredis/sds"
)

// ACL users as Redis 7.0 keeps them (acl.c): each user has flags,
// password hashes and selectors; the first selector is the root one (the
// rules given outside parentheses), the others are alternatives, any of
// which may allow a command. A selector holds a bitmap of the commands it
// allows, indexed by Command.id, the key patterns with their read/write
// permission, and the channel patterns.
//
// The ACL reads the table as registered, not the one rename-command made:
// rules name commands by their real names, as Redis's orig_commands.

// ACLCategoryNames are Redis 7.0's ACL categories, in ACL CAT's order,
// which is also the order category rules are tried in when a selector is
// described.
var ACLCategoryNames = []string{"keyspace", "read", "write", "set", "sortedset", "list", "hash", "string",
	"bitmap", "hyperloglog", "geo", "stream", "pubsub", "admin", "fast", "slow", "blocking", "dangerous",
	"connection", "transaction", "scripting"}

// userFlag is a user's flag; the order is the order ACL LIST and GETUSER
// show them in.
type userFlag uint8

const (
	userOn userFlag = 1 << iota
	userOff
	userNoPass
	userSkipSanitize
	userSanitize
)

var userFlagNames = []struct {
	f    userFlag
	name string
}{{userOn, "on"}, {userOff, "off"}, {userNoPass, "nopass"},
	{userSkipSanitize, "skip-sanitize-payload"}, {userSanitize, "sanitize-payload"}}

// Key permissions of a key pattern: ~ gives both, %R~ read, %W~ write.
const (
	permRead  = 1
	permWrite = 2
	permAll   = permRead | permWrite
)

// KeyRef is a key argument of a command and the access the command makes
// of it: Read for the key specs flagged access, Write for insert, update
// or delete (acl.c ACLSelectorCheckKey). Neither: any key pattern will do.
type KeyRef struct {
	Pos         int
	Read, Write bool
}

// User is an ACL user. Clients authenticated as a user point to it; ACL
// SETUSER changes it in place, so they see the new rules at once.
type User struct {
	Name      string
	flags     userFlag
	passwords []string // sha256 of each password, in lower-case hex
	selectors []*selector
}

type keyPattern struct {
	pattern string
	perm    uint8
}

type selector struct {
	root        bool
	allKeys     bool
	allChannels bool
	allCommands bool
	// future is Redis's reserved command bit: set by +@all (and
	// allcommands), cleared by -@all only; a selector described with it
	// starts from +@all.
	future bool
	cmds   []uint64 // allowed commands, by Command.id
	// firstArgs are the first arguments allowed for a command that is
	// otherwise denied ("+select|0"), by Command.id.
	firstArgs map[int][]string
	keys      []keyPattern
	channels  []string
}

// ACL is a server's users and its ACL log.
type ACL struct {
	table *Table
	// The commands rules can name, by bitmap id and by full name, and in
	// the order descriptions list them (each container then its
	// subcommands, by name).
	cmds   []*aclCommand
	byName map[string]*aclCommand
	order  []*aclCommand
	users  map[string]*User
	// Default is the user every new connection starts as. It is never
	// replaced, only changed (ACL LOAD copies the new rules into it).
	Default *User

	// PubsubAllChannels is acl-pubsub-default allchannels: new selectors
	// (and reset users) may use every channel.
	PubsubAllChannels bool
	// MaxLog is acllog-max-len.
	MaxLog int
	// Warn logs a warning (a deprecated rule); nil: not logged.
	Warn func(msg string)
	log  []*ACLLogEntry // newest first
}

// aclCommand is a command as ACL rules name it. Rules may name every
// command and subcommand of Redis 7.0, those zredis serves (their bit is
// their Command.id) and those it does not (Table.Unserved; bits after
// them): a redis.conf or ACL file written for redis-server loads
// unchanged, its categories count what Redis's count, and a user is
// described with the rules Redis would write.
type aclCommand struct {
	name string
	id   int
	cats uint32 // bit i for ACLCategoryNames[i]
	// later: a command later than 7.0 (Command.Since), which the rules
	// ACL GETUSER and LIST describe do not weigh, so that they read as
	// 7.0 writes them.
	later  bool
	parent *aclCommand
	subs   []*aclCommand
}

// UnservedCommand is a Redis command zredis does not serve, with its ACL
// categories ("@read", ...), which ACL rules may still name.
type UnservedCommand struct {
	Name       string // full name, "container|sub" for a subcommand
	Categories []string
}

// NewACL makes the users of a server whose commands are table's (as
// registered, before renames): only "default", on, nopass, allowed
// everything.
func NewACL(table *Table) *ACL {
	if table.orig != nil {
		table = table.orig
	}
	a := &ACL{table: table, users: map[string]*User{}, byName: map[string]*aclCommand{}, MaxLog: 128}
	a.cmds = make([]*aclCommand, table.size())
	table.Each(func(cmd *Command) {
		if cmd.id < len(a.cmds) {
			a.addCommand(cmd.Name, cmd.id, cmd.ACLCategories())
			a.cmds[cmd.id].later = cmd.Since != ""
		}
	})
	if table.Unserved != nil {
		extra := table.Unserved()
		// Containers sort before their subcommands.
		sort.Slice(extra, func(i, j int) bool { return extra[i].Name < extra[j].Name })
		for _, u := range extra {
			if a.byName[u.Name] == nil {
				a.cmds = append(a.cmds, nil)
				a.addCommand(u.Name, len(a.cmds)-1, u.Categories)
			}
		}
	}
	for _, c := range a.byName {
		if c.parent == nil {
			a.order = append(a.order, c)
		}
		slices.SortFunc(c.subs, func(x, y *aclCommand) int { return strings.Compare(x.name, y.name) })
	}
	slices.SortFunc(a.order, func(x, y *aclCommand) int { return strings.Compare(x.name, y.name) })
	a.order = slices.Collect(func(yield func(*aclCommand) bool) {
		for _, c := range a.order {
			if !yield(c) {
				return
			}
			for _, sub := range c.subs {
				if !yield(sub) {
					return
				}
			}
		}
	})
	a.Default = a.newUser("default")
	for _, op := range []string{"+@all", "~*", "&*", "on", "nopass"} {
		a.setUser(a.Default, op)
	}
	a.users["default"] = a.Default
	return a
}

// addCommand adds a command with bit id; a subcommand's container must
// be there already.
func (a *ACL) addCommand(name string, id int, cats []string) {
	c := &aclCommand{name: name, id: id}
	for _, cat := range cats {
		if i := slices.Index(ACLCategoryNames, strings.TrimPrefix(cat, "@")); i >= 0 {
			c.cats |= 1 << i
		}
	}
	if i := strings.IndexByte(name, '|'); i >= 0 {
		if c.parent = a.byName[name[:i]]; c.parent == nil {
			return
		}
		c.parent.subs = append(c.parent.subs, c)
	}
	a.cmds[id] = c
	a.byName[name] = c
}

// newUser makes a user that is not yet in the users: off, no passwords,
// no commands, no keys, channels as acl-pubsub-default says.
func (a *ACL) newUser(name string) *User {
	u := &User{Name: name, flags: userOff}
	u.selectors = []*selector{a.newSelector(true)}
	return u
}

func (a *ACL) newSelector(root bool) *selector {
	return &selector{root: root, allChannels: a.PubsubAllChannels, cmds: make([]uint64, (len(a.cmds)+63)/64)}
}

// User returns the user of that name, or nil.
func (a *ACL) User(name string) *User { return a.users[name] }

// Users returns the users sorted by name, as ACL USERS and LIST list them.
func (a *ACL) Users() []*User {
	out := make([]*User, 0, len(a.users))
	for _, u := range a.users {
		out = append(out, u)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// AuthRequired reports whether a client that has not authenticated must
// (server.c authRequired): the default user has a password or is off.
func (a *ACL) AuthRequired() bool {
	return a.Default.flags&userNoPass == 0 || a.Default.flags&userOff != 0
}

// DefaultNoPass reports whether the default user takes any password (no
// password is set), which protected mode looks at.
func (a *ACL) DefaultNoPass() bool { return a.Default.flags&userNoPass != 0 }

// CheckCredentials returns the user name and pass authenticate as, or nil
// when the user does not exist, is off, or the password is not one of its
// (ACLCheckUserCredentials; the hashes are compared in constant time).
func (a *ACL) CheckCredentials(name, pass []byte) *User {
	u := a.users[string(name)]
	if u == nil || u.flags&userOff != 0 {
		return nil
	}
	if u.flags&userNoPass != 0 {
		return u
	}
	h := hashPassword(pass)
	ok := false
	for _, p := range u.passwords {
		if subtle.ConstantTimeCompare([]byte(p), []byte(h)) == 1 {
			ok = true
		}
	}
	if !ok {
		return nil
	}
	return u
}

// SetDefaultPassword makes requirepass the default user's only password,
// or makes it nopass when pass is empty (ACLUpdateDefaultUserPassword).
func (a *ACL) SetDefaultPassword(pass string) {
	a.setUser(a.Default, "resetpass")
	if pass == "" {
		a.setUser(a.Default, "nopass")
	} else {
		a.setUser(a.Default, ">"+pass)
	}
}

func hashPassword(p []byte) string {
	sum := sha256.Sum256(p)
	return hex.EncodeToString(sum[:])
}

func validHash(h string) bool {
	if len(h) != 64 {
		return false
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if (c < 'a' || c > 'f') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// hasSpaces reports whether s has white space or NUL, which user names
// and patterns may not (ACLStringHasSpaces).
func hasSpaces(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ', '\t', '\n', '\v', '\f', '\r', 0:
			return true
		}
	}
	return false
}

// SetUserRules applies rules to the user name, creating it if needed, all
// or nothing (ACL SETUSER): the changes are made on a copy, which replaces
// the user's rules only when every rule was accepted. It returns the rule
// refused and why. Pub/sub clients of the user that lose a channel are
// disconnected (ACLKillPubsubClientsIfNeeded); current is the client
// running the command.
func (a *ACL) SetUserRules(srv Server, current *Client, name string, rules []string) (bad string, err error) {
	u := a.users[name]
	var tmp *User
	if u != nil {
		tmp = u.clone()
	} else {
		tmp = a.newUser(name)
	}
	for _, r := range rules {
		if err := a.setUser(tmp, r); err != nil {
			return r, err
		}
	}
	if u == nil {
		a.users[name] = tmp
		return "", nil
	}
	a.killRevokedSubscribers(srv, current, u, tmp)
	u.copyFrom(tmp)
	return "", nil
}

// ValidateRules checks the rules of a "user" line of the configuration
// file on a user that is not kept (ACLAppendUserForLoading): it returns
// the index of the first rule refused, an unknown command or category
// excepted, and why.
func (a *ACL) ValidateRules(rules []string) (int, error) {
	u := a.newUser("__fakeuser__")
	for j, r := range rules {
		if err := a.setUser(u, r); err != nil && err != errRuleUnknown {
			return j, err
		}
	}
	return 0, nil
}

// LoadUsers replaces every user with those described (name then rules),
// all or nothing, as ACL LOAD and the start-up do (ACLLoadFromFile): the
// default user keeps its identity and takes the described rules, or the
// defaults when it is not described; clients of the users that are
// replaced are disconnected.
func (a *ACL) LoadUsers(srv Server, current *Client, users []*User) {
	old := a.users
	a.users = map[string]*User{}
	newDefault := a.newUser("default")
	for _, o := range []string{"+@all", "~*", "&*", "on", "nopass"} {
		a.setUser(newDefault, o)
	}
	for _, u := range users {
		if u.Name == "default" {
			newDefault = u
			continue
		}
		a.users[u.Name] = u
	}
	a.Default.copyFrom(newDefault)
	a.users["default"] = a.Default
	for name, u := range old {
		if name != "default" {
			a.killClientsOf(srv, current, u)
		}
	}
}

// DeleteUser removes a user and disconnects its clients; it reports
// whether there was one of that name.
func (a *ACL) DeleteUser(srv Server, current *Client, name string) bool {
	u := a.users[name]
	if u == nil {
		return false
	}
	delete(a.users, name)
	a.killClientsOf(srv, current, u)
	return true
}

// killClientsOf disconnects the clients authenticated as u
// (ACLFreeUserAndKillClients): the one running the command after its
// reply, the others at once. Each first falls back to the default user,
// not authenticated.
func (a *ACL) killClientsOf(srv Server, current *Client, u *User) {
	if srv == nil {
		return
	}
	for _, cl := range srv.Clients() {
		if cl.User != u {
			continue
		}
		cl.User = a.Default
		cl.Authed = false
		if cl == current {
			cl.CloseAfterReply = true
		} else if cl.Kill != nil {
			cl.Kill()
		}
	}
}

// killRevokedSubscribers disconnects the pub/sub clients of u whose
// subscriptions the rules of next no longer allow, unless next allows
// every channel somewhere or keeps every channel pattern u had.
func (a *ACL) killRevokedSubscribers(srv Server, current *Client, u, next *User) {
	var upcoming []string
	for _, s := range next.selectors {
		if s.allChannels {
			return
		}
		upcoming = append(upcoming, s.channels...)
	}
	kept := true
	for _, s := range u.selectors {
		if s.allChannels {
			kept = false // every channel was allowed, now some are not
		}
		for _, ch := range s.channels {
			if !slices.Contains(upcoming, ch) {
				kept = false
			}
		}
	}
	if kept || srv == nil {
		return
	}
	ps := srv.PubSub()
	for _, cl := range srv.Clients() {
		if cl.User != u || !cl.Subscribed() {
			continue
		}
		kill := false
		channels, patterns, shards := ps.SubscribedTo(cl)
		for _, p := range patterns {
			if !slices.Contains(upcoming, p) {
				kill = true
			}
		}
		for _, ch := range append(channels, shards...) {
			if !matchesAny(upcoming, ch) {
				kill = true
			}
		}
		if !kill {
			continue
		}
		if cl == current {
			cl.CloseAfterReply = true
		} else if cl.Kill != nil {
			cl.Kill()
		}
	}
}

func matchesAny(patterns []string, s string) bool {
	for _, p := range patterns {
		if sds.MatchString([]byte(p), s, false) {
			return true
		}
	}
	return false
}
