package commands

import (
	"math"
	"math/big"
	"math/rand/v2"
	"strconv"

	"github.com/zredis/zredis/config"
	"github.com/zredis/zredis/engine"
	"github.com/zredis/zredis/keyspace"
	"github.com/zredis/zredis/resp"
	"github.com/zredis/zredis/sds"
)

// Hash commands (Redis t_hash.c).
func init() {
	register(
		&engine.Command{Name: "hset", Arity: -4, Flags: engine.Write | engine.DenyOOM | engine.Fast, ACL: "@write @hash @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "hash", Run: hsetCommand},
		&engine.Command{Name: "hmset", Arity: -4, Flags: engine.Write | engine.DenyOOM | engine.Fast, ACL: "@write @hash @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "hash", Run: hmsetCommand},
		&engine.Command{Name: "hsetnx", Arity: 4, Flags: engine.Write | engine.DenyOOM | engine.Fast, ACL: "@write @hash @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "hash", Run: hsetnxCommand},
		&engine.Command{Name: "hget", Arity: 3, Flags: engine.ReadOnly | engine.Fast, ACL: "@read @hash @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "hash", Run: hgetCommand},
		&engine.Command{Name: "hmget", Arity: -3, Flags: engine.ReadOnly | engine.Fast, ACL: "@read @hash @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "hash", Run: hmgetCommand},
		&engine.Command{Name: "hgetall", Arity: 2, Flags: engine.ReadOnly, ACL: "@read @hash @slow", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "hash", Run: hgetallCommand},
		&engine.Command{Name: "hkeys", Arity: 2, Flags: engine.ReadOnly, ACL: "@read @hash @slow", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "hash", Run: hkeysCommand},
		&engine.Command{Name: "hvals", Arity: 2, Flags: engine.ReadOnly, ACL: "@read @hash @slow", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "hash", Run: hvalsCommand},
		&engine.Command{Name: "hdel", Arity: -3, Flags: engine.Write | engine.Fast, ACL: "@write @hash @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "hash", Run: hdelCommand},
		&engine.Command{Name: "hexists", Arity: 3, Flags: engine.ReadOnly | engine.Fast, ACL: "@read @hash @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "hash", Run: hexistsCommand},
		&engine.Command{Name: "hlen", Arity: 2, Flags: engine.ReadOnly | engine.Fast, ACL: "@read @hash @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "hash", Run: hlenCommand},
		&engine.Command{Name: "hstrlen", Arity: 3, Flags: engine.ReadOnly | engine.Fast, ACL: "@read @hash @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "hash", Run: hstrlenCommand},
		&engine.Command{Name: "hincrby", Arity: 4, Flags: engine.Write | engine.DenyOOM | engine.Fast, ACL: "@write @hash @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "hash", Run: hincrbyCommand},
		&engine.Command{Name: "hincrbyfloat", Arity: 4, Flags: engine.Write | engine.DenyOOM | engine.Fast, ACL: "@write @hash @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "hash", Run: hincrbyfloatCommand},
		&engine.Command{Name: "hrandfield", Arity: -2, Flags: engine.ReadOnly, ACL: "@read @hash @slow", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "hash", Run: hrandfieldCommand},
		&engine.Command{Name: "hscan", Arity: -3, Flags: engine.ReadOnly, ACL: "@read @hash @slow", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "hash", Run: hscanCommand},
	)
}

// ---- access helpers -----------------------------------------------------------

// hashRead looks key up for a read. ok=false means the key holds another
// type and WRONGTYPE was written; a missing key gives (nil, true).
//
// Fields past their deadline are expired first (lazy field expiry); on
// a replica, which keeps them until its master's HDEL, the reads hide
// them (hashGet, hashRange).
func hashRead(c *engine.Ctx, key []byte) (*keyspace.Hash, bool) {
	e := c.DB.Lookup(key)
	if e == nil {
		return nil, true
	}
	if e.Type() != keyspace.TypeHash {
		c.Error(engine.ErrWrongType)
		return nil, false
	}
	if e = c.DB.ExpireFields(key, e); e == nil {
		return nil, true
	}
	return e.Obj().(*keyspace.Hash), true
}

// hashGet is h.Get of a field that is live: one past its deadline that
// this server keeps (a replica's) is not there.
func hashGet(c *engine.Ctx, h *keyspace.Hash, f []byte) ([]byte, bool) {
	v, found := h.Get(f)
	if found && h.HasFieldTTLs() && !h.Live(f, c.KS.Now()) {
		return nil, false
	}
	return v, found
}

// hashStale reports whether h holds fields past their deadline (kept by
// a replica): its reads must then skip them.
func hashStale(c *engine.Ctx, h *keyspace.Hash) bool {
	at := h.MinFieldTTL()
	return at != 0 && at <= c.KS.Now()
}

// hashRange is h.Range over the live fields, and their number.
func hashRange(c *engine.Ctx, h *keyspace.Hash, fn func(f, v []byte) bool) {
	if !hashStale(c, h) {
		h.Range(fn)
		return
	}
	now := c.KS.Now()
	h.Range(func(f, v []byte) bool { return !h.Live(f, now) || fn(f, v) })
}

// hashLiveLen is the number of h's live fields.
func hashLiveLen(c *engine.Ctx, h *keyspace.Hash) int {
	if !hashStale(c, h) {
		return h.Len()
	}
	n := 0
	hashRange(c, h, func(_, _ []byte) bool { n++; return true })
	return n
}

// hashWrite looks key up for a change (hashTypeLookupWriteOrCreate). A
// missing key gives isNew and no hash: the caller makes one, with
// DB.AddHash when nothing can fail after, or else with keyspace.NewHash,
// stored with hashAdd once it holds fields. ok=false means WRONGTYPE was
// written.
func hashWrite(c *engine.Ctx, key []byte) (h *keyspace.Hash, isNew, ok bool) {
	_, h, isNew, ok = hashWriteEntry(c, key)
	return h, isNew, ok
}

// hashWriteEntry is hashWrite with the hash's entry (nil when isNew), for
// a change that may clear field deadlines (DB.FieldsChanged).
func hashWriteEntry(c *engine.Ctx, key []byte) (e *keyspace.Entry, h *keyspace.Hash, isNew, ok bool) {
	e = c.DB.LookupWrite(key)
	if e == nil {
		return nil, nil, true, true
	}
	if e.Type() != keyspace.TypeHash {
		c.Error(engine.ErrWrongType)
		return nil, nil, false, false
	}
	if e = c.DB.ExpireFields(key, e); e == nil {
		return nil, nil, true, true
	}
	return e, e.Obj().(*keyspace.Hash), false, true
}

// hashAdd stores a hash made by hashWrite under key, with the "new"
// event Redis's dbAdd sends; the caller then sends its own event.
func hashAdd(c *engine.Ctx, key []byte, h *keyspace.Hash) {
	c.DB.PutObject(key, h)
	c.Notify(config.NotifyNew, "new", key)
}

// hashLimits reads hash-max-listpack-entries and hash-max-listpack-value.
func hashLimits(c *engine.Ctx) keyspace.HashLimits {
	cfg := c.Config()
	return keyspace.HashLimits{
		MaxEntries: cfg.IntOf(hashMaxListpackEntries),
		MaxValue:   cfg.IntOf(hashMaxListpackValue),
		Overwrite:  !c.DB.SnapshotLive(),
	}
}

var (
	hashMaxListpackEntries = config.KeyOf("hash-max-listpack-entries")
	hashMaxListpackValue   = config.KeyOf("hash-max-listpack-value")
)

// ---- HSET, HMSET, HSETNX ------------------------------------------------------

func hsetCommand(c *engine.Ctx)  { hsetGeneric(c, false) }
func hmsetCommand(c *engine.Ctx) { hsetGeneric(c, true) }

// hsetGeneric is HSET key field value [field value ...], replying the
// number of new fields, and HMSET, replying OK.
func hsetGeneric(c *engine.Ctx, okReply bool) {
	if len(c.Args)%2 == 1 {
		c.Error(engine.ErrWrongArgs(c.Cmd.Name))
		return
	}
	key := c.Args[1]
	e, h, isNew, ok := hashWriteEntry(c, key)
	if !ok {
		return
	}
	lim := hashLimits(c)
	if isNew {
		// Nothing after this fails: the hash is made in its entry.
		h = c.DB.AddHash(key, lim, c.Args[2:])
		c.Notify(config.NotifyNew, "new", key)
	}
	h.Convert(lim, c.Args[2:]...)
	created := 0
	volatile := h.HasFieldTTLs()
	for i := 2; i < len(c.Args); i += 2 {
		if h.Set(c.Args[i], c.Args[i+1], lim) {
			created++
		}
	}
	if volatile {
		c.DB.FieldsChanged(e) // HSET cleared the deadlines of the fields it set
	}
	c.Notify(config.NotifyHash, "hset", key)
	c.Dirty((len(c.Args) - 2) / 2)
	if okReply {
		c.W.OK()
	} else {
		c.W.Int(int64(created))
	}
}

// hsetnxCommand is HSETNX key field value. An existing field leaves the
// hash untouched, its encoding included.
func hsetnxCommand(c *engine.Ctx) {
	key := c.Args[1]
	h, isNew, ok := hashWrite(c, key)
	if !ok {
		return
	}
	lim := hashLimits(c)
	if isNew {
		h = c.DB.AddHash(key, lim, c.Args[2:4])
		c.Notify(config.NotifyNew, "new", key)
	} else if _, exists := hashGet(c, h, c.Args[2]); exists {
		c.W.Int(0)
		return
	}
	h.Set(c.Args[2], c.Args[3], lim)
	c.Notify(config.NotifyHash, "hset", key)
	c.Dirty(1)
	c.W.Int(1)
}

// ---- reads --------------------------------------------------------------------

func hgetCommand(c *engine.Ctx) {
	h, ok := hashRead(c, c.Args[1])
	if !ok {
		return
	}
	if h != nil {
		if v, found := hashGet(c, h, c.Args[2]); found {
			replyHashValue(c, h, v)
			return
		}
	}
	c.W.Null()
}

func hmgetCommand(c *engine.Ctx) {
	h, ok := hashRead(c, c.Args[1])
	if !ok {
		return
	}
	fields := c.Args[2:]
	c.W.Array(len(fields))
	for _, f := range fields {
		if h != nil {
			if v, found := hashGet(c, h, f); found {
				replyHashValue(c, h, v)
				continue
			}
		}
		c.W.Null()
	}
}

// What genericHgetall replies with.
const (
	hgetKeys = 1 << iota
	hgetVals
)

func hgetallCommand(c *engine.Ctx) { hgetallGeneric(c, hgetKeys|hgetVals) }
func hkeysCommand(c *engine.Ctx)   { hgetallGeneric(c, hgetKeys) }
func hvalsCommand(c *engine.Ctx)   { hgetallGeneric(c, hgetVals) }

// hgetallGeneric is HGETALL (a map in RESP3), HKEYS and HVALS, in storage
// order: insertion order for a small hash, as Redis's listpack.
func hgetallGeneric(c *engine.Ctx, what int) {
	h, ok := hashRead(c, c.Args[1])
	if !ok {
		return
	}
	n := 0
	if h != nil {
		n = hashLiveLen(c, h)
	}
	if what == hgetKeys|hgetVals {
		c.W.Map(n)
	} else {
		c.W.Array(n)
	}
	if h == nil {
		return
	}
	hashRange(c, h, func(f, v []byte) bool {
		if what&hgetKeys != 0 {
			c.W.Bulk(f)
		}
		if what&hgetVals != 0 {
			replyHashValue(c, h, v)
		}
		return true
	})
}

// replyHashValue replies with v, a value of h: a large one by reference
// when it never changes in place (a mail body in a queue's hash goes out
// from where it is stored, not copied into the reply).
func replyHashValue(c *engine.Ctx, h *keyspace.Hash, v []byte) {
	if len(v) >= resp.BigArg && h.ValueStable(v) {
		c.W.BulkRef(v)
		return
	}
	c.W.Bulk(v)
}

func hexistsCommand(c *engine.Ctx) {
	h, ok := hashRead(c, c.Args[1])
	if !ok {
		return
	}
	found := false
	if h != nil {
		_, found = hashGet(c, h, c.Args[2])
	}
	if found {
		c.W.Int(1)
	} else {
		c.W.Int(0)
	}
}

func hlenCommand(c *engine.Ctx) {
	h, ok := hashRead(c, c.Args[1])
	if !ok {
		return
	}
	n := 0
	if h != nil {
		n = h.Len()
	}
	c.W.Int(int64(n))
}

func hstrlenCommand(c *engine.Ctx) {
	h, ok := hashRead(c, c.Args[1])
	if !ok {
		return
	}
	var v []byte
	if h != nil {
		v, _ = hashGet(c, h, c.Args[2])
	}
	c.W.Int(int64(len(v)))
}

// ---- HDEL ---------------------------------------------------------------------

// hdelCommand is HDEL key field [field ...]: the key goes once its last
// field does. Events: "hdel" when a field went, then "del" when the key
// went with it.
func hdelCommand(c *engine.Ctx) {
	key := c.Args[1]
	e := c.DB.LookupWrite(key)
	if e == nil {
		c.W.Int(0)
		return
	}
	if e.Type() != keyspace.TypeHash {
		c.Error(engine.ErrWrongType)
		return
	}
	if e = c.DB.ExpireFields(key, e); e == nil {
		c.W.Int(0)
		return
	}
	h := e.Obj().(*keyspace.Hash)
	deleted, keyRemoved := 0, false
	for _, f := range c.Args[2:] {
		if h.Delete(f) {
			deleted++
			if h.Len() == 0 {
				c.DB.Delete(key)
				keyRemoved = true
				break
			}
		}
	}
	if deleted > 0 {
		c.Notify(config.NotifyHash, "hdel", key)
		if keyRemoved {
			c.Notify(config.NotifyGeneric, "del", key)
		} else {
			c.DB.FieldsChanged(e)
		}
	}
	c.Dirty(deleted)
	c.W.Int(int64(deleted))
}

// ---- HINCRBY, HINCRBYFLOAT ----------------------------------------------------

// hincrbyCommand is HINCRBY key field increment: a missing field counts
// as 0; the increment is checked before the key's type.
func hincrbyCommand(c *engine.Ctx) {
	incr, ok := c.IntArg(3)
	if !ok {
		return
	}
	key, field := c.Args[1], c.Args[2]
	h, isNew, ok := hashWrite(c, key)
	if !ok {
		return
	}
	if isNew {
		h = keyspace.NewHash() // stored only if the increment succeeds
	}
	var v int64
	if old, found := h.Get(field); found {
		if v, ok = engine.ParseInt(old); !ok {
			c.Error(engine.ErrHashNotInteger)
			return
		}
	}
	if (incr < 0 && v < 0 && incr < minInt64-v) || (incr > 0 && v > 0 && incr > maxInt64-v) {
		c.Error(engine.ErrOverflow)
		return
	}
	v += incr
	var tmp [20]byte
	h.SetKeepTTL(field, strconv.AppendInt(tmp[:0], v, 10), hashLimits(c))
	if isNew {
		hashAdd(c, key, h)
	}
	c.Notify(config.NotifyHash, "hincrby", key)
	c.Dirty(1)
	c.W.Int(v)
}

// hincrbyfloatCommand is HINCRBYFLOAT key field increment, computed in C's
// long double and formatted as INCRBYFLOAT formats (see parseLongDouble).
func hincrbyfloatCommand(c *engine.Ctx) {
	incr, ok := parseLongDouble(c.Args[3])
	if !ok {
		c.Error(engine.ErrNotFloat)
		return
	}
	if incr.IsInf() {
		c.Error(engine.ErrHashNaNOrInf)
		return
	}
	key, field := c.Args[1], c.Args[2]
	h, isNew, ok := hashWrite(c, key)
	if !ok {
		return
	}
	if isNew {
		h = keyspace.NewHash() // stored only if the increment succeeds
	}
	value := new(big.Float).SetPrec(ldPrec)
	if old, found := h.Get(field); found {
		if value, ok = parseLongDouble(old); !ok {
			c.Error(engine.ErrHashNotFloat)
			return
		}
	}
	if value.IsInf() {
		c.Error(engine.ErrIncrFloatNaN)
		return
	}
	sum := new(big.Float).SetPrec(ldPrec).Add(value, incr)
	if ldOverflows(sum) {
		c.Error(engine.ErrIncrFloatNaN)
		return
	}
	var tmp [64]byte
	out := formatLongDouble(tmp[:0], sum)
	h.SetKeepTTL(field, out, hashLimits(c))
	if isNew {
		hashAdd(c, key, h)
	}
	c.Notify(config.NotifyHash, "hincrbyfloat", key)
	c.Dirty(1)
	// Propagated as the result, which replays exactly on any machine,
	// then the deadline HSET cleared, if the field keeps one.
	c.Propagate(propHSET, key, field, out)
	propagateKeptTTLs(c, key, h, [][]byte{field})
	c.W.Bulk(out)
}

// ---- HRANDFIELD ---------------------------------------------------------------

// hrandfieldCommand is HRANDFIELD key [count [WITHVALUES]]
// (t_hash.c hrandfieldCommand): the count and options are checked before
// the key.
func hrandfieldCommand(c *engine.Ctx) {
	if len(c.Args) < 3 {
		h, ok := hashRead(c, c.Args[1])
		if !ok {
			return
		}
		if h == nil {
			c.W.Null()
			return
		}
		f, _ := h.Random()
		c.W.Bulk(f)
		return
	}
	l, ok := c.IntArg(2)
	if !ok {
		return
	}
	if l < -math.MaxInt64 {
		c.Error("ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807")
		return
	}
	withValues := false
	if len(c.Args) > 4 || (len(c.Args) == 4 && !engine.EqualFold(c.Args[3], "withvalues")) {
		c.Error(engine.ErrSyntax)
		return
	} else if len(c.Args) == 4 {
		withValues = true
		if l < math.MinInt64/2 || l > math.MaxInt64/2 {
			c.Error(engine.ErrValueOutOfRange)
			return
		}
	}
	hrandfieldWithCount(c, l, withValues)
}

func hrandfieldWithCount(c *engine.Ctx, l int64, withValues bool) {
	h, ok := hashRead(c, c.Args[1])
	if !ok {
		return
	}
	if h == nil || l == 0 {
		c.W.Array(0)
		return
	}
	size := h.Len()
	resp3 := c.W.Proto() == 3
	pair := func(f, v []byte) {
		if withValues && resp3 {
			c.W.Array(2)
		}
		c.W.Bulk(f)
		if withValues {
			c.W.Bulk(v)
		}
	}
	header := func(n int) {
		if withValues && !resp3 {
			n *= 2
		}
		c.W.Array(n)
	}
	// Negative count: draws with repetition, in random order.
	if l < 0 || l == 1 {
		count := l
		if count < 0 {
			count = -count
		}
		header(int(count))
		if h.Encoding() == "listpack" {
			// Index the small form once rather than walk it per draw.
			pairs := h.Pairs(make([][]byte, 0, 2*size))
			for ; count > 0; count-- {
				i := rand.IntN(size)
				pair(pairs[2*i], pairs[2*i+1])
			}
			return
		}
		for ; count > 0; count-- {
			pair(h.Random())
		}
		return
	}
	// The whole hash, in storage order.
	if l >= int64(size) {
		header(size)
		h.Range(func(f, v []byte) bool {
			pair(f, v)
			return true
		})
		return
	}
	// Distinct fields: a partial shuffle of the pairs. A small hash
	// answers them in storage order, as Redis's listpack sampling does.
	count := int(l)
	pairs := h.Pairs(make([][]byte, 0, 2*size))
	idx := make([]int, size)
	for i := range idx {
		idx[i] = i
	}
	for i := 0; i < count; i++ {
		j := i + rand.IntN(size-i)
		idx[i], idx[j] = idx[j], idx[i]
	}
	pick := idx[:count]
	if h.Encoding() == "listpack" {
		sortInts(pick)
	}
	header(count)
	for _, i := range pick {
		pair(pairs[2*i], pairs[2*i+1])
	}
}

// sortInts sorts a small slice of indexes in place (insertion sort).
func sortInts(a []int) {
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j] < a[j-1]; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
}

// ---- HSCAN --------------------------------------------------------------------

// hscanCommand is HSCAN key cursor [MATCH pattern] [COUNT count]. The
// cursor is checked first, then the key (a missing key answers an empty
// scan before the options are read), then the options (db.c
// scanGenericCommand). A small hash is returned whole with cursor 0; a
// hashtable is walked in hash-position order (keyspace.Hash.Scan), which
// returns a field present for the whole scan at least once.
func hscanCommand(c *engine.Ctx) {
	cursor, h, o, ok := beginScan(c, hashRead)
	if !ok {
		return
	}
	var out [][]byte
	stale, now := hashStale(c, h), c.KS.Now()
	next := h.Scan(cursor, int(o.count), func(f, v []byte) {
		if stale && !h.Live(f, now) {
			return
		}
		if o.pattern == nil || sds.Match(o.pattern, f, false) {
			out = append(out, f, v)
		}
	})
	writeScanReply(c, next, out)
}
