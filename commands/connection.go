package commands

import (
	"crypto/subtle"
	"strconv"
	"strings"
)

// RedisVersion is the Redis version whose behaviour zredis reproduces.
// HELLO and INFO report it: clients decide from it which commands they
// may send.
const RedisVersion = "7.0.15"

// Connection commands (networking.c, server.c, acl.c).
func init() {
	const hello = NoScript | Loading | Stale | Fast | NoAuth | AllowBusy
	const clientSub = NoScript | Loading | Stale
	const clientAdmin = Admin | NoScript | Loading | Stale
	register(
		&Command{Name: "ping", Arity: -1, Flags: Fast, ACL: "@fast @connection", Group: "connection", Run: pingCommand},
		&Command{Name: "echo", Arity: 2, Flags: Loading | Stale | Fast, ACL: "@fast @connection", Group: "connection", Run: echoCommand},
		&Command{Name: "quit", Arity: -1, Flags: hello, ACL: "@fast @connection", Group: "connection", Run: quitCommand},
		&Command{Name: "select", Arity: 2, Flags: Loading | Stale | Fast, ACL: "@fast @connection", Group: "connection", Run: selectCommand},
		&Command{Name: "reset", Arity: 1, Flags: hello, ACL: "@fast @connection", Group: "connection", Run: resetCommand},
		&Command{Name: "hello", Arity: -1, Flags: hello, ACL: "@fast @connection", Group: "connection", Run: helloCommand},
		&Command{Name: "auth", Arity: -2, Flags: hello, ACL: "@fast @connection", Group: "connection", Run: authCommand},

		&Command{Name: "client", Arity: -2, Group: "connection"},
		&Command{Name: "client|caching", Arity: 3, Flags: clientSub, ACL: "@connection", Run: clientCachingCommand},
		&Command{Name: "client|getname", Arity: 2, Flags: clientSub, ACL: "@connection", Run: clientGetnameCommand},
		&Command{Name: "client|getredir", Arity: 2, Flags: clientSub, ACL: "@connection", Run: clientGetredirCommand},
		&Command{Name: "client|help", Arity: 2, Flags: Loading | Stale, ACL: "@connection", Run: clientHelpCommand},
		&Command{Name: "client|id", Arity: 2, Flags: clientSub, ACL: "@connection", Run: clientIDCommand},
		&Command{Name: "client|info", Arity: 2, Flags: clientSub, ACL: "@connection", Run: clientInfoCommand},
		&Command{Name: "client|kill", Arity: -3, Flags: clientAdmin, ACL: "@connection", Run: clientKillCommand},
		&Command{Name: "client|list", Arity: -2, Flags: clientAdmin, ACL: "@connection", Run: clientListCommand},
		&Command{Name: "client|no-evict", Arity: 3, Flags: clientAdmin, ACL: "@connection", Run: clientNoEvictCommand},
		&Command{Name: "client|pause", Arity: -3, Flags: clientAdmin, ACL: "@connection", Run: clientPauseCommand},
		&Command{Name: "client|reply", Arity: 3, Flags: clientSub, ACL: "@connection", Run: clientReplyCommand},
		&Command{Name: "client|setname", Arity: 3, Flags: clientSub, ACL: "@connection", Run: clientSetnameCommand},
		&Command{Name: "client|trackinginfo", Arity: 2, Flags: clientSub, ACL: "@connection", Run: clientTrackinginfoCommand},
		&Command{Name: "client|unblock", Arity: -3, Flags: clientAdmin, ACL: "@connection", Run: clientUnblockCommand},
		&Command{Name: "client|unpause", Arity: 2, Flags: clientAdmin, ACL: "@connection", Run: clientUnpauseCommand},
		// Redis 7.2 additions that 7.0 lacks: clients of newer servers send
		// them (go-redis v9 sends CLIENT SETINFO on connect and ignores a
		// failure), so they are accepted. COMMAND, CLIENT HELP and CLIENT
		// LIST stay as 7.0 prints them.
		&Command{Name: "client|setinfo", Arity: 4, Flags: clientSub, ACL: "@connection", Run: clientSetinfoCommand, Extension: true},
		&Command{Name: "client|no-touch", Arity: 3, Flags: clientSub, ACL: "@connection", Run: clientNoTouchCommand, Extension: true},
	)
}

// resetHooks clear the state other families keep per client (MULTI
// queue, WATCHed keys, subscriptions) when the client sends RESET. A
// family registers its hook from its init function.
var resetHooks []func(c *Ctx)

// onReset registers a RESET hook.
func onReset(fn func(c *Ctx)) { resetHooks = append(resetHooks, fn) }

// ---- PING ECHO QUIT SELECT ------------------------------------------------

// pingCommand answers PONG, or its argument. A RESP2 client in Pub/Sub
// mode gets the ["pong", arg] array its subscription reader expects.
func pingCommand(c *Ctx) {
	if len(c.Args) > 2 {
		c.Error(ErrWrongArgs("ping"))
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

func echoCommand(c *Ctx) { c.W.Bulk(c.Args[1]) }

func quitCommand(c *Ctx) {
	c.W.OK()
	c.Client.CloseAfterReply = true
}

// selectCommand switches the client's database; the index is parsed as
// a C int, as getIntFromObjectOrReply does (see dbIndexArg).
func selectCommand(c *Ctx) {
	db, ok := dbIndexArg(c, c.Args[1])
	if !ok {
		return
	}
	c.Client.DB = db.ID()
	c.W.OK()
}

// ---- RESET ----------------------------------------------------------------

// resetCommand returns the connection to the state of a new one
// (clearClientConnectionState): database 0, RESP2, no name, replies on,
// no MONITOR, authenticated only if the default user needs no password,
// and every family's per-client state cleared through its hook.
func resetCommand(c *Ctx) {
	cl := c.Client
	cl.DB = 0
	c.W.SetProto(2)
	cl.Authed = c.Config().String("requirepass") == ""
	cl.Name = ""
	cl.NoEvict = false
	cl.NoTouch = false
	cl.ReplyOff, cl.ReplySkip, cl.ReplySkipNext = false, false, false
	cl.Monitor = false
	for _, h := range resetHooks {
		h(c)
	}
	c.W.Simple("RESET")
}

// ---- AUTH HELLO -----------------------------------------------------------

// authenticate checks a user and password against the only user,
// "default": it has the password requirepass, or takes any password when
// requirepass is empty (nopass).
func authenticate(c *Ctx, user, pass []byte) bool {
	if string(user) != "default" {
		return false
	}
	want := c.Config().String("requirepass")
	if want == "" {
		return true
	}
	return subtle.ConstantTimeCompare([]byte(want), pass) == 1
}

// authCommand is AUTH [username] password. The arguments are redacted
// before anything else, as Redis does, so MONITOR and the slow log never
// show a password, even a wrong one.
func authCommand(c *Ctx) {
	if len(c.Args) > 3 {
		c.Error(ErrSyntax)
		return
	}
	user, pass := []byte("default"), c.Args[1]
	if len(c.Args) == 3 {
		user, pass = c.Args[1], c.Args[2]
		c.Redact(2)
	}
	c.Redact(1)
	if len(c.Args) == 2 && c.Config().String("requirepass") == "" {
		c.Error(ErrAuthNoPassword)
		return
	}
	if !authenticate(c, user, pass) {
		c.Error(ErrWrongPass)
		return
	}
	c.Client.Authed = true
	c.W.OK()
}

// helloCommand is HELLO [protover [AUTH user pass] [SETNAME name]]. zredis
// speaks RESP2 only, so protocol 3 is refused as Redis refuses a version
// it does not know; clients then fall back to RESP2. For protocol 3 the
// options are still read (and an AUTH password redacted, as Redis, which
// accepts 3, redacts it) before the refusal.
func helloCommand(c *Ctx) {
	next := 1
	resp3 := false
	if len(c.Args) >= 2 {
		ver, ok := ParseInt(c.Args[1])
		if !ok {
			c.Error(ErrProtoVersion)
			return
		}
		if ver != 2 && ver != 3 {
			c.Error(ErrNoProto)
			return
		}
		resp3 = ver == 3
		next = 2
	}
	// Each option takes effect as it is read, as in Redis: an AUTH
	// authenticates (or answers WRONGPASS) and a SETNAME names the client
	// before a later option can fail. For protocol 3, which zredis
	// refuses, the options are only checked (and AUTH redacted).
	for j := next; j < len(c.Args); j++ {
		more := len(c.Args) - 1 - j
		switch {
		case EqualFold(c.Args[j], "auth") && more >= 2:
			user, pass := c.Args[j+1], c.Args[j+2]
			c.Redact(j + 1)
			c.Redact(j + 2)
			j += 2
			if resp3 {
				continue
			}
			if !authenticate(c, user, pass) {
				c.Error(ErrWrongPass)
				return
			}
			c.Client.Authed = true
		case EqualFold(c.Args[j], "setname") && more >= 1:
			name := c.Args[j+1]
			j++
			if resp3 {
				if !validClientAttr(name) {
					c.Error(ErrClientName)
					return
				}
				continue
			}
			if !setClientName(c, name) {
				return
			}
		default:
			c.Error("ERR Syntax error in HELLO option '" + string(c.Args[j]) + "'")
			return
		}
	}
	if resp3 {
		c.Error(ErrNoProto)
		return
	}
	if !c.Client.Authed {
		c.Error(ErrHelloNoAuth)
		return
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

func clientHelpCommand(c *Ctx) { replyHelp(c, clientHelp) }

func clientIDCommand(c *Ctx) { c.W.Int(c.Client.ID) }

func clientGetnameCommand(c *Ctx) {
	if c.Client.Name == "" {
		c.W.Null()
		return
	}
	c.W.BulkString(c.Client.Name)
}

func clientSetnameCommand(c *Ctx) {
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
func setClientName(c *Ctx, name []byte) bool {
	if !validClientAttr(name) {
		c.Error(ErrClientName)
		return false
	}
	c.Client.Name = string(name)
	return true
}

// clientSetinfoCommand is CLIENT SETINFO LIB-NAME|LIB-VER value (Redis 7.2).
func clientSetinfoCommand(c *Ctx) {
	attr, val := c.Args[2], c.Args[3]
	var dst *string
	switch {
	case EqualFold(attr, "lib-name"):
		dst = &c.Client.LibName
	case EqualFold(attr, "lib-ver"):
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
func onOff(c *Ctx, b []byte) (on, ok bool) {
	switch {
	case EqualFold(b, "on"):
		return true, true
	case EqualFold(b, "off"):
		return false, true
	}
	c.Error(ErrSyntax)
	return false, false
}

func clientNoEvictCommand(c *Ctx) {
	if on, ok := onOff(c, c.Args[2]); ok {
		c.Client.NoEvict = on
		c.W.OK()
	}
}

// clientNoTouchCommand is CLIENT NO-TOUCH ON|OFF (Redis 7.2): the client's
// commands leave keys' access times alone.
func clientNoTouchCommand(c *Ctx) {
	if on, ok := onOff(c, c.Args[2]); ok {
		c.Client.NoTouch = on
		c.W.OK()
	}
}

// clientReplyCommand is CLIENT REPLY ON|OFF|SKIP. The connection drops the
// replies after each command according to the client's flags; OFF and
// SKIP themselves have no reply.
func clientReplyCommand(c *Ctx) {
	cl := c.Client
	switch a := c.Args[2]; {
	case EqualFold(a, "on"):
		cl.ReplyOff, cl.ReplySkip, cl.ReplySkipNext = false, false, false
		c.W.OK()
	case EqualFold(a, "off"):
		cl.ReplyOff = true
	case EqualFold(a, "skip"):
		if !cl.ReplyOff {
			cl.ReplySkipNext = true
		}
	default:
		c.Error(ErrSyntax)
	}
}

// clientPauseCommand is CLIENT PAUSE timeout [WRITE|ALL]. The mode is
// checked before the timeout, as in Redis; the deadline wraps like
// Redis's when the timeout is near the int64 limit (no pause at all).
func clientPauseCommand(c *Ctx) {
	if len(c.Args) > 4 {
		c.Error(ErrSubcommandSyntax(string(c.Args[1]), strings.ToUpper(string(c.Args[0]))))
		return
	}
	all := true
	if len(c.Args) == 4 {
		switch {
		case EqualFold(c.Args[3], "write"):
			all = false
		case EqualFold(c.Args[3], "all"):
		default:
			c.Error(ErrPauseMode)
			return
		}
	}
	ms, ok := ParseInt(c.Args[2])
	if !ok {
		c.Error(ErrTimeoutNotInt)
		return
	}
	if ms < 0 {
		c.Error(ErrTimeoutNegative)
		return
	}
	end := int64(0)
	if ms > 0 {
		end = ms + c.KS.Now()
	}
	c.Srv.Pause(end, all)
	c.W.OK()
}

func clientUnpauseCommand(c *Ctx) {
	c.Srv.Unpause()
	c.W.OK()
}

func clientGetredirCommand(c *Ctx) { c.W.Int(-1) }

// clientTrackinginfoCommand reports tracking off: zredis does not offer
// client-side caching.
func clientTrackinginfoCommand(c *Ctx) {
	c.W.Map(3)
	c.W.BulkString("flags")
	c.W.Set(1)
	c.W.BulkString("off")
	c.W.BulkString("redirect")
	c.W.Int(-1)
	c.W.BulkString("prefixes")
	c.W.Array(0)
}

func clientCachingCommand(c *Ctx) { c.Error(ErrCachingNoTrack) }

// clientUnblockCommand is CLIENT UNBLOCK id [TIMEOUT|ERROR]: the reason is
// checked before the id, as in Redis.
func clientUnblockCommand(c *Ctx) {
	if len(c.Args) > 4 {
		c.Error(ErrSubcommandSyntax(string(c.Args[1]), strings.ToUpper(string(c.Args[0]))))
		return
	}
	withErr := false
	if len(c.Args) == 4 {
		switch {
		case EqualFold(c.Args[3], "timeout"):
		case EqualFold(c.Args[3], "error"):
			withErr = true
		default:
			c.Error(ErrUnblockReason)
			return
		}
	}
	id, ok := c.IntArg(2)
	if !ok {
		return
	}
	if t := clientByID(c, id); t != nil && t.Blocked && t.Unblock != nil && t.Unblock(withErr) {
		c.W.Int(1)
		return
	}
	c.W.Int(0)
}

// clientByID finds a connected client.
func clientByID(c *Ctx, id int64) *Client {
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
	case EqualFold(b, "normal"):
		return clientTypeNormal
	case EqualFold(b, "slave"), EqualFold(b, "replica"):
		return clientTypeReplica
	case EqualFold(b, "pubsub"):
		return clientTypePubSub
	case EqualFold(b, "master"):
		return clientTypeMaster
	}
	return -1
}

// clientType classifies a client as getClientType does: a MONITOR client
// counts as normal.
func clientType(cl *Client) int {
	if cl.Subs+cl.PSubs+cl.SSubs > 0 {
		return clientTypePubSub
	}
	return clientTypeNormal
}

// clientListCommand is CLIENT LIST [TYPE type | ID id [id ...]].
func clientListCommand(c *Ctx) {
	now := c.KS.Now()
	var b []byte
	switch {
	case len(c.Args) == 4 && EqualFold(c.Args[2], "type"):
		typ := parseClientType(c.Args[3])
		if typ < 0 {
			c.Error("ERR Unknown client type '" + string(c.Args[3]) + "'")
			return
		}
		for _, cl := range c.Srv.Clients() {
			if clientType(cl) == typ {
				b = appendClientInfo(b, c, cl, now, 0)
				b = append(b, '\n')
			}
		}
	case len(c.Args) > 3 && EqualFold(c.Args[2], "id"):
		ids := make([]int64, 0, len(c.Args)-3)
		for _, a := range c.Args[3:] {
			id, ok := ParseInt(a)
			if !ok {
				c.Error(ErrInvalidClientID)
				return
			}
			ids = append(ids, id)
		}
		for _, id := range ids {
			if cl := clientByID(c, id); cl != nil {
				b = appendClientInfo(b, c, cl, now, 0)
				b = append(b, '\n')
			}
		}
	case len(c.Args) != 2:
		c.Error(ErrSyntax)
		return
	default:
		for _, cl := range c.Srv.Clients() {
			b = appendClientInfo(b, c, cl, now, 0)
			b = append(b, '\n')
		}
	}
	c.W.Verbatim(string(b))
}

func clientInfoCommand(c *Ctx) {
	b := appendClientInfo(nil, c, c.Client, c.KS.Now(), 0)
	b = append(b, '\n')
	c.W.Verbatim(string(b))
}

// clientFlags is the flags= field of CLIENT LIST, letters in Redis's order.
func clientFlags(dst []byte, cl *Client) []byte {
	n := len(dst)
	if cl.Monitor {
		dst = append(dst, 'O')
	}
	if cl.Subs+cl.PSubs+cl.SSubs > 0 {
		dst = append(dst, 'P')
	}
	if cl.InMulti {
		dst = append(dst, 'x')
	}
	if cl.Blocked {
		dst = append(dst, 'b')
	}
	if cl.NoEvict {
		dst = append(dst, 'e')
	}
	if cl.NoTouch {
		dst = append(dst, 'T')
	}
	if len(dst) == n {
		dst = append(dst, 'N')
	}
	return dst
}

// readBufSize is the size of a connection's query buffer while it holds
// less (the request reader's initial buffer), and the size of the part of
// its output that stands for Redis's static reply buffer (rbs: Redis's
// PROTO_REPLY_CHUNK_BYTES).
const readBufSize = 16 << 10

// clientStructBytes is what CLIENT LIST's tot-mem counts for the client
// itself, besides its buffers.
const clientStructBytes = 1024

// ClientInfoString is the CLIENT LIST line of cl (without the newline),
// as Redis logs a client (catClientInfoString); writer is the length of
// its reply writer, which only its own connection may read.
func ClientInfoString(cl *Client, now int64, writer int) string {
	return string(appendClientInfo(nil, nil, cl, now, writer))
}

// appendClientInfo appends one CLIENT LIST line (without the newline),
// with the fields of Redis 7.0 in its order. For the client running the
// command (c's), cmd= is the running command and the argument and output
// sizes are those of this call, as Redis shows them; c is nil outside a
// command, and writer then the length of cl's reply writer.
//
// The buffers map to Redis's as follows. qbuf is what the request reader
// holds unparsed (during a batch: the batch and the rest), qbuf-free the
// rest of its 16 KB initial buffer. Output (replies of the batch being
// run, messages and MONITOR lines queued, and what the socket has not
// taken) is shown as Redis would hold it: the first 16 KB in its static
// reply buffer (obl, of size rbs), the rest in its reply list (omem, one
// block here: oll). tot-mem adds those buffers, argv-mem and the client
// itself.
func appendClientInfo(b []byte, c *Ctx, cl *Client, now int64, writer int) []byte {
	num := func(name string, v int64) {
		b = append(b, ' ')
		b = append(b, name...)
		b = append(b, '=')
		b = strconv.AppendInt(b, v, 10)
	}
	str := func(name, v string) {
		b = append(b, ' ')
		b = append(b, name...)
		b = append(b, '=')
		b = append(b, v...)
	}
	self := c != nil && cl == c.Client
	cmd := cl.LastCmd
	var argvMem int64
	if self {
		cmd = c.Cmd.Name
		for _, a := range c.Args {
			argvMem += int64(len(a))
		}
		writer = c.W.Len()
	}
	if cmd == "" {
		cmd = "NULL"
	}
	var out OutputFigures
	if cl.Output != nil {
		out = cl.Output(writer)
	}
	qbuf := cl.QueryBuf.Load()
	qbufFree := int64(0)
	if qbuf > 0 && qbuf < readBufSize {
		qbufFree = readBufSize - qbuf
	}
	multi := int64(-1)
	if cl.InMulti {
		multi = int64(cl.MultiLen)
	}
	idle := (now - cl.LastInteraction.Load()) / 1000
	if self || idle < 0 {
		idle = 0
	}

	b = append(b, "id="...)
	b = strconv.AppendInt(b, cl.ID, 10)
	str("addr", cl.Addr)
	str("laddr", cl.LAddr)
	num("fd", int64(cl.FD))
	str("name", cl.Name)
	num("age", max(0, (now-cl.Created)/1000))
	num("idle", idle)
	b = append(b, " flags="...)
	b = clientFlags(b, cl)
	num("db", int64(cl.DB))
	num("sub", int64(cl.Subs))
	num("psub", int64(cl.PSubs))
	num("ssub", int64(cl.SSubs))
	num("multi", multi)
	num("qbuf", qbuf)
	num("qbuf-free", qbufFree)
	num("argv-mem", argvMem)
	num("multi-mem", 0)
	num("rbs", readBufSize)
	num("rbp", out.Buf)
	num("obl", out.Buf)
	num("oll", out.Blocks)
	num("omem", out.Mem)
	num("tot-mem", clientStructBytes+max(readBufSize, qbuf)+readBufSize+out.Mem+argvMem)
	if out.Writing {
		str("events", "rw")
	} else {
		str("events", "r")
	}
	str("cmd", cmd)
	str("user", "default")
	num("redir", -1)
	num("resp", int64(cl.W.Proto()))
	return b
}

// clientKillCommand is CLIENT KILL addr (old form: replies OK or an error,
// may kill the caller) or CLIENT KILL <filter> <value> ... (new form:
// replies the count; skips the caller unless SKIPME NO).
func clientKillCommand(c *Ctx) {
	var addr, laddr []byte
	typ := -1
	var id int64
	skipme := true
	switch {
	case len(c.Args) == 3:
		addr = c.Args[2]
		skipme = false
	default:
		for i := 2; i < len(c.Args); i += 2 {
			opt := c.Args[i]
			if i+1 >= len(c.Args) {
				c.Error(ErrSyntax)
				return
			}
			val := c.Args[i+1]
			switch {
			case EqualFold(opt, "id"):
				n, ok := ParseInt(val)
				if !ok || n < 1 {
					c.Error(ErrClientIDRange)
					return
				}
				id = n
			case EqualFold(opt, "type"):
				if typ = parseClientType(val); typ < 0 {
					c.Error("ERR Unknown client type '" + string(val) + "'")
					return
				}
			case EqualFold(opt, "addr"):
				addr = val
			case EqualFold(opt, "laddr"):
				laddr = val
			case EqualFold(opt, "user"):
				// "default" is the only user, and every client's.
				if string(val) != "default" {
					c.Error("ERR No such user '" + string(val) + "'")
					return
				}
			case EqualFold(opt, "skipme"):
				switch {
				case EqualFold(val, "yes"):
					skipme = true
				case EqualFold(val, "no"):
					skipme = false
				default:
					c.Error(ErrSyntax)
					return
				}
			default:
				c.Error(ErrSyntax)
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
			c.Error(ErrNoSuchClient)
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
