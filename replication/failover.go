package replication

import (
	"math"
	"strings"
	"time"

	"github.com/zredis/zredis/engine"
)

// FAILOVER (Redis 7.0 replication.c: failoverCommand,
// updateFailoverStatus, abortFailover): a master hands its role to one of
// its replicas without losing a write. It holds its clients' writes,
// waits until a replica (the one named, or the first) has acknowledged
// the whole stream, then becomes that replica's replica, asking with
// PSYNC <replid> <offset> FAILOVER: the target, whose ID is then that
// replid, becomes a master and lets it continue (+CONTINUE). The writes
// held meanwhile then run on a replica (-READONLY). A target that does
// not catch up in time (TIMEOUT, unless FORCE) or refuses the PSYNC ends
// the failover, and this server stays, or becomes again, a master.

// Failover states (failover_state).
const (
	noFailover = iota
	failoverWaitForSync
	failoverInProgress
)

// failoverState is a FAILOVER in progress. Under the lock.
type failoverState struct {
	state int
	endMs int64 // Unix ms of the TIMEOUT; 0 without one
	force bool
	host  string // the target; "" until one is chosen
	port  int
}

// name is master_failover_state in INFO.
func (f *failoverState) name() string {
	switch f.state {
	case failoverWaitForSync:
		return "waiting-for-sync"
	case failoverInProgress:
		return "failover-in-progress"
	}
	return "no-failover"
}

// FailingOver implements engine.Replication.
func (m *Master) FailingOver() bool { return m.failover.state != noFailover }

// FailoverInProgress reports whether this server, failing over, became
// its target's replica: its PSYNC asks the target to take the role.
// Under the lock.
func (m *Master) FailoverInProgress() bool { return m.failover.state == failoverInProgress }

// Failover implements engine.Replication (failoverCommand).
func (m *Master) Failover(c *engine.Ctx, o engine.FailoverOptions) {
	switch {
	case m.failover.state != noFailover:
		c.Error("ERR FAILOVER already in progress.")
		return
	case m.replicating():
		c.Error("ERR FAILOVER is not valid when server is a replica.")
		return
	case len(m.replicas) == 0:
		c.Error("ERR FAILOVER requires connected replicas.")
		return
	case o.Force && (o.TimeoutMs == 0 || !o.HasHost):
		c.Error("ERR FAILOVER with force option requires both a timeout and target HOST and IP.")
		return
	}
	f := &m.failover
	if o.HasHost {
		r := m.findReplica(o.Host, o.Port)
		if r == nil {
			c.Error("ERR FAILOVER target HOST and PORT is not a replica.")
			return
		}
		if r.state != replOnline {
			c.Error("ERR FAILOVER target replica is not online.")
			return
		}
		f.host, f.port = o.Host, o.Port
		m.log.Noticef("FAILOVER requested to %s:%d.", o.Host, o.Port)
	} else {
		m.log.Noticef("FAILOVER requested to any replica.")
	}
	if o.TimeoutMs > 0 {
		f.endMs = time.Now().UnixMilli() + min(o.TimeoutMs, math.MaxInt64/2)
	}
	f.force = o.Force
	f.state = failoverWaitForSync
	m.host.HoldWritesForFailover(true)
	c.W.OK()
}

// AbortFailover implements engine.Replication (FAILOVER ABORT).
func (m *Master) AbortFailover(c *engine.Ctx) {
	if m.failover.state == noFailover {
		c.Error("ERR No failover in progress.")
		return
	}
	m.abortFailover("Failover manually aborted")
	c.W.OK()
}

// findReplica is the replica host:port names (findReplica): its
// announced or peer address and its listening port.
func (m *Master) findReplica(host string, port int) *replica {
	for _, r := range m.replicas {
		if strings.EqualFold(host, r.ip()) && int64(port) == r.port {
			return r
		}
	}
	return nil
}

// updateFailover is updateFailoverStatus: at the timeout the failover
// goes on (FORCE) or ends; once the target, or any replica when none was
// named, acknowledged the whole stream, this server becomes its replica.
// Under the lock, from the cron and after each ACK.
func (m *Master) updateFailover() {
	f := &m.failover
	if f.state != failoverWaitForSync {
		return
	}
	if f.endMs != 0 && f.endMs <= time.Now().UnixMilli() {
		if f.force {
			m.log.Noticef("FAILOVER to %s:%d time out exceeded, failing over.", f.host, f.port)
			f.state = failoverInProgress
			m.host.SetMaster(f.host, f.port)
			return
		}
		m.abortFailover("Replica never caught up before timeout")
		return
	}
	off := m.stream.Offset()
	var target *replica
	if f.host != "" {
		target = m.findReplica(f.host, f.port)
	} else {
		for _, r := range m.replicas {
			if r.ackOff == off {
				f.host, f.port, target = r.ip(), int(r.port), r
				break
			}
		}
	}
	if target != nil && target.ackOff == off {
		f.state = failoverInProgress
		m.log.Noticef("Failover target %s:%d is synced, failing over.", f.host, f.port)
		m.host.SetMaster(f.host, f.port)
	}
}

// EndFailover ends a failover in progress that went wrong on the way to
// its target (a PSYNC that could not be written): this server is a
// master again. Under the lock.
func (m *Master) EndFailover(why string) {
	if m.failover.state == failoverInProgress {
		m.abortFailover(why)
	}
}

// FailoverAnswered settles a failover in progress once its target
// answered PSYNC ... FAILOVER: ok (+CONTINUE or +FULLRESYNC) completes
// it, anything else ends it with this server a master again. Under the
// lock.
func (m *Master) FailoverAnswered(ok bool) {
	if m.failover.state != failoverInProgress {
		return
	}
	if ok {
		m.clearFailover()
	} else {
		m.abortFailover("Failover target rejected psync request")
	}
}

// abortFailover ends a failover (abortFailover): a server that already
// became its target's replica is a master again. Under the lock.
func (m *Master) abortFailover(why string) {
	f := &m.failover
	if f.state == noFailover {
		return
	}
	if f.host != "" {
		m.log.Noticef("FAILOVER to %s:%d aborted: %s", f.host, f.port, why)
	} else {
		m.log.Noticef("FAILOVER to any replica aborted: %s", why)
	}
	if f.state == failoverInProgress {
		m.host.UnsetMaster()
	}
	m.clearFailover()
}

// clearFailover forgets the failover and lets the writes it held run
// (clearFailoverState). Under the lock.
func (m *Master) clearFailover() {
	m.failover = failoverState{}
	m.host.HoldWritesForFailover(false)
}

// FailoverRequest implements engine.Replication: the PSYNC ... FAILOVER
// of a master handing its role to this replica.
func (m *Master) FailoverRequest(c *engine.Ctx, replid string) bool {
	m.log.Warningf("Failover request received for replid %s.", replid)
	if !m.replicating() {
		c.Error("ERR PSYNC FAILOVER can't be sent to a master.")
		return false
	}
	if !strings.EqualFold(replid, m.stream.ID) {
		c.Error("ERR PSYNC FAILOVER replid must match my replid.")
		return false
	}
	m.host.UnsetMaster()
	who := string(engine.AppendClientInfo(nil, c, c.Client, c.KS.Now(), 0))
	m.log.Noticef("MASTER MODE enabled (failover request from '%s')", who)
	return true
}
