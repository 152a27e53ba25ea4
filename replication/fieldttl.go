package replication

import (
	"github.com/zredis/zredis/engine"
)

// Hash field deadlines (Redis 7.4's HEXPIRE family) and replicas that
// cannot keep them. A redis-server before 7.4 knows neither the commands
// that set them (HPEXPIREAT, which the master propagates) nor the RDB
// types that hold them, and a replica says nothing of its version: a
// replica that does not understand a propagated HPEXPIREAT logs it and
// goes on, holding the fields without their deadlines, and would keep
// them forever once promoted. So a zredis replica declares the
// capability (REPLCONF capa zredis-field-ttl, which redis-server ignores)
// and the master keeps the two from diverging silently:
//
//   - while a replica without it is attached, a command that would give
//     a field a deadline is refused (FieldTTLRefusal), with a message
//     naming the replica;
//   - a replica without it cannot be synchronised while the data set
//     holds field deadlines (in full, its RDB would be version 12, which
//     it cannot load; partially, the backlog may hold HPEXPIREAT): its
//     SYNC or PSYNC is refused with the same reason, and the master
//     logs it.
//
// A redis-server 7.4 replica is refused too: nothing tells it apart.

// capaFieldTTL is the capability a zredis replica declares.
const capaFieldTTL = "zredis-field-ttl"

// FieldTTLRefusal implements engine.Replication: the error a command
// that sets a field deadline gets while a replica without the capability
// is attached, "" when none is.
func (m *Master) FieldTTLRefusal() string {
	for _, r := range m.replicas {
		if !r.capaFieldTTL && !r.rdbOnly {
			return refusalText(r.name())
		}
	}
	return ""
}

func refusalText(name string) string {
	return "ERR hash field expiration is not supported by replica " + name +
		" (not a zredis replica: redis-server before 7.4 cannot keep field TTLs, and the data sets would diverge)"
}

// refuseSync reports whether r cannot be synchronised now (it lacks the
// capability and the data set has field deadlines), with the error
// written to it and logged.
func (m *Master) refuseSync(c *engine.Ctx, r *replica) bool {
	if r.capaFieldTTL || r.req&reqExcludeData != 0 || !m.hasFieldTTLs() {
		return false
	}
	m.log.Warningf("Replica %s refused: the data set has hash fields with TTLs, which a replica without capa %s cannot load", r.name(), capaFieldTTL)
	c.Error("ERR the data set has hash fields with TTLs, which this replica cannot load (not a zredis replica)")
	return true
}

// hasFieldTTLs reports whether a hash of the data set has a volatile field.
func (m *Master) hasFieldTTLs() bool {
	for i := 0; i < m.ks.NumDBs(); i++ {
		if m.ks.DB(i).VolatileHashes() > 0 {
			return true
		}
	}
	return false
}
