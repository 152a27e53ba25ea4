package replication

import (
	"fmt"
	"strconv"
	"time"

	"github.com/zredis/zredis/engine"
)

// Role implements engine.Replication: master, the offset, and the online
// replicas as [ip, port, acknowledged offset].
func (m *Master) Role(c *engine.Ctx) {
	if l, ok := m.host.Link(); ok {
		// A replica: its master, the link's state and the offset applied.
		off := int64(-1)
		if l.Streaming {
			off = m.stream.Offset()
		}
		c.W.Array(5)
		c.W.BulkString("slave")
		c.W.BulkString(l.Host)
		c.W.Int(int64(l.Port))
		c.W.BulkString(l.State)
		c.W.Int(off)
		return
	}
	var online []*replica
	for _, r := range m.replicas {
		if r.state == replOnline {
			online = append(online, r)
		}
	}
	c.W.Array(3)
	c.W.BulkString("master")
	c.W.Int(m.stream.Offset())
	c.W.Array(len(online))
	for _, r := range online {
		c.W.Array(3)
		c.W.BulkString(r.ip())
		c.W.BulkString(strconv.FormatInt(r.port, 10))
		c.W.BulkString(strconv.FormatInt(r.ackOff, 10))
	}
}

// Info appends INFO replication's master fields after role. Under the
// lock.
func (m *Master) Info(b []byte) []byte {
	b = engine.InfoInt(b, "connected_slaves", int64(len(m.replicas)))
	if m.cfg.Int("min-replicas-to-write") != 0 && m.cfg.Int("min-replicas-max-lag") != 0 {
		b = engine.InfoInt(b, "min_slaves_good_slaves", m.host.GoodReplicas())
	}
	now := time.Now().Unix()
	id := 0
	for _, r := range m.replicas {
		state := r.stateName()
		if state == "" {
			continue
		}
		var lag int64
		if r.state == replOnline {
			lag = now - r.ackTime
		}
		b = fmt.Appendf(b, "slave%d:ip=%s,port=%d,state=%s,offset=%d,lag=%d\r\n", id, r.ip(), r.port, state, r.ackOff, lag)
		id++
	}
	st := m.stream
	b = engine.InfoStr(b, "master_failover_state", m.failover.name())
	b = engine.InfoStr(b, "master_replid", st.ID)
	b = engine.InfoStr(b, "master_replid2", st.ID2)
	b = engine.InfoInt(b, "master_repl_offset", st.Offset())
	b = engine.InfoInt(b, "second_repl_offset", st.SecondOff)
	bl := st.Backlog()
	var active int64
	if bl != nil {
		active = 1
	}
	b = engine.InfoInt(b, "repl_backlog_active", active)
	b = engine.InfoInt(b, "repl_backlog_size", m.cfg.Int("repl-backlog-size"))
	var first, hist int64
	if bl != nil {
		first, hist = bl.First(), bl.HistLen()
	}
	b = engine.InfoInt(b, "repl_backlog_first_byte_offset", first)
	b = engine.InfoInt(b, "repl_backlog_histlen", hist)
	return b
}

// ResizeBacklog applies CONFIG SET repl-backlog-size. Under the lock.
func (m *Master) ResizeBacklog() {
	if bl := m.stream.Backlog(); bl != nil {
		bl.Resize(int(m.cfg.Int("repl-backlog-size")))
	}
}

// Cron is the master's part of replicationCron, every 100 ms: once a
// second the PING every repl-ping-replica-period seconds, the newlines
// that keep replicas waiting for their RDB from timing out, the
// disconnection of replicas silent for repl-timeout, and the freeing of
// the backlog after repl-backlog-ttl without replicas; every time, the
// start of the delayed diskless synchronisations. Under the lock.
func (m *Master) Cron(now time.Time, second bool) {
	if second {
		m.cronLoops++
		// No PING during a FAILOVER with a TIMEOUT, or a cluster
		// replica's manual failover, while writes are held: it would
		// move the offset its target must reach.
		failingOver := (m.failover.endMs != 0 || m.clusterMF) && m.host.Paused(now.UnixMilli())
		if period := m.cfg.Int("repl-ping-replica-period"); period > 0 && m.cronLoops%period == 0 && len(m.replicas) > 0 && !failingOver {
			m.feedCommand([]byte("ping")) // shared.ping: lower case, as redis-cli --replica shows it
		}
		timeout := m.cfg.Int("repl-timeout")
		for _, r := range append([]*replica(nil), m.replicas...) {
			switch {
			case r.gone():
			case r.state == replWaitStart || r.state == replWaitBgsave && !r.diskless:
				r.c.WriteLater([]byte("\n"))
			case r.state == replOnline && !r.preSync && now.Unix()-r.ackTime > timeout:
				m.log.Warningf("Disconnecting timedout replica (streaming sync): %s", r.name())
				r.c.Drop()
			}
		}
		ttl := m.cfg.Int("repl-backlog-ttl")
		// A replica keeps its backlog: it serves its replicas, and the
		// old master's, once promoted.
		if !m.replicating() && len(m.replicas) == 0 && ttl > 0 && m.stream.Backlog() != nil && int64(now.Sub(m.noReplicasSince).Seconds()) > ttl {
			m.stream.FreeBacklog()
			m.host.Detach(m)
			m.log.Noticef("Replication backlog freed after %d seconds without connected replicas.", ttl)
		}
		m.refreshGood()
	}
	m.startPendingSyncs(now)
	if m.getAckPending {
		m.askAcks()
	}
	m.updateFailover()
}

// startPendingSyncs starts one diskless synchronisation for the replicas
// waiting for one with the requirements of the first of them
// (shouldStartChildReplication), once one has waited
// repl-diskless-sync-delay seconds or repl-diskless-sync-max-replicas are
// waiting; the others wait for the next.
func (m *Master) startPendingSyncs(now time.Time) {
	var waiting []*replica
	var longest time.Duration
	for _, r := range m.replicas {
		if r.state == replWaitStart && !r.gone() && (len(waiting) == 0 || r.req == waiting[0].req) {
			waiting = append(waiting, r)
			longest = max(longest, now.Sub(r.waitFrom))
		}
	}
	if len(waiting) == 0 {
		return
	}
	delay := time.Duration(m.cfg.Int("repl-diskless-sync-delay")) * time.Second
	most := m.cfg.Int("repl-diskless-sync-max-replicas")
	if longest >= delay || most > 0 && int64(len(waiting)) >= most {
		m.startSync(waiting, true, nil)
	}
}
