package engine

// Users described as ACL LIST, ACL GETUSER, ACL SAVE and CONFIG REWRITE
// show them (acl.c ACLDescribeUser).

import (
	"slices"
	"strings"
)

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
		if cmd == nil || cmd.cats&mask == 0 || cmd.later {
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
