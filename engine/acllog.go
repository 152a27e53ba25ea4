package engine

import "time"

// The ACL log (acl.c addACLLogEntry): the latest denials, newest first,
// at most acllog-max-len of them. A denial like one of the ten newest
// (same reason, context, object and user, within a minute) counts into
// that entry, which moves to the front, instead of adding one.

// ACLLogEntry is one entry of ACL LOG.
type ACLLogEntry struct {
	Count      int64
	Reason     Denial
	Context    string // toplevel, multi
	Object     string // the command, key, channel, or AUTH
	Username   string
	CtimeMs    int64 // when it last happened
	ClientInfo string
}

// aclLogGroupingMs is how close two denials must be to share an entry.
const aclLogGroupingMs = 60000

// ReasonName is the reason as ACL LOG shows it.
func (d Denial) ReasonName() string {
	switch d {
	case DeniedCommand:
		return "command"
	case DeniedKey:
		return "key"
	case DeniedChannel:
		return "channel"
	case DeniedAuth:
		return "auth"
	}
	return "unknown"
}

// AddLog records a denial.
func (a *ACL) AddLog(e ACLLogEntry) {
	e.Count = 1
	for i := 0; i < len(a.log) && i < 10; i++ {
		m := a.log[i]
		delta := m.CtimeMs - e.CtimeMs
		if delta < 0 {
			delta = -delta
		}
		if m.Reason != e.Reason || m.Context != e.Context || delta > aclLogGroupingMs ||
			m.Object != e.Object || m.Username != e.Username {
			continue
		}
		m.ClientInfo, m.CtimeMs = e.ClientInfo, e.CtimeMs
		m.Count++
		copy(a.log[1:i+1], a.log[:i])
		a.log[0] = m
		return
	}
	a.log = append(a.log, nil)
	copy(a.log[1:], a.log)
	a.log[0] = &e
	if len(a.log) > a.MaxLog {
		clear(a.log[a.MaxLog:])
		a.log = a.log[:a.MaxLog]
	}
}

// Log returns up to n entries, newest first.
func (a *ACL) Log(n int) []*ACLLogEntry { return a.log[:min(n, len(a.log))] }

// ResetLog empties the log (ACL LOG RESET).
func (a *ACL) ResetLog() { clear(a.log); a.log = nil }

// logDenial records a denial of the request c runs (for EXEC, of the
// queued command cmd with args): the object is the command's name, or the
// key or channel at pos, or for AUTH the command name as sent; user names
// the user (the one AUTH tried), "" for the client's.
func (d *Dispatcher) logDenial(c *Ctx, reason Denial, context string, cmd *Command, args [][]byte, pos int, user string) {
	cl := c.Client
	var object string
	switch reason {
	case DeniedCommand:
		object = cmd.Name
	case DeniedKey, DeniedChannel:
		object = string(args[pos])
	case DeniedAuth:
		object = string(args[0])
	}
	if user == "" {
		user = "default"
		if cl.User != nil {
			user = cl.User.Name
		}
	}
	now := time.Now().UnixMilli()
	d.ACL.AddLog(ACLLogEntry{Reason: reason, Context: context, Object: object, Username: user,
		CtimeMs: now, ClientInfo: string(AppendClientInfo(nil, c, cl, now, 0))})
}

// LogAuthFailure records a failed AUTH or HELLO AUTH as user.
func (c *Ctx) LogAuthFailure(user []byte) {
	c.D.logDenial(c, DeniedAuth, logContext(c.Client), c.Cmd, c.Args, 0, string(user))
}
