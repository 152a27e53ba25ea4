package commands

import (
	"strconv"

	"github.com/zredis/zredis/config"
	"github.com/zredis/zredis/engine"
	"github.com/zredis/zredis/keyspace"
)

// Hash field expiration: Redis 7.4's HEXPIRE family (t_hash.c) and Redis
// 8.0's HGETEX, HSETEX and HGETDEL. A field's deadline is kept by the
// keyspace (keyspace/hashttl.go); a field past it leaves through the
// field funnel (keyspace/hashfields.go), which sends it, with its value,
// to the expiry stream.
//
// Propagated forms: HEXPIRE, HPEXPIRE, HEXPIREAT and HGETEX EX|PX|EXAT|PXAT
// as HPEXPIREAT key <ms> [condition] FIELDS n <the fields changed>; a
// field given a time already past as HDEL key field (the field is
// deleted, not expired: no expiry message, as EXPIRE with a past time);
// HGETEX PERSIST as HPERSIST; HGETDEL as HDEL; HSETEX as HSET, then
// HPEXPIREAT when it set a deadline (what a 7.4 replica or AOF can
// replay); HINCRBYFLOAT of a field with a deadline as HSET, then
// HPEXPIREAT with the deadline it kept.
func init() {
	register(
		&engine.Command{Name: "hexpire", Arity: -6, Flags: engine.Write | engine.DenyOOM | engine.Fast, ACL: "@write @hash @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "hash", Since: "7.4.0", Run: hexpireCommand},
		&engine.Command{Name: "hpexpire", Arity: -6, Flags: engine.Write | engine.DenyOOM | engine.Fast, ACL: "@write @hash @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "hash", Since: "7.4.0", Run: hpexpireCommand},
		&engine.Command{Name: "hexpireat", Arity: -6, Flags: engine.Write | engine.DenyOOM | engine.Fast, ACL: "@write @hash @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "hash", Since: "7.4.0", Run: hexpireatCommand},
		&engine.Command{Name: "hpexpireat", Arity: -6, Flags: engine.Write | engine.DenyOOM | engine.Fast, ACL: "@write @hash @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "hash", Since: "7.4.0", Run: hpexpireatCommand},
		&engine.Command{Name: "httl", Arity: -5, Flags: engine.ReadOnly | engine.Fast, ACL: "@read @hash @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "hash", Since: "7.4.0", Run: httlCommand},
		&engine.Command{Name: "hpttl", Arity: -5, Flags: engine.ReadOnly | engine.Fast, ACL: "@read @hash @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "hash", Since: "7.4.0", Run: hpttlCommand},
		&engine.Command{Name: "hexpiretime", Arity: -5, Flags: engine.ReadOnly | engine.Fast, ACL: "@read @hash @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "hash", Since: "7.4.0", Run: hexpiretimeCommand},
		&engine.Command{Name: "hpexpiretime", Arity: -5, Flags: engine.ReadOnly | engine.Fast, ACL: "@read @hash @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "hash", Since: "7.4.0", Run: hpexpiretimeCommand},
		&engine.Command{Name: "hpersist", Arity: -5, Flags: engine.Write | engine.Fast, ACL: "@write @hash @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "hash", Since: "7.4.0", Run: hpersistCommand},
		&engine.Command{Name: "hgetex", Arity: -5, Flags: engine.Write | engine.Fast, ACL: "@write @hash @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "hash", Since: "8.0.0", Run: hgetexCommand},
		&engine.Command{Name: "hsetex", Arity: -6, Flags: engine.Write | engine.DenyOOM | engine.Fast, ACL: "@write @hash @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "hash", Since: "8.0.0", Run: hsetexCommand},
		&engine.Command{Name: "hgetdel", Arity: -5, Flags: engine.Write | engine.Fast, ACL: "@write @hash @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "hash", Since: "8.0.0", Run: hgetdelCommand},
	)
}

var (
	propHDEL       = []byte("HDEL")
	propHPEXPIREAT = []byte("HPEXPIREAT")
	propHPERSIST   = []byte("HPERSIST")
	propFIELDS     = []byte("FIELDS")
)

// 7.4's two texts for a field count that is not a positive integer: the
// deadline setters' and the others'.
const (
	errNumFieldsExpire = "ERR Parameter `numFields` should be greater than 0"
	errNumFields       = "ERR Number of fields must be a positive integer"
)

// fieldMaxDeadline is 7.4's HFE_MAX_ABS_TIME_MSEC: the latest field
// deadline, in Unix ms ((2^48-1) >> 2, about the year 4199).
const fieldMaxDeadline = (1<<48 - 1) >> 2

// The replies of a deadline change, per field (7.4's SetExRes).
const (
	hfeNoField   = -2
	hfeNoCond    = 0
	hfeSet       = 1
	hfeDeleted   = 2
	hfeNoTTL     = -1
	hfePersisted = 1
)

// The conditions of HEXPIRE's family.
const (
	hfeNX = 1 + iota
	hfeXX
	hfeGT
	hfeLT
)

// fieldsArg reads "FIELDS numfields field..." whose FIELDS is at
// c.Args[at] and must end the command: the fields, or false after the
// error 7.4 gives (numErr for a count that is not a positive integer).
func fieldsArg(c *engine.Ctx, at int, numErr string) ([][]byte, bool) {
	if at+1 >= len(c.Args) || !engine.EqualFold(c.Args[at], "fields") {
		c.Error("ERR Mandatory argument FIELDS is missing or not at the right position")
		return nil, false
	}
	n, ok := engine.ParseInt(c.Args[at+1])
	if !ok || n < 1 {
		c.Error(numErr)
		return nil, false
	}
	if n != int64(len(c.Args)-at-2) {
		c.Error("ERR The `numfields` parameter must match the number of arguments")
		return nil, false
	}
	return c.Args[at+2:], true
}

// expireTimeArg reads a field deadline given in unit ms (1 or 1000)
// from base (now, or 0 for an absolute time), with 7.4's bounds.
func expireTimeArg(c *engine.Ctx, arg []byte, base, unit int64) (int64, bool) {
	v, ok := engine.ParseInt(arg)
	if !ok {
		c.Error(engine.ErrNotInteger)
		return 0, false
	}
	if v < 0 {
		c.Error("ERR invalid expire time, must be >= 0")
		return 0, false
	}
	if unit != 1 {
		if v > fieldMaxDeadline/unit {
			c.Error(engine.ErrInvalidExpire(c.Cmd.Name))
			return 0, false
		}
		v *= unit
	}
	if v > fieldMaxDeadline-base {
		c.Error(engine.ErrInvalidExpire(c.Cmd.Name))
		return 0, false
	}
	return v + base, true
}

// fieldTTLRefused writes the error and reports true while a replica
// that cannot keep field deadlines is attached (replication/fieldttl.go).
func fieldTTLRefused(c *engine.Ctx) bool {
	if c.Client.Master || c.KS.Loading() {
		return false // what the master or the AOF did stands; a sub-replica is refused its sync instead
	}
	if msg := c.Srv.Replication().FieldTTLRefusal(); msg != "" {
		c.Error(msg)
		return true
	}
	return false
}

// hashLookupFields looks key up as the commands of this file do, for a
// change (write) or a read, with lazy field expiry: a missing key gives
// nil; ok=false means WRONGTYPE was written.
func hashLookupFields(c *engine.Ctx, key []byte, write bool) (e *keyspace.Entry, ok bool) {
	if write {
		e = c.DB.LookupWrite(key)
	} else {
		e = c.DB.Lookup(key)
	}
	if e != nil && e.Type() != keyspace.TypeHash {
		c.Error(engine.ErrWrongType)
		return nil, false
	}
	return c.DB.ExpireFields(key, e), true
}

// fieldSetter applies deadline changes to the fields of one hash, as
// 7.4's hashTypeSetEx: it deletes a field given a time already past (on
// a master), propagating HDEL, and keeps count.
type fieldSetter struct {
	c         *engine.Ctx
	key       []byte
	e         *keyspace.Entry
	h         *keyspace.Hash
	cond      int
	updated   int
	deleted   int
	hashGone  bool
	changedFs [][]byte
}

// newFieldSetter starts the deadline changes of e, the hash under key,
// readying it for them (Hash.PrepareFieldTTLs): a small hash says
// listpackex from now on, whether or not a field gets a deadline.
func newFieldSetter(c *engine.Ctx, key []byte, e *keyspace.Entry) *fieldSetter {
	h := e.Obj().(*keyspace.Hash)
	h.PrepareFieldTTLs()
	return &fieldSetter{c: c, key: key, e: e, h: h}
}

// set gives field f the deadline at, returning 7.4's per-field code.
func (s *fieldSetter) set(f []byte, at int64) int64 {
	if s.hashGone {
		return hfeNoField
	}
	// A field with a deadline exists: the lookup of the deadline spares
	// the record's (HEXPIRE renewing a lock's TTL, the common case).
	prev := s.h.FieldTTL(f)
	if prev == 0 {
		if _, found := s.h.Get(f); !found {
			return hfeNoField
		}
	}
	if prev == 0 {
		if s.cond == hfeXX || s.cond == hfeGT {
			return hfeNoCond
		}
	} else if s.cond == hfeNX || s.cond == hfeGT && prev >= at || s.cond == hfeLT && prev <= at {
		return hfeNoCond
	}
	ks := s.c.KS
	if at <= ks.Now() && !ks.Loading() && !ks.IsReplica() {
		s.c.Propagate(propHDEL, s.key, f)
		s.h.Delete(f)
		ks.Stats().ExpiredSubkeys++
		s.deleted++
		if s.h.Len() == 0 {
			s.c.DB.Delete(s.key)
			s.hashGone = true
		}
		return hfeDeleted
	}
	s.c.DB.SetFieldTTL(s.e, f, at)
	s.updated++
	s.changedFs = append(s.changedFs, f)
	return hfeSet
}

// done sends the events of the changes (hashTypeSetExDone) and counts
// them as dirty.
func (s *fieldSetter) done(event string) {
	if s.updated+s.deleted == 0 {
		return
	}
	s.c.Dirty(s.updated + s.deleted)
	switch {
	case s.hashGone:
		s.c.Notify(config.NotifyHash, "hdel", s.key)
		s.c.Notify(config.NotifyGeneric, "del", s.key)
	case s.deleted > 0:
		s.c.Notify(config.NotifyHash, "hdel", s.key)
	default:
		s.c.Notify(config.NotifyHash, event, s.key)
	}
	if !s.hashGone {
		s.c.DB.FieldsChanged(s.e)
	}
}

// propagateDeadline propagates HPEXPIREAT key at [cond] FIELDS n with
// the fields whose deadline changed.
func (s *fieldSetter) propagateDeadline(at int64, cond []byte) {
	if s.updated > 0 {
		propagateHPEXPIREAT(s.c, s.key, at, cond, s.changedFs)
	}
}

// propagateHPEXPIREAT propagates HPEXPIREAT key at [cond] FIELDS n fields.
func propagateHPEXPIREAT(c *engine.Ctx, key []byte, at int64, cond []byte, fields [][]byte) {
	argv := make([][]byte, 0, 6+len(fields))
	argv = append(argv, propHPEXPIREAT, key, strconv.AppendInt(nil, at, 10))
	if cond != nil {
		argv = append(argv, cond)
	}
	argv = append(argv, propFIELDS, strconv.AppendInt(nil, int64(len(fields)), 10))
	c.Propagate(append(argv, fields...)...)
}

// propagateKeptTTLs propagates, after an HSET of fields that kept their
// deadlines (HSETEX KEEPTTL, HINCRBYFLOAT), HPEXPIREAT key at FIELDS n f...
// for each deadline among them, so that the HSET's replay, which clears
// them, is followed by what restores them.
func propagateKeptTTLs(c *engine.Ctx, key []byte, h *keyspace.Hash, fields [][]byte) {
	if !h.HasFieldTTLs() {
		return
	}
	byAt := map[int64][][]byte{}
	var order []int64
	for _, f := range fields {
		at := h.FieldTTL(f)
		if at == 0 {
			continue
		}
		if _, seen := byAt[at]; !seen {
			order = append(order, at)
		}
		byAt[at] = append(byAt[at], f)
	}
	for _, at := range order {
		propagateHPEXPIREAT(c, key, at, nil, byAt[at])
	}
}

// replyEach writes n replies, one per field of a key that does not exist
// (an empty hash has no field): each reply is write's.
func replyEach(c *engine.Ctx, n int, write func()) {
	c.W.Array(n)
	for range n {
		write()
	}
}

// ---- HEXPIRE HPEXPIRE HEXPIREAT HPEXPIREAT -------------------------------

func hexpireCommand(c *engine.Ctx)    { hexpireGeneric(c, c.KS.Now(), 1000) }
func hpexpireCommand(c *engine.Ctx)   { hexpireGeneric(c, c.KS.Now(), 1) }
func hexpireatCommand(c *engine.Ctx)  { hexpireGeneric(c, 0, 1000) }
func hpexpireatCommand(c *engine.Ctx) { hexpireGeneric(c, 0, 1) }

// hexpireGeneric is HEXPIRE key time [NX|XX|GT|LT] FIELDS numfields
// field... and its family (hexpireGenericCommand): the key's type is
// checked first, then the time, the condition, FIELDS and the count.
func hexpireGeneric(c *engine.Ctx, base, unit int64) {
	key := c.Args[1]
	e, ok := hashLookupFields(c, key, true)
	if !ok {
		return
	}
	at, ok := expireTimeArg(c, c.Args[2], base, unit)
	if !ok {
		return
	}
	cond, fieldsAt := 0, 3
	var condArg []byte
	switch arg := c.Args[3]; {
	case engine.EqualFold(arg, "nx"):
		cond = hfeNX
	case engine.EqualFold(arg, "xx"):
		cond = hfeXX
	case engine.EqualFold(arg, "gt"):
		cond = hfeGT
	case engine.EqualFold(arg, "lt"):
		cond = hfeLT
	}
	if cond != 0 {
		condArg, fieldsAt = c.Args[3], 4
	}
	fields, ok := fieldsArg(c, fieldsAt, errNumFieldsExpire)
	if !ok || fieldTTLRefused(c) {
		return
	}
	if e == nil {
		replyEach(c, len(fields), func() { c.W.Int(hfeNoField) })
		return
	}
	c.W.Array(len(fields))
	s := newFieldSetter(c, key, e)
	s.cond = cond
	for _, f := range fields {
		c.W.Int(s.set(f, at))
	}
	s.done("hexpire")
	s.propagateDeadline(at, condArg)
}

// ---- HTTL HPTTL HEXPIRETIME HPEXPIRETIME ----------------------------------

func httlCommand(c *engine.Ctx)         { httlGeneric(c, c.KS.Now(), 1000) }
func hpttlCommand(c *engine.Ctx)        { httlGeneric(c, c.KS.Now(), 1) }
func hexpiretimeCommand(c *engine.Ctx)  { httlGeneric(c, 0, 1000) }
func hpexpiretimeCommand(c *engine.Ctx) { httlGeneric(c, 0, 1) }

// httlGeneric answers, per field, -2 (no such field), -1 (no deadline)
// or the time left from base (0 for the deadline itself) in unit ms,
// seconds rounded up as 7.4 does.
func httlGeneric(c *engine.Ctx, base, unit int64) {
	e, ok := hashLookupFields(c, c.Args[1], false)
	if !ok {
		return
	}
	fields, ok := fieldsArg(c, 2, errNumFields)
	if !ok {
		return
	}
	c.W.Array(len(fields))
	var h *keyspace.Hash
	if e != nil {
		h = e.Obj().(*keyspace.Hash)
	}
	now := c.KS.Now()
	for _, f := range fields {
		if h == nil {
			c.W.Int(hfeNoField)
			continue
		}
		at := h.FieldTTL(f) // a field with a deadline exists
		if at == 0 {
			if _, found := h.Get(f); !found {
				c.W.Int(hfeNoField)
				continue
			}
		}
		switch {
		case at == 0:
			c.W.Int(hfeNoTTL)
		case at < now:
			c.W.Int(hfeNoField)
		case unit == 1:
			c.W.Int(at - base)
		default:
			c.W.Int((at + 999 - base) / 1000)
		}
	}
}

// ---- HPERSIST -------------------------------------------------------------

// hpersistCommand is HPERSIST key FIELDS numfields field...: per field
// -2 (no such field), -1 (no deadline) or 1 (removed).
func hpersistCommand(c *engine.Ctx) {
	key := c.Args[1]
	e, ok := hashLookupFields(c, key, true)
	if !ok {
		return
	}
	fields, ok := fieldsArg(c, 2, errNumFields)
	if !ok {
		return
	}
	if e == nil {
		replyEach(c, len(fields), func() { c.W.Int(hfeNoField) })
		return
	}
	c.W.Array(len(fields))
	h := e.Obj().(*keyspace.Hash)
	changed := false
	for _, f := range fields {
		code := persistField(c, e, h, f)
		changed = changed || code == hfePersisted
		c.W.Int(code)
	}
	if changed {
		c.DB.FieldsChanged(e)
		c.Notify(config.NotifyHash, "hpersist", key)
		c.Dirty(1)
	}
}

// persistField removes field f's deadline, returning HPERSIST's code.
func persistField(c *engine.Ctx, e *keyspace.Entry, h *keyspace.Hash, f []byte) int64 {
	if _, found := h.Get(f); !found {
		return hfeNoField
	}
	at := h.FieldTTL(f)
	if at == 0 {
		return hfeNoTTL
	}
	// A field past its deadline is gone for a client; but the master's
	// HPERSIST (or the AOF's, replayed after the deadline) was applied
	// there before the field expired, and must be here too.
	if at < c.KS.Now() && !c.Client.Master && !c.KS.Loading() {
		return hfeNoField
	}
	c.DB.SetFieldTTL(e, f, 0)
	return hfePersisted
}
