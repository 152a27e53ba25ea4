package engine

// The rules of ACL SETUSER, user lines and ACL files (acl.c ACLSetUser,
// ACLSetSelector), applied to a user or a selector.

import (
	"slices"
	"strings"

	"github.com/zredis/zredis/sds"
)

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
