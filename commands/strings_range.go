package commands

import (
	"github.com/zredis/zredis/config"
	"github.com/zredis/zredis/engine"
	"github.com/zredis/zredis/keyspace"
)

// String commands: APPEND, STRLEN, SETRANGE and GETRANGE (Redis t_string.c).
func init() {
	register(
		&engine.Command{Name: "append", Arity: 3, Flags: engine.Write | engine.DenyOOM | engine.Fast, ACL: "@write @string @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "string", Run: appendCommand},
		&engine.Command{Name: "strlen", Arity: 2, Flags: engine.ReadOnly | engine.Fast, ACL: "@read @string @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "string", Run: strlenCommand},
		&engine.Command{Name: "setrange", Arity: 4, Flags: engine.Write | engine.DenyOOM, ACL: "@write @string @slow", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "string", Run: setrangeCommand},
		&engine.Command{Name: "getrange", Arity: 4, Flags: engine.ReadOnly, ACL: "@read @string @slow", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "string", Run: getrangeCommand},
		&engine.Command{Name: "substr", Arity: 4, Flags: engine.ReadOnly, ACL: "@read @string @slow", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "string", Run: getrangeCommand},
	)
}

// maxBulkLen is proto-max-bulk-len, the largest string a command may
// build.
func maxBulkLen(c *engine.Ctx) int64 { return c.Config().IntOf(protoMaxBulkLen) }

var protoMaxBulkLen = config.KeyOf("proto-max-bulk-len")

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
