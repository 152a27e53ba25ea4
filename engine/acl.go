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
	name   string
	id     int
	cats   uint32 // bit i for ACLCategoryNames[i]
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

// SkipsSanitize reports whether u is flagged skip-sanitize-payload
// (sanitize-dump-payload clients trusts its RESTORE payloads).
func (u *User) SkipsSanitize() bool { return u.flags&userSkipSanitize != 0 }

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

// ---- rules ----------------------------------------------------------------

// aclRuleError is why a rule was refused, with Redis's texts
// (ACLSetUserStringError).
type aclRuleError string

func (e aclRuleError) Error() string { return string(e) }

const (
	errRuleUnknown      aclRuleError = "Unknown command or category name in ACL"
	errRuleSyntax       aclRuleError = "Syntax error"
	errRuleKeyAfterAll  aclRuleError = "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any effect. Try 'resetkeys' to start with an empty list of patterns"
	errRuleChanAfterAll aclRuleError = "Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not have any effect. Try 'resetchannels' to start with an empty list of channels"
	errRuleNoSuchPass   aclRuleError = "The password you are trying to remove from the user does not exist"
	errRuleBadHash      aclRuleError = "The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters"
	errRuleSubFirstArg  aclRuleError = "Allowing first-arg of a subcommand is not supported"
)

// ErrRuleUnknown reports whether err is the refusal of an unknown command
// or category, which config-file validation lets through (Redis checks
// those when the users are loaded).
func ErrRuleUnknown(err error) bool { return err == errRuleUnknown }

// setUser applies one rule to u (ACLSetUser).
func (a *ACL) setUser(u *User, op string) error {
	if op == "" {
		return nil
	}
	switch {
	case strings.EqualFold(op, "on"):
		u.flags = u.flags&^userOff | userOn
	case strings.EqualFold(op, "off"):
		u.flags = u.flags&^userOn | userOff
	case strings.EqualFold(op, "skip-sanitize-payload"):
		u.flags = u.flags&^userSanitize | userSkipSanitize
	case strings.EqualFold(op, "sanitize-payload"):
		u.flags = u.flags&^userSkipSanitize | userSanitize
	case strings.EqualFold(op, "nopass"):
		u.flags |= userNoPass
		u.passwords = nil
	case strings.EqualFold(op, "resetpass"):
		u.flags &^= userNoPass
		u.passwords = nil
	case op[0] == '>' || op[0] == '#':
		h, err := ruleHash(op)
		if err != nil {
			return err
		}
		if !slices.Contains(u.passwords, h) {
			u.passwords = append(u.passwords, h)
		}
		u.flags &^= userNoPass
	case op[0] == '<' || op[0] == '!':
		h, err := ruleHash(op)
		if err != nil {
			return err
		}
		i := slices.Index(u.passwords, h)
		if i < 0 {
			return errRuleNoSuchPass
		}
		u.passwords = slices.Delete(u.passwords, i, i+1)
	case op[0] == '(' && op[len(op)-1] == ')':
		s := a.newSelector(false)
		// Unbalanced quotes make an empty selector, as sdssplitargs's
		// failure does in Redis.
		inner, _ := sds.SplitArgs(op[1 : len(op)-1])
		for _, o := range inner {
			if err := a.setSelector(s, o); err != nil {
				return err
			}
		}
		u.selectors = append(u.selectors, s)
	case strings.EqualFold(op, "clearselectors"):
		u.selectors = u.selectors[:1]
	case strings.EqualFold(op, "reset"):
		a.setUser(u, "resetpass")
		a.setUser(u, "resetkeys")
		a.setUser(u, "resetchannels")
		if a.PubsubAllChannels {
			a.setUser(u, "allchannels")
		}
		a.setUser(u, "off")
		a.setUser(u, "sanitize-payload")
		a.setUser(u, "clearselectors")
		a.setUser(u, "-@all")
	default:
		return a.setSelector(u.selectors[0], op)
	}
	return nil
}

// ruleHash is the password hash a password rule names: the hash of the
// clear text after > or <, or the hash itself after # or !.
func ruleHash(op string) (string, error) {
	if op[0] == '>' || op[0] == '<' {
		return hashPassword([]byte(op[1:])), nil
	}
	if !validHash(op[1:]) {
		return "", errRuleBadHash
	}
	return op[1:], nil
}

// setSelector applies a rule about commands, keys or channels to s
// (ACLSetSelector).
func (a *ACL) setSelector(s *selector, op string) error {
	switch {
	case strings.EqualFold(op, "allkeys") || op == "~*":
		s.allKeys = true
		s.keys = nil
	case strings.EqualFold(op, "resetkeys"):
		s.allKeys = false
		s.keys = nil
	case strings.EqualFold(op, "allchannels") || op == "&*":
		s.allChannels = true
		s.channels = nil
	case strings.EqualFold(op, "resetchannels"):
		s.allChannels = false
		s.channels = nil
	case strings.EqualFold(op, "allcommands") || strings.EqualFold(op, "+@all"):
		for i := range s.cmds {
			s.cmds[i] = ^uint64(0)
		}
		s.allCommands, s.future = true, true
		s.firstArgs = nil
	case strings.EqualFold(op, "nocommands") || strings.EqualFold(op, "-@all"):
		clear(s.cmds)
		s.allCommands, s.future = false, false
		s.firstArgs = nil
	case op[0] == '~' || op[0] == '%':
		if s.allKeys {
			return errRuleKeyAfterAll
		}
		var perm uint8
		off := 1
		if op[0] == '%' {
			for ; off < len(op); off++ {
				c := op[off]
				if (c == 'R' || c == 'r') && perm&permRead == 0 {
					perm |= permRead
				} else if (c == 'W' || c == 'w') && perm&permWrite == 0 {
					perm |= permWrite
				} else if c == '~' {
					off++
					break
				} else {
					return errRuleSyntax
				}
			}
		} else {
			perm = permAll
		}
		pat := op[min(off, len(op)):]
		if perm == 0 || hasSpaces(pat) {
			return errRuleSyntax
		}
		if i := slices.IndexFunc(s.keys, func(k keyPattern) bool { return k.pattern == pat }); i >= 0 {
			s.keys[i].perm |= perm
		} else {
			s.keys = append(s.keys, keyPattern{pat, perm})
		}
		s.allKeys = false
	case op[0] == '&':
		if s.allChannels {
			return errRuleChanAfterAll
		}
		pat := op[1:]
		if hasSpaces(pat) {
			return errRuleSyntax
		}
		if !slices.Contains(s.channels, pat) {
			s.channels = append(s.channels, pat)
		}
		s.allChannels = false
	case op[0] == '+' && (len(op) < 2 || op[1] != '@'):
		name := op[1:]
		bar := strings.LastIndexByte(name, '|')
		if bar < 0 {
			cmd := a.lookup(name)
			if cmd == nil {
				return errRuleUnknown
			}
			a.changePerm(s, cmd, true)
			return nil
		}
		cmd := a.lookup(name[:bar])
		if cmd == nil {
			return errRuleUnknown
		}
		if cmd.parent != nil {
			return errRuleSubFirstArg
		}
		sub := name[bar+1:]
		if sub == "" {
			return errRuleSyntax
		}
		if cmd.subs != nil {
			full := a.lookup(name)
			if full == nil {
				return errRuleUnknown
			}
			a.changePerm(s, full, true)
			return nil
		}
		// A first argument of a command without subcommands ("+select|0"):
		// Redis logs a deprecation warning for it and allows it.
		if a.Warn != nil {
			a.Warn("Deprecation warning: Allowing a first arg of an otherwise blocked command is a misuse of ACL and may get disabled in the future (offender: " + op + ")")
		}
		if s.firstArgs == nil {
			s.firstArgs = map[int][]string{}
		}
		if !slices.ContainsFunc(s.firstArgs[cmd.id], func(x string) bool { return strings.EqualFold(x, sub) }) {
			s.firstArgs[cmd.id] = append(s.firstArgs[cmd.id], sub)
		}
	case op[0] == '-' && (len(op) < 2 || op[1] != '@'):
		cmd := a.lookup(op[1:])
		if cmd == nil {
			return errRuleUnknown
		}
		a.changePerm(s, cmd, false)
	case (op[0] == '+' || op[0] == '-') && op[1] == '@':
		i := slices.IndexFunc(ACLCategoryNames, func(c string) bool { return strings.EqualFold(c, op[2:]) })
		if i < 0 {
			return errRuleUnknown
		}
		a.setCategory(s, uint32(1)<<i, op[0] == '+')
	default:
		return errRuleSyntax
	}
	return nil
}

// lookup finds a command by its real name, "name" or "container|sub",
// case-insensitively (lookupCommandBySdsLogic: one level of
// subcommands, and a name with a "|" only for a container).
func (a *ACL) lookup(name string) *aclCommand {
	name = strings.ToLower(name)
	parts := strings.Split(name, "|")
	if len(parts) > 2 {
		return nil
	}
	cmd := a.byName[parts[0]]
	if cmd == nil || len(parts) == 1 {
		return cmd
	}
	if cmd.subs == nil {
		return nil
	}
	return a.byName[name]
}

// changePerm allows or denies cmd and, for a container, every subcommand
// (ACLChangeSelectorPerm).
func (a *ACL) changePerm(s *selector, cmd *aclCommand, allow bool) {
	s.setBit(cmd.id, allow)
	delete(s.firstArgs, cmd.id)
	for _, sub := range cmd.subs {
		s.setBit(sub.id, allow)
	}
}

// setCategory allows or denies every command of a category, and every
// subcommand of a container that is in it.
func (a *ACL) setCategory(s *selector, mask uint32, allow bool) {
	for _, cmd := range a.cmds {
		if cmd != nil && cmd.cats&mask != 0 {
			a.changePerm(s, cmd, allow)
		}
	}
}

func (s *selector) bit(id int) bool { return s.cmds[id/64]&(1<<(id%64)) != 0 }

func (s *selector) setBit(id int, on bool) {
	if on {
		s.cmds[id/64] |= 1 << (id % 64)
	} else {
		s.cmds[id/64] &^= 1 << (id % 64)
		s.allCommands = false
	}
}

func (s *selector) clone() *selector {
	c := *s
	c.cmds = slices.Clone(s.cmds)
	c.keys = slices.Clone(s.keys)
	c.channels = slices.Clone(s.channels)
	if s.firstArgs != nil {
		c.firstArgs = map[int][]string{}
		for id, args := range s.firstArgs {
			c.firstArgs[id] = slices.Clone(args)
		}
	}
	return &c
}

// clone copies u's rules under the same name (ACLCopyUser into a new
// user).
func (u *User) clone() *User {
	c := &User{Name: u.Name, flags: u.flags, passwords: slices.Clone(u.passwords)}
	for _, s := range u.selectors {
		c.selectors = append(c.selectors, s.clone())
	}
	return c
}

// copyFrom gives u src's rules, keeping u's name (ACLCopyUser).
func (u *User) copyFrom(src *User) {
	c := src.clone()
	u.flags, u.passwords, u.selectors = c.flags, c.passwords, c.selectors
}

// MergeSelectorArgs joins the rules of a selector written over several
// arguments ("(~x*", "+get)") into one (ACLMergeSelectorArguments). It
// returns the index of the argument that opens an unclosed selector when
// there is one.
func MergeSelectorArgs(args []string) (merged []string, unclosed int, ok bool) {
	open := -1
	var sel string
	for j, op := range args {
		if open < 0 && len(op) > 0 && op[0] == '(' && op[len(op)-1] != ')' {
			sel, open = op, j
			continue
		}
		if open >= 0 {
			sel += " " + op
			if len(op) > 0 && op[len(op)-1] == ')' {
				open = -1
				merged = append(merged, sel)
			}
			continue
		}
		merged = append(merged, op)
	}
	if open >= 0 {
		return nil, open, false
	}
	return merged, 0, true
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

// ---- checks ---------------------------------------------------------------

// Denial is why the ACL refused a command.
type Denial int

// The denials, in the order Redis prefers them when several selectors
// refuse for different reasons (the greater wins).
const (
	Allowed Denial = iota
	DeniedCommand
	DeniedKey
	DeniedChannel
	DeniedAuth
)

// Check reports whether u may run cmd with args (args[0] the command
// name), and when not, why and the position of the key or channel refused
// (ACLCheckAllUserCommandPerm): one selector allowing it is enough.
func (a *ACL) Check(u *User, cmd *Command, args [][]byte) (Denial, int) {
	if u == nil {
		return Allowed, 0
	}
	if r := u.selectors[0]; r.allCommands && r.allKeys && r.allChannels {
		return Allowed, 0
	}
	worst, worstPos := DeniedCommand, 0
	var keys []KeyRef
	keysDone := false
	for _, s := range u.selectors {
		d, pos := a.checkSelector(s, cmd, args, &keys, &keysDone)
		if d == Allowed {
			return Allowed, 0
		}
		if d > worst || d == worst && pos > worstPos {
			worst, worstPos = d, pos
		}
	}
	return worst, worstPos
}

func (a *ACL) checkSelector(s *selector, cmd *Command, args [][]byte, keys *[]KeyRef, keysDone *bool) (Denial, int) {
	if !s.allCommands && cmd.Flags&NoAuth == 0 && (cmd.id >= len(s.cmds)*64 || !s.bit(cmd.id)) {
		allowed := false
		idx := 1
		if strings.IndexByte(cmd.Name, '|') >= 0 {
			idx = 2
		}
		if len(args) > idx {
			for _, fa := range s.firstArgs[cmd.id] {
				if EqualFold(args[idx], fa) {
					allowed = true
					break
				}
			}
		}
		if !allowed {
			return DeniedCommand, 0
		}
	}
	if !s.allKeys && (cmd.FirstKey > 0 || cmd.Keys != nil) {
		if !*keysDone {
			*keys = a.table.keyRefs(cmd, args)
			*keysDone = true
		}
		for _, k := range *keys {
			if !s.keyAllowed(args[k.Pos], k) {
				return DeniedKey, k.Pos
			}
		}
	}
	if !s.allChannels {
		first, literal := 0, false
		switch cmd.Name {
		case "publish", "spublish":
			first = 1
			args = args[:min(2, len(args))]
		case "subscribe", "ssubscribe":
			first = 1
		case "psubscribe":
			first, literal = 1, true
		}
		if first > 0 {
			for j := first; j < len(args); j++ {
				if !s.channelAllowed(args[j], literal) {
					return DeniedChannel, j
				}
			}
		}
	}
	return Allowed, 0
}

func (s *selector) keyAllowed(key []byte, k KeyRef) bool {
	var need uint8
	if k.Read {
		need |= permRead
	}
	if k.Write {
		need |= permWrite
	}
	for _, p := range s.keys {
		if p.perm&need != need {
			continue
		}
		if sds.Match([]byte(p.pattern), key, false) {
			return true
		}
	}
	return false
}

func (s *selector) channelAllowed(ch []byte, literal bool) bool {
	for _, p := range s.channels {
		if literal && p == string(ch) || !literal && sds.Match([]byte(p), ch, false) {
			return true
		}
	}
	return false
}

// keyRefs returns the keys of cmd in args with their access, by the
// table's KeyAccess (which knows Redis's key specifications), or as read
// and written when the table has none.
func (t *Table) keyRefs(cmd *Command, args [][]byte) []KeyRef {
	if t.KeyAccess != nil {
		return t.KeyAccess(cmd, args)
	}
	var out []KeyRef
	for _, p := range cmd.KeyPositions(args) {
		out = append(out, KeyRef{Pos: p, Read: true, Write: true})
	}
	return out
}

// ---- descriptions ---------------------------------------------------------

// Describe is the user as ACL LIST shows it and ACL SAVE writes it, after
// "user <name> " (ACLDescribeUser).
func (a *ACL) Describe(u *User) string {
	var b strings.Builder
	for _, f := range userFlagNames {
		if u.flags&f.f != 0 {
			b.WriteString(f.name)
			b.WriteByte(' ')
		}
	}
	for _, p := range u.passwords {
		b.WriteString("#" + p + " ")
	}
	for _, s := range u.selectors {
		if s.root {
			b.WriteString(a.describeSelector(s))
		} else {
			b.WriteString(" (" + a.describeSelector(s) + ")")
		}
	}
	return b.String()
}

// Flags returns u's flags as ACL GETUSER lists them.
func (u *User) Flags() []string {
	var out []string
	for _, f := range userFlagNames {
		if u.flags&f.f != 0 {
			out = append(out, f.name)
		}
	}
	return out
}

// Passwords returns u's password hashes.
func (u *User) Passwords() []string { return slices.Clone(u.passwords) }

// SelectorFields are one selector's "commands", "keys" and "channels" as
// ACL GETUSER shows them.
type SelectorFields struct{ Commands, Keys, Channels string }

// Selectors describes u's selectors for ACL GETUSER, the root first.
func (a *ACL) Selectors(u *User) []SelectorFields {
	var out []SelectorFields
	for _, s := range u.selectors {
		f := SelectorFields{Commands: a.describeCommands(s)}
		if s.allKeys {
			f.Keys = "~*"
		} else {
			var ks []string
			for _, k := range s.keys {
				ks = append(ks, k.String())
			}
			f.Keys = strings.Join(ks, " ")
		}
		if s.allChannels {
			f.Channels = "&*"
		} else {
			var cs []string
			for _, c := range s.channels {
				cs = append(cs, "&"+c)
			}
			f.Channels = strings.Join(cs, " ")
		}
		out = append(out, f)
	}
	return out
}

func (k keyPattern) String() string {
	switch k.perm {
	case permRead:
		return "%R~" + k.pattern
	case permWrite:
		return "%W~" + k.pattern
	}
	return "~" + k.pattern
}

// describeSelector is ACLDescribeSelector: keys, channels, commands.
func (a *ACL) describeSelector(s *selector) string {
	var b strings.Builder
	if s.allKeys {
		b.WriteString("~* ")
	} else {
		for _, k := range s.keys {
			b.WriteString(k.String() + " ")
		}
	}
	if s.allChannels {
		b.WriteString("&* ")
	} else {
		b.WriteString("resetchannels ")
		for _, c := range s.channels {
			b.WriteString("&" + c + " ")
		}
	}
	b.WriteString(a.describeCommands(s))
	return b.String()
}

// describeCommands rebuilds command rules that give s's bitmap
// (ACLDescribeSelectorCommandRules): +@all or -@all, then the categories
// that fit best, one at a time, then single commands and first
// arguments. The rules are applied to a scratch selector as they are
// written, so each step sees what is left to say.
func (a *ACL) describeCommands(s *selector) string {
	var rules []string
	fake := a.newSelector(false)
	additive := !s.future
	if additive {
		rules = append(rules, "-@all")
		a.setSelector(fake, "-@all")
	} else {
		rules = append(rules, "+@all")
		a.setSelector(fake, "+@all")
	}
	tmp := &selector{cmds: slices.Clone(s.cmds)}
	applied := make([]bool, len(ACLCategoryNames))
	for {
		best, minDiff, maxSame := -1, int(^uint(0)>>1), 0
		for j := range ACLCategoryNames {
			if applied[j] {
				continue
			}
			on, off := a.countCategory(tmp, uint32(1)<<j)
			diff, same := on, off
			if additive {
				diff, same = off, on
			}
			if same > diff && (diff < minDiff || diff == minDiff && same > maxSame) {
				best, minDiff, maxSame = j, diff, same
			}
		}
		if best < 0 {
			break
		}
		mask := uint32(1) << best
		a.setCategory(fake, mask, additive)
		a.setCategory(tmp, mask, !additive)
		if additive {
			rules = append(rules, "+@"+ACLCategoryNames[best])
		} else {
			rules = append(rules, "-@"+ACLCategoryNames[best])
		}
		applied[best] = true
	}
	for _, cmd := range a.order {
		user, have := s.bit(cmd.id), fake.bit(cmd.id)
		if user != have {
			if user {
				rules = append(rules, "+"+cmd.name)
			} else {
				rules = append(rules, "-"+cmd.name)
			}
			a.changePerm(fake, cmd, user)
		}
		if !user {
			for _, fa := range s.firstArgs[cmd.id] {
				rules = append(rules, "+"+cmd.name+"|"+fa)
			}
		}
	}
	return strings.Join(rules, " ")
}

// countCategory counts the commands of a category s allows and denies.
func (a *ACL) countCategory(s *selector, mask uint32) (on, off int) {
	for _, cmd := range a.cmds {
		if cmd == nil || cmd.cats&mask == 0 {
			continue
		}
		if s.bit(cmd.id) {
			on++
		} else {
			off++
		}
	}
	return on, off
}
