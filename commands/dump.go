package commands

import (
	"errors"
	"strconv"

	"github.com/zredis/zredis/config"
	"github.com/zredis/zredis/engine"
	"github.com/zredis/zredis/keyspace"
	"github.com/zredis/zredis/persistence/rdb"
)

// DUMP and RESTORE (cluster.c): a value in RDB's serialization, with the
// RDB version and a CRC64, interchangeable with redis-server's.
func init() {
	register(
		&engine.Command{Name: "dump", Arity: 2, Flags: engine.ReadOnly, ACL: "@keyspace", Group: "generic",
			FirstKey: 1, LastKey: 1, KeyStep: 1, Run: dumpCommand},
		&engine.Command{Name: "restore", Arity: -4, Flags: engine.Write | engine.DenyOOM, ACL: "@keyspace @dangerous", Group: "generic",
			FirstKey: 1, LastKey: 1, KeyStep: 1, Run: restoreCommand},
		// What MIGRATE sends a cluster node that imports the key's slot;
		// without cluster mode it is RESTORE.
		&engine.Command{Name: "restore-asking", Arity: -4, Flags: engine.Write | engine.DenyOOM | engine.Asking, ACL: "@keyspace @dangerous", Group: "server",
			FirstKey: 1, LastKey: 1, KeyStep: 1, Run: restoreCommand},
	)
}

func dumpCommand(c *engine.Ctx) {
	e := c.DB.Lookup(c.Args[1])
	if e == nil {
		c.W.Null()
		return
	}
	c.W.Bulk(rdb.Dump(e))
}

// RDBLoadOptions are the encoding thresholds a value read from RDB (a
// RESTORE payload, a loaded file) is built with, as for any value written
// by a command.
func RDBLoadOptions(cfg *config.Config) rdb.LoadOptions {
	return rdb.LoadOptions{
		HashMaxListpackEntries: cfg.Int("hash-max-listpack-entries"),
		HashMaxListpackValue:   cfg.Int("hash-max-listpack-value"),
		SetMaxIntsetEntries:    cfg.Int("set-max-intset-entries"),
		ZSetMaxListpackEntries: cfg.Int("zset-max-listpack-entries"),
		ZSetMaxListpackValue:   cfg.Int("zset-max-listpack-value"),
	}
}

// restoreModifiers are RESTORE's modifiers.
type restoreModifiers struct {
	replace, absTTL bool
	idle, freq      int64 // -1: not given
}

// parseRestoreOptions reads RESTORE's options in restoreCommand's order
// and with its errors; ok=false means the reply was written.
func parseRestoreOptions(c *engine.Ctx) (o restoreModifiers, ok bool) {
	o.idle, o.freq = -1, -1
	for j := 4; j < len(c.Args); j++ {
		a := c.Args[j]
		more := j+1 < len(c.Args)
		switch {
		case engine.EqualFold(a, "replace"):
			o.replace = true
		case engine.EqualFold(a, "absttl"):
			o.absTTL = true
		case engine.EqualFold(a, "idletime") && more && o.freq == -1:
			v, ok := c.IntArg(j + 1)
			if !ok {
				return o, false
			}
			if v < 0 {
				c.Error("ERR Invalid IDLETIME value, must be >= 0")
				return o, false
			}
			o.idle = v
			j++
		case engine.EqualFold(a, "freq") && more && o.idle == -1:
			v, ok := c.IntArg(j + 1)
			if !ok {
				return o, false
			}
			if v < 0 || v > 255 {
				c.Error("ERR Invalid FREQ value, must be >= 0 and <= 255")
				return o, false
			}
			o.freq = v
			j++
		default:
			c.Error(engine.ErrSyntax)
			return o, false
		}
	}
	return o, true
}

// restoreCommand is RESTORE key ttl serialized-value [REPLACE] [ABSTTL]
// [IDLETIME seconds] [FREQ frequency]. A deadline already past stores
// nothing (deleting the key REPLACE would have replaced), as Redis does.
func restoreCommand(c *engine.Ctx) {
	key := c.Args[1]
	o, ok := parseRestoreOptions(c)
	if !ok {
		return
	}
	if !o.replace && c.DB.LookupWrite(key) != nil {
		c.Error(engine.ErrBusyKey)
		return
	}
	ttl, ok := c.IntArg(2)
	if !ok {
		return
	}
	if ttl < 0 {
		c.Error("ERR Invalid TTL value, must be >= 0")
		return
	}
	opt := RDBLoadOptions(c.Config())
	opt.SkipChecksum = c.D.Debug.SkipChecksum.Load()
	e, err := rdb.Restore(c.Args[3], opt)
	if errors.Is(err, rdb.ErrDumpPayload) {
		c.Error(engine.ErrBadDump)
		return
	}
	if err != nil {
		c.Error(engine.ErrBadDataFormat)
		return
	}
	if h, ok := e.Obj().(*keyspace.Hash); ok && e.Type() == keyspace.TypeHash && h.HasFieldTTLs() && fieldTTLRefused(c) {
		return // a payload with field TTLs: 7.4's, which the replica cannot load
	}
	deleted := o.replace && c.DB.Delete(key)
	if ttl != 0 && !o.absTTL {
		// A relative TTL so large that the sum wraps below zero counts as
		// past, as in Redis (checkAlreadyExpired on the wrapped value).
		ttl += c.KS.Now()
	}
	if ttl != 0 && ttl <= c.KS.Now() && !c.KS.Loading() {
		if deleted {
			c.Notify(config.NotifyGeneric, "del", key)
			c.Propagate(propDEL, key) // 7.0 writes DEL here, whatever lazyfree says
			c.Dirty(1)
		}
		c.W.OK()
		return
	}
	e = c.DB.Put(key, e)
	if ttl != 0 {
		c.DB.SetExpire(key, ttl)
	}
	propagateRestore(c, ttl, o.absTTL)
	c.KS.SetAccess(e, o.idle, o.freq)
	c.Notify(config.NotifyGeneric, "restore", key)
	c.Dirty(1)
	c.W.OK()
}

// ---- propagated forms ------------------------------------------------------

// propagateRestore is the propagated form of a RESTORE that stored its
// key with a deadline (cluster.c restoreCommand): a relative TTL becomes
// the absolute deadline, with ABSTTL added at the end; an ABSTTL one
// propagates as it came. A RESTORE whose deadline had already passed
// stores nothing and propagates DEL key when REPLACE deleted the key
// (whatever lazyfree says), nothing otherwise: c.Propagate(propDEL, key).
func propagateRestore(c *engine.Ctx, deadline int64, absTTL bool) {
	if deadline == 0 || absTTL || !c.Propagating() {
		return
	}
	argv := make([][]byte, 0, len(c.Args)+1)
	argv = append(argv, c.Args...)
	var tmp [20]byte
	argv[2] = strconv.AppendInt(tmp[:0], deadline, 10)
	c.Propagate(append(argv, propABSTTL)...)
}
