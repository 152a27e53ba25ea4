package commands

import (
	"strings"

	"github.com/zredis/zredis/config"
	"github.com/zredis/zredis/engine"
	"github.com/zredis/zredis/keyspace"
)

// Redis 8.0's HGETEX, HSETEX and HGETDEL (t_hash.c of 8.0: hgetexCommand,
// hsetexCommand, hsetexParseArgs, hgetdelCommand): registered with the
// rest of field expiration in hashes_ttl.go.

// ---- HGETDEL ----------------------------------------------------------------

// hgetdelCommand is HGETDEL key FIELDS numfields field...: the values
// (nil for a missing field), the fields deleted; the key goes with its
// last field. Propagated as HDEL key with the fields deleted.
func hgetdelCommand(c *engine.Ctx) {
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
		replyEach(c, len(fields), func() { c.W.Null() })
		return
	}
	c.W.Array(len(fields))
	h := e.Obj().(*keyspace.Hash)
	deleted := make([][]byte, 0, len(fields))
	for _, f := range fields {
		v, found := h.Get(f)
		if !found {
			c.W.Null()
			continue
		}
		c.W.Bulk(v) // copied before the field goes
		h.Delete(f)
		deleted = append(deleted, f)
	}
	if len(deleted) == 0 {
		return
	}
	c.Notify(config.NotifyHash, "hdel", key)
	c.Dirty(len(deleted))
	c.Propagate(append([][]byte{propHDEL, key}, deleted...)...)
	if h.Len() == 0 {
		c.DB.Delete(key)
		c.Notify(config.NotifyGeneric, "del", key)
	} else {
		c.DB.FieldsChanged(e)
	}
}

// ---- HGETEX -----------------------------------------------------------------

// hgetexCommand is HGETEX key [EX s|PX ms|EXAT s|PXAT ms|PERSIST] FIELDS
// numfields field...: the values, and each field found given the
// deadline (or none). Propagated as HPEXPIREAT (HPERSIST for PERSIST),
// or as the HDELs of fields given a time already past.
func hgetexCommand(c *engine.Ctx) {
	key := c.Args[1]
	e, ok := hashLookupFields(c, key, true)
	if !ok {
		return
	}
	opt := strings.ToLower(string(c.Args[2]))
	fieldsAt := 2
	var at int64
	persist := false
	switch opt {
	case "ex", "px", "exat", "pxat":
		fieldsAt = 4
		unit, base := int64(1), int64(0)
		if opt == "ex" || opt == "exat" {
			unit = 1000
		}
		if opt == "ex" || opt == "px" {
			base = c.KS.Now()
		}
		if at, ok = expireTimeArg(c, c.Args[3], base, unit); !ok {
			return
		}
	case "persist":
		fieldsAt, persist = 3, true
	}
	fields, ok := fieldsArg(c, fieldsAt, errNumFields)
	if !ok || fieldsAt == 4 && fieldTTLRefused(c) {
		return
	}
	if e == nil {
		replyEach(c, len(fields), func() { c.W.Null() })
		return
	}
	c.W.Array(len(fields))
	h := e.Obj().(*keyspace.Hash)
	var s *fieldSetter
	if persist || fieldsAt == 4 {
		s = newFieldSetter(c, key, e) // any option readies the hash, as 8.0
	} else {
		s = &fieldSetter{c: c, key: key, e: e, h: h}
	}
	persisted := 0
	for _, f := range fields {
		if s.hashGone {
			c.W.Null()
			continue
		}
		v, found := h.Get(f)
		if !found {
			c.W.Null()
			continue
		}
		c.W.Bulk(v)
		switch {
		case persist:
			if persistField(c, e, h, f) == hfePersisted {
				persisted++
			}
		case fieldsAt == 4:
			s.set(f, at)
		}
	}
	if persist {
		if persisted > 0 {
			c.DB.FieldsChanged(e)
			c.Notify(config.NotifyHash, "hpersist", key)
			c.Dirty(persisted)
			c.Propagate(append([][]byte{propHPERSIST, key}, c.Args[3:]...)...)
		}
		return
	}
	s.done("hexpire")
	s.propagateDeadline(at, nil)
}

// ---- HSETEX -----------------------------------------------------------------

// hsetexOptions are HSETEX's options (hsetexParseArgs).
type hsetexOptions struct {
	fnx, fxx   bool
	at         int64 // the deadline, when ttl
	ttl        bool  // EX, PX, EXAT or PXAT given
	keepTTL    bool
	firstField int // index of the first field
}

// parseHsetex reads HSETEX's options up to FIELDS numfields, with 8.0's
// errors.
func parseHsetex(c *engine.Ctx) (o hsetexOptions, ok bool) {
	hasExpire := false
	for i := 2; i < len(c.Args); i++ {
		arg := strings.ToLower(string(c.Args[i]))
		switch arg {
		case "fields":
			if i >= len(c.Args)-3 {
				c.Error(engine.ErrWrongArgs(c.Cmd.Name))
				return o, false
			}
			n, isInt := engine.ParseInt(c.Args[i+1])
			if !isInt || n < 1 || n > 1<<31-1 {
				c.Error("ERR invalid number of fields")
				return o, false
			}
			rest := len(c.Args) - i - 2
			if rest%2 != 0 || n != int64(rest/2) {
				c.Error(engine.ErrWrongArgs(c.Cmd.Name))
				return o, false
			}
			o.firstField = i + 2
			return o, true
		case "ex", "px", "exat", "pxat", "keepttl":
			if hasExpire {
				c.Error("ERR Only one of EX, PX, EXAT, PXAT or KEEPTTL arguments can be specified")
				return o, false
			}
			hasExpire = true
			if arg == "keepttl" {
				o.keepTTL = true
				continue
			}
			if i >= len(c.Args)-1 {
				c.Error("ERR missing expire time")
				return o, false
			}
			unit, base := int64(1), int64(0)
			if arg == "ex" || arg == "exat" {
				unit = 1000
			}
			if arg == "ex" || arg == "px" {
				base = c.KS.Now()
			}
			i++
			if o.at, ok = expireTimeArg(c, c.Args[i], base, unit); !ok {
				return o, false
			}
			o.ttl = true
		case "fxx", "fnx":
			if o.fxx || o.fnx {
				c.Error("ERR Only one of FXX or FNX arguments can be specified")
				return o, false
			}
			o.fxx, o.fnx = arg == "fxx", arg == "fnx"
		default:
			c.Error("ERR unknown argument: " + string(c.Args[i]))
			return o, false
		}
	}
	c.Error(engine.ErrWrongArgs(c.Cmd.Name))
	return o, false
}

// hsetexCommand is HSETEX key [FNX|FXX] [EX|PX|EXAT|PXAT time|KEEPTTL]
// FIELDS numfields field value...: 1 when the fields were set, 0 when
// FNX or FXX refused them. Without a time or KEEPTTL a field set loses
// its deadline, as with HSET.
func hsetexCommand(c *engine.Ctx) {
	o, ok := parseHsetex(c)
	if !ok || o.ttl && fieldTTLRefused(c) {
		return
	}
	key := c.Args[1]
	e, ok := hashLookupFields(c, key, true)
	if !ok {
		return
	}
	pairs := c.Args[o.firstField:]
	var h *keyspace.Hash
	if e != nil {
		h = e.Obj().(*keyspace.Hash)
	}
	if o.fxx || o.fnx {
		found := 0
		for i := 0; i < len(pairs); i += 2 {
			if h != nil {
				if _, ok := h.Get(pairs[i]); ok {
					found++
				}
			}
		}
		if o.fxx && found != len(pairs)/2 || o.fnx && found != 0 {
			c.W.Int(0)
			return
		}
	}
	lim := hashLimits(c)
	if e == nil {
		h = c.DB.AddHash(key, lim, pairs)
		c.Notify(config.NotifyNew, "new", key)
		e = c.DB.LookupWrite(key)
	}
	h.Convert(lim, pairs...)
	for i := 0; i < len(pairs); i += 2 {
		if o.ttl || o.keepTTL {
			h.SetKeepTTL(pairs[i], pairs[i+1], lim)
		} else {
			h.Set(pairs[i], pairs[i+1], lim)
		}
	}
	c.Dirty(len(pairs) / 2)
	hset := append([][]byte{propHSET, key}, pairs...)
	c.Propagate(hset...)
	c.Notify(config.NotifyHash, "hset", key)
	if !o.ttl {
		if o.keepTTL {
			fields := make([][]byte, 0, len(pairs)/2)
			for i := 0; i < len(pairs); i += 2 {
				fields = append(fields, pairs[i])
			}
			propagateKeptTTLs(c, key, h, fields)
		}
		c.DB.FieldsChanged(e)
		c.W.Int(1)
		return
	}
	s := newFieldSetter(c, key, e)
	for i := 0; i < len(pairs); i += 2 {
		s.set(pairs[i], o.at)
	}
	s.done("hexpire")
	s.propagateDeadline(o.at, nil)
	c.W.Int(1)
}
