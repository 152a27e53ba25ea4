package commands

import (
	"bytes"
	"math"
	"strconv"
	"strings"

	"github.com/zredis/zredis/config"
	"github.com/zredis/zredis/engine"
	"github.com/zredis/zredis/keyspace"
	"github.com/zredis/zredis/sds"
)

// Generic key commands (Redis db.c and expire.c; OBJECT from object.c).
func init() {
	register(
		&engine.Command{Name: "del", Arity: -2, Flags: engine.Write, ACL: "@keyspace @write @slow", FirstKey: 1, LastKey: -1, KeyStep: 1, Group: "generic", Run: delCommand},
		&engine.Command{Name: "unlink", Arity: -2, Flags: engine.Write | engine.Fast, ACL: "@keyspace @write @fast", FirstKey: 1, LastKey: -1, KeyStep: 1, Group: "generic", Run: unlinkCommand},
		&engine.Command{Name: "exists", Arity: -2, Flags: engine.ReadOnly | engine.Fast, ACL: "@keyspace @read @fast", FirstKey: 1, LastKey: -1, KeyStep: 1, Group: "generic", Run: existsCommand},
		&engine.Command{Name: "touch", Arity: -2, Flags: engine.ReadOnly | engine.Fast, ACL: "@keyspace @read @fast", FirstKey: 1, LastKey: -1, KeyStep: 1, Group: "generic", Run: touchCommand},
		&engine.Command{Name: "type", Arity: 2, Flags: engine.ReadOnly | engine.Fast, ACL: "@keyspace @read @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "generic", Run: typeCommand},

		&engine.Command{Name: "expire", Arity: -3, Flags: engine.Write | engine.Fast, ACL: "@keyspace @write @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "generic", Run: expireCommand},
		&engine.Command{Name: "pexpire", Arity: -3, Flags: engine.Write | engine.Fast, ACL: "@keyspace @write @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "generic", Run: pexpireCommand},
		&engine.Command{Name: "expireat", Arity: -3, Flags: engine.Write | engine.Fast, ACL: "@keyspace @write @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "generic", Run: expireatCommand},
		&engine.Command{Name: "pexpireat", Arity: -3, Flags: engine.Write | engine.Fast, ACL: "@keyspace @write @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "generic", Run: pexpireatCommand},
		&engine.Command{Name: "ttl", Arity: 2, Flags: engine.ReadOnly | engine.Fast, ACL: "@keyspace @read @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "generic", Run: ttlCommand},
		&engine.Command{Name: "pttl", Arity: 2, Flags: engine.ReadOnly | engine.Fast, ACL: "@keyspace @read @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "generic", Run: pttlCommand},
		&engine.Command{Name: "expiretime", Arity: 2, Flags: engine.ReadOnly | engine.Fast, ACL: "@keyspace @read @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "generic", Run: expiretimeCommand},
		&engine.Command{Name: "pexpiretime", Arity: 2, Flags: engine.ReadOnly | engine.Fast, ACL: "@keyspace @read @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "generic", Run: pexpiretimeCommand},
		&engine.Command{Name: "persist", Arity: 2, Flags: engine.Write | engine.Fast, ACL: "@keyspace @write @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "generic", Run: persistCommand},

		&engine.Command{Name: "rename", Arity: 3, Flags: engine.Write, ACL: "@keyspace @write @slow", FirstKey: 1, LastKey: 2, KeyStep: 1, Group: "generic", Run: renameCommand},
		&engine.Command{Name: "renamenx", Arity: 3, Flags: engine.Write | engine.Fast, ACL: "@keyspace @write @fast", FirstKey: 1, LastKey: 2, KeyStep: 1, Group: "generic", Run: renamenxCommand},
		&engine.Command{Name: "move", Arity: 3, Flags: engine.Write | engine.Fast, ACL: "@keyspace @write @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "generic", Run: moveCommand},
		&engine.Command{Name: "copy", Arity: -3, Flags: engine.Write | engine.DenyOOM, ACL: "@keyspace @write @slow", FirstKey: 1, LastKey: 2, KeyStep: 1, Group: "generic", Run: copyCommand},

		&engine.Command{Name: "keys", Arity: 2, Flags: engine.ReadOnly, ACL: "@keyspace @read @slow @dangerous", Group: "generic", Run: keysCommand},
		&engine.Command{Name: "scan", Arity: -2, Flags: engine.ReadOnly | engine.TouchesArbitraryKeys, ACL: "@keyspace @read @slow", Group: "generic", Run: scanCommand},
		&engine.Command{Name: "randomkey", Arity: 1, Flags: engine.ReadOnly | engine.TouchesArbitraryKeys, ACL: "@keyspace @read @slow", Group: "generic", Run: randomkeyCommand},

		&engine.Command{Name: "object", Arity: -2, Group: "generic"},
		&engine.Command{Name: "object|encoding", Arity: 3, Flags: engine.ReadOnly, ACL: "@keyspace @read @slow", FirstKey: 2, LastKey: 2, KeyStep: 1, Run: objectEncodingCommand},
		&engine.Command{Name: "object|freq", Arity: 3, Flags: engine.ReadOnly, ACL: "@keyspace @read @slow", FirstKey: 2, LastKey: 2, KeyStep: 1, Run: objectFreqCommand},
		&engine.Command{Name: "object|help", Arity: 2, Flags: engine.Loading | engine.Stale, ACL: "@keyspace @slow", Run: objectHelpCommand},
		&engine.Command{Name: "object|idletime", Arity: 3, Flags: engine.ReadOnly, ACL: "@keyspace @read @slow", FirstKey: 2, LastKey: 2, KeyStep: 1, Run: objectIdletimeCommand},
		&engine.Command{Name: "object|refcount", Arity: 3, Flags: engine.ReadOnly, ACL: "@keyspace @read @slow", FirstKey: 2, LastKey: 2, KeyStep: 1, Run: objectRefcountCommand},
	)
}

// errUnsupportedOption answers an unknown EXPIRE option, quoting it.
func errUnsupportedOption(opt []byte) string { return "ERR Unsupported option " + string(opt) }

// ---- DEL UNLINK EXISTS TOUCH TYPE --------------------------------------

// delCommand is DEL: the number of keys removed. Values are freed by the
// garbage collector either way, so UNLINK's lazy free is DEL here, but
// for lazyfreed_objects: DEL frees in the background as
// lazyfree-lazy-user-del says, UNLINK always. Explicit deletions: no
// expiry event.
func delCommand(c *engine.Ctx) { delGeneric(c, keyspace.FreeUserDel) }

func unlinkCommand(c *engine.Ctx) { delGeneric(c, keyspace.FreeAsync) }

func delGeneric(c *engine.Ctx, m keyspace.FreeMode) {
	n := 0
	for _, key := range c.Args[1:] {
		if c.DB.DeleteAs(key, m) {
			c.Notify(config.NotifyGeneric, "del", key)
			n++
		}
	}
	c.Dirty(n)
	c.W.Int(int64(n))
}

// existsCommand counts the arguments that name a live key; a key given
// twice counts twice. It does not touch the keys.
func existsCommand(c *engine.Ctx) {
	n := 0
	for _, key := range c.Args[1:] {
		if c.DB.LookupNoTouch(key) != nil {
			n++
		}
	}
	c.W.Int(int64(n))
}

// touchCommand records an access to each key and counts the live ones.
func touchCommand(c *engine.Ctx) {
	n := 0
	for _, key := range c.Args[1:] {
		if c.DB.Lookup(key) != nil {
			n++
		}
	}
	c.W.Int(int64(n))
}

func typeCommand(c *engine.Ctx) { c.W.Simple(c.DB.TypeOf(c.Args[1]).String()) }

// ---- EXPIRE PEXPIRE EXPIREAT PEXPIREAT --------------------------------

// expireFlags are EXPIRE's conditions (expire.c EXPIRE_*).
type expireFlags uint8

const (
	expireNX expireFlags = 1 << iota
	expireXX
	expireGT
	expireLT
)

// parseExpireFlags parses args[3:] as Redis's
// parseExtendedExpireArgumentsOrReply: every argument must be an option,
// then the incompatible pairs are refused. ok=false means the error reply
// was written.
func parseExpireFlags(c *engine.Ctx) (expireFlags, bool) {
	var f expireFlags
	for _, opt := range c.Args[3:] {
		switch {
		case engine.EqualFold(opt, "nx"):
			f |= expireNX
		case engine.EqualFold(opt, "xx"):
			f |= expireXX
		case engine.EqualFold(opt, "gt"):
			f |= expireGT
		case engine.EqualFold(opt, "lt"):
			f |= expireLT
		default:
			c.Error(errUnsupportedOption(opt))
			return 0, false
		}
	}
	if f&expireNX != 0 && f&(expireXX|expireGT|expireLT) != 0 {
		c.Error(engine.ErrExpireNXCombo)
		return 0, false
	}
	if f&expireGT != 0 && f&expireLT != 0 {
		c.Error(engine.ErrExpireGTLT)
		return 0, false
	}
	return f, true
}

// expireGeneric implements EXPIRE, PEXPIRE, EXPIREAT and PEXPIREAT
// (expire.c expireGenericCommand): the argument counts in unit
// milliseconds (1000 for seconds) from base (the command's time for the
// relative forms, 0 for the absolute ones).
//
// A deadline at or before now deletes the key, as an explicit deletion
// (Redis 7.0 notifies "del" and propagates DEL), not as an expiry: no
// expiry event. A replica, and a server loading its data, store the past
// deadline instead and wait for the master's DEL or the normal expiry.
// GT and LT treat a key without deadline as one with an infinite TTL.
func expireGeneric(c *engine.Ctx, base, unit int64) {
	key := c.Args[1]
	flags, ok := parseExpireFlags(c)
	if !ok {
		return
	}
	when, ok := c.IntArg(2)
	if !ok {
		return
	}
	if unit != 1 {
		if when > math.MaxInt64/unit || when < math.MinInt64/unit {
			c.Error(engine.ErrInvalidExpire(c.Cmd.Name))
			return
		}
		when *= unit
	}
	if when > math.MaxInt64-base {
		c.Error(engine.ErrInvalidExpire(c.Cmd.Name))
		return
	}
	when += base

	current, exists := c.DB.Deadline(key)
	if !exists {
		c.W.Int(0)
		return
	}
	switch {
	case flags&expireNX != 0 && current != 0,
		flags&expireXX != 0 && current == 0,
		flags&expireGT != 0 && (current == 0 || when <= current),
		flags&expireLT != 0 && current != 0 && when >= current:
		c.W.Int(0)
		return
	}
	if when <= c.KS.Now() && !c.KS.Loading() && !c.KS.IsReplica() {
		c.DB.DeleteAs(key, keyspace.FreeExpire)
		propagateDelete(c, key, "lazyfree-lazy-expire") // DEL or UNLINK
		c.Notify(config.NotifyGeneric, "del", key)
	} else {
		c.DB.SetExpire(key, when)
		propagateExpire(c, when) // PEXPIREAT, absolute
		c.Notify(config.NotifyGeneric, "expire", key)
	}
	c.Dirty(1)
	c.W.Int(1)
}

func expireCommand(c *engine.Ctx)    { expireGeneric(c, c.KS.Now(), 1000) }
func pexpireCommand(c *engine.Ctx)   { expireGeneric(c, c.KS.Now(), 1) }
func expireatCommand(c *engine.Ctx)  { expireGeneric(c, 0, 1000) }
func pexpireatCommand(c *engine.Ctx) { expireGeneric(c, 0, 1) }

// ---- TTL PTTL EXPIRETIME PEXPIRETIME PERSIST --------------------------

// ttlGeneric implements TTL, PTTL, EXPIRETIME and PEXPIRETIME (expire.c
// ttlGenericCommand): -2 for a missing key, -1 without deadline, else the
// time left (or the deadline) in ms, or in seconds rounded to nearest.
func ttlGeneric(c *engine.Ctx, ms, abs bool) {
	e := c.DB.LookupNoTouch(c.Args[1])
	if e == nil {
		c.W.Int(-2)
		return
	}
	at := e.ExpireAt()
	if at == 0 {
		c.W.Int(-1)
		return
	}
	ttl := at
	if !abs {
		ttl = at - c.KS.Now()
	}
	if ttl < 0 {
		ttl = 0
	}
	if !ms {
		ttl = (ttl + 500) / 1000
	}
	c.W.Int(ttl)
}

func ttlCommand(c *engine.Ctx)         { ttlGeneric(c, false, false) }
func pttlCommand(c *engine.Ctx)        { ttlGeneric(c, true, false) }
func expiretimeCommand(c *engine.Ctx)  { ttlGeneric(c, false, true) }
func pexpiretimeCommand(c *engine.Ctx) { ttlGeneric(c, true, true) }

func persistCommand(c *engine.Ctx) {
	if !c.DB.Persist(c.Args[1]) {
		c.W.Int(0)
		return
	}
	c.Dirty(1)
	c.Notify(config.NotifyGeneric, "persist", c.Args[1])
	c.W.Int(1)
}

// ---- RENAME RENAMENX MOVE COPY ----------------------------------------

// renameGeneric implements RENAME and RENAMENX (db.c
// renameGenericCommand). The value moves with its deadline; a destination
// that exists is deleted first (RENAMENX answers 0 instead). Renaming a
// key to itself succeeds when it exists.
func renameGeneric(c *engine.Ctx, nx bool) {
	src, dst := c.Args[1], c.Args[2]
	if !c.DB.Exists(src) {
		c.Error(engine.ErrNoSuchKey)
		return
	}
	if bytes.Equal(src, dst) {
		if nx {
			c.W.Int(0)
		} else {
			c.W.OK()
		}
		return
	}
	if c.DB.Exists(dst) {
		if nx {
			c.W.Int(0)
			return
		}
		c.DB.Delete(dst)
	}
	c.DB.Put(dst, c.DB.Take(src))
	c.Notify(config.NotifyNew, "new", dst) // dbAdd, even over a deleted dst
	c.KeyReady(dst)
	c.Dirty(1)
	c.Notify(config.NotifyGeneric, "rename_from", src)
	c.Notify(config.NotifyGeneric, "rename_to", dst)
	if nx {
		c.W.Int(1)
	} else {
		c.W.OK()
	}
}

func renameCommand(c *engine.Ctx)   { renameGeneric(c, false) }
func renamenxCommand(c *engine.Ctx) { renameGeneric(c, true) }

// dbIndexArg parses a database number as getIntFromObjectOrReply and
// selectDb do: not an integer -> ErrNotInteger, beyond 32 bits ->
// ErrIntRange, out of the range of databases -> ErrDBIndex. ok=false
// means the error reply was written.
func dbIndexArg(c *engine.Ctx, arg []byte) (*keyspace.DB, bool) {
	n, ok := engine.ParseInt(arg)
	if !ok {
		c.Error(engine.ErrNotInteger)
		return nil, false
	}
	if n < math.MinInt32 || n > math.MaxInt32 {
		c.Error(engine.ErrIntRange)
		return nil, false
	}
	if n < 0 || n >= int64(c.KS.NumDBs()) {
		c.Error(engine.ErrDBIndex)
		return nil, false
	}
	return c.KS.DB(int(n)), true
}

// moveCommand is MOVE key db: 1 when the key moved with its deadline, 0
// when it is missing here or already present there.
func moveCommand(c *engine.Ctx) {
	if c.D.Cluster != nil {
		c.Error("ERR MOVE is not allowed in cluster mode")
		return
	}
	key := c.Args[1]
	dst, ok := dbIndexArg(c, c.Args[2])
	if !ok {
		return
	}
	if dst == c.DB {
		c.Error(engine.ErrSameObject)
		return
	}
	if !c.DB.Exists(key) || dst.Exists(key) {
		c.W.Int(0)
		return
	}
	dst.Put(key, c.DB.Take(key))
	c.NotifyIn(dst.ID(), config.NotifyNew, "new", key)
	c.KeyReadyIn(dst, key)
	c.Dirty(1)
	c.Notify(config.NotifyGeneric, "move_from", key)
	c.NotifyIn(dst.ID(), config.NotifyGeneric, "move_to", key)
	c.W.Int(1)
}

// copyCommand is COPY source destination [DB db] [REPLACE] (db.c
// copyCommand): the options are parsed in order, each error as met.
func copyCommand(c *engine.Ctx) {
	src, dstKey := c.Args[1], c.Args[2]
	dst := c.DB
	replace := false
	for j := 3; j < len(c.Args); j++ {
		switch {
		case engine.EqualFold(c.Args[j], "replace"):
			replace = true
		case engine.EqualFold(c.Args[j], "db") && j+1 < len(c.Args):
			var ok bool
			if dst, ok = dbIndexArg(c, c.Args[j+1]); !ok {
				return
			}
			j++
		default:
			c.Error(engine.ErrSyntax)
			return
		}
	}
	if c.D.Cluster != nil && (c.DB.ID() != 0 || dst.ID() != 0) {
		c.Error("ERR Copying to another database is not allowed in cluster mode")
		return
	}
	if dst == c.DB && bytes.Equal(src, dstKey) {
		c.Error(engine.ErrSameObject)
		return
	}
	e := c.DB.Lookup(src)
	if e == nil {
		c.W.Int(0)
		return
	}
	if dst.Exists(dstKey) {
		if !replace {
			c.W.Int(0)
			return
		}
		dst.Delete(dstKey)
	}
	dst.Put(dstKey, e.Copy())
	c.NotifyIn(dst.ID(), config.NotifyNew, "new", dstKey)
	c.KeyReadyIn(dst, dstKey)
	c.Dirty(1)
	c.NotifyIn(dst.ID(), config.NotifyGeneric, "copy_to", dstKey)
	c.W.Int(1)
}

// ---- KEYS SCAN RANDOMKEY -----------------------------------------------

// keysCommand is KEYS pattern. It runs over a snapshot of the selected
// database with the keyspace lock released, so that KEYS * over millions
// of keys does not stall the other clients; the reply is the keyspace as
// of the command's instant, keys already past their deadline left out
// (and, as in Redis, not deleted).
func keysCommand(c *engine.Ctx) {
	pattern := bytes.Clone(c.Args[1])
	all := len(pattern) == 1 && pattern[0] == '*'
	snap := c.KS.SnapshotDB(c.DB.ID())
	db := c.DB.ID()
	w := c.W
	c.Offload(func() {
		defer snap.Release()
		mark := w.DeferArray()
		n := 0
		snap.ForEach(db, func(key string, _ *keyspace.Entry) bool {
			if all || sds.MatchString(pattern, key, false) {
				w.BulkString(key)
				n++
			}
			return true
		})
		w.FillArray(mark, n)
	})
}

// scanDefaultCount is SCAN's COUNT when none is given.
const scanDefaultCount = 10

// parseCursor parses a SCAN cursor as Redis's parseScanCursorOrReply
// (strtoul): optional sign, decimal digits, no leading space, nothing
// after, no overflow of 64 bits; "" is 0 and "-n" wraps around. Every
// value is a valid position.
func parseCursor(b []byte) (uint64, bool) {
	i := 0
	neg := false
	if len(b) > 0 && (b[0] == '+' || b[0] == '-') {
		neg = b[0] == '-'
		i = 1
	}
	if i == len(b) {
		// No digits: strtoul converts nothing and stops at the start,
		// which is acceptable only for the empty string.
		return 0, len(b) == 0
	}
	var v uint64
	for ; i < len(b); i++ {
		d := b[i]
		if d < '0' || d > '9' {
			return 0, false
		}
		if v > (math.MaxUint64-uint64(d-'0'))/10 {
			return 0, false
		}
		v = v*10 + uint64(d-'0')
	}
	if neg {
		v = -v
	}
	return v, true
}

// cursorArg parses the cursor of SCAN, HSCAN, SSCAN or ZSCAN at args[i],
// answering "ERR invalid cursor" when it is not one. ok=false means the
// error reply was written.
func cursorArg(c *engine.Ctx, i int) (uint64, bool) {
	cursor, ok := parseCursor(c.Args[i])
	if !ok {
		c.Error(engine.ErrInvalidCursor)
	}
	return cursor, ok
}

// writeEmptyScan answers a scan of a missing key: cursor 0, no elements.
func writeEmptyScan(c *engine.Ctx) {
	c.W.Array(2)
	c.W.BulkString("0")
	c.W.Array(0)
}

// beginScan reads the arguments of HSCAN, SSCAN and ZSCAN in
// scanGenericCommand's order: the cursor, then the key through lookup (a
// missing key answers an empty, complete scan before the options are
// read), then the options. ok=false means the reply was written.
func beginScan[T any](c *engine.Ctx, lookup func(*engine.Ctx, []byte) (*T, bool)) (cursor uint64, v *T, o scanOptions, ok bool) {
	if cursor, ok = cursorArg(c, 2); !ok {
		return
	}
	if v, ok = lookup(c, c.Args[1]); !ok {
		return
	}
	if v == nil {
		writeEmptyScan(c)
		return cursor, nil, o, false
	}
	o, ok = parseScanOptions(c, 3, false)
	return
}

// writeScanReply writes a scan's reply: the next cursor, then the
// elements.
func writeScanReply(c *engine.Ctx, next uint64, elems [][]byte) {
	c.W.Array(2)
	c.W.BulkUint(next)
	c.W.Array(len(elems))
	for _, b := range elems {
		c.W.Bulk(b)
	}
}

// scanOptions are the options of SCAN, HSCAN, SSCAN and ZSCAN.
type scanOptions struct {
	count   int64  // COUNT, capped to what an int holds on any platform
	pattern []byte // MATCH; nil when absent or "*"
	typ     []byte // TYPE (SCAN only)
}

// parseScanOptions parses the options from args[from:] with Redis's
// rules (scanGenericCommand): COUNT must be a positive integer, an
// unknown option or a missing value is a syntax error. ok=false means
// the error reply was written.
func parseScanOptions(c *engine.Ctx, from int, allowType bool) (o scanOptions, ok bool) {
	o.count = scanDefaultCount
	for i := from; i < len(c.Args); i += 2 {
		opt := c.Args[i]
		if i+1 >= len(c.Args) {
			c.Error(engine.ErrSyntax)
			return o, false
		}
		switch {
		case engine.EqualFold(opt, "count"):
			n, ok := engine.ParseInt(c.Args[i+1])
			if !ok {
				c.Error(engine.ErrNotInteger)
				return o, false
			}
			if n < 1 {
				c.Error(engine.ErrSyntax)
				return o, false
			}
			o.count = n
		case engine.EqualFold(opt, "match"):
			o.pattern = c.Args[i+1]
		case allowType && engine.EqualFold(opt, "type"):
			o.typ = c.Args[i+1]
		default:
			c.Error(engine.ErrSyntax)
			return o, false
		}
	}
	if len(o.pattern) == 1 && o.pattern[0] == '*' {
		o.pattern = nil
	}
	if o.count > math.MaxInt32 {
		o.count = math.MaxInt32
	}
	return o, true
}

// scanCommand is SCAN cursor [MATCH pattern] [COUNT count] [TYPE type]
// (db.c scanGenericCommand). The cursor walks the keyspace's shards and,
// within one, the keys' hash order (keyspace.DB.Scan): a key present for
// the whole iteration is returned at least once. COUNT is the number of
// keys examined per call, before MATCH and TYPE filter them.
func scanCommand(c *engine.Ctx) {
	cursor, ok := cursorArg(c, 1)
	if !ok {
		return
	}
	o, ok := parseScanOptions(c, 2, true)
	if !ok {
		return
	}
	count, pattern, typ := o.count, o.pattern, o.typ
	var keys []string
	var match func(key string) bool
	if pattern != nil {
		match = func(key string) bool { return sds.MatchString(pattern, key, false) }
	}
	next := c.DB.ScanMatch(cursor, int(count), match, func(key string, e *keyspace.Entry) {
		if typ != nil && !strings.EqualFold(string(typ), e.Type().String()) {
			return
		}
		keys = append(keys, key)
	})
	c.W.Array(2)
	c.W.BulkUint(next)
	c.W.Array(len(keys))
	for _, k := range keys {
		c.W.BulkString(k)
	}
}

func randomkeyCommand(c *engine.Ctx) {
	key, ok := c.DB.RandomKey()
	if !ok {
		c.W.Null()
		return
	}
	c.W.BulkString(key)
}

// ---- OBJECT ------------------------------------------------------------

var objectHelpLines = []string{
	"ENCODING <key>",
	"    Return the kind of internal representation used in order to store the value",
	"    associated with a <key>.",
	"FREQ <key>",
	"    Return the access frequency index of the <key>. The returned integer is",
	"    proportional to the logarithm of the recent access frequency of the key.",
	"IDLETIME <key>",
	"    Return the idle time of the <key>, that is the approximated number of",
	"    seconds elapsed since the last access to the key.",
	"REFCOUNT <key>",
	"    Return the number of references of the value associated with the specified",
	"    <key>.",
}

func objectHelpCommand(c *engine.Ctx) { c.ReplyHelp(objectHelpLines) }

// objectLookup finds OBJECT's key without touching it, replying null when
// it is missing.
func objectLookup(c *engine.Ctx) *keyspace.Entry {
	e := c.DB.LookupNoNotify(c.Args[2])
	if e == nil {
		c.W.Null()
	}
	return e
}

// lfuPolicy reports whether the maxmemory-policy tracks frequency
// (allkeys-lfu, volatile-lfu).
func lfuPolicy(c *engine.Ctx) bool {
	return strings.HasSuffix(c.Config().String("maxmemory-policy"), "-lfu")
}

// TrackLFU keeps the keyspace's access-frequency tracking (OBJECT FREQ)
// in step with maxmemory-policy, lfu-log-factor and lfu-decay-time: now,
// and on every CONFIG SET (whose hooks run under the keyspace lock). The
// server calls it once while wiring the keyspace.
func TrackLFU(cfg *config.Config, ks *keyspace.Keyspace) {
	apply := func(string) error {
		ks.SetLFU(strings.HasSuffix(cfg.String("maxmemory-policy"), "-lfu"),
			int(cfg.Int("lfu-log-factor")), int(cfg.Int("lfu-decay-time")))
		return nil
	}
	apply("")
	for _, name := range []string{"maxmemory-policy", "lfu-log-factor", "lfu-decay-time"} {
		cfg.OnChange(name, apply)
	}
}

func objectEncodingCommand(c *engine.Ctx) {
	if e := objectLookup(c); e != nil {
		c.W.BulkString(e.Encoding())
	}
}

// objectRefcountCommand answers 1, or INT_MAX for a small integer string
// that Redis would hold as one of its shared integers: those are not used
// when maxmemory is set with an LRU or LFU policy, whose per-key access
// data a shared object cannot hold.
func objectRefcountCommand(c *engine.Ctx) {
	e := objectLookup(c)
	if e == nil {
		return
	}
	c.W.Int(e.Refcount(sharesIntegers(c)))
}

// sharesIntegers reports whether Redis would hold small integer strings
// as its shared objects: not when maxmemory is set with an LRU or LFU
// policy (OBJECT REFCOUNT, DEBUG OBJECT).
func sharesIntegers(c *engine.Ctx) bool {
	policy := c.Config().String("maxmemory-policy")
	return c.Config().Int("maxmemory") == 0 ||
		!(strings.HasSuffix(policy, "-lru") || strings.HasSuffix(policy, "-lfu"))
}

func objectIdletimeCommand(c *engine.Ctx) {
	e := objectLookup(c)
	if e == nil {
		return
	}
	if lfuPolicy(c) {
		c.Error(engine.ErrLFUChosen)
		return
	}
	c.W.Int(e.IdleSeconds(c.KS.Now()))
}

func objectFreqCommand(c *engine.Ctx) {
	e := objectLookup(c)
	if e == nil {
		return
	}
	if !lfuPolicy(c) {
		c.Error(engine.ErrLFUNotChosen)
		return
	}
	c.W.Int(c.KS.Freq(e))
}

// ---- propagated forms ------------------------------------------------------

// propagateExpire is the propagated form of EXPIRE, PEXPIRE and EXPIREAT
// that set a deadline (expire.c expireGenericCommand): PEXPIREAT key
// <deadline> followed by the options as given; PEXPIREAT propagates as
// it came.
func propagateExpire(c *engine.Ctx, when int64) {
	if c.Cmd.Name == "pexpireat" || !c.Propagating() {
		return
	}
	var tmp [20]byte
	argv := make([][]byte, 0, len(c.Args))
	argv = append(argv, propPEXPIREAT, c.Args[1], strconv.AppendInt(tmp[:0], when, 10))
	c.Propagate(append(argv, c.Args[3:]...)...)
}
