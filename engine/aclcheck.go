package engine

// The check every command passes before it runs (acl.c
// ACLCheckAllUserCommandPerm): the command, its keys, its channels.

import (
	"strings"

	"github.com/zredis/zredis/sds"
)

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

// ReadsAllKeys reports whether u may run cmd with args through a selector
// that may also read every key (ACLUserCheckCmdWithUnrestrictedKeyAccess
// with CMD_KEY_ACCESS): SORT's BY and GET read keys that only their
// values name, so they need it.
func (a *ACL) ReadsAllKeys(u *User, cmd *Command, args [][]byte) bool {
	if u == nil {
		return true
	}
	var keys []KeyRef
	keysDone := false
	for _, s := range u.selectors {
		if d, _ := a.checkSelector(s, cmd, args, &keys, &keysDone); d != Allowed {
			continue
		}
		if s.allKeys {
			return true
		}
		for _, p := range s.keys {
			if p.perm&permRead != 0 && p.pattern == "*" {
				return true
			}
		}
	}
	return false
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
