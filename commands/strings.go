package commands

import (
	"strconv"

	"github.com/zredis/zredis/config"
	"github.com/zredis/zredis/engine"
	"github.com/zredis/zredis/keyspace"
	"github.com/zredis/zredis/resp"
)

// String commands (Redis t_string.c): GET, SET and SET's variants. The
// other groups of the family are in strings_*.go, each registering its
// commands at its top.
func init() {
	register(
		&engine.Command{Name: "get", Arity: 2, Flags: engine.ReadOnly | engine.Fast, ACL: "@read @string @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "string", Run: getCommand},
		&engine.Command{Name: "set", Arity: -3, Flags: engine.Write | engine.DenyOOM, ACL: "@write @string @slow", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "string", Run: setCommand, KeyFlags: setKeyFlags},
		&engine.Command{Name: "setnx", Arity: 3, Flags: engine.Write | engine.DenyOOM | engine.Fast, ACL: "@write @string @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "string", Run: setnxCommand},
		&engine.Command{Name: "setex", Arity: 4, Flags: engine.Write | engine.DenyOOM, ACL: "@write @string @slow", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "string", Run: setexCommand},
		&engine.Command{Name: "psetex", Arity: 4, Flags: engine.Write | engine.DenyOOM, ACL: "@write @string @slow", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "string", Run: psetexCommand},
		&engine.Command{Name: "getset", Arity: 3, Flags: engine.Write | engine.DenyOOM | engine.Fast, ACL: "@write @string @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "string", Run: getsetCommand},
	)
}

// setKeyFlags is SET's key access (t_string.c setGetKeys): GET reads
// the old value, otherwise the key is overwritten.
func setKeyFlags(args [][]byte, pos int) []string {
	for _, a := range args[3:] {
		if engine.EqualFold(a, "get") {
			return setKeyFlagsGet
		}
	}
	return setKeyFlagsOverwrite
}

var (
	setKeyFlagsGet       = []string{"RW", "access", "update"}
	setKeyFlagsOverwrite = []string{"OW", "update"}
)

// setFlags are the options of the SET family (t_string.c OBJ_SET_*).
type setFlags uint16

const (
	setNX setFlags = 1 << iota
	setXX
	setGet
	setKeepTTL
	setEX   // relative seconds
	setPX   // relative milliseconds
	setEXAT // absolute seconds
	setPXAT // absolute milliseconds
	setPersist
)

const setExpireFlags = setEX | setPX | setEXAT | setPXAT

// setOptions is SET's parsed argument list.
type setOptions struct {
	flags  setFlags
	expire []byte // the EX/PX/EXAT/PXAT argument, nil when none
}

// parseSetOptions parses SET's (forGetex=false) or GETEX's options from
// args[from:] with Redis's rules: a later option that conflicts with an
// earlier one is a syntax error, a repeated EX/PX/... replaces the value.
func parseSetOptions(args [][]byte, from int, forGetex bool) (setOptions, bool) {
	var o setOptions
	for j := from; j < len(args); j++ {
		opt := args[j]
		hasNext := j+1 < len(args)
		f := o.flags
		switch {
		case !forGetex && engine.EqualFold(opt, "nx") && f&setXX == 0:
			o.flags |= setNX
		case !forGetex && engine.EqualFold(opt, "xx") && f&setNX == 0:
			o.flags |= setXX
		case !forGetex && engine.EqualFold(opt, "get"):
			o.flags |= setGet
		case !forGetex && engine.EqualFold(opt, "keepttl") && f&(setPersist|setExpireFlags) == 0:
			o.flags |= setKeepTTL
		case forGetex && engine.EqualFold(opt, "persist") && f&(setExpireFlags|setKeepTTL) == 0:
			o.flags |= setPersist
		case engine.EqualFold(opt, "ex") && f&(setKeepTTL|setPersist|setEXAT|setPX|setPXAT) == 0 && hasNext:
			o.flags |= setEX
			j++
			o.expire = args[j]
		case engine.EqualFold(opt, "px") && f&(setKeepTTL|setPersist|setEX|setEXAT|setPXAT) == 0 && hasNext:
			o.flags |= setPX
			j++
			o.expire = args[j]
		case engine.EqualFold(opt, "exat") && f&(setKeepTTL|setPersist|setEX|setPX|setPXAT) == 0 && hasNext:
			o.flags |= setEXAT
			j++
			o.expire = args[j]
		case engine.EqualFold(opt, "pxat") && f&(setKeepTTL|setPersist|setEX|setEXAT|setPX) == 0 && hasNext:
			o.flags |= setPXAT
			j++
			o.expire = args[j]
		default:
			return o, false
		}
	}
	return o, true
}

// expireAt turns an EX/PX/EXAT/PXAT argument into an absolute deadline in
// Unix ms (t_string.c getExpireMillisecondsOrReply). ok=false means the
// error reply was written.
func expireAt(c *engine.Ctx, arg []byte, flags setFlags) (int64, bool) {
	ms, ok := engine.ParseInt(arg)
	if !ok {
		c.Error(engine.ErrNotInteger)
		return 0, false
	}
	seconds := flags&(setEX|setEXAT) != 0
	if ms <= 0 || (seconds && ms > maxInt64/1000) {
		c.Error(engine.ErrInvalidExpire(c.Cmd.Name))
		return 0, false
	}
	if seconds {
		ms *= 1000
	}
	if flags&(setEX|setPX) != 0 {
		ms += c.KS.Now() // may wrap, as in Redis; caught below
	}
	if ms <= 0 {
		c.Error(engine.ErrInvalidExpire(c.Cmd.Name))
		return 0, false
	}
	return ms, true
}

const maxInt64 = 1<<63 - 1

// setGeneric implements SET, SETNX, SETEX, PSETEX (t_string.c
// setGenericCommand). okReply and abortReply replace +OK and the null
// reply for SETNX's :1 and :0.
func setGeneric(c *engine.Ctx, o setOptions, key, val []byte, okReply, abortReply func()) {
	var deadline int64
	if o.expire != nil {
		var ok bool
		if deadline, ok = expireAt(c, o.expire, o.flags); !ok {
			return
		}
	}
	if o.flags&setGet != 0 && !getGeneric(c, key) {
		return
	}
	// Only NX and XX need to know whether the key exists: plain SET and
	// SETEX spend no lookup on it.
	if o.flags&(setNX|setXX) != 0 && (o.flags&setNX != 0) == c.DB.Exists(key) {
		if o.flags&setGet == 0 {
			if abortReply != nil {
				abortReply()
			} else {
				c.W.Null()
			}
		}
		return
	}
	// "new" when the key is created (setKey's dbAdd): NX succeeded, or
	// neither NX nor XX and the key is missing; looked up only when
	// someone listens for it.
	fresh := o.flags&setNX != 0 ||
		o.flags&setXX == 0 && c.Notifies(config.NotifyNew) && !c.DB.Exists(key)
	setString(c, key, val, o.flags&setKeepTTL != 0, deadline)
	c.Dirty(1)
	propagateSet(c, o, key, val, deadline) // absolute expire, no GET
	if fresh {
		c.Notify(config.NotifyNew, "new", key)
	}
	c.Notify(config.NotifyString, "set", key)
	if o.expire != nil {
		c.Notify(config.NotifyGeneric, "expire", key)
	}
	if o.flags&setGet == 0 {
		if okReply != nil {
			okReply()
		} else {
			c.W.OK()
		}
	}
}

// getGeneric replies with key's string value (or null); false when the
// key holds another type and the WRONGTYPE error was written.
func getGeneric(c *engine.Ctx, key []byte) bool {
	e := c.DB.Lookup(key)
	if e == nil {
		c.W.Null()
		return true
	}
	if e.Type() != keyspace.TypeString {
		c.Error(engine.ErrWrongType)
		return false
	}
	replyStr(c, e)
	return true
}

// setString stores val under key as DB.SetString does, storing the
// argument itself when it is a big one the request reader allocated for
// this command alone (resp.IsOwned), so that a large value is held once.
func setString(c *engine.Ctx, key, val []byte, keepTTL bool, expireAt int64) {
	if c.OwnsArg(val) {
		c.DB.SetStringOwned(key, val, keepTTL, expireAt)
		c.Client.KeptArgBytes += int64(len(val))
		return
	}
	c.DB.SetString(key, val, keepTTL, expireAt)
}

// replyStr replies with e's string value, a large one by reference to the
// stored bytes (pinned until written) rather than a copy, as Redis's
// reply refers to a big string object.
func replyStr(c *engine.Ctx, e *keyspace.Entry) {
	s := e.Str()
	if len(s) >= resp.BigArg && c.DB.PinStr(e) {
		c.W.BulkRef(s)
		return
	}
	c.W.Bulk(s)
}

func getCommand(c *engine.Ctx) { getGeneric(c, c.Args[1]) }

// SET key value [NX|XX] [GET] [EX s|PX ms|EXAT ts|PXAT ms-ts|KEEPTTL]
func setCommand(c *engine.Ctx) {
	o, ok := parseSetOptions(c.Args, 3, false)
	if !ok {
		c.Error(engine.ErrSyntax)
		return
	}
	setGeneric(c, o, c.Args[1], c.Args[2], nil, nil)
}

func setnxCommand(c *engine.Ctx) {
	setGeneric(c, setOptions{flags: setNX}, c.Args[1], c.Args[2],
		func() { c.W.Int(1) }, func() { c.W.Int(0) })
}

func setexCommand(c *engine.Ctx) {
	setGeneric(c, setOptions{flags: setEX, expire: c.Args[2]}, c.Args[1], c.Args[3], nil, nil)
}

func psetexCommand(c *engine.Ctx) {
	setGeneric(c, setOptions{flags: setPX, expire: c.Args[2]}, c.Args[1], c.Args[3], nil, nil)
}

// GETSET key value: SET with GET, dropping any TTL.
func getsetCommand(c *engine.Ctx) {
	if !getGeneric(c, c.Args[1]) {
		return
	}
	fresh := c.Notifies(config.NotifyNew) && !c.DB.Exists(c.Args[1])
	setString(c, c.Args[1], c.Args[2], false, 0)
	c.Dirty(1)
	c.Propagate(propSET, c.Args[1], c.Args[2]) // propagated as SET
	if fresh {
		c.Notify(config.NotifyNew, "new", c.Args[1])
	}
	c.Notify(config.NotifyString, "set", c.Args[1])
}

// ---- propagated forms ------------------------------------------------------

// propagatePexpireat propagates PEXPIREAT key at.
func propagatePexpireat(c *engine.Ctx, key []byte, at int64) {
	if !c.Propagating() {
		return
	}
	var tmp [20]byte
	c.Propagate(propPEXPIREAT, key, strconv.AppendInt(tmp[:0], at, 10))
}

// propagateSet is the propagated form of a SET that set its key
// (t_string.c setGenericCommand): with an expire, SET key value PXAT
// <deadline> whatever the options; with GET and no expire, the command
// without its GET arguments; otherwise the command as it came.
func propagateSet(c *engine.Ctx, o setOptions, key, val []byte, deadline int64) {
	if o.expire == nil && o.flags&setGet == 0 || !c.Propagating() {
		return // as it came (the dispatcher's part), or nothing wanted
	}
	switch {
	case o.expire != nil:
		var tmp [20]byte
		c.Propagate(propSET, key, val, propPXAT, strconv.AppendInt(tmp[:0], deadline, 10))
	case o.flags&setGet != 0:
		argv := make([][]byte, 0, len(c.Args))
		for j, a := range c.Args {
			if j >= 3 && engine.EqualFold(a, "get") {
				continue
			}
			argv = append(argv, a)
		}
		c.Propagate(argv...)
	}
}
