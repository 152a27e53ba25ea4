package commands

import (
	"math"
	"strings"

	"github.com/zredis/zredis/engine"
)

// RedisVersion is the Redis version whose behaviour zredis reproduces.
// HELLO and INFO report it: clients decide from it which commands they
// may send.
const RedisVersion = "7.0.15"

// Connection commands (networking.c, server.c, acl.c).
func init() {
	const hello = engine.NoScript | engine.Loading | engine.Stale | engine.Fast | engine.NoAuth | engine.AllowBusy
	const clientSub = engine.NoScript | engine.Loading | engine.Stale
	const clientAdmin = engine.Admin | engine.NoScript | engine.Loading | engine.Stale
	register(
		&engine.Command{Name: "ping", Arity: -1, Flags: engine.Fast, ACL: "@fast @connection", Group: "connection", Run: pingCommand},
		&engine.Command{Name: "echo", Arity: 2, Flags: engine.Loading | engine.Stale | engine.Fast, ACL: "@fast @connection", Group: "connection", Run: echoCommand},
		&engine.Command{Name: "quit", Arity: -1, Flags: hello, ACL: "@fast @connection", Group: "connection", Run: quitCommand},
		&engine.Command{Name: "select", Arity: 2, Flags: engine.Loading | engine.Stale | engine.Fast, ACL: "@fast @connection", Group: "connection", Run: selectCommand},
		&engine.Command{Name: "reset", Arity: 1, Flags: hello, ACL: "@fast @connection", Group: "connection", Run: resetCommand},
		&engine.Command{Name: "hello", Arity: -1, Flags: hello, ACL: "@fast @connection", Group: "connection", Run: helloCommand},
		&engine.Command{Name: "auth", Arity: -2, Flags: hello, ACL: "@fast @connection", Group: "connection", Run: authCommand},

		&engine.Command{Name: "client", Arity: -2, Group: "connection"},
		&engine.Command{Name: "client|caching", Arity: 3, Flags: clientSub, ACL: "@connection", Run: clientCachingCommand},
		&engine.Command{Name: "client|getname", Arity: 2, Flags: clientSub, ACL: "@connection", Run: clientGetnameCommand},
		&engine.Command{Name: "client|getredir", Arity: 2, Flags: clientSub, ACL: "@connection", Run: clientGetredirCommand},
		&engine.Command{Name: "client|help", Arity: 2, Flags: engine.Loading | engine.Stale, ACL: "@connection", Run: clientHelpCommand},
		&engine.Command{Name: "client|id", Arity: 2, Flags: clientSub, ACL: "@connection", Run: clientIDCommand},
		&engine.Command{Name: "client|info", Arity: 2, Flags: clientSub, ACL: "@connection", Run: clientInfoCommand},
		&engine.Command{Name: "client|kill", Arity: -3, Flags: clientAdmin, ACL: "@connection", Run: clientKillCommand},
		&engine.Command{Name: "client|list", Arity: -2, Flags: clientAdmin, ACL: "@connection", Run: clientListCommand},
		&engine.Command{Name: "client|no-evict", Arity: 3, Flags: clientAdmin, ACL: "@connection", Run: clientNoEvictCommand},
		&engine.Command{Name: "client|pause", Arity: -3, Flags: clientAdmin, ACL: "@connection", Run: clientPauseCommand},
		&engine.Command{Name: "client|reply", Arity: 3, Flags: clientSub, ACL: "@connection", Run: clientReplyCommand},
		&engine.Command{Name: "client|setname", Arity: 3, Flags: clientSub, ACL: "@connection", Run: clientSetnameCommand},
		&engine.Command{Name: "client|tracking", Arity: -3, Flags: clientSub, ACL: "@connection", Run: clientTrackingCommand},
		&engine.Command{Name: "client|trackinginfo", Arity: 2, Flags: clientSub, ACL: "@connection", Run: clientTrackinginfoCommand},
		&engine.Command{Name: "client|unblock", Arity: -3, Flags: clientAdmin, ACL: "@connection", Run: clientUnblockCommand},
		&engine.Command{Name: "client|unpause", Arity: 2, Flags: clientAdmin, ACL: "@connection", Run: clientUnpauseCommand},
		// Redis 7.2 additions that 7.0 lacks: clients of newer servers send
		// them (go-redis v9 sends CLIENT SETINFO on connect and ignores a
		// failure), so they are accepted. COMMAND, CLIENT HELP and CLIENT
		// LIST stay as 7.0 prints them.
		&engine.Command{Name: "client|setinfo", Arity: 4, Flags: clientSub, ACL: "@connection", Run: clientSetinfoCommand, Extension: true},
		&engine.Command{Name: "client|no-touch", Arity: 3, Flags: clientSub, ACL: "@connection", Run: clientNoTouchCommand, Extension: true},
	)
}

// ---- PING ECHO QUIT SELECT ------------------------------------------------

// pingCommand answers PONG, or its argument. A RESP2 client in Pub/Sub
// mode gets the ["pong", arg] array its subscription reader expects.
func pingCommand(c *engine.Ctx) {
	if len(c.Args) > 2 {
		c.Error(engine.ErrWrongArgs("ping"))
		return
	}
	cl := c.Client
	if cl.Subs+cl.PSubs+cl.SSubs > 0 && c.W.Proto() == 2 {
		c.W.Array(2)
		c.W.BulkString("pong")
		if len(c.Args) == 1 {
			c.W.BulkString("")
		} else {
			c.W.Bulk(c.Args[1])
		}
		return
	}
	if len(c.Args) == 1 {
		c.W.Simple("PONG")
		return
	}
	c.W.Bulk(c.Args[1])
}

func echoCommand(c *engine.Ctx) { c.W.Bulk(c.Args[1]) }

func quitCommand(c *engine.Ctx) {
	c.W.OK()
	c.Client.CloseAfterReply = true
}

// selectCommand switches the client's database; the index is parsed as
// a C int, as getIntFromObjectOrReply does (see dbIndexArg).
func selectCommand(c *engine.Ctx) {
	if c.D.Cluster != nil {
		if n, ok := engine.ParseInt(c.Args[1]); ok && n >= math.MinInt32 && n <= math.MaxInt32 && n != 0 {
			c.Error("ERR SELECT is not allowed in cluster mode")
			return
		}
	}
	db, ok := dbIndexArg(c, c.Args[1])
	if !ok {
		return
	}
	c.Client.DB = db.ID()
	c.W.OK()
}

// ---- RESET ----------------------------------------------------------------

// resetCommand returns the connection to the state of a new one, as
// resetCommand and clearClientConnectionState do in Redis 7.0: no
// MONITOR, no tracking, RESP2, database 0, the default user (authenticated only if it needs
// no password, so AUTH is required again otherwise), the MULTI queue
// discarded and every key unwatched, no subscription left (channels,
// patterns, shard channels), no name, replies on (CLIENT REPLY OFF and
// SKIP's next skip cleared). A replica's or a master's connection cannot
// be reset.
//
// What 7.0 leaves alone stays: CLIENT NO-EVICT (7.0 does not clear
// CLIENT_NO_EVICT; 7.2 does), and the skip of RESET's own reply that
// CLIENT REPLY SKIP asked for (Redis clears CLIENT_REPLY_SKIP_NEXT, not
// CLIENT_REPLY_SKIP), so that reply is dropped. CLIENT NO-TOUCH, a 7.2
// command, is cleared as 7.2 does. ASKING and READONLY are cluster
// states this server never enters.
func resetCommand(c *engine.Ctx) {
	cl := c.Client
	if cl.Master || (cl.Replica && !cl.Monitor) {
		c.Error("ERR can only reset normal client connections")
		return
	}
	cl.Monitor = false
	cl.DB = 0
	// Redis turns tracking off (disableTracking) and goes back to RESP2.
	c.D.Tracking.Disable(cl)
	c.W.SetProto(2)
	c.D.NewClientAuth(cl)
	c.D.ResetClient(cl) // discardTransaction (and UNWATCH), the unsubscriptions
	cl.Name = ""
	cl.NoTouch = false
	cl.ReplyOff, cl.ReplySkipNext = false, false
	c.W.Simple("RESET")
}

// ---- AUTH HELLO -----------------------------------------------------------

// authenticate checks a user name and password (ACLAuthenticateUser):
// when they match, the client runs as that user from now on; when not,
// the failure goes to the ACL log.
func authenticate(c *engine.Ctx, user, pass []byte) bool {
	u := c.D.ACL.CheckCredentials(user, pass)
	if u == nil {
		c.LogAuthFailure(user)
		return false
	}
	c.Client.User = u
	c.Client.Authed = true
	return true
}

// authCommand is AUTH [username] password. The arguments are redacted
// before anything else, as Redis does, so MONITOR and the slow log never
// show a password, even a wrong one.
func authCommand(c *engine.Ctx) {
	if len(c.Args) > 3 {
		c.Error(engine.ErrSyntax)
		return
	}
	user, pass := []byte("default"), c.Args[1]
	if len(c.Args) == 3 {
		user, pass = c.Args[1], c.Args[2]
		c.Redact(2)
	}
	c.Redact(1)
	if len(c.Args) == 2 && c.D.ACL.DefaultNoPass() {
		c.Error(engine.ErrAuthNoPassword)
		return
	}
	if !authenticate(c, user, pass) {
		c.Error(engine.ErrWrongPass)
		return
	}
	c.Client.Authed = true
	c.W.OK()
}

// helloCommand is HELLO [protover [AUTH user pass] [SETNAME name]]: it
// switches the connection to RESP2 or RESP3 and answers with the
// server's description in the new protocol.
func helloCommand(c *engine.Ctx) {
	next := 1
	ver := 0
	if len(c.Args) >= 2 {
		v, ok := engine.ParseInt(c.Args[1])
		if !ok {
			c.Error(engine.ErrProtoVersion)
			return
		}
		if v != 2 && v != 3 {
			c.Error(engine.ErrNoProto)
			return
		}
		ver = int(v)
		next = 2
	}
	// Each option takes effect as it is read, as in Redis: an AUTH
	// authenticates (or answers WRONGPASS) and a SETNAME names the client
	// before a later option can fail.
	for j := next; j < len(c.Args); j++ {
		more := len(c.Args) - 1 - j
		switch {
		case engine.EqualFold(c.Args[j], "auth") && more >= 2:
			user, pass := c.Args[j+1], c.Args[j+2]
			c.Redact(j + 1)
			c.Redact(j + 2)
			j += 2
			if !authenticate(c, user, pass) {
				c.Error(engine.ErrWrongPass)
				return
			}
			c.Client.Authed = true
		case engine.EqualFold(c.Args[j], "setname") && more >= 1:
			name := c.Args[j+1]
			j++
			if !setClientName(c, name) {
				return
			}
		default:
			c.Error("ERR Syntax error in HELLO option '" + string(c.Args[j]) + "'")
			return
		}
	}
	if !c.Client.Authed {
		c.Error(engine.ErrHelloNoAuth)
		return
	}
	if ver != 0 {
		c.W.SetProto(ver)
	}
	role := "master"
	if c.KS.IsReplica() {
		role = "replica"
	}
	c.W.Map(7)
	c.W.BulkString("server")
	c.W.BulkString("redis")
	c.W.BulkString("version")
	c.W.BulkString(RedisVersion)
	c.W.BulkString("proto")
	c.W.Int(int64(c.W.Proto()))
	c.W.BulkString("id")
	c.W.Int(c.Client.ID)
	c.W.BulkString("mode")
	c.W.BulkString("standalone")
	c.W.BulkString("role")
	c.W.BulkString(role)
	c.W.BulkString("modules")
	c.W.Array(0)
}

// ---- CLIENT ---------------------------------------------------------------

var clientHelp = []string{
	"CACHING (YES|NO)",
	"    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.",
	"GETREDIR",
	"    Return the client ID we are redirecting to when tracking is enabled.",
	"GETNAME",
	"    Return the name of the current connection.",
	"ID",
	"    Return the ID of the current connection.",
	"INFO",
	"    Return information about the current client connection.",
	"KILL <ip:port>",
	"    Kill connection made from <ip:port>.",
	"KILL <option> <value> [<option> <value> [...]]",
	"    Kill connections. Options are:",
	"    * ADDR (<ip:port>|<unixsocket>:0)",
	"      Kill connections made from the specified address",
	"    * LADDR (<ip:port>|<unixsocket>:0)",
	"      Kill connections made to specified local address",
	"    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
	"      Kill connections by type.",
	"    * USER <username>",
	"      Kill connections authenticated by <username>.",
	"    * SKIPME (YES|NO)",
	"      Skip killing current connection (default: yes).",
	"LIST [options ...]",
	"    Return information about client connections. Options:",
	"    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
	"      Return clients of specified type.",
	"UNPAUSE",
	"    Stop the current client pause, resuming traffic.",
	"PAUSE <timeout> [WRITE|ALL]",
	"    Suspend all, or just write, clients for <timeout> milliseconds.",
	"REPLY (ON|OFF|SKIP)",
	"    Control the replies sent to the current connection.",
	"SETNAME <name>",
	"    Assign the name <name> to the current connection.",
	"UNBLOCK <clientid> [TIMEOUT|ERROR]",
	"    Unblock the specified blocked client.",
	"TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]",
	"         [OPTIN] [OPTOUT] [NOLOOP]",
	"    Control server assisted client side caching.",
	"TRACKINGINFO",
	"    Report tracking status for the current connection.",
	"NO-EVICT (ON|OFF)",
	"    Protect current client connection from eviction.",
}

func clientHelpCommand(c *engine.Ctx) { c.ReplyHelp(clientHelp) }

func clientIDCommand(c *engine.Ctx) { c.W.Int(c.Client.ID) }

func clientGetnameCommand(c *engine.Ctx) {
	if c.Client.Name == "" {
		c.W.Null()
		return
	}
	c.W.BulkString(c.Client.Name)
}

func clientSetnameCommand(c *engine.Ctx) {
	if setClientName(c, c.Args[2]) {
		c.W.OK()
	}
}

// validClientAttr reports whether a client name (or library attribute)
// holds only printable ASCII without spaces, so that CLIENT LIST lines
// stay splittable on spaces.
func validClientAttr(b []byte) bool {
	for _, ch := range b {
		if ch < '!' || ch > '~' {
			return false
		}
	}
	return true
}

// setClientName names the client (an empty name removes it), or replies
// with the error and returns false.
func setClientName(c *engine.Ctx, name []byte) bool {
	if !validClientAttr(name) {
		c.Error(engine.ErrClientName)
		return false
	}
	c.Client.Name = string(name)
	return true
}

// clientSetinfoCommand is CLIENT SETINFO LIB-NAME|LIB-VER value (Redis 7.2).
func clientSetinfoCommand(c *engine.Ctx) {
	attr, val := c.Args[2], c.Args[3]
	var dst *string
	switch {
	case engine.EqualFold(attr, "lib-name"):
		dst = &c.Client.LibName
	case engine.EqualFold(attr, "lib-ver"):
		dst = &c.Client.LibVer
	default:
		c.Error("ERR Unrecognized option '" + string(attr) + "'")
		return
	}
	if !validClientAttr(val) {
		c.Error("ERR " + string(attr) + " cannot contain spaces, newlines or special characters.")
		return
	}
	*dst = string(val)
	c.W.OK()
}

// onOff parses ON or OFF, replying a syntax error otherwise.
func onOff(c *engine.Ctx, b []byte) (on, ok bool) {
	switch {
	case engine.EqualFold(b, "on"):
		return true, true
	case engine.EqualFold(b, "off"):
		return false, true
	}
	c.Error(engine.ErrSyntax)
	return false, false
}

func clientNoEvictCommand(c *engine.Ctx) {
	if on, ok := onOff(c, c.Args[2]); ok {
		c.Client.NoEvict = on
		c.W.OK()
	}
}

// clientNoTouchCommand is CLIENT NO-TOUCH ON|OFF (Redis 7.2): the client's
// commands leave keys' access times alone.
func clientNoTouchCommand(c *engine.Ctx) {
	if on, ok := onOff(c, c.Args[2]); ok {
		c.Client.NoTouch = on
		c.W.OK()
	}
}

// clientReplyCommand is CLIENT REPLY ON|OFF|SKIP. The connection drops the
// replies after each command according to the client's flags; OFF and
// SKIP themselves have no reply.
func clientReplyCommand(c *engine.Ctx) {
	cl := c.Client
	switch a := c.Args[2]; {
	case engine.EqualFold(a, "on"):
		cl.ReplyOff, cl.ReplySkip, cl.ReplySkipNext = false, false, false
		c.W.OK()
	case engine.EqualFold(a, "off"):
		cl.ReplyOff = true
	case engine.EqualFold(a, "skip"):
		if !cl.ReplyOff {
			cl.ReplySkipNext = true
		}
	default:
		c.Error(engine.ErrSyntax)
	}
}

// clientPauseCommand is CLIENT PAUSE timeout [WRITE|ALL]. The mode is
// checked before the timeout, as in Redis; the deadline wraps like
// Redis's when the timeout is near the int64 limit (no pause at all).
func clientPauseCommand(c *engine.Ctx) {
	if len(c.Args) > 4 {
		c.Error(engine.ErrSubcommandSyntax(string(c.Args[1]), strings.ToUpper(string(c.Args[0]))))
		return
	}
	all := true
	if len(c.Args) == 4 {
		switch {
		case engine.EqualFold(c.Args[3], "write"):
			all = false
		case engine.EqualFold(c.Args[3], "all"):
		default:
			c.Error(engine.ErrPauseMode)
			return
		}
	}
	ms, ok := parseMsTimeout(c, c.Args[2])
	if !ok {
		return
	}
	end := int64(0)
	if ms > 0 {
		end = ms + c.KS.Now()
	}
	c.Srv.Pause(end, all)
	c.W.OK()
}

func clientUnpauseCommand(c *engine.Ctx) {
	c.Srv.Unpause()
	c.W.OK()
}

// clientUnblockCommand is CLIENT UNBLOCK id [TIMEOUT|ERROR]: the reason is
// checked before the id, as in Redis.
func clientUnblockCommand(c *engine.Ctx) {
	if len(c.Args) > 4 {
		c.Error(engine.ErrSubcommandSyntax(string(c.Args[1]), strings.ToUpper(string(c.Args[0]))))
		return
	}
	withErr := false
	if len(c.Args) == 4 {
		switch {
		case engine.EqualFold(c.Args[3], "timeout"):
		case engine.EqualFold(c.Args[3], "error"):
			withErr = true
		default:
			c.Error(engine.ErrUnblockReason)
			return
		}
	}
	id, ok := c.IntArg(2)
	if !ok {
		return
	}
	msg := ""
	if withErr {
		msg = engine.ErrUnblocked
	}
	if t := clientByID(c, id); t != nil && t.Blocked && t.Unblock != nil {
		// The ended call is accounted for, failed, whatever the reason
		// (Redis 7.0.15's updateStatsOnUnblock(target, 0, 0, 1)).
		c.D.ClientUnblocked(t)
		if t.Unblock(msg) {
			if withErr {
				c.ErrorTo(msg)
			}
			c.W.Int(1)
			return
		}
	}
	c.W.Int(0)
}

// clientByID finds a connected client.
func clientByID(c *engine.Ctx, id int64) *engine.Client {
	for _, cl := range c.Srv.Clients() {
		if cl.ID == id {
			return cl
		}
	}
	return nil
}

// Client types, as CLIENT LIST TYPE and CLIENT KILL TYPE name them.
const (
	clientTypeNormal = iota
	clientTypeReplica
	clientTypePubSub
	clientTypeMaster
)

// parseClientType maps a type name to its type, -1 when unknown.
func parseClientType(b []byte) int {
	switch {
	case engine.EqualFold(b, "normal"):
		return clientTypeNormal
	case engine.EqualFold(b, "slave"), engine.EqualFold(b, "replica"):
		return clientTypeReplica
	case engine.EqualFold(b, "pubsub"):
		return clientTypePubSub
	case engine.EqualFold(b, "master"):
		return clientTypeMaster
	}
	return -1
}

// clientType classifies a client as getClientType does: the master's
// link is master, a replica is replica, a MONITOR client counts as
// normal.
func clientType(cl *engine.Client) int {
	if cl.Master {
		return clientTypeMaster
	}
	if cl.Replica && !cl.Monitor {
		return clientTypeReplica
	}
	if cl.Subs+cl.PSubs+cl.SSubs > 0 {
		return clientTypePubSub
	}
	return clientTypeNormal
}

// clientListCommand is CLIENT LIST [TYPE type | ID id [id ...]].
func clientListCommand(c *engine.Ctx) {
	now := c.KS.Now()
	var b []byte
	switch {
	case len(c.Args) == 4 && engine.EqualFold(c.Args[2], "type"):
		typ := parseClientType(c.Args[3])
		if typ < 0 {
			c.Error("ERR Unknown client type '" + string(c.Args[3]) + "'")
			return
		}
		for _, cl := range c.Srv.Clients() {
			if clientType(cl) == typ {
				b = engine.AppendClientInfo(b, c, cl, now, 0)
				b = append(b, '\n')
			}
		}
	case len(c.Args) > 3 && engine.EqualFold(c.Args[2], "id"):
		ids := make([]int64, 0, len(c.Args)-3)
		for _, a := range c.Args[3:] {
			id, ok := engine.ParseInt(a)
			if !ok {
				c.Error(engine.ErrInvalidClientID)
				return
			}
			ids = append(ids, id)
		}
		for _, id := range ids {
			if cl := clientByID(c, id); cl != nil {
				b = engine.AppendClientInfo(b, c, cl, now, 0)
				b = append(b, '\n')
			}
		}
	case len(c.Args) != 2:
		c.Error(engine.ErrSyntax)
		return
	default:
		for _, cl := range c.Srv.Clients() {
			b = engine.AppendClientInfo(b, c, cl, now, 0)
			b = append(b, '\n')
		}
	}
	c.W.Verbatim(string(b))
}

func clientInfoCommand(c *engine.Ctx) {
	b := engine.AppendClientInfo(nil, c, c.Client, c.KS.Now(), 0)
	b = append(b, '\n')
	c.W.Verbatim(string(b))
}

// clientKillCommand is CLIENT KILL addr (old form: replies OK or an error,
// may kill the caller) or CLIENT KILL <filter> <value> ... (new form:
// replies the count; skips the caller unless SKIPME NO).
func clientKillCommand(c *engine.Ctx) {
	var addr, laddr []byte
	typ := -1
	var id int64
	var user *engine.User
	skipme := true
	switch {
	case len(c.Args) == 3:
		addr = c.Args[2]
		skipme = false
	default:
		for i := 2; i < len(c.Args); i += 2 {
			opt := c.Args[i]
			if i+1 >= len(c.Args) {
				c.Error(engine.ErrSyntax)
				return
			}
			val := c.Args[i+1]
			switch {
			case engine.EqualFold(opt, "id"):
				n, ok := engine.ParseInt(val)
				if !ok || n < 1 {
					c.Error(engine.ErrClientIDRange)
					return
				}
				id = n
			case engine.EqualFold(opt, "type"):
				if typ = parseClientType(val); typ < 0 {
					c.Error("ERR Unknown client type '" + string(val) + "'")
					return
				}
			case engine.EqualFold(opt, "addr"):
				addr = val
			case engine.EqualFold(opt, "laddr"):
				laddr = val
			case engine.EqualFold(opt, "user"):
				if user = c.D.ACL.User(string(val)); user == nil {
					c.Error("ERR No such user '" + string(val) + "'")
					return
				}
			case engine.EqualFold(opt, "skipme"):
				switch {
				case engine.EqualFold(val, "yes"):
					skipme = true
				case engine.EqualFold(val, "no"):
					skipme = false
				default:
					c.Error(engine.ErrSyntax)
					return
				}
			default:
				c.Error(engine.ErrSyntax)
				return
			}
		}
	}
	killed := 0
	closeSelf := false
	for _, cl := range c.Srv.Clients() {
		switch {
		case addr != nil && cl.Addr != string(addr),
			laddr != nil && cl.LAddr != string(laddr),
			typ >= 0 && clientType(cl) != typ,
			id != 0 && cl.ID != id,
			user != nil && cl.User != user,
			cl == c.Client && skipme:
			continue
		}
		if cl == c.Client {
			closeSelf = true
		} else if cl.Kill != nil {
			cl.Kill()
		}
		killed++
	}
	if len(c.Args) == 3 {
		if killed == 0 {
			c.Error(engine.ErrNoSuchClient)
			return
		}
		c.W.OK()
	} else {
		c.W.Int(int64(killed))
	}
	if closeSelf {
		c.Client.CloseAfterReply = true
	}
}

// parseMsTimeout reads a timeout in milliseconds, an integer not below 0,
// as CLIENT PAUSE and WAIT take it (getTimeoutFromObjectOrReply in ms),
// answering Redis's error when it is not one.
func parseMsTimeout(c *engine.Ctx, arg []byte) (int64, bool) {
	ms, ok := engine.ParseInt(arg)
	if !ok {
		c.Error(engine.ErrTimeoutNotInt)
		return 0, false
	}
	if ms < 0 {
		c.Error(engine.ErrTimeoutNegative)
		return 0, false
	}
	return ms, true
}
