package engine

import (
	"unsafe"

	"github.com/zredis/zredis/config"
	"github.com/zredis/zredis/keyspace"
)

// maxmemory: before every command the dispatcher brings the dataset back
// under the limit by evicting keys (processCommand's performEvictions),
// and refuses a command that could grow memory when nothing can be
// freed, with Redis's OOM error.

// WatchMaxmemory applies maxmemory, maxmemory-policy, maxmemory-samples
// and maxmemory-eviction-tenacity now and on every CONFIG SET (whose
// hooks run under the keyspace lock). onLimit, when set, is told of the
// new maxmemory (the server sets the Go runtime's memory limit from it).
func (d *Dispatcher) WatchMaxmemory(cfg *config.Config, onLimit func(maxmemory int64)) {
	apply := func(string) error {
		pol, _ := keyspace.ParsePolicy(cfg.String("maxmemory-policy"))
		d.evict = keyspace.EvictLimits{
			MaxMemory: cfg.Int("maxmemory"),
			Policy:    pol,
			Samples:   int(cfg.Int("maxmemory-samples")),
			TimeLimit: keyspace.EvictionTimeLimit(int(cfg.Int("maxmemory-eviction-tenacity"))),
		}
		return nil
	}
	apply("")
	for _, name := range []string{"maxmemory-policy", "maxmemory-samples", "maxmemory-eviction-tenacity"} {
		cfg.OnChange(name, apply)
	}
	if onLimit != nil {
		onLimit(d.evict.MaxMemory)
	}
	cfg.OnChange("maxmemory", func(v string) error {
		apply(v)
		if onLimit != nil {
			onLimit(d.evict.MaxMemory)
		}
		// As Redis's updateMaxmemory: evict at once down to a lowered
		// limit rather than at the next command.
		d.PerformEvictions()
		return nil
	})
}

// MaxMemory is the maxmemory in force, 0 for none.
func (d *Dispatcher) MaxMemory() int64 { return d.evict.MaxMemory }

// PerformEvictions evicts keys until used memory is within maxmemory, or
// the time limit of maxmemory-eviction-tenacity passes (the rest is left
// to the next call: the next command or the server's cron). Under the
// lock, outside a command.
func (d *Dispatcher) PerformEvictions() keyspace.EvictResult {
	if d.evict.MaxMemory == 0 {
		return keyspace.EvictOK
	}
	if d.EvictionsPaused != nil && d.EvictionsPaused() {
		// As Redis's isSafeToPerformEvictions: while clients are paused
		// the dataset stays as it is, evictions included.
		return keyspace.EvictOK
	}
	return d.KS.Evict(d.evict, d.onEvicted)
}

// onEvicted does what Redis does after deleting an evicted key: counts
// it, fires the "evicted" keyspace event and propagates the deletion (as
// a command of its own, never inside the next command's transaction).
// OnEvicted (the expiry stream) has it first: the expiry journal must
// hold its message before the AOF's flusher can take the DEL.
func (d *Dispatcher) onEvicted(ev keyspace.Evicted) {
	if d.OnEvicted != nil {
		d.OnEvicted(ev)
	}
	d.Srv.Stats().EvictedKeys++
	if ps := d.Srv.PubSub(); ps.Notifies(config.NotifyEvicted) {
		ps.Notify(ev.DB, config.NotifyEvicted, "evicted", unsafe.Slice(unsafe.StringData(ev.Key), len(ev.Key)))
	}
	if p := d.propagating(); p != nil {
		argv := [2][]byte{DeleteName(d.Srv, "lazyfree-lazy-eviction"), unsafe.Slice(unsafe.StringData(ev.Key), len(ev.Key))}
		p.add(propOp{db: ev.DB, argv: p.arena.copy(argv[:])})
	}
}

// oomRefused runs the evictions due before cmd and reports whether cmd
// must be refused with the OOM error: memory is over the limit with
// nothing left to evict and cmd may grow it, i.e. it is deny-oom, an
// EXEC of queued deny-oom commands, or any command queued inside MULTI
// (except EXEC, DISCARD, QUIT and RESET), as processCommand decides.
func (d *Dispatcher) oomRefused(cl *Client, cmd *Command) bool {
	d.preOOM = d.PerformEvictions() == keyspace.EvictFail
	if !d.preOOM {
		return false
	}
	if cmd.Flags&DenyOOM != 0 {
		return true
	}
	switch cmd.Name {
	case "exec":
		return cl.InMulti && cl.QueuedFlags()&DenyOOM != 0
	case "discard", "quit", "reset":
		return false
	}
	return cl.InMulti
}
