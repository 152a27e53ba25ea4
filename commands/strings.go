package commands

import (
	"math/big"
	"runtime"
	"strconv"

	"github.com/zredis/zredis/config"
	"github.com/zredis/zredis/engine"
	"github.com/zredis/zredis/keyspace"
	"github.com/zredis/zredis/resp"
)

// String commands (Redis t_string.c).
func init() {
	register(
		&engine.Command{Name: "get", Arity: 2, Flags: engine.ReadOnly | engine.Fast, ACL: "@read @string @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "string", Run: getCommand},
		&engine.Command{Name: "set", Arity: -3, Flags: engine.Write | engine.DenyOOM, ACL: "@write @string @slow", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "string", Run: setCommand, KeyFlags: setKeyFlags},
		&engine.Command{Name: "setnx", Arity: 3, Flags: engine.Write | engine.DenyOOM | engine.Fast, ACL: "@write @string @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "string", Run: setnxCommand},
		&engine.Command{Name: "setex", Arity: 4, Flags: engine.Write | engine.DenyOOM, ACL: "@write @string @slow", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "string", Run: setexCommand},
		&engine.Command{Name: "psetex", Arity: 4, Flags: engine.Write | engine.DenyOOM, ACL: "@write @string @slow", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "string", Run: psetexCommand},
		&engine.Command{Name: "getset", Arity: 3, Flags: engine.Write | engine.DenyOOM | engine.Fast, ACL: "@write @string @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "string", Run: getsetCommand},
		// GETDEL and GETEX write (they delete the key or change its TTL):
		// write, not readonly, and no denyoom since they never grow memory.
		&engine.Command{Name: "getdel", Arity: 2, Flags: engine.Write | engine.Fast, ACL: "@write @string @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "string", Run: getdelCommand},
		&engine.Command{Name: "getex", Arity: -2, Flags: engine.Write | engine.Fast, ACL: "@write @string @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "string", Run: getexCommand},
		&engine.Command{Name: "append", Arity: 3, Flags: engine.Write | engine.DenyOOM | engine.Fast, ACL: "@write @string @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "string", Run: appendCommand},
		&engine.Command{Name: "strlen", Arity: 2, Flags: engine.ReadOnly | engine.Fast, ACL: "@read @string @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "string", Run: strlenCommand},
		&engine.Command{Name: "incr", Arity: 2, Flags: engine.Write | engine.DenyOOM | engine.Fast, ACL: "@write @string @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "string", Run: incrCommand},
		&engine.Command{Name: "decr", Arity: 2, Flags: engine.Write | engine.DenyOOM | engine.Fast, ACL: "@write @string @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "string", Run: decrCommand},
		&engine.Command{Name: "incrby", Arity: 3, Flags: engine.Write | engine.DenyOOM | engine.Fast, ACL: "@write @string @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "string", Run: incrbyCommand},
		&engine.Command{Name: "decrby", Arity: 3, Flags: engine.Write | engine.DenyOOM | engine.Fast, ACL: "@write @string @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "string", Run: decrbyCommand},
		&engine.Command{Name: "incrbyfloat", Arity: 3, Flags: engine.Write | engine.DenyOOM | engine.Fast, ACL: "@write @string @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "string", Run: incrbyfloatCommand},
		&engine.Command{Name: "mget", Arity: -2, Flags: engine.ReadOnly | engine.Fast, ACL: "@read @string @fast", FirstKey: 1, LastKey: -1, KeyStep: 1, Group: "string", Run: mgetCommand},
		&engine.Command{Name: "mset", Arity: -3, Flags: engine.Write | engine.DenyOOM, ACL: "@write @string @slow", FirstKey: 1, LastKey: -1, KeyStep: 2, Group: "string", Run: msetCommand},
		&engine.Command{Name: "msetnx", Arity: -3, Flags: engine.Write | engine.DenyOOM, ACL: "@write @string @slow", FirstKey: 1, LastKey: -1, KeyStep: 2, Group: "string", Run: msetnxCommand},
		&engine.Command{Name: "setrange", Arity: 4, Flags: engine.Write | engine.DenyOOM, ACL: "@write @string @slow", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "string", Run: setrangeCommand},
		&engine.Command{Name: "getrange", Arity: 4, Flags: engine.ReadOnly, ACL: "@read @string @slow", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "string", Run: getrangeCommand},
		&engine.Command{Name: "substr", Arity: 4, Flags: engine.ReadOnly, ACL: "@read @string @slow", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "string", Run: getrangeCommand},
		&engine.Command{Name: "lcs", Arity: -3, Flags: engine.ReadOnly, ACL: "@read @string @slow", FirstKey: 1, LastKey: 2, KeyStep: 1, Group: "string", Run: lcsCommand},
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

// ---- GETDEL, GETEX ----------------------------------------------------------

// GETDEL key: GET, then delete the key when it held a string.
func getdelCommand(c *engine.Ctx) {
	if !getGeneric(c, c.Args[1]) {
		return
	}
	if c.DB.Delete(c.Args[1]) {
		c.Dirty(1)
		propagateDelete(c, c.Args[1], "lazyfree-lazy-user-del") // DEL or UNLINK
		c.Notify(config.NotifyGeneric, "del", c.Args[1])
	}
}

// GETEX key [EX s|PX ms|EXAT ts|PXAT ms-ts|PERSIST] (t_string.c
// getexCommand). Without options it is GET and leaves the TTL alone. The
// expire argument is validated only once the key is known to hold a
// string, and the value is replied before the key changes. An absolute
// deadline already past deletes the key on a master, an explicit deletion
// that Redis propagates as DEL and that is no expiry; a replica stores the
// past deadline and waits for its master's DEL.
func getexCommand(c *engine.Ctx) {
	o, ok := parseSetOptions(c.Args, 2, true)
	if !ok {
		c.Error(engine.ErrSyntax)
		return
	}
	key := c.Args[1]
	e := c.DB.Lookup(key)
	if e == nil {
		c.W.Null()
		return
	}
	if e.Type() != keyspace.TypeString {
		c.Error(engine.ErrWrongType)
		return
	}
	var at int64
	if o.expire != nil {
		if at, ok = expireAt(c, o.expire, o.flags); !ok {
			return
		}
	}
	replyStr(c, e)
	switch {
	case o.flags&(setEXAT|setPXAT) != 0 && at <= c.KS.Now() && !c.KS.IsReplica():
		c.DB.Delete(key)
		c.Dirty(1)
		propagateDelete(c, key, "lazyfree-lazy-expire") // DEL or UNLINK
		c.Notify(config.NotifyGeneric, "del", key)
	case o.expire != nil:
		c.DB.SetExpire(key, at)
		c.Dirty(1)
		propagatePexpireat(c, key, at) // absolute
		c.Notify(config.NotifyGeneric, "expire", key)
	case o.flags&setPersist != 0:
		if c.DB.Persist(key) {
			c.Dirty(1)
			c.Propagate(propPERSIST, key)
			c.Notify(config.NotifyGeneric, "persist", key)
		}
	}
}

// ---- APPEND, STRLEN, SETRANGE, GETRANGE -------------------------------------

// maxBulkLen is proto-max-bulk-len, the largest string a command may
// build.
func maxBulkLen(c *engine.Ctx) int64 { return int64(c.Config().Int("proto-max-bulk-len")) }

// checkStringLength refuses a string of size+add bytes when it would
// exceed proto-max-bulk-len or overflow (t_string.c checkStringLength).
// false means the error reply was written.
func checkStringLength(c *engine.Ctx, size, add int64) bool {
	total := size + add // may wrap: caught below, as in Redis
	if total > maxBulkLen(c) || total < size || total < add {
		c.Error(engine.ErrStringTooLong)
		return false
	}
	return true
}

// APPEND key value: the value grows in place; a missing key is created.
func appendCommand(c *engine.Ctx) {
	key, val := c.Args[1], c.Args[2]
	e := c.DB.LookupWrite(key)
	if e == nil {
		setString(c, key, val, false, 0)
		c.Dirty(1)
		c.Notify(config.NotifyNew, "new", key)
		c.Notify(config.NotifyString, "append", key)
		c.W.Int(int64(len(val)))
		return
	}
	if e.Type() != keyspace.TypeString {
		c.Error(engine.ErrWrongType)
		return
	}
	if !checkStringLength(c, int64(len(e.Str())), int64(len(val))) {
		return
	}
	e.SetStr(append(e.Str(), val...))
	e.MarkRaw() // Redis keeps an appended string raw-encoded
	c.Dirty(1)
	c.Notify(config.NotifyString, "append", key)
	c.W.Int(int64(len(e.Str())))
}

func strlenCommand(c *engine.Ctx) {
	e := c.DB.Lookup(c.Args[1])
	if e == nil {
		c.W.Int(0)
		return
	}
	if e.Type() != keyspace.TypeString {
		c.Error(engine.ErrWrongType)
		return
	}
	c.W.Int(int64(len(e.Str())))
}

// SETRANGE key offset value overwrites the value from offset on, padding
// with zero bytes past its end. An empty value changes nothing (and
// creates no key); the reply is the resulting length.
func setrangeCommand(c *engine.Ctx) {
	key, val := c.Args[1], c.Args[3]
	offset, ok := c.IntArg(2)
	if !ok {
		return
	}
	if offset < 0 {
		c.Error(engine.ErrOffsetRange)
		return
	}
	e := c.DB.LookupWrite(key)
	if e == nil {
		if len(val) == 0 {
			c.W.Int(0)
			return
		}
		if !checkStringLength(c, offset, int64(len(val))) {
			return
		}
		buf := make([]byte, offset+int64(len(val)))
		copy(buf[offset:], val)
		ne := keyspace.NewString(buf, 0)
		ne.MarkRaw() // as Redis's createObject of an sds: raw-encoded
		c.DB.Put(key, ne)
		c.Dirty(1)
		c.Notify(config.NotifyNew, "new", key)
		c.Notify(config.NotifyString, "setrange", key)
		c.W.Int(int64(len(buf)))
		return
	}
	if e.Type() != keyspace.TypeString {
		c.Error(engine.ErrWrongType)
		return
	}
	cur := e.Str()
	if len(val) == 0 {
		c.W.Int(int64(len(cur)))
		return
	}
	if !checkStringLength(c, offset, int64(len(val))) {
		return
	}
	if end := int(offset) + len(val); end > len(cur) {
		cur = append(cur, make([]byte, end-len(cur))...) // zero-filled
	}
	copy(cur[offset:], val)
	e.SetStr(cur)
	e.MarkRaw()
	c.Dirty(1)
	c.Notify(config.NotifyString, "setrange", key)
	c.W.Int(int64(len(cur)))
}

// GETRANGE key start end (and its old name SUBSTR): the bytes from start
// to end inclusive, negative indexes counting from the end; a missing key
// is an empty string.
func getrangeCommand(c *engine.Ctx) {
	start, ok := c.IntArg(2)
	if !ok {
		return
	}
	end, ok := c.IntArg(3)
	if !ok {
		return
	}
	e := c.DB.Lookup(c.Args[1])
	if e == nil {
		c.W.Bulk(nil)
		return
	}
	if e.Type() != keyspace.TypeString {
		c.Error(engine.ErrWrongType)
		return
	}
	s := e.Str()
	n := int64(len(s))
	if start < 0 && end < 0 && start > end {
		c.W.Bulk(nil)
		return
	}
	if start < 0 {
		start += n
	}
	if end < 0 {
		end += n
	}
	if start < 0 {
		start = 0
	}
	if end < 0 {
		end = 0
	}
	if end >= n {
		end = n - 1
	}
	if start > end || n == 0 {
		c.W.Bulk(nil)
		return
	}
	c.W.Bulk(s[start : end+1])
}

// ---- MGET, MSET, MSETNX -----------------------------------------------------

// MGET key [key ...]: a null for every key that is missing or not a
// string (never WRONGTYPE).
func mgetCommand(c *engine.Ctx) {
	c.W.Array(len(c.Args) - 1)
	for _, key := range c.Args[1:] {
		e := c.DB.Lookup(key)
		if e == nil || e.Type() != keyspace.TypeString {
			c.W.Null()
			continue
		}
		replyStr(c, e)
	}
}

func msetCommand(c *engine.Ctx)   { msetGeneric(c, false) }
func msetnxCommand(c *engine.Ctx) { msetGeneric(c, true) }

// msetGeneric implements MSET and MSETNX (t_string.c msetGenericCommand):
// with nx nothing is set when any of the keys exists. Every pair counts as
// one change; a key set twice keeps the last value.
func msetGeneric(c *engine.Ctx, nx bool) {
	if len(c.Args)%2 == 0 {
		c.Error(engine.ErrWrongArgs(c.Cmd.Name))
		return
	}
	if nx {
		for j := 1; j < len(c.Args); j += 2 {
			if c.DB.Exists(c.Args[j]) {
				c.W.Int(0)
				return
			}
		}
	}
	notifyNew := c.Notifies(config.NotifyNew)
	for j := 1; j < len(c.Args); j += 2 {
		fresh := notifyNew && !c.DB.Exists(c.Args[j])
		setString(c, c.Args[j], c.Args[j+1], false, 0)
		if fresh {
			c.Notify(config.NotifyNew, "new", c.Args[j])
		}
		c.Notify(config.NotifyString, "set", c.Args[j])
	}
	c.Dirty((len(c.Args) - 1) / 2)
	if nx {
		c.W.Int(1)
	} else {
		c.W.OK()
	}
}

// ---- INCR, DECR, INCRBY, DECRBY ---------------------------------------------

const minInt64 = -1 << 63

func incrCommand(c *engine.Ctx) { incrDecr(c, 1) }
func decrCommand(c *engine.Ctx) { incrDecr(c, -1) }

func incrbyCommand(c *engine.Ctx) {
	if incr, ok := c.IntArg(2); ok {
		incrDecr(c, incr)
	}
}

func decrbyCommand(c *engine.Ctx) {
	decr, ok := c.IntArg(2)
	if !ok {
		return
	}
	if decr == minInt64 { // -decr does not exist
		c.Error(engine.ErrDecrOverflow)
		return
	}
	incrDecr(c, -decr)
}

// incrDecr adds incr to the integer at key, a missing key counting as 0
// (t_string.c incrDecrCommand). The value must parse strictly as an int64
// (no spaces, sign '+' or leading zeros) and the sum must not overflow.
// An existing key keeps its TTL, and the new number is formatted into the
// value's own buffer: INCR on a live counter allocates nothing.
func incrDecr(c *engine.Ctx, incr int64) {
	key := c.Args[1]
	e := c.DB.LookupWrite(key)
	var v int64
	if e != nil {
		if e.Type() != keyspace.TypeString {
			c.Error(engine.ErrWrongType)
			return
		}
		var ok bool
		if v, ok = engine.ParseInt(e.Str()); !ok {
			c.Error(engine.ErrNotInteger)
			return
		}
	}
	if (incr < 0 && v < 0 && incr < minInt64-v) || (incr > 0 && v > 0 && incr > maxInt64-v) {
		c.Error(engine.ErrOverflow)
		return
	}
	v += incr
	if e != nil {
		e.SetInt(v)
	} else {
		var tmp [20]byte
		c.DB.SetString(key, strconv.AppendInt(tmp[:0], v, 10), false, 0)
		c.Notify(config.NotifyNew, "new", key)
	}
	c.Dirty(1)
	c.Notify(config.NotifyString, "incrby", key)
	c.W.Int(v)
}

// reuseBuf returns b emptied when it can hold n bytes and is not
// oversized for them (a long string turned into a short number must not
// pin its memory), else a new buffer of capacity n.
func reuseBuf(b []byte, n int) []byte {
	if cap(b) >= n && cap(b) <= 2*n+64 {
		return b[:0]
	}
	return make([]byte, 0, n)
}

// ---- INCRBYFLOAT ------------------------------------------------------------

// INCRBYFLOAT key increment. The sum is computed as redis-server computes
// it, in C's long double (see parseLongDouble), and stored as its
// "human" decimal form, which is also the reply (always a bulk string).
// An existing key keeps its TTL.
func incrbyfloatCommand(c *engine.Ctx) {
	key := c.Args[1]
	e := c.DB.LookupWrite(key)
	value := new(big.Float).SetPrec(ldPrec)
	if e != nil {
		if e.Type() != keyspace.TypeString {
			c.Error(engine.ErrWrongType)
			return
		}
		var ok bool
		if value, ok = parseLongDouble(e.Str()); !ok {
			c.Error(engine.ErrNotFloat)
			return
		}
	}
	incr, ok := parseLongDouble(c.Args[2])
	if !ok {
		c.Error(engine.ErrNotFloat)
		return
	}
	if value.IsInf() || incr.IsInf() {
		c.Error(engine.ErrIncrFloatNaN)
		return
	}
	sum := new(big.Float).SetPrec(ldPrec).Add(value, incr)
	if ldOverflows(sum) {
		c.Error(engine.ErrIncrFloatNaN)
		return
	}
	var out []byte
	if e != nil {
		out = formatLongDouble(reuseBuf(e.Str(), 24), sum)
		e.SetStr(out)
		e.MarkNoInt() // createStringObject: embstr or raw, never int
		c.W.Bulk(out)
	} else {
		out = formatLongDouble(nil, sum)
		ne := keyspace.NewString(out, 0)
		ne.MarkNoInt()
		c.DB.Put(key, ne)
		c.Notify(config.NotifyNew, "new", key)
		c.W.Bulk(out)
	}
	c.Dirty(1)
	// Propagated as the result, which replays exactly on any machine.
	c.Propagate(propSET, key, out, propKEEPTTL)
	c.Notify(config.NotifyString, "incrbyfloat", key)
}

// C's long double, emulated. INCRBYFLOAT parses with strtold, adds once
// and prints with "%.17Lf" (util.c string2ld, ld2string LD_STR_HUMAN),
// which is why 10.5+0.1 gives "10.6" where float64 arithmetic would print
// 10.59999999999999964. big.Float at the long double's significand
// precision rounds each step to nearest-even as the FPU does, and its
// 'f' formatting is exact with ties to even as glibc's printf; the
// exponent range, far wider in big.Float, is checked by hand. Subnormal
// long doubles (below 1e-4931) are kept at full precision: they print as
// 0 either way.

// ldPrec is the significand precision of long double where redis-server
// runs: the x87 80-bit format on amd64 and 386, IEEE binary128 on the
// other 64-bit Linux platforms (arm64, s390x, riscv64, ppc64le with an
// IEEE long double).
var ldPrec = func() uint {
	switch runtime.GOARCH {
	case "amd64", "386":
		return 64
	}
	return 113
}()

const (
	ldMaxExp = 16384  // every finite long double is below 2^ldMaxExp
	ldMinExp = -16381 // the smallest normal long double is 2^(ldMinExp-1)

	// maxLongDoubleChars bounds string2ld's input (MAX_LONG_DOUBLE_CHARS).
	maxLongDoubleChars = 5 * 1024
)

// ldOverflows reports whether a finite f lies beyond long double's
// range (where the FPU gives ±inf and strtold ±HUGE_VALL).
func ldOverflows(f *big.Float) bool {
	return !f.IsInf() && f.Sign() != 0 && f.MantExp(nil) > ldMaxExp
}

// ldUnderflows reports whether f is below half the smallest subnormal
// long double, where strtold returns zero (with ERANGE).
func ldUnderflows(f *big.Float) bool {
	return !f.IsInf() && f.Sign() != 0 && f.MantExp(nil) < ldMinExp-int(ldPrec)
}

// parseLongDouble parses b as string2ld does: strtold's syntax (decimal
// with an optional exponent, hexadecimal such as 0x1.8p3, inf and
// infinity in any case, an optional sign), with nothing before or after
// it, and NaN, overflow and underflow to zero refused. The result is
// correctly rounded to ldPrec bits, as glibc's strtold rounds.
func parseLongDouble(b []byte) (*big.Float, bool) {
	if len(b) == 0 || len(b) >= maxLongDoubleChars {
		return nil, false
	}
	s := b
	neg := false
	if s[0] == '+' || s[0] == '-' {
		neg = s[0] == '-'
		s = s[1:]
	}
	f := new(big.Float).SetPrec(ldPrec)
	var ok bool
	switch {
	case engine.EqualFold(s, "inf") || engine.EqualFold(s, "infinity"):
		f.SetInf(neg)
		return f, true
	case len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'):
		ok = parseHexLongDouble(f, s[2:])
	default:
		ok = parseDecLongDouble(f, s)
	}
	if !ok || ldOverflows(f) || ldUnderflows(f) {
		return nil, false
	}
	if neg {
		f.Neg(f)
	}
	return f, true
}

func isDecDigit(c byte) bool { return '0' <= c && c <= '9' }

func isHexDigit(c byte) bool {
	return isDecDigit(c) || ('a' <= c|0x20 && c|0x20 <= 'f')
}

// scanLongDouble splits a strtold mantissa and exponent: digits with an
// optional point, then expChar ('e' or 'p', any case) with an optional
// sign and decimal digits. It returns the mantissa's digits without the
// point, how many of them follow the point, and the exponent (saturated
// far beyond any long double). ok is false unless all of s is consumed.
func scanLongDouble(s []byte, isDig func(byte) bool, expChar byte) (digits []byte, frac, exp int, ok bool) {
	digits = make([]byte, 0, len(s))
	i := 0
	for ; i < len(s) && isDig(s[i]); i++ {
		digits = append(digits, s[i])
	}
	if i < len(s) && s[i] == '.' {
		for i++; i < len(s) && isDig(s[i]); i++ {
			digits = append(digits, s[i])
			frac++
		}
	}
	if len(digits) == 0 {
		return nil, 0, 0, false
	}
	if i < len(s) && s[i]|0x20 == expChar {
		i++
		eneg := false
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			eneg = s[i] == '-'
			i++
		}
		if i == len(s) || !isDecDigit(s[i]) {
			return nil, 0, 0, false
		}
		for ; i < len(s) && isDecDigit(s[i]); i++ {
			if exp < 1<<24 {
				exp = exp*10 + int(s[i]-'0')
			}
		}
		if eneg {
			exp = -exp
		}
	}
	return digits, frac, exp, i == len(s)
}

// parseDecLongDouble sets f to the decimal s (without sign).
func parseDecLongDouble(f *big.Float, s []byte) bool {
	digits, frac, exp, ok := scanLongDouble(s, isDecDigit, 'e')
	if !ok {
		return false
	}
	for len(digits) > 0 && digits[0] == '0' {
		digits = digits[1:]
	}
	if len(digits) == 0 {
		f.SetInt64(0)
		return true
	}
	e10 := exp - frac
	// The value lies in [10^(mag-1), 10^mag). Long doubles span about
	// 1e-4966 (binary128's smallest subnormal) to 1.2e4932: far outside,
	// answer without computing 10^e10.
	mag := len(digits) + e10
	if mag > 4934 || mag < -4970 {
		return false
	}
	m, _ := new(big.Int).SetString(string(digits), 10)
	if e10 >= 0 {
		m.Mul(m, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(e10)), nil))
		f.SetInt(m)
	} else {
		d := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-e10)), nil)
		f.SetRat(new(big.Rat).SetFrac(m, d))
	}
	return true
}

// parseHexLongDouble sets f to the hexadecimal s (after "0x"), whose
// exponent is binary.
func parseHexLongDouble(f *big.Float, s []byte) bool {
	digits, frac, exp, ok := scanLongDouble(s, isHexDigit, 'p')
	if !ok {
		return false
	}
	m, _ := new(big.Int).SetString(string(digits), 16)
	if m.Sign() == 0 {
		f.SetInt64(0)
		return true
	}
	shift := exp - 4*frac
	if bits := m.BitLen() + shift; bits > ldMaxExp+1 || bits < ldMinExp-int(ldPrec)-1 {
		return false
	}
	f.SetInt(m)
	f.SetMantExp(f, shift)
	return true
}

// formatLongDouble appends f as "%.17Lf" with the trailing zeros and a
// trailing point removed, and "-0" printed as "0" (ld2string,
// LD_STR_HUMAN). f is finite.
func formatLongDouble(dst []byte, f *big.Float) []byte {
	start := len(dst)
	dst = f.Append(dst, 'f', 17) // always has a point
	n := len(dst)
	for dst[n-1] == '0' {
		n--
	}
	if dst[n-1] == '.' {
		n--
	}
	dst = dst[:n]
	if string(dst[start:]) == "-0" {
		dst = append(dst[:start], '0')
	}
	return dst
}

// ---- LCS --------------------------------------------------------------------

// LCS key1 key2 [LEN] [IDX] [MINMATCHLEN len] [WITHMATCHLEN] (t_string.c
// lcsCommand): the longest common subsequence of two strings, missing
// keys counting as empty. Options are parsed after the type check, as in
// Redis. The dynamic-programming table is the one Redis builds, and its
// walk back from the end (ties go to j) decides which of several equally
// long subsequences and match ranges are reported, so it is followed
// step by step.
func lcsCommand(c *engine.Ctx) {
	ea, eb := c.DB.Lookup(c.Args[1]), c.DB.Lookup(c.Args[2])
	if (ea != nil && ea.Type() != keyspace.TypeString) || (eb != nil && eb.Type() != keyspace.TypeString) {
		c.Error(engine.ErrLCSNotString)
		return
	}
	var a, b []byte
	if ea != nil {
		a = ea.Str()
	}
	if eb != nil {
		b = eb.Str()
	}
	var getLen, getIdx, withMatchLen bool
	var minMatchLen int64
	for j := 3; j < len(c.Args); j++ {
		opt := c.Args[j]
		switch {
		case engine.EqualFold(opt, "idx"):
			getIdx = true
		case engine.EqualFold(opt, "len"):
			getLen = true
		case engine.EqualFold(opt, "withmatchlen"):
			withMatchLen = true
		case engine.EqualFold(opt, "minmatchlen") && j+1 < len(c.Args):
			n, ok := c.IntArg(j + 1)
			if !ok {
				return
			}
			minMatchLen = max(n, 0)
			j++
		default:
			c.Error(engine.ErrSyntax)
			return
		}
	}
	if getLen && getIdx {
		c.Error(engine.ErrLCSLenAndIdx)
		return
	}
	if uint64(len(a)) >= 1<<32-2 || uint64(len(b)) >= 1<<32-2 {
		c.Error(engine.ErrLCSTooLong)
		return
	}
	alen, blen := len(a), len(b)
	cells := uint64(alen+1) * uint64(blen+1)
	if cells > 1<<61 {
		c.Error(engine.ErrLCSAlloc)
		return
	}
	if limit := maxBulkLen(c); limit >= 0 && cells*4 > uint64(limit) {
		c.Error(engine.ErrLCSMemory)
		return
	}
	if getLen {
		c.W.Int(int64(lcsLength(a, b)))
		return
	}

	w := blen + 1 // LCS(i,j) = lcs[i*w+j]: a[:i] against b[:j]
	lcs := make([]uint32, cells)
	for i := 1; i <= alen; i++ {
		row, prev := lcs[i*w:(i+1)*w], lcs[(i-1)*w:i*w]
		for j := 1; j <= blen; j++ {
			if a[i-1] == b[j-1] {
				row[j] = prev[j-1] + 1
			} else {
				row[j] = max(prev[j], row[j-1])
			}
		}
	}
	total := lcs[alen*w+blen]
	result := make([]byte, total)
	idx := int(total)

	mark, ranges := 0, 0
	if getIdx {
		c.W.Map(2)
		c.W.BulkString("matches")
		mark = c.W.DeferArray()
	}
	// aStart == alen means no range is open.
	aStart, aEnd, bStart, bEnd := alen, 0, 0, 0
	for i, j := alen, blen; i > 0 && j > 0; {
		emit := false
		if a[i-1] == b[j-1] {
			result[idx-1] = a[i-1]
			switch {
			case aStart == alen:
				aStart, aEnd, bStart, bEnd = i-1, i-1, j-1, j-1
			case aStart == i && bStart == j: // contiguous: extend backward
				aStart--
				bStart--
			default:
				emit = true
			}
			if aStart == 0 || bStart == 0 {
				emit = true // the walk ends on the next step
			}
			idx--
			i--
			j--
		} else {
			if lcs[(i-1)*w+j] > lcs[i*w+j-1] {
				i--
			} else {
				j--
			}
			if aStart != alen {
				emit = true
			}
		}
		if emit {
			matchLen := aEnd - aStart + 1
			if getIdx && (minMatchLen == 0 || int64(matchLen) >= minMatchLen) {
				if withMatchLen {
					c.W.Array(3)
				} else {
					c.W.Array(2)
				}
				c.W.Array(2)
				c.W.Int(int64(aStart))
				c.W.Int(int64(aEnd))
				c.W.Array(2)
				c.W.Int(int64(bStart))
				c.W.Int(int64(bEnd))
				if withMatchLen {
					c.W.Int(int64(matchLen))
				}
				ranges++
			}
			aStart = alen
		}
	}
	if getIdx {
		c.W.FillArray(mark, ranges)
		c.W.BulkString("len")
		c.W.Int(int64(total))
		return
	}
	c.W.Bulk(result)
}

// lcsLength is the length of the longest common subsequence of a and b,
// in two rows of the table (LCS ... LEN needs no walk back).
func lcsLength(a, b []byte) uint32 {
	prev := make([]uint32, len(b)+1)
	row := make([]uint32, len(b)+1)
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			if a[i-1] == b[j-1] {
				row[j] = prev[j-1] + 1
			} else {
				row[j] = max(prev[j], row[j-1])
			}
		}
		prev, row = row, prev
	}
	return prev[len(b)]
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
